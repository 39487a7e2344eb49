// The `nodeflow` binary of this build tree: GRAPH from standard input (`-`),
// from a pipe or a FIFO; --version; run's and backward's --threads and
// --seed (Dropout); and messages that quote a hostile path escaped.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "serialization/npy.hpp"
#include "support/generated_graphs.hpp"
#include "support/cli_fixture.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

// y = Dropout(x) with ratio 0.5 over 256 values: in a training-mode forward
// each element of x.grad is 0 or 2 (inverted dropout), drawn from the seed.
const char* const kDropoutGraph = R"({"format": "nodeflow.graph", "version": 1, "name": "drop",
  "inputs": [{"name": "x", "dtype": "float32", "shape": [256]}],
  "outputs": ["y"],
  "nodes": [{"op_type": "Dropout", "name": "drop", "inputs": ["x"],
             "specified_outputs_name": ["y"], "attributes": {"ratio": 0.5}}]})";

class CliGraphInput : public CliTest {
 protected:
  CliGraphInput() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-cli-graph-input") {}

  // `script` run by /bin/sh in the scratch directory, with "$0" the binary.
  ProcessResult shell(const std::string& script) const { return run({"/bin/sh", "-c", script, binary()}); }

  void write_floats(const std::string& name, const Shape& shape, float first, float step) const {
    std::vector<float> values(static_cast<std::size_t>(element_count(shape)));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = first + step * static_cast<float>(i);
    write_npy(dir() / name, Tensor::from<float>(shape, std::span<const float>(values)));
  }

  std::vector<float> read_floats(const fs::path& file) const {
    const Tensor t = read_npy(dir() / file);
    const auto v = t.values<float>();
    return {v.begin(), v.end()};
  }

  static void expect_check_report(const ProcessResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_EQ(r.out.rfind("graph cli_pool: valid\n", 0), 0u) << r.describe();
    EXPECT_NE(r.out.find("  pool (MaxPool): x -> y\n"), std::string::npos) << r.describe();
  }
};

TEST_F(CliGraphInput, CheckDashReadsTheGraphFromStandardInput) {
  write_text("g.json", kPoolGraph);
  expect_check_report(shell(R"("$0" check - < g.json)"));
  expect_check_report(shell(R"(cat g.json | "$0" check -)"));
}

TEST_F(CliGraphInput, RunAndConvertReadDashToo) {
  write_text("g.json", kPoolGraph);
  write_floats("x.npy", {1, 1, 4, 4}, 0.0f, 1.0f);
  const ProcessResult run = shell(R"(cat g.json | "$0" run - -i x=x.npy -o out)");
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  EXPECT_EQ(read_floats("out/y.npy"), (std::vector<float>{5, 7, 13, 15}));
  const ProcessResult convert = shell(R"("$0" convert - copy.json < g.json)");
  ASSERT_EQ(convert.exit_code, 0) << convert.describe();
  expect_check_report(nodeflow({"check", "copy.json"}));
}

// train and eval load GRAPH before the digits: a document on standard input
// that is not JSON is reported as such, not as a missing file named "-".
TEST_F(CliGraphInput, TrainAndEvalReadDashToo) {
  write_text("config.json", R"({"optimizer": {"type": "sgd", "lr": 0.1}, "batch_size": 4, "epochs": 1})");
  const ProcessResult train = shell(
      R"(echo '{"format": ' | "$0" train - --config config.json --data mnist:none -o t.json)");
  EXPECT_EQ(train.exit_code, kFailure) << train.describe();
  EXPECT_EQ(train.err.rfind("error: invalid JSON", 0), 0u) << train.describe();
  const ProcessResult eval =
      shell(R"(echo '{"format": ' | "$0" eval - --data mnist:none)");
  EXPECT_EQ(eval.exit_code, kFailure) << eval.describe();
  EXPECT_EQ(eval.err.rfind("error: invalid JSON", 0), 0u) << eval.describe();
}

TEST_F(CliGraphInput, EmptyStandardInputIsAnInvalidDocument) {
  const ProcessResult r = nodeflow({"check", "-"});  // stdin is /dev/null
  EXPECT_EQ(r.exit_code, kFailure) << r.describe();
  EXPECT_EQ(r.err.rfind("error: invalid JSON", 0), 0u) << r.describe();
}

TEST_F(CliGraphInput, DevStdinAsAPipeAndAFifoAreRead) {
  write_text("g.json", kPoolGraph);
  expect_check_report(shell(R"(cat g.json | "$0" check /dev/stdin)"));
  expect_check_report(shell(R"(mkfifo fifo && (cat g.json > fifo &) && "$0" check fifo)"));
  // A FIFO holding no document: the parser's message, not an I/O error.
  const ProcessResult empty = shell(R"(mkfifo empty && (: > empty &) && "$0" check empty)");
  EXPECT_EQ(empty.exit_code, kFailure) << empty.describe();
  EXPECT_EQ(empty.err.rfind("error: invalid JSON", 0), 0u) << empty.describe();
}

