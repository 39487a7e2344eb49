#pragma once
// The API routes (docs/server.md, "API"), in two groups: graphs (ops, check,
// files, run) and training (datasets, runs and their event streams).
#include "server/http.hpp"

#include <cstdint>
#include <string>

#include "serialization/json_reader.hpp"
#include "server/datasets.hpp"
#include "server/root_directory.hpp"
#include "server/training_runs.hpp"

namespace nodeflow::server {

/// What the routes share: the root, the datasets, the runs and the limits.
struct ApiContext {
  RootDirectory root;
  DatasetCatalog datasets;
  TrainingRuns runs;
  ReadOptions read;                 ///< the graph reader's limits
  std::uint64_t max_tensor_bytes;   ///< inference inputs and runs (ExecutorOptions)
  std::string ops_json;             ///< `nodeflow ops --json`, made once
};

/// GET /api/ops, POST /api/check, GET /api/files, GET and PUT /api/files/<path>,
/// POST /api/run.
void add_graph_routes(httplib::Server& http, ApiContext& api);

/// GET /api/datasets, POST /api/train, GET /api/train/<id>, GET
/// /api/train/<id>/events, POST /api/train/<id>/stop, GET
/// /api/train/<id>/graph, POST /api/train/<id>/save.
void add_training_routes(httplib::Server& http, ApiContext& api);

/// A graph given inside a request body (the "graph" member), loaded and
/// validated as a document file is; errors name "graph." before their path.
Graph load_member_graph(const nlohmann::json& body, const ReadOptions& read);

}  // namespace nodeflow::server
