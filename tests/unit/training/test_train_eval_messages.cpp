// What `eval` and `train` tell a user who has to fix something: bindings
// that do not fit the graph (and how to give others), MNIST files that are
// missing (which ones, and every way to point at the data), an unknown
// dataset, the validation split, and what the --predictions file holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "serialization/npy.hpp"
#include "support/cli_fixture.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

// The linear classifier with its `image` input renamed `pixels`.
std::string pixels_graph() {
  std::string g = linear_classifier_json(R"("init": {"rule": "zeros"})");
  for (std::size_t at = g.find("\"image\""); at != std::string::npos; at = g.find("\"image\""))
    g.replace(at, 7, "\"pixels\"");
  return g;
}

class EvalMessages : public CliTest {
 protected:
  EvalMessages() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-eval-messages") {}

  void SetUp() override {
    std::ofstream(dir() / "g.json") << linear_classifier_json(R"("init": {"rule": "zeros"})");
    std::ofstream(dir() / "pixels.json") << pixels_graph();
    std::ofstream(dir() / "c.json")
        << R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 1, "log_every": 0})";
    // Three of the four MNIST files, not even IDX: the check that they are
    // all there comes before any is read.
    fs::create_directories(dir() / "nine");
    for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                             "t10k-images-idx3-ubyte.gz"})
      std::ofstream(dir() / "nine" / name) << "{}";
  }

  // The `nodeflow` command `args` in dir(), with NODEFLOW_MNIST_DIR set to
  // `mnist_env` (unset when empty).
  ProcessResult nodeflow(const std::vector<std::string>& args,
                         const std::string& mnist_env = "") const {
    std::vector<std::string> argv{"/usr/bin/env"};
    argv.push_back(mnist_env.empty() ? "-uNODEFLOW_MNIST_DIR" : "NODEFLOW_MNIST_DIR=" + mnist_env);
    argv.push_back(binary());
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }

  static void expect_all(const ProcessResult& r, const std::vector<std::string>& pieces) {
    for (const std::string& piece : pieces)
      EXPECT_NE(r.err.find(piece), std::string::npos) << "expected '" << piece << "' in\n"
                                                      << r.describe();
  }
};

