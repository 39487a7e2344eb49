// Each conformance corpus of tests/ must be a byte-for-byte copy of its shared
// corpus (tests/support/conformance_corpora.hpp) whenever that corpus is present,
// and so must tests/onnx-models/, the real ONNX models of the shared folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <vector>

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

/// A folder of tests/ copied from the shared folder.
struct CopiedFolder {
  std::string_view suite;
  std::string_view folder;
  const char* local_dir;
  const char* shared_dir;
};

std::vector<CopiedFolder> copied_folders() {
  std::vector<CopiedFolder> folders;
  for (const ConformanceCorpus& c : kConformanceCorpora)
    folders.push_back({c.suite, c.folder, c.local_dir, c.shared_dir});
  folders.push_back({"OnnxModels", "onnx-models", NODEFLOW_ONNX_MODELS_DIR,
                     NODEFLOW_SHARED_ONNX_MODELS_DIR});
  return folders;
}

void PrintTo(const CopiedFolder& folder, std::ostream* os) { *os << "tests/" << folder.folder; }

class ConformanceCopy : public ::testing::TestWithParam<CopiedFolder> {};

TEST_P(ConformanceCopy, MatchesSharedCorpusByteForByte) {
  const CopiedFolder& corpus = GetParam();
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

std::string corpus_name(const ::testing::TestParamInfo<CopiedFolder>& param) {
  return std::string(param.param.suite);
}

// ConformanceCopy.MatchesSharedCorpusByteForByte/Conformance, .../OpsConformance,
// .../OnnxModels.
INSTANTIATE_TEST_SUITE_P(, ConformanceCopy, ::testing::ValuesIn(copied_folders()), corpus_name);

}  // namespace
}  // namespace nodeflow::testing
