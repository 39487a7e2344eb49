#pragma once
// Forward over work items (an N x C plane, or a chunk of its outputs along
// axis 0): the staged path (row_reduce.hpp, then outer_axes.hpp) or the fused
// one, MaxPool's exact order for items that need it, and the entry point
// `forward`.
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"

namespace nodeflow::fast {

/// One item's geometry along axis 0: the windows [ob, oe), the rows of
/// B[0] from position first0, and the valid rows [v_lo, v_hi) among them.
template <class B>
struct PoolKernels<B>::Item {
  std::int64_t plane, ob, oe, first0, rows0, v_lo, v_hi;
  Item(const Plan& plan, std::int64_t item) {
    const AxisPlan& a0 = plan.axes[0];
    plane = item / plan.chunks;
    ob = item % plan.chunks * plan.chunk;
    oe = std::min(a0.out, ob + plan.chunk);
    first0 = ob * a0.stride + first_tap(a0);
    rows0 = span_rows(a0, ob, oe);
    v_lo = std::max<std::int64_t>(0, first0);
    v_hi = std::min(a0.in, first0 + rows0);
  }
};

/// B[0]'s rows outside axis 0 get the neutral value (they vary per item).
template <class B>
inline void PoolKernels<B>::neutral_halo(Stages& st, const Item& it, C neutral) {
  C* b = st.values[0].data();
  const std::int64_t inner = st.inner[0];
  std::fill(b, b + (it.v_lo - it.first0) * inner, neutral);
  std::fill(b + (it.v_hi - it.first0) * inner, b + it.rows0 * inner, neutral);
}

/// Returns false when some output is out of range (sum_out_of_range).
template <class B>
template <SumTerm tr, bool kPerRow>
inline bool PoolKernels<B>::forward_sum(const Plan& plan, const T* x, T* y, std::int64_t begin,
                                        std::int64_t end) {
  const std::size_t n = plan.axes.size();
  const AxisPlan& a0 = plan.axes[0];
  const AxisPlan& last = plan.axes[n - 1];
  // AveragePool's divisors per output position: a table for the plane, or
  // for large planes (kPerRow) one row, refreshed per output row.
  std::vector<C, Aligned<C>> divisors = divisor_table(plan);
  if (kPerRow && plan.reduce == Reduce::Average) divisors.resize(at(plan.inner_out()));
  if (!kPerRow && fused_ok(plan)) {
    const RowInput row(last, C(0));
    const FusedWindows windows(plan);
    bool in_range = true;
    for (std::int64_t item = begin; item < end; ++item)
      in_range = fused_item<false, false, tr, false>(plan, windows, row, x, y, Argmax{},
                                                     divisors.data(), item) &&
                 in_range;
    return in_range;
  }
  Stages st(plan, false, C(0));
  // 2-D: an item's valid rows are contiguous in x and in B[0].
  RowInput row(last, C(0), n == 2 ? st.valid0 : 1);
  SumToOutput<tr, kPerRow> final_sink{plan, nullptr, divisors.data(), divisors.data()};
  const std::int64_t middle_rows = in_product(plan, 1, n - 1);
  for (std::int64_t item = begin; item < end; ++item) {
    const Item it(plan, item);
    neutral_halo(st, it, C(0));
    const T* xp = x + plane_offset(plan, it);
    const std::int64_t out_base = it.plane * plan.out_plane + it.ob * st.inner[0];
    final_sink.out_ahead = (it.oe - it.ob) * st.inner[0];
    const std::int64_t rows = (it.v_hi - it.v_lo) * middle_rows;
    C* dst0 = st.values[n - 2].data();
    with_taps(row.taps, [&](auto taps) {
      if (row.run_rows > 1) {
        row_sum<decltype(taps)::value, tr>(
            row, xp, dst0 + row_in_buffer(st, plan, 0, 0, it.first0, it.v_lo) * last.out,
            plan.p, rows, plan.in_plane / plan.chunks);
        return;
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t at_row = row_in_buffer(st, plan, n - 2, r, it.first0, it.v_lo);
        if (at_row < 0) continue;
        row_sum<decltype(taps)::value, tr>(row, xp + r * last.in, dst0 + at_row * last.out,
                                           plan.p, 1, plan.in_plane / plan.chunks);
      }
    });
    for (std::size_t k = n - 1; k-- > 1;) {
      const AxisPlan& a = plan.axes[k];
      const std::int64_t parts = (it.v_hi - it.v_lo) * in_product(plan, 1, k);
      with_taps(a.t_end - a.t_first, [&](auto taps) {
        for (std::int64_t p = 0; p < parts; ++p) {
          const std::int64_t to = row_in_buffer(st, plan, k - 1, p, it.first0, it.v_lo);
          if (to < 0) continue;
          SumToBuffer sink{st.values[k - 1].data() + to * st.inner[k - 1]};
          outer_sum<decltype(taps)::value>(
              a, st.values[k].data() + p * st.span[k] * st.inner[k], st.first[k], 0, a.out,
              st.inner[k], 0, sink);
        }
      });
    }
    final_sink.y = y + out_base;
    with_taps(a0.t_end - a0.t_first, [&](auto taps) {
      outer_sum<decltype(taps)::value>(a0, st.values[0].data(), it.first0, it.ob, it.oe,
                                       st.inner[0], it.ob * st.inner[0], final_sink);
    });
  }
  return !B::any(final_sink.outside);
}

/// The input of an item starts at its first valid axis-0 row.
template <class B>
inline std::int64_t PoolKernels<B>::plane_offset(const Plan& plan, const Item& it) {
  return it.plane * plan.in_plane + it.v_lo * (plan.in_plane / plan.axes[0].in);
}

/// One forward item. kExact (with `program`) works in MaxPool's exact
/// order; otherwise returns false, having written nothing final, when the
/// fast order may differ from it (a NaN in the input, or with the argmax a
/// lowest()), and the caller runs the item again with kExact.
template <class B>
template <bool kIdx, bool kExact>
inline bool PoolKernels<B>::forward_max_item(const Plan& plan, const T* x, T* y, Argmax argmax,
                                             std::int64_t item, RowInput& row,
                                             const RowProgram* program, Stages& st) {
  const std::size_t n = plan.axes.size();
  const AxisPlan& a0 = plan.axes[0];
  const AxisPlan& last = plan.axes[n - 1];
  const std::int64_t middle_rows = in_product(plan, 1, n - 1);
  const Item it(plan, item);
  neutral_halo(st, it, lowest());
  const T* xp = x + plane_offset(plan, it);
  const std::int64_t base0 = it.v_lo * middle_rows * last.in;  // plane offset of xp
  const std::int64_t out_base = it.plane * plan.out_plane + it.ob * st.inner[0];
  const std::int64_t out_count = (it.oe - it.ob) * st.inner[0];

  const std::int64_t rows = (it.v_hi - it.v_lo) * middle_rows;
  C* dst0 = st.values[n - 2].data();
  std::int32_t* dst0_idx = kIdx ? st.index[n - 2].data() : nullptr;
  M flags = B::none();
  with_taps(row.taps, [&](auto taps) {
    // 2-D: an item's valid rows are consecutive in x and in B[0], so one
    // call takes them all (a Direct1 run, or Direct2 rows one by one).
    if (!kExact && (row.run_rows > 1 || (n == 2 && row.kind == RowRead::Direct2))) {
      const std::int64_t at_row = row_in_buffer(st, plan, 0, 0, it.first0, it.v_lo) * last.out;
      flags = row_max<decltype(taps)::value, kIdx>(row, xp, base0, dst0 + at_row,
                                                   kIdx ? dst0_idx + at_row : nullptr, rows,
                                                   plan.in_plane / plan.chunks);
      return;
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t buffer_row = row_in_buffer(st, plan, n - 2, r, it.first0, it.v_lo);
      if (buffer_row < 0) continue;
      const std::int64_t at_row = buffer_row * last.out;
      std::int32_t* row_idx = kIdx ? dst0_idx + at_row : nullptr;
      const T* in = xp + r * last.in;
      if constexpr (kExact) {
        row_max_exact<kIdx>(*program, in, base0 + r * last.in, dst0 + at_row, row_idx);
      } else {
        flags = B::mor(flags, row_max<decltype(taps)::value, kIdx>(
                                  row, in, base0 + r * last.in, dst0 + at_row, row_idx, 1,
                                  plan.in_plane / plan.chunks));
      }
    }
  });
  if (!kExact && B::any(flags)) return false;
  for (std::size_t k = n - 1; k-- > 1;) {
    const AxisPlan& a = plan.axes[k];
    const std::int64_t parts = (it.v_hi - it.v_lo) * in_product(plan, 1, k);
    with_taps(a.t_end - a.t_first, [&](auto taps) {
      for (std::int64_t p = 0; p < parts; ++p) {
        const std::int64_t buffer_row = row_in_buffer(st, plan, k - 1, p, it.first0, it.v_lo);
        if (buffer_row < 0) continue;
        const std::int64_t to = buffer_row * st.inner[k - 1];
        const std::int64_t from = p * st.span[k] * st.inner[k];
        outer_max<decltype(taps)::value, kIdx, false, kExact>(
            a, st.values[k].data() + from, kIdx ? st.index[k].data() + from : nullptr,
            st.first[k], 0, a.out, st.inner[k], st.values[k - 1].data() + to,
            kIdx ? st.index[k - 1].data() + to : nullptr, nullptr, Argmax{}, 0);
      }
    });
  }
  with_taps(a0.t_end - a0.t_first, [&](auto taps) {
    outer_max<decltype(taps)::value, kIdx, true, kExact>(
        a0, st.values[0].data(), kIdx ? st.index[0].data() : nullptr, it.first0, it.ob, it.oe,
        st.inner[0], nullptr, nullptr, y + out_base, kIdx ? argmax.at(out_base) : Argmax{},
        it.plane * plan.in_plane, kExact ? 0 : out_count);
  });
  return true;
}

template <class B>
template <bool kIdx>
inline void PoolKernels<B>::forward_max(const Plan& plan, const T* x, T* y, Argmax argmax,
                                        std::int64_t begin, std::int64_t end) {
  const AxisPlan& last = plan.axes.back();
  const bool fused = fused_ok(plan);
  bool clipped = false;  // a window of the last axis reaches outside the row
  for (std::int64_t o = 0; o < last.out; ++o)
    clipped = clipped || last.tap_lo[at(o)] != last.t_first || last.tap_hi[at(o)] != last.t_end;
  // The staged path's buffers; the fused path only needs them for the exact order.
  std::unique_ptr<Stages> st;
  if (!fused) st = std::make_unique<Stages>(plan, kIdx, lowest());
  RowInput row(last, lowest(), plan.axes.size() == 2 && st ? st->valid0 : 1);
  std::unique_ptr<RowProgram> program;  // built the first time an item needs it
  std::unique_ptr<FusedWindows> windows;
  if (fused) windows = std::make_unique<FusedWindows>(plan);
  for (std::int64_t item = begin; item < end; ++item) {
    if (fused ? (clipped ? fused_item<true, kIdx, SumTerm::Identity, true>(
                               plan, *windows, row, x, y, argmax, nullptr, item)
                         : fused_item<true, kIdx, SumTerm::Identity, false>(
                               plan, *windows, row, x, y, argmax, nullptr, item))
              : forward_max_item<kIdx, false>(plan, x, y, argmax, item, row, nullptr, *st))
      continue;
    if (!program) program = std::make_unique<RowProgram>(last);
    if (!st) st = std::make_unique<Stages>(plan, kIdx, lowest());
    forward_max_item<kIdx, true>(plan, x, y, argmax, item, row, program.get(), *st);
  }
}

/// Returns false when an average or Lp value is out of the fast sums'
/// exact range (sum_out_of_range): the caller redoes those windows.
template <class B>
inline bool PoolKernels<B>::forward(const Plan& plan, const T* x, T* y, Argmax argmax,
                                    std::int64_t begin, std::int64_t end) {
  if (plan.reduce == Reduce::Max) {
    if (plan.whole_plane) {
      if (!argmax.empty())
        whole_plane_max<true>(plan, x, y, argmax, begin, end);
      else
        whole_plane_max<false>(plan, x, y, argmax, begin, end);
    } else if (!argmax.empty()) {
      forward_max<true>(plan, x, y, argmax, begin, end);
    } else {
      forward_max<false>(plan, x, y, argmax, begin, end);
    }
    return true;
  }
  // Sums need a floating-point accumulator (C is T for int8 and uint8 MaxPool).
  if constexpr (std::is_floating_point_v<C>) {
    if (plan.reduce == Reduce::Average)
      return sum_forward<SumTerm::Identity>(plan, x, y, begin, end);
    if (plan.p == 1) return sum_forward<SumTerm::Abs>(plan, x, y, begin, end);
    if (plan.p == 2) return sum_forward<SumTerm::Square>(plan, x, y, begin, end);
    if constexpr (B::kHasPow) return sum_forward<SumTerm::Pow>(plan, x, y, begin, end);
  }
  return true;
}

template <class B>
template <SumTerm tr>
inline bool PoolKernels<B>::sum_forward(const Plan& plan, const T* x, T* y, std::int64_t begin,
                                        std::int64_t end) {
  if (plan.whole_plane) return whole_plane_sum<tr>(plan, x, y, begin, end);
  if (divisors_per_row(plan)) return forward_sum<tr, true>(plan, x, y, begin, end);
  return forward_sum<tr, false>(plan, x, y, begin, end);
}

}  // namespace nodeflow::fast
