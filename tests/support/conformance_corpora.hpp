#pragma once
// The conformance corpora of this repository: each a byte-for-byte copy of a
// shared corpus (tests/<folder>/README.md), run case by case by the
// conformance harness and checked against its shared folder by the unit tests.
// The paths come from tests/CMakeLists.txt.
#include <array>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nodeflow::testing {

struct ConformanceCorpus {
  std::string_view suite;       ///< the gtest suite: <Route>/<suite>.Case/<case>
  std::string_view folder;      ///< tests/<folder>
  const char* local_dir;        ///< the copy in this repository
  const char* shared_dir;       ///< the shared corpus it copies
  const char* override_env;     ///< names another copy to run instead of local_dir
};

inline constexpr std::array<ConformanceCorpus, 2> kConformanceCorpora{{
    {"Conformance", "conformance", NODEFLOW_CONFORMANCE_DIR, NODEFLOW_SHARED_CONFORMANCE_DIR,
     "NODEFLOW_CONFORMANCE_DIR"},
    {"OpsConformance", "conformance-ops", NODEFLOW_CONFORMANCE_OPS_DIR,
     NODEFLOW_SHARED_CONFORMANCE_OPS_DIR, "NODEFLOW_CONFORMANCE_OPS_DIR"},
}};

// What gtest prints for a corpus parameter.
inline void PrintTo(const ConformanceCorpus& corpus, std::ostream* os) {
  *os << "tests/" << corpus.folder;
}

inline const ConformanceCorpus& conformance_corpus(std::string_view suite) {
  for (const auto& corpus : kConformanceCorpora)
    if (corpus.suite == suite) return corpus;
  throw std::logic_error("no conformance corpus " + std::string(suite));
}

/// The folder whose cases are run: the corpus's override variable when set and
/// not empty (e.g. a newer shared corpus), else the copy in this repository.
/// Absolute, because the command line runs in a scratch directory.
inline std::filesystem::path conformance_run_dir(const ConformanceCorpus& corpus) {
  const char* override_dir = std::getenv(corpus.override_env);
  return std::filesystem::absolute(override_dir && *override_dir
                                       ? std::filesystem::path(override_dir)
                                       : std::filesystem::path(corpus.local_dir));
}

}  // namespace nodeflow::testing
