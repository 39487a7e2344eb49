// `nodeflow train` SIGKILLed at random moments and inside a checkpoint save,
// over the complete outputs of an earlier run (docs/training-config.md,
// "Saving and reloading").
//
// train's outputs are not one atomic set: they are separate files replaced at
// different times, the checkpoint, the metrics CSV and the chart after every
// epoch (in that order) and the trained graph once at the end, each replaced
// atomically on its own. What a reader may rely on, per file, whatever moment
// train is killed at:
// - OUT.json is the previous file or the trained graph of this run, whole;
// - OUT.checkpoint.json is the previous file or the weights after one of this
//   run's epochs, whole (a graph document that loads);
// - OUT.metrics.csv is the previous file or this run's history up to one of
//   its epochs, in whole lines;
// - OUT.chart.svg is the previous picture or a complete one of this run;
// and nothing about how the files pair up (a checkpoint of epoch 3 may sit
// beside the CSV of epoch 2 and the trained graph of the previous run). A
// killed save may leave its staging directory `.nodeflow-stage-*` beside the
// files, and nothing else; the next train into that directory removes it.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "serialization/atomic_file.hpp"
#include "serialization/json_reader.hpp"
#include "support/mnist_fixtures.hpp"
#include "support/output_sets.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

// Epochs of the runs that are killed; the earlier run had 2 with another seed
// and learning rate, so that every file of its set differs from this run's.
constexpr int kEpochs = 3;
constexpr const char* kOldConfig = R"({"optimizer": {"type": "sgd", "lr": 0.05}, "epochs": 2,
                                      "batch_size": 500, "seed": 7, "log_every": 0})";
constexpr const char* kNewConfig = R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 3,
                                      "batch_size": 500, "seed": 1, "log_every": 0})";
// A sanitized Debug build trains some twenty times slower (45 runs took 8
// minutes): fewer rounds there.
#ifdef __SANITIZE_ADDRESS__
constexpr int kRounds = 5;
#else
constexpr int kRounds = 20;
#endif
const std::vector<std::string> kOutputs{"o.chart.svg", "o.checkpoint.json", "o.json",
                                        "o.metrics.csv"};
constexpr const char* kCsvHeader =
    "epoch,lr,train_loss,train_accuracy,test_loss,test_accuracy,seconds,samples_per_second";

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> pieces;
  std::string piece;
  std::istringstream in(text);
  while (std::getline(in, piece, separator)) pieces.push_back(piece);
  return pieces;
}

// The rows of a metrics CSV without its timing columns (seconds and samples
// per second vary from run to run), or an empty optional with `why` when the
// text is not a whole CSV: a header, whole lines of 8 numbers each.
std::optional<std::vector<std::string>> csv_rows(const std::string& text, std::string& why) {
  if (text.empty() || text.back() != '\n') {
    why = "does not end with a whole line";
    return std::nullopt;
  }
  const std::vector<std::string> lines = split(text, '\n');
  if (lines.front() != kCsvHeader) {
    why = "header '" + lines.front() + "'";
    return std::nullopt;
  }
  std::vector<std::string> rows;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> fields = split(lines[i], ',');
    bool numbers = fields.size() == 8;
    for (const std::string& field : fields) {
      char* end = nullptr;
      std::strtod(field.c_str(), &end);
      numbers = numbers && !field.empty() && *end == '\0';
    }
    if (!numbers) {
      why = "line " + std::to_string(i + 1) + " '" + lines[i] + "'";
      return std::nullopt;
    }
    std::string row = fields[0];
    for (std::size_t f = 1; f < 6; ++f) row += "," + fields[f];
    rows.push_back(row);
  }
  return rows;
}

bool whole_svg(const std::string& text) {
  const std::size_t last = text.find_last_not_of(" \n");
  return text.rfind("<?xml", 0) == 0 && last != std::string::npos && last >= 5 &&
         text.compare(last - 5, 6, "</svg>") == 0;
}

bool is_stage(const std::string& name) { return name.starts_with(kStageDirectoryPrefix); }

// The versions of each output a reader may find: the earlier run's, and this
// run's after each epoch (index k - 1 for epoch k).
struct Versions {
  std::map<std::string, std::string> old;
  std::string trained;
  std::vector<std::string> checkpoints, charts;
  std::vector<std::string> csv_rows;  ///< this run's rows, without timings
  std::vector<std::string> old_csv_rows;
  std::chrono::microseconds duration{};  ///< of a whole run
  bool complete = false;                 ///< every reference run succeeded
};

class TrainKill : public ::testing::Test {
 protected:
  void SetUp() override {
    write_blank_digits(dir() / "digits");
    std::ofstream(dir() / "g.json") << linear_classifier_json(R"("init": {"rule": "zeros"})");
    std::ofstream(dir() / "old.json") << kOldConfig;
    std::ofstream(dir() / "new.json") << kNewConfig;
  }

  fs::path dir() const { return scratch_.path(); }

