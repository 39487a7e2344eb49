// The ONNX reader (serialization/onnx.hpp, parse_onnx_def): what it maps, and
// hostile files, each refused with a clear error naming what and where, never a
// crash or a half-loaded graph.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/executor.hpp"
#include "serialization/onnx.hpp"
#include "support/error_of.hpp"
#include "support/onnx_builder.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;
using namespace onnx_builder;

GraphDef parse(const onnx::ModelProto& m, const fs::path& dir = {}, const ReadOptions& options = {}) {
  return parse_onnx_def(bytes(m), dir, OpRegistry::global(), options);
}

/// The message of the nodeflow::Error that loading `m` (reader, then Graph) throws.
std::string load_error(const onnx::ModelProto& m, const fs::path& dir = {},
                       const ReadOptions& options = {}) {
  return error_of<Error>([&] { load_onnx(bytes(m), dir, options); });
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

#define EXPECT_CONTAINS(text, part) EXPECT_TRUE(contains(text, part)) << (text)

// --- What is read --------------------------------------------------------------

TEST(OnnxReader, ReadsTheSmallestModel) {
  const GraphDef def = parse(max_pool_model());
  EXPECT_EQ(def.name, "g");
  ASSERT_EQ(def.inputs.size(), 1u);
  EXPECT_EQ(def.inputs[0].name, "x");
  EXPECT_EQ(def.inputs[0].info.shape, (Shape{1, 1, 4}));
  ASSERT_EQ(def.nodes.size(), 1u);
  EXPECT_EQ(def.nodes[0].op_type, "MaxPool");
  EXPECT_EQ(def.nodes[0].specified_outputs_name, std::vector<std::string>{"y"});
  EXPECT_EQ(def.outputs, std::vector<std::string>{"y"});
  const Graph graph(def);
  const TensorMap out = Executor(graph).run({{"x", Tensor::from<float>({1, 1, 4}, {1, 3, 2, 4})}});
  EXPECT_EQ(out.at("y").values<float>()[0], 3.0f);
}

TEST(OnnxReader, DimParamsAndMissingDimValuesAreDynamic) {
  onnx::ModelProto m = max_pool_model();
  auto* dims = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(0)->set_dim_param("batch");
  dims->mutable_dim(1)->clear_dim_value();
  EXPECT_EQ(parse(m).inputs[0].info.shape, (Shape{kDynamicDim, kDynamicDim, 4}));
}

TEST(OnnxReader, UnnamedNodesGetOpTypeAndIndexNamesUniqueInTheGraph) {
  onnx::ModelProto m = model();
  add_input(m, "x", {1, 1, 8});
  set_ints(add_node(m, "MaxPool", "", {"x"}, {"a"}), "kernel_shape", {2});
  set_ints(add_node(m, "MaxPool", "MaxPool_2", {"a"}, {"b"}), "kernel_shape", {2});
  set_ints(add_node(m, "MaxPool", "", {"b"}, {"c"}), "kernel_shape", {2});
  add_output(m, "c");
  const GraphDef def = parse(m);
  EXPECT_EQ(def.nodes[0].name, "MaxPool_0");
  EXPECT_EQ(def.nodes[1].name, "MaxPool_2");
  EXPECT_EQ(def.nodes[2].name, "MaxPool_2_1");  // MaxPool_2 is taken by the named node
  EXPECT_NO_THROW(Graph{def});
}

TEST(OnnxReader, OutputsNamedAsADocumentWithoutSpecifiedOutputsNameNamesThemAreUnset) {
  onnx::ModelProto m = model();
  add_input(m, "x", {1, 1, 4});
  set_ints(add_node(m, "MaxPool", "pool", {"x"}, {"pool", "pool:1"}), "kernel_shape", {2});
  add_output(m, "pool");
  const GraphDef def = parse(m);
  EXPECT_FALSE(def.nodes[0].specified_outputs_name.has_value());
}

TEST(OnnxReader, TrailingAbsentOutputsAreDroppedAndAnAbsentOneBeforeANamedOneGetsAName) {
  onnx::ModelProto m = model();
  add_input(m, "x", {1, 1, 4});
  set_ints(add_node(m, "MaxPool", "p", {"x"}, {"y", ""}), "kernel_shape", {2});
  set_ints(add_node(m, "MaxPool", "q", {"x"}, {"", "i"}), "kernel_shape", {2});
  add_output(m, "y");
  add_output(m, "i");
  const GraphDef def = parse(m);
  EXPECT_EQ(def.nodes[0].specified_outputs_name, std::vector<std::string>{"y"});
  EXPECT_EQ(def.nodes[1].specified_outputs_name, (std::vector<std::string>{"q", "i"}));
  EXPECT_NO_THROW(Graph{def});
}

TEST(OnnxReader, GraphInputsThatAreInitializersAreInitializers) {
  onnx::ModelProto m = model(6, 3);  // IR 3 lists initializers among the inputs
  add_input(m, "x", {1, 1, 3});
  add_input(m, "w", {1, 1, 3});
  add_float_initializer(m, "w", {1, 1, 3}, {1, 2, 3});
  add_node(m, "Add", "add", {"x", "w"}, {"y"});
  add_output(m, "y");
  const GraphDef def = parse(m);
  ASSERT_EQ(def.inputs.size(), 1u);
  EXPECT_EQ(def.inputs[0].name, "x");
  ASSERT_EQ(def.initializers.size(), 1u);
  EXPECT_EQ(def.initializers[0].name, "w");
  EXPECT_FALSE(def.initializers[0].trainable);
}

TEST(OnnxReader, TypedFieldsAreReadAsRawDataIs) {
  onnx::ModelProto m = model();
  auto* f = m.mutable_graph()->add_initializer();
  f->set_name("f");
  f->set_data_type(kFloat);
  f->add_dims(2);
  f->add_float_data(1.5f);
  f->add_float_data(-2.0f);
  auto* i8 = m.mutable_graph()->add_initializer();
  i8->set_name("i8");
  i8->set_data_type(kInt8);
  i8->add_dims(2);
  i8->add_int32_data(-128);
  i8->add_int32_data(127);
  auto* h = m.mutable_graph()->add_initializer();
  h->set_name("h");
  h->set_data_type(kFloat16);
  h->add_int32_data(0x3C00);  // 1.0, a scalar
  auto* l = m.mutable_graph()->add_initializer();
  l->set_name("l");
  l->set_data_type(kInt64);
  l->add_dims(1);
  l->add_int64_data(-5);
  auto* d = m.mutable_graph()->add_initializer();
  d->set_name("d");
  d->set_data_type(kDouble);
  d->add_dims(1);
  d->add_double_data(0.1);
  auto* b = m.mutable_graph()->add_initializer();
  b->set_name("b");
  b->set_data_type(kBFloat16);
  b->add_dims(1);
  b->add_int32_data(0x3F80);  // 1.0
  const GraphDef def = parse(m);
  ASSERT_EQ(def.initializers.size(), 6u);
  EXPECT_EQ(def.initializers[0].value.values<float>()[1], -2.0f);
  EXPECT_EQ(def.initializers[1].value.values<std::int8_t>()[0], -128);
  EXPECT_EQ(static_cast<float>(def.initializers[2].value.values<half>()[0]), 1.0f);
  EXPECT_TRUE(def.initializers[2].value.shape().empty());
  EXPECT_EQ(def.initializers[3].value.values<std::int64_t>()[0], -5);
  EXPECT_EQ(def.initializers[4].value.values<double>()[0], 0.1);
  EXPECT_EQ(static_cast<float>(def.initializers[5].value.values<bfloat16>()[0]), 1.0f);
}

TEST(OnnxReader, ConstantNodesBecomeInitializers) {
  onnx::ModelProto m = model(13);
  add_input(m, "x", {2, 3});
  auto& c = add_node(m, "Constant", "", {}, {"s"});
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(kInt64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(6);
  add_node(m, "Reshape", "r", {"x", "s"}, {"y"});
  add_output(m, "y");
  const GraphDef def = parse(m);
  ASSERT_EQ(def.nodes.size(), 1u);
  ASSERT_EQ(def.initializers.size(), 1u);
  EXPECT_EQ(def.initializers[0].name, "s");
  EXPECT_EQ(Graph(def).info("y").shape, Shape{6});
}

/// An int64 [n] initializer.
void add_int64_initializer(onnx::ModelProto& m, const std::string& name, const std::vector<std::int64_t>& values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(kInt64);
  t->add_dims(static_cast<std::int64_t>(values.size()));
  for (const std::int64_t v : values) t->add_int64_data(v);
}

/// ConstantOfShape's `value` attribute: a one-element tensor.
void set_fill(onnx::NodeProto& n, int data_type, double v) {
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(data_type);
  a->mutable_t()->add_dims(1);
  if (data_type == kInt64)
    a->mutable_t()->add_int64_data(static_cast<std::int64_t>(v));
  else
    a->mutable_t()->add_float_data(static_cast<float>(v));
}

TEST(OnnxReader, ConstantOfShapeOfAConstantShapeBecomesAnInitializer) {
  onnx::ModelProto m = model(9, 4);
  add_input(m, "x", {2, 3});
  add_int64_initializer(m, "shape", {2, 3});
  add_node(m, "ConstantOfShape", "zeros", {"shape"}, {"z"});  // default: float32 0
  set_fill(add_node(m, "ConstantOfShape", "", {"shape"}, {"w"}), kFloat, 0.25);
  add_node(m, "Add", "a", {"x", "z"}, {"s"});
  add_node(m, "Mul", "b", {"s", "w"}, {"y"});
  add_output(m, "y");
  add_metadata(m, "nodeflow.w.trainable", "true");  // a folded constant marked trainable
  const GraphDef def = parse(m);
  ASSERT_EQ(def.nodes.size(), 2u);
  ASSERT_EQ(def.initializers.size(), 3u);
  EXPECT_EQ(def.initializers[1].name, "z");
  EXPECT_EQ(def.initializers[1].value.dtype(), DType::Float32);
  EXPECT_EQ(def.initializers[1].value.shape(), (Shape{2, 3}));
  EXPECT_FALSE(def.initializers[1].trainable);
  EXPECT_EQ(def.initializers[2].name, "w");
  EXPECT_TRUE(def.initializers[2].trainable);
  for (const float v : def.initializers[2].value.values<float>()) EXPECT_EQ(v, 0.25f);
  // The trainable constant trains like any weight: it gets a gradient.
  const Graph graph(def);
  Executor ex(graph);
  const Tensor x = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto run = ex.forward({{"x", x}});
  const TensorMap grads = ex.backward(run, {{"y", Tensor::from<float>({2, 3}, {1, 1, 1, 1, 1, 1})}});
  ASSERT_TRUE(grads.count("w"));
  EXPECT_EQ(grads.at("w").values<float>()[4], 5.0f);
}

TEST(OnnxReader, ConstantOfShapeIsRefusedForAComputedShapeAndBeforeOpset9) {
  onnx::ModelProto m = model(9, 4);
  add_input(m, "s", {2}, kInt64);
  add_node(m, "ConstantOfShape", "c", {"s"}, {"z"});
  add_output(m, "z");
  EXPECT_EQ(load_error(m),
            "node 'c' (ConstantOfShape, opset 9): input 0 (input) 's' must be a constant (a non-trainable "
            "initializer or a Constant): nodeflow folds ConstantOfShape into an initializer at load");
  onnx::ModelProto old = model(8, 4);
  add_int64_initializer(old, "s", {2});
  add_node(old, "ConstantOfShape", "c", {"s"}, {"z"});
  add_output(old, "z");
  EXPECT_EQ(load_error(old), "node 'c' (ConstantOfShape, opset 8): op not supported at opset 8 (ConstantOfShape "
                             "exists from opset 9)");
  onnx::ModelProto negative = model(9, 4);
  add_int64_initializer(negative, "s", {2, -1});
  add_node(negative, "ConstantOfShape", "c", {"s"}, {"z"});
  add_output(negative, "z");
  EXPECT_CONTAINS(load_error(negative), "holds the negative dimension -1");
  onnx::ModelProto huge = model(9, 4);
  add_int64_initializer(huge, "s", {1 << 20, 1 << 20, 1 << 20});
  add_node(huge, "ConstantOfShape", "c", {"s"}, {"z"});
  add_output(huge, "z");
  EXPECT_CONTAINS(load_error(huge), "over the model's limit");
}

TEST(OnnxReader, ConstantSparseValueIsMadeDense) {
  onnx::ModelProto m = model(11, 6);
  add_input(m, "x", {2, 3});
  auto& c = add_node(m, "Constant", "", {}, {"k"});
  auto* a = c.add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  auto* sp = a->mutable_sparse_tensor();
  sp->add_dims(2);
  sp->add_dims(3);
  sp->mutable_values()->set_data_type(kFloat);
  sp->mutable_values()->add_dims(2);
  sp->mutable_values()->add_float_data(1.5f);
  sp->mutable_values()->add_float_data(-2.0f);
  sp->mutable_indices()->set_data_type(kInt64);
  sp->mutable_indices()->add_dims(2);
  sp->mutable_indices()->add_int64_data(1);  // linear positions
  sp->mutable_indices()->add_int64_data(5);
  add_node(m, "Add", "a", {"x", "k"}, {"y"});
  add_output(m, "y");
  const GraphDef def = parse(m);
  ASSERT_EQ(def.initializers.size(), 1u);
  const auto v = def.initializers[0].value.values<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{0, 1.5f, 0, 0, 0, -2.0f}));
  sp->mutable_indices()->set_int64_data(1, 1);
  EXPECT_CONTAINS(load_error(m), "position 1 is given twice");
  sp->mutable_indices()->set_int64_data(1, 6);
  EXPECT_CONTAINS(load_error(m), "has position 6, outside [0, 6)");
  onnx::ModelProto old = m;
  old.mutable_opset_import(0)->set_version(10);
  EXPECT_CONTAINS(load_error(old), "attribute 'sparse_value' exists from opset 11");
}

