// Tensor slots: the dense tensor indices Graph resolves once, and the Executor
// that runs on them (outputs nobody reads, outputs in any name order, errors
// that still name the node).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/executor.hpp"
#include "core/graph_builder.hpp"
#include "support/graph_parts.hpp"
#include "support/test_ops.hpp"

namespace nodeflow {
namespace {

using Ints = std::vector<std::int64_t>;

std::vector<float> slot_values(const Tensor& t) {
  auto v = t.values<float>();
  return {v.begin(), v.end()};
}

using testing::f32;
using testing::node_def;
using testing::test_scale;

// Document order differs from execution order; "m" reads an initializer.
GraphDef scaled() {
  testing::register_test_ops();
  GraphDef g;
  g.inputs.push_back({"x", {DType::Float32, {kDynamicDim, 2}}});
  g.initializers.push_back({"w", f32({1, 2}, {10, 20}), false});
  NodeDef m;
  m.op_type = "TestMul";
  m.name = "m";
  m.inputs = {"b", "w"};
  g.nodes = {test_scale("b", {"a"}, 3.0), m, test_scale("a", {"x"}, 2.0)};
  g.outputs = {"m", "a", "b"};  // not in name order
  return g;
}

TEST(GraphSlots, InputsThenInitializersThenNodeOutputsInDocumentOrder) {
  const Graph g(scaled());
  ASSERT_EQ(g.tensor_count(), 5u);
  const std::vector<std::string> names = {"x", "w", "b", "m", "a"};
  for (std::size_t s = 0; s < names.size(); ++s) {
    EXPECT_EQ(g.tensor_name(s), names[s]);
    EXPECT_EQ(g.slot(names[s]), s);
  }
  EXPECT_EQ(g.slot("nope"), Graph::kAbsent);
  EXPECT_EQ(g.output_slots(), (std::vector<std::size_t>{3, 4, 2}));
  EXPECT_EQ(g.initializer_at(1), g.initializer("w"));
  EXPECT_EQ(g.initializer_at(0), nullptr);
  EXPECT_EQ(g.initializer_at(2), nullptr);
  EXPECT_EQ(g.initializer_at(Graph::kAbsent), nullptr);
  EXPECT_EQ(g.tensor_info(3).shape, (Shape{kDynamicDim, 2}));
}

TEST(GraphSlots, StepsCarryTheSlotsOfTheirNames) {
  const Graph g(scaled());
  ASSERT_EQ(g.steps().size(), 3u);
  for (const Graph::Step& step : g.steps()) {
    ASSERT_EQ(step.input_slots.size(), step.inputs.size());
    ASSERT_EQ(step.output_slots.size(), step.outputs.size());
    for (std::size_t k = 0; k < step.inputs.size(); ++k)
      EXPECT_EQ(step.input_slots[k], g.slot(step.inputs[k]));
    for (std::size_t k = 0; k < step.outputs.size(); ++k)
      EXPECT_EQ(step.output_slots[k], g.slot(step.outputs[k]));
  }
  EXPECT_EQ(g.steps()[2].input_slots, (std::vector<std::size_t>{2, 1}));  // m reads b and w
}

TEST(GraphSlots, AbsentOptionalInputHasNoSlot) {
  GraphBuilder b("unpool");
  b.add_input("x", DType::Float32, {1, 1, 4, 4});
  const Attributes window{{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
  const auto outs = b.add_node(node_def("MaxPool", "pool", {"x"}, window));
  b.add_output(b.add_node(node_def("MaxUnpool", "unpool", {outs[0], outs[1], ""}, window)).front());
  const Graph g(b.def());
  EXPECT_EQ(g.steps()[1].input_slots,
            (std::vector<std::size_t>{g.slot("pool"), g.slot("pool:1"), Graph::kAbsent}));
}

TEST(GraphSlots, ExecutionOrderTakesTheSmallestReadyNodeFirst) {
  // Random DAGs in shuffled document order, against a quadratic reference.
  testing::register_test_ops();
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 1 + rng() % 40;
    GraphDef g;
    g.inputs.push_back({"x", {DType::Float32, {2}}});
    std::vector<NodeDef> nodes;  // node k reads "x" or earlier nodes' outputs
    for (std::size_t k = 0; k < n; ++k) {
      auto pick = [&] { return k == 0 || rng() % 4 == 0 ? std::string("x") : "t" + std::to_string(rng() % k); };
      NodeDef node = test_scale("t" + std::to_string(k), {pick()}, 1.0);
      if (rng() % 2) {
        node.op_type = "TestMul";
        node.attributes.clear();
        node.inputs.push_back(pick());
      }
      nodes.push_back(std::move(node));
    }
    std::shuffle(nodes.begin(), nodes.end(), rng);
    g.nodes = nodes;
    g.outputs = {g.nodes.front().name};
    const Graph graph(g);

    std::vector<bool> done(n, false);
    std::vector<std::string> made = {"x"};
    for (const Graph::Step& step : graph.steps()) {
      std::size_t want = n;
      for (std::size_t i = 0; i < n && want == n; ++i) {
        bool ready = !done[i];
        for (const auto& t : g.nodes[i].inputs)
          ready = ready && std::find(made.begin(), made.end(), t) != made.end();
        if (ready) want = i;
      }
      ASSERT_EQ(step.def_index, want) << "trial " << trial;
      done[want] = true;
      made.push_back(g.nodes[want].name);
    }
    EXPECT_EQ(graph.steps().size(), n);
  }
}

TEST(GraphSlots, TensorInfosByNameAgreeWithSlots) {
  const Graph g(scaled());
  const auto& infos = g.tensor_infos();
  ASSERT_EQ(infos.size(), g.tensor_count());
  for (std::size_t s = 0; s < g.tensor_count(); ++s) {
    EXPECT_EQ(infos.at(g.tensor_name(s)).dtype, g.tensor_info(s).dtype);
    EXPECT_EQ(infos.at(g.tensor_name(s)).shape, g.tensor_info(s).shape);
  }
  EXPECT_EQ(&g.tensor_infos(), &infos);  // built once
}

TEST(GraphSlots, ExecutorReturnsEveryOutputWhateverTheNameOrder) {
  const Graph g(scaled());
  const Executor ex(g);
  // a = 2x, b = 3a, m = b * w
  const TensorMap out = ex.run({{"x", f32({1, 2}, {1, 2})}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(slot_values(out.at("a")), (std::vector<float>{2, 4}));
  EXPECT_EQ(slot_values(out.at("b")), (std::vector<float>{6, 12}));
  EXPECT_EQ(slot_values(out.at("m")), (std::vector<float>{60, 240}));
}

TEST(GraphSlots, AnOutputListedTwiceIsReturnedWhole) {
  GraphDef def = scaled();
  def.outputs = {"b", "x", "b", "w"};  // a graph input and an initializer too
  const Graph g(def);
  const TensorMap out = Executor(g).run({{"x", f32({1, 2}, {1, 2})}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(slot_values(out.at("b")), (std::vector<float>{6, 12}));
  EXPECT_EQ(slot_values(out.at("x")), (std::vector<float>{1, 2}));
  EXPECT_EQ(slot_values(out.at("w")), (std::vector<float>{10, 20}));
  EXPECT_EQ(slot_values(g.initializer("w")->value), (std::vector<float>{10, 20}));
}

TEST(GraphSlots, AnOutputShapeWhoseElementCountOverflowsIsRefusedAtLoad) {
  // Input [2, 1, 2^62 - 1] counts; MaxPool k2 with pads 1+1 makes [2, 1, 2^62],
  // whose 2^63 elements do not: refused when the graph is built, as such an
  // input shape is, not first when something tries to allocate it.
  GraphBuilder b("huge");
  b.add_input("x", DType::Float32, {2, 1, (std::int64_t{1} << 62) - 1});
  b.add_output(
      b.add_node(node_def("MaxPool", "pool", {"x"}, {{"kernel_shape", Ints{2}}, {"pads", Ints{1, 1}}})).front());
  try {
    const Graph g(b.def());
    FAIL() << "no error";
  } catch (const ShapeMismatch& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("nodes[0] (pool): output 0 ('pool'): element count of [2, 1, "
                        "4611686018427387904] overflows int64"),
              std::string::npos)
        << what;
  }
}

TEST(GraphSlots, ExecutorDropsOutputsNobodyReads) {
  // MaxPool's Indices are produced but neither read nor a graph output.
  GraphBuilder b("indices");
  b.add_input("x", DType::Float32, {1, 1, 2, 2});
  b.add_output(b.add_node(node_def("MaxPool", "pool", {"x"}, {{"kernel_shape", Ints{2, 2}}})).front());
  const Graph g(b.def());
  ASSERT_EQ(g.steps()[0].outputs.size(), 2u);
  const TensorMap out = Executor(g).run({{"x", f32({1, 1, 2, 2}, {1, 4, 3, 2})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(slot_values(out.at("pool")), (std::vector<float>{4}));
}

TEST(GraphSlots, RunTimeErrorsStillNameTheNode) {
  // The window fits the declared (dynamic) shape but not the fed one.
  GraphBuilder b("small");
  b.add_input("x", DType::Float32, {1, 1, kDynamicDim, kDynamicDim});
  b.add_output(b.add_node(node_def("AveragePool", "avg", {"x"}, {{"kernel_shape", Ints{3, 3}}})).front());
  const Graph g(b.def());
  try {
    Executor(g).run({{"x", f32({1, 1, 2, 2}, {1, 2, 3, 4})}});
    FAIL() << "a 3x3 window on a 2x2 input ran";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("nodes[0] (avg)", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace nodeflow
