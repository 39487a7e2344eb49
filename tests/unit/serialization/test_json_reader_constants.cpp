// Constant and ConstantOfShape nodes of a graph document, folded into
// non-trainable initializers at load (docs/graph-format.md, "Constant and
// ConstantOfShape").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/executor.hpp"
#include "serialization/json_writer.hpp"
#include "support/graph_documents.hpp"

namespace nodeflow {
namespace {

using namespace json_reader_test;

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

const std::string kX = R"([{"name": "x", "dtype": "float32", "shape": [2, 3]}])";

/// A document with input x [2, 3], output y, the given initializers and nodes.
std::string graph(const std::string& nodes, const std::string& initializers = "[]") {
  return R"({"format": "nodeflow.graph", "version": 1, "inputs": )" + kX +
         R"(, "outputs": ["y"], "initializers": )" + initializers + R"(, "nodes": )" + nodes + "}";
}

/// A Constant "c" with the one attribute `attribute` (JSON member text).
std::string constant(const std::string& attribute, const std::string& extra = "") {
  return R"({"op_type": "Constant", "name": "c", "inputs": [], "attributes": {)" + attribute + "}" + extra + "}";
}

const std::string kAddC = R"({"op_type": "Add", "name": "add", "inputs": ["x", "c"], "specified_outputs_name": ["y"]})";

/// `items` as a JSON list (built with +=: GCC 12's -Wrestrict misfires on "[" + std::string).
std::string list(const std::string& items) {
  std::string out = "[";
  out += items;
  out += "]";
  return out;
}

const Initializer& initializer(const GraphDef& def, const std::string& name) {
  for (const Initializer& init : def.initializers)
    if (init.name == name) return init;
  throw std::runtime_error("no initializer " + name);
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  const auto v = t.values<T>();
  return {v.begin(), v.end()};
}

TEST(JsonReaderConstants, EveryValueFormBecomesANonTrainableInitializer) {
  struct Case {
    std::string attribute;
    DType dtype;
    Shape shape;
  };
  const std::vector<Case> cases = {
      {R"("value_float": 0.5)", DType::Float32, {}},
      {R"("value_floats": [1, 2.5, -3])", DType::Float32, {3}},
      {R"("value_int": -7)", DType::Int64, {}},
      {R"("value_ints": [2, 3])", DType::Int64, {2}},
      {R"("value": {"dtype": "float64", "shape": [1, 3], "data": [0.1, 0.2, 0.3]})", DType::Float64, {1, 3}},
      {R"("value": {"dtype": "float16", "shape": [2], "data": {"base64": "ADwAwA=="}})", DType::Float16, {2}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.attribute);
    const GraphDef def = parse_graph_def(graph(list(constant(c.attribute))));
    EXPECT_TRUE(def.nodes.empty());
    ASSERT_EQ(def.initializers.size(), 1u);
    EXPECT_EQ(def.initializers[0].name, "c");
    EXPECT_FALSE(def.initializers[0].trainable);
    EXPECT_EQ(def.initializers[0].value.dtype(), c.dtype);
    EXPECT_EQ(def.initializers[0].value.shape(), c.shape);
  }
  const GraphDef floats = parse_graph_def(graph(list(constant(R"("value_floats": [1, 2.5, -3])"))));
  EXPECT_EQ(values<float>(floats.initializers[0].value), (std::vector<float>{1, 2.5f, -3}));
  const GraphDef ints = parse_graph_def(graph(list(constant(R"("value_ints": [2, 3])"))));
  EXPECT_EQ(values<std::int64_t>(ints.initializers[0].value), (std::vector<std::int64_t>{2, 3}));
}

TEST(JsonReaderConstants, AConstantFeedsItsConsumerAndIsWrittenAsAnInitializer) {
  // The consumer comes first: nodes may come in any order.
  const std::string text =
      graph(list(kAddC + ", " + constant(R"("value_floats": [1, 2, 3])", R"(, "specified_outputs_name": ["c"])")));
  const Graph g = load_graph(text);
  EXPECT_EQ(g.info("y").shape, (Shape{2, 3}));
  // nodeflow convert normalises: the folded tensor is an initializer.
  const std::string written = write_graph_json(g.def());
  EXPECT_EQ(written.find("Constant"), std::string::npos);
  const GraphDef again = parse_graph_def(written);
  EXPECT_EQ(values<float>(initializer(again, "c").value), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(write_graph_json(again), written);
}

TEST(JsonReaderConstants, ConstantOfShapeOfAnInitializerOrAConstant) {
  const std::string nodes =
      R"([{"op_type": "ConstantOfShape", "name": "z", "inputs": ["c"]},
          {"op_type": "ConstantOfShape", "name": "w", "inputs": ["s"],
           "attributes": {"value": {"dtype": "int64", "shape": [1], "data": [7]}}},
          )" +
      constant(R"("value_ints": [2, 3])") + ", " +
      R"({"op_type": "Add", "name": "add", "inputs": ["x", "z"], "specified_outputs_name": ["y"]}])";
  const std::string inits = R"([{"name": "s", "dtype": "int64", "shape": [1], "data": [4]}])";
  const GraphDef def = parse_graph_def(graph(nodes, inits));
  ASSERT_EQ(def.nodes.size(), 1u);
  const Initializer& z = initializer(def, "z");  // default value: float32 0
  EXPECT_EQ(z.value.dtype(), DType::Float32);
  EXPECT_EQ(z.value.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(z.value), std::vector<float>(6, 0.0f));
  EXPECT_FALSE(z.trainable);
  const Initializer& w = initializer(def, "w");
  EXPECT_EQ(w.value.dtype(), DType::Int64);
  EXPECT_EQ(values<std::int64_t>(w.value), std::vector<std::int64_t>(4, 7));
  // A ConstantOfShape of a ConstantOfShape's int64 output folds too.
  const std::string chain =
      R"([{"op_type": "ConstantOfShape", "name": "b", "inputs": ["a"]},
          {"op_type": "ConstantOfShape", "name": "a", "inputs": ["s"],
           "attributes": {"value": {"dtype": "int64", "shape": [], "data": [2]}}},
          {"op_type": "Identity", "name": "i", "inputs": ["x"], "specified_outputs_name": ["y"]}])";
  const std::string one = R"([{"name": "s", "dtype": "int64", "shape": [1], "data": [3]}])";
  EXPECT_EQ(initializer(parse_graph_def(graph(chain, one)), "b").value.shape(), (Shape{2, 2, 2}));
}

