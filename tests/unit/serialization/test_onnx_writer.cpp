// The ONNX writer (serialization/onnx.hpp, write_onnx / save_onnx_file): IR and
// opset, names, order, types, initializers, training keys, warnings, atomic saves.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/onnx.hpp"
#include "support/error_of.hpp"
#include "support/files.hpp"
#include "support/onnx_builder.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

onnx::ModelProto written(const std::string& json) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(write_onnx(load_graph(json)).bytes));
  return m;
}

std::string document(const std::string& inputs, const std::string& initializers,
                     const std::string& nodes, const std::string& outputs) {
  return R"({"format": "nodeflow.graph", "version": 1, "name": "net", "inputs": [)" + inputs +
         R"(], "outputs": [)" + outputs + R"(], "initializers": [)" + initializers +
         R"(], "nodes": [)" + nodes + "]}";
}

const std::string kPool = document(
    R"({"name": "x", "dtype": "float32", "shape": [null, 1, 8]})",
    R"({"name": "w", "dtype": "float32", "shape": [1], "data": [0.5], "trainable": true})",
    R"({"op_type": "Mul", "name": "scale", "inputs": ["x", "w"], "lda_coeff": 0.25},
       {"op_type": "MaxPool", "name": "pool", "inputs": ["scale"], "training": false,
        "attributes": {"kernel_shape": [2], "strides": [2]}})",
    R"("pool", "pool:1")");

TEST(OnnxWriter, StatesIr9AndOpset19ForAPlainGraph) {
  const onnx::ModelProto m = written(kPool);
  EXPECT_EQ(m.ir_version(), 9);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).domain(), "");
  EXPECT_EQ(m.opset_import(0).version(), 19);
  EXPECT_EQ(m.graph().name(), "net");
}

TEST(OnnxWriter, InputsInitializersNodesAndOutputs) {
  const onnx::ModelProto m = written(kPool);
  const auto& g = m.graph();
  ASSERT_EQ(g.input_size(), 1);  // w is not repeated among the inputs
  EXPECT_EQ(g.input(0).name(), "x");
  const auto& shape = g.input(0).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 3);
  EXPECT_EQ(shape.dim(0).dim_param(), "x_dim0");
  EXPECT_EQ(shape.dim(2).dim_value(), 8);
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_EQ(g.initializer(0).name(), "w");
  EXPECT_EQ(g.initializer(0).data_type(), onnx_builder::kFloat);
  const float half = 0.5f;
  EXPECT_EQ(g.initializer(0).raw_data(), std::string(reinterpret_cast<const char*>(&half), 4));
  ASSERT_EQ(g.node_size(), 2);
  EXPECT_EQ(g.node(1).name(), "pool");
  EXPECT_EQ(g.node(1).output_size(), 2);
  EXPECT_EQ(g.node(1).output(1), "pool:1");
  ASSERT_EQ(g.node(1).attribute_size(), 2);  // exactly those of the document
  EXPECT_EQ(g.node(1).attribute(0).name(), "kernel_shape");
  EXPECT_EQ(g.node(1).attribute(0).type(), onnx::AttributeProto::INTS);
  ASSERT_EQ(g.output_size(), 2);
  EXPECT_EQ(g.output(1).type().tensor_type().elem_type(), onnx_builder::kInt64);
  EXPECT_EQ(g.output(0).type().tensor_type().shape().dim(2).dim_value(), 4);
  EXPECT_FALSE(g.output(0).type().tensor_type().shape().dim(0).has_dim_value());
}

TEST(OnnxWriter, NodesAreInKahnsOrderWithTiesInDocumentOrder) {
  const std::string json = document(
      R"({"name": "x", "dtype": "float32", "shape": [4]})", "",
      R"({"op_type": "Relu", "name": "late", "inputs": ["early"]},
         {"op_type": "Neg", "name": "b", "inputs": ["x"]},
         {"op_type": "Abs", "name": "early", "inputs": ["x"]})",
      R"("late", "b")");
  const onnx::ModelProto m = written(json);
  const auto& g = m.graph();
  ASSERT_EQ(g.node_size(), 3);
  EXPECT_EQ(g.node(0).name(), "b");
  EXPECT_EQ(g.node(1).name(), "early");
  EXPECT_EQ(g.node(2).name(), "late");
}

