// What a schema's TensorSpecs decide in Graph and GraphBuilder (commit
// "Schemas say which inputs are constant, which repeat and which get
// gradients"): variadic inputs and outputs have no upper bound and say so in
// the arity messages, default_output_count names a variadic op's outputs, and
// a constant input must be a non-trainable initializer (docs/operators.md,
// "Inputs that ONNX passes as tensors"), refused naming the input otherwise.
// The ops live in a registry of their own.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/graph.hpp"
#include "core/graph_builder.hpp"
#include "core/registry.hpp"
#include "support/error_of.hpp"

namespace nodeflow {
namespace {

using testing::error_of;

// Every output has the first input's dtype and shape; forward is never run.
struct FirstInputNode final : Node {
  using Node::Node;
  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    return std::vector<TensorInfo>(ctx.num_outputs, *ctx.inputs[0]);
  }
  void forward(const ForwardContext& ctx) const override {
    for (auto& out : ctx.outputs) out = ctx.inputs[0];
  }
};

OpSchema schema(const std::string& op_type, std::vector<TensorSpec> inputs, std::size_t min_inputs,
                std::vector<TensorSpec> outputs) {
  OpSchema s;
  s.op_type = op_type;
  s.definition = "test op";
  s.inputs = std::move(inputs);
  s.min_inputs = min_inputs;
  s.outputs = std::move(outputs);
  s.create = [](NodeConfig c) { return std::make_unique<FirstInputNode>(std::move(c)); };
  return s;
}

// Cat: inputs... (variadic, at least one). Chunks: X -> outputs... (variadic,
// `num` of them by default). Shaped: data, shape (constant) [, pads (constant)].
const OpRegistry& test_registry() {
  static const OpRegistry r = [] {
    OpRegistry ops;
    const std::vector<DType> f32{DType::Float32};
    const std::vector<DType> i64{DType::Int64};
    TensorSpec repeated{"inputs", f32, "any number of tensors"};
    repeated.variadic = true;
    ops.add(schema("Cat", {repeated}, 1, {{"Y", f32, "the first input"}}));
    TensorSpec chunk{"outputs", f32, "copies of X"};
    chunk.variadic = true;
    OpSchema chunks = schema("Chunks", {{"X", f32, "any"}}, 1, {chunk});
    AttrSpec num;
    num.name = "num";
    num.default_value = std::int64_t{0};
    num.min = 0;
    chunks.attributes = {num};
    chunks.default_output_count = [](const Attributes& a) {
      return static_cast<std::size_t>(attr_int(a, "num"));
    };
    ops.add(std::move(chunks));
    TensorSpec shape{"shape", i64, "the output shape"};
    shape.constant = true;
    TensorSpec pads{"pads", i64, "optional pads"};
    pads.constant = true;
    ops.add(schema("Shaped", {{"data", f32, "any"}, shape, pads}, 2, {{"Y", f32, "data"}}));
    return ops;
  }();
  return r;
}

NodeDef node(const std::string& op_type, const std::string& name, std::vector<std::string> inputs) {
  NodeDef n;
  n.op_type = op_type;
  n.name = name;
  n.inputs = std::move(inputs);
  return n;
}

Tensor int64s(std::vector<std::int64_t> values) {
  return Tensor::from<std::int64_t>({static_cast<std::int64_t>(values.size())},
                                    std::span<const std::int64_t>(values));
}

// Inputs x, y (float32 [2]), non-trainable s and trainable w initializers, one node.
GraphDef one_node(NodeDef n) {
  GraphDef d;
  d.inputs.push_back({"x", {DType::Float32, {2}}});
  d.inputs.push_back({"y", {DType::Float32, {2}}});
  d.initializers.push_back({"s", int64s({2}), false});
  d.initializers.push_back({"w", Tensor::from<float>({2}, {1.0f, 2.0f}), true});
  d.outputs = {n.specified_outputs_name ? n.specified_outputs_name->front() : n.name};
  d.nodes.push_back(std::move(n));
  return d;
}

GraphBuilder builder() {
  GraphBuilder b("b", test_registry());
  b.add_input("x", DType::Float32, {2});
  b.add_input("y", DType::Float32, {2});
  b.add_initializer("s", int64s({2}), false);
  b.add_initializer("w", Tensor::from<float>({2}, {1.0f, 2.0f}), true);
  return b;
}

// ------------------------------------------------------------- the schema

TEST(SchemaTensorSpecs, ArityAndGradientsFollowTheSpecs) {
  const OpSchema& cat = *test_registry().find("Cat");
  EXPECT_EQ(cat.max_inputs(), std::numeric_limits<std::size_t>::max());
  EXPECT_EQ(cat.max_outputs(), 1u);
  EXPECT_EQ(&cat.input(7), &cat.inputs[0]);  // the repeats share the last spec
  const OpSchema& shaped = *test_registry().find("Shaped");
  EXPECT_EQ(shaped.max_inputs(), 3u);
  EXPECT_TRUE(receives_gradient(shaped.inputs[0]));
  EXPECT_FALSE(receives_gradient(shaped.inputs[1]));  // constant (and int64)
  TensorSpec float_constant{"c", {DType::Float32}, ""};
  float_constant.constant = true;
  EXPECT_FALSE(receives_gradient(float_constant));
  TensorSpec not_differentiable{"d", {DType::Float32}, ""};
  not_differentiable.differentiable = false;
  EXPECT_FALSE(receives_gradient(not_differentiable));
}

// ----------------------------------------------------------- variadic inputs

TEST(SchemaTensorSpecs, VariadicInputTakesAnyNumberFromTheMinimum) {
  EXPECT_EQ(Graph(one_node(node("Cat", "c", {"x", "y", "x", "y", "x"})), test_registry())
                .steps()[0]
                .inputs.size(),
            5u);
  EXPECT_EQ(error_of<InvalidGraph>([] { Graph(one_node(node("Cat", "c", {})), test_registry()); }),
            "nodes[0] (c).inputs: Cat takes at least 1 inputs, got 0");
  GraphBuilder b = builder();
  EXPECT_EQ(error_of<InvalidGraph>([&] { b.add_node("Cat", "c", {}); }),
            "nodes[0] (c).inputs: Cat takes at least 1 inputs, got 0");
  EXPECT_EQ(b.add_node("Cat", "c", {"x", "y", "x"}), std::vector<std::string>{"c"});
}

TEST(SchemaTensorSpecs, FixedArityStillSaysItsRange) {
  EXPECT_EQ(error_of<InvalidGraph>(
                [] { Graph(one_node(node("Shaped", "r", {"x", "s", "s", "s"})), test_registry()); }),
            "nodes[0] (r).inputs: Shaped takes 2 to 3 inputs, got 4");
  GraphBuilder b = builder();
  EXPECT_EQ(error_of<InvalidGraph>([&] { b.add_node("Shaped", "r", {"x"}); }),
            "nodes[0] (r).inputs: Shaped takes 2 to 3 inputs, got 1");
}

// ---------------------------------------------------------- variadic outputs

TEST(SchemaTensorSpecs, VariadicOutputsAreNamedFromDefaultOutputCount) {
  NodeDef n = node("Chunks", "sp", {"x"});
  n.attributes["num"] = std::int64_t{3};
  const Graph g(one_node(n), test_registry());
  EXPECT_EQ(g.steps()[0].outputs, (std::vector<std::string>{"sp", "sp:1", "sp:2"}));
  GraphBuilder b = builder();
  EXPECT_EQ(b.add_node(n), (std::vector<std::string>{"sp", "sp:1", "sp:2"}));
}

TEST(SchemaTensorSpecs, VariadicOutputsWithoutACountNeedNames) {
  const std::string message =
      "nodes[0] (sp).specified_outputs_name: Chunks needs its output names here (its attributes "
      "do not say how many outputs it has)";
  EXPECT_EQ(error_of<InvalidGraph>(
                [] { Graph(one_node(node("Chunks", "sp", {"x"})), test_registry()); }),
            message);
  GraphBuilder b = builder();
  EXPECT_EQ(error_of<InvalidGraph>([&] { b.add_node("Chunks", "sp", {"x"}); }), message);
  NodeDef named = node("Chunks", "sp", {"x"});
  named.specified_outputs_name = std::vector<std::string>{"a", "b", "c", "d", "e"};
  EXPECT_EQ(Graph(one_node(named), test_registry()).steps()[0].outputs.size(), 5u);
  EXPECT_EQ(b.add_node(named).size(), 5u);
  named.name = "none";
  named.specified_outputs_name = std::vector<std::string>{};
  EXPECT_EQ(error_of<InvalidGraph>([&] { b.add_node(named); }),
            "nodes[1] (none).specified_outputs_name: Chunks has at least 1 outputs, got 0 names");
}

// ------------------------------------------------------------ constant inputs

std::string refusal(const std::string& tensor, std::size_t k = 1,
                    const std::string& input = "shape") {
  return "nodes[0] (r).inputs[" + std::to_string(k) + "] (" + tensor + "): Shaped input '" + input +
         "' must be a non-trainable initializer (its values decide the output shape); '" + tensor +
         "' is not";
}

TEST(SchemaTensorSpecs, ConstantInputFromANonTrainableInitializerIsTaken) {
  EXPECT_NO_THROW(Graph(one_node(node("Shaped", "r", {"x", "s"})), test_registry()));
  EXPECT_NO_THROW(Graph(one_node(node("Shaped", "r", {"x", "s", "s"})), test_registry()));
  // An absent optional constant input is fine.
  EXPECT_NO_THROW(Graph(one_node(node("Shaped", "r", {"x", "s", ""})), test_registry()));
  GraphBuilder b = builder();
  EXPECT_NO_THROW(b.add_node("Shaped", "r", {"x", "s", ""}));
}

TEST(SchemaTensorSpecs, ConstantInputFromAGraphInputIsRefusedNamingIt) {
  EXPECT_EQ(error_of<InvalidGraph>(
                [] { Graph(one_node(node("Shaped", "r", {"x", "y"})), test_registry()); }),
            refusal("y"));
  GraphBuilder b = builder();
  EXPECT_EQ(error_of<InvalidGraph>([&] { b.add_node("Shaped", "r", {"x", "y"}); }),
            refusal("y"));
}

TEST(SchemaTensorSpecs, ConstantInputFromATrainableInitializerIsRefused) {
  EXPECT_EQ(error_of<InvalidGraph>(
                [] { Graph(one_node(node("Shaped", "r", {"x", "s", "w"})), test_registry()); }),
            refusal("w", 2, "pads"));
  GraphBuilder b = builder();
  EXPECT_EQ(error_of<InvalidGraph>([&] { b.add_node("Shaped", "r", {"x", "s", "w"}); }),
            refusal("w", 2, "pads"));
}

TEST(SchemaTensorSpecs, ConstantInputFromANodeOutputIsRefused) {
  GraphDef d = one_node(node("Cat", "c", {"x"}));
  d.nodes.insert(d.nodes.begin() + 0, node("Shaped", "r", {"x", "c"}));
  d.outputs = {"r"};
  // The Cat node runs first; Shaped is still nodes[0] in the document.
  EXPECT_EQ(error_of<InvalidGraph>([&] { Graph(d, test_registry()); }), refusal("c"));
  GraphBuilder b = builder();
  b.add_node("Cat", "c", {"x"});
  const std::string message = error_of<InvalidGraph>([&] { b.add_node("Shaped", "r", {"x", "c"}); });
  EXPECT_NE(message.find("(r).inputs[1] (c): Shaped input 'shape' must be a non-trainable "
                         "initializer"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace nodeflow
