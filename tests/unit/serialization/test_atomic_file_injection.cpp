// Someone who can write to an output directory plants links and FIFOs where a
// save would put its temporary files (names that used to be predictable:
// .<file>.tmp-<pid>-<n>) or its commit record: no save may write through
// them, rename them into place, block on them or create a file elsewhere.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"
#include "support/files.hpp"
#include "support/output_sets.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.insert(entry.path().filename().string());
  return names;
}

class PlantedFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    write_text(victim(), "the victim's own file\n");
    write_text(dir() / "g.json", relu_fanout_graph(3, 4));
    write_ramp(dir() / "a.npy", 4, 1.0f);
    fs::create_directories(out());
  }

  fs::path dir() const { return scratch_.path(); }
  fs::path out() const { return dir() / "out"; }
  fs::path victim() const { return dir() / "victim.txt"; }
  fs::path elsewhere() const { return dir() / "created-through-a-link"; }

  /// Plants, for each file, 120 entries at the names its temporary file
  /// would have had in process `pid`: links to the victim, dangling links
  /// to `elsewhere()`, FIFOs.
  void plant(pid_t pid, const std::vector<std::string>& files) {
    for (const std::string& file : files)
      for (int n = 0; n < 120; ++n) {
        const fs::path name =
            out() / ("." + file + ".tmp-" + std::to_string(pid) + "-" + std::to_string(n));
        if (n % 3 == 0) fs::create_symlink(victim(), name);
        if (n % 3 == 1) fs::create_symlink(elsewhere(), name);
        if (n % 3 == 2) {
          ASSERT_EQ(::mkfifo(name.c_str(), 0666), 0) << name;
        }
        planted_.insert(name.filename().string());
      }
  }

  /// Nothing outside the intended files changed or appeared, and what was
  /// planted is as it was.
  void expect_untouched(const std::set<std::string>& written) const {
    EXPECT_EQ(read_bytes(victim()), "the victim's own file\n");
    EXPECT_FALSE(fs::exists(fs::symlink_status(elsewhere())));
    std::set<std::string> expected = planted_;
    expected.insert(written.begin(), written.end());
    EXPECT_EQ(names_in(out()), expected);
    for (const std::string& name : planted_) {
      const auto status = fs::symlink_status(out() / name);
      EXPECT_TRUE(fs::is_symlink(status) || fs::is_fifo(status)) << name;
    }
    for (const std::string& name : written)
      EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out() / name))) << name;
  }

  std::set<std::string> planted_;

 private:
  ScratchDir scratch_{"nodeflow-planted"};
};

TEST_F(PlantedFiles, RunWritesNoneOfThePlantedNames) {
  ProcessOptions options;
  options.before_exec = [&](pid_t pid) { plant(pid, {"y0.npy", "y1.npy", "y2.npy"}); };
  const ProcessResult r = run_process(
      {NODEFLOW_BUILT_CLI, "run", "g.json", "-i", "x=a.npy", "-o", "out"}, dir(), options);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  expect_untouched({"y0.npy", "y1.npy", "y2.npy", ".nodeflow-outputs.json"});
  const OutdirState state = inspect_outdir(out(), dir());
  EXPECT_TRUE(state.manifest && state.matches) << state.report;
}

TEST_F(PlantedFiles, ConvertWritesNoneOfThePlantedNames) {
  ProcessOptions options;
  options.before_exec = [&](pid_t pid) { plant(pid, {"doc.json"}); };
  const ProcessResult r =
      run_process({NODEFLOW_BUILT_CLI, "convert", "g.json", "out/doc.json"}, dir(), options);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  expect_untouched({"doc.json"});
}

TEST_F(PlantedFiles, TheLibrarysSavesWriteNoneOfThePlantedNames) {
  // This process's own names (its counter is somewhere below 120).
  plant(::getpid(), {"net.json"});
  write_file_atomically(out() / "net.json", "{}\n");
  expect_untouched({"net.json"});
  EXPECT_EQ(read_bytes(out() / "net.json"), "{}\n");
}

TEST_F(PlantedFiles, APlantedCommitRecordIsRefusedNotFollowed) {
  const auto run = [&] {
    return run_process({NODEFLOW_BUILT_CLI, "run", "g.json", "-i", "x=a.npy", "-o", "out"}, dir());
  };
  ASSERT_EQ(run().exit_code, 0);
  const OutdirState before = inspect_outdir(out(), dir());
  for (const std::string kind : {"link", "fifo", "garbage"}) {
    const fs::path record = out() / ".nodeflow-commit";
    if (kind == "link") fs::create_symlink(victim(), record);
    if (kind == "fifo") {
      ASSERT_EQ(::mkfifo(record.c_str(), 0666), 0);
    }
    if (kind == "garbage") write_text(record, "y0.npy\n");
    const ProcessResult r = run();  // a FIFO must not block it: bounded by the timeout
    EXPECT_EQ(r.exit_code, 1) << kind << "\n" << r.describe();
    EXPECT_NE(r.err.find("out/.nodeflow-commit (the commit record"), std::string::npos)
        << r.describe();
    EXPECT_NE(r.err.find("remove it"), std::string::npos) << r.describe();
    EXPECT_EQ(read_bytes(victim()), "the victim's own file\n");
    const OutdirState after = inspect_outdir(out(), dir());
    EXPECT_EQ(after.files, before.files) << after.report;
    EXPECT_TRUE(after.manifest && after.matches) << after.report;
    fs::remove(record);
    EXPECT_EQ(run().exit_code, 0) << kind;
  }
}

TEST(AtomicFileGroup, RefusesAFileOutsideItsDirectoryBeforeReplacingAny) {
  const ScratchDir scratch("nodeflow-group");
  const fs::path a = scratch.path() / "a", b = scratch.path() / "b";
  fs::create_directories(a);
  fs::create_directories(b);
  write_text(a / "x.npy", "old");
  fs::create_symlink(b / "y.npy", a / "y.npy");  // a link out of the set's directory
  AtomicFileGroup group(a);
  try {
    group.add(a / "y.npy", "new");
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("it is not in " + a.string()), std::string::npos)
        << e.what();
  }
  group.add(a / "x.npy", "new");
  EXPECT_THROW(group.add(a / "x.npy", "twice"), IoError);
  EXPECT_EQ(read_bytes(a / "x.npy"), "old");
}

TEST(AtomicFileGroup, CommitsAllFilesAndTheMarkerLast) {
  const ScratchDir scratch("nodeflow-group");
  const fs::path d = scratch.path();
  write_text(d / "set.done", "old marker");
  AtomicFileGroup group(d);
  group.add(d / "one", "1");
  group.add(d / "two", "2");
  group.set_marker(d / "set.done", "new marker");
  EXPECT_EQ(read_bytes(d / "set.done"), "old marker");
  EXPECT_FALSE(fs::exists(d / "one"));
  group.commit();
  EXPECT_EQ(read_bytes(d / "one"), "1");
  EXPECT_EQ(read_bytes(d / "two"), "2");
  EXPECT_EQ(read_bytes(d / "set.done"), "new marker");
  EXPECT_EQ(names_in(d), (std::set<std::string>{"one", "two", "set.done"}));
}

TEST(AtomicFileGroup, AGroupNotCommittedLeavesNothing) {
  const ScratchDir scratch("nodeflow-group");
  {
    AtomicFileGroup group(scratch.path());
    group.add(scratch.path() / "one", "1");
  }
  EXPECT_TRUE(fs::is_empty(scratch.path()));
}

}  // namespace
}  // namespace nodeflow::testing