TEST(OnnxWriter, TrainingKeysGoToMetadataProps) {
  const onnx::ModelProto m = written(kPool);
  std::vector<std::pair<std::string, std::string>> props;
  for (const auto& p : m.metadata_props()) props.emplace_back(p.key(), p.value());
  EXPECT_EQ(props, (std::vector<std::pair<std::string, std::string>>{
                       {"nodeflow.graph.version", "1"},
                       {"nodeflow.scale.lda_coeff", "0.25"},
                       {"nodeflow.pool.training", "false"},
                       {"nodeflow.w.trainable", "true"}}));
}

TEST(OnnxWriter, JsonToOnnxToJsonIsTheSameDocument) {
  const Graph graph = load_graph(kPool);
  const OnnxModel model = write_onnx(graph);
  const Graph back = load_onnx(model.bytes, {});
  EXPECT_EQ(write_graph_json(back.def()), write_graph_json(graph.def()));
  EXPECT_EQ(write_onnx(back).bytes, model.bytes);
}

TEST(OnnxWriter, BFloat16PoolingNeedsOpset22) {
  const std::string json = document(R"({"name": "x", "dtype": "bfloat16", "shape": [1, 1, 4]})", "",
                                    R"({"op_type": "AveragePool", "name": "p", "inputs": ["x"],
                                        "attributes": {"kernel_shape": [2]}})",
                                    R"("p")");
  EXPECT_EQ(write_onnx(load_graph(json)).opset, 22);
}

TEST(OnnxWriter, WarnsForNodesOnnxCannotTypeOrOnnxruntimeCannotRun) {
  const std::string int8 = document(R"({"name": "x", "dtype": "int8", "shape": [1, 1, 4]})", "",
                                    R"({"op_type": "GlobalMaxPool", "name": "g", "inputs": ["x"]})",
                                    R"("g")");
  const OnnxModel a = write_onnx(load_graph(int8));
  ASSERT_EQ(a.warnings.size(), 1u);
  EXPECT_EQ(a.warnings[0], "node 'g' (GlobalMaxPool): input 0 is int8, which ONNX's GlobalMaxPool at opset 19 "
                           "does not take (it takes float16, float32, float64); output 0 is int8, which ONNX's "
                           "GlobalMaxPool at opset 19 does not take (it takes float16, float32, float64); written "
                           "all the same");
  const std::string four = document(R"({"name": "x", "dtype": "float32", "shape": [1, 1, 2, 2, 2, 2]})",
                                    "",
                                    R"({"op_type": "MaxPool", "name": "m", "inputs": ["x"],
                                        "attributes": {"kernel_shape": [1, 1, 1, 1]}})",
                                    R"("m")");
  const OnnxModel b = write_onnx(load_graph(four));
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_EQ(b.warnings[0], "node 'm' (MaxPool): onnxruntime runs MaxPool over 1 to 3 spatial axes, "
                           "this node has 4; written all the same");
  EXPECT_TRUE(write_onnx(load_graph(kPool)).warnings.empty());
  const std::string f64 = document(R"({"name": "x", "dtype": "float64", "shape": [1, 1, 4]})", "",
                                   R"({"op_type": "AveragePool", "name": "p", "inputs": ["x"],
                                       "attributes": {"kernel_shape": [2]}})",
                                   R"("p")");
  const OnnxModel c = write_onnx(load_graph(f64));
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "node 'p' (AveragePool): onnxruntime (1.30, CPU) has no float64 kernel for AveragePool; "
                           "written all the same");
}

