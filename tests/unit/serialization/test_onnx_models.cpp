// Real ONNX models written by other tools (tests/onnx-models/README.md, a copy
// of the shared folder that test_conformance_copy.cpp checks): each model runs
// through `nodeflow run` (the binary of this build tree) on its input_0.pb and
// must give its output_0.pb: MaxPool exactly, AveragePool within rtol 1e-5,
// atol 1e-6 (the README's tolerances).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "serialization/npy.hpp"
#include "serialization/onnx.hpp"
#include "serialization/onnx/onnx_tensor.hpp"
#include "support/cli_fixture.hpp"
#include "support/files.hpp"
#include "support/npy_compare.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kModels = fs::path(NODEFLOW_ONNX_MODELS_DIR) / "pytorch-converted";

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kModels))
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Tensor read_pb(const fs::path& file) {
  return onnx_io::parse_tensor_proto(read_bytes(file), file.string(), file.parent_path(),
                                     kDefaultMaxInitializerBytes);
}

double max_abs_error(const Tensor& got, const Tensor& want) {
  double worst = 0;
  const auto a = got.values<float>();
  const auto b = want.values<float>();
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  return worst;
}

class RealOnnxModel : public CliTest, public ::testing::WithParamInterface<std::string> {
 protected:
  RealOnnxModel() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-onnx-models") {}
};

TEST(OnnxModels, TheCopyHoldsTheFifteenPoolingModels) { EXPECT_EQ(model_names().size(), 15u); }

TEST_P(RealOnnxModel, RunMatchesOutput0) {
  const fs::path folder = kModels / GetParam();
  const fs::path model = folder / "model.onnx";
  const Graph graph = load_onnx_file(model);  // the API reads it as the command does
  ASSERT_EQ(graph.def().inputs.size(), 1u);
  ASSERT_EQ(graph.def().outputs.size(), 1u);
  write_npy(dir() / "input_0.npy", read_pb(folder / "test_data_set_0" / "input_0.pb"));
  const ProcessResult r = nodeflow({"run", model.string(), "-i",
                                    graph.def().inputs[0].name + "=input_0.npy", "-o", "out"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const Tensor want = read_pb(folder / "test_data_set_0" / "output_0.pb");
  // Output files are named after the tensor ("1", "5", ...), which is a safe file name.
  const Tensor got = read_npy(dir() / "out" / (graph.def().outputs[0] + ".npy"));
  const bool max_pool = GetParam().find("MaxPool") != std::string::npos;
  const Tolerance tolerance = max_pool ? Tolerance{0, 0} : Tolerance{1e-5, 1e-6};
  EXPECT_EQ(tensor_mismatch(got, want, tolerance), "");
  RecordProperty("max_abs_error", std::to_string(max_abs_error(got, want)));
  std::cout << "[ model    ] " << GetParam() << ": max abs error " << max_abs_error(got, want)
            << "\n";
}

INSTANTIATE_TEST_SUITE_P(, RealOnnxModel, ::testing::ValuesIn(model_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace nodeflow::testing