TEST(JsonReaderConstants, ATrainableFoldedConstantTrainsLikeAWeight) {
  const GraphDef folded = parse_graph_def(graph(
      list(R"({"op_type": "Mul", "name": "mul", "inputs": ["x", "c"], "specified_outputs_name": ["y"]}, )" +
           constant(R"("value_floats": [1, 1, 1])"))));
  // Saved, marked trainable by the user, loaded again.
  std::string written = write_graph_json(folded);
  const std::string frozen = R"("name": "c", "dtype": "float32", "shape": [3], "trainable": false)";
  ASSERT_NE(written.find(frozen), std::string::npos) << written;
  written.replace(written.find(frozen), frozen.size(),
                  R"("name": "c", "dtype": "float32", "shape": [3], "trainable": true)");
  const Graph g = load_graph(written);
  Executor ex(g);
  auto run = ex.forward({{"x", Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  const TensorMap grads = ex.backward(run, {{"y", Tensor::from<float>({2, 3}, {1, 1, 1, 1, 1, 1})}});
  ASSERT_TRUE(grads.count("c"));
  EXPECT_EQ(values<float>(grads.at("c")), (std::vector<float>{5, 7, 9}));
}

TEST(JsonReaderConstants, WrongAttributesAreRefusedAtTheirPath) {
  const auto refused = [](const std::string& node) { return error_of<InvalidAttribute>(graph(list(node))); };
  EXPECT_EQ(refused(R"({"op_type": "Constant", "name": "c", "inputs": []})"),
            "nodes[0] (c).attributes: a Constant has exactly one of the attributes value, value_float, "
            "value_floats, value_int, value_ints (0 given)");
  EXPECT_EQ(refused(constant(R"("value_int": 1, "value_float": 2)")),
            "nodes[0] (c).attributes: a Constant has exactly one of the attributes value, value_float, "
            "value_floats, value_int, value_ints (2 given)");
  EXPECT_EQ(refused(constant(R"("value_strings": ["a"])")),
            "nodes[0] (c).attributes.value_strings: this form of Constant is not supported (nodeflow has no "
            "string tensors)");
  EXPECT_EQ(refused(constant(R"("value_floatz": [1])")),
            "nodes[0] (c).attributes.value_floatz: unknown attribute 'value_floatz' for Constant (known: value, "
            "value_float, value_floats, value_int, value_ints)");
  EXPECT_CONTAINS(refused(constant(R"("sparse_value": {})")), "give the dense tensor as value");
  EXPECT_EQ(refused(R"({"op_type": "ConstantOfShape", "name": "c", "inputs": ["s"],
                        "attributes": {"value": {"dtype": "float32", "shape": [2], "data": [1, 2]}}})"),
            "nodes[0] (c).attributes.value must hold one element, got a [2] tensor");
  EXPECT_CONTAINS(refused(R"({"op_type": "ConstantOfShape", "name": "c", "inputs": ["s"],
                              "attributes": {"dtype": 1}})"),
                  "unknown attribute 'dtype' for ConstantOfShape (known: value)");
  // Values read as initializer data of their dtype.
  const auto bad_value = [](const std::string& attribute) { return error_of(graph(list(constant(attribute)))); };
  EXPECT_EQ(bad_value(R"("value_int": 2.0)"), "nodes[0] (c).attributes.value_int: expected an integer, got 2.0");
  EXPECT_EQ(bad_value(R"("value_float": 1e39)"),
            "nodes[0] (c).attributes.value_float: expected a number within the float32 range, got 1e+39");
  EXPECT_CONTAINS(bad_value(R"("value_ints": [1, 2.5])"), "nodes[0] (c).attributes.value_ints[1]: expected an integer");
  EXPECT_EQ(bad_value(R"("value_ints": 3)"), "nodes[0] (c).attributes.value_ints: expected a list of integers, got 3");
  EXPECT_CONTAINS(bad_value(R"("value": {"dtype": "float32", "shape": [2], "data": [1]})"),
                  "nodes[0] (c).attributes.value.data: expected 2 values for shape [2], got 1");
  EXPECT_CONTAINS(bad_value(R"("value": {"dtype": "float32", "shape": [1], "data": [1], "name": "n"})"),
                  "unknown key 'name'");
}

TEST(JsonReaderConstants, WrongNodesAreRefusedAtTheirPath) {
  EXPECT_EQ(error_of(graph(R"([{"op_type": "Constant", "name": "c", "inputs": ["x"],
                                "attributes": {"value_int": 1}}])")),
            "nodes[0] (c).inputs: Constant takes 0 to 0 inputs, got 1");
  EXPECT_EQ(error_of(graph(R"([{"op_type": "ConstantOfShape", "name": "c", "inputs": [""]}])")),
            "nodes[0] (c).inputs[0]: required input 'input' of ConstantOfShape is absent");
  EXPECT_EQ(error_of(graph(list(constant(R"("value_int": 1)", R"(, "specified_outputs_name": ["a", "b"])")))),
            "nodes[0] (c).specified_outputs_name: Constant has 1 to 1 outputs, got 2 names");
  EXPECT_CONTAINS(error_of(graph(list(constant(R"("value_int": 1)", R"(, "trainable": true)")))),
                  "nodes[0] (c).trainable: unknown key 'trainable'");
  EXPECT_EQ(error_of(graph(list(constant(R"("value_int": 1)", R"(, "specified_outputs_name": ["x"])")))),
            "nodes[0] (c).specified_outputs_name: tensor name 'x' is defined twice (names are unique in the graph)");
  EXPECT_EQ(error_of(graph(list(kAddC + ", " + constant(R"("value_int": 1)") + ", " + constant(R"("value_int": 2)")))),
            "nodes[2] (c).name: duplicate node name 'c'");
}

