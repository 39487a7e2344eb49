#include "apps/training_commands.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "apps/arguments.hpp"
#include "apps/commands.hpp"
#include "apps/distributed_training.hpp"
#include "apps/limit_flags.hpp"
#include "apps/output_files.hpp"
#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/json_text.hpp"
#include "serialization/npy.hpp"
#include "training/chart.hpp"
#include "training/checkpoint.hpp"
#include "training/evaluation.hpp"
#include "training/heap_tuning.hpp"
#include "training/history.hpp"
#include "training/datasets.hpp"
#include "training/reload_check.hpp"
#include "training/trainer.hpp"

namespace nodeflow::cli {
namespace {

namespace fs = std::filesystem;
using namespace nodeflow::training;

// A path in the summary on stdout: control characters escaped, as in messages.
std::string shown_path(const fs::path& path) { return printable(path.string(), std::string::npos); }

// The dataset --data names; a value of no known form is wrong usage.
DatasetSource source_of(const DataRequest& data) {
  try {
    return parse_dataset_source(data.spec);
  } catch (const InvalidAttribute& e) {
    throw UsageError(e.what());
  }
}

/// The samples a command works on: those trained on, those evaluated after
/// every epoch (the validation set, else the test set) and the test set.
struct LoadedData {
  std::string name;
  Dataset train, held_out, test;
  bool validation = false;
};

LoadedData load_data(const DataRequest& request) {
  const DatasetSource source = source_of(request);
  TrainTestData d = load_dataset(source);
  LoadedData out{source.name, {}, {}, std::move(d.test), request.validation > 0};
  if (out.validation) {
    Split s;
    try {
      s = split_validation(d.train, static_cast<std::size_t>(request.validation));
    } catch (const InvalidAttribute& e) {
      throw UsageError(std::string("--") + e.what());
    }
    out.train = std::move(s.first);
    out.held_out = std::move(s.second);
  } else {
    out.train = std::move(d.train);
    out.held_out = out.test;  // a handle: no copy of the samples
  }
  return out;
}

// Bindings that do not fit the graph, told how to fix them: the message of
// check_bindings (which lists what the graph has) plus where the bindings
// come from.
void check_bindings_of(const Graph& graph, const Bindings& bindings, const fs::path& config) {
  try {
    check_bindings(graph, bindings);
  } catch (const InvalidGraph& e) {
    if (!config.empty())
      throw InvalidGraph(std::string(e.what()) + "; fix the \"bindings\" object of --config " +
                         config.string() + " (docs/training-config.md)");
    const Bindings d;
    throw InvalidGraph(std::string(e.what()) + "; without --config, eval binds input '" + d.input +
                       "', label '" + d.label + "', loss '" + d.loss + "' and prediction '" +
                       d.prediction + "': give --config FILE, a training configuration whose " +
                       "\"bindings\" object names this graph's tensors " +
                       "(docs/training-config.md)");
  }
}

// OUT.json or OUT.onnx -> OUT<suffix>; other names get the suffix appended.
fs::path beside(const fs::path& output, const std::string& suffix) {
  fs::path p = output;
  if (p.extension() == ".json" || p.extension() == ".onnx") p.replace_extension();
  p += suffix;
  return p;
}

/// One file `train` writes and the option that names it ("the default
/// --metrics" for a name derived from -o).
struct OutputFile {
  std::string option;
  fs::path path;

  std::string named() const { return option + " " + path.string(); }
};

/// Every file one `train` writes, defaults filled in.
struct TrainFiles {
  OutputFile output, metrics, chart, checkpoint;
  std::optional<OutputFile> predictions;

