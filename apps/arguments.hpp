#pragma once
// Command-line arguments of the `nodeflow` verbs: what they parse into
// (independent of the parser) and the options several verbs share.
#include <cstdint>
#include <filesystem>
#include <optional>
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
  /// --seed (run and backward): the seed of Executor::run / Executor::forward,
  /// which draws the Dropout masks of a training-mode forward. The same seed
  /// gives the same masks, another seed other masks; an inference run's
  /// Dropout is the identity.
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

/// A count as the command line takes it: decimal digits only (no sign, space,
/// fraction or 0x), and with `units` an optional unit suffix, case-insensitive:
/// B = 1; k, kB = 10^3; M, MB = 10^6; G, T, P, E likewise up to 10^18; Ki,
/// KiB = 2^10; Mi, MiB = 2^20; ... Ei, EiB = 2^60 (README, "The command line").
/// Nothing when the text is not of that form or the value exceeds 2^64 - 1
/// (never wrapped around or clamped, as strtoull and CLI11 would).
std::optional<std::uint64_t> parse_count(std::string_view text, bool units);

/// Adds option `flag` to `verb`, parsed by parse_count into `into`: the one
/// parser of every integer option. A text parse_count refuses or a value
/// outside [min, max] is wrong usage, naming the option and the range.
CLI::Option* add_count_option(CLI::App& verb, const std::string& flag, std::uint64_t& into,
                              std::uint64_t min, std::uint64_t max, bool units,
                              const std::string& help);

/// Adds `--seed N` to `verb`, parsed into `seed`: add_count_option from 0 to
/// 2^64 - 1, without units.
CLI::Option* add_seed_option(CLI::App& verb, std::uint64_t& seed, const std::string& help);

}  // namespace nodeflow::cli