  std::vector<std::string> train_args(const std::string& config, const fs::path& out,
                                      std::optional<int> epochs = std::nullopt) const {
    std::vector<std::string> args{"train",       "g.json", "--config", config,
                                  "--data",      "mnist",  "--mnist-dir", "digits",
                                  "-o",          (out / "o.json").string()};
    if (epochs) {
      args.push_back("--epochs");
      args.push_back(std::to_string(*epochs));
    }
    return args;
  }

  ProcessResult train(const std::string& config, const fs::path& out,
                      const ProcessOptions& options = {},
                      std::optional<int> epochs = std::nullopt) const {
    std::vector<std::string> args = train_args(config, out, epochs);
    args.insert(args.begin(), NODEFLOW_BUILT_CLI);
    ProcessResult r = run_process(args, dir(), options);
    EXPECT_FALSE(r.sanitizer_report()) << r.describe();
    return r;
  }

  std::map<std::string, std::string> outputs_of(const fs::path& out) const {
    std::map<std::string, std::string> files;
    for (const std::string& name : kOutputs)
      if (fs::exists(out / name)) files[name] = read_bytes(out / name);
    return files;
  }

  static std::vector<std::string> entries(const fs::path& out) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(out))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  /// The earlier run's set and this run's versions, from uninterrupted runs
  /// into directories of their own (epoch k's checkpoint and chart are those
  /// of a k-epoch run: the schedule is constant and the shuffling stream
  /// advances once per epoch). Made once, for both tests.
  const Versions& versions() const {
    static const Versions v = make_versions();
    return v;
  }

  Versions make_versions() const {
    Versions v;
    EXPECT_EQ(train("old.json", dir() / "ref-old").exit_code, 0);
    v.old = outputs_of(dir() / "ref-old");
    std::string why;
    const auto old_rows = csv_rows(v.old.at("o.metrics.csv"), why);
    EXPECT_TRUE(old_rows) << why;
    if (old_rows) v.old_csv_rows = *old_rows;
    for (int k = 1; k <= kEpochs; ++k) {
      const fs::path ref = dir() / ("ref-" + std::to_string(k));
      const auto start = std::chrono::steady_clock::now();
      const ProcessResult r =
          train("new.json", ref, {}, k == kEpochs ? std::nullopt : std::optional<int>(k));
      v.duration = std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::steady_clock::now() - start);
      EXPECT_EQ(r.exit_code, 0) << r.describe();
      v.checkpoints.push_back(read_bytes(ref / "o.checkpoint.json"));
      v.charts.push_back(read_bytes(ref / "o.chart.svg"));
      v.trained = read_bytes(ref / "o.json");
      const auto rows = csv_rows(read_bytes(ref / "o.metrics.csv"), why);
      EXPECT_TRUE(rows && rows->size() == static_cast<std::size_t>(k)) << why;
      if (rows) v.csv_rows = *rows;
    }
    // The last checkpoint holds the trained weights; the sets differ.
    EXPECT_EQ(v.checkpoints.back(), v.trained);
    EXPECT_NE(v.old.at("o.json"), v.trained);
    EXPECT_NE(v.old.at("o.chart.svg"), v.charts.front());
    v.complete = !::testing::Test::HasFailure();
    return v;
  }

  /// Per file, what the header comment promises; returns how many of the
  /// files are of this run.
  int expect_whole_files(const fs::path& out, const Versions& v) const {
    const std::map<std::string, std::string> now = outputs_of(out);
    EXPECT_EQ(now.size(), kOutputs.size()) << "a file of the earlier set is gone";
    int fresh = 0;
    for (const auto& [name, bytes] : now) {
      bool old = bytes == v.old.at(name);
      bool ours = false;
      if (name == "o.json") ours = bytes == v.trained;
      if (name == "o.checkpoint.json")
        ours = std::find(v.checkpoints.begin(), v.checkpoints.end(), bytes) != v.checkpoints.end();
      if (name == "o.chart.svg")
        ours = std::find(v.charts.begin(), v.charts.end(), bytes) != v.charts.end();
      if (name == "o.metrics.csv") {
        std::string why;
        const auto rows = csv_rows(bytes, why);
        EXPECT_TRUE(rows) << name << ": " << why;
        old = rows == v.old_csv_rows;  // the timing columns vary from run to run
        ours = rows && !rows->empty() && rows->size() <= v.csv_rows.size() &&
               std::equal(rows->begin(), rows->end(), v.csv_rows.begin());
      }
      EXPECT_TRUE(old || ours) << name << " is neither the earlier file nor one of this run ("
                               << bytes.size() << " bytes)";
      fresh += ours;
      // What a reader does with the file works.
      if (name.ends_with(".json")) {
        EXPECT_NO_THROW(load_graph_file(out / name)) << name;
      }
      if (name == "o.chart.svg") {
        EXPECT_TRUE(whole_svg(bytes)) << name << " is not whole";
      }
    }
    return fresh;
  }

  /// Besides the outputs, only staging directories of killed saves; returns their number.
  static int expect_only_stages_left(const fs::path& out) {
    int stages = 0;
    for (const std::string& name : entries(out)) {
      if (std::find(kOutputs.begin(), kOutputs.end(), name) != kOutputs.end()) continue;
      EXPECT_TRUE(is_stage(name) && fs::is_directory(out / name)) << "left behind: " << name;
      stages += is_stage(name);
    }
    return stages;
  }

  /// The next train into `out` (the earlier run's configuration, restoring
  /// its set): it succeeds and leaves the four files and nothing else.
  void next_train(const fs::path& out, const Versions& v) const {
    const ProcessResult r = train("old.json", out);
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_EQ(entries(out), kOutputs);
    EXPECT_EQ(outputs_of(out).at("o.json"), v.old.at("o.json"));
    EXPECT_EQ(outputs_of(out).at("o.checkpoint.json"), v.old.at("o.checkpoint.json"));
  }

 private:
  ScratchDir scratch_{"nodeflow-train-kill"};
};

