#pragma once
// Reader of the graph document, "nodeflow.graph" version 1
// (README, "The graph document").
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "core/graph.hpp"
#include "core/registry.hpp"

namespace nodeflow {

/// The default of ReadOptions::max_initializer_bytes: 1 GiB, about twice the
/// weights of the largest classic vision networks (VGG-16, 528 MiB of float32;
/// VGG-19, 548 MiB), while a document of a few hundred bytes asking for more
/// (an `init` rule of 1e9 float32 elements, 4 GB) is refused at once instead of
/// being generated for a minute. Larger networks (BERT-large, 1.3 GB) need the
/// limit raised.
inline constexpr std::uint64_t kDefaultMaxInitializerBytes = std::uint64_t{1} << 30;

/// The default of ReadOptions::max_model_structure_bytes: 512 MiB, some fifteen
/// times what the structure of a 30,000-node model takes (about 1 KB a node), while
/// the 10 MB of a crafted model made of nothing but empty attributes (1.4 GB
/// once parsed) is refused before protobuf parses it.
inline constexpr std::uint64_t kDefaultMaxModelStructureBytes = std::uint64_t{512} << 20;

/// Limits of the graph-document and ONNX readers: a document comes from
/// anywhere, and a short one must not be able to make the reader allocate
/// without bound.
struct ReadOptions {
  /// Bytes that all initializers of one document may hold together (`data`
  /// lists, base64 and `init` rules alike; an ONNX model's initializers,
  /// Constant values and external data). The command line's
  /// --max-initializer-bytes.
  std::uint64_t max_initializer_bytes = kDefaultMaxInitializerBytes;
  /// ONNX models only: the memory protobuf's parse of a model's structure
  /// (its messages, names and unknown fields, not the bytes of its tensors)
  /// may take, estimated from the bytes before they are parsed
  /// (docs/onnx.md, "Limits").
  std::uint64_t max_model_structure_bytes = kDefaultMaxModelStructureBytes;
};

/// Parses a graph document into a GraphDef without building the Graph.
///
/// Checks JSON syntax (InvalidGraph "invalid JSON: <parser message with line and
/// column>"; NaN/Infinity tokens, trailing text, empty input and nesting deeper
/// than 100 levels included), then the structure: a top-level object with
/// `format` "nodeflow.graph", `version` 1, `inputs`, `outputs`, `nodes` (and
/// optional `name`, `initializers`); no unknown keys anywhere; every name (the
/// graph's, inputs', outputs', initializers', nodes', node inputs and
/// specified_outputs_name) valid UTF-8 without control characters (check_name,
/// core/names.hpp: `nodes[2].name: a name must not contain control characters
/// (U+001B at byte 3)`); dtypes by name;
/// shapes of non-negative integers (`null` -> kDynamicDim for graph inputs),
/// whose element count must fit int64 (ShapeMismatch); initializer `data` as a
/// flat row-major list of JSON numbers that fit the dtype (float16, bfloat16 and
/// float32 rounded to nearest even) or {"base64": "..."} little-endian bytes of
/// exactly the right length, or instead of `data` an `init` rule such as
/// {"rule": "he_uniform", "seed": 1} (serialization/detail/json_init_rule.hpp,
/// docs/training-config.md); node `op_type` known to `registry`; attribute values
/// converted by their AttrKind in the op's schema (InvalidAttribute: an Int needs
/// a JSON integer, true/false read as 1/0, 2.0 refused; a Float takes any number).
/// Attribute ranges, names, wiring, cycles and shapes are the Graph
/// constructor's job (validate_attributes and shape inference).
///
/// Constant and ConstantOfShape nodes (not ops of the registry) are folded
/// into non-trainable initializers named by their outputs, appended to
/// `initializers` after the document's own and counted in the same budget
/// (docs/graph-format.md, "Constant and ConstantOfShape"); the returned
/// nodes are the others, in document order.
///
/// Every error names its JSON path and what was expected, e.g.
/// `nodes[0] (pool1).attributes.kernel_shape: expected a list of positive
/// integers, got [2.5, 2]` or `inputs[0] (x).shape: element count of [...]
/// overflows int64`. Never crashes; any input either yields a GraphDef or throws.
///
/// A float32 written as a JSON number reads back to the same bits whenever it
/// was written with 9 significant digits. JSON numbers are parsed to the nearest
/// float64 first, so a decimal within 2^-54 (relative) of a float32 rounding
/// boundary, but not on it, may round as the boundary does. The JSON integer
/// `-0` is zero without a sign; a negative float zero is written `-0.0`.
///
/// Memory: the initializers of one document may materialize at most
/// options.max_initializer_bytes bytes in total. Every initializer's byte count
/// (element count x dtype size, overflow-checked) is added up before any of
/// their tensors is allocated, so `init` rules of a few bytes of JSON asking
/// for huge shapes are refused without touching memory, naming the initializer
/// that crosses the limit:
/// InvalidGraph `initializers[0] (w).shape: [200000, 50000] float32 needs
/// 40000000000 bytes, over the document's limit of 1073741824 bytes for
/// initializers (ReadOptions::max_initializer_bytes; on the command line
/// --max-initializer-bytes)`.
GraphDef parse_graph_def(std::string_view text, const OpRegistry& registry = OpRegistry::global(),
                         const ReadOptions& options = {});

/// A graph document and its optional top-level member "training_state",
/// which a training checkpoint carries (training/checkpoint.hpp,
/// docs/training-config.md "Resuming"): its compact JSON text, or empty when
/// the document has none. The graph reader checks only that it is an object;
/// every other reader ignores it.
struct GraphDocument {
  GraphDef def;
  std::string training_state;
};

/// parse_graph_def, keeping the "training_state" member.
GraphDocument parse_graph_document(std::string_view text,
                                   const OpRegistry& registry = OpRegistry::global(),
                                   const ReadOptions& options = {});

/// parse_graph_def, then Graph(def, registry) (semantic validation). Throws the
/// errors of both; the graph's "nodes[i]" name the document's nodes, folded
/// Constants counted.
Graph load_graph(std::string_view text, const ReadOptions& options = {},
                 const OpRegistry& registry = OpRegistry::global());

/// Reads the file (IoError naming the path if it cannot be read), then load_graph.
Graph load_graph_file(const std::filesystem::path& path, const ReadOptions& options = {},
                      const OpRegistry& registry = OpRegistry::global());

/// A tensor given as one JSON object {"dtype": "float32", "shape": [2, 3],
/// "data": [...]}: a graph dtype, a static shape, and data as an
/// initializer's (a flat row-major list of numbers or {"base64": "..."}). The
/// inverse of write_tensor_json. Throws InvalidGraph naming `path` and the key
/// ("inputs.image.data: expected ..."), and when the tensor would take more
/// than `max_bytes`, before allocating it.
Tensor read_tensor_json(const nlohmann::json& value, const std::string& path,
                        std::uint64_t max_bytes);

}  // namespace nodeflow
