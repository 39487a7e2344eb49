// The outputs of `nodeflow run` / `backward` become visible as a complete set
// or not at all (README, "The command line"): killed runs, concurrent runs,
// the file-size limit, many outputs, and outputs that are the run's inputs.
// Each test runs the `nodeflow` binary of this build tree and inspects OUTDIR
// as a reader would (tests/support/outputs_check.py).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/files.hpp"
#include "support/cli_fixture.hpp"
#include "support/output_sets.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kWidth = 8;

class OutputSets : public CliTest {
 protected:
  OutputSets() : CliTest(NODEFLOW_BUILT_CLI, "nodeflow-output-sets") {}

  OutdirState inspect(const fs::path& outdir) const { return inspect_outdir(outdir, dir()); }

  /// `nodeflow args` under strace with `options` (its trace to /dev/null
  /// unless they say otherwise).
  ProcessResult traced(const std::vector<std::string>& options,
                       const std::vector<std::string>& args) const {
    return run_traced(options, NODEFLOW_BUILT_CLI, args, dir());
  }

  /// A graph of `outputs` Relu outputs and inputs "a" (1, 2, ...) and "b"
  /// (-1, 0, ...), whose runs give two different sets of files.
  void make_fanout(std::size_t outputs) {
    write_text("g.json", relu_fanout_graph(outputs, kWidth));
    write_ramp(dir() / "a.npy", kWidth, 1.0f);
    write_ramp(dir() / "b.npy", kWidth, -1.0f);
  }

  std::vector<std::string> run_args(const std::string& input, const fs::path& outdir) const {
    return {"run", "g.json", "-i", "x=" + input + ".npy", "-o", outdir.string()};
  }

  /// The files of an uninterrupted run with `input`, written to a directory of their own.
  std::map<std::string, std::string> reference_set(const std::string& input) {
    const fs::path ref = dir() / ("ref-" + input);
    const ProcessResult r = nodeflow(run_args(input, ref));
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    const OutdirState state = inspect(ref);
    EXPECT_TRUE(state.manifest && state.matches) << state.report;
    return state.files;
  }

