#pragma once
// Command-line arguments of the `nodeflow` verbs, independent of the parser.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/executor.hpp"
#include "serialization/json_reader.hpp"

namespace nodeflow::cli {

/// Wrong usage of the command (exit status 2, with the usage text), as opposed
/// to a failure in the input or the run (nodeflow::Error, exit status 1).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One `-i NAME=FILE.npy` or `-g OUTPUT=FILE.npy` argument.
struct NamedFile {
  std::string name;
  std::filesystem::path file;
};

/// Splits "NAME=FILE" at the first '=' (tensor names containing '=' cannot be
/// given on the command line). Throws UsageError, naming `option`, when there
/// is no '=' or either side is empty.
NamedFile parse_named_file(std::string_view argument, std::string_view option);

/// parse_named_file over every argument; throws UsageError when a name is
/// given twice.
std::vector<NamedFile> parse_named_files(const std::vector<std::string>& arguments,
                                         std::string_view option);

/// What `run` and `backward` are asked to do.
struct RunRequest {
  std::filesystem::path graph;
  std::vector<NamedFile> inputs;        ///< -i
  std::vector<NamedFile> grad_outputs;  ///< -g (backward only)
  std::filesystem::path outdir;         ///< -o
  ReadOptions read;                     ///< --max-initializer-bytes
  ExecutorOptions executor;             ///< --max-tensor-bytes
};

}  // namespace nodeflow::cli
