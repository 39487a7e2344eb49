#include "server/event_stream.hpp"

#include <optional>
#include <thread>

#include "server/http_support.hpp"

namespace nodeflow::server {
namespace {

using Clock = std::chrono::steady_clock;

Json progress_value(const training::Progress& p) {
  return {{"epoch", p.epoch},     {"epochs", p.epochs},
          {"batch", p.batch},     {"batches", p.batches},
          {"step", p.step},       {"loss", p.loss},
          {"accuracy", p.accuracy}, {"lr", p.lr},
          {"samples_per_s", p.samples_per_second}, {"eta_s", p.eta_seconds}};
}

Json status_value(const std::string& id, const RunSnapshot& s) {
  Json history = Json::array();
  for (const training::EpochMetrics& m : s.history)
    history.push_back({{"epoch", m.epoch},
                       {"lr", m.lr},
                       {"train_loss", m.train_loss},
                       {"train_accuracy", m.train_accuracy},
                       {"test_loss", m.test_loss},
                       {"test_accuracy", m.test_accuracy},
                       {"seconds", m.seconds},
                       {"samples_per_s", m.samples_per_second}});
  return {{"run", id},
          {"state", run_state_name(s.state)},
          {"progress", s.progress ? progress_value(*s.progress) : Json(nullptr)},
          {"history", std::move(history)},
          {"saved", s.saved.empty() ? Json(nullptr) : Json(s.saved)},
          {"warnings", s.warnings},
          {"error", s.error.empty() ? Json(nullptr) : Json(s.error)}};
}

std::string dumped(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

// What one stream has sent so far.
struct StreamState {
  std::uint64_t seen = ~std::uint64_t{0};
  std::optional<RunState> state;
  std::int64_t step = -1;
  Clock::time_point last_progress{};
};

}  // namespace

std::string sse_event(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

std::string progress_json(const training::Progress& p) { return dumped(progress_value(p)); }

std::string status_json(const std::string& id, const RunSnapshot& s) { return dumped(status_value(id, s)); }

void stream_run_events(std::shared_ptr<TrainingRun> run, httplib::Response& res) {
  auto sent = std::make_shared<StreamState>();
  res.set_chunked_content_provider(
      "text/event-stream", [run, sent](std::size_t, httplib::DataSink& sink) {
        // At most one progress event per interval: sleep off the rest of it.
        const auto next = sent->last_progress + kMinProgressInterval;
        if (Clock::now() < next) std::this_thread::sleep_until(next);
        const RunSnapshot s = run->wait_for_change(sent->seen, std::chrono::seconds(1));
        std::string out;
        if (s.version == sent->seen && !s.finished()) out = ": waiting\n\n";
        sent->seen = s.version;
        if (!sent->state || *sent->state != s.state) {
          sent->state = s.state;
          out += sse_event("state", dumped({{"state", run_state_name(s.state)}}));
        }
        if (s.progress && s.progress->step != sent->step) {
          sent->step = s.progress->step;
          sent->last_progress = Clock::now();
          out += sse_event("progress", progress_json(*s.progress));
        }
        if (s.finished())
          out += sse_event(s.state == RunState::Failed ? "error" : "done", status_json(run->id(), s));
        if (!out.empty() && !sink.write(out.data(), out.size())) return false;
        if (s.finished()) sink.done();
        return true;
      });
}

}  // namespace nodeflow::server
