#include "nodes/pooling/pool_node.hpp"

#include "core/errors.hpp"

namespace nodeflow {

PoolNode::PoolNode(NodeConfig config, PoolKind kind)
    : Node(std::move(config)), attrs_(parse_pool_attributes(kind, this->config().attributes)) {}

std::vector<TensorInfo> PoolNode::infer(const InferContext& ctx) const {
  if (ctx.inputs.empty() || ctx.inputs[0] == nullptr)
    throw InvalidGraph(std::string("input 0 (X) of ") + pool_op_type(attrs_.kind) + " is absent");
  const TensorInfo& x = *ctx.inputs[0];
  check_pool_dtype(attrs_.kind, x.dtype, 0);
  std::vector<TensorInfo> out{{x.dtype, resolved(x.shape)->output_shape()}};
  if (attrs_.kind == PoolKind::Max && ctx.num_outputs >= 2)
    out.push_back({DType::Int64, out[0].shape});
  return out;
}

std::shared_ptr<const PoolGeometry> PoolNode::resolved(const Shape& input_shape) const {
  return geometries_.get(input_shape, [&] { return pool_geometry(attrs_, input_shape); });
}

std::shared_ptr<const PoolGeometry> PoolNode::geometry(const Tensor& x) const {
  check_pool_dtype(attrs_.kind, x.dtype(), 0);
  return resolved(x.shape());
}

std::shared_ptr<const PoolGeometry> PoolNode::backward_geometry(const BackwardContext& ctx) const {
  const TensorInfo& x = ctx.inputs[0];
  if (!is_float(x.dtype))
    throw UnsupportedDType(std::string(pool_op_type(attrs_.kind)) + ": input 0 of dtype " +
                           std::string(dtype_name(x.dtype)) +
                           " has no gradient (not differentiable)");
  std::shared_ptr<const PoolGeometry> held = resolved(x.shape);
  const PoolGeometry& g = *held;
  const Tensor& dy = ctx.grad_outputs[0];
  const Tensor& dx = ctx.grad_inputs[0];
  if (dy.shape() != g.output_shape() || dy.dtype() != x.dtype || dx.shape() != g.input_shape() ||
      dx.dtype() != x.dtype)
    throw ShapeMismatch("gradient of output 0 " + to_string(dy.shape()) + " or of input 0 " +
                        to_string(dx.shape()) + " does not fit the forward (" +
                        to_string(g.output_shape()) + " from " + to_string(g.input_shape()) + ")");
  return held;
}

namespace {

// What each kind computes, the schema's doc.
const char* pool_doc(PoolKind kind) {
  switch (kind) {
    case PoolKind::Average:
      return "Mean over each window of kernel_shape (strides, pads, dilations, ceil_mode; count_include_pad)";
    case PoolKind::Max:
      return "Max over each window of kernel_shape (strides, pads, dilations, ceil_mode); optional argmax Indices";
    case PoolKind::Lp:
      return "p-norm (sum of |x|^p)^(1/p) over each window of kernel_shape (strides, pads, dilations, ceil_mode)";
    case PoolKind::GlobalAverage: return "Mean over all spatial axes: N x C x 1..1";
    case PoolKind::GlobalMax: return "Max over all spatial axes: N x C x 1..1";
    case PoolKind::Unpool:
      return "Inverse of MaxPool: X's values at the positions in I, zeros elsewhere; optional output_shape";
    case PoolKind::GlobalLp: return "p-norm (sum of |x|^p)^(1/p) over all spatial axes: N x C x 1..1";
  }
  return "";
}

}  // namespace

OpSchema pool_schema(PoolKind kind) {
  OpSchema s;
  s.op_type = pool_op_type(kind);
  s.definition = "ONNX " + s.op_type + "-22";
  s.doc = pool_doc(kind);
  const auto span = pool_dtypes(kind);
  const std::vector<DType> dtypes(span.begin(), span.end());
  s.inputs = {{"X", dtypes, "N x C x D1..Dn"}};
  s.outputs = {{"Y", dtypes, "N x C x O1..On, X's dtype"}};
  s.attributes = pool_attribute_specs(kind);
  s.check_attributes = [kind](const Attributes& a) { check_pool_attributes(kind, a); };
  return s;
}

bool has_work(const BackwardContext& ctx) {
  return !ctx.grad_outputs.empty() && !ctx.grad_outputs[0].empty() && !ctx.grad_inputs.empty() &&
         !ctx.grad_inputs[0].empty();
}

}  // namespace nodeflow