  std::vector<OutputFile> all() const {
    std::vector<OutputFile> files{output, metrics, chart, checkpoint};
    if (predictions) files.push_back(*predictions);
    return files;
  }
};

TrainFiles planned_files(const TrainRequest& request) {
  if (request.output.empty()) throw UsageError("-o: the trained graph needs a file name");
  const auto given_or_default = [&](const char* option, const fs::path& given,
                                    const char* suffix) -> OutputFile {
    if (given.empty())
      return {std::string("the default ") + option, beside(request.output, suffix)};
    return {option, given};
  };
  TrainFiles files{{"-o", request.output},
                   given_or_default("--metrics", request.metrics_csv, ".metrics.csv"),
                   given_or_default("--chart", request.chart, ".chart.svg"),
                   given_or_default("--checkpoint", request.checkpoint, ".checkpoint.json"),
                   std::nullopt};
  if (!request.predictions.empty())
    files.predictions = OutputFile{"--predictions", request.predictions};
  return files;
}

// Two outputs written to one file would silently replace each other (the
// trained graph overwritten by the predictions, say): refused, as `run`
// refuses colliding output names, before anything is written.
void refuse_shared_files(const std::vector<OutputFile>& files) {
  for (std::size_t i = 0; i < files.size(); ++i)
    for (std::size_t j = i + 1; j < files.size(); ++j) {
      const OutputFile &a = files[i], &b = files[j];
      if (!same_file(a.path, b.path)) continue;
      const std::string which =
          a.path == b.path ? a.option + " and " + b.option + " both name " + a.path.string()
                           : a.named() + " and " + b.named() + " are the same file";
      throw UsageError(which + "; each output needs a file of its own");
    }
}

// What would otherwise be found only when the file is first written, an epoch
// or a whole run later: a directory in the file's place, or a directory that
// cannot hold it. Nothing is created here.
void check_destination(const OutputFile& file) {
  const fs::path target = final_target(file.path);
  const std::string named =
      file.named() + (target == file.path ? "" : " (a link to " + target.string() + ")");
  if (file.path.filename().empty()) throw UsageError(named + ": not a file name");
  try {
    check_replaceable(file.path);
  } catch (const IoError& e) {
    throw IoError(file.option + ": " + e.what());
  }
  std::error_code ec;
  // The nearest existing directory on the way: the file's own, or the one its
  // missing directories will be created in.
  fs::path dir = target.parent_path();
  while (!dir.empty() && !fs::exists(dir, ec)) dir = dir.parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec))
    throw IoError(named + ": " + dir.string() + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw IoError(named + ": cannot write in " + dir.string() + ": " + std::strerror(errno));
}

// An output that is one of the command's own inputs would replace it: the
// graph by the metrics, say, an epoch into the run. Refused before anything
// runs; only train's -o may name the graph it trains (training in place: the
// trained graph replaces it atomically at the end).
void refuse_input_as_output(const OutputFile& file, const char* input, const fs::path& path) {
  if (!path.empty() && writes_input(file.path, path))
    throw UsageError(file.named() + " is the file of " + input + " (" + path.string() +
                     "), which this command reads; each output needs a file of its own");
}

// The inputs every output of train and eval is checked against: --config and
// the dataset's files; the graph separately, as train's -o may name it.
void refuse_config_and_data(const OutputFile& file, const fs::path& config,
                            const DataRequest& data) {
  refuse_input_as_output(file, "--config", config);
  const std::string option = "--data " + data.spec;
  for (const DatasetFile& input : source_of(data).files())
    for (const fs::path& name : input.candidates) refuse_input_as_output(file, option.c_str(), name);
}

void refuse_inputs_as_outputs(const TrainRequest& request, const TrainFiles& files) {
  for (const OutputFile& file : files.all()) {
    if (file.option != "-o") refuse_input_as_output(file, "the graph", request.graph);
    // The checkpoint a run resumes from is read whole before anything is
    // written; only its own checkpoint may replace it.
    if (file.option.find("--checkpoint") == std::string::npos)
      refuse_input_as_output(file, "--resume", request.resume);
    refuse_config_and_data(file, request.config, request.data);
  }
}

// The trained graph, the metrics and the chart: the final outputs, saved as
// one set with a manifest per directory (final_sets).
std::vector<OutputFile> final_outputs(const TrainFiles& files) {
  return {files.output, files.metrics, files.chart};
}

// The manifest of the final set names its files in JSON, which holds only UTF-8.
void check_manifest_name(const OutputFile& file) {
  const std::string name = final_target(file.path).filename().string();
  std::string quoted;
  if (!json_text::append_string(quoted, name))
    throw UsageError(file.named() + ": the file name is not UTF-8, and the manifest " +
                     std::string(kManifestName) + " of train's outputs lists it in JSON");
}

void check_outputs(const TrainRequest& request, const TrainFiles& files) {
  refuse_shared_files(files.all());
  for (const OutputFile& file : final_outputs(files)) check_manifest_name(file);
  refuse_inputs_as_outputs(request, files);
  try {
    check_chart_name(files.chart.path);
  } catch (const InvalidAttribute& e) {
    throw UsageError(files.chart.option + ": " + e.what());
  }
  for (const OutputFile& file : files.all()) check_destination(file);
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

// The final outputs (docs/training-config.md, "Saving and reloading"), by
// directory (after links; the default names all share -o's): each
// directory's files are saved as one set with the manifest of run's output
// sets (write_file_set). The first set holds -o's trained graph. A chart
// gnuplot cannot draw is a warning and is left out.
struct FinalSet {
  fs::path directory;
  dev_t device;
  ino_t inode;
  std::vector<SetFile> files;
};

std::vector<FinalSet> final_sets(const TrainFiles& files, const Graph& graph,
                                 const std::vector<EpochMetrics>& history) {
  std::vector<SetFile> set{{files.output.path, graph_file_bytes(files.output.path, graph)},
                           {files.metrics.path, metrics_csv(history)}};
  try {
    set.push_back({files.chart.path, render_chart(history, files.chart.path)});
  } catch (const IoError& e) {
    spdlog::warn("no chart: {}", e.what());
  }
  std::vector<FinalSet> sets;
  for (SetFile& file : set) {
    const fs::path dir = final_target(file.path).parent_path();
    struct stat st {};
    if (::stat(dir.empty() ? "." : dir.c_str(), &st) != 0)
      throw IoError("cannot write " + file.path.string() + ": its directory " +
                    (dir.empty() ? std::string(".") : dir.string()) + ": " +
                    std::strerror(errno));
    auto it = std::find_if(sets.begin(), sets.end(), [&](const FinalSet& d) {
      return d.device == st.st_dev && d.inode == st.st_ino;
    });
    if (it == sets.end()) it = sets.insert(sets.end(), FinalSet{dir, st.st_dev, st.st_ino, {}});
    it->files.push_back(std::move(file));
  }
  return sets;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100.0 * fraction);
  return text;
}

}  // namespace

