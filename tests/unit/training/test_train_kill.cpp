// `nodeflow train` SIGKILLed at random moments, inside a checkpoint save and
// at each rename of its final set, over the complete outputs of an earlier
// run (docs/training-config.md, "Saving and reloading").
//
// train saves two things: the checkpoint after every epoch, a file replaced
// atomically on its own, and at the end its final outputs, the trained graph
// OUT.json, the metrics OUT.metrics.csv and the chart OUT.chart.svg, as one
// set with the manifest .nodeflow-outputs.json (the mechanism of run's output
// sets). What a reader may rely on, whatever moment train is killed at:
// - every file is whole: OUT.checkpoint.json the previous file or the
//   weights after one of this run's epochs (a graph document that loads),
//   each final output the previous file or this run's;
// - the final outputs are all of the earlier run or, after the renames of
//   this run's set began, a mix without manifest beside a commit record
//   .nodeflow-commit, which the next save into the directory completes: after
//   it they are all of the earlier run or all of this one; while the manifest
//   exists, they are those it lists;
// - a killed save may leave its staging directory `.nodeflow-stage-*`, and
//   the next train into that directory removes it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

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
#include "support/checkpoint_text.hpp"
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
// Batches of 25: 8 steps per epoch of the 200 stand-in digits, so that
// kResumeConfig's checkpoints every 4 steps fall inside the epochs too.
constexpr const char* kNewConfig = R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 3,
                                      "batch_size": 25, "seed": 1, "log_every": 0})";
// A sanitized Debug build trains some twenty times slower (45 runs took 8
// minutes): fewer rounds there.
#ifdef __SANITIZE_ADDRESS__
constexpr int kRounds = 5;
#else
constexpr int kRounds = 20;
#endif
const std::vector<std::string> kOutputs{"o.chart.svg", "o.checkpoint.json", "o.json",
                                        "o.metrics.csv"};