TEST(OnnxReader, LegacyBroadcastingOfOpset6) {
  // B [3] at axis 1 of A [2, 3, 2]: B becomes [3, 1] (a constant named after the node).
  onnx::ModelProto m = model(6, 3);
  add_input(m, "a", {2, 3, 2});
  add_float_initializer(m, "b", {3}, {10, 20, 30});
  auto& add = add_node(m, "Add", "add", {"a", "b"}, {"y"});
  set_int(add, "broadcast", 1);
  set_int(add, "axis", 1);
  add_output(m, "y");
  const Graph graph(parse(m));
  const TensorMap out =
      Executor(graph).run({{"a", Tensor::from<float>({2, 3, 2}, {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1})}});
  const auto y = out.at("y").values<float>();
  EXPECT_EQ(std::vector<float>(y.begin(), y.end()),
            (std::vector<float>{10, 10, 20, 20, 30, 30, 11, 11, 21, 21, 31, 31}));
  // A computed B at an inner axis has no exact form without its value.
  onnx::ModelProto computed = model(6, 3);
  add_input(computed, "a", {2, 3, 2});
  add_input(computed, "b", {3});
  auto& sub = add_node(computed, "Sub", "sub", {"a", "b"}, {"y"});
  set_int(sub, "broadcast", 1);
  set_int(sub, "axis", 1);
  add_output(computed, "y");
  EXPECT_CONTAINS(load_error(computed), "node 'sub' (Sub, opset 6): attribute 'axis': broadcast = 1 with axis = 1");
  EXPECT_CONTAINS(load_error(computed), "read only when B is an initializer");
  // Without broadcast, ONNX-6 wants equal shapes.
  onnx::ModelProto unequal = model(6, 3);
  add_input(unequal, "a", {2, 3});
  add_input(unequal, "b", {3});
  add_node(unequal, "Mul", "mul", {"a", "b"}, {"y"});
  add_output(unequal, "y");
  EXPECT_EQ(load_error(unequal), "node 'mul' (Mul, opset 6): A [2, 3] and B [3] differ, and without broadcast = 1 "
                                 "this opset wants them equal (legacy broadcasting)");
  // A one-element B of A's rank or less passes with any axis.
  onnx::ModelProto one = model(6, 3);
  add_input(one, "a", {2, 3});
  add_float_initializer(one, "b", {1, 1}, {2});
  auto& div = add_node(one, "Div", "div", {"a", "b"}, {"y"});
  set_int(div, "broadcast", 1);
  set_int(div, "axis", 1);
  add_output(one, "y");
  EXPECT_EQ(Graph(parse(one)).info("y").shape, (Shape{2, 3}));
}

