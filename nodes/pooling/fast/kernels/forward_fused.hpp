#pragma once
// Forward, fused: the last axis read as stride-2 pairs (two taps) and the
// other axes' windows disjoint (2 or 3 spatial axes). No input row is read by
// two windows, so each output row reduces its window's input rows straight
// from x in registers; the staged path would write every row reduction to
// scratch and read it back. The order is the staged one: a row's taps first,
// then the rows in row-major order.
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"

namespace nodeflow::fast {

template <class B>
inline bool PoolKernels<B>::fused_ok(const Plan& plan) {
  const std::size_t n = plan.axes.size();
  if (N == 1 || n < 2 || n > 3) return false;
  const AxisPlan& last = plan.axes[n - 1];
  // RowInput's Direct2 with two taps.
  if (last.stride != 2 || last.dilation != 1 || last.t_end - last.t_first != 2) return false;
  std::int64_t rows = 1;
  for (std::size_t k = 0; k + 1 < n; ++k) {
    const AxisPlan& a = plan.axes[k];
    if ((a.t_end - a.t_first - 1) * a.dilation >= a.stride) return false;
    rows *= a.t_end - a.t_first;
  }
  return rows <= kFusedRows;
}

/// The plane offsets of the input rows of output row (o0, o1) (o1 = 0 in
/// 2-D), row-major; returns their count.
template <class B>
inline std::int64_t PoolKernels<B>::fused_rows(const Plan& plan, std::int64_t o0, std::int64_t o1,
                                               std::int32_t* rows) {
  const std::size_t n = plan.axes.size();
  const AxisPlan& a0 = plan.axes[0];
  const std::int64_t row_len = plan.axes[n - 1].in;
  std::int64_t count = 0;
  for (std::int64_t t0 = a0.tap_lo[at(o0)]; t0 < a0.tap_hi[at(o0)]; ++t0) {
    const std::int64_t p0 = a0.position(o0, t0);
    if (n == 2) {
      rows[count++] = static_cast<std::int32_t>(p0 * row_len);
      continue;
    }
    const AxisPlan& a1 = plan.axes[1];
    for (std::int64_t t1 = a1.tap_lo[at(o1)]; t1 < a1.tap_hi[at(o1)]; ++t1)
      rows[count++] = static_cast<std::int32_t>((p0 * a1.in + a1.position(o1, t1)) * row_len);
  }
  return count;
}

/// fused_rows of every output row of a plane, worked out once per call
/// instead of once per output row of every item.
template <class B>
struct PoolKernels<B>::FusedWindows {
  std::vector<std::int32_t> rows;   ///< [output row][kFusedRows]
  std::vector<std::int32_t> count;  ///< [output row]
  explicit FusedWindows(const Plan& plan) {
    const std::size_t n = plan.axes.size();
    const std::int64_t out0 = plan.axes[0].out, middle = n == 3 ? plan.axes[1].out : 1;
    rows.resize(at(out0 * middle * kFusedRows));
    count.resize(at(out0 * middle));
    for (std::int64_t o0 = 0; o0 < out0; ++o0)
      for (std::int64_t o1 = 0; o1 < middle; ++o1) {
        const std::int64_t w = o0 * middle + o1;
        count[at(w)] = static_cast<std::int32_t>(
            fused_rows(plan, o0, o1, rows.data() + w * kFusedRows));
      }
  }
};

/// One fused item of MaxPool (kMax) or of a sum. MaxPool returns false when
/// the item holds a NaN, or with the argmax a lowest() (see row_max); its
/// outputs are then written again by the exact path. A sum returns false
/// when an output is out of range (sum_out_of_range).
/// kClipped: some window of the last axis reaches outside the row, so
/// lanes filled with lowest() sit in real windows and the argmax must
/// watch for real lowest() values (see row_max).
template <class B>
template <bool kMax, bool kIdx, SumTerm tr, bool kClipped>
inline bool PoolKernels<B>::fused_item(const Plan& plan, const FusedWindows& windows,
                                       const RowInput& row, const T* x, T* y, Argmax argmax,
                                       const C* divisors, std::int64_t item) {
  const std::size_t n = plan.axes.size();
  const AxisPlan& last = plan.axes[n - 1];
  const Item it(plan, item);
  const T* xp = x + it.plane * plan.in_plane;
  const std::int64_t middle = n == 3 ? plan.axes[1].out : 1;
  const std::int64_t ahead = plan.in_plane / plan.chunks;
  const std::int64_t out_base = it.plane * plan.out_plane;
  const std::int64_t out_count = (it.oe - it.ob) * middle * last.out;
  const M tail = B::first_n(last.out % N == 0 ? N : last.out % N);
  const V floor = B::broadcast(row.neutral);
  M flags = B::none();
  SumToOutput<tr, false> sink{plan, y + out_base, divisors, nullptr, out_count};
  const I evens = B::iota(row.base, 2);  // lane j's even tap in its row
  const std::int64_t vectors = row.vectors;
  for (std::int64_t o0 = it.ob; o0 < it.oe; ++o0)
    for (std::int64_t o1 = 0; o1 < middle; ++o1) {
      const std::int64_t found = windows.count[at(o0 * middle + o1)];
      const std::int32_t* rows = windows.rows.data() + (o0 * middle + o1) * kFusedRows;
      const std::int64_t out_row = (o0 * middle + o1) * last.out;
      // K: the window's input rows as a compile-time count where it is the
      // full 2 (2-D) or 4 (3-D), so the loop over them unrolls (a loop of a
      // runtime 2 or 4 per vector measured up to 1.3x slower, P2 and P5
      // training-mode forward). Windows clipped by the input (ceil_mode,
      // pads) take K = 0.
      auto vectors_of_row = [&](auto fixed) {
        constexpr int K = decltype(fixed)::value;
        const std::int64_t count = K > 0 ? K : found;
        // The rows' offsets, masks and layout as locals, not read through
        // `rows` and `row`: the masked stores below may alias anything, so
        // those would be loaded again for every row of every vector.
        std::int64_t offset[K > 0 ? K : 1];
        if constexpr (K > 0)
          for (int r = 0; r < K; ++r) offset[r] = rows[r] + row.base;
        auto at_row = [&](std::int64_t r) { return K > 0 ? offset[r] : rows[r] + row.base; };
        const MBox* const pair_masks = row.masks.data() + 2;  // vector 0's
        for (std::int64_t v = 0; v < vectors; ++v) {
          const M lo_m = pair_masks[2 * v].v, hi_m = pair_masks[2 * v + 1].v;
          V best = B::zero();
          I best_idx{};
          for (std::int64_t r = 0; r < count; ++r) {
            const T* in = xp + at_row(r) + 2 * v * N;
            if (ahead) {
              __builtin_prefetch(in + ahead, 0, 3);
              __builtin_prefetch(in + ahead + N, 0, 3);
            }
            const V fill = kMax ? floor : B::zero();
            const V lo = B::load_or(in, lo_m, fill), hi = B::load_or(in + N, hi_m, fill);
            V even, odd;
            B::deinterleave(lo, hi, even, odd);
            if constexpr (kMax) {
              flags = B::mor(flags, B::unordered(lo, hi));
              if constexpr (kIdx && kClipped)
                flags = B::mor(flags, B::mor(B::equal(lo_m, lo, floor), B::equal(hi_m, hi, floor)));
              if constexpr (kIdx) {
                const I at_even = B::add_i(evens, at_row(r) - row.base + 2 * v * N);
                const M take_odd = B::greater(odd, even);
                const V c = B::select(take_odd, odd, even);
                const I c_idx = B::select_i(take_odd, B::add_i(at_even, 1), at_even);
                const M take = r == 0 ? B::first_n(N) : B::greater(c, best);
                best = B::select(take, c, best);
                best_idx = B::select_i(take, c_idx, best_idx);
              } else {
                const V c = B::max(odd, even);
                best = r == 0 ? c : B::max(c, best);
              }
            } else {
              const V c = B::add(transform<tr>(even, plan.p), transform<tr>(odd, plan.p));
              best = r == 0 ? c : B::add(best, c);
            }
          }
          const std::int64_t j = out_row + v * N;
          const M m = v + 1 < vectors ? B::first_n(N) : tail;
          if constexpr (kMax) {
            __builtin_prefetch(y + out_base + j + out_count, 1, 3);
            if constexpr (kIdx) prefetch_argmax(argmax, out_base + j + out_count);
            B::store(y + out_base + j, best, m);
            if constexpr (kIdx)
              store_argmax(argmax, out_base + j, best_idx, it.plane * plan.in_plane, m);
          } else {
            sink.put(j, best, m, j);
          }
        }
      };
      with_count<2, 4>(found, vectors_of_row);
    }
  return !B::any(B::mor(flags, sink.outside));
}

}  // namespace nodeflow::fast
