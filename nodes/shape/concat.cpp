// Concat (ONNX Concat-13): one or more inputs of one dtype and rank, equal
// dimensions except along `axis` (in [-r, r-1]), joined along it. Any
// dtype. Each input's gradient is its slice of the output gradient.
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/shape/movement.hpp"
#include "nodes/shape/pieces.hpp"
#include "nodes/shape/shape_ops.hpp"

namespace nodeflow {
namespace {

class ConcatNode final : public Node {
 public:
  explicit ConcatNode(NodeConfig c) : Node(std::move(c)), axis_(attr_int(config().attributes, "axis")) {}

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& first = *ctx.inputs[0];
    const std::size_t axis = normalize_axis(axis_, first.shape.size());
    Shape out = first.shape;
    for (std::size_t k = 1; k < ctx.inputs.size(); ++k) {
      const TensorInfo& in = *ctx.inputs[k];
      if (in.dtype != first.dtype)
        throw UnsupportedDType("input " + std::to_string(k) + " has dtype " +
                               std::string(dtype_name(in.dtype)) + ", input 0 " +
                               std::string(dtype_name(first.dtype)) + "; Concat needs one dtype");
      if (in.shape.size() != first.shape.size())
        throw ShapeMismatch("input " + std::to_string(k) + " has rank " +
                            std::to_string(in.shape.size()) + ", input 0 rank " +
                            std::to_string(first.shape.size()) + "; Concat needs one rank");
      for (std::size_t a = 0; a < out.size(); ++a) {
        const std::int64_t d = in.shape[a];
        if (a == axis) {
          if (out[a] == kDynamicDim || d == kDynamicDim)
            out[a] = kDynamicDim;
          else if (__builtin_add_overflow(out[a], d, &out[a]))
            throw ShapeMismatch("the concatenated axis " + std::to_string(axis) + " overflows");
        } else if (out[a] == kDynamicDim) {
          out[a] = d;
        } else if (d != kDynamicDim && d != out[a]) {
          throw ShapeMismatch("input " + std::to_string(k) + " has shape " + to_string(in.shape) +
                              ", input 0 " + to_string(first.shape) + ": Concat needs equal dimensions except along axis " + std::to_string(axis));
        }
      }
    }
    return {TensorInfo{first.dtype, out}};
  }

  void forward(const ForwardContext& ctx) const override {
    const std::vector<Tensor> inputs(ctx.inputs.begin(), ctx.inputs.end());
    const std::size_t axis = normalize_axis(axis_, inputs[0].rank());
    Shape out = inputs[0].shape();
    out[axis] = 0;
    for (const Tensor& t : inputs) out[axis] += t.shape()[axis];
    Tensor y = Tensor::uninitialized(inputs[0].dtype(), out);
    copy_pieces(layout(out, axis, ctx.inputs), inputs, y, PieceDirection::PiecesToWhole, ctx.threads);
    ctx.outputs[0] = std::move(y);
  }

  // Each input's gradient is a slice of dy: copied where it is the first.
  bool overwrites_gradients() const override { return true; }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    if (dy.empty()) {
      for (std::size_t k = 0; k < ctx.grad_inputs.size(); ++k) ctx.zero_if_overwritten(k);
      return;
    }
    const std::size_t axis = normalize_axis(axis_, dy.rank());
    std::vector<double> scales;
    for (std::size_t k = 0; k < ctx.grad_inputs.size(); ++k) scales.push_back(ctx.scale_for(k));
    std::vector<Tensor> dx(ctx.grad_inputs.begin(), ctx.grad_inputs.end());
    for (std::size_t k = 0; k < dx.size(); ++k)
      if (!is_float(ctx.inputs[k].dtype)) dx[k] = Tensor{};
    add_pieces(layout(dy.shape(), axis, ctx.inputs), dx, dy, PieceDirection::WholeToPieces, scales, ctx.threads,
               ctx.overwrite_inputs);
  }

 private:
  template <typename Inputs> static PieceLayout layout(const Shape& out, std::size_t axis, const Inputs& inputs) {
    std::vector<std::int64_t> sizes;
    for (const auto& in : inputs) sizes.push_back(shape_of(in)[axis]);
    return piece_layout(out, axis, sizes);
  }
  static const Shape& shape_of(const Tensor& t) { return t.shape(); }
  static const Shape& shape_of(const TensorInfo& t) { return t.shape; }

  std::int64_t axis_;
};

}  // namespace

void register_concat(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Concat";
  s.definition = "ONNX Concat-13";
  s.doc = "Joins the inputs along axis; the other axes must match";
  TensorSpec inputs{"inputs", graph_dtypes(), "one dtype and rank; equal dimensions except along axis"};
  inputs.variadic = true;
  s.inputs = {inputs};
  s.outputs = {{"concat_result", graph_dtypes(), "the inputs joined along axis"}};
  AttrSpec axis;
  axis.name = "axis";
  axis.kind = AttrKind::Int;
  axis.required = true;
  axis.doc = "the axis to join along, in [-r, r-1]";
  s.attributes = {axis};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<ConcatNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
