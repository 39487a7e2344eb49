#pragma once
// Forward, other axes. Each outer axis k reads a buffer of rows of `inner`
// elements, one per input position along k, covering the whole tap span of
// the windows it reduces; rows outside the axis hold the neutral value (0
// for sums, lowest() for MaxPool), so every window reads all its taps without
// checks, and with stride 1 a run of windows is one flat loop. The last axis
// writes the finished averages, Lp values or maxima (and argmax).
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"

namespace nodeflow::fast {

/// The buffers of one forward call: B[k] feeds axis k (k < n-1), laid out
/// [part][row][inner_k] with the rows of axis k's span; parts are the
/// positions of the axes before k (axis 0: the chunk's valid rows).
template <class B>
struct PoolKernels<B>::Stages {
  std::size_t n;
  std::vector<std::int64_t> inner;     ///< per k < n-1: elements of a row of B[k]
  std::vector<std::int64_t> span;      ///< per k >= 1: rows of B[k] per part
  std::vector<std::int64_t> first;     ///< per k >= 1: position of row 0 of B[k]
  std::vector<std::int64_t> parts;     ///< per k >= 1: most parts of B[k]
  std::int64_t span0 = 0;              ///< most rows of B[0]
  std::int64_t valid0 = 0;             ///< most valid axis-0 rows of an item
  std::vector<std::vector<C, Aligned<C>>> values;
  std::vector<std::vector<std::int32_t>> index;

