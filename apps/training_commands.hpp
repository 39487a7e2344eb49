#pragma once
// The training verbs of `nodeflow`: `train` and `eval` on a named dataset.
// Like the other verbs they throw nodeflow::Error (exit status 1) on a failure
// in the input or the run and UsageError (exit status 2) on wrong usage.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "core/executor.hpp"
#include "serialization/json_reader.hpp"

namespace nodeflow::training {
class ProcessGroup;
}

namespace nodeflow::cli {

/// Where the samples come from: `--data` (training/datasets.hpp,
/// parse_dataset_source: mnist[:DIR], fashion-mnist[:DIR], npy:DIR) and
/// `--validation N`, the training samples held out for validation
/// (split_validation; 0: none). A dataset whose files are missing is refused
/// (IoError) before any is read, naming the missing files, the folder, where it
/// came from and how to get the data (load_dataset).
struct DataRequest {
  std::string spec = "mnist";   ///< the --data value
  std::uint64_t validation = 0; ///< --validation N
};

/// `nodeflow train GRAPH --config CONFIG --data SPEC -o OUT.json`.
struct TrainRequest {
  std::filesystem::path graph;
  std::filesystem::path config;
  DataRequest data;
  std::filesystem::path output;       ///< the trained graph document
  std::filesystem::path metrics_csv;  ///< default: OUT with ".metrics.csv" for ".json"
  std::filesystem::path chart;        ///< default: OUT with ".chart.svg"
  std::filesystem::path checkpoint;   ///< default: OUT with ".checkpoint.json"
  /// Optional .npy of the test set's scores: the prediction output per
  /// sample, [10000, 10] for MNIST, in its dtype (float32 logits for the examples).
  std::filesystem::path predictions;
  std::optional<int> threads;         ///< overrides the configuration's
  std::optional<long long> epochs;    ///< overrides the configuration's
  bool distributed = false;  ///< --distributed: a rank of an MPI job (train_distributed)
  /// --resume: a checkpoint of an earlier run of this graph to continue
  /// (training/checkpoint.hpp); may be the file --checkpoint names.
  std::filesystem::path resume;
  ReadOptions read;                   ///< --max-initializer-bytes (the graph and its reload)
  std::uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;  ///< --max-tensor-bytes
};

/// First checks, before anything is loaded or created, where the files go:
/// UsageError when two outputs (defaults included) are one file after symbolic
/// links and "."/".." are resolved, when an output is the graph (other than
/// `output`: training in place) or the configuration, or when the chart's name ends in neither
/// .svg nor .png; IoError naming the option and the path when a destination is
/// a directory or its directory cannot be created or written in. Then loads the
/// graph and configuration, checks the bindings against the graph before the
/// data are read (InvalidGraph naming the graph's tensors and --config's
/// "bindings"), trains on the training split less the validation samples
/// (logging progress on stderr; the validation set, else the test set, is
/// evaluated after every epoch),
/// keeps the checkpoint up to date (one that cannot be written is a warning:
/// Trainer::fit), saves the trained graph to `output` with the metrics CSV and
/// the chart as one set per directory with a manifest (write_file_set;
/// IoError naming the last good checkpoint and its epoch, or that none was
/// saved, when -o's set fails), reloads it and checks that it predicts
/// the test set exactly as the network in memory (Error when not), then
/// prints a summary and the test set's confusion matrix to `out`.
/// With a `group` of data-parallel ranks (docs/distributed.md), every rank
/// trains its shard of each batch; only rank 0 checks and writes the files,
/// logs progress and prints to `out`.
void train_model(const TrainRequest& request, std::ostream& out,
                 training::ProcessGroup* group = nullptr);

/// `nodeflow eval GRAPH --data SPEC`.
struct EvalRequest {
  std::filesystem::path graph;
  DataRequest data;
  /// "test", "train" (less the validation samples), "validation" (needs
  /// data.validation) or "all" (the training samples, then the test samples)
  std::string split = "test";
  std::filesystem::path config;  ///< optional: bindings and eval_batch_size from a training config
  /// Optional .npy of the scores: the prediction output per sample of the
  /// split, [N, classes] in its dtype (float32 logits for the examples).
  std::filesystem::path predictions;
  std::optional<int> threads;
  ReadOptions read;  ///< --max-initializer-bytes
  std::uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;  ///< --max-tensor-bytes
};

/// Evaluates the graph in inference mode on the split and prints the loss, the accuracy,
/// the per-class accuracy and the confusion matrix to `out`. UsageError,
/// before anything is loaded, when `predictions` is the graph's or the
/// configuration's file; InvalidGraph, before the data are read, when the
/// bindings (`config`'s, else the defaults) do not fit the graph, naming the
/// graph's tensors and how to give bindings (--config FILE and its
/// "bindings").
void evaluate_model(const EvalRequest& request, std::ostream& out);

}  // namespace nodeflow::cli

namespace CLI {
class App;
}

namespace nodeflow::cli {

/// The `train` and `eval` subcommands and what their options parse into.
struct TrainingVerbs {
  CLI::App* train = nullptr;
  CLI::App* eval = nullptr;
  TrainRequest train_request;
  EvalRequest eval_request;
  // Parsed as plain values; copied into the requests' optionals when given.
  int threads = 0;
  std::uint64_t epochs = 0;  ///< add_count_option: 1 to 2^63 - 1 when given
};

/// Adds `train` and `eval` to `app`; their options parse into `verbs`.
void add_training_verbs(CLI::App& app, TrainingVerbs& verbs);

/// Runs whichever of the two was parsed (results on `out`, progress on the
/// log); returns false when neither was.
bool run_training_verb(TrainingVerbs& verbs, std::ostream& out);

}  // namespace nodeflow::cli