TEST_F(TrainKill, KilledAtRandomMomentsEachFileIsAWholeVersionAndTheNextTrainLeavesNothing) {
  const Versions& v = versions();
  ASSERT_TRUE(v.complete) << "the reference runs failed";
  const fs::path out = dir() / "out";
  ASSERT_EQ(train("old.json", out).exit_code, 0);

  // The first third of a run reads the digits, where a kill can change nothing.
  std::mt19937 rng(17);
  std::uniform_int_distribution<long long> when(v.duration.count() / 3, v.duration.count());
  int killed = 0, changed = 0, stages = 0;
  for (int round = 0; round < kRounds; ++round) {
    ProcessOptions options;
    options.kill_after = std::chrono::microseconds(when(rng));
    const ProcessResult r = train("new.json", out, options);
    ASSERT_TRUE(r.exit_code == 0 || r.signal == SIGKILL) << r.describe();
    killed += r.signal == SIGKILL;
    const int fresh = expect_whole_files(out, v);
    changed += fresh > 0;
    if (r.exit_code == 0) {
      EXPECT_EQ(fresh, static_cast<int>(kOutputs.size()));
      EXPECT_EQ(outputs_of(out).at("o.json"), v.trained);
    }
    stages += expect_only_stages_left(out);
    next_train(out, v);
    if (HasFailure()) {
      ADD_FAILURE() << "round " << round << ", killed after " << options.kill_after->count()
                    << " us";
      break;
    }
  }
  RecordProperty("killed", killed);
  RecordProperty("killed_with_files_replaced", changed);
  RecordProperty("staging_directories_left", stages);
}

TEST_F(TrainKill, KilledInsideACheckpointSaveTheNextTrainRemovesItsStagingDirectory) {
  if (!strace_works(dir())) GTEST_SKIP() << "strace cannot trace here";
  const Versions& v = versions();
  ASSERT_TRUE(v.complete) << "the reference runs failed";
  const fs::path out = dir() / "out";
  ASSERT_EQ(train("old.json", out).exit_code, 0);
  // The first save of a run is epoch 1's checkpoint: mkdirat (its staging
  // directory), flock (on that directory), write and fsync (the staged file),
  // flock (the target's directory), renameat, fsync (the directory).
  struct Point {
    const char* inject;
    bool replaced;  // the checkpoint of epoch 1 is in place
  };
#ifdef __SANITIZE_ADDRESS__
  // One train takes about 10 s in a sanitized build: the points either side
  // of the rename only.
  const std::vector<Point> points{{"fsync:signal=SIGKILL:when=1", false},
                                  {"fsync:signal=SIGKILL:when=2", true}};
#else
  const std::vector<Point> points{{"flock:signal=SIGKILL:when=1", false},
                                  {"fsync:signal=SIGKILL:when=1", false},
                                  {"flock:signal=SIGKILL:when=2", false},
                                  {"renameat,renameat2,rename:signal=SIGKILL:when=1", false},
                                  {"fsync:signal=SIGKILL:when=2", true}};
#endif
  for (const Point& point : points) {
    const ProcessResult r = run_traced({"-e", std::string("inject=") + point.inject},
                                       NODEFLOW_BUILT_CLI, train_args("new.json", out), dir());
    EXPECT_NE(r.exit_code, 0) << point.inject << "\n" << r.describe();
    expect_whole_files(out, v);
    EXPECT_EQ(outputs_of(out).at("o.checkpoint.json"),
              point.replaced ? v.checkpoints.front() : v.old.at("o.checkpoint.json"))
        << point.inject;
    EXPECT_EQ(outputs_of(out).at("o.json"), v.old.at("o.json")) << point.inject;
    EXPECT_EQ(expect_only_stages_left(out), 1) << point.inject;  // the kill was inside the save
    next_train(out, v);
    if (HasFailure()) {
      ADD_FAILURE() << "killed at " << point.inject;
      break;
    }
  }
}

}  // namespace
}  // namespace nodeflow::testing
