#pragma once
// Training runs started through the server (docs/server.md, "Training"): each
// trains its own copy of a graph on a thread of its own with
// training::Trainer (the one training loop; its progress callback feeds the
// run's state and its stop request), then saves the trained graph.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/graph.hpp"
#include "server/datasets.hpp"
#include "training/history.hpp"
#include "training/train_config.hpp"
#include "training/trainer.hpp"

namespace nodeflow::server {

enum class RunState { Loading, Training, Done, Stopped, Failed };

/// "loading" (the dataset), "training", "done", "stopped" (by a stop
/// request; the graph trained so far is saved), "failed".
const char* run_state_name(RunState state);

/// What a run has done so far, copied out under its lock.
struct RunSnapshot {
  RunState state = RunState::Loading;
  std::uint64_t version = 0;  ///< grows with every change
  std::optional<training::Progress> progress;  ///< after the latest step
  std::vector<training::EpochMetrics> history;  ///< per finished epoch
  std::string saved;                            ///< the file saved under the root, relative
  std::vector<std::string> warnings;            ///< the ONNX writer's, when saved as .onnx
  std::string error;                            ///< why it failed

  bool finished() const { return state == RunState::Done || state == RunState::Stopped || state == RunState::Failed; }
};

/// What a run needs, checked before it starts.
struct RunPlan {
  GraphDef graph;  ///< validated (Graph built) by the caller
  training::TrainConfig config;
  DatasetEntry dataset;
  std::filesystem::path save_to;  ///< empty: not saved
  std::string save_as;            ///< save_to as the request named it
};

class TrainingRun {
 public:
  TrainingRun(std::string id, RunPlan plan);
  ~TrainingRun();  ///< asks the run to stop and waits for it
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  const std::string& id() const { return id_; }
  RunSnapshot snapshot() const;
  /// The snapshot once its version differs from `seen` or the run has finished,
  /// or after `timeout` whatever it is.
  RunSnapshot wait_for_change(std::uint64_t seen, std::chrono::milliseconds timeout) const;
  /// Stops after the step under way; the partial epoch is evaluated and the
  /// graph saved as after a full run. No effect on a finished run.
  void request_stop();
  /// The trained graph once training ended (also when saving it then failed);
  /// nothing before.
  std::optional<GraphDef> trained_graph() const;

 private:
  void work();
  template <typename F> void update(F&& change);

  const std::string id_;
  RunPlan plan_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  RunSnapshot state_;
  bool stop_requested_ = false;
  std::optional<GraphDef> trained_;
  std::thread thread_;  // last: started once everything above exists
};

/// The runs of one server, by id ("1", "2", ...). At most `max_active` train
/// at once; finished runs are kept (their state and trained graph) up to
/// `keep_finished`, the oldest forgotten first.
class TrainingRuns {
 public:
  explicit TrainingRuns(std::size_t max_active = 1, std::size_t keep_finished = 8);
  ~TrainingRuns();  ///< stops every run and waits for it

  /// Starts a run; returns its id. Throws BusyError when max_active runs are
  /// under way.
  std::string start(RunPlan plan);
  /// The run `id`, or nullptr.
  std::shared_ptr<TrainingRun> find(const std::string& id) const;
  /// Asks every run to stop (the server is shutting down).
  void stop_all();

 private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::shared_ptr<TrainingRun>> runs_;
  std::uint64_t next_id_ = 1;
  std::size_t max_active_;
  std::size_t keep_finished_;
};

/// Too many runs under way.
class BusyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nodeflow::server