TEST(JsonReaderConstants, ConstantOfShapeNeedsAConstantShape) {
  const std::string computed = R"([{"op_type": "ConstantOfShape", "name": "c", "inputs": ["x"]}])";
  EXPECT_EQ(error_of(graph(computed)),
            "nodes[0] (c).inputs[0]: 'x' must be a constant (a non-trainable initializer or a Constant): nodeflow "
            "folds ConstantOfShape into an initializer at load");
  const std::string of_s = R"([{"op_type": "ConstantOfShape", "name": "c", "inputs": ["s"]}])";
  const auto with_s = [&](const std::string& init) { return error_of(graph(of_s, list(init))); };
  EXPECT_CONTAINS(with_s(R"({"name": "s", "dtype": "float32", "shape": [2], "data": [1, 2], "trainable": true})"),
                  "nodes[0] (c).inputs[0]: 's' must be a constant");
  EXPECT_EQ(with_s(R"({"name": "s", "dtype": "int64", "shape": [2], "data": [2, -1]})"),
            "nodes[0] (c).inputs[0]: 's' holds the negative dimension -1");
  EXPECT_EQ(with_s(R"({"name": "s", "dtype": "float32", "shape": [2], "data": [2, 1]})"),
            "nodes[0] (c).inputs[0]: 's' must be a 1-D int64 tensor, got float32 [2]");
  EXPECT_EQ(error_of<ShapeMismatch>(graph(
                of_s, R"([{"name": "s", "dtype": "int64", "shape": [3], "data": [4294967296, 4294967296, 4]}])")),
            "nodes[0] (c).inputs[0]: 's': the shape [4294967296, 4294967296, 4] has more elements than int64 "
            "counts");
}