// The final set, and everything a complete train leaves in its directory.
const std::vector<std::string> kFinalOutputs{"o.chart.svg", "o.json", "o.metrics.csv"};
const std::vector<std::string> kEntries{std::string(kOutputsManifestName), "o.chart.svg",
                                        "o.checkpoint.json", "o.json", "o.metrics.csv"};
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
  /// Checkpoints without their timings (without_timings): the training
  /// state's wall-clock times differ from run to run.
  std::vector<std::string> checkpoints, charts;
  std::size_t checkpoint_bytes = 0;  ///< the size of epoch 1's checkpoint file
  std::string first_checkpoint_file;  ///< epoch 1's checkpoint as written (to resume from)
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
                                  "--data",      "mnist:digits",
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
      if (fs::exists(out / name))
        files[name] = name == "o.checkpoint.json" ? without_timings(read_bytes(out / name))
                                                  : read_bytes(out / name);
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
      v.checkpoints.push_back(without_timings(read_bytes(ref / "o.checkpoint.json")));
      if (k == 1) {
        v.checkpoint_bytes = fs::file_size(ref / "o.checkpoint.json");
        v.first_checkpoint_file = read_bytes(ref / "o.checkpoint.json");
      }
      v.charts.push_back(read_bytes(ref / "o.chart.svg"));
      v.trained = read_bytes(ref / "o.json");
      const auto rows = csv_rows(read_bytes(ref / "o.metrics.csv"), why);
      EXPECT_TRUE(rows && rows->size() == static_cast<std::size_t>(k)) << why;
      if (rows) v.csv_rows = *rows;
    }
    // The last checkpoint holds the trained weights; the sets differ.
    EXPECT_EQ(graph_part(v.checkpoints.back()), v.trained);
    EXPECT_NE(v.old.at("o.json"), v.trained);
    EXPECT_NE(v.old.at("o.chart.svg"), v.charts.front());
    v.complete = !::testing::Test::HasFailure();
    return v;
  }

  /// Per file, what the header comment promises: each is the earlier
  /// run's or this run's, whole. Returns how many of the files are of this run.
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
      if (name == "o.chart.svg") ours = bytes == v.charts.back();  // drawn once, at the end
      if (name == "o.metrics.csv") {
        std::string why;
        const auto rows = csv_rows(bytes, why);
        EXPECT_TRUE(rows) << name << ": " << why;
        old = rows == v.old_csv_rows;  // the timing columns vary from run to run
        ours = rows == v.csv_rows;     // every epoch: written once, at the end
      }
      EXPECT_TRUE(old || ours) << name << " is neither the earlier file nor this run's ("
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

  enum class SetState { Old, New, Mixed };

  /// Whose the final outputs are: all the earlier run's, all this run's, or a mix.
  SetState final_state(const fs::path& out, const Versions& v) const {
    const std::map<std::string, std::string> now = outputs_of(out);
    int old = 0, fresh = 0;
    for (const std::string& name : kFinalOutputs) {
      const auto it = now.find(name);
      if (it == now.end()) continue;
      std::string why;
      if (name == "o.metrics.csv") {
        const auto rows = csv_rows(it->second, why);
        old += rows == v.old_csv_rows;
        fresh += rows == v.csv_rows;
      } else {
        old += it->second == v.old.at(name);
        fresh += it->second == (name == "o.json" ? v.trained : v.charts.back());
      }
    }
    const int all = static_cast<int>(kFinalOutputs.size());
    return old == all ? SetState::Old : fresh == all ? SetState::New : SetState::Mixed;
  }

  static const char* named(SetState s) {
    return s == SetState::Old ? "the earlier run's" : s == SetState::New ? "this run's" : "mixed";
  }

  /// Right after a kill: the files are whole, and the final set is one run's
  /// while the manifest exists (and lists it), a mix only beside a commit
  /// record. Returns the set's state.
  SetState expect_set_after_kill(const fs::path& out, const Versions& v) const {
    expect_whole_files(out, v);
    const SetState state = final_state(out, v);
    const OutdirState reader = inspect_outdir(out, dir());
    const bool record = fs::exists(out / kCommitRecordName);
    if (reader.manifest) {
      EXPECT_TRUE(reader.matches) << reader.report;
      EXPECT_EQ(reader.listed, kFinalOutputs) << reader.report;
    }
    if (state == SetState::Mixed) {
      EXPECT_FALSE(reader.manifest) << "a mixed set beside a manifest\n" << reader.report;
      EXPECT_TRUE(record) << "a mixed set without a commit record\n" << reader.report;
    }
    return state;
  }

  /// The next save into `out` (not a train: a convert into the directory,
  /// whose document is removed again) completes a set whose renames were
  /// killed: the final outputs are then one run's, listed by the manifest, and
  /// no commit record is left. Returns whose.
  SetState complete_by_next_save(const fs::path& out, const Versions& v) const {
    const ProcessResult r =
        run_process({NODEFLOW_BUILT_CLI, "convert", "g.json", (out / "probe.json").string()}, dir());
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    fs::remove(out / "probe.json");
    expect_whole_files(out, v);
    const SetState state = final_state(out, v);
    EXPECT_NE(state, SetState::Mixed) << "the next save left a mixed set";
    const OutdirState reader = inspect_outdir(out, dir());
    EXPECT_TRUE(reader.manifest && reader.matches) << reader.report;
    EXPECT_EQ(reader.listed, kFinalOutputs) << reader.report;
    EXPECT_FALSE(fs::exists(out / kCommitRecordName));
    return state;
  }

  /// Besides the outputs and the manifest, only staging directories of
  /// killed saves and a commit record; returns the number of staging directories.
  static int expect_only_stages_left(const fs::path& out) {
    int stages = 0;
    for (const std::string& name : entries(out)) {
      if (std::find(kEntries.begin(), kEntries.end(), name) != kEntries.end()) continue;
      if (name == kCommitRecordName) continue;
      EXPECT_TRUE(is_stage(name) && fs::is_directory(out / name)) << "left behind: " << name;
      stages += is_stage(name);
    }
    return stages;
  }

  /// The next train into `out` (the earlier run's configuration, restoring
  /// its set): it succeeds and leaves its files and manifest and nothing
  /// else: no staging directory, no commit record.
  void next_train(const fs::path& out, const Versions& v) const {
    const ProcessResult r = train("old.json", out);
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_EQ(entries(out), kEntries);
    EXPECT_EQ(outputs_of(out).at("o.json"), v.old.at("o.json"));
    EXPECT_EQ(outputs_of(out).at("o.checkpoint.json"), v.old.at("o.checkpoint.json"));
    EXPECT_EQ(final_state(out, v), SetState::Old);
  }

 private:
  ScratchDir scratch_{"nodeflow-train-kill"};
};