TEST(OnnxReader, FloatAttributesReadBackAsTheirShortestDecimal) {
  onnx::ModelProto m = model();
  add_input(m, "x", {4});
  set_float(add_node(m, "LeakyRelu", "r", {"x"}, {"y"}), "alpha", 0.1f);
  add_output(m, "y");
  EXPECT_EQ(std::get<double>(parse(m).nodes[0].attributes.at("alpha")), 0.1);
}

TEST(OnnxReader, TrainingKeysAreRestoredFromMetadataProps) {
  onnx::ModelProto m = max_pool_model();
  add_float_initializer(m, "w", {1}, {1});
  add_metadata(m, "nodeflow.graph.version", "1");
  add_metadata(m, "nodeflow.pool.training", "false");
  add_metadata(m, "nodeflow.pool.lda_coeff", "0.25");
  add_metadata(m, "nodeflow.w.trainable", "true");
  add_metadata(m, "producer.note", "anything");  // another tool's key
  const GraphDef def = parse(m);
  EXPECT_FALSE(def.nodes[0].training);
  EXPECT_EQ(def.nodes[0].lda_coeff, 0.25);
  EXPECT_TRUE(def.initializers[0].trainable);
}

/// x [3, 4] -> Gemm(w [4, 5], b) -> h -> `op` at `opset` (axis when given) -> y.
onnx::ModelProto gemm_then(const std::string& op, int opset, std::optional<std::int64_t> axis = {}) {
  onnx::ModelProto m = model(opset, 7);
  add_input(m, "x", {-1, 4});
  add_float_initializer(m, "w", {4, 5}, std::vector<float>(20, 0.5f));
  add_float_initializer(m, "b", {5}, {0, 1, 2, 3, 4});
  auto& gemm = add_node(m, "Gemm", "", {"x", "w", "b"}, {"h"});
  if (opset < 7) set_int(gemm, "broadcast", 1);  // the [5] bias; without it C is [N, 5] before 7
  auto& n = add_node(m, op, "s", {"h"}, {"y"});
  if (axis) set_int(n, "axis", *axis);
  add_output(m, "y");
  return m;
}

