// The linear broadcasting ops: Add-14, Sub-14 (every numeric dtype, integers
// wrapping around), Sum-13 and Mean-13 (float dtypes, 1 to n inputs). Each
// input's gradient is the output's, times 1, -1 or 1/n, summed over the axes
// that input was broadcast along.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/accumulate.hpp"
#include "nodes/common/stream_lines.hpp"
#include "nodes/elementwise/elementwise_node.hpp"
#include "nodes/elementwise/elementwise_ops.hpp"
#include "nodes/elementwise/gradient_lanes.hpp"

namespace nodeflow {
namespace elementwise {
namespace {

struct AddOp {
  static constexpr bool kArray = true;
  template <typename X, typename Y> static auto array(const X& x, const Y& y) { return x + y; }
  template <typename T> static T scalar(T x, T y) {
    if constexpr (std::is_integral_v<T>)
      return wrap_add(x, y);
    else
      return x + y;
  }
};

struct SubOp {
  static constexpr bool kArray = true;
  template <typename X, typename Y> static auto array(const X& x, const Y& y) { return x - y; }
  template <typename T> static T scalar(T x, T y) {
    if constexpr (std::is_integral_v<T>)
      return wrap_sub(x, y);
    else
      return x - y;
  }
};

// dsts[k] += scales[k] * (dy summed to dsts[k]'s shape), as
// accumulate_broadcast_gradient, bit for bit, or = where assign[k] (a buffer
// to overwrite, BackwardContext::overwrite_inputs: the same values, but -0
// where 0 + -0 gave +0); but the gradients of dy's shape and dtype (an Add of
// two same-shape tensors) are written in one pass over dy, block by block
// while the block is in the first-level cache, instead of one pass each, and
// with them the sum of one broadcast input's gradient (dy read once instead
// of twice).
void write_gradients(std::span<Tensor* const> dsts, const Tensor& g, std::span<const double> scales,
                     std::span<const std::uint8_t> assign, int threads) {
  if (g.empty()) return;
  const bool direct_dtype = compute_dtype(g.dtype()) == g.dtype();
  std::vector<std::size_t> fused, others;
  for (std::size_t k = 0; k < dsts.size(); ++k) {
    Tensor& dst = *dsts[k];
    if (dst.empty()) continue;
    const bool same = direct_dtype && dst.dtype() == g.dtype() && dst.shape() == g.shape();
    (same ? fused : others).push_back(k);
    if (!same && assign[k]) zero_fill(dst, threads);  // summed into below
  }
  if (fused.empty() || others.size() != 1) {
    for (std::size_t k : others) accumulate_broadcast_gradient(*dsts[k], g, scales[k], threads);
    others.clear();
  }
  if (fused.empty()) return;
  visit_compute_dtype(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
    // The fused gradients of src = dy[i, i + n); a large one overwritten
    // streams past the caches (stream_lines.hpp), another with a factor of 1
    // is a copy: memcpy has the AVX loops that Eigen's baseline-x86-64
    // packets lack, which left 2 threads short of the memory's pace. An Add's
    // two such copies are one pass (copy_to_two): in op_bench's Add backward,
    // medians of 10 alternating rounds, 2.42 -> 2.22 ms with 2 threads.
    const bool two_copies = fused.size() == 2 && assign[fused[0]] && assign[fused[1]] && scales[fused[0]] == 1.0 &&
                            scales[fused[1]] == 1.0 && dsts[fused[0]]->nbytes() < stream_lines::stream_bytes();
    const auto write = [&](const Eigen::Map<const Array>& src, std::int64_t i, std::int64_t n) {
      if (two_copies) {
        gradient_lanes::copy_to_two(dsts[fused[0]]->template data<T>() + i, dsts[fused[1]]->template data<T>() + i,
                                    src.data(), n);
        return;
      }
      for (std::size_t k : fused) {
        Eigen::Map<Array> dst(dsts[k]->template data<T>() + i, n);
        if (!assign[k])
          dst += static_cast<T>(scales[k]) * src;
        else if (dsts[k]->nbytes() >= stream_lines::stream_bytes())
          stream_lines::write_scaled(dst.data(), src.data(), static_cast<T>(scales[k]), n);
        else if (scales[k] == 1.0)
          std::memcpy(dst.data(), src.data(), static_cast<std::size_t>(n) * sizeof(T));
        else
          dst = static_cast<T>(scales[k]) * src;
      }
    };
    if (!others.empty()) {
      // One input broadcast (a per-channel bias [C, 1, 1]): its sum is taken
      // in the same pass, run by run, while the run is in cache: sum_to_shape's
      // runs, add_run and partial sums (reduce_into), so its bits.
      Tensor& dst = *dsts[others[0]];
      const Shape shape = dst.shape();
      const BroadcastPlan plan = plan_broadcast(g.shape(), std::span<const Shape>(&shape, 1));
      const bool along = plan.step(0) != 0;
      if (fuse_broadcast_sum(plan, dst.numel(), threads)) {
        const T* s = g.data<T>();
        const Tensor sum = reduce_into<T>(shape, plan.total, threads, [&](std::int64_t b, std::int64_t e, T* acc) {
          for_each_run<1>(plan, b, e, [&](std::int64_t i, const std::array<std::int64_t, 1>& at, std::int64_t n) {
            write(Eigen::Map<const Array>(s + i, n), i, n);
            add_run(acc + at[0], s + i, n, along);
          });
        });
        accumulate_gradient(dst, sum, scales[others[0]]);
        return;
      }
      accumulate_broadcast_gradient(dst, g, scales[others[0]], threads);
    }
    constexpr std::int64_t kBlock = 4096;
    const T* s = g.data<T>();
    parallel_ranges(g.numel() < kParallelElements ? 1 : threads, g.numel(), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t lo = b; lo < e; lo += kBlock) {
        const std::int64_t n = std::min(kBlock, e - lo);
        write(Eigen::Map<const Array>(s + lo, n), lo, n);
      }
    });
  });
}

