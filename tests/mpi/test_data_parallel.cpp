// `mpirun -np N nodeflow train ... --distributed` (docs/distributed.md) on
// loopback: the weights after k steps against one process on the same global
// batches, reproducibility, a job of one against plain `train` bit for bit,
// and the failures: a rank that is killed or fails ends the job with an error
// within a bounded time, ranks that load different graphs are refused.
// Registered with the ctest label "mpi" (tests/CMakeLists.txt); CI runs them
// in a stage of their own (.ci/run).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/graph.hpp"
#include "serialization/graph_file.hpp"
#include "support/cli_fixture.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The documented tolerance (docs/distributed.md): after the k steps of
// kConfig, every weight of the two-rank run is within this much, relative to
// max(1, |w|), of the one-process run's.
constexpr double kTolerance = 1e-5;

// 8,000 training digits in batches of 333: 24 batches of 333 (shards of 167
// and 166 on two ranks, weighted 167/333 and 166/333) and a last one of 8; two
// epochs, 50 steps.
constexpr const char* kConfig = R"({"optimizer": {"type": "sgd", "lr": 0.1, "momentum": 0.9},
  "batch_size": 333, "epochs": 2, "seed": 3, "log_every": 0})";

// Flatten -> Gemm(784 -> 32) -> Relu -> Gemm(32 -> 10) -> mean softmax cross-entropy.
std::string mlp_json(int seed) {
  const std::string s = std::to_string(seed);
  return R"({"format": "nodeflow.graph", "version": 1, "name": "mlp",
  "inputs": [{"name": "image", "dtype": "float32", "shape": [null, 1, 28, 28]},
             {"name": "label", "dtype": "int64", "shape": [null]}],
  "outputs": ["logits", "loss"],
  "initializers": [
    {"name": "W1", "dtype": "float32", "shape": [32, 784], "trainable": true, "init": {"rule": "he_uniform", "seed": )" + s + R"(}},
    {"name": "B1", "dtype": "float32", "shape": [32], "trainable": true, "init": {"rule": "zeros"}},
    {"name": "W2", "dtype": "float32", "shape": [10, 32], "trainable": true, "init": {"rule": "glorot_uniform", "seed": )" + s + R"(}},
    {"name": "B2", "dtype": "float32", "shape": [10], "trainable": true, "init": {"rule": "zeros"}}],
  "nodes": [
    {"op_type": "Flatten", "name": "flatten", "inputs": ["image"], "attributes": {"axis": 1}},
    {"op_type": "Gemm", "name": "fc1", "inputs": ["flatten", "W1", "B1"], "specified_outputs_name": ["h"], "attributes": {"transB": 1}},
    {"op_type": "Relu", "name": "relu", "inputs": ["h"], "specified_outputs_name": ["r"]},
    {"op_type": "Gemm", "name": "fc2", "inputs": ["r", "W2", "B2"], "specified_outputs_name": ["logits"], "attributes": {"transB": 1}},
    {"op_type": "SoftmaxCrossEntropyLoss", "name": "xent", "inputs": ["logits", "label"], "specified_outputs_name": ["loss"]}]})";
}

// mlp_json with BatchNormalization between fc1 and the Relu.
std::string batch_norm_mlp_json() {
  std::string g = mlp_json(1);
  const auto replace = [&](const std::string& from, const std::string& to) {
    g.replace(g.find(from), from.size(), to);
  };
  replace(R"("inputs": ["h"])", R"("inputs": ["hn"])");
  replace(R"({"op_type": "Relu")",
          R"({"op_type": "BatchNormalization", "name": "bn", "inputs": ["h", "scale", "shift", "mean", "var"], "specified_outputs_name": ["hn"]},
    {"op_type": "Relu")");
  replace(R"("init": {"rule": "zeros"}}],)",
          R"("init": {"rule": "zeros"}},
    {"name": "scale", "dtype": "float32", "shape": [32], "trainable": true, "init": {"rule": "ones"}},
    {"name": "shift", "dtype": "float32", "shape": [32], "trainable": true, "init": {"rule": "zeros"}},
    {"name": "mean", "dtype": "float32", "shape": [32], "trainable": false, "init": {"rule": "zeros"}},
    {"name": "var", "dtype": "float32", "shape": [32], "trainable": false, "init": {"rule": "ones"}}],)");
  return g;
}

