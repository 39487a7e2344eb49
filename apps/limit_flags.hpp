#pragma once
// The resource-limit options of the `nodeflow` verbs, defined once for all of
// them (README, "The command line"). Each takes a byte count, with an optional
// unit: 1000000, 1GB (10^9), 1GiB (2^30), 512MiB; parse errors are usage errors.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "core/executor.hpp"
#include "serialization/json_reader.hpp"

namespace nodeflow::cli {

/// A byte count with an optional unit into `into`. CLI11's AsSizeValue alone
/// turns "-1" into 2^64 - 1, that is no limit at all.
inline CLI::Option* add_byte_count(CLI::App& verb, const std::string& flag, std::uint64_t& into,
                                   const std::string& help) {
  return verb.add_option(flag, into, help)
      ->check(CLI::Validator(
          [](std::string& text) {
            return text.find('-') == std::string::npos ? std::string()
                                                       : std::string("a byte count cannot be negative");
          },
          "", "non-negative"))
      ->transform(CLI::AsSizeValue(true))
      ->type_name("BYTES");
}

/// --max-initializer-bytes: ReadOptions::max_initializer_bytes, for every verb
/// that reads a graph document.
inline void add_max_initializer_bytes(CLI::App& verb, ReadOptions& into) {
  add_byte_count(verb, "--max-initializer-bytes", into.max_initializer_bytes,
                 "Bytes the graph's initializers may hold together (default " +
                     std::to_string(kDefaultMaxInitializerBytes) + " = 1 GiB)");
}

/// --max-tensor-bytes: ExecutorOptions::max_tensor_bytes, for every verb that
/// runs a graph.
inline void add_max_tensor_bytes(CLI::App& verb, std::uint64_t& into) {
  add_byte_count(verb, "--max-tensor-bytes", into,
                 "Bytes any one tensor a node outputs may take (default " +
                     std::to_string(kDefaultMaxTensorBytes) + " = 4 GiB)");
}

}  // namespace nodeflow::cli
