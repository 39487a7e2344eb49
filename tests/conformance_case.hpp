#pragma once
// One case of the conformance corpus: CASE/case.json read into plain data
// (tests/conformance/README.md, "Layout").
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/npy_compare.hpp"

namespace nodeflow::testing {

struct ConformanceCase {
  std::filesystem::path dir;
  std::string name;  ///< the folder name
  std::string kind;  ///< "forward", "backward" or "error"
  Tolerance tolerance;
  Tolerance grad_tolerance;
  std::map<std::string, Tolerance> output_tolerances;
  // Tensor name -> absolute .npy path.
  std::map<std::string, std::filesystem::path> inputs;
  std::map<std::string, std::filesystem::path> expected;
  std::map<std::string, std::filesystem::path> grad_outputs;
  std::map<std::string, std::filesystem::path> expected_grads;
  std::vector<std::string> error_contains;
  std::vector<std::string> error_verbs;  ///< defaults to {"check", "run"}

  std::filesystem::path graph() const { return dir / "graph.json"; }
  /// output_tolerances[output] when given, else the case tolerance.
  Tolerance tolerance_for(const std::string& output) const;
};

/// Reads CASE/case.json. Throws std::runtime_error naming the file and key
/// when it is malformed.
ConformanceCase load_conformance_case(const std::filesystem::path& dir);

/// Every folder of `root` holding a case.json, sorted by name.
std::vector<std::filesystem::path> list_conformance_cases(const std::filesystem::path& root);

}  // namespace nodeflow::testing
