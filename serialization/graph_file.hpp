#pragma once
// A graph file in the format its name says: an ONNX model for a name ending in
// ".onnx" (docs/onnx.md), else the JSON document (docs/graph-format.md). The
// one place that picks the reader and the writer by name, shared by the
// command line, the C API and the Python module.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph.hpp"
#include "core/registry.hpp"
#include "serialization/json_reader.hpp"

namespace nodeflow {

/// The two formats of a graph: the JSON document and the ONNX model.
enum class GraphFormat { Json, Onnx };

/// GraphFormat::Onnx for a name ending in ".onnx" (is_onnx_path), else Json.
GraphFormat graph_format_of(const std::filesystem::path& path);

/// A graph from bytes in memory: load_onnx(bytes, model_dir) (external data
/// relative to `model_dir`; an empty one refuses it) or load_graph(bytes).
Graph load_graph_bytes(std::string_view bytes, GraphFormat format,
                       const std::filesystem::path& model_dir = {},
                       const OpRegistry& registry = OpRegistry::global());

/// `graph` as the bytes of `format`: the ModelProto (write_onnx, its warnings
/// appended to `warnings` when given) or the JSON document (write_graph_json).
std::string graph_bytes(const Graph& graph, GraphFormat format, std::vector<std::string>* warnings = nullptr);

/// load_onnx_file(path) for a name ending in ".onnx" (is_onnx_path), else
/// load_graph_file(path). Throws their errors (IoError naming the path,
/// InvalidGraph / InvalidAttribute naming the place in the file).
Graph load_graph_path(const std::filesystem::path& path, const ReadOptions& options = {},
                      const OpRegistry& registry = OpRegistry::global());

/// graph_bytes in the format `path` names (graph_format_of). For saves that
/// commit several files as one set.
std::string graph_file_bytes(const std::filesystem::path& path, const Graph& graph,
                             std::vector<std::string>* warnings = nullptr);

/// Saves `graph` atomically in the format `path` names (save_onnx_file or
/// save_graph_file): after a failure `path` holds its previous content.
/// Returns the ONNX writer's warnings (none for JSON). Throws IoError naming
/// the path.
std::vector<std::string> save_graph_path(const std::filesystem::path& path, const Graph& graph);

}  // namespace nodeflow