// d/dx_k of the output is a constant: 1, -1 for Sub's B, 1/n for Mean.
template <bool kSub, bool kMean> void linear_backward(const GradientArgs& args) {
  const BackwardContext& ctx = args.ctx;
  const std::size_t n = ctx.inputs.size();
  std::vector<Tensor*> dsts;
  std::vector<double> scales;
  std::vector<std::uint8_t> assign;
  for (std::size_t k = 0; k < n; ++k) {
    double factor = kSub && k == 1 ? -1.0 : 1.0;
    if (kMean) factor /= static_cast<double>(n);
    dsts.push_back(&ctx.grad_inputs[k]);
    scales.push_back(ctx.scale_for(k) * factor);
    assign.push_back(ctx.overwrites(k));
  }
  // One pass over dy for every input of its shape (an Add's two gradients).
  write_gradients(dsts, args.dy, scales, assign, ctx.threads);
}

}  // namespace
}  // namespace elementwise

void register_add(OpRegistry& registry) {
  auto op = elementwise::binary_op("Add", 14, "Elementwise A + B with numpy broadcasting",
                                   "A + B, the broadcast shape; integers wrap around", graph_dtypes());
  op.apply = elementwise::apply_any<elementwise::AddOp>;
  op.backward = elementwise::linear_backward<false, false>;
  op.overwrites = true;
  elementwise::register_broadcast_op(registry, std::move(op));
}

void register_sub(OpRegistry& registry) {
  auto op = elementwise::binary_op("Sub", 14, "Elementwise A - B with numpy broadcasting",
                                   "A - B, the broadcast shape; integers wrap around", graph_dtypes());
  op.apply = elementwise::apply_any<elementwise::SubOp>;
  op.backward = elementwise::linear_backward<true, false>;
  op.overwrites = true;
  elementwise::register_broadcast_op(registry, std::move(op));
}

void register_sum(OpRegistry& registry) {
  auto op = elementwise::variadic_op("Sum", "Elementwise sum of 1 or more inputs with numpy broadcasting", "sum",
                                     "the sum of the inputs, the broadcast shape", float_dtypes());
  op.apply = elementwise::apply_any<elementwise::AddOp>;
  op.backward = elementwise::linear_backward<false, false>;
  op.overwrites = true;
  elementwise::register_broadcast_op(registry, std::move(op));
}

void register_mean(OpRegistry& registry) {
  auto op = elementwise::variadic_op("Mean", "Elementwise mean of 1 or more inputs with numpy broadcasting", "mean",
                                     "the mean of the inputs, the broadcast shape", float_dtypes());
  op.mean = true;
  op.apply = elementwise::apply_any<elementwise::AddOp>;
  op.backward = elementwise::linear_backward<false, true>;
  op.overwrites = true;
  elementwise::register_broadcast_op(registry, std::move(op));
}

}  // namespace nodeflow
