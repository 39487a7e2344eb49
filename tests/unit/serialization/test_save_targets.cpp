// Where a save may land (serialization/atomic_file.hpp, final_target and
// check_replaceable): not through another user's link, not onto the
// directory's own bookkeeping, not onto an open file of the process by name,
// not with a planted file's mode; and run/backward never replace their GRAPH.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <span>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"
#include "serialization/npy.hpp"
#include "support/error_of.hpp"
#include "support/files.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kOtherUser = 54321;  // no account needed: only root can lchown to it

std::string message_of(const fs::path& target) {
  return error_of<IoError>([&] { write_file_atomically(target, "new\n"); });
}

const char* kAddGraph = R"({"format": "nodeflow.graph", "version": 1,
  "inputs": [{"name": "a", "dtype": "float32", "shape": [2]}],
  "outputs": ["y"],
  "nodes": [{"op_type": "Relu", "name": "y", "inputs": ["a"]}]})";

// Someone who can write to a shared directory plants a link at a name a
// command derives (OUT.checkpoint.json): following it would replace any file
// of ours. The kernel's protected_symlinks rule does not cover links that the
// save resolves itself, so the save refuses them.
TEST(SaveTargets, AnotherUsersLinkIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a link of another user needs root";
  ScratchDir scratch("nodeflow-save-link");
  const fs::path victim = scratch.path() / "victim.txt";
  write_text(victim, "precious\n");
  const fs::path planted = scratch.path() / "m.checkpoint.json";
  fs::create_symlink(victim, planted);
  ASSERT_EQ(::lchown(planted.c_str(), kOtherUser, kOtherUser), 0);
  const std::string message = message_of(planted);
  EXPECT_NE(message.find("is a symbolic link of another user (uid 54321)"), std::string::npos)
      << message;
  EXPECT_EQ(read_bytes(victim), "precious\n");
  EXPECT_TRUE(fs::is_symlink(planted));
  // Our own links (and root's) are still followed.
  ASSERT_EQ(::lchown(planted.c_str(), ::geteuid(), ::getegid()), 0);
  EXPECT_NO_THROW(write_file_atomically(planted, "new\n"));
  EXPECT_EQ(read_bytes(victim), "new\n");
}

TEST(SaveTargets, OnlyTheOwnersPermissionBitsAreKept) {
  ScratchDir scratch("nodeflow-save-mode");
  const fs::path own = scratch.path() / "own.json";
  write_text(own, "old\n");
  ASSERT_EQ(::chmod(own.c_str(), 04750), 0);
  write_file_atomically(own, "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(own.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);  // setuid dropped, the rest kept

  if (::geteuid() != 0) GTEST_SKIP() << "a file of another user needs root";
  const fs::path planted = scratch.path() / "planted.json";
  write_text(planted, "x\n");
  ASSERT_EQ(::chown(planted.c_str(), kOtherUser, kOtherUser), 0);
  ASSERT_EQ(::chmod(planted.c_str(), 06777), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  write_file_atomically(planted, "new\n");
  ASSERT_EQ(::stat(planted.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0666u & ~mask);
  EXPECT_EQ(st.st_uid, ::geteuid());
}

TEST(SaveTargets, BookkeepingNamesAreRefusedEvenThroughALink) {
  ScratchDir scratch("nodeflow-save-reserved");
  for (const std::string& name :
       {std::string(kCommitRecordName), std::string(kOutputsManifestName),
        std::string(kStageDirectoryPrefix) + "abcdefghijkl"}) {
    const std::string message = message_of(scratch.path() / name);
    EXPECT_NE(message.find(name + " is a name nodeflow keeps for its own bookkeeping"),
              std::string::npos)
        << message;
    EXPECT_FALSE(fs::exists(scratch.path() / name));
  }
  const fs::path link = scratch.path() / "y.npy";
  fs::create_symlink(kCommitRecordName, link);
  EXPECT_NE(message_of(link).find("(a link to "), std::string::npos);
  EXPECT_FALSE(fs::exists(scratch.path() / kCommitRecordName));
  // The next save into the directory still works.
  EXPECT_NO_THROW(write_file_atomically(scratch.path() / "ok.json", "ok\n"));
}

// `convert G /dev/stdout` with standard output redirected to a file used to
// replace that file (a log appended to with >> lost its lines).
TEST(SaveTargets, StandardOutputByNameIsRefused) {
  ScratchDir scratch("nodeflow-save-stdout");
  write_text(scratch.path() / "g.json", kAddGraph);
  const std::string script = std::string("{ echo header; \"") + NODEFLOW_BUILT_CLI +
                             "\" convert g.json /dev/stdout; echo \"rc=$?\"; } > out.txt";
  const ProcessResult r = run_process({"/bin/sh", "-c", script}, scratch.path());
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(read_bytes(scratch.path() / "out.txt"), "header\nrc=1\n") << r.describe();
  EXPECT_NE(r.err.find("it names an open file of this process"), std::string::npos)
      << r.describe();
  EXPECT_NE(r.err.find("give - as OUT to write to standard output"), std::string::npos)
      << r.describe();
}

TEST(SaveTargets, RunAndBackwardRefuseToReplaceTheirGraph) {
  ScratchDir scratch("nodeflow-save-graph");
  fs::create_directories(scratch.path() / "g8");
  const fs::path graph = scratch.path() / "g8" / "y.npy";  // the graph, named as the output file
  write_text(graph, kAddGraph);
  const std::vector<float> a{1.0f, 2.0f};
  write_npy(scratch.path() / "a.npy", Tensor::from<float>({2}, std::span<const float>(a)));
  for (const char* verb : {"run", "backward"}) {
    const ProcessResult r = run_process(
        {NODEFLOW_BUILT_CLI, verb, "g8/y.npy", "-i", "a=a.npy", "-o", "g8"}, scratch.path());
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_NE(r.err.find("which is GRAPH g8/y.npy, a file this command reads"), std::string::npos)
        << r.describe();
    EXPECT_EQ(read_bytes(graph), kAddGraph);
  }
  const ProcessResult ok = run_process(
      {NODEFLOW_BUILT_CLI, "run", "g8/y.npy", "-i", "a=a.npy", "-o", "out"}, scratch.path());
  EXPECT_EQ(ok.exit_code, 0) << ok.describe();
  EXPECT_TRUE(fs::exists(scratch.path() / "out" / "y.npy"));
}

}  // namespace
}  // namespace nodeflow::testing
