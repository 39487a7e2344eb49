#pragma once
// The training configuration: a small JSON document of its own
// (docs/training-config.md describes every key).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "core/errors.hpp"
#include "core/executor.hpp"
#include "training/gradient_steps.hpp"
#include "training/lr_schedule.hpp"
#include "training/optimizer.hpp"

namespace nodeflow::training {

/// The configuration document is wrong: JSON syntax, unknown keys, values of
/// the wrong type or out of range. The message names the JSON path.
class InvalidConfig : public Error {
 public:
  using Error::Error;
};

/// Which graph tensors play which part in training.
struct Bindings {
  std::string input = "image";  ///< graph input fed with the samples
  std::string label = "label";  ///< graph input fed with the int64 class labels
  std::string loss = "loss";    ///< scalar graph output that backward is seeded at (with 1)
  std::string prediction =
      "logits";  ///< graph output [N, classes]; its argmax is the predicted class
};

struct TrainConfig {
  OptimizerSettings optimizer;
  ScheduleSettings schedule;
  std::int64_t batch_size = 64;
  std::int64_t epochs = 10;
  std::uint64_t seed = 0;  ///< shuffling and Dropout masks
  int threads = 1;         ///< threads the kernels of a run may use (ExecutorOptions)
  /// ExecutorOptions::max_tensor_bytes of the runs. Not a key of the file: the
  /// command line's --max-tensor-bytes sets it.
  std::uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;
  std::int64_t eval_batch_size = 256;
  std::int64_t log_every = 50;  ///< batches between progress lines; 0 logs epochs only
  std::map<std::string, double> weight_decay_overrides;  ///< by initializer name
  Bindings bindings;
  ClipSettings clipping;        ///< gradient_clipping: by value, by global norm
  /// Micro-batches of batch_size whose gradients make one optimizer step
  /// (weighted by their sample counts: the step on the k-times batch of a mean loss).
  std::int64_t gradient_accumulation = 1;
  LossScaleSettings loss_scaling;  ///< dynamic loss scaling (float16, bfloat16)
  /// Optimizer steps between checkpoints within an epoch; 0: after every epoch only.
  std::int64_t checkpoint_every = 0;

  /// The settings of the runs' Executor (threads, max_tensor_bytes).
  ExecutorOptions executor_options() const { return {threads, max_tensor_bytes}; }
};

/// Parses a configuration document. Every key is optional except
/// optimizer.type and optimizer.lr; unknown keys are errors. The cosine
/// schedule's t_max defaults to `epochs`. Throws InvalidConfig naming the JSON
/// path ("optimizer.momentum: expected a number >= 0, got -1").
TrainConfig parse_train_config(std::string_view text);

/// Reads the file (IoError naming the path), then parse_train_config; errors
/// are prefixed by the path.
TrainConfig load_train_config(const std::filesystem::path& path);

}  // namespace nodeflow::training