void train_model(const TrainRequest& request, std::ostream& out, ProcessGroup* group) {
  // Rank 0 of a data-parallel run writes the files, the progress lines and
  // the summary; the other ranks train and log warnings only.
  const bool writer = group == nullptr || group->rank() == 0;
  // Before anything is loaded, trained or created: a bad destination costs nothing yet.
  const TrainFiles files = planned_files(request);
  if (writer) check_outputs(request, files);
  keep_freed_buffers_in_heap();
  if (writer) spdlog::set_level(spdlog::level::info);  // progress lines (stderr)
  TrainConfig config = load_train_config(request.config);
  if (request.threads) config.threads = *request.threads;
  config.max_tensor_bytes = request.max_tensor_bytes;
  if (request.epochs) {
    if (*request.epochs < 1) throw UsageError("--epochs must be >= 1");
    if (config.schedule.kind == ScheduleKind::Cosine && config.schedule.t_max == config.epochs)
      config.schedule.t_max = *request.epochs;  // the period followed the epochs
    config.epochs = *request.epochs;
  }
  Graph graph = load_graph_argument(request.graph, request.read);
  std::optional<TrainingState> resume_state;
  if (!request.resume.empty()) {
    Checkpoint checkpoint = load_checkpoint(request.resume, request.read);
    try {
      check_same_structure(graph.def(), checkpoint.graph.def());
    } catch (const InvalidGraph& e) {
      throw InvalidGraph("--resume " + request.resume.string() + " is not a checkpoint of " +
                         request.graph.string() + ": " + e.what());
    }
    graph = std::move(checkpoint.graph);  // its weights, the graph's structure
    resume_state = std::move(checkpoint.state);
  }
  check_bindings_of(graph, config.bindings, request.config);  // before the data are read
  const LoadedData data = load_data(request.data);

  // Only the checkpoint is saved after every epoch; the metrics and the chart
  // join the trained graph's set at the end.
  TrainOutputs outputs;
  if (writer) outputs.checkpoint = files.checkpoint.path;
  // Created before training, so that an unusable location fails at once; for
  // a link, the directory of the file it points to.
  CreatedDirectories directories;
  if (writer)
    for (const OutputFile& file : files.all())
      directories.create_parent_of(final_target(file.path));

  const auto start = std::chrono::steady_clock::now();
  Trainer trainer(graph, config);
  if (group) trainer.set_process_group(*group);
  if (resume_state) {
    try {
      trainer.restore(*resume_state);
    } catch (const InvalidAttribute& e) {
      throw InvalidAttribute("--resume " + request.resume.string() + ": " + e.what());
    }
  }
  const std::vector<EpochMetrics> history = trainer.fit(data.train, data.held_out, outputs);
  if (!writer) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<FinalSet> sets = final_sets(files, graph, history);
  try {
    write_file_set(sets.front().directory, sets.front().files);
  } catch (const IoError& e) {
    // The weights in memory die with the process: say where a copy is.
    throw IoError(std::string("the trained graph was not saved: ") + e.what() + "; " +
                  trainer.checkpoint_status() +
                  (trainer.checkpoint_epoch()
                       ? ": a graph document like -o's, usable in its place"
                       : ": the trained weights are lost; make room and train again"));
  }
  for (std::size_t k = 1; k < sets.size(); ++k) write_file_set(sets[k].directory, sets[k].files);

  const ReloadCheck check =
      check_reload(graph, load_graph_argument(request.output, request.read), data.test,
                   config.bindings, config.eval_batch_size, config.executor_options());
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
      << config.threads << " thread(s)"
      << (group == nullptr  ? ""
          : group->size() > 1 ? " on each of " + std::to_string(group->size()) +
                                    " data-parallel ranks"
                              : " (a data-parallel job of one rank)")
      << "\n";
  if (data.validation)
    out << "validation set (" << data.held_out.size() << " samples held out of the training set): "
        << "accuracy " << percent(last.test_accuracy) << ", loss " << last.test_loss << "\n";
  out << data.name << " test set (" << data.test.size() << " samples): accuracy "
      << percent(check.in_memory.confusion.accuracy()) << ", loss " << check.in_memory.loss
      << "\n";
  out << "saved " << shown_path(request.output) << "; reloaded: predictions identical bit for bit ("
      << check.reloaded.predictions.numel() << " " << dtype_name(check.reloaded.predictions.dtype())
      << " values), accuracy " << percent(check.reloaded.confusion.accuracy()) << "\n";
  out << "metrics " << shown_path(files.metrics.path) << ", chart "
      << shown_path(files.chart.path) << ", checkpoint " << shown_path(outputs.checkpoint) << "\n";
  out << check.reloaded.confusion.format();
}

