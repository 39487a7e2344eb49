// Slice (ONNX Slice-13): starts, ends and the optional axes and steps are
// 1-D int64 initializers; negative starts and ends count from the end, both
// are clamped to the axis (to [0, d] for a positive step, to [-1, d - 1] for
// a negative one, so INT64_MIN and INT64_MAX mean "past the end"), a step of
// 0 is refused. Any dtype; the gradient goes back to the elements taken.
#include <algorithm>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/constant_inputs.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/mapped_copy_node.hpp"
#include "nodes/shape/shape_ops.hpp"

namespace nodeflow {
namespace {

const char* const kNames[] = {"data", "starts", "ends", "axes", "steps"};

// What the output takes along one data axis: count elements from start, step apart.
struct SliceAxis {
  std::int64_t start = 0;
  std::int64_t step = 1;
  std::int64_t count = 0;  // kDynamicDim when the axis is
};

// ceil(distance / |step|) for distance >= 0, without negating INT64_MIN.
std::int64_t steps_in(std::int64_t distance, std::int64_t step) {
  const std::uint64_t mag =
      step < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(step) : static_cast<std::uint64_t>(step);
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(distance) + mag - 1) / mag);
}

SliceAxis resolve(std::int64_t d, std::int64_t start, std::int64_t end, std::int64_t step) {
  if (d == kDynamicDim) return {0, step, kDynamicDim};
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (step > 0) {
    start = std::min(std::max(start, std::int64_t{0}), d);
    end = std::min(std::max(end, std::int64_t{0}), d);
    return {start, step, end > start ? steps_in(end - start, step) : 0};
  }
  if (d == 0) return {0, step, 0};
  start = std::min(std::max(start, std::int64_t{0}), d - 1);
  end = std::min(std::max(end, std::int64_t{-1}), d - 1);
  return {start, step, start > end ? steps_in(start - end, step) : 0};
}

void check_length(std::size_t k, std::size_t length, std::size_t starts) {
  if (length != starts)
    throw ShapeMismatch(input_name(k, kNames[k]) + " has " + std::to_string(length) +
                        " values but input 1 (starts) has " + std::to_string(starts) +
                        "; Slice needs one per sliced axis");
}

// One SliceAxis per data axis (the unsliced ones take everything).
std::vector<SliceAxis> slice_axes(const Shape& dims, std::span<const Tensor> args) {
  const auto starts = int64_list("Slice", 1, "starts", args[0]);
  const auto ends = int64_list("Slice", 2, "ends", args[1]);
  check_length(2, ends.size(), starts.size());
  std::vector<std::size_t> axes;
  if (const Tensor* given = present(args, 2)) {
    const auto values = int64_list("Slice", 3, "axes", *given);
    check_length(3, values.size(), starts.size());
    axes = normalized_axes(values, dims.size(), 3, "axes");
  } else {
    if (starts.size() > dims.size())
      throw ShapeMismatch("input 1 (starts) has " + std::to_string(starts.size()) +
                          " values for data of rank " + std::to_string(dims.size()) + " (and no axes)");
    for (std::size_t a = 0; a < starts.size(); ++a) axes.push_back(a);
  }
  std::span<const std::int64_t> steps;
  if (const Tensor* given = present(args, 3)) {
    steps = int64_list("Slice", 4, "steps", *given);
    check_length(4, steps.size(), starts.size());
  }
  std::vector<SliceAxis> out;
  for (std::int64_t d : dims) out.push_back({0, 1, d});
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t step = steps.empty() ? 1 : steps[i];
    if (step == 0)
      throw ShapeMismatch("input 4 (steps): steps[" + std::to_string(i) + "] = 0: a step must not be 0");
    out[axes[i]] = resolve(dims[axes[i]], starts[i], ends[i], step);
  }
  return out;
}

Shape sliced_shape(const std::vector<SliceAxis>& axes) {
  Shape out;
  for (const SliceAxis& s : axes) out.push_back(s.count);
  return out;
}

class SliceNode final : public MappedCopyNode {
 public:
  using MappedCopyNode::MappedCopyNode;

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& data = *ctx.inputs[0];
    std::vector<Tensor> args;
    bool known = true;
    for (std::size_t k = 1; k < ctx.inputs.size(); ++k) {
      if (ctx.inputs[k] == nullptr) {
        args.emplace_back();
        continue;
      }
      check_int64_list("Slice", k, kNames[k], *ctx.inputs[k]);
      known = known && ctx.constants[k] != nullptr;
      args.push_back(ctx.constants[k] != nullptr ? *ctx.constants[k] : Tensor());
    }
    // The graph makes every present one a constant; a lone node may lack them.
    if (!known) return {TensorInfo{data.dtype, Shape(data.shape.size(), kDynamicDim)}};
    return {TensorInfo{data.dtype, sliced_shape(slice_axes(data.shape, args))}};
  }

 protected:
  AxisMaps maps_for(const Shape& data, std::span<const Tensor> args) const override {
    const std::vector<SliceAxis> axes = slice_axes(data, args);
    return make_axis_maps(data, sliced_shape(axes),
                          [&](std::size_t a, std::int64_t i) { return axes[a].start + i * axes[a].step; });
  }
};

}  // namespace

void register_slice(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Slice";
  s.definition = "ONNX Slice-13";
  s.doc = "Takes starts:ends:steps along axes (negative values count from the end; clamped)";
  s.inputs = {{"data", graph_dtypes(), "any rank"},
              {"starts", int64_dtypes(), "1-D: first index per sliced axis (negative: from the end)", true},
              {"ends", int64_dtypes(), "1-D: end (exclusive) per sliced axis, clamped to the axis", true},
              {"axes", int64_dtypes(),
               "1-D, optional: the sliced axes, distinct, in [-r, r-1] (default 0, 1, ...)", true},
              {"steps", int64_dtypes(), "1-D, optional: step per sliced axis, non-zero (default 1)", true}};
  s.min_inputs = 3;
  s.outputs = {{"output", graph_dtypes(), "data's rank and dtype"}};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<SliceNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
