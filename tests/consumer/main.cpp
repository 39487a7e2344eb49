#include <core/executor.hpp>
#include <core/graph.hpp>

int main() {
  nodeflow::GraphDef def;
  def.inputs.push_back({"x", {nodeflow::DType::Float32, {1, 1, 4}}});
  def.outputs = {"pool"};
  def.nodes.push_back({"MaxPool", "pool", {"x"}, std::nullopt,
                       {{"kernel_shape", std::vector<std::int64_t>{2}}}, true, 1.0});
  nodeflow::Graph graph(std::move(def));
  nodeflow::Executor exec(graph);
  auto out = exec.run({{"x", nodeflow::Tensor::from<float>({1, 1, 4}, {1, 3, 2, 4})}});
  return out.at("pool").data<float>()[2] == 4.0f ? 0 : 1;
}