TEST_F(TrainKill, KilledAtRandomMomentsTheFinalOutputsAreOneRunsAndTheNextTrainLeavesNothing) {
  const Versions& v = versions();
  ASSERT_TRUE(v.complete) << "the reference runs failed";
  const fs::path out = dir() / "out";
  ASSERT_EQ(train("old.json", out).exit_code, 0);

  // The first third of a run reads the digits, where a kill can change nothing.
  std::mt19937 rng(17);
  std::uniform_int_distribution<long long> when(v.duration.count() / 3, v.duration.count());
  int killed = 0, changed = 0, stages = 0, replaced = 0, mixed = 0;
  for (int round = 0; round < kRounds; ++round) {
    ProcessOptions options;
    options.kill_after = std::chrono::microseconds(when(rng));
    const ProcessResult r = train("new.json", out, options);
    ASSERT_TRUE(r.exit_code == 0 || r.signal == SIGKILL) << r.describe();
    killed += r.signal == SIGKILL;
    changed += expect_whole_files(out, v) > 0;
    const SetState after_kill = expect_set_after_kill(out, v);
    mixed += after_kill == SetState::Mixed;
    if (r.exit_code == 0) {
      EXPECT_EQ(after_kill, SetState::New);
    }
    stages += expect_only_stages_left(out);
    // A commit record commits this run's set even before its first rename
    // (a kill between the two leaves the earlier run's files and the record):
    // the next save completes it. Without one, a whole set stays as it is.
    const bool record = fs::exists(out / kCommitRecordName);
    const SetState completed = complete_by_next_save(out, v);
    if (record) {
      EXPECT_EQ(completed, SetState::New) << "the next save did not complete a committed set";
    } else {
      EXPECT_EQ(completed, after_kill) << "the next save changed a complete set";
    }
    replaced += completed == SetState::New;
    next_train(out, v);
    if (HasFailure()) {
      ADD_FAILURE() << "round " << round << ", killed after " << options.kill_after->count()
                    << " us; the final set was " << named(after_kill) << " after the kill";
      break;
    }
  }
  RecordProperty("killed", killed);
  RecordProperty("killed_with_files_replaced", changed);
  RecordProperty("final_set_replaced", replaced);
  RecordProperty("final_set_mixed_until_the_next_save", mixed);
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
    EXPECT_EQ(expect_set_after_kill(out, v), SetState::Old) << point.inject;
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

TEST_F(TrainKill, KilledAtEachRenameOfItsFinalSetTheNextSaveLeavesOneRunsSet) {
  // strace kills the run exactly at its n-th rename, before the rename is
  // done. A 3-epoch run renames its checkpoint after each epoch (renames 1 to
  // 3), then its final set (serialization/atomic_file.cpp, install): the
  // commit record (4), then, after removing the manifest, o.json,
  // o.metrics.csv and o.chart.svg (5 to 7) and the new manifest (8). Killed
  // up to the record's rename, the run changed none of the final outputs;
  // killed after it, the set is torn (no manifest, the record beside it)
  // until the next save into the directory completes this run's set.
  if (!strace_works(dir())) GTEST_SKIP() << "strace cannot trace here";
  const Versions& v = versions();
  ASSERT_TRUE(v.complete) << "the reference runs failed";
  const fs::path out = dir() / "out";
  constexpr int kCheckpointRenames = kEpochs, kSetRenames = 5;
#ifdef __SANITIZE_ADDRESS__
  const std::vector<int> renames{kCheckpointRenames + 1, kCheckpointRenames + 3};
#else
  std::vector<int> renames;
  for (int n = kCheckpointRenames; n <= kCheckpointRenames + kSetRenames + 1; ++n)
    renames.push_back(n);
#endif
  ASSERT_EQ(train("old.json", out).exit_code, 0);
  for (const int n : renames) {
    const std::string inject = "rename,renameat,renameat2:signal=SIGKILL:when=" + std::to_string(n);
    const ProcessResult r =
        run_traced({"-e", "inject=" + inject}, NODEFLOW_BUILT_CLI, train_args("new.json", out), dir());
    const bool killed = n <= kCheckpointRenames + kSetRenames;
    if (killed) {
      EXPECT_NE(r.exit_code, 0) << inject << "\n" << r.describe();
    } else {
      EXPECT_EQ(r.exit_code, 0) << inject << "\n" << r.describe();
    }
    const SetState after_kill = expect_set_after_kill(out, v);
    const int record = kCheckpointRenames + 1;
    const bool torn = killed && n > record;
    EXPECT_EQ(fs::exists(out / kCommitRecordName), torn) << inject;
    EXPECT_EQ(fs::exists(out / kOutputsManifestName), !torn) << inject;
    // Files renamed so far: none up to the first file's rename, all at the manifest's.
    const SetState want = n <= record + 1 ? SetState::Old
                          : n <= record + 3 && killed ? SetState::Mixed
                                                      : SetState::New;
    EXPECT_EQ(after_kill, want) << inject << ": " << named(after_kill);
    EXPECT_EQ(complete_by_next_save(out, v), n <= record ? SetState::Old : SetState::New)
        << inject;
    next_train(out, v);
    if (HasFailure()) {
      ADD_FAILURE() << "killed at " << inject;
      break;
    }
  }
}

// Resuming (docs/training-config.md, "Checkpoints and resuming"): a run
// continued with --resume from a checkpoint ends with the bytes of the
// uninterrupted run's trained graph and the same metrics. From epoch 1's
// checkpoint of a 1-epoch run first; then from whatever checkpoint a run with
// a checkpoint every 4 steps (inside the epochs too) left when SIGKILLed at a
// random moment: the file is always a whole checkpoint that resumes.
constexpr const char* kResumeConfig = R"({"optimizer": {"type": "sgd", "lr": 0.1}, "epochs": 3,
                                         "batch_size": 25, "seed": 1, "log_every": 0,
                                         "checkpoint_every": 4})";