TEST(OnnxWriter, EveryNodesDtypesAreCheckedAgainstOnnxsTypeConstraints) {
  const auto one = [](const std::string& dtype, const std::string& node, const std::string& outputs) {
    return write_onnx(load_graph(document(R"({"name": "x", "dtype": ")" + dtype + R"(", "shape": [1, 2, 3]})", "",
                                          node, outputs)));
  };
  // The graph takes int8/uint8 GlobalMaxPool and MaxUnpool, ONNX does not;
  // Dropout's mask is uint8 in nodeflow, bool in ONNX.
  const OnnxModel unpool = write_onnx(load_graph(document(
      R"({"name": "x", "dtype": "uint8", "shape": [1, 1, 2]}, {"name": "i", "dtype": "int64", "shape": [1, 1, 2]})", "",
      R"({"op_type": "MaxUnpool", "name": "u", "inputs": ["x", "i"], "attributes": {"kernel_shape": [2], "strides": [2]}})",
      R"("u")")));
  ASSERT_EQ(unpool.warnings.size(), 1u);
  EXPECT_EQ(unpool.warnings[0], "node 'u' (MaxUnpool): input 0 is uint8, which ONNX's MaxUnpool at opset 19 does not "
                                "take (it takes float16, float32, float64); output 0 is uint8, which ONNX's MaxUnpool "
                                "at opset 19 does not take (it takes float16, float32, float64); written all the same");
  const OnnxModel mask = one("float32", R"({"op_type": "Dropout", "name": "d", "inputs": ["x"]})", R"("d", "d:1")");
  ASSERT_EQ(mask.warnings.size(), 1u);
  EXPECT_EQ(mask.warnings[0], "node 'd' (Dropout): output 1 is uint8, which ONNX's Dropout at opset 19 does not "
                              "take (it takes a type nodeflow has not, bool); written all the same");
  // What ONNX types raises no warning: int8 MaxPool, int64 Add, bfloat16 Conv at 22.
  EXPECT_TRUE(one("int8", R"({"op_type": "MaxPool", "name": "m", "inputs": ["x"],
                              "attributes": {"kernel_shape": [1]}})", R"("m")")
                  .warnings.empty());
  EXPECT_TRUE(one("int64", R"({"op_type": "Add", "name": "a", "inputs": ["x", "x"]})", R"("a")").warnings.empty());
  const OnnxModel bf16 = one("bfloat16", R"({"op_type": "GlobalMaxPool", "name": "g", "inputs": ["x"]})", R"("g")");
  EXPECT_EQ(bf16.opset, 22);
  EXPECT_TRUE(bf16.warnings.empty());
}

TEST(OnnxWriter, DropoutsRatioAttributeIsWrittenAsAConstantInput) {
  const std::string json = document(
      R"({"name": "x", "dtype": "float64", "shape": [2, 3]},
         {"name": "d_ratio", "dtype": "float64", "shape": [2, 3]})", "",
      R"({"op_type": "Dropout", "name": "d", "inputs": ["x"], "attributes": {"ratio": 0.25}},
         {"op_type": "Add", "name": "a", "inputs": ["d", "d_ratio"]})",
      R"("a")");
  const Graph graph = load_graph(json);
  const OnnxModel model = write_onnx(graph);
  EXPECT_EQ(model.opset, 19);
  EXPECT_TRUE(model.warnings.empty()) << model.warnings.front();
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(model.bytes));
  const auto& node = m.graph().node(0);
  EXPECT_EQ(node.attribute_size(), 0);  // ONNX has no ratio attribute from opset 12
  ASSERT_EQ(node.input_size(), 2);
  EXPECT_EQ(node.input(1), "d_ratio_1");  // d_ratio is taken
  ASSERT_EQ(m.graph().initializer_size(), 1);
  EXPECT_EQ(m.graph().initializer(0).name(), "d_ratio_1");
  EXPECT_EQ(m.graph().initializer(0).data_type(), onnx_builder::kFloat);
  EXPECT_EQ(m.graph().initializer(0).dims_size(), 0);
  const float quarter = 0.25f;
  EXPECT_EQ(m.graph().initializer(0).raw_data(), std::string(reinterpret_cast<const char*>(&quarter), 4));
  EXPECT_EQ(m.metadata_props(1).key(), "nodeflow.d.ratio_attribute");
  EXPECT_EQ(m.metadata_props(1).value(), "true");
  const Graph back = load_onnx(model.bytes, {});
  EXPECT_EQ(write_graph_json(back.def()), write_graph_json(graph.def()));
  EXPECT_EQ(write_onnx(back).bytes, model.bytes);
}

