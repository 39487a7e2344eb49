// Inputs read from a stream: `run` and `backward` read -i/-g files and GRAPH
// from /dev/stdin and from a shell's <(...) as every other verb does
// (docs/cli.md, "Input files"); the check that no output overwrites an input
// still sees through /dev/stdin to the file behind it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace
}  // namespace nodeflow::testing