// 8,000 training and 2,000 test digits as the four IDX files `--data mnist:DIR`
// reads (sample i has the label i % 10): each pixel 255 with a probability
// that depends on the class and the row, else 0, so that the classes can be
// told apart and every weight gets a gradient.
void write_digits(const fs::path& dir) {
  fs::create_directories(dir);
  std::mt19937 rng(20240601);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const auto write_split = [&](const std::string& prefix, std::uint32_t count) {
    std::string pixels, labels;
    pixels.reserve(std::size_t{count} * 784);
    for (std::uint32_t i = 0; i < count; ++i) {
      const int d = static_cast<int>(i % 10);
      labels += static_cast<char>(d);
      for (int j = 0; j < 784; ++j) {
        const double p = (j / 28) / 3 == d ? 0.6 : 0.1;
        pixels += static_cast<char>(u(rng) < p ? 255 : 0);
      }
    }
    write_bytes(dir / (prefix + "-images-idx3-ubyte"), idx_bytes(0x08, {count, 28, 28}, pixels));
    write_bytes(dir / (prefix + "-labels-idx1-ubyte"), idx_bytes(0x08, {count}, labels));
  };
  write_split("train", 8000);
  write_split("t10k", 2000);
}

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A run's time limit: a loaded machine (CI builds beside it) slows it down.
ProcessOptions long_run() {
  ProcessOptions options;
  options.timeout = 600s;
  return options;
}

class DataParallelTest : public CliTest {
 protected:
  DataParallelTest() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-mpi-") {}

  static void SetUpTestSuite() {
    digits_ = new ScratchDir("nodeflow-mpi-digits-");
    write_digits(digits_->path());
  }
  static void TearDownTestSuite() {
    delete digits_;
    digits_ = nullptr;
  }

  void SetUp() override {
    write_text("mlp.json", mlp_json(1));
    write_text("train.json", kConfig);
  }

  // `nodeflow train GRAPH --config CONFIG --data mnist -o OUT` plus `extra`.
  std::vector<std::string> train_args(const std::string& graph, const std::string& out,
                                      const std::string& config = "train.json") const {
    return {binary(), "train", graph, "--config", config, "--data",
            "mnist:" + digits_->path().string(), "-o", out};
  }

  // mpirun's own flags: root is allowed (CI runs as root) and more ranks than
  // cores may share them (loopback on a small machine).
  static std::vector<std::string> mpirun(int ranks) {
    return {NODEFLOW_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np",
            std::to_string(ranks)};
  }

  // `mpirun -np N nodeflow train ... --distributed`.
  ProcessResult train_on(int ranks, const std::string& out,
                         const std::string& config = "train.json") const {
    std::vector<std::string> argv = mpirun(ranks);
    for (std::string& a : train_args("mlp.json", out, config)) argv.push_back(a);
    argv.push_back("--distributed");
    return run(argv, long_run());
  }

  // `mpirun -np 1 nodeflow train GRAPH0 ... --distributed : -np 1 nodeflow
  // train GRAPH1 ... --distributed`: a job of two ranks, each with a graph of its own.
  ProcessResult train_two_graphs(const std::string& graph0, const std::string& graph1,
                                 const std::string& out) const {
    std::vector<std::string> argv = mpirun(1);
    for (std::string& a : train_args(graph0, out)) argv.push_back(a);
    argv.insert(argv.end(), {"--distributed", ":", "-np", "1"});
    for (std::string& a : train_args(graph1, out)) argv.push_back(a);
    argv.push_back("--distributed");
    return run(argv, long_run());
  }

  Graph trained(const std::string& name) const { return load_graph_path(dir() / name); }

  static inline ScratchDir* digits_ = nullptr;
};

