#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/pool_ops.hpp"

namespace nodeflow {
namespace {

// Registered early so the library links; the kernels land in the next commits.
class MaxPoolNode final : public Node {
 public:
  using Node::Node;
  std::vector<TensorInfo> infer(const InferContext&) const override {
    throw RunError("MaxPool is not implemented yet");
  }
  void forward(const ForwardContext&) const override {
    throw RunError("MaxPool is not implemented yet");
  }
};

}  // namespace

void register_max_pool(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "MaxPool";
  s.definition = "ONNX MaxPool-22";
  s.inputs = {"X"};
  s.outputs = {"Y"};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<MaxPoolNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
