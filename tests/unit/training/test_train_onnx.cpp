// Training an ONNX model (docs/onnx.md): examples/lenet5.json exported with
// `nodeflow convert`, trained from the .onnx for one short epoch on stand-in
// digits, saved as ONNX (-o OUT.onnx) and reloaded bit for bit; the same run
// from the JSON document trains the very same weights.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/onnx.hpp"
#include "support/cli_fixture.hpp"
#include "support/files.hpp"
#include "support/mnist_fixtures.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

// A sanitized Debug build trains LeNet-5 at some 80 digits/s: there the run
// from JSON, whose result is the same arithmetic, is left to the Release build.
#ifdef __SANITIZE_ADDRESS__
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// One epoch of one step (the 200 stand-in digits in one batch): short, and
// enough for the weights to move.
constexpr const char* kConfig = R"({"optimizer": {"type": "sgd", "lr": 0.05}, "epochs": 1,
                                    "batch_size": 500, "seed": 3, "threads": 1, "log_every": 0})";

class TrainOnnx : public CliTest {
 protected:
  TrainOnnx() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-train-onnx") {}

  ProcessResult train(const fs::path& graph, const std::string& out) const {
    ProcessOptions options;
    options.timeout = std::chrono::minutes(10);
    return nodeflow({"train", graph.string(), "--config", (dir() / "c.json").string(), "--data",
                     "mnist:" + (dir() / "digits").string(), "-o", out},
                    options);
  }
};

TEST_F(TrainOnnx, AnExportedLeNetTrainsFromTheOnnxFileAsFromItsJson) {
  write_blank_digits(dir() / "digits");
  write_text("c.json", kConfig);
  ProcessResult r = nodeflow({"convert", NODEFLOW_EXAMPLES_DIR "/lenet5.json", "lenet5.onnx"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.err, "");  // every node of LeNet-5 is plain ONNX

  r = train(dir() / "lenet5.onnx", "trained.onnx");
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("saved trained.onnx; reloaded: predictions identical bit for bit"),
            std::string::npos)
      << r.describe();
  // The trained graph is an ONNX model; the per-epoch files are named without .onnx.
  const Graph trained = load_onnx_file(dir() / "trained.onnx");
  EXPECT_TRUE(fs::exists(dir() / "trained.checkpoint.json"));
  EXPECT_TRUE(fs::exists(dir() / "trained.metrics.csv"));
  const Graph exported = load_onnx_file(dir() / "lenet5.onnx");
  ASSERT_EQ(trained.def().initializers.size(), exported.def().initializers.size());
  bool moved = false;
  for (std::size_t i = 0; i < exported.def().initializers.size(); ++i) {
    const Initializer& before = exported.def().initializers[i];
    EXPECT_EQ(trained.def().initializers[i].trainable, before.trainable) << before.name;
    if (before.trainable)
      moved = moved || std::memcmp(before.value.raw(), trained.def().initializers[i].value.raw(),
                                   before.value.nbytes()) != 0;
  }
  EXPECT_TRUE(moved) << "no trainable weight changed in training";

  // From the JSON document, the same epoch gives the same network bit for bit.
  if (kSanitized) return;  // the run from JSON is the Release build's
  r = train(NODEFLOW_EXAMPLES_DIR "/lenet5.json", "trained.json");
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(write_graph_json(trained.def()), read_bytes(dir() / "trained.json"));
}

}  // namespace
}  // namespace nodeflow::testing
