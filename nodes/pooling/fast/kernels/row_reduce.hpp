#pragma once
// Forward, last axis: one input row into one row of window sums (row_sum) or
// maxima (row_max, or row_max_exact in MaxPool's exact order).
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"

namespace nodeflow::fast {

/// Window sums of `rows` consecutive input rows (transformed for LpPool)
/// into `out` (rows > 1 only for a Direct1 run, see RowInput::run_rows).
/// Prefetches x + ahead (a later item's row) as it goes (ahead 0: none):
/// spread over the loop, the prefetches overlap the work instead of
/// queueing for the line fill buffers in one burst.
template <class B>
template <int K, SumTerm tr>
inline void PoolKernels<B>::row_sum(RowInput& row, const T* x, C* out, std::int64_t p,
                                    std::int64_t rows, std::int64_t ahead) {
  const std::int64_t taps = K > 0 ? K : row.taps;
  const std::int64_t count = rows * row.out;
  const std::int64_t vectors = (count + N - 1) / N;
  const M tail = B::first_n(count % N == 0 ? N : count % N);
  auto put = [&](std::int64_t v, V acc) {
    B::store(out + v * N, acc, v + 1 < vectors ? B::first_n(N) : tail);
  };
  if (row.kind == RowRead::Direct1) {
    const MBox* mk = row.masks.data();
    const TapOffsets<K> u(row.tap_pos);
    for (std::int64_t v = 0; v < vectors; ++v, mk += taps) {
      if (ahead) __builtin_prefetch(x + v * N + ahead, 0, 3);
      // A run's masks cover whole vectors: the last one stops at `count`.
      const M lanes = v + 1 < vectors ? B::first_n(N) : tail;
      V acc = transform<tr>(B::load(x + v * N + u[0], B::mand(mk[0].v, lanes)), p);
      for (std::int64_t k = 1; k < taps; ++k)
        acc = B::add(acc, transform<tr>(B::load(x + v * N + u[k], B::mand(mk[k].v, lanes)), p));
      B::store(out + v * N, acc, lanes);
    }
  } else if (row.kind == RowRead::Direct2) {
    if constexpr (N > 1) {
      M unused = B::none();
      V even, odd, odd_before = B::zero();
      if (taps == 3) {
        row.template pair<false, false>(x, -1, B::zero(), even, odd_before, unused);
        odd_before = transform<tr>(odd_before, p);
      }
      for (std::int64_t v = 0; v < row.vectors; ++v) {
        prefetch_pair(x + ahead, v, ahead);
        row.template pair<false, false>(x, v, B::zero(), even, odd, unused);
        even = transform<tr>(even, p);
        odd = transform<tr>(odd, p);
        V acc = B::add(even, odd);
        if (taps == 3) acc = B::add(B::shift_in(odd, odd_before), acc);
        odd_before = odd;
        put(v, acc);
      }
    }
  } else if constexpr (N == 1 && std::is_same_v<T, C> && tr != SumTerm::Pow) {
    // One lane without conversions or pow: each tap read in place (0
    // outside the row, as the phases hold), not through a copy of the row
    // into its phases (float64 AveragePool k2 s2: 1.4x the reference
    // kernels' time with the copy). Where each element costs a conversion
    // (float16, bfloat16) or a pow, the copy does that once per element.
    if (ahead) prefetch_row(x + ahead, row.in);
    const TapOffsets<K> u(row.tap_pos);
    for (std::int64_t o = 0; o < row.out; ++o) {
      auto tap = [&](std::int64_t k) {
        const std::int64_t at = o * row.stride + u[k];
        return at >= 0 && at < row.in ? transform<tr>(B::load(x + at), p) : C(0);
      };
      V acc = tap(0);
      for (std::int64_t k = 1; k < taps; ++k) acc = B::add(acc, tap(k));
      put(o, acc);
    }
  } else {
    if (ahead) prefetch_row(x + ahead, row.in);
    row.template fill<tr, false, false>(x, p);
    const C* b = row.buf.data();
    const std::int64_t* tap = row.tap_at.data();
    for (std::int64_t v = 0; v < row.vectors; ++v) {
      V acc = B::load(b + tap[0] + v * N);
      for (std::int64_t k = 1; k < taps; ++k) acc = B::add(acc, B::load(b + tap[k] + v * N));
      put(v, acc);
    }
  }
}

/// Direct2: the lines of pair v of a later row at `later` (ahead 0: none).
template <class B>
inline void PoolKernels<B>::prefetch_pair(const T* later, std::int64_t v, std::int64_t ahead) {
  if (!ahead) return;
  __builtin_prefetch(later + 2 * v * N, 0, 3);
  __builtin_prefetch(later + 2 * v * N + N, 0, 3);
}

/// Window maxima of one input row (and with kIdx their plane offsets;
/// `row_base` is the row's offset in its plane). Takes a tap when it is
/// greater (ordered): MaxPool's order when the row holds no NaN (a later
/// NaN would have to win) and, with the argmax, no lowest() (the index must
/// be a real element's, not the padding's). Returns the lanes that saw
/// either; the caller redoes such rows in the exact order.
template <class B>
template <int K, bool kIdx>
inline auto PoolKernels<B>::row_max(RowInput& row, const T* x, std::int64_t row_base, C* out,
                                    std::int32_t* out_idx, std::int64_t rows, std::int64_t ahead)
    -> M {
  const std::int64_t taps = K > 0 ? K : row.taps;
  // The outputs of one run (Direct1) or of one row (the others, which take
  // their `rows` one after another).
  const std::int64_t count = (row.kind == RowRead::Direct1 ? rows : 1) * row.out;
  const std::int64_t vectors = (count + N - 1) / N;
  const M tail = B::first_n(count % N == 0 ? N : count % N);
  const IBox* tap_idx = row.tap_idx.data();
  M flags = B::none();
  V best;
  I best_idx{};
  // Tap k of vector v, in row-major tap order.
  auto first = [&](std::int64_t v, V c) {
    best = c;
    if constexpr (kIdx) best_idx = B::add_i(tap_idx[0].v, row_base + v * N * row.stride);
  };
  auto next = [&](std::int64_t v, std::int64_t k, V c) {
    if constexpr (kIdx) {
      const M take = B::greater(c, best);
      best = B::select(take, c, best);
      best_idx =
          B::select_i(take, B::add_i(tap_idx[k].v, row_base + v * N * row.stride), best_idx);
    } else {
      best = B::max(c, best);
    }
  };
  auto put = [&](std::int64_t v) {
    const M m = v + 1 < vectors ? B::first_n(N) : tail;
    B::store(out + v * N, best, m);
    if constexpr (kIdx) B::store_i(out_idx + v * N, best_idx, m);
  };
  const V floor = B::broadcast(row.neutral);
  if (row.kind == RowRead::Direct1) {
    flags = row.template check_row<true, kIdx>(x, rows * row.in);
    const MBox* mk = row.masks.data();
    const TapOffsets<K> u(row.tap_pos);
    for (std::int64_t v = 0; v < vectors; ++v, mk += taps) {
      if (ahead) __builtin_prefetch(x + v * N + ahead, 0, 3);
      // A run's masks cover whole vectors: the last one stops at `count`.
      const M lanes = v + 1 < vectors ? B::first_n(N) : tail;
      first(v, B::load_or(x + v * N + u[0], B::mand(mk[0].v, lanes), floor));
      for (std::int64_t k = 1; k < taps; ++k)
        next(v, k, B::load_or(x + v * N + u[k], B::mand(mk[k].v, lanes), floor));
      put(v);
    }
  } else if (row.kind == RowRead::Direct2) {
    if constexpr (N > 1) {
      // `rows` rows one after another, in x and in out: the setup above
      // is paid once per call, not once per row (rows of 3 or 4 vectors).
      for (std::int64_t r = 0; r < rows; ++r, x += row.in, row_base += row.in, out += row.out) {
        V even, odd, odd_before = floor;
        if (taps == 3) row.template pair<true, kIdx>(x, -1, floor, even, odd_before, flags);
        for (std::int64_t v = 0; v < row.vectors; ++v) {
          prefetch_pair(x + ahead, v, ahead);
          row.template pair<true, kIdx>(x, v, floor, even, odd, flags);
          if (taps == 3) {
            first(v, B::shift_in(odd, odd_before));
            next(v, 1, even);
            next(v, 2, odd);
          } else {
            first(v, even);
            next(v, 1, odd);
          }
          odd_before = odd;
          put(v);
        }
        if constexpr (kIdx) out_idx += row.out;
      }
    }
  } else {
    if (ahead) prefetch_row(x + ahead, row.in);
    flags = row.template fill<SumTerm::Identity, true, kIdx>(x, 0);
    const C* b = row.buf.data();
    const std::int64_t* tap = row.tap_at.data();
    for (std::int64_t v = 0; v < row.vectors; ++v) {
      first(v, B::load(b + tap[0] + v * N));
      for (std::int64_t k = 1; k < taps; ++k) next(v, k, B::load(b + tap[k] + v * N));
      put(v);
    }
  }
  return flags;
}

// The exact order, for rows holding NaN or lowest(): per vector of outputs,
// each tap with the lanes whose window holds it.

template <class B>
struct PoolKernels<B>::RowTap {
  std::int64_t off;  ///< input position of lane 0's tap
  M load0, load1;    ///< what may be read: [off, off+N), and for stride 2 [off+N, off+2N)
  M valid;           ///< lanes whose window holds this tap
};

template <class B>
struct PoolKernels<B>::RowVector {
  std::int64_t j0;
  std::size_t first, count;  ///< its taps in RowProgram::taps
  M store;
};

template <class B>
struct PoolKernels<B>::RowProgram {
  std::int64_t stride = 1;
  I steps{};  ///< lane j: j * stride
  std::vector<RowVector, Aligned<RowVector>> vectors;
  std::vector<RowTap, Aligned<RowTap>> taps;

