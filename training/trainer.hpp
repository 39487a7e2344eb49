#pragma once
// The training loop: epochs of shuffled mini-batches, an optimizer step per
// batch, evaluation on a held-out set after every epoch, progress logged with
// spdlog, and the metrics CSV, chart and checkpoint written after every epoch.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/executor.hpp"
#include "core/graph.hpp"
#include "core/random.hpp"
#include "training/dataset.hpp"
#include "training/history.hpp"
#include "training/optimizer.hpp"
#include "training/train_config.hpp"

namespace nodeflow::training {

/// Files a fit() keeps up to date; an empty path writes nothing.
struct TrainOutputs {
  std::filesystem::path metrics_csv;  ///< EpochMetrics per epoch (history.hpp)
  std::filesystem::path chart;        ///< .svg or .png, drawn by gnuplot
  std::filesystem::path checkpoint;   ///< the graph document with the weights so far
};

/// What one optimizer step measured.
struct StepResult {
  double loss = 0.0;         ///< the loss output (the batch's mean for reduction "mean")
  std::int64_t correct = 0;  ///< samples whose argmax prediction equals the label
  std::int64_t samples = 0;
};

/// What the progress callback is told after each optimizer step of train_epoch.
struct Progress {
  std::int64_t epoch = 0;    ///< 1-based epoch
  std::int64_t batch = 0;    ///< 1-based batch within the epoch
  std::int64_t batches = 0;  ///< batches of this epoch
  std::int64_t step = 0;     ///< 1-based optimizer step of this Trainer (steps())
  double loss = 0.0;         ///< mean loss over the epoch's samples so far
  double accuracy = 0.0;     ///< fraction of the epoch's samples so far predicted right
  double lr = 0.0;           ///< learning rate of this epoch
  std::int64_t epochs = 0;   ///< epochs planned (config.epochs)
  /// Samples trained per second of training and evaluation so far in this
  /// fit() (or this train_epoch alone), as the progress log lines say.
  double samples_per_second = 0.0;
  /// Seconds left at that rate until config.epochs epochs over this training
  /// set are done (the log lines' "left"); for train_epoch alone, this epoch's.
  double eta_seconds = 0.0;
};

/// Called after every step of train_epoch (and so of fit) on the training
/// thread; returning false stops training after that step: train_epoch returns
/// the metrics of the steps taken, fit evaluates and writes that last partial
/// epoch as usual and returns. An exception it throws propagates out of
/// train_epoch / fit (the step's weights are kept).
using ProgressCallback = std::function<bool(const Progress&)>;

/// Trains `graph` in place (its initializers change). Reproducible: the same
/// graph, data, configuration and thread count give the same weights bit for
/// bit. The shuffling stream and the Dropout stream are each seeded once from
/// config.seed and advance with every epoch and every step respectively.
class Trainer {
 public:
  /// Checks the bindings (check_bindings) and the optimizer and weight-decay
  /// configuration against the graph. The runs use
  /// config.executor_options(); Executor's constructor throws there too.
  Trainer(Graph& graph, TrainConfig config);

  /// One step on `batch`: training-mode forward, backward seeded with 1 at the
  /// loss, the nodes' updates of non-trainable initializers applied (running
  /// statistics), then the optimizer applied with learning rate `lr` to the
  /// parameters the loss reaches (parameters_reached): parameters without a
  /// gradient keep their value and their optimizer state.
  StepResult step(const Batch& batch, double lr);

  /// One epoch (0-based `epoch`) over `train` in a freshly shuffled order,
  /// batches of config.batch_size (the last may be smaller), with the
  /// schedule's learning rate. test_* of the result are left 0.
  EpochMetrics train_epoch(const Dataset& train, std::int64_t epoch);

  /// config.epochs epochs; after each, evaluates `test` (inference mode) and
  /// writes `outputs`. Returns the history. A chart name that ends in neither
  /// .svg nor .png throws InvalidAttribute before the first step. A file of
  /// `outputs` that cannot be written (IoError: a full disk, say) does not stop
  /// training, which would lose the weights in memory: it is logged as a
  /// warning naming the reason and, for the checkpoint, checkpoint_status();
  /// the checkpoint and the CSV are tried again after the next epoch, the
  /// chart (which needs gnuplot) is not. Other failures throw.
  std::vector<EpochMetrics> fit(const Dataset& train, const Dataset& test,
                                const TrainOutputs& outputs = {});

  /// Sets (or, with an empty function, clears) the progress callback.
  void set_progress_callback(ProgressCallback callback) { progress_ = std::move(callback); }
  /// True when the progress callback stopped training (returned false); the
  /// next train_epoch or fit clears it.
  bool stopped() const { return stopped_; }

  /// The 1-based epoch whose weights the last checkpoint fit() saved holds;
  /// empty before the first one was saved (or without a checkpoint file).
  std::optional<std::int64_t> checkpoint_epoch() const { return checkpoint_epoch_; }

  /// Where the last good weights are, for messages about a save that failed:
  /// "the last good checkpoint is ck.json (epoch 2 of 3)", with ", the
  /// trained weights" inside the parentheses when it holds the last epoch's,
  /// or "no checkpoint of this run has been saved".
  std::string checkpoint_status() const;

  const Optimizer& optimizer() const { return optimizer_; }
  const TrainConfig& config() const { return config_; }
  /// Optimizer steps taken so far.
  std::int64_t steps() const { return steps_; }
  /// Trainable initializers the optimizer updates.
  const std::set<std::string>& trained_parameters() const { return reached_; }

 private:
  Graph& graph_;
  TrainConfig config_;
  Executor executor_;
  Optimizer optimizer_;
  std::set<std::string> reached_;
  std::map<std::string, double> weight_decay_;
  Rng shuffle_rng_;
  std::uint64_t dropout_seed_;
  std::int64_t steps_ = 0;
  ProgressCallback progress_;
  bool stopped_ = false;
  std::filesystem::path checkpoint_;  // fit()'s outputs.checkpoint
  std::optional<std::int64_t> checkpoint_epoch_;
  // Progress estimate across fit(): samples planned, trained and time spent so
  // far. The plan is a double: samples x epochs may pass int64 (epochs is any
  // positive int64).
  double planned_samples_ = 0.0;
  std::int64_t done_samples_ = 0;
  double busy_seconds_ = 0.0;
};

}  // namespace nodeflow::training