TEST(OnnxReader, OldSoftmaxAfterAComputedTensorReadsItsShapeFromInference) {
  // Gemm's output [N, 5] is inferred as the Graph infers it, so Softmax-11's
  // 2-D coercion at axis 1 is read as Softmax over axis 1.
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const GraphDef def = parse(gemm_then(op, 11));
    ASSERT_EQ(def.nodes.size(), 2u);
    EXPECT_EQ(def.nodes[1].attributes.at("axis"), AttrValue(std::int64_t{1})) << op;
    const Graph graph(def);
    const TensorMap out = Executor(graph).run({{"x", Tensor::from<float>({1, 4}, {0, 0, 0, 0})}});
    const auto y = out.at("y").values<float>();
    ASSERT_EQ(y.size(), 5u);
    EXPECT_NEAR(y[4] - y[3], std::string(op) == "Softmax" ? y[4] * (1 - 1 / std::exp(1.0f)) : 1.0f, 1e-6) << op;
  }
}

TEST(OnnxReader, OldSoftmaxAfterAComputedTensorIsRefusedForTheShapeNotForWantOfIt) {
  // Softmax-1 at axis 0 of the [N, 5] Gemm output flattens two axes, one of
  // them known only at run time: refused, naming the inferred shape.
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(gemm_then("Softmax", 1, 0)); }),
            "node 's' (Softmax, opset 1): Softmax before opset 13 normalizes over axes 0.. of the input "
            "flattened to 2-D, from 13 over one axis: the input's shape [?, 5] has more than one axis from "
            "0 on that is not 1 (or not known)");
}

