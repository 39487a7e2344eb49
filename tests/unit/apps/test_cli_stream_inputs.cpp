// Inputs read from a stream: `run` and `backward` read -i/-g files and GRAPH
// from /dev/stdin and from a shell's <(...) as every other verb does
// (docs/cli.md, "Input files"); the check that no output overwrites an input
// still sees through /dev/stdin to the file behind it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "serialization/npy.hpp"
#include "support/cli_fixture.hpp"
#include "support/files.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

// A MaxPool graph and its input x [1, 1, 2, 2] = 0, 1, 2, 3.
void write_pool_case(const fs::path& dir) {
  std::ofstream(dir / "g.json")
      << R"({"format": "nodeflow.graph", "version": 1, "inputs": [{"name": "x", "dtype": "float32",
      "shape": [1, 1, 2, 2]}], "outputs": ["y"], "nodes": [{"op_type": "MaxPool", "name": "p",
      "inputs": ["x"], "specified_outputs_name": ["y"], "attributes": {"kernel_shape": [2, 2]}}]})";
  write_npy(dir / "x.npy", Tensor::from<float>({1, 1, 2, 2}, {0.0f, 1.0f, 2.0f, 3.0f}));
}

class CliStreamInputs : public CliTest {
 protected:
  CliStreamInputs() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-stream-inputs") {}
  void SetUp() override { write_pool_case(dir()); }
  std::string cli() const { return "'" + binary() + "'"; }
  // `script` run by bash (for <(...)) in dir().
  ProcessResult shell(const std::string& script) const { return run({"/bin/bash", "-c", script}); }
};

TEST_F(CliStreamInputs, RunReadsAnInputFromDevStdin) {
  const ProcessResult r = shell(cli() + " run g.json -i x=/dev/stdin -o out < x.npy");
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(fs::exists(dir() / "out" / "y.npy")) << r.describe();
}

TEST_F(CliStreamInputs, RunReadsAnInputFromProcessSubstitution) {
  const ProcessResult r = shell(cli() + " run g.json -i x=<(cat x.npy) -o out");
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(fs::exists(dir() / "out" / "y.npy")) << r.describe();
}

TEST_F(CliStreamInputs, RunReadsTheGraphFromProcessSubstitution) {
  const ProcessResult r = shell(cli() + " run <(cat g.json) -i x=x.npy -o out");
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(fs::exists(dir() / "out" / "y.npy")) << r.describe();
}

TEST_F(CliStreamInputs, AnOutputOverStdinsFileIsStillRefused) {
  ASSERT_EQ(shell(cli() + " run g.json -i x=x.npy -o out").exit_code, 0);
  const std::string before = read_bytes(dir() / "out" / "y.npy");
  const ProcessResult r = shell(cli() + " run g.json -i x=/dev/stdin -o out < out/y.npy");
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find("a file this command reads"), std::string::npos) << r.describe();
  EXPECT_EQ(read_bytes(dir() / "out" / "y.npy"), before);
}

// train and eval read --config, and train --resume, from <(...) too: they
// were refused with "cannot write /dev/fd/63: it names an open file of this
// process", the check that no output overwrites an input having resolved the
// input as a place to write (found trying to break issue 22's --resume).
TEST_F(CliStreamInputs, TrainAndEvalReadTheConfigAndTheCheckpointFromProcessSubstitution) {
  fs::create_directories(dir() / "d");
  std::vector<float> pixels(4 * 28 * 28);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>(i % 7) / 7.0f;
  write_npy(dir() / "d" / "train_samples.npy", Tensor::from<float>({4, 1, 28, 28}, pixels));
  write_npy(dir() / "d" / "train_labels.npy", Tensor::from<std::int64_t>({4}, {0, 9, 3, 1}));
  pixels.resize(2 * 28 * 28);
  write_npy(dir() / "d" / "test_samples.npy", Tensor::from<float>({2, 1, 28, 28}, pixels));
  write_npy(dir() / "d" / "test_labels.npy", Tensor::from<std::int64_t>({2}, {9, 0}));
  std::ofstream(dir() / "c.json")
      << R"({"optimizer": {"type": "sgd", "lr": 0.01}, "batch_size": 2, "epochs": 1, "log_every": 0})";
  std::string graph = "'";  // built in steps: GCC 12's -Wrestrict misfires on "'" + s + "'"
  graph += (fs::path(NODEFLOW_EXAMPLES_DIR) / "lenet5.json").string();
  graph += "'";
  const ProcessResult first =
      shell(cli() + " train " + graph + " --config <(cat c.json) --data npy:d -o t/o.json");
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const ProcessResult resumed = shell(cli() + " train " + graph +
                                      " --config c.json --data npy:d -o t/o.json --epochs 2 "
                                      "--resume <(cat t/o.checkpoint.json)");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.describe();
  EXPECT_NE(resumed.err.find("resuming at epoch 2/2"), std::string::npos) << resumed.describe();
  const ProcessResult eval = shell(cli() + " eval t/o.json --config <(cat c.json) --data npy:d");
  EXPECT_EQ(eval.exit_code, 0) << eval.describe();
  // An output over an input given by its own name is still refused.
  const ProcessResult clash =
      shell(cli() + " train " + graph + " --config c.json --data npy:d -o t/o.json --metrics c.json");
  EXPECT_EQ(clash.exit_code, 2) << clash.describe();
}

}  // namespace
}  // namespace nodeflow::testing
