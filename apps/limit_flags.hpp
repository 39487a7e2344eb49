#pragma once
// The resource-limit options of the `nodeflow` verbs, defined once for all of
// them (README, "The command line"). Each takes a byte count, with an optional
// unit (parse_count): 1000000, 1GB (10^9), 1GiB (2^30), 512MiB; parse errors
// and values past 2^64 - 1 are usage errors.
#include <cstdint>
#include <string>

#include "apps/arguments.hpp"
#include "core/executor.hpp"
#include "serialization/json_reader.hpp"

namespace nodeflow::cli {

/// --max-initializer-bytes: ReadOptions::max_initializer_bytes, for every verb
/// that reads a graph document.
inline void add_max_initializer_bytes(CLI::App& verb, ReadOptions& into) {
  add_count_option(verb, "--max-initializer-bytes", into.max_initializer_bytes, 0, UINT64_MAX, true,
                   "Bytes the graph's initializers may hold together (default " +
                       std::to_string(kDefaultMaxInitializerBytes) + " = 1 GiB)");
}

/// --max-tensor-bytes: ExecutorOptions::max_tensor_bytes, for every verb that
/// runs a graph.
inline void add_max_tensor_bytes(CLI::App& verb, std::uint64_t& into) {
  add_count_option(verb, "--max-tensor-bytes", into, 0, UINT64_MAX, true,
                   "Bytes any one tensor a node outputs may take (default " +
                       std::to_string(kDefaultMaxTensorBytes) + " = 4 GiB)");
}

}  // namespace nodeflow::cli