TEST_F(TrainKill, AResumedRunEndsBitIdenticalToTheUninterruptedOne) {
  const Versions& v = versions();
  ASSERT_TRUE(v.complete) << "the reference runs failed";
  const fs::path out = dir() / "resumed";
  fs::create_directories(out);
  // The reference runs may have been made in another test's directory.
  std::ofstream(out / "o.checkpoint.json", std::ios::binary) << v.first_checkpoint_file;
  std::vector<std::string> args = train_args("new.json", out);
  args.insert(args.begin(), NODEFLOW_BUILT_CLI);
  args.insert(args.end(), {"--resume", (out / "o.checkpoint.json").string()});
  const ProcessResult r = run_process(args, dir());
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.err.find("resuming at epoch 2/3, step 8"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(out / "o.json"), v.trained);
  std::string why;
  EXPECT_EQ(csv_rows(read_bytes(out / "o.metrics.csv"), why), v.csv_rows) << why;
  EXPECT_EQ(without_timings(read_bytes(out / "o.checkpoint.json")), v.checkpoints.back());

  // The finished run's checkpoint trains nothing more and says so (it logged
  // "resuming at epoch 4/3").
  const ProcessResult done = run_process(args, dir());
  ASSERT_EQ(done.exit_code, 0) << done.describe();
  EXPECT_NE(done.err.find("resuming after epoch 3, step "), std::string::npos) << done.err;
  EXPECT_NE(done.err.find("all 3 epoch(s) of the configuration, nothing is left to train"),
            std::string::npos)
      << done.err;
  EXPECT_EQ(done.err.find("epoch 4/3"), std::string::npos) << done.err;
  EXPECT_EQ(read_bytes(out / "o.json"), v.trained);

  // A graph without a training state is not a checkpoint.
  args.back() = (dir() / "g.json").string();
  const ProcessResult plain = run_process(args, dir());
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_NE(plain.err.find("a graph document without \"training_state\""), std::string::npos)
      << plain.err;
}

