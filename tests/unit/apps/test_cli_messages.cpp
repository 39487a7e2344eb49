// What the `nodeflow` binary of this build tree tells a user who got something
// wrong (a mistyped verb, a bad input file) and what a failed command leaves
// behind. (tests/cli_test.cpp covers the installed binary's exit codes and files
// under ctest.)
#include <gtest/gtest.h>

#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "serialization/npy.hpp"
#include "support/generated_graphs.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/cli_fixture.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

class CliMessages : public CliTest {
 protected:
  CliMessages() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-cli-messages") {}

  static void expect_failure_starting(const ProcessResult& r, const std::string& start) {
    EXPECT_EQ(r.exit_code, kFailure) << r.describe();
    EXPECT_EQ(r.err.rfind(start, 0), 0u) << "expected stderr to start with: " << start << "\n"
                                         << r.describe();
  }
};

TEST_F(CliMessages, UnknownVerbIsNamedWithTheValidOnes) {
  const ProcessResult r = nodeflow({"frobnicate", "graph.json"});
  EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  const std::string first_line = r.err.substr(0, r.err.find('\n'));
  EXPECT_NE(first_line.find("'frobnicate'"), std::string::npos) << r.describe();
  for (const char* verb : {"run", "backward", "check", "convert", "train", "eval"})
    EXPECT_NE(first_line.find(verb), std::string::npos) << verb << "\n" << r.describe();
  EXPECT_NE(r.err.find("Usage"), std::string::npos) << r.describe();
}

TEST_F(CliMessages, AnUnknownOptionBeforeTheVerbIsNamed) {
  // CLI11 said only "A subcommand is required".
  const ProcessResult r = nodeflow({"-x"});
  EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  const std::string first_line = r.err.substr(0, r.err.find('\n'));
  EXPECT_NE(first_line.find("unknown option '-x' (a subcommand comes first: run, backward"),
            std::string::npos)
      << r.describe();
}

TEST_F(CliMessages, ANonPositiveEpochCountNamesTheIntegerRange) {
  // CLI::PositiveNumber said "not in range 0.000000 to" DBL_MAX's 309 digits.
  const ProcessResult r =
      nodeflow({"train", "g.json", "--config", "c.json", "--data", "mnist", "-o", "o.json",
                "--epochs", "0"});
  EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "nodeflow: --epochs: expected an integer from 1 to 9223372036854775807, got '0'")
      << r.describe();
}

TEST_F(CliMessages, NoVerbStillSaysOneIsRequired) {
  const ProcessResult r = nodeflow({});
  EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  EXPECT_NE(r.err.find("A subcommand is required"), std::string::npos) << r.describe();
}

TEST_F(CliMessages, UnreadableInputFileNamesTheGraphInput) {
  const fs::path graph = write_text("g.json", kPoolGraph);
  const fs::path bad = write_text("bad.npy", "PK not a numpy file");
  expect_failure_starting(nodeflow({"run", graph.string(), "-i", "x=" + bad.string(), "-o", "out"}),
                          "error: input 'x': " + bad.string() + ": not a .npy file");
  expect_failure_starting(
      nodeflow({"run", graph.string(), "-i", "x=" + (dir() / "absent.npy").string(), "-o", "out"}),
      "error: input 'x': cannot read " + (dir() / "absent.npy").string());
  EXPECT_FALSE(fs::exists(dir() / "out"));
}

TEST_F(CliMessages, UnreadableGradientFileNamesTheGraphOutput) {
  const fs::path graph = write_text("g.json", kPoolGraph);
  // A valid x, so that the -g file is the one refused.
  const fs::path good = dir() / "x.npy";
  const std::vector<float> zeros(16, 0.0f);
  write_npy(good, Tensor::from<float>({1, 1, 4, 4}, std::span<const float>(zeros)));
  const fs::path bad = write_text("dy.npy", "PK not a numpy file");
  expect_failure_starting(nodeflow({"backward", graph.string(), "-i", "x=" + good.string(), "-g",
                                    "y=" + bad.string(), "-o", "out"}),
                          "error: gradient of output 'y': " + bad.string() + ": not a .npy file");
}

// The loss of the very first step is NaN: a NaN bias (base64).
const std::string kNanGraph = linear_classifier_json(
    R"("data": {"base64": "AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfwAAwH8AAMB/AADAfw=="})");

TEST_F(CliMessages, DivergedTrainingLeavesNoDirectoryItCreated) {
  const fs::path digits = dir() / "digits";
  write_blank_digits(digits);
  const fs::path graph = write_text("nan.json", kNanGraph);
  const fs::path config = write_text(
      "train.json", R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 1, "log_every": 0})");
  fs::create_directories(dir() / "existing");

  const ProcessResult r = nodeflow({"train", graph.string(), "--config", config.string(), "--data",
                                    "mnist:" + digits.string(), "-o",
                                    (dir() / "out" / "a" / "model.json").string(), "--checkpoint",
                                    (dir() / "existing" / "ck" / "model.ck.json").string()});
  EXPECT_EQ(r.exit_code, kFailure) << r.describe();
  EXPECT_NE(r.err.find("error: training step 1: the loss is NaN"), std::string::npos)
      << r.describe();
  EXPECT_FALSE(fs::exists(dir() / "out")) << r.describe();
  EXPECT_FALSE(fs::exists(dir() / "existing" / "ck")) << r.describe();
  EXPECT_TRUE(fs::is_directory(dir() / "existing"));  // not created by the run: kept
}

}  // namespace
}  // namespace nodeflow::testing