  /// A write into `outdir` by another command (convert): it completes the set
  /// of a killed run and removes what dead processes left there.
  void next_write(const fs::path& outdir) const {
    const ProcessResult r = nodeflow({"convert", "g.json", (outdir / "other.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
  }

  /// A reader's view after a command into `outdir` ended (killed or not):
  /// every file is whole (one of the two versions), and a manifest, when
  /// there is one, vouches for one complete set.
  void expect_no_torn_file(const fs::path& outdir, const std::map<std::string, std::string>& a,
                           const std::map<std::string, std::string>& b) const {
    const OutdirState state = inspect(outdir);
    for (const auto& [name, sha] : state.files)
      EXPECT_TRUE(sha == a.at(name) || sha == b.at(name)) << name << " is torn\n" << state.report;
    if (state.manifest) {
      EXPECT_TRUE(state.matches) << state.report;
      EXPECT_TRUE(state.files == a || state.files == b) << state.report;
    }
  }

  /// After the next write: one complete set, vouched for, and nothing left behind.
  std::map<std::string, std::string> expect_complete_set(
      const fs::path& outdir, const std::map<std::string, std::string>& a,
      const std::map<std::string, std::string>& b) const {
    const OutdirState state = inspect(outdir);
    EXPECT_TRUE(state.manifest && state.matches) << state.report;
    EXPECT_TRUE(state.files == a || state.files == b) << "a mixed set\n" << state.report;
    EXPECT_TRUE(state.stale.empty()) << "left behind\n" << state.report;
    return state.files;
  }
};

TEST_F(OutputSets, ARunWritesAManifestOfItsFiles) {
  make_fanout(3);
  const ProcessResult r = nodeflow(run_args("a", dir() / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const OutdirState state = inspect(dir() / "out");
  EXPECT_TRUE(state.manifest && state.matches) << state.report;
  EXPECT_EQ(state.listed, (std::vector<std::string>{"y0.npy", "y1.npy", "y2.npy"}));
  EXPECT_TRUE(state.stale.empty()) << state.report;
}

TEST_F(OutputSets, RunKilledAtRandomPointsLeavesOneCompleteSetAfterTheNextWrite) {
  // 200 outputs: the renames take long enough for some kills to land among them.
  make_fanout(200);
  const auto a = reference_set("a");
  const auto start = std::chrono::steady_clock::now();
  const auto b = reference_set("b");
  const auto duration = std::chrono::steady_clock::now() - start;
  const fs::path out = dir() / "out";
  ASSERT_EQ(nodeflow(run_args("a", out)).exit_code, 0);

  std::mt19937 rng(17);
  const auto span = std::chrono::duration_cast<std::chrono::microseconds>(duration);
  std::uniform_int_distribution<long long> when(0, span.count());
  int killed = 0, torn_until_next_write = 0;
  for (int round = 0; round < 30; ++round) {
    const std::string input = round % 2 == 0 ? "b" : "a";
    ProcessOptions options;
    options.kill_after = std::chrono::microseconds(when(rng));
    const ProcessResult r = nodeflow(run_args(input, out), options);
    ASSERT_TRUE(r.exit_code == 0 || r.signal == SIGKILL) << r.describe();
    killed += r.signal == SIGKILL;
    expect_no_torn_file(out, a, b);
    torn_until_next_write += !inspect(out).manifest;
    next_write(out);
    const auto now = expect_complete_set(out, a, b);
    if (r.exit_code == 0) {
      EXPECT_EQ(now, input == "a" ? a : b);
    }
    if (HasFailure()) {
      ADD_FAILURE() << "round " << round << ", killed after " << options.kill_after->count()
                    << " us";
      break;
    }
  }
  RecordProperty("killed", killed);
  RecordProperty("manifest_absent_after_kill", torn_until_next_write);
}

TEST_F(OutputSets, RunKilledAtEachRenameIsCompletedByTheNextWrite) {
  // strace kills the run exactly at its n-th rename: before the commit
  // record, between the files, before the manifest.
  if (!strace_works(dir())) GTEST_SKIP() << "strace cannot trace here";
  make_fanout(4);
  const auto a = reference_set("a");
  const auto b = reference_set("b");
  const fs::path out = dir() / "out";
  for (int n = 1; n <= 7; ++n) {
    ASSERT_EQ(nodeflow(run_args("a", out)).exit_code, 0);
    const ProcessResult r = traced(
        {"-e", "inject=rename,renameat,renameat2:signal=SIGKILL:when=" + std::to_string(n)},
        run_args("b", out));
    // 6 renames (the record, 4 files, the manifest): the 7th run is not killed.
    if (n <= 6) {
      EXPECT_NE(r.exit_code, 0) << "rename " << n << "\n" << r.describe();
    }
    expect_no_torn_file(out, a, b);
    next_write(out);
    const auto now = expect_complete_set(out, a, b);
    // Killed before its first rename (the record's), the run changed nothing.
    EXPECT_EQ(now, n == 1 ? a : b) << "killed at rename " << n;
    if (HasFailure()) break;
  }
}

TEST_F(OutputSets, RunKilledBeforeItsRenamesLeavesTheOldSetAndNothingAfterTheNextWrite) {
  if (!strace_works(dir())) GTEST_SKIP() << "strace cannot trace here";
  make_fanout(4);
  const auto a = reference_set("a");
  const auto b = reference_set("b");
  const fs::path out = dir() / "out";
  ASSERT_EQ(nodeflow(run_args("a", out)).exit_code, 0);
  // Killed when its staged files are complete, before it takes the lock.
  const ProcessResult r =
      traced({"-e", "inject=syncfs,flock:signal=SIGKILL:when=1"}, run_args("b", out));
  EXPECT_NE(r.exit_code, 0) << r.describe();
  const OutdirState killed = inspect(out);
  EXPECT_TRUE(killed.manifest && killed.matches) << killed.report;
  EXPECT_EQ(killed.files, a) << killed.report;
  next_write(out);
  EXPECT_EQ(expect_complete_set(out, a, b), a);
}

TEST_F(OutputSets, ConvertKilledAtRandomPointsLeavesTheOldOrTheNewDocument) {
  // A 2 MiB initializer: most of the time goes into writing the document.
  write_text("big.json",
             R"({"format": "nodeflow.graph", "version": 1, "name": "big",
  "inputs": [{"name": "x", "dtype": "float32", "shape": [1]}], "outputs": ["y"],
  "initializers": [{"name": "w", "dtype": "float32", "shape": [512, 1024],
                    "init": {"rule": "normal", "seed": 3}}],
  "nodes": [{"op_type": "Relu", "name": "r", "inputs": ["x"], "specified_outputs_name": ["y"]}]})");
  make_fanout(1);
  ASSERT_EQ(nodeflow({"convert", "big.json", "big.ref.json"}).exit_code, 0);
  ASSERT_EQ(nodeflow({"convert", "g.json", "small.ref.json"}).exit_code, 0);
  const std::string big = read_bytes(dir() / "big.ref.json");
  const std::string small = read_bytes(dir() / "small.ref.json");
  const fs::path out = dir() / "out";
  fs::create_directories(out);

  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(nodeflow({"convert", "big.json", (out / "doc.json").string()}).exit_code, 0);
  const auto span = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  std::mt19937 rng(29);
  std::uniform_int_distribution<long long> when(0, span.count());
  for (int round = 0; round < 30; ++round) {
    ASSERT_EQ(nodeflow({"convert", "g.json", (out / "doc.json").string()}).exit_code, 0);
    ProcessOptions options;
    options.kill_after = std::chrono::microseconds(when(rng));
    const ProcessResult r = nodeflow({"convert", "big.json", (out / "doc.json").string()}, options);
    ASSERT_TRUE(r.exit_code == 0 || r.signal == SIGKILL) << r.describe();
    const std::string now = read_bytes(out / "doc.json");
    EXPECT_TRUE(now == small || now == big) << "a torn document of " << now.size() << " bytes";
    if (r.exit_code == 0) {
      EXPECT_EQ(now, big);
    }
    // The next save into the directory removes what the killed one left.
    ASSERT_EQ(nodeflow({"convert", "g.json", (out / "other.json").string()}).exit_code, 0);
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(out)) {
      const std::string name = entry.path().filename().string();
      if (name != "doc.json" && name != "other.json") left.push_back(name);
    }
    EXPECT_TRUE(left.empty()) << "left behind: " << left.front();
    if (HasFailure()) {
      ADD_FAILURE() << "round " << round << ", killed after " << options.kill_after->count()
                    << " us";
      break;
    }
  }
}

TEST_F(OutputSets, ConcurrentRunsIntoOneDirectoryLeaveOneCompleteSet) {
  constexpr int kRuns = 8;
  write_text("g.json", relu_fanout_graph(100, kWidth));
  std::vector<std::map<std::string, std::string>> sets;
  std::vector<std::string> inputs;
  for (int k = 0; k < kRuns; ++k) {
    inputs.push_back(std::string("v") += std::to_string(k));
    write_ramp(dir() / (inputs.back() + ".npy"), kWidth, static_cast<float>(k));
    sets.push_back(reference_set(inputs.back()));
  }
  const fs::path out = dir() / "out";
  for (int round = 0; round < 5; ++round) {
    std::vector<ProcessResult> results(kRuns);
    std::vector<std::thread> threads;
    for (int k = 0; k < kRuns; ++k)
      threads.emplace_back([&, k] { results[k] = nodeflow(run_args(inputs[k], out)); });
    for (auto& thread : threads) thread.join();
    for (const auto& r : results) ASSERT_EQ(r.exit_code, 0) << r.describe();
    const OutdirState state = inspect(out);
    EXPECT_TRUE(state.manifest && state.matches) << "round " << round << "\n" << state.report;
    EXPECT_NE(std::find(sets.begin(), sets.end(), state.files), sets.end())
        << "round " << round << ": a mixed set\n" << state.report;
    EXPECT_TRUE(state.stale.empty()) << state.report;
    if (HasFailure()) break;
  }
}

TEST_F(OutputSets, TheFileSizeLimitIsAClearErrorAndLeavesNoStagedFile) {
  // 4096 floats per output: 16 KiB files, over an 8 KiB `ulimit -f`.
  constexpr std::int64_t kWide = 4096;
  write_text("g.json", relu_fanout_graph(2, kWide));
  write_ramp(dir() / "a.npy", kWide, 1.0f);
  write_ramp(dir() / "b.npy", kWide, -1.0f);
  const fs::path out = dir() / "out";
  ASSERT_EQ(nodeflow(run_args("a", out)).exit_code, 0);
  const OutdirState before = inspect(out);

  ProcessOptions limited;
  limited.file_size_limit = 8192;
  const ProcessResult r = nodeflow(run_args("b", out), limited);
  EXPECT_EQ(r.exit_code, kFailure) << r.describe();
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.describe();
  const OutdirState after = inspect(out);
  EXPECT_EQ(after.files, before.files) << after.report;
  EXPECT_TRUE(after.manifest && after.matches) << after.report;
  EXPECT_TRUE(after.stale.empty()) << after.report;
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 3);

  // One file: convert.
  const ProcessResult c = nodeflow({"convert", NODEFLOW_EXAMPLES_DIR "/lenet5.json", "l.json"},
                                   [] {
                                     ProcessOptions o;
                                     o.file_size_limit = 8192;  // the document is 324 KiB
                                     return o;
                                   }());
  EXPECT_EQ(c.exit_code, kFailure) << c.describe();
  EXPECT_NE(c.err.find("cannot write l.json: write: File too large"), std::string::npos)
      << c.describe();
  for (const auto& entry : fs::directory_iterator(dir()))
    EXPECT_NE(entry.path().filename().string().rfind(".nodeflow-stage-", 0), 0u) << entry.path();
  EXPECT_FALSE(fs::exists(dir() / "l.json"));
}

TEST_F(OutputSets, SyncCallsDoNotGrowWithTheNumberOfOutputs) {
  // One fsync per file and per rename made 20,000 outputs take 52 s.
  if (!strace_works(dir())) GTEST_SKIP() << "strace cannot trace here";
  const auto sync_calls = [&](std::size_t outputs) {
    write_text("g.json", relu_fanout_graph(outputs, kWidth));
    write_ramp(dir() / "a.npy", kWidth, 1.0f);
    const ProcessResult r =
        traced({"-qq", "-o", "trace.txt", "-e", "trace=fsync,fdatasync,syncfs,sync"},
               run_args("a", dir() / ("out" + std::to_string(outputs))));
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    std::istringstream trace(read_bytes(dir() / "trace.txt"));
    int calls = 0;
    for (std::string line; std::getline(trace, line);)
      calls +=
          line.find("sync(") != std::string::npos && line.find("resumed>") == std::string::npos;
    return calls;
  };
  const int few = sync_calls(10);
  const int many = sync_calls(300);
  EXPECT_EQ(few, many);
  EXPECT_LE(many, 6);
}

TEST_F(OutputSets, TwoThousandOutputsAreWrittenAsOneSet) {
  // bench/output_sets.sh times 20,000.
  write_text("g.json", relu_fanout_graph(2000, 2));
  write_ramp(dir() / "a.npy", 2, 1.0f);
  const ProcessResult r = nodeflow({"run", "g.json", "-i", "x=a.npy", "-o", "out"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const OutdirState state = inspect(dir() / "out");
  EXPECT_TRUE(state.manifest && state.matches);
  EXPECT_EQ(state.listed.size(), 2000u);
  EXPECT_EQ(state.files.size(), 2000u);
  EXPECT_TRUE(state.stale.empty());
}

TEST_F(OutputSets, AFullDiskLeavesTheOldSet) {
  // A 48 KiB tmpfs holds one set of two 16 KiB outputs, not a second one staged beside it.
  const fs::path small = dir() / "small";
  fs::create_directories(small);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=48k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  struct Unmount {
    fs::path dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{small};
  constexpr std::int64_t kWide = 4096;
  write_text("g.json", relu_fanout_graph(2, kWide));
  write_ramp(dir() / "a.npy", kWide, 1.0f);
  write_ramp(dir() / "b.npy", kWide, -1.0f);
  const fs::path out = small / "out";
  ASSERT_EQ(nodeflow(run_args("a", out)).exit_code, 0);
  const OutdirState before = inspect(out);
  const ProcessResult r = nodeflow(run_args("b", out));
  EXPECT_EQ(r.exit_code, kFailure) << r.describe();
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.describe();
  const OutdirState after = inspect(out);
  EXPECT_TRUE(after.manifest && after.matches) << after.report;
  EXPECT_EQ(after.files, before.files);
  EXPECT_TRUE(after.stale.empty()) << after.report;
}

TEST_F(OutputSets, ConvertWritesToStandardOutputAndNamesAPipe) {
  make_fanout(1);
  ASSERT_EQ(nodeflow({"convert", "g.json", "ref.json"}).exit_code, 0);
  const ProcessResult dash = nodeflow({"convert", "g.json", "-"});
  EXPECT_EQ(dash.exit_code, 0) << dash.describe();
  EXPECT_EQ(dash.out, read_bytes(dir() / "ref.json"));
  EXPECT_FALSE(fs::exists(dir() / "-"));
  // /dev/stdout of a command piped on is a pipe, which no file can replace.
  const ProcessResult piped = run_process(
      {"/bin/sh", "-c", "{ \"$0\" convert g.json /dev/stdout; echo \"status $?\" >&2; } | cat",
       NODEFLOW_BUILT_CLI},
      dir());
  EXPECT_NE(piped.err.find("error: cannot write /dev/stdout: it is a pipe"), std::string::npos)
      << piped.describe();
  EXPECT_NE(piped.err.find("give - as OUT to write to standard output"), std::string::npos)
      << piped.describe();
  EXPECT_NE(piped.err.find("status 1"), std::string::npos) << piped.describe();
  EXPECT_EQ(piped.out, "");
  ASSERT_EQ(::mkfifo((dir() / "fifo").c_str(), 0600), 0);
  const ProcessResult fifo = nodeflow({"convert", "g.json", "fifo"});
  EXPECT_EQ(fifo.exit_code, kFailure) << fifo.describe();
  EXPECT_NE(fifo.err.find("cannot write fifo: it is a FIFO"), std::string::npos) << fifo.describe();
  EXPECT_NE(fifo.err.find("give - as OUT"), std::string::npos) << fifo.describe();
}

class OutputIsInput : public OutputSets {
 protected:
  void SetUp() override {
    // The issue's add.json: y = a + b.
    write_text("add.json", R"({"format": "nodeflow.graph", "version": 1, "name": "add",
  "inputs": [{"name": "a", "dtype": "float32", "shape": [1, 8]},
             {"name": "b", "dtype": "float32", "shape": [1, 8]}],
  "outputs": ["y"],
  "nodes": [{"op_type": "Add", "name": "add", "inputs": ["a", "b"],
             "specified_outputs_name": ["y"]}]})");
    write_ramp(dir() / "a.npy", kWidth, 1.0f);
    write_ramp(dir() / "b.npy", kWidth, 10.0f);
    ASSERT_EQ(nodeflow({"run", "add.json", "-i", "a=a.npy", "-i", "b=b.npy", "-o", "o"}).exit_code,
              0);
    before_ = read_bytes(dir() / "o" / "y.npy");
  }

  void expect_refused(const std::vector<std::string>& args, const std::string& output,
                      const std::string& input) {
    const ProcessResult r = nodeflow(args);
    EXPECT_EQ(r.exit_code, kUsage) << r.describe();
    EXPECT_NE(r.err.find("would be written to " + output), std::string::npos) << r.describe();
    EXPECT_NE(r.err.find(input), std::string::npos) << r.describe();
    EXPECT_EQ(read_bytes(dir() / "o" / "y.npy"), before_);
  }

  std::string before_;
};

TEST_F(OutputIsInput, RunRefusesToReplaceItsOwnInput) {
  expect_refused({"run", "add.json", "-i", "a=o/y.npy", "-i", "b=b.npy", "-o", "o"}, "o/y.npy",
                 "-i a=o/y.npy");
}

TEST_F(OutputIsInput, OtherSpellingsOfTheInputAreTheSameFile) {
  fs::create_directories(dir() / "d");
  fs::create_hard_link(dir() / "o" / "y.npy", dir() / "hard.npy");
  fs::create_symlink("o/y.npy", dir() / "soft.npy");
  for (const std::string input : {"d/../o/y.npy", "./o/y.npy", "hard.npy", "soft.npy"})
    expect_refused({"run", "add.json", "-i", "a=" + input, "-i", "b=b.npy", "-o", "o"}, "o/y.npy",
                   "-i a=" + input);
  // The output directory through a link, the input by its own name.
  fs::create_directory_symlink("o", dir() / "o-link");
  expect_refused({"run", "add.json", "-i", "a=o/y.npy", "-i", "b=b.npy", "-o", "o-link"},
                 "o-link/y.npy", "-i a=o/y.npy");
}

TEST_F(OutputIsInput, BackwardRefusesToReplaceAGradientItReads) {
  // backward writes o/a.grad.npy; here it is also the -g file of y.
  fs::copy_file(dir() / "a.npy", dir() / "o" / "a.grad.npy");
  const std::string seed = read_bytes(dir() / "o" / "a.grad.npy");
  const ProcessResult r = nodeflow({"backward", "add.json", "-i", "a=a.npy", "-i", "b=b.npy", "-g",
                                    "y=o/a.grad.npy", "-o", "o"});
  EXPECT_EQ(r.exit_code, kUsage) << r.describe();
  EXPECT_NE(r.err.find("the gradient of 'a' would be written to o/a.grad.npy, which is -g "
                       "y=o/a.grad.npy"),
            std::string::npos)
      << r.describe();
  EXPECT_EQ(read_bytes(dir() / "o" / "a.grad.npy"), seed);
  // And an input of backward, as for run.
  expect_refused({"backward", "add.json", "-i", "a=o/y.npy", "-i", "b=b.npy", "-o", "o"},
                 "o/y.npy", "-i a=o/y.npy");
}

}  // namespace
}  // namespace nodeflow::testing
