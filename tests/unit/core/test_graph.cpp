// Graph validation: names, wiring, cycles, output naming, topological order.
#include <gtest/gtest.h>

#include "core/graph.hpp"
#include "core/registry.hpp"
#include "support/error_of.hpp"
#include "support/test_ops.hpp"

namespace nodeflow {
namespace {

using testing::test_scale;

GraphDef chain() {
  testing::register_test_ops();
  GraphDef g;
  g.inputs.push_back({"x", {DType::Float32, {kDynamicDim, 3}}});
  g.nodes = {test_scale("b", {"a"}), test_scale("a", {"x"})};  // document order is not execution order
  g.outputs = {"b"};
  return g;
}

std::string error_of(GraphDef def) {
  return testing::error_of<Error>([&] { Graph g(std::move(def)); });
}

TEST(Graph, SortsNodesTopologically) {
  Graph g(chain());
  ASSERT_EQ(g.steps().size(), 2u);
  EXPECT_EQ(g.steps()[0].node->name(), "a");
  EXPECT_EQ(g.steps()[1].node->name(), "b");
  EXPECT_EQ(g.info("b").shape, (Shape{kDynamicDim, 3}));
}

TEST(Graph, DefaultOutputNamesAreNodeNameAndIndex) {
  EXPECT_EQ(default_output_name("pool", 0), "pool");
  EXPECT_EQ(default_output_name("pool", 1), "pool:1");
}

TEST(Graph, ReportsCycleNamingANodeOnIt) {
  GraphDef d = chain();
  d.nodes.push_back(test_scale("c", {"d"}));
  d.nodes.push_back(test_scale("d", {"c"}));
  const std::string msg = error_of(d);
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("c, d"), std::string::npos) << msg;
}

TEST(Graph, ALongCycleNamesItsFirstNodesOnly) {
  // A 300,000-node ring listed every node: a 2.6 MB message.
  GraphDef d = chain();
  const int ring = 1000;
  auto name = [](int i) {  // appended: GCC 12's -Wrestrict misfires on "r" + std::string
    std::string n("r");
    n += std::to_string(i);
    return n;
  };
  for (int i = 0; i < ring; ++i) d.nodes.push_back(test_scale(name(i), {name((i + 1) % ring)}));
  const std::string msg = error_of(d);
  EXPECT_NE(msg.find("cycle through r0, r1,"), std::string::npos) << msg;
  EXPECT_NE(msg.find("r9 and 990 more nodes"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 200u) << msg;
}

TEST(Graph, ReportsMissingTensorWithPath) {
  GraphDef d = chain();
  d.nodes[1].inputs = {"ghost"};
  EXPECT_EQ(error_of(d),
            "nodes[1] (a).inputs[0]: tensor 'ghost' is not a graph input, initializer or node output");
}

TEST(Graph, ReportsDuplicateNames) {
  GraphDef d = chain();
  d.nodes[0].name = "a";
  EXPECT_EQ(error_of(d), "nodes[1] (a).name: duplicate node name 'a'");
  d = chain();
  d.nodes[0].specified_outputs_name = std::vector<std::string>{"x"};
  EXPECT_EQ(error_of(d),
            "nodes[0] (b).specified_outputs_name: tensor name 'x' is defined twice (names are "
            "unique in the graph)");
}

TEST(Graph, ReportsUnknownOpAndAttribute) {
  GraphDef d = chain();
  d.nodes[0].op_type = "Nope";
  EXPECT_NE(error_of(d).find("nodes[0] (b).op_type: unknown op_type 'Nope' (known: "), std::string::npos);
  d = chain();
  d.nodes[0].attributes["beta"] = std::int64_t{1};
  EXPECT_EQ(error_of(d),
            "nodes[0] (b).attributes.beta: unknown attribute 'beta' for TestScale (known: alpha)");
  d = chain();
  d.nodes[0].attributes["alpha"] = std::string("x");
  EXPECT_EQ(error_of(d), "nodes[0] (b).attributes.alpha: expected a number, got \"x\"");
}

TEST(Graph, ReportsNonFiniteLdaCoeff) {
  GraphDef d = chain();
  d.nodes[0].lda_coeff = std::nan("");
  EXPECT_EQ(error_of(d), "nodes[0] (b).lda_coeff: expected a finite number");
}

TEST(Graph, ReportsUndefinedGraphOutput) {
  GraphDef d = chain();
  d.outputs = {"zz"};
  EXPECT_EQ(error_of(d), "outputs[0]: tensor 'zz' is not a graph input, initializer or node output");
}

TEST(Graph, ReportsOverflowingInputShape) {
  GraphDef d = chain();
  d.inputs[0].info.shape = {3037000500, 3037000500, 2, 2};
  EXPECT_EQ(error_of(d),
            "inputs[0] (x).shape: element count of [3037000500, 3037000500, 2, 2] overflows int64");
}

TEST(Graph, CountsParameters) {
  GraphDef d = chain();
  d.initializers.push_back({"w", Tensor(DType::Float32, {2, 3}), true});
  d.initializers.push_back({"s", Tensor(DType::Int64, {4}), false});
  EXPECT_EQ(Graph(std::move(d)).parameter_count(), 10);
}

TEST(Graph, RefusesTheInternalInt32AsAGraphBuiltInCodeTooWould) {
  // GraphDef took int32 inputs and initializers, which save_graph_file then
  // wrote into a document load_graph refuses.
  GraphDef input = chain();
  input.inputs[0].info.dtype = DType::Int32;
  EXPECT_EQ(error_of(input), "inputs[0] (x).dtype: int32 is not a graph dtype");
  GraphDef init = chain();
  init.initializers.push_back({"s", Tensor(DType::Int32, {4}), false});
  EXPECT_EQ(error_of(init), "initializers[0] (s).dtype: int32 is not a graph dtype");
}

TEST(Graph, RefusesTrainableIntegerInitializer) {
  GraphDef d = chain();
  d.initializers.push_back({"s", Tensor(DType::Int64, {4}), true});
  EXPECT_NE(error_of(d).find("int64"), std::string::npos);
}

}  // namespace
}  // namespace nodeflow
