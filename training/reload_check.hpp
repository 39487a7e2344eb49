#pragma once
// Saving a trained network must lose nothing (training.md, "Saving and loading
// trained networks"): the reloaded file predicts exactly what the network in
// memory predicts.
#include <cstdint>
#include <filesystem>
#include <optional>

#include "core/graph.hpp"
#include "training/evaluation.hpp"

namespace nodeflow::training {

struct ReloadCheck {
  Evaluation in_memory;  ///< `trained` evaluated on the data
  Evaluation reloaded;   ///< the file evaluated on the same data
  /// First sample whose prediction bytes differ; empty when every prediction
  /// is identical bit for bit.
  std::optional<std::size_t> first_difference;
  bool identical() const { return !first_difference.has_value(); }
};

/// Loads `saved` (load_graph_file), evaluates it and `trained` on `data` in
/// batches of `batch_size` with `threads` threads, and compares their
/// prediction outputs byte by byte.
/// Throws what loading and evaluation throw (the file must be a valid graph
/// with the same bindings).
ReloadCheck check_reload(const Graph& trained, const std::filesystem::path& saved,
                         const Dataset& data, const Bindings& bindings, std::int64_t batch_size,
                         int threads = 1);

}  // namespace nodeflow::training