TEST(OnnxReader, AnOldSoftmaxBeforeItsInputsProducerIsRefusedNamingTheInput) {
  // ONNX lists nodes in topological order; a model that does not leaves the
  // shape unknown where the Softmax is read.
  onnx::ModelProto m = model(11, 7);
  add_input(m, "x", {2, 3});
  add_node(m, "Softmax", "s", {"h"}, {"y"});
  add_node(m, "Relu", "r", {"x"}, {"h"});
  add_output(m, "y");
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(m); }),
            "node 's' (Softmax, opset 11): Softmax before opset 13 normalizes over axes 1.. of the input flattened "
            "to 2-D, from 13 over one axis: read only when the input's shape is known, and 'h' is not a graph input, "
            "an initializer or the output of a node listed before it");
}

TEST(OnnxReader, AnInferenceErrorBeforeAnOldSoftmaxIsTheGraphsError) {
  // The Gemm's B does not fit A: the error the Graph gives at opset 13 (where
  // Softmax needs no shape) is the one the reader gives at opset 11.
  onnx::ModelProto m13 = gemm_then("Softmax", 13);
  m13.mutable_graph()->mutable_initializer(0)->set_dims(0, 5);
  m13.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->append(std::string(20, '\0'));
  onnx::ModelProto m11 = m13;
  m11.mutable_opset_import(0)->set_version(11);
  const std::string graph_error = load_error(m13);
  EXPECT_CONTAINS(graph_error, "nodes[0] (Gemm_0)");
  EXPECT_EQ(load_error(m11), graph_error);
}

TEST(OnnxReader, ASpecifiedOutputsNameKeyKeepsDefaultNames) {
  onnx::ModelProto m = model();
  add_input(m, "x", {1, 1, 4});
  set_ints(add_node(m, "MaxPool", "pool", {"x"}, {"pool", "pool:1"}), "kernel_shape", {2});
  add_output(m, "pool");
  add_metadata(m, "nodeflow.pool.specified_outputs_name", "true");
  EXPECT_EQ(parse(m).nodes[0].specified_outputs_name, (std::vector<std::string>{"pool", "pool:1"}));
  m.mutable_metadata_props(0)->set_value("false");
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(m); }),
            "model.metadata_props[0] (nodeflow.pool.specified_outputs_name): expected true (the key is "
            "written only then), got 'false'");
  m.mutable_metadata_props(0)->set_key("nodeflow.other.specified_outputs_name");
  m.mutable_metadata_props(0)->set_value("true");
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(m); }),
            "model.metadata_props[0] (nodeflow.other.specified_outputs_name): the model has no node 'other'");
}

TEST(OnnxReader, ARatioAttributeKeyFoldsDropoutsInputBackIntoTheAttribute) {
  const auto dropout = [](const std::string& op, bool shared) {
    onnx::ModelProto m = model();
    add_input(m, "x", {2, 3});
    add_float_initializer(m, "d_ratio", {}, {0.25f});
    add_node(m, op, "d", op == "Dropout" ? std::vector<std::string>{"x", "d_ratio"} : std::vector<std::string>{"x"},
             {"y"});
    if (shared) add_node(m, "Add", "a", {"y", "d_ratio"}, {"z"});
    add_output(m, shared ? "z" : "y");
    add_metadata(m, "nodeflow.d.ratio_attribute", "true");
    return m;
  };
  const GraphDef def = parse(dropout("Dropout", false));
  EXPECT_TRUE(def.initializers.empty());
  EXPECT_EQ(def.nodes[0].inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(def.nodes[0].attributes.at("ratio"), AttrValue(0.25));
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(dropout("Relu", false)); }),
            "model.metadata_props[0] (nodeflow.d.ratio_attribute): node 'd' is a Relu, not a Dropout");
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(dropout("Dropout", true)); }),
            "model.metadata_props[0] (nodeflow.d.ratio_attribute): its initializer 'd_ratio' is also used by "
            "node 'a'");
  onnx::ModelProto no_input = dropout("Dropout", false);
  no_input.mutable_graph()->mutable_node(0)->mutable_input()->RemoveLast();
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(no_input); }),
            "model.metadata_props[0] (nodeflow.d.ratio_attribute): node 'd' needs exactly 2 inputs, the second a "
            "scalar float32 initializer (its ratio)");
}

// --- Hostile and unsupported files ----------------------------------------------

TEST(OnnxReaderHostile, EveryTruncationIsAnErrorOrAValidPrefixNeverACrash) {
  onnx::ModelProto m = max_pool_model();
  add_float_initializer(m, "w", {2, 3}, {1, 2, 3, 4, 5, 6});
  const std::string full = bytes(m);
  std::size_t malformed = 0;
  for (std::size_t n = 0; n < full.size(); ++n) {
    try {
      load_onnx(std::string_view(full).substr(0, n), {});
    } catch (const Error& e) {
      malformed += contains(e.what(), "truncated or malformed protobuf");
    }
  }
  EXPECT_GT(malformed, full.size() / 2);
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse_onnx_def(full.substr(0, 7), {}); }),
            "model: not a valid ModelProto (7 bytes that are truncated or malformed protobuf, or "
            "nest messages deeper than 64 levels)");
}

