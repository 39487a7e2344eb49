// Each conformance corpus of tests/ must be a byte-for-byte copy of its shared
// corpus (tests/support/conformance_corpora.hpp) whenever that corpus is present.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "support/conformance_corpora.hpp"

namespace nodeflow::testing {
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

class ConformanceCopy : public ::testing::TestWithParam<ConformanceCorpus> {};

TEST_P(ConformanceCopy, MatchesSharedCorpusByteForByte) {
  const ConformanceCorpus& corpus = GetParam();
  const fs::path shared = corpus.shared_dir;
  const fs::path local = corpus.local_dir;
  if (!fs::is_directory(shared)) GTEST_SKIP() << "no shared corpus at " << shared;
  ASSERT_TRUE(fs::is_directory(local)) << "no copy of " << shared << " at " << local;
  const std::string here = "tests/" + std::string(corpus.folder);
  const auto shared_files = relative_files(shared);
  const auto local_files = relative_files(local);
  for (const auto& file : shared_files)
    EXPECT_TRUE(local_files.count(file)) << "missing from " << here << ": " << file;
  for (const auto& file : local_files)
    EXPECT_TRUE(shared_files.count(file)) << here << " has a file the shared corpus lacks: " << file;
  for (const auto& file : shared_files) {
    if (!local_files.count(file)) continue;
    EXPECT_TRUE(contents(shared / file) == contents(local / file))
        << here << " differs from the shared corpus: " << file;
  }
}

std::string corpus_name(const ::testing::TestParamInfo<ConformanceCorpus>& param) {
  return std::string(param.param.suite);
}

// ConformanceCopy.MatchesSharedCorpusByteForByte/Conformance, .../OpsConformance.
INSTANTIATE_TEST_SUITE_P(, ConformanceCopy, ::testing::ValuesIn(kConformanceCorpora), corpus_name);

}  // namespace
}  // namespace nodeflow::testing
