#include "apps/training_commands.hpp"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "apps/arguments.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/npy.hpp"
#include "training/heap_tuning.hpp"
#include "training/mnist.hpp"
#include "training/reload_check.hpp"
#include "training/trainer.hpp"

namespace nodeflow::cli {
namespace {

namespace fs = std::filesystem;
using namespace nodeflow::training;

MnistData load_data(const DataRequest& data) {
  if (data.name != "mnist")
    throw UsageError("--data: unknown dataset '" + data.name + "' (known: mnist)");
  const fs::path dir = data.mnist_dir.empty() ? default_mnist_dir() : data.mnist_dir;
  if (!mnist_available(dir))
    throw IoError("MNIST digits not found in " + dir.string() +
                  " (scripts/fetch_mnist.sh fetches them)");
  return load_mnist(dir);
}

// OUT.json -> OUT<suffix>; other names get the suffix appended.
fs::path beside(const fs::path& output, const std::string& suffix) {
  fs::path p = output;
  if (p.extension() == ".json") p.replace_extension();
  p += suffix;
  return p;
}

/// The directories a command creates for its files. Unless kept, those still
/// empty are removed again (innermost first) when it ends: a run that fails
/// (a diverged loss, say) before saving anything leaves no empty folders behind,
/// while one that failed after a checkpoint keeps it.
class CreatedDirectories {
 public:
  CreatedDirectories() = default;
  CreatedDirectories(const CreatedDirectories&) = delete;
  CreatedDirectories& operator=(const CreatedDirectories&) = delete;
  ~CreatedDirectories() {
    // A directory is longer than every directory that holds it.
    std::sort(created_.begin(), created_.end(), [](const fs::path& a, const fs::path& b) {
      return a.native().size() > b.native().size();
    });
    for (const fs::path& dir : created_) {
      std::error_code ec;
      if (fs::is_empty(dir, ec) && !ec) fs::remove(dir, ec);
    }
  }

  void create_parent_of(const fs::path& file) {
    if (!file.has_parent_path()) return;
    std::vector<fs::path> missing;
    for (fs::path dir = file.parent_path(); !dir.empty() && !fs::exists(dir);
         dir = dir.parent_path())
      missing.push_back(dir);
    fs::create_directories(file.parent_path());
    created_.insert(created_.end(), missing.begin(), missing.end());
  }

  /// The command succeeded: its directories stay, empty or not.
  void keep() { created_.clear(); }

 private:
  std::vector<fs::path> created_;
};

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100.0 * fraction);
  return text;
}

}  // namespace

void train_model(const TrainRequest& request, std::ostream& out) {
  keep_freed_buffers_in_heap();
  spdlog::set_level(spdlog::level::info);  // progress lines (stderr)
  TrainConfig config = load_train_config(request.config);
  if (request.threads) config.threads = *request.threads;
  if (request.epochs) {
    if (*request.epochs < 1) throw UsageError("--epochs must be >= 1");
    if (config.schedule.kind == ScheduleKind::Cosine && config.schedule.t_max == config.epochs)
      config.schedule.t_max = *request.epochs;  // the period followed the epochs
    config.epochs = *request.epochs;
  }
  Graph graph = load_graph_file(request.graph);
  const MnistData data = load_data(request.data);

  TrainOutputs outputs;
  outputs.metrics_csv =
      request.metrics_csv.empty() ? beside(request.output, ".metrics.csv") : request.metrics_csv;
  outputs.chart = request.chart.empty() ? beside(request.output, ".chart.svg") : request.chart;
  outputs.checkpoint =
      request.checkpoint.empty() ? beside(request.output, ".checkpoint.json") : request.checkpoint;
  // Created before training, so that an unusable location fails at once.
  CreatedDirectories directories;
  for (const fs::path& p : {request.output, outputs.metrics_csv, outputs.chart, outputs.checkpoint})
    directories.create_parent_of(p);

  const auto start = std::chrono::steady_clock::now();
  Trainer trainer(graph, config);
  const std::vector<EpochMetrics> history = trainer.fit(data.train, data.test, outputs);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  save_graph_file(request.output, graph.def());

  const ReloadCheck check = check_reload(graph, request.output, data.test, config.bindings,
                                         config.eval_batch_size, config.threads);
  if (!request.predictions.empty()) write_npy(request.predictions, check.in_memory.predictions);
  if (!check.identical())
    throw RunError("the reloaded " + request.output.string() + " predicts sample " +
                   std::to_string(*check.first_difference) +
                   " of the held-out set differently from the trained network in memory");

  directories.keep();

  const EpochMetrics& last = history.back();
  out << "trained " << graph.name() << " for " << history.size() << " epoch(s) (" << trainer.steps()
      << " steps) in " << static_cast<long long>(seconds + 0.5) << " s, "
      << static_cast<long long>(last.samples_per_second) << " samples/s in the last epoch, "
      << config.threads << " thread(s)\n";
  out << "held-out set (" << data.test.size() << " digits): accuracy "
      << percent(last.test_accuracy) << ", loss " << last.test_loss << "\n";
  out << "saved " << request.output.string() << "; reloaded: predictions identical bit for bit ("
      << check.reloaded.predictions.numel() << " " << dtype_name(check.reloaded.predictions.dtype())
      << " values), accuracy " << percent(check.reloaded.confusion.accuracy()) << "\n";
  out << "metrics " << outputs.metrics_csv.string() << ", chart " << outputs.chart.string()
      << ", checkpoint " << outputs.checkpoint.string() << "\n";
  out << check.reloaded.confusion.format();
}