TEST(OnnxReaderHostile, GarbageAndJsonAreNotModels) {
  EXPECT_CONTAINS(error_of<InvalidGraph>([] { parse_onnx_def("\xff\xff\xff\xff", {}); }),
                  "not a valid ModelProto");
  EXPECT_EQ(error_of<InvalidGraph>([] { parse_onnx_def(R"({"format": "nodeflow.graph"})", {}); }),
            "model: not a valid ModelProto (28 bytes that are truncated or malformed protobuf, or nest messages "
            "deeper than 64 levels); it starts with '{' like a JSON graph document, which nodeflow reads from a "
            "file whose name does not end in .onnx");
  EXPECT_EQ(error_of<InvalidGraph>([] { parse_onnx_def("", {}); }),
            "model: the file is empty (0 bytes), not a ModelProto");
}

TEST(OnnxReaderHostile, DeepNestingIsRefusedBeforeTheStackIsUsedUp) {
  const auto nested = [](int levels) {
    onnx::ModelProto m = max_pool_model();
    onnx::TypeProto* type = m.mutable_graph()->add_value_info()->mutable_type();
    for (int i = 0; i < levels; ++i) type = type->mutable_sequence_type()->mutable_elem_type();
    type->set_denotation("x");
    return m;
  };
  EXPECT_NO_THROW(parse(nested(25)));  // two messages a level (TypeProto, Sequence)
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(nested(45)); }),
            "model: not a valid ModelProto (it nests messages deeper than 64 levels)");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(nested(3000)); }),
                  "bytes that are truncated or malformed protobuf, or nest messages deeper than 64 "
                  "levels)");
}

TEST(OnnxReaderHostile, AModelWhoseStructureWouldTakeTooMuchMemoryIsRefusedBeforeParsing) {
  // 2 bytes per empty node in the file, a NodeProto object (~150 bytes) each once parsed.
  std::string graph;
  for (int i = 0; i < 100000; ++i) graph += std::string("\x0a\x00", 2);
  const auto varint = [](std::uint64_t n) {
    std::string out;
    for (; n >= 0x80; n >>= 7) out += static_cast<char>((n & 0x7f) | 0x80);
    return out + static_cast<char>(n);
  };
  const std::string file = "\x08\x09\x3a" + varint(graph.size()) + graph;  // ir_version 9, graph
  ReadOptions small;
  small.max_model_structure_bytes = 1 << 20;
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse_onnx_def(file, {}, OpRegistry::global(), small); }),
            "model: parsing its 200006 bytes would take more than 1048576 bytes for the messages, "
            "names and lists they hold, over the reader's limit "
            "(ReadOptions::max_model_structure_bytes)");
  // Within the default limit it parses, and is refused for what it is.
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse_onnx_def(file, {}); }), "model.opset_import");
  // A real model is far below the limit.
  EXPECT_NO_THROW(parse_onnx_def(bytes(max_pool_model()), {}, OpRegistry::global(), small));
}

TEST(OnnxReaderHostile, WrongRawDataSizes) {
  onnx::ModelProto m = max_pool_model();
  add_float_initializer(m, "w", {2, 3}, {1, 2, 3, 4, 5});
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(m); }),
            "graph.initializer[0] (w).raw_data: holds 20 bytes, [2, 3] float32 needs 24");
}

TEST(OnnxReaderHostile, WrongTypedFieldCountsAndFields) {
  onnx::ModelProto m = max_pool_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(kFloat);
  t->add_dims(3);
  t->add_float_data(1);
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(m); }),
            "graph.initializer[0] (w).float_data: holds 1 values, [3] float32 needs 3");
  t->clear_float_data();
  t->add_int64_data(1);
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }),
                  "graph.initializer[0] (w).int64_data: holds the values of a float32 tensor, "
                  "which ONNX keeps in float_data");
  t->clear_int64_data();
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }), "graph.initializer[0] (w): no values");
  t->set_raw_data(std::string(12, '\0'));
  t->add_float_data(1);
  t->add_float_data(2);
  t->add_float_data(3);
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }), "the values are given twice");
  t->clear_float_data();
  t->clear_raw_data();
  t->set_data_type(kInt8);
  t->add_int32_data(1);
  t->add_int32_data(300);
  t->add_int32_data(2);
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(m); }),
            "graph.initializer[0] (w).int32_data[1]: 300 is not an int8 (-128 to 127)");
}