TEST_F(EvalMessages, BindingsThatDoNotFitTheGraphPointToConfigAndItsBindings) {
  const std::string inputs =
      "bindings.input: 'image' is not a graph input (the graph's inputs: 'pixels' float32 "
      "[?, 1, 28, 28], 'label' int64 [?])";
  // Refused before the data are read: "nine" lacks a file.
  ProcessResult r = nodeflow({"eval", "pixels.json", "--data", "mnist:nine"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  expect_all(r, {inputs,
                 "without --config, eval binds input 'image', label 'label', loss 'loss' "
                 "and prediction 'logits'",
                 "give --config FILE", "\"bindings\" object", "docs/training-config.md"});
  EXPECT_EQ(r.err.find("t10k-labels"), std::string::npos) << r.describe();

  r = nodeflow(
      {"eval", "pixels.json", "--config", "c.json", "--data", "mnist:nine"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  expect_all(r,
             {inputs, "fix the \"bindings\" object of --config c.json (docs/training-config.md)"});

  r = nodeflow({"train", "pixels.json", "--config", "c.json", "--data", "mnist:nine", "-o", "o.json"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  expect_all(r,
             {inputs, "fix the \"bindings\" object of --config c.json (docs/training-config.md)"});
}

TEST_F(EvalMessages, AMissingDigitFileIsNamedWithEveryWayToPointAtTheData) {
  const std::vector<std::string> ways{"scripts/fetch_mnist.sh", "--data mnist:DIR",
                                      "NODEFLOW_MNIST_DIR=DIR"};
  for (const char* split : {"test", "all"}) {
    SCOPED_TRACE(split);
    ProcessResult r = nodeflow({"eval", "g.json", "--data", "mnist:nine", "--split", split});
    EXPECT_EQ(r.exit_code, 1) << r.describe();
    expect_all(r, ways);
    expect_all(r, {"mnist dataset: t10k-labels-idx1-ubyte (or .gz) is missing from nine (--data)"});
  }
  ProcessResult r = nodeflow({"eval", "g.json", "--data", "mnist"}, "nine");
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  expect_all(r, ways);
  expect_all(r, {"t10k-labels-idx1-ubyte (or .gz) is missing from nine ($NODEFLOW_MNIST_DIR)"});

  // From outside the checkout, with no folder given: the default is named
  // with the directory it is relative to.
  r = nodeflow({"train", "g.json", "--config", "c.json", "--data", "mnist", "-o", "o.json"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  expect_all(r, ways);
  expect_all(r, {"the folder .cache/mnist (the default, in the current directory " +
                 fs::canonical(dir()).string() + ") does not exist"});

  fs::create_directories(dir() / "empty");
  r = nodeflow({"eval", "g.json", "--data", "mnist:empty"});
  expect_all(r, ways);
  expect_all(r, {"train-images-idx3-ubyte (or .gz), train-labels-idx1-ubyte (or .gz), "
                 "t10k-images-idx3-ubyte (or .gz) and t10k-labels-idx1-ubyte (or .gz) are missing "
                 "from empty (--data)"});
}

TEST_F(EvalMessages, AnUnknownDatasetOrAMissingValidationCountIsWrongUsage) {
  ProcessResult r = nodeflow({"eval", "g.json", "--data", "cifar"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  expect_all(r, {"--data: unknown dataset 'cifar' (expected mnist, mnist:DIR, fashion-mnist, "
                 "fashion-mnist:DIR or npy:DIR)"});
  r = nodeflow({"eval", "g.json", "--data", "mnist:nine", "--split", "validation"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  expect_all(r, {"--split validation: --validation N says how many training samples are held out"});
  write_blank_digits(dir() / "digits");
  r = nodeflow({"eval", "g.json", "--data", "mnist:digits", "--validation", "200"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  expect_all(r, {"--validation: 200 samples cannot be held out of a training set of 200 (1 to 199)"});
}

TEST_F(EvalMessages, EvaluatesTheValidationSplitOfTrain) {
  write_blank_digits(dir() / "digits");
  for (const auto& [split, count] : {std::pair{"validation", "30"}, std::pair{"train", "170"},
                                     std::pair{"all", "300"}, std::pair{"test", "100"}}) {
    const ProcessResult r = nodeflow({"eval", "g.json", "--data", "mnist:digits", "--validation",
                                      "30", "--split", split});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_NE(r.out.find(std::string("on the mnist ") + split + " split (" + count + " samples)"),
              std::string::npos)
        << r.out;
  }
}

TEST_F(EvalMessages, TrainWithValidationReportsTheValidationAndTheTestSet) {
  write_blank_digits(dir() / "digits");
  const ProcessResult r = nodeflow({"train", "g.json", "--config", "c.json", "--data",
                                    "mnist:digits", "--validation", "50", "-o", "o.json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("validation set (50 samples held out of the training set): accuracy "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("mnist test set (100 samples): accuracy "), std::string::npos) << r.out;
  // The log: 150 samples trained on, the 50 evaluated after every epoch.
  EXPECT_NE(r.err.find("on 150 samples (50 held out)"), std::string::npos) << r.describe();
}

TEST_F(EvalMessages, TheHelpSaysWhatThePredictionsFileHolds) {
  for (const char* verb : {"eval", "train"}) {
    const ProcessResult r = nodeflow({verb, "--help"});
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    const std::size_t at = r.out.find("--predictions");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(line.find("float32 logits ["), std::string::npos) << line;
    EXPECT_NE(line.find(", 10]"), std::string::npos) << line;
    EXPECT_NE(line.find("argmax"), std::string::npos) << line;
  }
}

TEST_F(EvalMessages, ThePredictionsFileHoldsWhatTheHelpSays) {
  write_blank_digits(dir() / "digits");
  const ProcessResult r = nodeflow(
      {"eval", "g.json", "--data", "mnist:digits", "--predictions", "p.npy"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const Tensor p = read_npy(dir() / "p.npy");
  EXPECT_EQ(p.dtype(), DType::Float32);
  EXPECT_EQ(p.shape(), (Shape{kBlankTestCount, 10}));
}

}  // namespace
}  // namespace nodeflow::testing
