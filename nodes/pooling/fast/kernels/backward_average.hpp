#pragma once
// Backward, AveragePool: dX += scale * the sum of dY / divisor over the
// windows holding each input.
//
// On the fused geometry (fused_backward_ok: fused_ok, with the last axis
// unpadded at its start, so input p of a row is tap p % 2 of window p / 2) no
// input position is in two windows, so every dX row is updated once,
// straight from its window's dY row: one pass over dY and dX, no scratch.
// Positions that no window holds get dX + scale * 0, as in the reference.
// (MaxPool's fused backward is fused_max_backward.)
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"

namespace nodeflow::fast {

/// AveragePool: dX += scale * dY / divisor of the window, over the items
/// of average_backward (planes x chunks of axis-0 inputs). The rows of a
/// window take the same shares: they are worked out (and spread to the
/// row's positions) when the window row changes from one dX row to the
/// next (once per window row in 2-D, once per axis-0 tap in 3-D).
template <class B>
inline void PoolKernels<B>::fused_average_backward(const Plan& plan, const C* divisors, const T* dy,
                                                   V scale, T* dx, std::int64_t begin,
                                                   std::int64_t end,
                                                   std::vector<GradientRedo>& redo) {
  if constexpr (N > 1) {
    const AxisPlan& a0 = plan.axes[0];
    const AxisPlan& last = plan.axes.back();
    const std::int64_t pairs = (last.in + 2 * N - 1) / (2 * N);
    const std::int64_t ahead = plan.in_plane / plan.input_chunks;  // about one item
    const std::int64_t dy_ahead = plan.out_plane / plan.input_chunks;
    const V one = B::broadcast(C(1));
    const V most = B::broadcast(static_cast<C>(plan.term_limit));
    std::vector<C, Aligned<C>> shares(at(2 * N * pairs));
    const FusedInputRows input_rows(plan);
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t plane = item / plan.input_chunks;
      const std::int64_t ib = item % plan.input_chunks * plan.input_chunk;
      const std::int64_t ie = std::min(a0.in, ib + plan.input_chunk);
      const T* dyp = dy + plane * plan.out_plane;
      T* dxp = dx + plane * plan.in_plane;
      std::int64_t shares_of = -2;  // the window row in `shares`
      bool stopped = false;
      input_rows.each(ib, ie, [&](std::int64_t r, std::int64_t w) {
        if (stopped) return;
        if (w != shares_of) {
          shares_of = w;
          M over = B::none();
          for (std::int64_t v = 0; v < pairs; ++v) {
            V g = B::zero();
            if (w >= 0) {
              const std::int64_t o = w * last.out + v * N;
              const M m = B::first_n(last.out - v * N);
              __builtin_prefetch(dyp + o + dy_ahead, 0, 3);
              // The reference's arithmetic: dx + scale * (0 + dy / divisor).
              const V share = B::div(B::load(dyp + o, m), B::load_or(divisors + o, m, one));
              over = B::mor(over, B::mand(m, B::greater(B::abs(share), most)));
              g = B::add(B::zero(), share);
            }
            V lo, hi;
            B::interleave(g, g, lo, hi);
            B::store(shares.data() + 2 * v * N, lo);
            B::store(shares.data() + 2 * v * N + N, hi);
          }
          // Shares that could overflow: this row and the item's later ones
          // are left to average_backward_wide (a row's gradient comes from
          // its one window row, so the rows before are final).
          if (B::any(over)) {
            redo.push_back({plane, r * last.in, ie * input_rows.per_axis0 * last.in});
            stopped = true;
            return;
          }
        }
        T* row = dxp + r * last.in;
        auto update_row = [&](std::int64_t i, M m) {
          __builtin_prefetch(row + i + ahead, 1, 3);
          B::store(row + i,
                   B::add(B::load(row + i, m), B::mul(scale, B::load(shares.data() + i))), m);
        };
        for_row_vectors(last.in, update_row);  // P6 backward 0.93x with it
      });
    }
  }
}

