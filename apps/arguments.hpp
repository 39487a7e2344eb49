#pragma once
// Command-line arguments of the `nodeflow` verbs: what they parse into
// (independent of the parser) and the options several verbs share.
#include <cstdint>
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
  std::filesystem::path graph;          ///< "-" for standard input
  std::vector<NamedFile> inputs;        ///< -i
  std::vector<NamedFile> grad_outputs;  ///< -g (backward only)
  std::filesystem::path outdir;         ///< -o
  ReadOptions read;                     ///< --max-initializer-bytes
  ExecutorOptions executor;             ///< --max-tensor-bytes, --threads
  /// --seed (backward only): Executor::forward's seed, which draws the Dropout
  /// masks. The same seed gives the same masks, another seed other masks.
  std::uint64_t seed = 0;
};

}  // namespace nodeflow::cli

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace nodeflow::cli {

/// Adds `--threads N` to `verb`, parsed into `threads`: the one definition of
/// the option for every verb that has it (train, eval, run, backward), so they
/// all accept 1 to 1024 and refuse anything else as wrong usage.
CLI::Option* add_threads_option(CLI::App& verb, int& threads, const std::string& help);

/// Adds `--seed N` to `verb`, parsed into `seed`: a decimal integer from 0 to
/// 2^64 - 1. A sign, a fraction or a value past 2^64 - 1 is wrong usage (not
/// wrapped around or clamped, as strtoull would).
CLI::Option* add_seed_option(CLI::App& verb, std::uint64_t& seed, const std::string& help);

}  // namespace nodeflow::cli
