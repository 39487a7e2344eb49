#include "serialization/graph_file.hpp"

#include "serialization/json_writer.hpp"
#include "serialization/onnx.hpp"

namespace nodeflow {

Graph load_graph_path(const std::filesystem::path& path, const ReadOptions& options,
                      const OpRegistry& registry) {
  if (is_onnx_path(path)) return load_onnx_file(path, options, registry);
  return load_graph_file(path, options, registry);
}

std::string graph_file_bytes(const std::filesystem::path& path, const Graph& graph,
                             std::vector<std::string>* warnings) {
  if (!is_onnx_path(path)) return write_graph_json(graph.def());
  OnnxModel model = write_onnx(graph);
  if (warnings) warnings->insert(warnings->end(), model.warnings.begin(), model.warnings.end());
  return std::move(model.bytes);
}

std::vector<std::string> save_graph_path(const std::filesystem::path& path, const Graph& graph) {
  if (!is_onnx_path(path)) {
    save_graph_file(path, graph.def());
    return {};
  }
  return save_onnx_file(path, graph).warnings;
}

}  // namespace nodeflow