TEST(JsonReaderConstants, FoldedTensorsCountAgainstTheInitializerBudget) {
  const std::string nodes = R"([{"op_type": "ConstantOfShape", "name": "c", "inputs": ["s"]}])";
  const std::string huge = R"([{"name": "s", "dtype": "int64", "shape": [2], "data": [200000, 50000]}])";
  EXPECT_EQ(error_of(graph(nodes, huge)),
            "nodes[0] (c): [200000, 50000] float32 needs 40000000000 bytes, over the document's limit of "
            "1073741824 bytes for initializers (16 already taken by earlier ones) "
            "(ReadOptions::max_initializer_bytes; on the command line --max-initializer-bytes)");
  ReadOptions small;
  small.max_initializer_bytes = 16;
  const std::string text = graph(list(constant(R"("value_floats": [1, 2, 3, 4, 5])")));
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse_graph_def(text, OpRegistry::global(), small); }),
                  "nodes[0] (c).attributes.value_floats: [5] float32 needs 20 bytes, over the document's limit of 16");
}

TEST(JsonReaderConstants, TheGraphsErrorsNameTheDocumentsNodes) {
  // nodes[2] in the document is nodes[1] of the GraphDef once c is folded.
  const std::string text =
      graph(R"([{"op_type": "Relu", "name": "r", "inputs": ["x"]}, )" + constant(R"("value_int": 1)") +
            R"(, {"op_type": "Add", "name": "add", "inputs": ["r", "nowhere"], "specified_outputs_name": ["y"]}])");
  EXPECT_EQ(error_of<InvalidGraph>([&] { load_graph(text); }),
            "nodes[2] (add).inputs[1]: tensor 'nowhere' is not a graph input, initializer or node output");
}

}  // namespace
}  // namespace nodeflow

// A unity build (tests/CMakeLists.txt) compiles the next test file after this one.
#undef EXPECT_CONTAINS
