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
#include <span>
#include <string>
#include <vector>

#include "core/executor.hpp"
#include "core/graph.hpp"
#include "core/random.hpp"
#include "training/checkpoint.hpp"
#include "training/dataset.hpp"
#include "training/gradient_steps.hpp"
#include "training/history.hpp"
#include "training/optimizer.hpp"
#include "training/process_group.hpp"
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
  /// 1-based optimizer step within the epoch: a batch, or with
  /// gradient_accumulation k, k micro-batches
  std::int64_t batch = 0;
  std::int64_t batches = 0;  ///< optimizer steps of this epoch
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

  /// One optimizer step on micro-batches (gradient accumulation): forward and
  /// backward on each in turn, their gradients summed weighted by their share
  /// of the samples (the gradient of the mean loss over all of them), then
  /// with loss scaling divided by the scale (a step with an inf or NaN is
  /// skipped: no parameter changes, the scale backs off), clipped by value,
  /// then by global norm, and given to the optimizer. Dropout draws a fresh
  /// mask per micro-batch. The result sums the micro-batches (loss: their
  /// sample-weighted mean). InvalidAttribute for an empty list.
  StepResult step(std::span<const Batch> micro_batches, double lr);

  /// One epoch (0-based `epoch`) over `train` in a freshly shuffled order,
  /// micro-batches of config.batch_size (the last may be smaller), one
  /// optimizer step per config.gradient_accumulation of them, with the
  /// schedule's learning rate. When the trainer stopped (or was restored)
  /// inside epoch `epoch`, the epoch continues from there in its order
  /// instead, and the result covers the whole epoch. test_* of the result are
  /// left 0. With a checkpoint path (fit) and config.checkpoint_every > 0, a
  /// checkpoint is saved every that many steps inside the epoch.
  EpochMetrics train_epoch(const Dataset& train, std::int64_t epoch);

  /// config.epochs epochs (after restore(): the epochs the checkpoint had
  /// not finished, continuing its epoch where it stopped); after each,
  /// evaluates `test` (inference mode) and writes `outputs`, the checkpoint
  /// with the training state (training/checkpoint.hpp). Returns the history
  /// (a restored run's included). A chart name that ends in neither
  /// .svg nor .png throws InvalidAttribute before the first step. A file of
  /// `outputs` that cannot be written (IoError: a full disk, say) does not stop
  /// training, which would lose the weights in memory: it is logged as a
  /// warning naming the reason and, for the checkpoint, checkpoint_status();
  /// the checkpoint and the CSV are tried again after the next epoch, the
  /// chart (which needs gnuplot) is not. Other failures throw.
  std::vector<EpochMetrics> fit(const Dataset& train, const Dataset& test,
                                const TrainOutputs& outputs = {});

  /// Makes this trainer one rank of a data-parallel run (docs/distributed.md):
  /// each step trains on this rank's shard of the global batch (shard_of),
  /// the loss and accuracy are the global batch's, the gradients are the
  /// sample-weighted sum of the ranks' (sum_gradients) and the running
  /// statistics their weighted mean (average_updates), so that every rank
  /// takes the same optimizer step. fit() checks first that every rank has the
  /// same initial weights, training set and settings, and after every epoch
  /// that they still have the same weights (RunError otherwise). Rank r > 0
  /// draws its Dropout masks from a stream of its own. Every rank must run
  /// the same calls (a progress callback must stop every rank at the same
  /// step). `group` must outlive the trainer. Throws InvalidAttribute after
  /// the first step.
  void set_process_group(ProcessGroup& group);

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

  /// Everything a run needs to continue exactly from here (between steps).
  TrainingState state() const;

  /// Continues the run `state` describes (a checkpoint of this graph and
  /// configuration; the weights are the graph's): the optimizer's state, the
  /// random streams, the step, the epoch and the position in its order, the
  /// loss scale and the history; the next fit() continues from there.
  /// Throws InvalidAttribute, changing nothing, when the state does not fit:
  /// another optimizer type, state of a parameter the loss does not reach or
  /// of another dtype or shape, a history that disagrees with the epoch. A
  /// configuration with another seed is a warning: the checkpoint's streams
  /// go on. Training from a state with the same configuration and data ends
  /// bit-identical to the uninterrupted run.
  void restore(const TrainingState& state);

  /// Steps skipped by loss scaling (inf or NaN in the gradients).
  std::int64_t skipped_steps() const { return skipped_steps_; }
  /// The current loss scale (config.loss_scaling; 1 without it).
  double loss_scale() const { return config_.loss_scaling.enabled ? scaler_.scale() : 1.0; }

  const Optimizer& optimizer() const { return optimizer_; }
  const TrainConfig& config() const { return config_; }
  /// Optimizer steps taken so far.
  std::int64_t steps() const { return steps_; }
  /// Trainable initializers the optimizer updates.
  const std::set<std::string>& trained_parameters() const { return reached_; }

 private:
  // Saves the checkpoint with the state (fit's path); a failure is a warning,
  // which says training goes on unless `last`.
  void save_checkpoint_now(bool epoch_end, bool last);

  Graph& graph_;
  TrainConfig config_;
  Executor executor_;
  Optimizer optimizer_;
  std::set<std::string> reached_;
  std::map<std::string, double> weight_decay_;
  Rng shuffle_rng_;
  std::uint64_t seed_;  // the streams' seed: config.seed, or a restored checkpoint's
  std::uint64_t dropout_seed_;
  std::int64_t steps_ = 0;
  LossScaler scaler_;
  std::int64_t skipped_steps_ = 0;
  // Position: the epoch in progress (or next) and, once it began, its order
  // and what its steps so far measured.
  std::int64_t epoch_ = 0;
  std::vector<std::size_t> order_;
  std::uint64_t order_data_ = 0;  // dataset_fingerprint of the data order_ indexes (0: not kept)
  std::size_t epoch_samples_ = 0;
  double epoch_loss_sum_ = 0.0;
  std::int64_t epoch_correct_ = 0;
  double epoch_seconds_ = 0.0;
  std::vector<EpochMetrics> history_;  // finished epochs of fit()
  bool resumed_ = false;               // restore() was called: fit() continues
  std::optional<std::int64_t> checkpoint_step_;  // a checkpoint saved inside an epoch
  ProgressCallback progress_;
  ProcessGroup* group_ = nullptr;  // set_process_group; null trains alone
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
