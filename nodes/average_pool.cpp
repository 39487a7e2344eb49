#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/pool_ops.hpp"

namespace nodeflow {
namespace {

// Registered early so the library links; the kernels land in the next commits.
class AveragePoolNode final : public Node {
 public:
  using Node::Node;
  std::vector<TensorInfo> infer(const InferContext&) const override {
    throw RunError("AveragePool is not implemented yet");
  }
  void forward(const ForwardContext&) const override {
    throw RunError("AveragePool is not implemented yet");
  }
};

}  // namespace

void register_average_pool(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "AveragePool";
  s.definition = "ONNX AveragePool-22";
  s.inputs = {"X"};
  s.outputs = {"Y"};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<AveragePoolNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
