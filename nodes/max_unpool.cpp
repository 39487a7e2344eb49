#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/pool_ops.hpp"

namespace nodeflow {
namespace {

// Registered early so the library links; the kernels land in the next commits.
class MaxUnpoolNode final : public Node {
 public:
  using Node::Node;
  std::vector<TensorInfo> infer(const InferContext&) const override {
    throw RunError("MaxUnpool is not implemented yet");
  }
  void forward(const ForwardContext&) const override {
    throw RunError("MaxUnpool is not implemented yet");
  }
};

}  // namespace

void register_max_unpool(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "MaxUnpool";
  s.definition = "ONNX MaxUnpool-22";
  s.inputs = {"X"};
  s.outputs = {"Y"};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<MaxUnpoolNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
