#include <limits>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/executor.hpp"
#include "serialization/atomic_file.hpp"
#include "serialization/graph_check.hpp"
#include "serialization/graph_file.hpp"
#include "serialization/json_support.hpp"
#include "serialization/json_text.hpp"
#include "serialization/json_writer.hpp"
#include "serialization/text_file.hpp"
#include "server/http_support.hpp"
#include "server/routes.hpp"

namespace nodeflow::server {
namespace {

const char* format_name(GraphFormat format) { return format == GraphFormat::Onnx ? "onnx" : "json"; }

Json shape_json(const Shape& shape) {
  Json dims = Json::array();
  for (const std::int64_t d : shape) dims.push_back(d == kDynamicDim ? Json(nullptr) : Json(d));
  return dims;
}

Json check_json(const CheckReport& report) {
  Json errors = Json::array();
  for (const CheckError& e : report.errors)
    errors.push_back({{"message", e.message},
                      {"path", e.location.path},
                      {"node", e.location.node},
                      {"attribute", e.location.attribute}});
  Json tensors = Json::array();
  for (const auto& [name, info] : report.tensors)
    tensors.push_back({{"name", name}, {"dtype", dtype_name(info.dtype)}, {"shape", shape_json(info.shape)}});
  return {{"ok", report.ok()},
          {"errors", std::move(errors)},
          {"tensors", std::move(tensors)},
          {"parameters", report.parameters},
          {"trainable_parameters", report.trainable_parameters}};
}

// A saved file: its bytes replaced atomically; a failure is the server's (500).
void save_bytes(const std::filesystem::path& target, std::string_view bytes) {
  try {
    write_file_atomically(target, bytes);
  } catch (const IoError& e) {
    throw ApiError(500, std::string("not saved: ") + e.what());
  }
}

void get_file(ApiContext& api, const httplib::Request& req, httplib::Response& res) {
  const std::filesystem::path file = api.root.existing(req.matches[1].str());
  if (graph_format_of(file) == GraphFormat::Onnx) {
    // The model as the JSON document the editor edits.
    send_json_text(res, 200, write_graph_json(load_graph_path(file, api.read).def()));
    return;
  }
  // A document is served as saved (the editor's document is the file, work in
  // progress included), once it is known to be JSON within the reader's limits.
  std::string text = read_text_file(file, "graph document");
  json_detail::parse_json(text);
  res.status = 200;
  res.set_content(std::move(text), "application/json");
}

void put_file(ApiContext& api, const httplib::Request& req, httplib::Response& res) {
  const std::string name = req.matches[1].str();
  const std::filesystem::path target = api.root.for_saving(name);
  check_replaceable(target);
  std::vector<std::string> warnings;
  if (graph_format_of(target) == GraphFormat::Onnx) {
    // An ONNX model holds a valid graph only.
    save_bytes(target, graph_bytes(load_graph(req.body, api.read), GraphFormat::Onnx, &warnings));
  } else {
    // Work in progress may be saved (docs/graph-format.md): the document's
    // structure is checked, the wiring and shapes are /api/check's.
    save_bytes(target, write_graph_json(parse_graph_def(req.body, OpRegistry::global(), api.read)));
  }
  send_json(res, 200, {{"saved", name}, {"format", format_name(graph_format_of(target))}, {"warnings", warnings}});
}

void run_graph(ApiContext& api, const httplib::Request& req, httplib::Response& res) {
  const Json body = json_body(req);
  check_members(body, {"graph", "inputs"}, {"seed"});
  const Graph graph = load_member_graph(body, api.read);
  const Json& inputs = body.at("inputs");
  if (!inputs.is_object()) throw ApiError(400, "inputs: expected an object {name: {dtype, shape, data}}");
  TensorMap feeds;
  for (const auto& [name, value] : inputs.items())
    feeds.emplace(name, read_tensor_json(value, "inputs." + name, api.max_tensor_bytes));
  std::uint64_t seed = 0;
  if (const auto it = body.find("seed"); it != body.end()) {
    if (!it->is_number_unsigned()) throw ApiError(400, "seed: expected a non-negative integer");
    seed = it->get<std::uint64_t>();
  }
  const TensorMap outputs = Executor(graph, ExecutorOptions{1, api.max_tensor_bytes}).run(feeds, seed);
  std::string text = "{\"outputs\": {";
  bool first = true;
  for (const std::string& name : graph.def().outputs) {
    if (!first) text += ", ";
    first = false;
    json_text::append_string(text, name);  // a graph's names are UTF-8 (the reader checks)
    text += ": ";
    JsonWriteOptions all_inline;
    all_inline.inline_limit = std::numeric_limits<std::size_t>::max();
    text += write_tensor_json(outputs.at(name), all_inline);
  }
  text += "}}";
  send_json_text(res, 200, std::move(text));
}

}  // namespace

Graph load_member_graph(const Json& body, const ReadOptions& read) {
  const Json& graph = member(body, "graph", "a graph document");
  if (!graph.is_object()) throw ApiError(400, "graph: expected a graph document (a JSON object)");
  try {
    return load_graph(graph.dump(), read);
  } catch (const Error& e) {
    throw ApiError(400, nested_message("graph", e.what()));
  }
}

void add_graph_routes(httplib::Server& http, ApiContext& api) {
  http.Get("/api/ops", guarded([&api](const httplib::Request&, httplib::Response& res) {
    send_json_text(res, 200, api.ops_json);
  }));
  http.Post("/api/check", guarded([&api](const httplib::Request& req, httplib::Response& res) {
    // `nodeflow check`'s own validation: a document it refuses is a report
    // with ok false and the error, not a failed request.
    send_json(res, 200, check_json(check_graph([&] { return load_graph(req.body, api.read); })));
  }));
  http.Get("/api/files", guarded([&api](const httplib::Request&, httplib::Response& res) {
    Json files = Json::array();
    for (const RootFile& f : api.root.list())
      files.push_back({{"path", f.path}, {"size", f.size}, {"format", format_name(f.format)}});
    send_json(res, 200, {{"files", std::move(files)}});
  }));
  http.Get(R"(/api/files/(.+))", guarded([&api](const httplib::Request& req, httplib::Response& res) {
    get_file(api, req, res);
  }));
  http.Put(R"(/api/files/(.+))", guarded([&api](const httplib::Request& req, httplib::Response& res) {
    put_file(api, req, res);
  }));
  http.Post("/api/run", guarded([&api](const httplib::Request& req, httplib::Response& res) {
    run_graph(api, req, res);
  }));
}

}  // namespace nodeflow::server