  explicit RowProgram(const AxisPlan& a) : stride(a.stride), steps(B::iota(0, a.stride)) {
    for (std::int64_t j0 = 0; j0 < a.out; j0 += N) {
      const std::int64_t n = std::min(N, a.out - j0);
      RowVector v{j0, taps.size(), 0, B::first_n(n)};
      // tap_lo and tap_hi fall with the output index: these are all taps of the lanes.
      for (std::int64_t t = a.tap_lo[at(j0 + n - 1)]; t < a.tap_hi[at(j0)]; ++t) {
        const std::size_t k = at(t - a.t_first);
        const std::int64_t lo = std::max<std::int64_t>(a.out_lo[k] - j0, 0);
        const std::int64_t hi = std::min(a.out_hi[k] - j0, n);
        if (lo >= hi) continue;
        const M valid = B::lanes(lo, hi);
        RowTap tap{j0 * a.stride - a.pad_begin + t * a.dilation, valid, B::none(), valid};
        if (a.stride == 2 && N > 1) {
          tap.load0 = B::lanes(2 * lo, 2 * hi - 1);
          tap.load1 = B::lanes(2 * lo - N, 2 * hi - 1 - N);
        }
        taps.push_back(tap);
        ++v.count;
      }
      vectors.push_back(v);
    }
  }