void evaluate_model(const EvalRequest& request, std::ostream& out) {
  if (!request.predictions.empty()) {
    const OutputFile predictions{"--predictions", request.predictions};
    refuse_input_as_output(predictions, "the graph", request.graph);
    refuse_config_and_data(predictions, request.config, request.data);
    check_destination(predictions);  // before the evaluation, not after it
  }
  keep_freed_buffers_in_heap();
  Bindings bindings;
  std::int64_t batch_size = 256;
  if (!request.config.empty()) {
    const TrainConfig config = load_train_config(request.config);
    bindings = config.bindings;
    batch_size = config.eval_batch_size;
  }
  const int threads = request.threads.value_or(1);
  if (request.split != "test" && request.split != "train" && request.split != "validation" &&
      request.split != "all")
    throw UsageError("--split: expected test, train, validation or all, got '" + request.split +
                     "'");
  const Graph graph = load_graph_argument(request.graph, request.read);
  check_bindings_of(graph, bindings, request.config);  // before the data are read
  if (request.split == "validation" && request.data.validation == 0)
    throw UsageError("--split validation: --validation N says how many training samples are held "
                     "out (the number train was given)");
  const std::string name = source_of(request.data).name;
  Dataset set;
  if (request.split == "all") {
    // The training samples in file order, validation samples included.
    const TrainTestData d = load_dataset(source_of(request.data));
    set = concatenate(d.train, d.test);
  } else {
    LoadedData data = load_data(request.data);
    set = request.split == "train"        ? std::move(data.train)
          : request.split == "validation" ? std::move(data.held_out)
                                          : std::move(data.test);
  }
  const auto start = std::chrono::steady_clock::now();
  const Evaluation ev =
      evaluate(graph, set, bindings, batch_size, ExecutorOptions{threads, request.max_tensor_bytes});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!request.predictions.empty()) {
    CreatedDirectories directories;  // train's rule: missing directories are created
    directories.create_parent_of(request.predictions);
    write_npy(request.predictions, ev.predictions);
    directories.keep();
  }
  out << "evaluated " << shown_path(request.graph) << " on the " << name << " "
      << request.split << " split (" << set.size() << " samples) in " << seconds << " s ("
      << static_cast<long long>(static_cast<double>(set.size()) / seconds) << " images/s, "
      << threads << " thread(s)): loss " << ev.loss << "\n";
  out << ev.confusion.format();
}