TEST_F(TrainKill, KilledAtRandomMomentsTheCheckpointLeftResumesToTheUninterruptedRun) {
  const Versions& v = versions();
  ASSERT_TRUE(v.complete) << "the reference runs failed";
  std::ofstream(dir() / "resume.json") << kResumeConfig;
  std::mt19937 rng(23);
  std::uniform_int_distribution<long long> when(v.duration.count() / 3, v.duration.count());
  int resumed = 0, without_checkpoint = 0;
  for (int round = 0; round < kRounds / 2; ++round) {
    const fs::path out = dir() / ("kill-resume-" + std::to_string(round));
    ProcessOptions options;
    options.kill_after = std::chrono::microseconds(when(rng));
    const ProcessResult killed = train("resume.json", out, options);
    ASSERT_TRUE(killed.exit_code == 0 || killed.signal == SIGKILL) << killed.describe();
    if (!fs::exists(out / "o.checkpoint.json")) {
      ++without_checkpoint;
      continue;
    }
    std::vector<std::string> args = train_args("resume.json", out);
    args.insert(args.begin(), NODEFLOW_BUILT_CLI);
    args.insert(args.end(), {"--resume", (out / "o.checkpoint.json").string()});
    const ProcessResult r = run_process(args, dir());
    ASSERT_EQ(r.exit_code, 0) << "round " << round << ", killed after "
                              << options.kill_after->count() << " us\n"
                              << r.describe();
    ++resumed;
    EXPECT_EQ(read_bytes(out / "o.json"), v.trained) << "round " << round;
    std::string why;
    EXPECT_EQ(csv_rows(read_bytes(out / "o.metrics.csv"), why), v.csv_rows) << why;
    if (HasFailure()) break;
  }
  RecordProperty("resumed", resumed);
  RecordProperty("killed_before_the_first_checkpoint", without_checkpoint);
}

// A checkpoint that cannot be written (docs/training-config.md, "Saving and
// reloading"): on a tmpfs with room for one checkpoint but not for a second
// one staged beside it, epoch 1's is saved and the later ones fail with a
// full disk. Each failure is a warning naming the last good checkpoint and
// its epoch, training goes on to the end, the final outputs (on another file
// system) are saved, and the tmpfs holds epoch 1's checkpoint and nothing
// else. Needs root (mount); CI runs as root.
using TrainFullDisk = TrainKill;

TEST_F(TrainFullDisk, ACheckpointOnAFullTmpfsIsAWarningAndTrainingGoesOn) {
  const Versions& v = versions();
  ASSERT_TRUE(v.complete) << "the reference runs failed";
  const fs::path small = dir() / "small";
  fs::create_directories(small);
  constexpr std::size_t kPage = 4096;
  const std::size_t pages = (v.checkpoint_bytes + kPage - 1) / kPage;
  ASSERT_GE(pages, 2u) << "a checkpoint of one page leaves no room to tell one from two";
  const std::string size = "size=" + std::to_string((2 * pages - 1) * kPage);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, size.c_str()) != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  struct Unmount {
    fs::path dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{small};

  const fs::path out = dir() / "out";
  const fs::path checkpoint = small / "ck.json";
  std::vector<std::string> args = train_args("new.json", out);
  args.insert(args.begin(), NODEFLOW_BUILT_CLI);
  args.insert(args.end(), {"--checkpoint", checkpoint.string()});
  const ProcessResult r = run_process(args, dir());
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  for (int epoch = 2; epoch <= kEpochs; ++epoch) {
    const std::string warning = "epoch " + std::to_string(epoch) + "/" + std::to_string(kEpochs) +
                                ": the checkpoint was not saved: ";
    const std::size_t at = r.err.find(warning);
    ASSERT_NE(at, std::string::npos) << r.describe();
    const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
    EXPECT_NE(line.find("No space left on device"), std::string::npos) << line;
    EXPECT_NE(line.find("the last good checkpoint is " + checkpoint.string() + " (epoch 1 of " +
                        std::to_string(kEpochs) + ")"),
              std::string::npos)
        << line;
    EXPECT_EQ(line.find("training goes on") != std::string::npos, epoch < kEpochs) << line;
  }
  EXPECT_EQ(r.err.find("epoch 1/" + std::to_string(kEpochs) + ": the checkpoint was not saved"),
            std::string::npos)
      << r.describe();
  // Training went on to the end: the final set is this run's, whole.
  EXPECT_EQ(read_bytes(out / "o.json"), v.trained);
  EXPECT_EQ(final_state(out, v), SetState::New);
  // The tmpfs holds epoch 1's checkpoint, a loadable document, and no staging directory.
  EXPECT_EQ(entries(small), std::vector<std::string>{"ck.json"});
  EXPECT_EQ(without_timings(read_bytes(checkpoint)), v.checkpoints.front());
  EXPECT_NO_THROW(load_graph_file(checkpoint));
}

}  // namespace
}  // namespace nodeflow::testing
