// ArgMax (ONNX ArgMax-13): int64 indices of the maxima along one axis, through
// the reductions' traversal. Not differentiable: its data gets no gradient
// (docs/operators.md, gradient conventions).
#include <memory>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/reduction/reduce_common.hpp"
#include "nodes/reduction/reduce_kernels.hpp"
#include "nodes/reduction/reduction_ops.hpp"

namespace nodeflow {
namespace {

class ArgMaxNode final : public Node {
 public:
  explicit ArgMaxNode(NodeConfig c)
      : Node(std::move(c)),
        axis_(attr_int(config().attributes, "axis")),
        keepdims_(attr_int(config().attributes, "keepdims") != 0),
        last_(attr_int(config().attributes, "select_last_index") != 0) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    check_reduce_dtype("ArgMax", x.dtype, reduce_dtypes(true));
    return {TensorInfo{DType::Int64, reduced_shape(x.shape, mask(x.shape), keepdims_)}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& input = ctx.inputs[0];
    check_reduce_dtype("ArgMax", input.dtype(), reduce_dtypes(true));
    const std::vector<bool> reduced = mask(input.shape());
    ctx.outputs[0] = argmax_forward(make_reduce_plan(input.shape(), reduced), to_compute(input),
                                    reduced_shape(input.shape(), reduced, keepdims_), last_, ctx.threads);
  }

  void backward(const BackwardContext&) const override {}

 private:
  std::vector<bool> mask(const Shape& shape) const {
    if (shape.empty()) throw ShapeMismatch("ArgMax needs an input of rank >= 1, got a scalar");
    const std::size_t axis = normalize_axis(axis_, shape.size());
    if (shape[axis] == 0)
      throw ShapeMismatch("ArgMax along axis " + std::to_string(axis) + " of input " + to_string(shape) +
                          ": the axis is empty, there is no maximum");
    std::vector<bool> reduced(shape.size(), false);
    reduced[axis] = true;
    return reduced;
  }

  std::int64_t axis_;
  bool keepdims_;
  bool last_;
};

}  // namespace

void register_argmax(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "ArgMax";
  s.definition = "ONNX ArgMax-13";
  s.doc = "Index of the maximum along axis (first or select_last_index); keepdims; int64";
  TensorSpec data{"data", reduce_dtypes(true), "rank >= 1, the axis not empty"};
  data.differentiable = false;
  s.inputs = {data};
  s.outputs = {{"reduced", int64_dtypes(), "int64 indices along axis; the axis 1 or dropped"}};
  AttrSpec axis;
  axis.name = "axis";
  axis.kind = AttrKind::Int;
  axis.default_value = AttrValue{std::int64_t{0}};
  axis.doc = "the axis searched, in [-r, r-1]";
  AttrSpec last = flag_spec("select_last_index", "1: the last of equal maxima; 0: the first");
  last.since_version = 12;
  s.attributes = {axis, keepdims_spec("1: the axis stays, with length 1; 0: it is dropped"), last};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<ArgMaxNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
