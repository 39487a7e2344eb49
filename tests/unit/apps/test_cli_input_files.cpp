// What train and eval read must not be what they write: the MNIST digit files
// are inputs like GRAPH and --config (README, "The command line"), so an
// output naming one (directly or through a link) is wrong usage, refused
// before anything is written. Also: the integer options refuse values out of
// range instead of clamping them, and take one form of number everywhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/cli_fixture.hpp"
#include "support/files.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

class CliInputFiles : public CliTest {
 protected:
  CliInputFiles() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-input-files") {}

  void SetUp() override {
    write_blank_digits(dir() / "mn");
    std::ofstream(dir() / "lr.json") << linear_classifier_json(R"("init": {"rule": "zeros"})");
    std::ofstream(dir() / "cfg.json")
        << R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 1, "log_every": 0})";
    digit3_ = read_bytes(dir() / "mn" / "3.json");
  }

  // The built CLI in dir(), with `env` ("NAME=VALUE", or empty) in its environment.
  ProcessResult nodeflow(std::vector<std::string> args, const std::string& env = "") const {
    args.insert(args.begin(), binary());
    if (!env.empty()) args.insert(args.begin(), {"/usr/bin/env", env});
    return run(args);
  }

  // Exit 2 naming the output and the digit file, which is left as it was.
  void expect_refused(const ProcessResult& r, const std::string& option,
                      const std::string& digit_file) const {
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_NE(r.err.find(option), std::string::npos) << r.describe();
    EXPECT_NE(r.err.find("--data mnist (mn/" + digit_file + ")"), std::string::npos)
        << r.describe();
    EXPECT_EQ(read_bytes(dir() / "mn" / "3.json"), digit3_);
    EXPECT_FALSE(fs::exists(dir() / "out.json"));
  }

  std::vector<std::string> train(const std::vector<std::string>& more) const {
    std::vector<std::string> args{"train", "lr.json", "--config", "cfg.json", "--data", "mnist"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  std::string digit3_;
};

TEST_F(CliInputFiles, TrainRefusesToWriteADigitFile) {
  const ProcessResult r = nodeflow(train({"--mnist-dir", "mn", "-o", "mn/3.json"}));
  expect_refused(r, "-o mn/3.json", "3.json");
}

TEST_F(CliInputFiles, TrainRefusesADigitFileFromTheEnvironment) {
  const ProcessResult r = nodeflow(train({"-o", "mn/3.json"}), "NODEFLOW_MNIST_DIR=mn");
  expect_refused(r, "-o mn/3.json", "3.json");
}

TEST_F(CliInputFiles, TrainRefusesEveryOtherOutputOnADigitFile) {
  for (const char* option : {"--checkpoint", "--metrics", "--chart", "--predictions"}) {
    const std::string target = std::string(option) == "--chart" ? "mn/3.json.svg" : "mn/3.json";
    if (target != "mn/3.json") fs::create_symlink("3.json", dir() / target);
    const ProcessResult r =
        nodeflow(train({"--mnist-dir", "mn", "-o", "out.json", option, target}));
    expect_refused(r, std::string(option) + " " + target, "3.json");
    fs::remove(dir() / "mn" / "3.json.svg");
  }
}

TEST_F(CliInputFiles, EvalRefusesPredictionsThroughALinkToADigitFile) {
  fs::create_symlink("mn/3.json", dir() / "L");
  const ProcessResult r =
      nodeflow({"eval", "lr.json", "--data", "mnist", "--mnist-dir", "mn", "--predictions", "L"});
  expect_refused(r, "--predictions L", "3.json");
  EXPECT_TRUE(fs::is_symlink(dir() / "L"));
}

TEST_F(CliInputFiles, AnOutputBesideTheDigitsIsStillAccepted) {
  // A graph next to the digits is no digit file: only 0.json ... 9.json are inputs.
  const ProcessResult r = nodeflow(train({"--mnist-dir", "mn", "-o", "mn/lr.json"}));
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(read_bytes(dir() / "mn" / "3.json"), digit3_);
}

// Integer options: out of range is wrong usage naming the option and the
// range, never clamped to a limit or "no limit".
TEST_F(CliInputFiles, ByteLimitsPast2To64AreRefused) {
  for (const char* option : {"--max-initializer-bytes", "--max-tensor-bytes"})
    for (const char* value :
         {"18446744073709551616", "36893488147419103232", "99999999999999999999999", "16EiB",
          "0x10", " 5", "5 ", "-1", "1.5", "5XB"}) {
      const ProcessResult r = nodeflow(
          {"eval", "lr.json", "--data", "mnist", "--mnist-dir", "mn", option, value});
      EXPECT_EQ(r.exit_code, 2) << option << " '" << value << "': " << r.describe();
      EXPECT_NE(r.err.find(option), std::string::npos) << r.describe();
      EXPECT_NE(r.err.find("from 0 to 18446744073709551615"), std::string::npos) << r.describe();
    }
}

TEST_F(CliInputFiles, EpochsPastInt64AreRefused) {
  for (const char* value : {"18446744073709551616", "9223372036854775808", "0", "0x10", " 5"}) {
    const ProcessResult r =
        nodeflow(train({"--mnist-dir", "mn", "-o", "out.json", "--epochs", value}));
    EXPECT_EQ(r.exit_code, 2) << "'" << value << "': " << r.describe();
    EXPECT_NE(r.err.find("--epochs"), std::string::npos) << r.describe();
    EXPECT_NE(r.err.find("from 1 to 9223372036854775807"), std::string::npos) << r.describe();
    EXPECT_FALSE(fs::exists(dir() / "out.json"));
  }
}

}  // namespace
}  // namespace nodeflow::testing
