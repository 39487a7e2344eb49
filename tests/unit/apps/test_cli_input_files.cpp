// What train and eval read must not be what they write: the dataset's files
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
    images_ = read_bytes(dir() / "mn" / kImages);
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
    EXPECT_NE(r.err.find("is the file of --data mnist"), std::string::npos) << r.describe();
    EXPECT_NE(r.err.find(" (mn/" + digit_file + ")"), std::string::npos) << r.describe();
    EXPECT_EQ(read_bytes(dir() / "mn" / kImages), images_);
    EXPECT_FALSE(fs::exists(dir() / "out.json"));
  }

  std::vector<std::string> train(const std::vector<std::string>& more,
                                 const std::string& data = "mnist") const {
    std::vector<std::string> args{"train", "lr.json", "--config", "cfg.json", "--data", data};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  // The test images, one of the four files of the dataset.
  static constexpr const char* kImages = "t10k-images-idx3-ubyte";
  std::string images_;
};

TEST_F(CliInputFiles, TrainRefusesToWriteADigitFile) {
  const ProcessResult r = nodeflow(train({"-o", "mn/t10k-images-idx3-ubyte"}, "mnist:mn"));
  expect_refused(r, "-o mn/t10k-images-idx3-ubyte", kImages);
  // The .gz name the reader would take in its place is an input too.
  const ProcessResult gz = nodeflow(train({"-o", "mn/train-labels-idx1-ubyte.gz"}, "mnist:mn"));
  expect_refused(gz, "-o mn/train-labels-idx1-ubyte.gz", "train-labels-idx1-ubyte.gz");
}

TEST_F(CliInputFiles, TrainRefusesADigitFileFromTheEnvironment) {
  const ProcessResult r =
      nodeflow(train({"-o", "mn/t10k-images-idx3-ubyte"}), "NODEFLOW_MNIST_DIR=mn");
  expect_refused(r, "-o mn/t10k-images-idx3-ubyte", kImages);
}

TEST_F(CliInputFiles, TrainRefusesEveryOtherOutputOnADigitFile) {
  for (const char* option : {"--checkpoint", "--metrics", "--chart", "--predictions"}) {
    const std::string images = std::string("mn/") + kImages;
    const std::string target = std::string(option) == "--chart" ? "mn/images.svg" : images;
    if (target != images) fs::create_symlink(kImages, dir() / target);
    const ProcessResult r = nodeflow(train({"-o", "out.json", option, target}, "mnist:mn"));
    expect_refused(r, std::string(option) + " " + target, kImages);
    fs::remove(dir() / "mn" / "images.svg");
  }
}

TEST_F(CliInputFiles, EvalRefusesPredictionsThroughALinkToADigitFile) {
  fs::create_symlink(std::string("mn/") + kImages, dir() / "L");
  const ProcessResult r =
      nodeflow({"eval", "lr.json", "--data", "mnist:mn", "--predictions", "L"});
  expect_refused(r, "--predictions L", kImages);
  EXPECT_TRUE(fs::is_symlink(dir() / "L"));
}

TEST_F(CliInputFiles, AnOutputBesideTheDigitsIsStillAccepted) {
  // A graph next to the digits is no dataset file: only the four IDX names
  // (and their .gz) are inputs.
  const ProcessResult r = nodeflow(train({"-o", "mn/lr.json"}, "mnist:mn"));
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(read_bytes(dir() / "mn" / kImages), images_);
}

// Integer options: out of range is wrong usage naming the option and the
// range, never clamped to a limit or "no limit".
TEST_F(CliInputFiles, ByteLimitsPast2To64AreRefused) {
  for (const char* option : {"--max-initializer-bytes", "--max-tensor-bytes"})
    for (const char* value :
         {"18446744073709551616", "36893488147419103232", "99999999999999999999999", "16EiB",
          "0x10", " 5", "5 ", "-1", "1.5", "5XB"}) {
      const ProcessResult r = nodeflow(
          {"eval", "lr.json", "--data", "mnist:mn", option, value});
      EXPECT_EQ(r.exit_code, 2) << option << " '" << value << "': " << r.describe();
      EXPECT_NE(r.err.find(option), std::string::npos) << r.describe();
      EXPECT_NE(r.err.find("from 0 to 18446744073709551615"), std::string::npos) << r.describe();
    }
}

TEST_F(CliInputFiles, EpochsPastInt64AreRefused) {
  for (const char* value : {"18446744073709551616", "9223372036854775808", "0", "0x10", " 5"}) {
    const ProcessResult r =
        nodeflow(train({"-o", "out.json", "--epochs", value}, "mnist:mn"));
    EXPECT_EQ(r.exit_code, 2) << "'" << value << "': " << r.describe();
    EXPECT_NE(r.err.find("--epochs"), std::string::npos) << r.describe();
    EXPECT_NE(r.err.find("from 1 to 9223372036854775807"), std::string::npos) << r.describe();
    EXPECT_FALSE(fs::exists(dir() / "out.json"));
  }
}

}  // namespace
}  // namespace nodeflow::testing
