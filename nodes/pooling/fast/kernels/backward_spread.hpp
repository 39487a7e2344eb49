#pragma once
// Backward: how window gradients spread back over the inputs, along the
// last axis into dX (RowSpread, spread_update) and along the other axes
// (spread_rows), and the inputs' windows on the fused geometry.
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"

namespace nodeflow::fast {

/// How the last axis spreads a row of window gradients back over its input
/// row (input c takes window o = (c - u) / s of every tap offset u that
/// divides): Flat1 (stride 1, out == in: a run of rows in one flat loop),
/// Row1 (stride 1), Row2 (stride 2: even and odd inputs, interleaved), or
/// the windows of each input one by one. Masks are worked out once.
enum class Spread { Flat1, Row1, Row2, Windows };

template <class B>
struct PoolKernels<B>::RowSpread {
  Spread kind = Spread::Windows;
  std::int64_t in, out, taps, vectors;
  std::vector<std::int64_t> tap_pos;  ///< u of each tap
  std::vector<std::int64_t> tap_at;   ///< Row2: offset into g of lane 0's window
  std::vector<std::int64_t> parity;   ///< Row2: 0 if the tap feeds even inputs
  std::vector<MBox, Aligned<MBox>> masks;  ///< [vector][tap]

  RowSpread(const AxisPlan& a, std::int64_t rows)
      : in(a.in), out(a.out), taps(a.t_end - a.t_first), vectors((a.in + N - 1) / N) {
    for (std::int64_t t = a.t_first; t < a.t_end; ++t)
      tap_pos.push_back(t * a.dilation - a.pad_begin);
    if (N == 1) return;
    // The masks below, [vector][tap]; past kMaxRowMasks: Windows.
    const std::int64_t row_masks = (in + N - 1) / N * taps;
    if (row_masks > kMaxRowMasks) return;
    if (a.stride == 1 && a.out == a.in && rows > 1 &&
        (rows * in + N - 1) / N * taps <= kMaxRowMasks) {
      kind = Spread::Flat1;
      vectors = (rows * in + N - 1) / N;
      std::vector<std::int64_t> shifts;  // input c is in window c - u
      for (std::int64_t u : tap_pos) shifts.push_back(-u);
      masks = run_masks(in, vectors, shifts);
    } else if (a.stride == 1) {
      kind = Spread::Row1;
      for (std::int64_t v = 0; v < vectors; ++v)
        for (std::int64_t u : tap_pos) masks.push_back({B::lanes(u - v * N, out + u - v * N)});
    } else if (a.stride == 2) {
      kind = Spread::Row2;
      vectors = (in + 2 * N - 1) / (2 * N);  // pairs of vectors of inputs
      for (std::int64_t u : tap_pos) {
        // Input 2m + q sits in window o when 2o = 2m + q - u.
        parity.push_back(u % 2 == 0 ? 0 : 1);
        tap_at.push_back((parity.back() - u) / 2);
      }
      for (std::int64_t v = 0; v < vectors; ++v)
        for (std::size_t k = 0; k < tap_pos.size(); ++k) {
          const std::int64_t off = v * N + tap_at[k];
          masks.push_back({B::lanes(-off, out - off)});
        }
    }
  }
};

/// dx of `rows` input rows += scale * the spread of the window gradients
/// `g` (rows of `out` values; rows > 1 only for Flat1). The vector code
/// prefetches dx + ahead (a later item's, 0: none) as it goes.
template <class B>
template <int K>
inline void PoolKernels<B>::spread_update(const RowSpread& rs, const AxisPlan& a, const C* g, T* dx,
                                          std::int64_t rows, V scale, std::int64_t ahead) {
  const std::int64_t taps = K > 0 ? K : rs.taps;
  if (rs.kind == Spread::Flat1 || rs.kind == Spread::Row1) {
    const MBox* masks = rs.masks.data();
    const TapOffsets<K> u(rs.tap_pos);
    for_vectors(rows * rs.in, [&](std::int64_t i, M m) {
      const MBox* mk = masks + i / N * taps;
      V acc = B::load(g + i - u[0], B::mand(mk[0].v, m));
      for (std::int64_t k = 1; k < taps; ++k)
        acc = B::add(acc, B::load(g + i - u[k], B::mand(mk[k].v, m)));
      if (ahead) __builtin_prefetch(dx + i + ahead, 1, 3);
      B::store(dx + i, B::add(B::load(dx + i, m), B::mul(scale, acc)), m);
    });
    return;
  }
  if constexpr (N > 1) {
    if (rs.kind == Spread::Row2) {
      const MBox* mk = rs.masks.data();
      for (std::int64_t v = 0; v < rs.vectors; ++v, mk += taps) {
        V even = B::zero(), odd = B::zero();
        for (std::int64_t k = 0; k < taps; ++k) {
          const V w = B::load(g + v * N + rs.tap_at[at(k)], mk[k].v);
          if (rs.parity[at(k)] == 0)
            even = B::add(even, w);
          else
            odd = B::add(odd, w);
        }
        V lo, hi;
        B::interleave(even, odd, lo, hi);
        const std::int64_t c = 2 * v * N;
        if (ahead) {
          __builtin_prefetch(dx + c + ahead, 1, 3);
          __builtin_prefetch(dx + c + N + ahead, 1, 3);
        }
        update(dx + c, lo, scale, std::min(N, rs.in - c));
        if (c + N < rs.in) update(dx + c + N, hi, scale, std::min(N, rs.in - c - N));
      }
      return;
    }
  }
  const C s = first_lane(scale);
  for (std::int64_t c = 0; c < a.in; ++c) {
    C acc = C(0);
    for (std::int64_t w = a.window_begin[at(c)]; w < a.window_begin[at(c + 1)]; ++w)
      acc += g[at(a.windows[at(w)])];
    dx[c] = static_cast<T>(static_cast<C>(dx[c]) + s * acc);
  }
}

/// Rows [P][o][inner] of per-window sums into rows [P][i - ib][inner] of
/// per-position sums: row i gets the sum of the rows of the windows holding
/// position i (`o_offset` is the window of in's first row).
template <class B>
inline void PoolKernels<B>::spread_rows(const AxisPlan& a, const C* in, std::int64_t in_rows,
                                        std::int64_t o_offset, std::int64_t parts, std::int64_t ib,
                                        std::int64_t ie, std::int64_t inner, C* out) {
  for (std::int64_t part = 0; part < parts; ++part)
    for (std::int64_t i = ib; i < ie; ++i) {
      const std::int64_t wb = a.window_begin[at(i)], we = a.window_begin[at(i + 1)];
      C* dst = out + (part * (ie - ib) + i - ib) * inner;
      const C* src = in + part * in_rows * inner;
      for (std::int64_t j = 0; j < inner; j += N) {
        const M m = B::first_n(inner - j);
        V acc = B::zero();
        for (std::int64_t w = wb; w < we; ++w)
          acc = B::add(acc, B::load(src + (a.windows[at(w)] - o_offset) * inner + j, m));
        B::store(dst + j, acc, m);
      }
    }
}

template <class B>
inline bool PoolKernels<B>::fused_backward_ok(const Plan& plan) {
  return fused_ok(plan) && plan.axes.back().pad_begin == 0;
}

/// The window holding position i of axis a, or -1 (at most one here).
template <class B>
inline std::int64_t PoolKernels<B>::window_of(const AxisPlan& a, std::int64_t i) {
  const std::int64_t w = a.window_begin[at(i)];
  return a.window_begin[at(i + 1)] > w ? a.windows[at(w)] : -1;
}

/// The output row of the window that holds each input row of a plane
/// (counted from the plane's start), or -1: worked out once per call, not
/// once per row of every plane.
template <class B>
struct PoolKernels<B>::FusedInputRows {
  std::vector<std::int64_t> window;
  std::int64_t per_axis0 = 1;  ///< input rows per axis-0 position
  explicit FusedInputRows(const Plan& plan) {
    const bool three = plan.axes.size() == 3;
    per_axis0 = three ? plan.axes[1].in : 1;
    const std::int64_t out1 = three ? plan.axes[1].out : 1;
    for (std::int64_t i0 = 0; i0 < plan.axes[0].in; ++i0) {
      const std::int64_t w0 = window_of(plan.axes[0], i0);
      for (std::int64_t i1 = 0; i1 < per_axis0; ++i1) {
        const std::int64_t w1 = three ? window_of(plan.axes[1], i1) : 0;
        window.push_back(w0 < 0 || w1 < 0 ? -1 : w0 * out1 + w1);
      }
    }
  }
  /// f(r, w) for the input rows r of axis-0 positions [ib, ie).
  template <typename F>
  void each(std::int64_t ib, std::int64_t ie, F&& f) const {
    for (std::int64_t r = ib * per_axis0; r < ie * per_axis0; ++r) f(r, window[at(r)]);
  }
};

}  // namespace nodeflow::fast