namespace {

constexpr const char* kDataHelp =
    "Dataset: mnist[:DIR], fashion-mnist[:DIR] or npy:DIR (docs/training-config.md, "
    "\"Datasets\"); mnist without DIR reads $NODEFLOW_MNIST_DIR, else .cache/mnist";

void add_validation_option(CLI::App& verb, std::uint64_t& count) {
  add_count_option(verb, "--validation", count, 1,
                   static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()), false,
                   "Hold N training samples out (a fixed shuffle) as the validation set, "
                   "evaluated after every epoch instead of the test set");
}

}  // namespace

void add_training_verbs(CLI::App& app, TrainingVerbs& verbs) {
  TrainRequest& t = verbs.train_request;
  verbs.train = app.add_subcommand(
      "train",
      "Train a graph on a dataset; save it, reload it and check its predictions bit for bit");
  verbs.train
      ->add_option("GRAPH", t.graph,
                   "Graph document to train (nodeflow.graph JSON), or ONNX model (.onnx); - for a "
                   "document on standard input")
      ->required();
  verbs.train->add_option("--config", t.config, "Training configuration (docs/training-config.md)")
      ->required();
  verbs.train->add_option("--data", t.data.spec, kDataHelp)->required();
  verbs.train->add_option("-o,--output", t.output, "Where to save the trained graph: an ONNX model for .onnx, else a graph "
                          "document")->required();
  verbs.train->add_option("--metrics", t.metrics_csv, "Metrics CSV (default: OUT.metrics.csv)");
  verbs.train->add_option("--chart", t.chart,
                          "Loss/accuracy chart, .svg or .png (default: OUT.chart.svg)");
  verbs.train->add_option("--checkpoint", t.checkpoint,
                          "Checkpoint after every epoch (default: OUT.checkpoint.json)");
  verbs.train->add_option("--resume", t.resume,
                          "Continue the run a checkpoint of this graph was saved by (its "
                          "weights, optimizer state, position and random streams)");
  verbs.train->add_option("--predictions", t.predictions,
                          "Also write the test set's scores (.npy): the prediction output "
                          "of each sample, e.g. float32 logits [10000, 10]; a row's argmax is its "
                          "class");
  add_threads_option(*verbs.train, verbs.threads,
                     "Threads the kernels may use (overrides the config)");
  // The configuration's "epochs" is an int64: its range, refused beyond, not clamped.
  add_count_option(*verbs.train, "--epochs", verbs.epochs, 1,
                   static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()), false,
                   "Epochs (overrides the config)");
  add_validation_option(*verbs.train, t.data.validation);
  verbs.train->add_flag("--distributed", t.distributed,
                        "Be one rank of a data-parallel run started by mpirun -np N: each rank "
                        "trains its shard of every batch, rank 0 writes the files "
                        "(docs/distributed.md)");
  add_max_initializer_bytes(*verbs.train, t.read);
  add_max_tensor_bytes(*verbs.train, t.max_tensor_bytes);

  EvalRequest& e = verbs.eval_request;
  verbs.eval = app.add_subcommand(
      "eval", "Evaluate a graph on a dataset: accuracy, per-class accuracy and confusion matrix");
  verbs.eval
      ->add_option("GRAPH", e.graph,
                   "Graph document (nodeflow.graph JSON), or ONNX model (.onnx); - for a document "
                   "on standard input")
      ->required();
  verbs.eval->add_option("--data", e.data.spec, kDataHelp)->required();
  verbs.eval
      ->add_option("--split", e.split,
                   "Which samples: test (default), train (less --validation's), validation or "
                   "all (training then test)")
      ->check(CLI::IsMember({"test", "train", "validation", "all"}));
  add_validation_option(*verbs.eval, e.data.validation);
  verbs.eval->add_option("--config", e.config,
                         "Training configuration to take \"bindings\" (default: image, label, "
                         "loss, logits) and eval_batch_size from");
  verbs.eval->add_option("--predictions", e.predictions,
                         "Also write the scores (.npy): the prediction output of each sample, e.g. "
                         "float32 logits [N, 10]; a row's argmax is its class");
  add_threads_option(*verbs.eval, verbs.threads, "Threads the kernels may use (default 1)");
  add_max_initializer_bytes(*verbs.eval, e.read);
  add_max_tensor_bytes(*verbs.eval, e.max_tensor_bytes);
}

bool run_training_verb(TrainingVerbs& verbs, std::ostream& out) {
  if (verbs.train->parsed()) {
    if (verbs.threads > 0) verbs.train_request.threads = verbs.threads;
    if (verbs.epochs > 0) verbs.train_request.epochs = static_cast<long long>(verbs.epochs);
    if (verbs.train_request.distributed)
      train_distributed(verbs.train_request, out);
    else
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
