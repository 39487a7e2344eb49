#include "serialization/graph_file.hpp"

#include "serialization/json_writer.hpp"
#include "serialization/onnx.hpp"

namespace nodeflow {

GraphFormat graph_format_of(const std::filesystem::path& path) {
  return is_onnx_path(path) ? GraphFormat::Onnx : GraphFormat::Json;
}

Graph load_graph_bytes(std::string_view bytes, GraphFormat format, const std::filesystem::path& model_dir,
                       const OpRegistry& registry) {
  if (format == GraphFormat::Onnx) return load_onnx(bytes, model_dir, {}, registry);
  return load_graph(bytes, {}, registry);
}

std::string graph_bytes(const Graph& graph, GraphFormat format, std::vector<std::string>* warnings) {
  if (format == GraphFormat::Json) return write_graph_json(graph.def());
  OnnxModel model = write_onnx(graph);
  if (warnings) warnings->insert(warnings->end(), model.warnings.begin(), model.warnings.end());
  return std::move(model.bytes);
}

Graph load_graph_path(const std::filesystem::path& path, const ReadOptions& options,
                      const OpRegistry& registry) {
  if (graph_format_of(path) == GraphFormat::Onnx) return load_onnx_file(path, options, registry);
  return load_graph_file(path, options, registry);
}

std::string graph_file_bytes(const std::filesystem::path& path, const Graph& graph,
                             std::vector<std::string>* warnings) {
  return graph_bytes(graph, graph_format_of(path), warnings);
}

std::vector<std::string> save_graph_path(const std::filesystem::path& path, const Graph& graph) {
  if (graph_format_of(path) == GraphFormat::Json) {
    save_graph_file(path, graph.def());
    return {};
  }
  return save_onnx_file(path, graph).warnings;
}

}  // namespace nodeflow
