#pragma once
// A training run's progress as Server-Sent Events (docs/server.md, "Training";
// the text/event-stream format of the HTML standard): `state` when the run's
// state changes, `progress` after optimizer steps (at most one per
// kMinProgressInterval: a slow reader gets the latest, not a backlog), then
// one `done` or `error` event, and the stream ends. A comment line every
// second keeps idle connections open and finds closed ones.
#include "server/http.hpp"

#include <chrono>
#include <memory>
#include <string>

#include "server/training_runs.hpp"

namespace nodeflow::server {

inline constexpr std::chrono::milliseconds kMinProgressInterval{100};

/// One event: "event: <name>\ndata: <data>\n\n" (`data` holds no newline).
std::string sse_event(const std::string& name, const std::string& data);

/// Makes `res` the event stream of `run`.
void stream_run_events(std::shared_ptr<TrainingRun> run, httplib::Response& res);

/// The JSON of a run's progress, status and final event, shared by the
/// stream and GET /api/train/<id>.
std::string progress_json(const training::Progress& p);
std::string status_json(const std::string& id, const RunSnapshot& s);

}  // namespace nodeflow::server