TEST(OnnxReaderHostile, HugeDimsAreRefusedBeforeAnythingIsAllocated) {
  onnx::ModelProto m = max_pool_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("huge");
  t->set_data_type(kFloat);
  t->add_dims(200000);
  t->add_dims(50000);
  t->set_raw_data("");
  // The size check comes first: 4 bytes present for 40 GB.
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }),
                  "raw_data: holds 0 bytes, [200000, 50000] float32 needs 40000000000");
  t->add_dims(1LL << 40);
  EXPECT_CONTAINS(error_of<ShapeMismatch>([&] { parse(m); }), "graph.initializer[0] (huge).dims");
  t->clear_dims();
  t->add_dims(-1);
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(m); }), "graph.initializer[0] (huge).dims[0]: -1 is negative");
  // Within the bytes present but over the budget.
  t->clear_dims();
  t->add_dims(4);
  t->set_raw_data(std::string(16, '\0'));
  ReadOptions small;
  small.max_initializer_bytes = 8;
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m, {}, small); }),
                  "graph.initializer[0] (huge).dims: [4] float32 needs 16 bytes, over the model's "
                  "limit of 8 bytes for initializers");
  // A graph input's known dimensions must not overflow either.
  onnx::ModelProto in = max_pool_model();
  set_tensor_type(*in.mutable_graph()->mutable_input(0), kFloat, {1LL << 40, 1LL << 40, -1});
  EXPECT_CONTAINS(error_of<ShapeMismatch>([&] { parse(in); }), "graph.input[0] (x).type.tensor_type.shape");
}

TEST(OnnxReaderHostile, UnsupportedDataTypesAreNamed) {
  onnx::ModelProto m = max_pool_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(kInt32);
  t->add_dims(1);
  t->add_int32_data(1);
  EXPECT_EQ(error_of<UnsupportedDType>([&] { parse(m); }),
            "graph.initializer[0] (w).data_type: ONNX INT32 (6) is not supported (nodeflow takes "
            "FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, UINT8, INT64)");
  t->set_data_type(99);
  EXPECT_CONTAINS(error_of<UnsupportedDType>([&] { parse(m); }), "ONNX data type 99 is not supported");
  onnx::ModelProto s = max_pool_model();
  set_tensor_type(*s.mutable_graph()->mutable_input(0), kString, {1});
  EXPECT_CONTAINS(error_of<UnsupportedDType>([&] { parse(s); }),
                  "graph.input[0] (x).type.tensor_type.elem_type: ONNX STRING (8) is not supported");
}

TEST(OnnxReaderHostile, UnknownOpsAndDomainsNameTheNode) {
  onnx::ModelProto m = max_pool_model();
  m.mutable_graph()->mutable_node(0)->set_op_type("ConvInteger");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }), "node 'pool' (ConvInteger, opset 19)");
  onnx::ModelProto d = max_pool_model();
  d.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(d); }),
            "node 'pool' (MaxPool, opset 19): domain 'com.microsoft' is not supported (nodeflow "
            "reads the default domain, '' or 'ai.onnx')");
  onnx::ModelProto ai = max_pool_model();
  ai.mutable_graph()->mutable_node(0)->set_domain("ai.onnx");
  EXPECT_NO_THROW(parse(ai));
}

TEST(OnnxReaderHostile, GraphAttributesAreRefusedNamingTheAttribute) {
  onnx::ModelProto m = max_pool_model();
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("sub");
  EXPECT_CONTAINS(error_of<InvalidAttribute>([&] { parse(m); }),
                  "node 'pool' (MaxPool, opset 19): attribute 'body' is a GRAPH, which nodeflow "
                  "does not support");
  // An op nodeflow lacks is named first.
  m.mutable_graph()->mutable_node(0)->set_op_type("Loop");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }), "(Loop, opset 19): op not supported");
}

TEST(OnnxReaderHostile, ACycleIsTheGraphsUsualError) {
  onnx::ModelProto m = model();
  add_input(m, "x", {4});
  add_node(m, "Add", "a", {"x", "b_out"}, {"a_out"});
  add_node(m, "Relu", "b", {"a_out"}, {"b_out"});
  add_output(m, "b_out");
  EXPECT_CONTAINS(load_error(m), "cycle");
}

TEST(OnnxReaderHostile, AnUnknownTensorIsTheGraphsUsualError) {
  onnx::ModelProto m = model();
  add_input(m, "x", {4});
  add_node(m, "Relu", "r", {"nowhere"}, {"y"});
  add_output(m, "y");
  EXPECT_CONTAINS(load_error(m), "nowhere");
}

TEST(OnnxReaderHostile, IrVersionOpsetAndModelFeatures) {
  EXPECT_EQ(error_of<InvalidGraph>([] { parse(max_pool_model(19, 2)); }),
            "model.ir_version: IR version 2 is not supported (nodeflow reads IR version 3 or later)");
  EXPECT_CONTAINS(error_of<InvalidGraph>([] { parse(max_pool_model(23)); }),
                  "model.opset_import[0]: opset 23 of the default domain is not supported (nodeflow "
                  "reads opsets 1 to 22)");
  onnx::ModelProto none = max_pool_model();
  none.mutable_opset_import(0)->set_domain("ai.onnx.ml");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(none); }), "no opset of the default domain");
  onnx::ModelProto twice = max_pool_model();
  twice.add_opset_import()->set_version(18);
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(twice); }), "imported twice");
  onnx::ModelProto functions = max_pool_model();
  functions.add_functions()->set_name("f");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(functions); }), "local functions");
  onnx::ModelProto sparse = max_pool_model();
  sparse.mutable_graph()->add_sparse_initializer();
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(sparse); }), "sparse initializers");
  onnx::ModelProto no_graph = max_pool_model();
  no_graph.clear_graph();
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(no_graph); }), "model.graph: missing (the model has no graph)");
}

