// Models of old opsets, run end to end: a pooling case of the conformance
// corpus written as an ONNX model that imports an older opset (the model
// write_onnx gives, with its opset_import changed, and for LpPool-1 its p a
// FLOAT), read with that opset's semantics and run; it must give the case's
// expected outputs. One opset lower, where the op or an attribute the case
// uses did not exist yet, the model is refused naming the node, op, opset and
// what is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "conformance_case.hpp"
#include "core/executor.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/npy.hpp"
#include "serialization/onnx.hpp"
#include "support/error_of.hpp"
#include "support/npy_compare.hpp"
#include "support/onnx_builder.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

struct OldOpset {
  const char* case_name;  ///< a forward or backward case of tests/conformance/
  int opset;              ///< reads and runs at this opset
  const char* refused;    ///< at opset - 1: words of the refusal
};

const OldOpset kOldOpsets[] = {
    {"avgpool_1d_k3s2_f32", 1, nullptr},
    {"avgpool_2d_asym_pads_include_pad_f32", 7, "attribute 'count_include_pad' exists from opset 7"},
    {"avgpool_2d_ceil_include_pad_f32", 10, "attribute 'ceil_mode' exists from opset 10"},
    {"avgpool_2d_dilation_f32", 19, "attribute 'dilations' exists from opset 19"},
    {"maxpool_2d_indices_batch_channels_f32", 8, "has 2 outputs; MaxPool at opset 7 has at most 1"},
    {"maxpool_2d_storage_order1_f32", 8, "attribute 'storage_order' exists from opset 8"},
    {"maxpool_2d_ceil_f32", 10, "attribute 'ceil_mode' exists from opset 10"},
    {"maxpool_2d_dilation_reads_spaced_taps_f32", 10, "attribute 'dilations' exists from opset 10"},
    {"lppool_2d_p1_f32", 1, nullptr},
    {"lppool_2d_p2_backward_f64", 2, nullptr},
    {"lppool_1d_p3_ceil_dilation_f32", 18, "attribute 'ceil_mode' exists from opset 18"},
    {"globalavgpool_2d_f32", 1, nullptr},
    {"globalmaxpool_3d_f32", 1, nullptr},
    {"maxunpool_2d_f32", 9, "op not supported at opset 8"},
    {"chain_three_pools_lda_backward_f64", 10, "attribute 'ceil_mode' exists from opset 10"},
};

void PrintTo(const OldOpset& o, std::ostream* os) { *os << o.case_name << " at opset " << o.opset; }

/// The case's graph as a model importing `opset`.
onnx::ModelProto old_model(const ConformanceCase& c, int opset) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(write_onnx(load_graph_file(c.graph())).bytes));
  m.mutable_opset_import(0)->set_version(opset);
  if (opset == 1)  // LpPool-1's p is a FLOAT
    for (auto& node : *m.mutable_graph()->mutable_node())
      for (auto& a : *node.mutable_attribute())
        if (node.op_type() == "LpPool" && a.name() == "p") {
          a.set_type(onnx::AttributeProto::FLOAT);
          a.set_f(static_cast<float>(a.i()));
          a.clear_i();
        }
  return m;
}

Tensor as_declared(Tensor value, DType declared) {
  return declared == DType::BFloat16 ? value.cast(DType::BFloat16) : value;
}

class OnnxOldOpset : public ::testing::TestWithParam<OldOpset> {};

TEST_P(OnnxOldOpset, RunsAsTheCaseExpectsAndIsRefusedOneOpsetEarlier) {
  const OldOpset& o = GetParam();
  const ConformanceCase c =
      load_conformance_case(fs::path(NODEFLOW_CONFORMANCE_DIR) / o.case_name);
  const Graph graph = load_onnx(onnx_builder::bytes(old_model(c, o.opset)), {});
  TensorMap feeds;
  for (const auto& [name, file] : c.inputs)
    feeds.emplace(name, as_declared(read_npy(file), graph.info(name).dtype));
  const TensorMap outputs = Executor(graph).run(feeds);
  for (const auto& [name, file] : c.expected) {
    const Tensor& got = outputs.at(name);
    EXPECT_EQ(tensor_mismatch(got.dtype() == DType::BFloat16 ? got.cast(DType::Float32) : got,
                              read_npy(file), c.tolerance_for(name)),
              "")
        << "output '" << name << "'";
  }
  if (o.refused) {
    const std::string message = error_of<Error>(
        [&] { load_onnx(onnx_builder::bytes(old_model(c, o.opset - 1)), {}); });
    EXPECT_NE(message.find("opset " + std::to_string(o.opset - 1)), std::string::npos) << message;
    EXPECT_NE(message.find(o.refused), std::string::npos) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(, OnnxOldOpset, ::testing::ValuesIn(kOldOpsets),
                         [](const ::testing::TestParamInfo<OldOpset>& p) {
                           return std::string(p.param.case_name) + "_opset" +
                                  std::to_string(p.param.opset);
                         });

}  // namespace
}  // namespace nodeflow::testing