void evaluate_model(const EvalRequest& request, std::ostream& out) {
  keep_freed_buffers_in_heap();
  Bindings bindings;
  std::int64_t batch_size = 256;
  if (!request.config.empty()) {
    const TrainConfig config = load_train_config(request.config);
    bindings = config.bindings;
    batch_size = config.eval_batch_size;
  }
  const int threads = request.threads.value_or(1);
  if (request.split != "test" && request.split != "train" && request.split != "all")
    throw UsageError("--split: expected test, train or all, got '" + request.split + "'");
  const Graph graph = load_graph_file(request.graph);
  Dataset set;
  if (request.split == "all") {
    if (request.data.name != "mnist")
      throw UsageError("--data: unknown dataset '" + request.data.name + "' (known: mnist)");
    set = load_mnist_digits(request.data.mnist_dir.empty() ? default_mnist_dir()
                                                           : request.data.mnist_dir);
  } else {
    MnistData data = load_data(request.data);
    set = request.split == "train" ? std::move(data.train) : std::move(data.test);
  }
  const auto start = std::chrono::steady_clock::now();
  const Evaluation ev = evaluate(graph, set, bindings, batch_size, threads);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!request.predictions.empty()) write_npy(request.predictions, ev.predictions);
  out << "evaluated " << request.graph.string() << " on the MNIST " << request.split << " split ("
      << set.size() << " digits) in " << seconds << " s ("
      << static_cast<long long>(static_cast<double>(set.size()) / seconds) << " images/s, "
      << threads << " thread(s)): loss " << ev.loss << "\n";
  out << ev.confusion.format();
}

void add_training_verbs(CLI::App& app, TrainingVerbs& verbs) {
  TrainRequest& t = verbs.train_request;
  verbs.train = app.add_subcommand(
      "train",
      "Train a graph on a dataset; save it, reload it and check its predictions bit for bit");
  verbs.train->add_option("GRAPH", t.graph, "Graph document to train (nodeflow.graph JSON)")
      ->required();
  verbs.train->add_option("--config", t.config, "Training configuration (docs/training-config.md)")
      ->required();
  verbs.train->add_option("--data", t.data.name, "Dataset")
      ->required()
      ->check(CLI::IsMember({"mnist"}));
  verbs.train->add_option("-o,--output", t.output, "Where to save the trained graph")->required();
  verbs.train->add_option("--metrics", t.metrics_csv, "Metrics CSV (default: OUT.metrics.csv)");
  verbs.train->add_option("--chart", t.chart,
                          "Loss/accuracy chart, .svg or .png (default: OUT.chart.svg)");
  verbs.train->add_option("--checkpoint", t.checkpoint,
                          "Checkpoint after every epoch (default: OUT.checkpoint.json)");
  verbs.train->add_option("--predictions", t.predictions,
                          "Also write the held-out predictions (.npy)");
  verbs.train
      ->add_option("--threads", verbs.threads, "Threads the kernels may use (overrides the config)")
      ->check(CLI::Range(1, 1024));
  verbs.train->add_option("--epochs", verbs.epochs, "Epochs (overrides the config)")
      ->check(CLI::PositiveNumber);
  verbs.train->add_option(
      "--mnist-dir", t.data.mnist_dir,
      "MNIST digits folder (default: $NODEFLOW_MNIST_DIR or .cache/mnist/digits)");

  EvalRequest& e = verbs.eval_request;
  verbs.eval = app.add_subcommand(
      "eval", "Evaluate a graph on a dataset: accuracy, per-class accuracy and confusion matrix");
  verbs.eval->add_option("GRAPH", e.graph, "Graph document (nodeflow.graph JSON)")->required();
  verbs.eval->add_option("--data", e.data.name, "Dataset")
      ->required()
      ->check(CLI::IsMember({"mnist"}));
  verbs.eval->add_option("--split", e.split, "Which digits: test (default), train or all")
      ->check(CLI::IsMember({"test", "train", "all"}));
  verbs.eval->add_option("--config", e.config,
                         "Training configuration to take bindings and eval_batch_size from");
  verbs.eval->add_option("--predictions", e.predictions, "Also write the predictions (.npy)");
  verbs.eval->add_option("--threads", verbs.threads, "Threads the kernels may use (default 1)")
      ->check(CLI::Range(1, 1024));
  verbs.eval->add_option(
      "--mnist-dir", e.data.mnist_dir,
      "MNIST digits folder (default: $NODEFLOW_MNIST_DIR or .cache/mnist/digits)");
}

bool run_training_verb(TrainingVerbs& verbs, std::ostream& out) {
  if (verbs.train->parsed()) {
    if (verbs.threads > 0) verbs.train_request.threads = verbs.threads;
    if (verbs.epochs > 0) verbs.train_request.epochs = verbs.epochs;
    train_model(verbs.train_request, out);
    return true;
  }
  if (verbs.eval->parsed()) {
    if (verbs.threads > 0) verbs.eval_request.threads = verbs.threads;
    evaluate_model(verbs.eval_request, out);
    return true;
  }
  return false;
}

}  // namespace nodeflow::cli