TEST_F(DataParallelTest, TwoRanksMatchOneProcessWithinTheStatedTolerance) {
  ProcessResult one = run(train_args("mlp.json", "one.json"), long_run());
  ASSERT_EQ(one.exit_code, 0) << one.describe();
  ProcessResult two = train_on(2, "two.json");
  ASSERT_EQ(two.exit_code, 0) << two.describe();
  EXPECT_NE(two.out.find("on each of 2 data-parallel ranks"), std::string::npos) << two.out;
  EXPECT_NE(two.err.find("data-parallel on 2 ranks"), std::string::npos) << two.err;

  const Graph a = trained("one.json"), b = trained("two.json");
  double worst = 0.0;
  bool any_difference = false;
  for (const Initializer& init : a.def().initializers) {
    const auto x = init.value.values<float>();
    const auto y = b.initializer(init.name)->value.values<float>();
    ASSERT_EQ(x.size(), y.size()) << init.name;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double d = std::abs(static_cast<double>(x[i]) - y[i]) /
                       std::max(1.0, std::abs(static_cast<double>(x[i])));
      worst = std::max(worst, d);
      any_difference = any_difference || x[i] != y[i];
    }
  }
  EXPECT_LE(worst, kTolerance);
  // The training moved the weights: a comparison of untouched weights proves nothing.
  const Graph initial = load_graph_path(dir() / "mlp.json");
  EXPECT_NE(initial.initializer("W1")->value.values<float>()[0],
            a.initializer("W1")->value.values<float>()[0]);
  RecordProperty("worst_relative_difference", std::to_string(worst));
  std::cout << "two ranks against one process: worst relative difference " << worst
            << (any_difference ? "" : " (bit-identical)") << "\n";
}

// Per-rank batch statistics, running statistics averaged over the ranks
// through MPI (docs/distributed.md, "BatchNormalization"): the ranks keep
// identical weights and running statistics (fit checks it after every epoch,
// or the run fails), and the running statistics moved.
TEST_F(DataParallelTest, BatchNormalizationRanksKeepTheSameRunningStatistics) {
  write_text("mlp.json", batch_norm_mlp_json());
  ProcessResult two = train_on(2, "bn.json");
  ASSERT_EQ(two.exit_code, 0) << two.describe();
  const Graph trained_bn = trained("bn.json");
  const auto mean = trained_bn.initializer("mean")->value.values<float>();
  const auto var = trained_bn.initializer("var")->value.values<float>();
  EXPECT_NE(mean[0], 0.0f);
  EXPECT_NE(var[0], 1.0f);
}

TEST_F(DataParallelTest, TwoRanksAreReproducibleBitForBit) {
  ProcessResult first = train_on(2, "first.json");
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  ProcessResult second = train_on(2, "second.json");
  ASSERT_EQ(second.exit_code, 0) << second.describe();
  EXPECT_EQ(read_bytes(dir() / "first.json"), read_bytes(dir() / "second.json"));
}

TEST_F(DataParallelTest, AJobOfOneIsThePlainTrainBitForBit) {
  ProcessResult plain = run(train_args("mlp.json", "plain.json"), long_run());
  ASSERT_EQ(plain.exit_code, 0) << plain.describe();
  ProcessResult one = train_on(1, "one.json");
  ASSERT_EQ(one.exit_code, 0) << one.describe();
  EXPECT_EQ(read_bytes(dir() / "plain.json"), read_bytes(dir() / "one.json"));
}

TEST_F(DataParallelTest, OnlyRankZeroWritesFiles) {
  ProcessResult two = train_on(2, "out/o.json");
  ASSERT_EQ(two.exit_code, 0) << two.describe();
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir() / "out"))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".nodeflow-outputs.json", "o.chart.svg",
                                             "o.checkpoint.json", "o.json", "o.metrics.csv"}));
  // One summary, one set of progress lines.
  EXPECT_EQ(two.out.find("trained mlp"), two.out.rfind("trained mlp")) << two.out;
  EXPECT_EQ(two.err.find("epoch 1/2 done"), two.err.rfind("epoch 1/2 done")) << two.err;
}

