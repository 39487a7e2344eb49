// Pad (ONNX Pad-21): pads (begins, then ends, one pair per padded axis),
// optional constant_value and axes; modes constant, reflect (mirror without
// repeating the edge), edge and wrap (torus). Negative pads crop; ONNX does
// not say whether a copying mode's border comes from the cropped or the
// whole axis: here the crop comes first and the border is copied from what
// is left. Pads wider than the axis repeat the pattern: reflect and edge as
// numpy.pad, wrap periodically (numpy.pad's wrap is not periodic once both
// sides are padded wider than the axis: [0 1 2 3] with pads 5, 3 gives
// 2 0 1 2 3 ... there, 3 0 1 2 3 ... on the torus ONNX describes). Any
// dtype; copied border elements send their gradient back to their sources.
#include <algorithm>
#include <limits>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/constant_inputs.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/mapped_copy_node.hpp"
#include "nodes/shape/shape_ops.hpp"

namespace nodeflow {
namespace {

enum class PadMode { Constant, Reflect, Edge, Wrap };

PadMode mode_of(const std::string& name) {
  if (name == "reflect") return PadMode::Reflect;
  if (name == "edge") return PadMode::Edge;
  if (name == "wrap") return PadMode::Wrap;
  return PadMode::Constant;
}

// Elements added before and after one axis (negative: removed).
struct AxisPads {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// Pads per data axis from the pads and axes inputs.
std::vector<AxisPads> axis_pads(std::size_t rank, std::span<const Tensor> args) {
  const auto pads = int64_list("Pad", 1, "pads", args[0]);
  std::vector<std::size_t> axes;
  if (const Tensor* given = present(args, 2)) {
    axes = normalized_axes(int64_list("Pad", 3, "axes", *given), rank, 3, "axes");
  } else {
    for (std::size_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (pads.size() != 2 * axes.size())
    throw ShapeMismatch("input 1 (pads) has " + std::to_string(pads.size()) +
                        " values; Pad needs 2 per padded axis (" + std::to_string(2 * axes.size()) + " for " +
                        std::to_string(axes.size()) + " axes)");
  for (std::size_t i = 0; i < pads.size(); ++i)
    if (pads[i] == std::numeric_limits<std::int64_t>::min())  // its crop would not be an int64
      throw ShapeMismatch("input 1 (pads): pads[" + std::to_string(i) + "] = " + std::to_string(pads[i]) +
                          " is out of range");
  std::vector<AxisPads> out(rank);
  for (std::size_t i = 0; i < axes.size(); ++i) out[axes[i]] = {pads[i], pads[i + axes.size()]};
  return out;
}

// The input index that output index i of an axis of size d copies (kFill
// for the constant mode's border).
class AxisSource {
 public:
  AxisSource(PadMode mode, std::int64_t d, const AxisPads& p)
      : mode_(mode), d_(d), begin_(p.begin), crop_(std::max(-p.begin, std::int64_t{0})) {
    if (mode_ == PadMode::Constant) return;
    kept_ = d - crop_ - std::max(-p.end, std::int64_t{0});
    begin_ = std::max(p.begin, std::int64_t{0});
  }

  // A border to copy from an axis cropped to nothing (an empty axis can
  // still be cropped to nothing).
  bool copies_from_nothing(std::int64_t out) const {
    return mode_ != PadMode::Constant && kept_ <= 0 && out > 0;
  }

  std::int64_t operator()(std::int64_t i) const {
    std::int64_t j = 0;
    if (mode_ == PadMode::Constant)  // past INT64_MAX is past the end too
      return !__builtin_sub_overflow(i, begin_, &j) && j >= 0 && j < d_ ? j : kFill;
    j = i - begin_;
    if (j >= 0 && j < kept_) return crop_ + j;
    switch (mode_) {
      case PadMode::Edge:
        return crop_ + (j < 0 ? 0 : kept_ - 1);
      case PadMode::Wrap:
        return crop_ + ((j % kept_) + kept_) % kept_;
      default: {
        if (kept_ == 1) return crop_;
        const std::int64_t period = 2 * (kept_ - 1);
        const std::int64_t m = ((j % period) + period) % period;
        return crop_ + (m < kept_ ? m : period - m);
      }
    }
  }

 private:
  PadMode mode_;
  std::int64_t d_;
  std::int64_t begin_;  // output positions before the first kept element
  std::int64_t crop_;   // input elements removed at the start
  std::int64_t kept_ = 0;
};

void check_constant_value(DType data, const TensorInfo& value) {
  check_same_dtype("Pad", 2, "constant_value", value.dtype, "data", data);
  if (!is_static(value.shape) || element_count(value.shape) != 1)
    throw ShapeMismatch("input 2 (constant_value) has shape " + to_string(value.shape) +
                        "; Pad needs one value (a scalar)");
}

class PadNode final : public MappedCopyNode {
 public:
  explicit PadNode(NodeConfig c)
      : MappedCopyNode(std::move(c)), mode_(mode_of(attr_string(config().attributes, "mode"))) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& data = *ctx.inputs[0];
    check_int64_list("Pad", 1, "pads", *ctx.inputs[1]);
    if (ctx.inputs.size() > 2 && ctx.inputs[2] != nullptr) check_constant_value(data.dtype, *ctx.inputs[2]);
    const bool has_axes = ctx.inputs.size() > 3 && ctx.inputs[3] != nullptr;
    if (has_axes) check_int64_list("Pad", 3, "axes", *ctx.inputs[3]);
    // The graph makes them constants; a lone node may lack them.
    if (ctx.constants[1] == nullptr || (has_axes && ctx.constants[3] == nullptr))
      return {TensorInfo{data.dtype, Shape(data.shape.size(), kDynamicDim)}};
    const Tensor args[] = {*ctx.constants[1], Tensor(), has_axes ? *ctx.constants[3] : Tensor()};
    return {TensorInfo{data.dtype, padded_shape(data.shape, axis_pads(data.shape.size(), args))}};
  }

 protected:
  AxisMaps maps_for(const Shape& data, std::span<const Tensor> args) const override {
    const std::vector<AxisPads> pads = axis_pads(data.size(), args);
    std::vector<AxisSource> sources;
    for (std::size_t a = 0; a < data.size(); ++a) sources.emplace_back(mode_, data[a], pads[a]);
    return make_axis_maps(data, padded_shape(data, pads),
                          [&](std::size_t a, std::int64_t i) { return sources[a](i); });
  }

  const Tensor* fill_value(const Tensor& data, std::span<const Tensor> args) const override {
    const Tensor* value = present(args, 1);
    if (value != nullptr) check_constant_value(data.dtype(), TensorInfo{value->dtype(), value->shape()});
    return value;
  }

 private:
  // d + begin + end per axis (kDynamicDim stays so); refuses a negative or
  // overflowing size and a border with nothing to copy from.
  Shape padded_shape(const Shape& data, const std::vector<AxisPads>& pads) const {
    Shape out;
    for (std::size_t a = 0; a < data.size(); ++a) {
      const std::int64_t d = data[a];
      const AxisPads& p = pads[a];
      std::int64_t size = kDynamicDim;
      if (d != kDynamicDim) {
        const std::string where = "input 1 (pads): axis " + std::to_string(a) + " of size " +
                                  std::to_string(d) + " padded by " + std::to_string(p.begin) + " and " +
                                  std::to_string(p.end);
        if (__builtin_add_overflow(d, p.begin, &size) || __builtin_add_overflow(size, p.end, &size))
          throw ShapeMismatch(where + " overflows int64");
        if (size < 0) throw ShapeMismatch(where + " would have a negative size");
        if (AxisSource(mode_, d, p).copies_from_nothing(size))
          throw ShapeMismatch(where + " has no element left to copy into its border in mode " +
                              attr_string(config().attributes, "mode"));
      }
      out.push_back(size);
    }
    return out;
  }

  PadMode mode_;
};

}  // namespace

void register_pad(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Pad";
  s.definition = "ONNX Pad-21";
  s.doc = "Pads each axis by pads (begin, end) in mode constant, reflect, edge or wrap; optional axes";
  TensorSpec value{"constant_value", graph_dtypes(),
                   "optional scalar of data's dtype: the constant mode's border (default 0)"};
  value.differentiable = false;
  s.inputs = {
      {"data", graph_dtypes(), "any rank"},
      {"pads", int64_dtypes(), "1-D: begins then ends, one per padded axis (negative: crop)", true},
      value,
      {"axes", int64_dtypes(), "1-D, optional: the padded axes, distinct, in [-r, r-1] (default all)", true}};
  s.min_inputs = 2;
  s.outputs = {{"output", graph_dtypes(), "data's rank and dtype, each axis begin + d + end long"}};
  AttrSpec mode;
  mode.name = "mode";
  mode.kind = AttrKind::String;
  mode.default_value = AttrValue{std::string("constant")};
  mode.allowed = {"constant", "reflect", "edge", "wrap"};
  mode.doc =
      "constant (constant_value), reflect (mirror without the edge), edge (repeat it), wrap (torus, opset "
      "19)";
  s.attributes = {mode};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<PadNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
