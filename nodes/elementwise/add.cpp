// Add (ONNX Add-14): C = A + B with numpy (multidirectional) broadcasting;
// each input's gradient is dC summed over the axes that input was broadcast along.
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/layer_ops.hpp"

namespace nodeflow {
namespace {

class AddNode final : public Node {
 public:
  using Node::Node;

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& a = *ctx.inputs[0];
    check_float_input("Add", 0, "A", a.dtype);
    check_same_dtype("Add", 1, "B", ctx.inputs[1]->dtype, "A", a.dtype);
    return {TensorInfo{a.dtype, broadcast_shapes(a.shape, ctx.inputs[1]->shape)}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& a = ctx.inputs[0];
    const Tensor& b = ctx.inputs[1];
    const Shape shape = broadcast_shapes(a.shape(), b.shape());
    Tensor c(a.dtype(), shape);
    visit_float_dtype(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using A = accumulator_t<T>;
      const T* ap = a.data<T>();
      const T* bp = b.data<T>();
      T* cp = c.data<T>();
      for_each_broadcast(shape, broadcast_strides(a.shape(), shape), broadcast_strides(b.shape(), shape),
                         [&](std::int64_t i, std::int64_t ia, std::int64_t ib) {
                           cp[i] = static_cast<T>(static_cast<A>(ap[ia]) + static_cast<A>(bp[ib]));
                         });
    });
    ctx.outputs[0] = c;
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dc = ctx.grad_outputs[0];
    if (dc.empty()) return;
    check_output_gradient("Add", 0, dc, broadcast_shapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
    for (std::size_t k = 0; k < 2; ++k)
      accumulate_broadcast_gradient(ctx.grad_inputs[k], dc, ctx.scale_for(k), ctx.threads);
  }
};

}  // namespace

void register_add(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Add";
  s.definition = "ONNX Add-14";
  s.inputs = {{"A", float_dtypes(), "any shape"},
              {"B", float_dtypes(), "broadcasts with A (numpy rules); A's dtype"}};
  s.min_inputs = 2;
  s.outputs = {{"C", float_dtypes(), "the broadcast shape"}};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<AddNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