TEST_F(DataParallelTest, ABatchSmallerThanTheRanksIsRefused) {
  write_text("tiny.json", R"({"optimizer": {"type": "sgd", "lr": 0.1}, "batch_size": 1,
                              "epochs": 1, "log_every": 0})");
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = train_on(2, "o.json", "tiny.json");
  EXPECT_EQ(r.exit_code, kFailure) << r.describe();
  EXPECT_NE(r.err.find("give batch_size >= 2"), std::string::npos) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 120s);
}

TEST_F(DataParallelTest, RanksWithDifferentGraphsAreRefused) {
  write_text("other.json", mlp_json(2));
  ProcessResult r = train_two_graphs("mlp.json", "other.json", "o.json");
  EXPECT_EQ(r.exit_code, kFailure) << r.describe();
  EXPECT_NE(r.err.find("rank 1 has other initial weights than rank 0"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir() / "o.json"));
}

TEST_F(DataParallelTest, ARankThatFailsEndsTheJobWithAnError) {
  // Rank 1 cannot read its graph; rank 0 would wait for it at the first check.
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = train_two_graphs("mlp.json", "missing.json", "o.json");
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, kFailure) << r.describe();
  EXPECT_NE(r.err.find("error: rank 1 of 2: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 120s);
  EXPECT_FALSE(fs::exists(dir() / "o.json"));
}

// The pid of this test's rank `rank`: a process whose working directory is
// `dir` and whose environment says OMPI_COMM_WORLD_RANK=<rank>; 0 when none is.
pid_t find_rank(const fs::path& dir, int rank) {
  const std::string wanted = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const fs::path cwd = fs::read_symlink(entry.path() / "cwd", ec);
    if (ec || !fs::equivalent(cwd, dir, ec) || ec) continue;
    const std::string environ = read_bytes(entry.path() / "environ");
    std::size_t at = 0;
    while (at < environ.size()) {
      const std::size_t end = environ.find('\0', at);
      if (environ.compare(at, (end == std::string::npos ? environ.size() : end) - at, wanted) == 0)
        return static_cast<pid_t>(std::stol(name));
      if (end == std::string::npos) break;
      at = end + 1;
    }
  }
  return 0;
}

TEST_F(DataParallelTest, AKilledRankEndsTheJobWithAnErrorWithinBoundedTime) {
  write_text("long.json", R"({"optimizer": {"type": "sgd", "lr": 0.01}, "batch_size": 100,
                              "epochs": 1000, "seed": 1, "log_every": 0})");
  std::atomic<bool> done{false};
  std::atomic<long long> killed_at{0};
  std::thread killer([&] {
    // Wait for rank 1, give it time to reach training, then SIGKILL it.
    pid_t pid = 0;
    while (!done && pid == 0) {
      pid = find_rank(dir(), 1);
      std::this_thread::sleep_for(100ms);
    }
    if (pid == 0) return;
    std::this_thread::sleep_for(5s);
    if (done) return;
    killed_at = std::chrono::steady_clock::now().time_since_epoch().count();
    ::kill(pid, SIGKILL);
  });
  ProcessResult r = train_on(2, "o.json", "long.json");
  const auto ended = std::chrono::steady_clock::now().time_since_epoch().count();
  done = true;
  killer.join();
  ASSERT_NE(killed_at.load(), 0) << "rank 1 was never found or the job ended first: "
                                 << r.describe();
  EXPECT_FALSE(r.timed_out) << r.describe();
  EXPECT_NE(r.exit_code, 0) << r.describe();
  const auto after_kill = std::chrono::steady_clock::duration(ended - killed_at.load());
  EXPECT_LT(after_kill, 60s) << r.describe();
  std::cout << "the job ended "
            << std::chrono::duration<double>(after_kill).count()
            << " s after rank 1 was killed; mpirun's exit status " << r.exit_code << "\n";
  EXPECT_FALSE(fs::exists(dir() / "o.json"));
}

}  // namespace
}  // namespace nodeflow::testing
