#include "server/training_runs.hpp"

#include <exception>
#include <new>

#include "core/errors.hpp"
#include "serialization/graph_file.hpp"
#include "training/evaluation.hpp"

namespace nodeflow::server {

const char* run_state_name(RunState state) {
  switch (state) {
    case RunState::Loading: return "loading";
    case RunState::Training: return "training";
    case RunState::Done: return "done";
    case RunState::Stopped: return "stopped";
    case RunState::Failed: return "failed";
  }
  return "failed";
}

TrainingRun::TrainingRun(std::string id, RunPlan plan)
    : id_(std::move(id)), plan_(std::move(plan)), thread_([this] { work(); }) {}

TrainingRun::~TrainingRun() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

template <typename F> void TrainingRun::update(F&& change) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    change(state_);
    ++state_.version;
  }
  changed_.notify_all();
}

RunSnapshot TrainingRun::snapshot() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

RunSnapshot TrainingRun::wait_for_change(std::uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return state_.version != seen || state_.finished(); });
  return state_;
}

void TrainingRun::request_stop() {
  const std::lock_guard<std::mutex> lock(mutex_);
  stop_requested_ = true;
}

std::optional<GraphDef> TrainingRun::trained_graph() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return trained_;
}

void TrainingRun::work() {
  try {
    const SplitDataset data = plan_.dataset.load();
    Graph graph(plan_.graph);
    bool stop = false;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop = stop_requested_;
    }
    update([](RunSnapshot& s) { s.state = RunState::Training; });
    training::Trainer trainer(graph, plan_.config);
    trainer.set_progress_callback([this](const training::Progress& p) {
      bool go_on = true;
      update([&](RunSnapshot& s) { s.progress = p; });
      const std::lock_guard<std::mutex> lock(mutex_);
      go_on = !stop_requested_;
      return go_on;
    });
    std::vector<training::EpochMetrics> history;
    if (!stop) history = trainer.fit(data.train, data.test);
    const bool stopped = stop || trainer.stopped();
    {
      // Kept before the save: a save that fails loses no weights.
      GraphDef trained = graph.def();
      const std::lock_guard<std::mutex> lock(mutex_);
      trained_ = std::move(trained);
    }
    update([&](RunSnapshot& s) { s.history = history; });
    std::vector<std::string> warnings;
    if (!plan_.save_to.empty()) {
      try {
        warnings = save_graph_path(plan_.save_to, graph);
      } catch (const IoError& e) {
        throw IoError(std::string("the trained graph was not saved: ") + e.what() +
                      " (GET /api/train/" + id_ + "/graph returns it)");
      }
    }
    update([&](RunSnapshot& s) {
      s.saved = plan_.save_to.empty() ? "" : plan_.save_as;
      s.warnings = std::move(warnings);
      s.state = stopped ? RunState::Stopped : RunState::Done;
    });
  } catch (const std::bad_alloc&) {
    update([](RunSnapshot& s) {
      s.error = "out of memory";
      s.state = RunState::Failed;
    });
  } catch (const std::exception& e) {
    const std::string message = e.what();
    update([&](RunSnapshot& s) {
      s.error = message;
      s.state = RunState::Failed;
    });
  }
}

TrainingRuns::TrainingRuns(std::size_t max_active, std::size_t keep_finished)
    : max_active_(max_active), keep_finished_(keep_finished) {}

TrainingRuns::~TrainingRuns() { stop_all(); }

void TrainingRuns::stop_all() {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [id, run] : runs_) run->request_stop();
}

std::string TrainingRuns::start(RunPlan plan) {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::size_t active = 0, finished = 0;
  for (const auto& [id, run] : runs_) (run->snapshot().finished() ? finished : active) += 1;
  if (active >= max_active_)
    throw BusyError("a training run is under way (at most " + std::to_string(max_active_) +
                    " at once): stop it or wait for it to end");
  // The oldest finished runs make room (a run's trained graph stays in memory).
  for (auto it = runs_.begin(); it != runs_.end() && finished >= keep_finished_;) {
    if (it->second->snapshot().finished()) {
      it = runs_.erase(it);
      --finished;
    } else {
      ++it;
    }
  }
  const std::uint64_t id = next_id_++;
  runs_.emplace(id, std::make_shared<TrainingRun>(std::to_string(id), std::move(plan)));
  return std::to_string(id);
}

std::shared_ptr<TrainingRun> TrainingRuns::find(const std::string& id) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, run] : runs_)
    if (run->id() == id) return run;
  return nullptr;
}

}  // namespace nodeflow::server
