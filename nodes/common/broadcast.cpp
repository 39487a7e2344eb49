#include "nodes/common/broadcast.hpp"

#include <Eigen/Core>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/reduction/reduce_lines.hpp"

namespace nodeflow {
namespace {

// The broadcast of two dimensions, or -2 when they do not fit.
std::int64_t broadcast_dim(std::int64_t da, std::int64_t db) {
  if (da == db || db == 1) return da;
  if (da == 1) return db;
  if (da == kDynamicDim) return db;
  if (db == kDynamicDim) return da;
  return -2;
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    // Right-aligned: i counts from the last axis.
    const std::int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const std::int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    const std::int64_t d = broadcast_dim(da, db);
    if (d == -2)
      throw ShapeMismatch("shapes " + to_string(a) + " and " + to_string(b) +
                          " do not broadcast (axis " + std::to_string(rank - 1 - i) + " of the result: " +
                          std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[rank - 1 - i] = d;
  }
  return out;
}

Shape broadcast_shapes(std::span<const Shape> shapes) {
  std::size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    std::size_t owner = 0;  // the first input that set the axis to something other than 1
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      const Shape& s = shapes[k];
      const std::int64_t dk = i < s.size() ? s[s.size() - 1 - i] : 1;
      std::int64_t& d = out[rank - 1 - i];
      const std::int64_t before = d;
      const std::int64_t merged = broadcast_dim(d, dk);
      if (merged == -2)
        throw ShapeMismatch("input " + std::to_string(owner) + " " + to_string(shapes[owner]) + " and input " +
                            std::to_string(k) + " " + to_string(s) + " cannot be broadcast (axis " +
                            std::to_string(rank - 1 - i) + " of the result: " + std::to_string(before) +
                            " vs " + std::to_string(dk) + ")");
      if (before == 1 && merged != 1) owner = k;
      d = merged;
    }
  }
  return out;
}

std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& out) {
  std::vector<std::int64_t> strides(out.size(), 0);
  const std::vector<std::int64_t> own = row_major_strides(shape);
  const std::size_t offset = out.size() - shape.size();
  for (std::size_t a = 0; a < shape.size(); ++a)
    strides[offset + a] = shape[a] == 1 ? 0 : own[a];
  return strides;
}

BroadcastPlan plan_strides(const Shape& out, std::vector<std::vector<std::int64_t>> strides) {
  BroadcastPlan plan;
  plan.total = element_count(out);
  plan.strides.resize(strides.size());
  // Outermost first; an axis of size 1 is never walked, so it is dropped. Axis
  // a merges into the axis kept before it when every operand's stride there is
  // its stride on a times a's size (contiguous, or 0 on both).
  for (std::size_t a = 0; a < out.size(); ++a) {
    if (out[a] == 1) continue;
    bool merge = !plan.dims.empty();
    for (std::size_t k = 0; merge && k < strides.size(); ++k)
      merge = plan.strides[k].back() == strides[k][a] * out[a];
    if (merge) {
      plan.dims.back() *= out[a];
      for (std::size_t k = 0; k < strides.size(); ++k) plan.strides[k].back() = strides[k][a];
      continue;
    }
    plan.dims.push_back(out[a]);
    for (std::size_t k = 0; k < strides.size(); ++k) plan.strides[k].push_back(strides[k][a]);
  }
  if (plan.dims.empty()) {  // a scalar, or only size-1 axes
    plan.dims.push_back(1);
    for (auto& s : plan.strides) s.push_back(0);
  }
  return plan;
}

BroadcastPlan plan_broadcast(const Shape& out, std::span<const Shape> operands) {
  std::vector<std::vector<std::int64_t>> strides;
  strides.reserve(operands.size());
  for (const Shape& s : operands) strides.push_back(broadcast_strides(s, out));
  return plan_strides(out, std::move(strides));
}

namespace {

template <typename T> void add_run_of(T* acc, const T* src, std::int64_t n, bool along) {
  if (along)
    reduce_lines::add(acc, src, n);
  else
    *acc += reduce_lines::sum(src, n);
}

// dst[shape] += g summed over the broadcast axes, for output elements [begin, end).
template <typename T>
void sum_runs(const BroadcastPlan& plan, const T* g, T* dst, std::int64_t begin, std::int64_t end) {
  const bool along = plan.step(0) != 0;
  for_each_run<1>(plan, begin, end, [&](std::int64_t i, const std::array<std::int64_t, 1>& at, std::int64_t n) {
    add_run_of(dst + at[0], g + i, n, along);
  });
}

}  // namespace

void add_run(float* acc, const float* src, std::int64_t n, bool along) { add_run_of(acc, src, n, along); }
void add_run(double* acc, const double* src, std::int64_t n, bool along) { add_run_of(acc, src, n, along); }

Tensor sum_to_shape(const Tensor& g, const Shape& shape, int threads) {
  const BroadcastPlan plan = plan_broadcast(g.shape(), std::span<const Shape>(&shape, 1));
  Tensor sum;
  visit_compute_dtype(g.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* gp = g.data<T>();
    sum = reduce_into<T>(shape, plan.total, threads, [&](std::int64_t begin, std::int64_t end, T* acc) {
      sum_runs(plan, gp, acc, begin, end);
    });
  });
  return sum;
}

void accumulate_broadcast_gradient(Tensor& dst, const Tensor& g, double scale, int threads) {
  if (dst.empty() || g.empty()) return;
  if (g.shape() == dst.shape()) {
    if (dst.dtype() != g.dtype() || compute_dtype(g.dtype()) != g.dtype()) {
      accumulate_gradient(dst, g, scale);
      return;
    }
    // The common case (an Add of two same-shape tensors): one vectorised pass on every thread.
    visit_compute_dtype(g.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using Array = Eigen::Array<T, Eigen::Dynamic, 1>;
      T* d = dst.data<T>();
      const T* s = g.data<T>();
      const auto k = static_cast<T>(scale);
      parallel_ranges(g.numel() < kParallelElements ? 1 : threads, g.numel(), [&](std::int64_t b, std::int64_t e) {
        Eigen::Map<Array>(d + b, e - b) += k * Eigen::Map<const Array>(s + b, e - b);
      });
    });
    return;
  }
  accumulate_gradient(dst, sum_to_shape(to_compute(g), dst.shape(), threads), scale);
}

}  // namespace nodeflow