TEST(OnnxReaderHostile, InputsNeedATensorTypeAndAShape) {
  onnx::ModelProto m = max_pool_model();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }),
                  "graph.input[0] (x).type.tensor_type.shape: missing");
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_sequence_type();
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }), "graph.input[0] (x).type: the input is a sequence");
}

TEST(OnnxReaderHostile, BadMetadataIsNamed) {
  onnx::ModelProto m = max_pool_model();
  add_metadata(m, "nodeflow.pool.training", "yes");
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(m); }),
            "model.metadata_props[0] (nodeflow.pool.training): expected true or false, got 'yes'");
  m.mutable_metadata_props(0)->set_key("nodeflow.pool.lda_coeff");
  m.mutable_metadata_props(0)->set_value("inf");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }), "expected a finite number");
  m.mutable_metadata_props(0)->set_key("nodeflow.nothere.training");
  m.mutable_metadata_props(0)->set_value("true");
  EXPECT_EQ(error_of<InvalidGraph>([&] { parse(m); }),
            "model.metadata_props[0] (nodeflow.nothere.training): the model has no node 'nothere'");
  m.mutable_metadata_props(0)->set_key("nodeflow.graph.version");
  m.mutable_metadata_props(0)->set_value("2");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }), "version '2' of the nodeflow keys");
  m.mutable_metadata_props(0)->set_key("nodeflow.pool.colour");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(m); }), "unknown nodeflow key");
}

// --- External data ----------------------------------------------------------------

class OnnxExternalData : public ::testing::Test {
 protected:
  OnnxExternalData() : scratch_("nodeflow-onnx-external") {
    fs::create_directories(folder());
    std::vector<float> values{1, 2, 3, 4, 5, 6};
    std::ofstream(folder() / "w.bin", std::ios::binary)
        .write("PAD!", 4)
        .write(reinterpret_cast<const char*>(values.data()), 24);
    std::ofstream(scratch_.path() / "outside.bin", std::ios::binary) << std::string(24, '\0');
  }

  fs::path folder() const { return scratch_.path() / "model"; }

  /// The max-pool model with initializer w [2, 3] stored at `location`.
  static onnx::ModelProto with_external(const std::string& location, const std::string& offset = "4",
                                        const std::string& length = "24") {
    onnx::ModelProto m = max_pool_model();
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(kFloat);
    t->add_dims(2);
    t->add_dims(3);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    const auto entry = [&](const char* key, const std::string& value) {
      auto* e = t->add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    entry("location", location);
    if (!offset.empty()) entry("offset", offset);
    if (!length.empty()) entry("length", length);
    return m;
  }

  ScratchDir scratch_;
};

TEST_F(OnnxExternalData, IsReadFromTheModelsFolder) {
  const GraphDef def = parse(with_external("w.bin"), folder());
  EXPECT_EQ(def.initializers[0].value.values<float>()[5], 6.0f);
  // Through load_onnx_file, the folder is the file's.
  std::ofstream(folder() / "m.onnx", std::ios::binary) << bytes(with_external("w.bin"));
  EXPECT_NO_THROW(load_onnx_file(folder() / "m.onnx"));
}

TEST_F(OnnxExternalData, PathsLeavingTheFolderAreRefused) {
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(with_external("../outside.bin"), folder()); }),
                  "graph.initializer[0] (w).external_data.location: '../outside.bin' leaves the "
                  "model's folder ('..')");
  const std::string absolute = (scratch_.path() / "outside.bin").string();
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(with_external(absolute), folder()); }),
                  "is an absolute path");
  fs::create_symlink(scratch_.path() / "outside.bin", folder() / "link.bin");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(with_external("link.bin"), folder()); }),
                  "'link.bin' leads outside the model's folder through a symbolic link");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(with_external("w.bin"), {}); }),
                  "the model has no folder");
  EXPECT_CONTAINS(error_of<IoError>([&] { parse(with_external("missing.bin"), folder()); }),
                  "cannot open external data file 'missing.bin'");
  fs::create_directories(folder() / "sub");
  EXPECT_CONTAINS(error_of<IoError>([&] { parse(with_external("sub"), folder()); }),
                  "is not a regular file");
}

TEST_F(OnnxExternalData, RangesAreCheckedAgainstTheFile) {
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(with_external("w.bin", "100"), folder()); }),
                  "offset 100 is past the end of 'w.bin' (28 bytes)");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(with_external("w.bin", "8"), folder()); }),
                  "offset 8 + length 24 passes the end of 'w.bin' (28 bytes)");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(with_external("w.bin", "0", ""), folder()); }),
                  "the range holds 28 bytes, [2, 3] float32 needs 24");
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(with_external("w.bin", "-4"), folder()); }),
                  "expected a non-negative decimal integer, got '-4'");
  onnx::ModelProto both = with_external("w.bin");
  both.mutable_graph()->mutable_initializer(0)->set_raw_data(std::string(24, '\0'));
  EXPECT_CONTAINS(error_of<InvalidGraph>([&] { parse(both, folder()); }), "the values are given twice");
}

}  // namespace
}  // namespace nodeflow::testing

// A unity build (tests/CMakeLists.txt) compiles the next test file after this one.
#undef EXPECT_CONTAINS
