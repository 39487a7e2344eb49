// GraphBuilder: graphs built in code run like loaded ones, every addition is
// checked at once with Graph's own words, and a failed addition changes nothing.
#include <gtest/gtest.h>

#include "core/executor.hpp"
#include "core/graph_builder.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "support/error_of.hpp"
#include "support/graph_compare.hpp"

namespace nodeflow {
namespace {

using testing::error_of;
using Ints = std::vector<std::int64_t>;

GraphBuilder pool_builder() {
  GraphBuilder b("built");
  b.add_input("x", DType::Float32, {kDynamicDim, 1, 4, 4});
  return b;
}

TEST(GraphBuilder, BuildsAGraphThatRunsAndInfersShapesAsItGoes) {
  GraphBuilder b = pool_builder();
  const auto& pool =
      b.add_node("MaxPool", "pool", {"x"}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(pool, (std::vector<std::string>{"pool", "pool:1"}));
  EXPECT_EQ(b.info("pool").shape, (Shape{kDynamicDim, 1, 2, 2}));
  EXPECT_EQ(b.info("pool:1").dtype, DType::Int64);
  b.add_node("GlobalAveragePool", "gap", {"pool"});
  EXPECT_EQ(b.info("gap").shape, (Shape{kDynamicDim, 1, 1, 1}));
  b.add_output("gap").add_output("pool:1");

  const Graph g = b.build();
  std::vector<float> x(16);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const TensorMap out = Executor(g).run({{"x", Tensor::from<float>({1, 1, 4, 4}, x)}});
  // Window maxima of 0..15 in 4x4: 5, 7, 13, 15; their mean is 10.
  EXPECT_EQ(out.at("gap").values<float>()[0], 10.0f);
  const auto idx = out.at("pool:1").values<std::int64_t>();
  EXPECT_EQ(std::vector<std::int64_t>(idx.begin(), idx.end()), (Ints{5, 7, 13, 15}));
}

TEST(GraphBuilder, NodeDefFormKeepsEveryNodeSetting) {
  GraphBuilder b = pool_builder();
  b.add_initializer("w", Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4}), true);
  NodeDef n;
  n.op_type = "MaxPool";
  n.name = "p";
  n.inputs = {"x"};
  n.specified_outputs_name = std::vector<std::string>{"y"};
  n.attributes = {{"kernel_shape", Ints{1, 1}}};
  n.training = false;
  n.lda_coeff = 0.25;
  EXPECT_EQ(b.add_node(n), (std::vector<std::string>{"y"}));
  b.add_node("AveragePool", "wp", {"w"}, {{"kernel_shape", Ints{2, 2}}});
  b.add_output("y").add_output("wp");
  const GraphDef& d = b.def();
  ASSERT_EQ(d.nodes.size(), 2u);
  EXPECT_FALSE(d.nodes[0].training);
  EXPECT_EQ(d.nodes[0].lda_coeff, 0.25);
  EXPECT_TRUE(d.initializers[0].trainable);
  EXPECT_EQ(b.build().parameter_count(), 4);
}

TEST(GraphBuilder, RoundTripsThroughTheWriterAndReader) {
  GraphBuilder b = pool_builder();
  b.add_initializer("shape", Tensor::from<std::int64_t>({4}, {1, 1, 4, 4}));
  const auto& mp =
      b.add_node("MaxPool", "mp", {"x"}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  b.add_node("MaxUnpool", "up", {mp[0], mp[1], "shape"},
             {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  b.add_output("up");
  const std::string text = write_graph_json(b.def());
  EXPECT_TRUE(testing::same_graph_def(parse_graph_def(text), b.def()));
  EXPECT_EQ(write_graph_json(load_graph(text).def()), text);
}

TEST(GraphBuilder, OutputNameReferencesStayValidAsTheGraphGrows) {
  GraphBuilder b = pool_builder();
  const auto& first = b.add_node("MaxPool", "p0", {"x"}, {{"kernel_shape", Ints{1, 1}}});
  auto name = [](int i) { return std::string("p").append(std::to_string(i)); };
  for (int i = 1; i < 200; ++i)
    b.add_node("AveragePool", name(i), {name(i - 1)}, {{"kernel_shape", Ints{1, 1}}});
  EXPECT_EQ(first, (std::vector<std::string>{"p0", "p0:1"}));
}

/// The error of the builder call, and of Graph's constructor for the same
/// description, must be the same text.
struct Mistake {
  const char* what;
  std::function<void(GraphBuilder&)> make;
  std::function<void(GraphDef&)> same_in_document;
  const char* message;
};

NodeDef pool_node(const std::string& name, std::vector<std::string> inputs,
                  Attributes attrs = {{"kernel_shape", Ints{2, 2}}}) {
  NodeDef n;
  n.op_type = "AveragePool";
  n.name = name;
  n.inputs = std::move(inputs);
  n.attributes = std::move(attrs);
  return n;
}

TEST(GraphBuilder, RefusesTheInternalInt32) {
  GraphBuilder b("g");
  try {
    b.add_input("x", DType::Int32, {1});
    ADD_FAILURE() << "int32 input accepted";
  } catch (const UnsupportedDType& e) {
    EXPECT_STREQ(e.what(), "inputs[0] (x).dtype: int32 is not a graph dtype");
  }
  try {
    b.add_initializer("w", Tensor(DType::Int32, {2}), false);
    ADD_FAILURE() << "int32 initializer accepted";
  } catch (const UnsupportedDType& e) {
    EXPECT_STREQ(e.what(), "initializers[0] (w).dtype: int32 is not a graph dtype");
  }
}

TEST(GraphBuilder, ReportsEachMistakeInGraphsOwnWords) {
  const std::vector<Mistake> mistakes = {
      {"duplicate tensor", [](GraphBuilder& b) { b.add_input("x", DType::Float32, {1}); },
       [](GraphDef& d) {
         d.inputs.push_back({"x", {DType::Float32, {1}}});
       },
       "inputs[1] (x).name: tensor name 'x' is defined twice (names are unique in the graph)"},
      {"negative dimension",
       [](GraphBuilder& b) {
         b.add_input("y", DType::Float32, {2, -3});
       },
       [](GraphDef& d) {
         d.inputs.push_back({"y", {DType::Float32, {2, -3}}});
       },
       "inputs[1] (y).shape: dimension -3 is negative"},
      {"overflowing shape",
       [](GraphBuilder& b) {
         b.add_input("y", DType::Float32, {1ll << 40, 1ll << 40});
       },
       [](GraphDef& d) {
         d.inputs.push_back({"y", {DType::Float32, {1ll << 40, 1ll << 40}}});
       },
       "inputs[1] (y).shape: element count of [1099511627776, 1099511627776] overflows int64"},
      {"empty initializer", [](GraphBuilder& b) { b.add_initializer("w", Tensor()); },
       [](GraphDef& d) {
         d.initializers.push_back({"w", Tensor(), false});
       },
       "initializers[0] (w).data: initializer has no value"},
      {"trainable integers",
       [](GraphBuilder& b) { b.add_initializer("w", Tensor::from<std::int8_t>({1}, {1}), true); },
       [](GraphDef& d) {
         d.initializers.push_back({"w", Tensor::from<std::int8_t>({1}, {1}), true});
       },
       "initializers[0] (w).trainable: initializer of dtype int8 cannot be trainable"},
      {"unknown op",
       [](GraphBuilder& b) {
         NodeDef n = pool_node("n", {"x"});
         n.op_type = "MaxPooll";
         b.add_node(n);
       },
       [](GraphDef& d) {
         NodeDef n = pool_node("n", {"x"});
         n.op_type = "MaxPooll";
         d.nodes.push_back(n);
       },
       nullptr},
      {"bad attribute",
       [](GraphBuilder& b) {
         b.add_node(pool_node("n", {"x"}, {{"kernel_shape", Ints{2, 0}}}));
       },
       [](GraphDef& d) {
         d.nodes.push_back(pool_node("n", {"x"}, {{"kernel_shape", Ints{2, 0}}}));
       },
       nullptr},
      {"unknown attribute",
       [](GraphBuilder& b) {
         b.add_node(pool_node("n", {"x"}, {{"kernel_shape", Ints{2, 2}}, {"kernel", Ints{2}}}));
       },
       [](GraphDef& d) {
         d.nodes.push_back(
             pool_node("n", {"x"}, {{"kernel_shape", Ints{2, 2}}, {"kernel", Ints{2}}}));
       },
       nullptr},
      {"too many inputs",
       [](GraphBuilder& b) {
         b.add_node(pool_node("n", {"x", "x"}));
       },
       [](GraphDef& d) {
         d.nodes.push_back(pool_node("n", {"x", "x"}));
       },
       "nodes[0] (n).inputs: AveragePool takes 1 to 1 inputs, got 2"},
      {"absent required input", [](GraphBuilder& b) { b.add_node(pool_node("n", {""})); },
       [](GraphDef& d) { d.nodes.push_back(pool_node("n", {""})); },
       "nodes[0] (n).inputs[0]: required input 'X' of AveragePool is absent"},
      {"undefined input", [](GraphBuilder& b) { b.add_node(pool_node("n", {"nowhere"})); },
       [](GraphDef& d) { d.nodes.push_back(pool_node("n", {"nowhere"})); },
       "nodes[0] (n).inputs[0]: tensor 'nowhere' is not a graph input, initializer or node output"},
      {"empty node name", [](GraphBuilder& b) { b.add_node(pool_node("", {"x"})); },
       [](GraphDef& d) { d.nodes.push_back(pool_node("", {"x"})); },
       "nodes[0].name: node name is empty"},
      {"output name taken",
       [](GraphBuilder& b) {
         NodeDef n = pool_node("n", {"x"});
         n.specified_outputs_name = std::vector<std::string>{"x"};
         b.add_node(n);
       },
       [](GraphDef& d) {
         NodeDef n = pool_node("n", {"x"});
         n.specified_outputs_name = std::vector<std::string>{"x"};
         d.nodes.push_back(n);
       },
       "nodes[0] (n).specified_outputs_name: tensor name 'x' is defined twice (names are unique in "
       "the graph)"},
      {"too many output names",
       [](GraphBuilder& b) {
         NodeDef n = pool_node("n", {"x"});
         n.specified_outputs_name = std::vector<std::string>{"a", "b"};
         b.add_node(n);
       },
       [](GraphDef& d) {
         NodeDef n = pool_node("n", {"x"});
         n.specified_outputs_name = std::vector<std::string>{"a", "b"};
         d.nodes.push_back(n);
       },
       "nodes[0] (n).specified_outputs_name: AveragePool has 1 to 1 outputs, got 2 names"},
      {"non-finite lda_coeff",
       [](GraphBuilder& b) {
         NodeDef n = pool_node("n", {"x"});
         n.lda_coeff = std::nan("");
         b.add_node(n);
       },
       [](GraphDef& d) {
         NodeDef n = pool_node("n", {"x"});
         n.lda_coeff = std::nan("");
         d.nodes.push_back(n);
       },
       "nodes[0] (n).lda_coeff: expected a finite number"},
      {"shape inference",
       [](GraphBuilder& b) {
         b.add_node(pool_node("n", {"x"}, {{"kernel_shape", Ints{5, 5}}}));
       },
       [](GraphDef& d) {
         d.nodes.push_back(pool_node("n", {"x"}, {{"kernel_shape", Ints{5, 5}}}));
       },
       nullptr},
      {"unknown output", [](GraphBuilder& b) { b.add_output("nowhere"); },
       [](GraphDef& d) { d.outputs.push_back("nowhere"); },
       "outputs[0]: tensor 'nowhere' is not a graph input, initializer or node output"},
  };
  for (const Mistake& m : mistakes) {
    SCOPED_TRACE(m.what);
    GraphBuilder b = pool_builder();
    const GraphDef before = b.def();
    const std::string from_builder = error_of<Error>([&] { m.make(b); });
    GraphDef d = before;
    m.same_in_document(d);
    const std::string from_graph = error_of<Error>([&] { Graph g(d); });
    EXPECT_EQ(from_builder, from_graph);
    EXPECT_FALSE(from_builder.empty());
    if (m.message) {
      EXPECT_EQ(from_builder, m.message);
    }
    // A failed addition leaves the builder as it was, ready for the next one.
    EXPECT_TRUE(testing::same_graph_def(b.def(), before));
    b.add_node(pool_node("ok", {"x"}));
    b.add_output("ok");
    EXPECT_NO_THROW(b.build());
  }
}

TEST(GraphBuilder, SelfReferenceIsAnUndefinedInputSoNoCycleCanBeBuilt) {
  GraphBuilder b = pool_builder();
  EXPECT_EQ(error_of<Error>([&] { b.add_node(pool_node("n", {"n"})); }),
            "nodes[0] (n).inputs[0]: tensor 'n' is not a graph input, initializer or node output");
}

TEST(GraphBuilder, InfoOfUnknownTensorThrows) {
  EXPECT_THROW(pool_builder().info("nope"), InvalidGraph);
}

}  // namespace
}  // namespace nodeflow