TEST_F(CliGraphInput, VersionPrintsTheProjectVersion) {
  const ProcessResult r = nodeflow({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out, std::string("nodeflow ") + NODEFLOW_VERSION + "\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(CliGraphInput, RunAndBackwardTakeThreads) {
  write_text("g.json", kPoolGraph);
  write_floats("x.npy", {1, 1, 4, 4}, 0.0f, 1.0f);
  for (const char* verb : {"run", "backward"}) {
    SCOPED_TRACE(verb);
    const ProcessResult two =
        nodeflow({verb, "g.json", "-i", "x=x.npy", "-o", std::string(verb) + "2", "--threads", "2"});
    ASSERT_EQ(two.exit_code, 0) << two.describe();
    EXPECT_EQ(read_floats(fs::path(std::string(verb) + "2") / "y.npy"),
              (std::vector<float>{5, 7, 13, 15}));
    for (const char* bad : {"0", "-1", "1025", "two"}) {
      SCOPED_TRACE(bad);
      const ProcessResult r =
          nodeflow({verb, "g.json", "-i", "x=x.npy", "-o", "refused", "--threads", bad});
      EXPECT_EQ(r.exit_code, kUsage) << r.describe();
      EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.describe();
    }
  }
  EXPECT_FALSE(fs::exists(dir() / "refused"));
}

TEST_F(CliGraphInput, BackwardSeedDrawsTheDropoutMask) {
  write_text("drop.json", kDropoutGraph);
  write_floats("x.npy", {256}, 1.0f, 0.0f);
  write_floats("g.npy", {256}, 1.0f, 0.0f);
  const auto grads = [&](const std::vector<std::string>& seed, const std::string& out) {
    std::vector<std::string> args{"backward", "drop.json", "-i", "x=x.npy", "-g", "y=g.npy", "-o", out};
    args.insert(args.end(), seed.begin(), seed.end());
    const ProcessResult r = nodeflow(args);
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    return read_floats(fs::path(out) / "x.grad.npy");
  };
  const std::vector<float> seven = grads({"--seed", "7"}, "a");
  const std::vector<float> seven_again = grads({"--seed", "7", "--threads", "2"}, "b");
  const std::vector<float> eight = grads({"--seed", "8"}, "c");
  const std::vector<float> zero = grads({"--seed", "0"}, "d");
  const std::vector<float> unseeded = grads({}, "e");
  ASSERT_EQ(seven.size(), 256u);
  std::size_t kept = 0;
  for (float g : seven) {
    EXPECT_TRUE(g == 0.0f || g == 2.0f) << g;  // 1 / (1 - 0.5)
    kept += g != 0.0f;
  }
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, 256u);
  EXPECT_EQ(seven, seven_again);
  EXPECT_NE(seven, eight);
  EXPECT_EQ(zero, unseeded);  // the default seed is 0
  EXPECT_NE(zero, seven);

  for (const char* bad : {"-1", "x", "18446744073709551616"}) {
    SCOPED_TRACE(bad);
    const ProcessResult r = nodeflow(
        {"backward", "drop.json", "-i", "x=x.npy", "-g", "y=g.npy", "-o", "refused", "--seed", bad});
    EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  }
  const ProcessResult largest = nodeflow({"backward", "drop.json", "-i", "x=x.npy", "-g", "y=g.npy",
                                          "-o", "max", "--seed", "18446744073709551615"});
  EXPECT_EQ(largest.exit_code, 0) << largest.describe();
  EXPECT_FALSE(fs::exists(dir() / "refused"));
}

TEST_F(CliGraphInput, RunTakesASeedAndItsDropoutIsTheIdentity) {
  write_text("drop.json", kDropoutGraph);
  write_floats("x.npy", {256}, 1.0f, 0.5f);
  const auto outputs = [&](const std::vector<std::string>& seed, const std::string& out) {
    std::vector<std::string> args{"run", "drop.json", "-i", "x=x.npy", "-o", out};
    args.insert(args.end(), seed.begin(), seed.end());
    const ProcessResult r = nodeflow(args);
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    return read_floats(fs::path(out) / "y.npy");
  };
  // Inference: the output is x whatever the seed (docs/cli.md, "Threads and seed").
  const std::vector<float> x = read_floats("x.npy");
  EXPECT_EQ(outputs({}, "a"), x);
  EXPECT_EQ(outputs({"--seed", "7"}, "b"), x);
  EXPECT_EQ(outputs({"--seed", "18446744073709551615", "--threads", "2"}, "c"), x);
  // The same parser as backward's --seed (add_seed_option).
  for (const char* bad : {"-1", "x", "0x10", "18446744073709551616"}) {
    SCOPED_TRACE(bad);
    const ProcessResult r = nodeflow({"run", "drop.json", "-i", "x=x.npy", "-o", "refused", "--seed", bad});
    EXPECT_EQ(r.exit_code, kUsage) << r.describe();
    EXPECT_NE(r.err.find("--seed: expected an integer from 0 to 18446744073709551615"),
              std::string::npos)
        << r.describe();
  }
  EXPECT_FALSE(fs::exists(dir() / "refused"));
  const ProcessResult help = nodeflow({"run", "--help"});
  EXPECT_NE(help.out.find("--seed"), std::string::npos) << help.describe();
}

TEST_F(CliGraphInput, AHostilePathIsQuotedEscaped) {
  const std::string path = "no\x1b[2J\x1b]0;pwned\x07\rerror: forged.json";
  const ProcessResult r = nodeflow({"check", path});
  EXPECT_EQ(r.exit_code, kFailure) << r.describe();
  EXPECT_EQ(r.err, "error: cannot read graph no\\x1b[2J\\x1b]0;pwned\\x07\\x0derror: forged.json: "
                   "No such file or directory\n");
  write_text("g.json", kPoolGraph);
  const ProcessResult input = nodeflow({"run", "g.json", "-i", "x\x1b=x.npy", "-o", "o"});
  EXPECT_EQ(input.exit_code, kFailure) << input.describe();
  EXPECT_EQ(input.err.rfind("error: -i names 'x\\x1b', which is not a graph input", 0), 0u)
      << input.describe();
}

}  // namespace
}  // namespace nodeflow::testing
