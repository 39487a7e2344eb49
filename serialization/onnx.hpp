#pragma once
// ONNX models (`.onnx`, a serialized ModelProto): the reader and writer next to
// the JSON ones (json_reader.hpp, json_writer.hpp). docs/onnx.md says what is
// read and written, the opset policy and the limits.
//
// Reading maps, never guesses: each node is read with the semantics of the
// opset the model imports (serialization/onnx/opset_history.hpp turns it into
// the op nodeflow registers), and an op, domain, attribute, data type or
// feature nodeflow does not support is refused with a message naming it and
// the node. The result is a GraphDef the Graph constructor then validates, so
// a model is either loaded whole or refused.
//
// Writing gives IR 9 and the lowest default-domain opset (at least 19) that
// holds every node; the training keys of nodes and initializers travel in
// metadata_props, so JSON -> ONNX -> JSON gives the JSON writer's document back.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph.hpp"
#include "core/registry.hpp"
#include "serialization/atomic_file.hpp"
#include "serialization/json_reader.hpp"

namespace nodeflow {

/// The IR version the writer states.
inline constexpr std::int64_t kOnnxWrittenIrVersion = 9;
/// The oldest IR version the reader takes.
inline constexpr std::int64_t kOnnxMinIrVersion = 3;

/// True when `path` names an ONNX model: its file name ends in ".onnx".
bool is_onnx_path(const std::filesystem::path& path);

/// Parses the bytes of a ModelProto into a GraphDef without building the Graph.
///
/// The protobuf is parsed within bounds (the input's size, a nesting limit):
/// InvalidGraph "model: not a valid ModelProto (the protobuf is truncated or
/// malformed near byte 812 of 1024 ...)". Then: IR version >= 3; an opset of
/// the default domain ("" or "ai.onnx") between 1 and 22; no local functions,
/// sparse initializers or training info; initializers through
/// onnx_io::plan_tensor (external data relative to `model_dir`, an empty
/// `model_dir` refusing it) with every byte count charged to
/// options.max_initializer_bytes before any tensor is allocated; graph inputs
/// that are also initializers (IR < 4) are initializers only; the other
/// inputs need a tensor type of a nodeflow dtype and a shape (dim_value, or
/// dim_param / nothing for a dimension fixed at run time); nodes of another
/// domain are refused naming node and domain; unnamed nodes are named
/// `<op_type>_<index>` (index in graph.node, made unique); Constant nodes
/// become initializers; attributes INT, FLOAT, STRING, INTS, FLOATS, STRINGS
/// become AttrValues (other kinds refused naming the attribute); each node then
/// goes through onnx_import::upgrade_node at the model's opset. The
/// metadata_props `nodeflow.<name>.training`, `.lda_coeff`, `.trainable` and
/// `nodeflow.graph.version` are restored (docs/onnx.md). value_info is ignored.
/// Errors name the proto path ("graph.initializer[2] (w).raw_data: ...",
/// "graph.node[3] (pool1): ...") and what was expected.
GraphDef parse_onnx_def(std::string_view bytes, const std::filesystem::path& model_dir,
                        const OpRegistry& registry = OpRegistry::global(),
                        const ReadOptions& options = {});

/// parse_onnx_def, then Graph(def, registry).
Graph load_onnx(std::string_view bytes, const std::filesystem::path& model_dir,
                const ReadOptions& options = {},
                const OpRegistry& registry = OpRegistry::global());

/// Reads the file (IoError naming the path when it cannot be read), then
/// load_onnx with the file's folder as the folder of its external data.
Graph load_onnx_file(const std::filesystem::path& path, const ReadOptions& options = {},
                     const OpRegistry& registry = OpRegistry::global());

/// A written model.
struct OnnxModel {
  std::string bytes;   ///< the serialized ModelProto
  int opset = 0;       ///< the default-domain opset it imports
  /// One line per node ONNX cannot type at that opset or onnxruntime cannot
  /// run, and per float attribute that float32 (ONNX FLOAT) does not hold
  /// exactly; the model is written all the same.
  std::vector<std::string> warnings;
};

/// The ModelProto of `graph` (docs/onnx.md, "Writing"): IR 9; opset the
/// largest onnx_import::lowest_opset of its nodes, at least 19; the graph's
/// name; graph inputs with their dtype and shape (a dynamic dimension as
/// dim_param "<input>_dim<axis>"); initializers as little-endian raw_data, not
/// repeated in graph.input; nodes in the Graph's execution order (Kahn's, ties
/// in document order) with their names, inputs, produced outputs and exactly
/// the attributes the document gives (ints as INT/INTS, floats as
/// FLOAT/FLOATS); outputs with their dtype and inferred shape; metadata_props
/// `nodeflow.graph.version` = 1 and one entry per training key a node or
/// initializer has (training when false, lda_coeff when not 1, trainable of
/// every initializer), `nodeflow.<node>.specified_outputs_name` when the node's
/// names spell the default ones and `nodeflow.<node>.ratio_attribute` for a
/// Dropout's ratio attribute, written as a scalar float32 input 1 (ONNX has no
/// such attribute from opset 12). Throws InvalidAttribute for a float attribute
/// that float32 cannot hold (1e300).
OnnxModel write_onnx(const Graph& graph);

/// write_onnx, saved atomically as save_graph_file saves JSON
/// (write_file_atomically). Returns the model's warnings.
OnnxModel save_onnx_file(const std::filesystem::path& path, const Graph& graph,
                         const WriteProgress& progress = {});

}  // namespace nodeflow
