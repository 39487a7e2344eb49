// tests/conformance must be a byte-for-byte copy of the shared corpus
// (../shared/conformance) whenever that corpus is present.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;

std::set<std::string> relative_files(const fs::path& root) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (!entry.is_directory()) files.insert(fs::relative(entry.path(), root).generic_string());
  return files;
}

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ConformanceCopy, MatchesSharedCorpusByteForByte) {
  const fs::path shared = NODEFLOW_SHARED_CONFORMANCE_DIR;
  const fs::path local = NODEFLOW_CONFORMANCE_DIR;
  if (!fs::is_directory(shared)) GTEST_SKIP() << "no shared corpus at " << shared;
  const auto shared_files = relative_files(shared);
  const auto local_files = relative_files(local);
  for (const auto& file : shared_files)
    EXPECT_TRUE(local_files.count(file)) << "missing from tests/conformance: " << file;
  for (const auto& file : local_files)
    EXPECT_TRUE(shared_files.count(file)) << "not in the shared corpus: " << file;
  for (const auto& file : shared_files) {
    if (!local_files.count(file)) continue;
    EXPECT_TRUE(contents(shared / file) == contents(local / file))
        << "differs from the shared corpus: " << file;
  }
}

}  // namespace
