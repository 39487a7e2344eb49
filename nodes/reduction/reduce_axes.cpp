#include "nodes/reduction/reduce_axes.hpp"

#include <algorithm>
#include <utility>

#include "nodes/common/constant_inputs.hpp"

namespace nodeflow {

std::vector<bool> reduced_axes(std::span<const std::int64_t> axes, std::size_t rank,
                               bool noop_with_empty_axes) {
  if (axes.empty()) return std::vector<bool>(rank, !noop_with_empty_axes);
  return axis_mask(axes, rank, 1, "axes");
}

Shape reduced_shape(const Shape& input, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (std::size_t a = 0; a < input.size(); ++a) {
    if (!reduced[a])
      out.push_back(input[a]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

ReducePlan make_reduce_plan(const Shape& input, const std::vector<bool>& reduced) {
  ReducePlan plan;
  plan.input_count = element_count(input);
  // Merged axes, outermost first: (length, reduced). Axes of length 1 change no
  // offset; dropping them lets their neighbours merge.
  std::vector<std::pair<std::int64_t, bool>> merged;
  for (std::size_t a = 0; a < input.size(); ++a) {
    if (reduced[a]) plan.reduced *= input[a];
    if (input[a] == 1) continue;
    if (!merged.empty() && merged.back().second == reduced[a])
      merged.back().first *= input[a];
    else
      merged.emplace_back(input[a], reduced[a]);
  }
  if (merged.empty()) merged.emplace_back(1, false);
  plan.line = merged.back().first;
  plan.line_reduced = merged.back().second;
  std::int64_t stride = plan.line;
  for (std::size_t m = merged.size() - 1; m-- > 0;) {
    auto& dims = merged[m].second ? plan.reduced_dims : plan.kept_dims;
    auto& strides = merged[m].second ? plan.reduced_strides : plan.kept_strides;
    dims.insert(dims.begin(), merged[m].first);
    strides.insert(strides.begin(), stride);
    stride *= merged[m].first;
  }
  for (std::int64_t d : plan.kept_dims) plan.outputs *= d;
  for (std::int64_t d : plan.reduced_dims) plan.lines *= d;
  if (!plan.line_reduced) plan.outputs *= plan.line;
  return plan;
}

StridedOffsets::StridedOffsets(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& strides,
                               std::int64_t start)
    : dims_(dims), strides_(strides), index_(dims.size(), 0) {
  seek(start);
}

namespace {
// A line's columns per block: long enough to stream, short enough that the
// accumulated block stays in the first-level cache.
constexpr std::int64_t kMaxBlockColumns = 4096;
constexpr std::int64_t kMinBlockColumns = 64;
constexpr std::int64_t kMinParallelElements = 32768;
}  // namespace

std::int64_t reduce_column_blocks(const ReducePlan& plan, int threads) {
  std::int64_t rows = 1;
  for (std::int64_t d : plan.kept_dims) rows *= d;
  std::int64_t blocks = (plan.line + kMaxBlockColumns - 1) / kMaxBlockColumns;
  if (rows * blocks < threads) {
    const std::int64_t wanted = (threads + rows - 1) / rows;
    blocks = std::max<std::int64_t>(blocks, std::min(wanted, plan.line / kMinBlockColumns));
  }
  return std::max<std::int64_t>(blocks, 1);
}

int reduce_threads(const ReducePlan& plan, int threads) {
  return plan.input_count < kMinParallelElements ? 1 : std::max(1, threads);
}

bool splits_lines(const ReducePlan& plan, int threads) {
  const int team = reduce_threads(plan, threads);
  return team > 1 && plan.line_reduced && plan.outputs < team && plan.line >= kMinParallelElements;
}

}  // namespace nodeflow
