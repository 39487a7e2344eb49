#pragma once
// Saving a trained network must lose nothing (docs/training-config.md, "Saving and reloading
// trained networks"): the reloaded file predicts exactly what the network in
// memory predicts.
#include <cstdint>
#include <filesystem>
#include <optional>

#include "core/graph.hpp"
#include "serialization/json_reader.hpp"
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

/// Loads `saved` (load_graph_file with `read`, the limits the trained graph
/// was read with), evaluates it and `trained` on `data` in batches of
/// `batch_size` by Executors with `options`, and compares their prediction
/// outputs byte by byte.
/// Throws what loading and evaluation throw (the file must be a valid graph
/// with the same bindings).
ReloadCheck check_reload(const Graph& trained, const std::filesystem::path& saved,
                         const Dataset& data, const Bindings& bindings, std::int64_t batch_size,
                         const ExecutorOptions& options = {}, const ReadOptions& read = {});

/// The same check of a saved graph already loaded (`reloaded`, read by the
/// caller in whatever format it was saved: `nodeflow train -o OUT.onnx`).
ReloadCheck check_reload(const Graph& trained, const Graph& reloaded, const Dataset& data,
                         const Bindings& bindings, std::int64_t batch_size,
                         const ExecutorOptions& options = {});

}  // namespace nodeflow::training