  V load(const T* x, const RowTap& t) const {
    if constexpr (N == 1) {
      return B::load_at(x, t.off, t.valid);
    } else {
      if (stride == 1) return B::load_at(x, t.off, t.load0);
      if (stride == 2) return B::load_even(x + t.off, t.load0, t.load1);
      return B::load_strided(x, t.off, stride, t.valid);
    }
  }
};

template <class B>
template <bool kIdx>
inline void PoolKernels<B>::row_max_exact(const RowProgram& prog, const T* x, std::int64_t row_base,
                                          C* out, std::int32_t* out_idx) {
  for (const RowVector& v : prog.vectors) {
    const RowTap* taps = prog.taps.data() + v.first;
    V best = prog.load(x, taps[0]);
    I best_idx{};
    if constexpr (kIdx) best_idx = B::add_i(prog.steps, row_base + taps[0].off);
    M seen = taps[0].valid;
    for (std::size_t k = 1; k < v.count; ++k) {
      const V c = prog.load(x, taps[k]);
      // A lane's first valid tap always enters; later ones only if they beat it.
      const M take = B::mand(taps[k].valid, B::mor(B::mnot(seen), B::beats(c, best)));
      best = B::select(take, c, best);
      if constexpr (kIdx)
        best_idx = B::select_i(take, B::add_i(prog.steps, row_base + taps[k].off), best_idx);
      seen = B::mor(seen, taps[k].valid);
    }
    B::store(out + v.j0, best, v.store);
    if constexpr (kIdx) B::store_i(out_idx + v.j0, best_idx, v.store);
  }
}

}  // namespace nodeflow::fast
