#include <string>

#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"
#include "serialization/graph_file.hpp"
#include "serialization/json_support.hpp"
#include "serialization/json_writer.hpp"
#include "server/event_stream.hpp"
#include "server/http_support.hpp"
#include "server/routes.hpp"
#include "training/evaluation.hpp"

namespace nodeflow::server {
namespace {

std::shared_ptr<TrainingRun> run_of(ApiContext& api, const httplib::Request& req) {
  const std::string id = req.matches[1].str();
  std::shared_ptr<TrainingRun> run = api.runs.find(id);
  if (!run) throw ApiError(404, "no training run " + id);
  return run;
}

// A path under the root that a trained graph may be saved to.
std::filesystem::path save_target(ApiContext& api, const Json& value, const std::string& key) {
  if (!value.is_string()) throw ApiError(400, key + ": expected a path under the root (a string)");
  const std::filesystem::path target = api.root.for_saving(value.get<std::string>());
  check_replaceable(target);
  return target;
}

void start_run(ApiContext& api, const httplib::Request& req, httplib::Response& res) {
  const Json body = json_body(req);
  check_members(body, {"graph", "config", "data"}, {"save_as"});
  const Graph graph = load_member_graph(body, api.read);
  const Json& config = body.at("config");
  if (!config.is_object())
    throw ApiError(400, "config: expected a training configuration (docs/training-config.md)");
  RunPlan plan;
  try {
    plan.config = training::parse_train_config(config.dump());
  } catch (const Error& e) {
    throw ApiError(400, nested_message("config", e.what()));
  }
  plan.config.max_tensor_bytes = api.max_tensor_bytes;
  const Json& data = body.at("data");
  const DatasetEntry* dataset = data.is_string() ? find_dataset(api.datasets, data.get<std::string>()) : nullptr;
  if (!dataset) {
    std::string known;
    for (const DatasetEntry& d : api.datasets) known += (known.empty() ? "" : ", ") + d.name;
    throw ApiError(400, "data: expected the name of a dataset (" + known + ")");
  }
  if (const std::string problem = dataset->problem(); !problem.empty())
    throw ApiError(409, "data: " + problem);
  plan.dataset = *dataset;
  try {
    training::check_bindings(graph, plan.config.bindings);
  } catch (const Error& e) {
    throw ApiError(400, "config.bindings: " + std::string(e.what()));
  }
  // "" and null ask for no save, as an absent save_as does.
  if (const auto it = body.find("save_as");
      it != body.end() && !it->is_null() && !(it->is_string() && it->get_ref<const std::string&>().empty())) {
    plan.save_to = save_target(api, *it, "save_as");
    plan.save_as = it->get<std::string>();
  }
  plan.graph = graph.def();
  send_json(res, 200, {{"run", api.runs.start(std::move(plan))}});
}

void save_run(ApiContext& api, const httplib::Request& req, httplib::Response& res) {
  const std::shared_ptr<TrainingRun> run = run_of(api, req);
  const Json body = json_body(req);
  check_members(body, {"path"}, {});
  const std::filesystem::path target = save_target(api, body.at("path"), "path");
  const std::optional<GraphDef> trained = run->trained_graph();
  if (!trained) throw ApiError(409, "training run " + run->id() + " has not ended: stop it first");
  std::vector<std::string> warnings;
  try {
    warnings = save_graph_path(target, Graph(*trained));
  } catch (const IoError& e) {
    throw ApiError(500, std::string("not saved: ") + e.what());
  }
  send_json(res, 200, {{"saved", body.at("path")}, {"warnings", warnings}});
}

}  // namespace

void add_training_routes(httplib::Server& http, ApiContext& api) {
  http.Get("/api/datasets", guarded([&api](const httplib::Request&, httplib::Response& res) {
    Json list = Json::array();
    for (const DatasetEntry& d : api.datasets) {
      const std::string problem = d.problem();
      list.push_back({{"name", d.name},
                      {"description", d.description},
                      {"available", problem.empty()},
                      {"problem", problem.empty() ? Json(nullptr) : Json(problem)}});
    }
    send_json(res, 200, {{"datasets", std::move(list)}});
  }));
  http.Post("/api/train", guarded([&api](const httplib::Request& req, httplib::Response& res) {
    start_run(api, req, res);
  }));
  http.Get(R"(/api/train/(\d{1,19}))", guarded([&api](const httplib::Request& req, httplib::Response& res) {
    const std::shared_ptr<TrainingRun> run = run_of(api, req);
    send_json_text(res, 200, status_json(run->id(), run->snapshot()));
  }));
  http.Get(R"(/api/train/(\d{1,19})/events)",
           guarded([&api](const httplib::Request& req, httplib::Response& res) {
             stream_run_events(run_of(api, req), res);
           }));
  http.Post(R"(/api/train/(\d{1,19})/stop)",
            guarded([&api](const httplib::Request& req, httplib::Response& res) {
              const std::shared_ptr<TrainingRun> run = run_of(api, req);
              run->request_stop();
              send_json_text(res, 200, status_json(run->id(), run->snapshot()));
            }));
  http.Get(R"(/api/train/(\d{1,19})/graph)",
           guarded([&api](const httplib::Request& req, httplib::Response& res) {
             const std::shared_ptr<TrainingRun> run = run_of(api, req);
             const std::optional<GraphDef> trained = run->trained_graph();
             if (!trained) throw ApiError(409, "training run " + run->id() + " has not ended");
             send_json_text(res, 200, write_graph_json(*trained));
           }));
  http.Post(R"(/api/train/(\d{1,19})/save)",
            guarded([&api](const httplib::Request& req, httplib::Response& res) {
              save_run(api, req, res);
            }));
}

}  // namespace nodeflow::server