/// Whether every |v| of v[0..n) is at most `limit` (NaN passes: it
/// propagates through the sums as it should).
template <class B>
inline bool PoolKernels<B>::terms_fit(const T* v, std::int64_t n, double limit) {
  const V most = B::broadcast(static_cast<C>(limit));
  M over = B::none();
  for_vectors(n, [&](std::int64_t i, M m) {
    over = B::mor(over, B::mand(m, B::greater(B::abs(B::load(v + i, m)), most)));
  });
  return !B::any(over);
}

/// AveragePool's gradient. Per item (a plane, a chunk [ib, ie) of axis-0
/// inputs): G = dY / divisor for the windows the chunk's rows fall in
/// (rows outside axis 0 zero), spread back along axis 0 (stride 1: one flat
/// loop; otherwise each input row takes its windows' rows), then along the
/// middle axes, then along the last axis into dX.
/// Elements whose shares exceed plan.term_limit (their sums could
/// overflow) are left untouched and added to `redo`, for
/// average_backward_wide: an item's in the general path, all planes
/// [begin, end) for the whole-plane loop (their dY, one per plane, is read
/// first), the rest of an item on the fused geometry.
template <class B>
inline void PoolKernels<B>::average_backward(const Plan& plan, const T* dy, double scale, T* dx,
                                             std::int64_t begin, std::int64_t end,
                                             std::vector<GradientRedo>& redo) {
  const V scale_v = B::broadcast(static_cast<C>(scale));
  if (plan.whole_plane && !terms_fit(dy + begin, end - begin, plan.term_limit)) {
    for (std::int64_t plane = begin; plane < end; ++plane)
      redo.push_back({plane, 0, plan.in_plane});
    return;
  }
  if (plan.whole_plane) {
    // The reference's exact arithmetic: dx + scale * (0 + dy / divisor).
    // One flat loop over the planes [begin, end): planes are rarely whole
    // vectors (7 x 7 = 49), and a loop per plane would split most vectors
    // across cache lines and end every plane with a masked one.
    const auto divisor = static_cast<C>(plan.axes[0].divisor[0] * plan.inner_divisor[0]);
    auto share = [&](std::int64_t plane) {
      return B::broadcast(C(0) + static_cast<C>(dy[plane]) / divisor);
    };
    if constexpr (N == 1) {
      // One lane: a plain loop per plane (the flat loop's plane-boundary
      // test and prefetch per element cost 1.3x-1.7x the reference's time).
      for (std::int64_t plane = begin; plane < end; ++plane) {
        const V g = share(plane);
        T* d = dx + plane * plan.in_plane;
        for (std::int64_t i = 0; i < plan.in_plane; ++i) update(d + i, g, scale_v, 1);
      }
      return;
    }
    const std::int64_t stop = end * plan.in_plane;
    const std::int64_t ahead = 2048 / static_cast<std::int64_t>(sizeof(T));
    std::int64_t plane = begin, plane_end = (begin + 1) * plan.in_plane;
    V g = share(plane);
    for (std::int64_t i = begin * plan.in_plane; i < stop; i += N) {
      const std::int64_t n = std::min(N, stop - i);
      V lanes_g = g;
      while (plane_end < i + n) {  // lanes from plane_end on: the next plane's
        g = share(++plane);
        lanes_g = B::select(B::lanes(plane_end - i, N), g, lanes_g);
        plane_end += plan.in_plane;
      }
      __builtin_prefetch(dx + i + ahead, 1, 3);
      update(dx + i, lanes_g, scale_v, n);
    }
    return;
  }
  const std::vector<C, Aligned<C>> divisors = divisor_table(plan);
  if (!divisors.empty() && fused_backward_ok(plan)) {
    fused_average_backward(plan, divisors.data(), dy, scale_v, dx, begin, end, redo);
    return;
  }
  const std::size_t n = plan.axes.size();
  const AxisPlan& a0 = plan.axes[0];
  const AxisPlan& last = plan.axes[n - 1];
  const std::int64_t inner0 = plan.inner_out(), s0 = a0.stride;
  const std::int64_t u_first = first_tap(a0);
  const std::int64_t u_last = u_first + (a0.t_end - a0.t_first - 1) * a0.dilation;
  // Rows of G an item needs: windows (i - u) / s0 of its inputs i.
  auto g_rows = [&](std::int64_t ib, std::int64_t ie, std::int64_t& gb, std::int64_t& ge) {
    gb = floor_div(ib - u_last, s0);
    ge = floor_div(ie - 1 - u_first, s0) + 1;
  };
  std::int64_t most_g = 0;
  for (std::int64_t ib = 0; ib < a0.in; ib += plan.input_chunk) {
    std::int64_t gb = 0, ge = 0;
    g_rows(ib, std::min(a0.in, ib + plan.input_chunk), gb, ge);
    most_g = std::max(most_g, ge - gb);
  }
  std::vector<C, Aligned<C>> g(at(most_g * inner0));
  std::vector<C, Aligned<C>> e(at(plan.input_chunk * inner0));
  std::vector<C, Aligned<C>> zero_row(at(inner0), C(0));
  std::vector<C, Aligned<C>> gathered, spread, next;  // n >= 3: axes 1..n-2
  std::vector<C, Aligned<C>> row_divisors(divisors.empty() ? at(inner0) : 0);
  const bool flat0 = s0 == 1;
  const V most_v = B::broadcast(static_cast<C>(plan.term_limit));
  RowSpread rs(last, n == 2 && flat0 ? plan.input_chunk : 1);
  std::vector<const C*> rows_of(at(plan.input_chunk));
  const std::int64_t middle_rows = in_product(plan, 1, n - 1);

  // Item `item`'s plane, axis-0 inputs [ib, ie) and windows [vb, ve) (G's rows [gb, ge)).
  auto item_rows = [&](std::int64_t item, std::int64_t& plane, std::int64_t& ib,
                       std::int64_t& ie, std::int64_t& gb, std::int64_t& ge, std::int64_t& vb,
                       std::int64_t& ve) {
    plane = item / plan.input_chunks;
    ib = item % plan.input_chunks * plan.input_chunk;
    ie = std::min(a0.in, ib + plan.input_chunk);
    g_rows(ib, ie, gb, ge);
    vb = std::max<std::int64_t>(0, gb);
    ve = std::min(a0.out, ge);
  };

  for (std::int64_t item = begin; item < end; ++item) {
    std::int64_t plane = 0, ib = 0, ie = 0, gb = 0, ge = 0, vb = 0, ve = 0;
    if (item + 1 < end) {  // the next item's dY
      item_rows(item + 1, plane, ib, ie, gb, ge, vb, ve);
      prefetch_row(dy + plane * plan.out_plane + vb * inner0,
                   std::max<std::int64_t>(0, ve - vb) * inner0);
    }
    item_rows(item, plane, ib, ie, gb, ge, vb, ve);
    // G = 0 + dY / divisor over the windows [vb, ve), zero rows around. The
    // reference's sums of shares start from 0: a -0 share must not survive.
    std::fill(g.begin(), g.begin() + (vb - gb) * inner0, C(0));
    std::fill(g.begin() + std::max<std::int64_t>(0, ve - gb) * inner0,
              g.begin() + (ge - gb) * inner0, C(0));
    const T* dyp = dy + plane * plan.out_plane;
    // Shares above the limit: the item's sums could overflow (redo it).
    M over = B::none();
    auto check = [&](V share, M m) {
      over = B::mor(over, B::mand(m, B::greater(B::abs(share), most_v)));
    };
    if (!divisors.empty()) {
      const std::int64_t count = std::max<std::int64_t>(0, ve - vb) * inner0;
      C* to = g.data() + (vb - gb) * inner0;
      const C* d = divisors.data() + vb * inner0;
      for_vectors(count, [&](std::int64_t i, M m) {
        const V share = B::div(B::load(dyp + vb * inner0 + i, m), B::load(d + i, m));
        check(share, m);
        B::store(to + i, B::add(B::zero(), share), m);
      });
    } else {
      for (std::int64_t o = vb; o < ve; ++o) {
        divisor_row(plan, o, row_divisors.data());
        for (std::int64_t j = 0; j < inner0; j += N) {
          const M m = B::first_n(inner0 - j);
          const V share =
              B::div(B::load(dyp + o * inner0 + j, m), B::load(row_divisors.data() + j, m));
          check(share, m);
          B::store(g.data() + (o - gb) * inner0 + j, B::add(B::zero(), share), m);
        }
      }
    }
    if (B::any(over)) {
      const std::int64_t row = plan.in_plane / a0.in;  // inputs per axis-0 position
      redo.push_back({plane, ib * row, ie * row});
      continue;
    }
    // Spread along axis 0: rows_of[i - ib] gets input row i's sum.
    if (flat0) {
      const std::int64_t count = (ie - ib) * inner0;
      with_taps(a0.t_end - a0.t_first, [&](auto taps) {
        constexpr int K = decltype(taps)::value;
        const std::int64_t t_count = K > 0 ? K : a0.t_end - a0.t_first;
        // Input i takes window i - u: for f = (i - ib) * inner0 + j, G at f + (ib - u - gb) *
        // inner0.
        const C* base = g.data() + (ib - u_first - gb) * inner0;
        const std::int64_t step = a0.dilation * inner0;
        for_vectors(count, [&](std::int64_t f, M m) {
          V acc = B::load(base + f, m);
          for (std::int64_t t = 1; t < t_count; ++t)
            acc = B::add(acc, B::load(base + f - t * step, m));
          B::store(e.data() + f, acc, m);
        });
      });
      for (std::int64_t i = ib; i < ie; ++i) rows_of[at(i - ib)] = e.data() + (i - ib) * inner0;
    } else {
      for (std::int64_t i = ib; i < ie; ++i) {
        const C* single = zero_row.data();
        std::int64_t found = 0;
        C* sum = e.data() + (i - ib) * inner0;
        // Its windows, latest first (the taps' order, as in the flat loop).
        for (std::int64_t w = a0.window_begin[at(i + 1)]; w-- > a0.window_begin[at(i)];) {
          const C* row = g.data() + (a0.windows[at(w)] - gb) * inner0;
          if (found == 0) {
            single = row;
          } else {
            const C* first_row = found == 1 ? single : sum;
            for (std::int64_t j = 0; j < inner0; j += N) {
              const M m = B::first_n(inner0 - j);
              B::store(sum + j, B::add(B::load(first_row + j, m), B::load(row + j, m)), m);
            }
          }
          ++found;
        }
        rows_of[at(i - ib)] = found > 1 ? sum : single;
      }
    }
    // Middle axes (3-D and up): spread one axis at a time.
    const C* cur = nullptr;
    if (n >= 3) {
      // The axis-0 rows contiguously (they may point into G).
      gathered.resize(at((ie - ib) * inner0));
      for (std::int64_t i = ib; i < ie; ++i)
        std::copy(rows_of[at(i - ib)], rows_of[at(i - ib)] + inner0,
                  gathered.begin() + (i - ib) * inner0);
      const C* src = gathered.data();
      std::int64_t inner = inner0;
      for (std::size_t k = 1; k + 1 < n; ++k) {
        const AxisPlan& a = plan.axes[k];
        inner /= a.out;
        const std::int64_t parts = (ie - ib) * in_product(plan, 1, k);
        next.resize(at(parts * a.in * inner));
        spread_rows(a, src, a.out, 0, parts, 0, a.in, inner, next.data());
        spread.swap(next);
        src = spread.data();
      }
      cur = src;
    }
    // Last axis, into dX.
    T* dxp = dx + plane * plan.in_plane + ib * middle_rows * last.in;
    const std::int64_t count = (ie - ib) * middle_rows * last.in;
    // The next item's dX, one line per vector updated here.
    const std::int64_t ahead = item + 1 < end ? count : 0;
    with_taps(rs.taps, [&](auto taps) {
      constexpr int K = decltype(taps)::value;
      if (n >= 3) {
        for (std::int64_t r = 0; r < (ie - ib) * middle_rows; ++r)
          spread_update<K>(rs, last, cur + r * last.out, dxp + r * last.in, 1, scale_v, ahead);
      } else if (rs.kind == Spread::Flat1) {
        spread_update<K>(rs, last, e.data(), dxp, ie - ib, scale_v, ahead);
      } else {
        for (std::int64_t i = ib; i < ie; ++i)
          spread_update<K>(rs, last, rows_of[at(i - ib)], dxp + (i - ib) * last.in, 1, scale_v,
                           ahead);
      }
    });
  }
}

}  // namespace nodeflow::fast
