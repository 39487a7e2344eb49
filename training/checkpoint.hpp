#pragma once
// Training checkpoints (docs/training-config.md, "Checkpoints and resuming"):
// the graph document with the weights so far plus the optional top-level
// member "training_state" holding everything else a run needs to continue
// exactly where it stopped: the optimizer's state, the position in the
// schedule and in the epoch's data order, the random streams, the step, the
// loss scale and the metrics so far. A checkpoint is still a graph document
// every verb reads (they ignore the state), and it is saved atomically: a run
// killed at any moment leaves the previous complete checkpoint or the new one.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph.hpp"
#include "serialization/json_reader.hpp"
#include "training/history.hpp"
#include "training/optimizer.hpp"

namespace nodeflow::training {

/// A run's position and state between two optimizer steps.
struct TrainingState {
  std::uint64_t seed = 0;     ///< the configuration's seed the streams derive from
  std::int64_t step = 0;      ///< optimizer steps taken (the Dropout stream's position)
  std::int64_t epoch = 0;     ///< 0-based epoch in progress, or the next one
  /// Samples of `order` already trained in `epoch`; 0 before the epoch began.
  std::int64_t epoch_samples = 0;
  /// The epoch's data order (indices into the training set) once it began.
  std::vector<std::int64_t> order;
  /// dataset_fingerprint of the training set `order` indexes (0: unknown, a
  /// checkpoint written before it was kept); with `order`, so that an epoch
  /// is continued on the data it began with only.
  std::uint64_t order_data = 0;
  std::string shuffle_stream;  ///< Rng::state() of the shuffling stream
  /// The epoch's running sums: sum of loss x samples, correct, samples, seconds.
  double epoch_loss_sum = 0.0;
  std::int64_t epoch_correct = 0;
  double epoch_seconds = 0.0;
  std::vector<EpochMetrics> history;  ///< the finished epochs
  OptimizerKind optimizer = OptimizerKind::SGD;
  std::map<std::string, Optimizer::ParameterState> optimizer_state;
  double loss_scale = 0.0;          ///< 0: no loss scaling
  std::int64_t loss_scale_good_steps = 0;
  std::int64_t skipped_steps = 0;   ///< steps loss scaling skipped
};

/// The compact JSON object of `state` (tensors as dtype, shape and base64 of
/// their little-endian bytes; doubles round-trip exactly).
std::string training_state_json(const TrainingState& state);

/// Parses training_state_json's text. Throws InvalidGraph naming the path
/// ("training_state.optimizer_state[0].m: ...") for anything else: wrong
/// format or version, missing or mistyped members, sizes that disagree.
TrainingState parse_training_state(std::string_view json);

/// The graph document of `def` with `state`, saved atomically
/// (write_file_atomically). Throws IoError naming the path.
void save_checkpoint(const std::filesystem::path& path, const GraphDef& def,
                     const TrainingState& state);

struct Checkpoint {
  Graph graph;
  TrainingState state;
};

/// Reads a checkpoint: the graph (every check of load_graph_file, `options`'s
/// limits) and its training state. Throws IoError naming the path, and
/// InvalidGraph naming the path when the file is a graph document without a
/// training state (a trained graph, not a checkpoint) or the state is wrong.
Checkpoint load_checkpoint(const std::filesystem::path& path, const ReadOptions& options = {});

/// Throws InvalidGraph naming the first difference ("node 3 (conv2)
/// differs", "initializer 'fc.W': shape [10, 64] here, [10, 32] in the
/// checkpoint") unless `checkpoint` has the structure of `given`: the same
/// inputs, outputs, nodes with their attributes, and initializers by name,
/// dtype, shape and trainable flag (their values may differ).
void check_same_structure(const GraphDef& given, const GraphDef& checkpoint);

}  // namespace nodeflow::training