TEST(OnnxWriter, ASpecifiedOutputsNameThatSpellsTheDefaultNamesComesBack) {
  for (const char* names : {R"(["pool", "pool:1"])", R"(["pool"])"}) {
    const std::string json = document(R"({"name": "x", "dtype": "float32", "shape": [1, 1, 4]})", "",
                                      R"({"op_type": "MaxPool", "name": "pool", "inputs": ["x"],
                                          "specified_outputs_name": )" + std::string(names) + R"(,
                                          "attributes": {"kernel_shape": [2]}})",
                                      R"("pool")");
    const Graph graph = load_graph(json);
    const OnnxModel model = write_onnx(graph);
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(model.bytes));
    ASSERT_EQ(m.metadata_props_size(), 2) << names;
    EXPECT_EQ(m.metadata_props(1).key(), "nodeflow.pool.specified_outputs_name");
    const Graph back = load_onnx(model.bytes, {});
    EXPECT_EQ(write_graph_json(back.def()), write_graph_json(graph.def())) << names;
    EXPECT_EQ(write_onnx(back).bytes, model.bytes) << names;
  }
  // Other names need no key: the outputs say it.
  const std::string other = document(R"({"name": "x", "dtype": "float32", "shape": [1, 1, 4]})", "",
                                     R"({"op_type": "MaxPool", "name": "pool", "inputs": ["x"],
                                         "specified_outputs_name": ["y"], "attributes": {"kernel_shape": [2]}})",
                                     R"("y")");
  EXPECT_EQ(written(other).metadata_props_size(), 1);
}

TEST(OnnxWriter, AFloatAttributeFloat32CannotHoldIsAWarningOrAnError) {
  const auto leaky = [](const std::string& alpha) {
    return document(R"({"name": "x", "dtype": "float32", "shape": [4]})", "",
                    R"({"op_type": "LeakyRelu", "name": "r", "inputs": ["x"], "attributes": {"alpha": )" +
                        alpha + "}}",
                    R"("r")");
  };
  const OnnxModel inexact = write_onnx(load_graph(leaky("0.123456789012")));
  ASSERT_EQ(inexact.warnings.size(), 1u);
  EXPECT_EQ(inexact.warnings[0], "node 'r' (LeakyRelu): attribute 'alpha': 0.123456789012 is written "
                                 "as the float32 0.12345679 (ONNX's FLOAT attributes are float32)");
  EXPECT_TRUE(write_onnx(load_graph(leaky("0.01"))).warnings.empty());
  EXPECT_EQ(error_of<InvalidAttribute>([&] { write_onnx(load_graph(leaky("1e300"))); }),
            "node 'r' (LeakyRelu): attribute 'alpha': 1e+300 is beyond float32, the type of ONNX's "
            "FLOAT attributes");
}

TEST(OnnxWriter, SavesAtomically) {
  const ScratchDir scratch("nodeflow-onnx-save");
  const fs::path file = scratch.path() / "m.onnx";
  write_text(file, "old");
  const Graph graph = load_graph(kPool);
  EXPECT_THROW(save_onnx_file(file, graph, [](std::size_t) { throw std::runtime_error("injected"); }),
               std::runtime_error);
  EXPECT_EQ(read_bytes(file), "old");
  save_onnx_file(file, graph);
  EXPECT_EQ(read_bytes(file), write_onnx(graph).bytes);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(scratch.path())) ++entries;
  EXPECT_EQ(entries, 1u);  // no staging directory left
}

}  // namespace
}  // namespace nodeflow::testing