  Stages(const Plan& plan, bool with_index, C neutral) : n(plan.axes.size()) {
    const AxisPlan& a0 = plan.axes[0];
    for (std::int64_t ob = 0; ob < a0.out; ob += plan.chunk) {
      const std::int64_t oe = std::min(a0.out, ob + plan.chunk);
      const std::int64_t f = ob * a0.stride + first_tap(a0), rows = span_rows(a0, ob, oe);
      span0 = std::max(span0, rows);
      valid0 = std::max(valid0, std::min(a0.in, f + rows) - std::max<std::int64_t>(0, f));
    }
    inner.assign(n - 1, 1);
    for (std::size_t k = n - 1; k-- > 0;)
      inner[k] = (k + 1 < n - 1 ? inner[k + 1] : 1) * plan.axes[k + 1].out;
    span.assign(n - 1, 0);
    first.assign(n - 1, 0);
    parts.assign(n - 1, 0);
    values.resize(n - 1);
    index.resize(n - 1);
    values[0].assign(at(span0 * inner[0]), neutral);
    std::int64_t before = valid0;  // parts of B[k]: valid axis-0 rows x in[1..k)
    for (std::size_t k = 1; k + 1 < n; ++k) {
      const AxisPlan& a = plan.axes[k];
      span[k] = span_rows(a, 0, a.out);
      first[k] = first_tap(a);
      parts[k] = before;
      before *= a.in;
      values[k].assign(at(parts[k] * span[k] * inner[k]), neutral);
    }
    if (with_index)
      for (std::size_t k = 0; k + 1 < n; ++k) index[k].assign(values[k].size(), 0);
  }
};

/// The row of B[k] that holds `part`, which enumerates the positions
/// (d_0 - v_lo, d_1, ..., d_k) of axes 0..k (what the stage of axis k+1,
/// or the last axis's row stage, produces for it); -1 when no window of
/// axis k reads position d_k.
template <class B>
inline std::int64_t PoolKernels<B>::row_in_buffer(const Stages& st, const Plan& plan, std::size_t k,
                                                  std::int64_t part, std::int64_t first0,
                                                  std::int64_t v_lo) {
  if (k == 0) return v_lo + part - first0;
  const std::int64_t row = part % plan.axes[k].in - st.first[k];
  if (row < 0 || row >= st.span[k]) return -1;
  return part / plan.axes[k].in * st.span[k] + row;
}

template <class B>
struct PoolKernels<B>::SumToBuffer {
  C* out;
  bool flat_ok() const { return true; }
  void row(std::int64_t) {}
  void put(std::int64_t at_out, V v, M m, std::int64_t) { B::store(out + at_out, v, m); }
};

/// Large planes keep one row of AveragePool's divisors, not a table.
template <class B>
inline bool PoolKernels<B>::divisors_per_row(const Plan& plan) {
  return plan.out_plane > (std::int64_t{1} << 16);
}

/// Writes the finished windows: the average (tr Identity: AveragePool) or
/// the Lp root (p = 1, 2 or more as tr is Abs, Square or Pow). `divisors`
/// holds, per output position of the plane, AveragePool's divisor (or,
/// kPerRow, one row of them, refreshed per output row). Both are template
/// arguments so that the per-vector code has no branch left.
template <class B>
template <SumTerm tr, bool kPerRow>
struct PoolKernels<B>::SumToOutput {
  const Plan& plan;
  T* y;
  const C* divisors;
  C* row_buf;
  std::int64_t out_ahead = 0;  ///< prefetches y this far on (0: none)
  std::int64_t cached = -1;
  /// The lanes written whose value is outside what the fast sums keep
  /// exact (sum_out_of_range): the caller redoes those windows.
  M outside = B::none();
  const V floor = B::broadcast(static_cast<C>(plan.value_floor));
  /// One flat run may span output rows unless the divisors come per row.
  bool flat_ok() const { return !kPerRow || tr != SumTerm::Identity; }
  void row(std::int64_t o) {
    if (tr != SumTerm::Identity || !kPerRow) return;
    const std::int64_t d0 = plan.axes[0].divisor[at(o)];
    if (d0 == cached) return;
    cached = d0;
    for (std::size_t j = 0; j < plan.inner_divisor.size(); ++j)
      row_buf[j] = static_cast<C>(d0 * plan.inner_divisor[j]);
  }
  /// at_out: offset in y of the chunk; j: of the plane (for the divisor).
  void put(std::int64_t at_out, V v, M m, std::int64_t j) {
    V r;
    // The reference's sum starts from 0, so no -0 survives (all taps -0).
    if constexpr (tr == SumTerm::Identity)
      r = B::div(B::add(B::zero(), v),
                 B::load(kPerRow ? row_buf + j % plan.inner_out() : divisors + j, m));
    else if constexpr (tr == SumTerm::Abs)
      r = v;
    else if constexpr (tr == SumTerm::Square)
      r = B::sqrt(v);
    else
      r = root(v);
    if (out_ahead) __builtin_prefetch(y + at_out + out_ahead, 1, 3);
    outside = B::mor(outside, B::mand(m, sum_out_of_range(r, floor)));
    B::store(y + at_out, r, m);
  }
  V root(V v) const {
    if constexpr (B::kHasPow)
      return B::root(v, plan.p);
    else
      return v;  // never reached: exponents above 2 run on the portable backend
  }
};

/// The lanes of finished sums r (averages, Lp values) that the fast sums
/// may have got wrong: not finite (the sum overflowed, unless an input
/// was not finite), or below `floor` (Plan::value_floor: LpPool's powers
/// may have underflowed). The caller redoes those windows exactly.
template <class B>
inline auto PoolKernels<B>::sum_out_of_range(V r, V floor) -> M {
  const V a = B::abs(r);
  const V most = B::broadcast(std::numeric_limits<C>::max());
  return B::mor(B::mor(B::unordered(r), B::greater(a, most)), B::greater(floor, a));
}

template <class B>
inline bool PoolKernels<B>::scalar_out_of_range(C r, const Plan& plan) {
  const C a = r < C(0) ? C(-r) : r;
  return !(a <= std::numeric_limits<C>::max()) || static_cast<double>(a) < plan.value_floor;
}

/// Sums along axis a of one part: rows of `inner` elements from `src`
/// (row 0 = position f) into outputs [ob, oe); the sink gets the flat
/// offset of each vector in the part's output block and in the plane.
template <class B>
template <int K, class Sink>
inline void PoolKernels<B>::outer_sum(const AxisPlan& a, const C* src, std::int64_t f,
                                      std::int64_t ob, std::int64_t oe, std::int64_t inner,
                                      std::int64_t plane_offset, Sink& sink) {
  const std::int64_t taps = K > 0 ? K : a.t_end - a.t_first;
  const std::int64_t step = a.dilation * inner;
  const std::int64_t u0 = first_tap(a);
  if (a.stride == 1 && sink.flat_ok()) {
    const std::int64_t n = (oe - ob) * inner;
    const C* base = src + (ob + u0 - f) * inner;
    sink.row(ob);
    for_vectors(n, [&](std::int64_t i, M m) {
      V acc = B::load(base + i, m);
      for (std::int64_t t = 1; t < taps; ++t) acc = B::add(acc, B::load(base + t * step + i, m));
      sink.put(i, acc, m, plane_offset + i);
    });
    return;
  }
  const M tail = B::first_n(inner % N == 0 ? N : inner % N);
  for (std::int64_t o = ob; o < oe; ++o) {
    sink.row(o);
    const C* base = src + (o * a.stride + u0 - f) * inner;
    const std::int64_t dst = (o - ob) * inner;
    for (std::int64_t j = 0; j < inner; j += N) {
      const M m = j + N <= inner ? B::first_n(N) : tail;
      V acc = B::load(base + j, m);
      for (std::int64_t t = 1; t < taps; ++t) acc = B::add(acc, B::load(base + t * step + j, m));
      sink.put(dst + j, acc, m, plane_offset + dst + j);
    }
  }
}

/// Stores the plane offsets idx of outputs [o, o + N) as argmax's form
/// wants them (flat indices add the plane's first input, base).
template <class B>
inline void PoolKernels<B>::store_argmax(const Argmax& argmax, std::int64_t o, I idx,
                                         std::int64_t base, M m) {
  if (argmax.offsets)
    B::store_i(argmax.offsets + o, idx, m);
  else
    B::store_index64(argmax.flat + o, idx, base, m);
}

/// Prefetches for writing the argmax of outputs [o, o + N).
template <class B>
inline void PoolKernels<B>::prefetch_argmax(const Argmax& argmax, std::int64_t o) {
  if (argmax.offsets) {
    __builtin_prefetch(argmax.offsets + o, 1, 3);
  } else {
    __builtin_prefetch(argmax.flat + o, 1, 3);
    __builtin_prefetch(argmax.flat + o + N / 2, 1, 3);
  }
}

/// Maxima along axis a of one part (see outer_sum); values and plane
/// offsets go to (out, out_idx), or with kFinal to y and argmax. Takes a
/// row when greater (see row_max); kExact: MaxPool's exact order over each
/// window's valid rows only (for items whose input holds NaN or lowest()).
template <class B>
template <int K, bool kIdx, bool kFinal, bool kExact>
inline void PoolKernels<B>::outer_max(const AxisPlan& a, const C* src, const std::int32_t* src_idx,
                                      std::int64_t f, std::int64_t ob, std::int64_t oe,
                                      std::int64_t inner, C* out, std::int32_t* out_idx, T* y,
                                      Argmax argmax, std::int64_t plane_base,
                                      std::int64_t out_ahead) {
  const std::int64_t step = a.dilation * inner;
  const bool flat = a.stride == 1 && !kExact;
  const std::int64_t runs = flat ? 1 : oe - ob;
  const std::int64_t length = flat ? (oe - ob) * inner : inner;
  const M tail = B::first_n(length % N == 0 ? N : length % N);
  for (std::int64_t r = 0; r < runs; ++r) {
    const std::int64_t o = ob + r;
    std::int64_t lo = a.t_first, hi = a.t_end;  // taps of this run's windows
    if (kExact) {
      lo = a.tap_lo[at(o)];
      hi = a.tap_hi[at(o)];
    }
    const std::int64_t row0 = o * a.stride + lo * a.dilation - a.pad_begin - f;
    const C* base = src + row0 * inner;
    const std::int32_t* base_idx = kIdx ? src_idx + row0 * inner : nullptr;
    const std::int64_t taps = K > 0 && !kExact ? K : hi - lo;
    const std::int64_t dst = r * inner;
    for (std::int64_t i = 0; i < length; i += N) {
      const M m = i + N <= length ? B::first_n(N) : tail;
      V best = B::load(base + i, m);
      I best_idx{};
      if constexpr (kIdx) best_idx = B::load_i(base_idx + i, m);
      for (std::int64_t t = 1; t < taps; ++t) {
        const V c = B::load(base + t * step + i, m);
        if constexpr (kIdx || kExact) {
          const M take = kExact ? B::beats(c, best) : B::greater(c, best);
          best = B::select(take, c, best);
          if constexpr (kIdx)
            best_idx = B::select_i(take, B::load_i(base_idx + t * step + i, m), best_idx);
        } else {
          best = B::max(c, best);
        }
      }
      if constexpr (kFinal) {
        if (out_ahead) {
          __builtin_prefetch(y + dst + i + out_ahead, 1, 3);
          if constexpr (kIdx) prefetch_argmax(argmax, dst + i + out_ahead);
        }
        B::store(y + dst + i, best, m);
        if constexpr (kIdx) store_argmax(argmax, dst + i, best_idx, plane_base, m);
      } else {
        B::store(out + dst + i, best, m);
        if constexpr (kIdx) B::store_i(out_idx + dst + i, best_idx, m);
      }
    }
  }
}

/// AveragePool's divisor at every output position of a plane (a table when
/// the plane is small; for large planes empty, and callers work one output
/// row at a time with divisor_row).
template <class B>
inline auto PoolKernels<B>::divisor_table(const Plan& plan) -> std::vector<C, Aligned<C>> {
  std::vector<C, Aligned<C>> table;
  if (plan.reduce != Reduce::Average || divisors_per_row(plan)) return table;
  table.reserve(at(plan.out_plane));
  for (std::int64_t d0 : plan.axes[0].divisor)
    for (std::int64_t d : plan.inner_divisor) table.push_back(static_cast<C>(d0 * d));
  return table;
}

template <class B>
inline void PoolKernels<B>::divisor_row(const Plan& plan, std::int64_t o, C* row) {
  const std::int64_t d0 = plan.axes[0].divisor[at(o)];
  for (std::size_t j = 0; j < plan.inner_divisor.size(); ++j)
    row[j] = static_cast<C>(d0 * plan.inner_divisor[j]);
}

}  // namespace nodeflow::fast
