#pragma once
// A graph file in the format its name says: an ONNX model for a name ending in
// ".onnx" (docs/onnx.md), else the JSON document (docs/graph-format.md). The
// one place that picks the reader and the writer by name, shared by the
// command line, the C API and the Python module.
#include <filesystem>
#include <string>
#include <vector>

#include "core/graph.hpp"
#include "core/registry.hpp"
#include "serialization/json_reader.hpp"

namespace nodeflow {

/// load_onnx_file(path) for a name ending in ".onnx" (is_onnx_path), else
/// load_graph_file(path). Throws their errors (IoError naming the path,
/// InvalidGraph / InvalidAttribute naming the place in the file).
Graph load_graph_path(const std::filesystem::path& path, const ReadOptions& options = {},
                      const OpRegistry& registry = OpRegistry::global());

/// `graph` as the bytes of the file `path` names: the ModelProto (write_onnx)
/// for a name ending in ".onnx", else the JSON document (write_graph_json).
/// The ONNX writer's warnings (one line each, docs/onnx.md) are appended to
/// `warnings` when given. For saves that commit several files as one set.
std::string graph_file_bytes(const std::filesystem::path& path, const Graph& graph,
                             std::vector<std::string>* warnings = nullptr);

/// Saves `graph` atomically in the format `path` names (save_onnx_file or
/// save_graph_file): after a failure `path` holds its previous content.
/// Returns the ONNX writer's warnings (none for JSON). Throws IoError naming
/// the path.
std::vector<std::string> save_graph_path(const std::filesystem::path& path, const Graph& graph);

}  // namespace nodeflow
