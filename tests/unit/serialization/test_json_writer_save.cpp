// Saving is all or nothing: a save that fails half-way, by an error or by the
// process being killed, leaves the previous file as it was.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/npy.hpp"
#include "support/files.hpp"
#include "support/generated_graphs.hpp"
#include "support/graph_compare.hpp"

namespace nodeflow {
namespace {

namespace fs = std::filesystem;

/// A fresh, empty directory per test.
class SaveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / (std::string("nodeflow_save_") + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

// Large enough for several write blocks, so a failure can strike in the middle.
GraphDef big_graph() { return testing::mixed_pooling_graph(2000, 11); }
GraphDef small_graph() { return testing::pooling_graph(testing::Topology::Chain, 3); }

TEST_F(SaveTest, FailureHalfWayLeavesThePreviousFileAndNoTemporaryFile) {
  const fs::path path = dir_ / "net.json";
  save_graph_file(path, small_graph());
  const std::string before = testing::read_bytes(path);

  const std::string new_text = write_graph_json(big_graph());
  ASSERT_GT(new_text.size(), 3 * kWriteBlockSize);
  std::size_t failed_at = 0;
  auto fail_half_way = [&](std::size_t written) {
    if (written >= new_text.size() / 2) {
      failed_at = written;
      throw IoError("injected: disk full");
    }
  };
  EXPECT_THROW(save_graph_file(path, big_graph(), {}, fail_half_way), IoError);
  EXPECT_GT(failed_at, 0u);
  EXPECT_LT(failed_at, new_text.size());
  EXPECT_EQ(testing::read_bytes(path), before);
  EXPECT_EQ(files(), std::vector<std::string>{"net.json"});
  EXPECT_TRUE(testing::same_graph_def(load_graph_file(path).def(), small_graph()));

  // The next save goes through.
  save_graph_file(path, big_graph());
  EXPECT_EQ(testing::read_bytes(path), new_text);
  EXPECT_EQ(files(), std::vector<std::string>{"net.json"});
}

TEST_F(SaveTest, FailureOnTheFirstBlockOfANewFileCreatesNothing) {
  const fs::path path = dir_ / "new.json";
  EXPECT_THROW(
      save_graph_file(path, small_graph(), {}, [](std::size_t) { throw IoError("injected"); }),
      IoError);
  EXPECT_TRUE(files().empty());
}

TEST_F(SaveTest, ProcessKilledHalfWayLeavesThePreviousFileComplete) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const fs::path path = dir_ / "net.json";
  save_graph_file(path, small_graph());
  const std::string before = testing::read_bytes(path);
  const std::size_t total = write_graph_json(big_graph()).size();
  EXPECT_EXIT(
      {
        save_graph_file(path, big_graph(), {}, [&](std::size_t written) {
          if (written >= total / 2) std::raise(SIGKILL);
        });
      },
      ::testing::KilledBySignal(SIGKILL), "");
  EXPECT_EQ(testing::read_bytes(path), before);
  // The killed process could not clean up: its partial file is in its
  // private staging directory beside the target, which no reader takes for
  // the graph (the next process saving here removes it: test_output_sets.cpp).
  for (const auto& name : files()) {
    if (name != "net.json") {
      EXPECT_EQ(name.rfind(".nodeflow-stage-", 0), 0u) << name;
    }
  }
}

TEST_F(SaveTest, UnrepresentableGraphTouchesNoFile) {
  const fs::path path = dir_ / "net.json";
  save_graph_file(path, small_graph());
  const std::string before = testing::read_bytes(path);
  GraphDef bad = small_graph();
  bad.nodes[1].name = "\xff";
  EXPECT_THROW(save_graph_file(path, bad), InvalidGraph);
  EXPECT_EQ(testing::read_bytes(path), before);
  EXPECT_EQ(files(), std::vector<std::string>{"net.json"});
}

TEST_F(SaveTest, MissingDirectoryIsAnIoErrorNamingThePath) {
  const fs::path path = dir_ / "no_such_dir" / "net.json";
  try {
    save_graph_file(path, small_graph());
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(files().empty());
}

TEST_F(SaveTest, ReplacingAFileKeepsItsPermissions) {
  const fs::path path = dir_ / "private.json";
  save_graph_file(path, small_graph());
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  save_graph_file(path, big_graph());
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(SaveTest, SavingThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  fs::create_directories(dir_ / "real");
  const fs::path target = dir_ / "real" / "net.json";
  save_graph_file(target, small_graph());
  const fs::path link = dir_ / "link.json";
  fs::create_symlink(fs::path("real") / "net.json", link);  // relative, as users make them

  save_graph_file(link, big_graph());
  ASSERT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(fs::read_symlink(link), fs::path("real") / "net.json");
  EXPECT_EQ(testing::read_bytes(target), write_graph_json(big_graph()));
  EXPECT_EQ(files(), (std::vector<std::string>{"link.json", "real"}));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "real"), fs::directory_iterator()), 1);

  // npy files take the same path (write_npy).
  const fs::path npy_link = dir_ / "t.npy";
  fs::create_symlink(dir_ / "real" / "t.npy", npy_link);  // absolute, dangling until written
  write_npy(npy_link, Tensor::from<float>({2}, {1.5f, -2.0f}));
  ASSERT_TRUE(fs::is_symlink(fs::symlink_status(npy_link)));
  EXPECT_EQ(read_npy(dir_ / "real" / "t.npy").values<float>()[1], -2.0f);
}

TEST_F(SaveTest, AChainOfSymlinksIsFollowedToTheEndAndALoopIsRefused) {
  fs::create_symlink("b.json", dir_ / "a.json");
  fs::create_symlink("c.json", dir_ / "b.json");
  save_graph_file(dir_ / "a.json", small_graph());
  ASSERT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "b.json")));
  EXPECT_EQ(testing::read_bytes(dir_ / "c.json"), write_graph_json(small_graph()));

  fs::create_symlink("loop2.json", dir_ / "loop1.json");
  fs::create_symlink("loop1.json", dir_ / "loop2.json");
  try {
    save_graph_file(dir_ / "loop1.json", small_graph());
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("loop1.json: more than 40 symbolic links"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir_ / "loop1.json")));
}

TEST_F(SaveTest, ProgressReportsEveryBlockUpToTheWholeFile) {
  const std::string text = write_graph_json(big_graph());
  std::vector<std::size_t> reports;
  save_graph_file(dir_ / "net.json", big_graph(), {}, [&](std::size_t n) { reports.push_back(n); });
  ASSERT_EQ(reports.size(), (text.size() + kWriteBlockSize - 1) / kWriteBlockSize);
  EXPECT_EQ(reports.front(), kWriteBlockSize);
  EXPECT_EQ(reports.back(), text.size());
}

}  // namespace
}  // namespace nodeflow
