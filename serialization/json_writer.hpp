#pragma once
// The graph-document writer (docs/graph-format.md): the inverse of the reader in
// json_reader.hpp, deterministic, so that read -> write -> read -> write gives
// the same bytes and every weight keeps every bit.
//
// Layout, fixed so that files diff well and re-writes are byte-identical:
// two-space indentation; top-level keys in the order format, version, name,
// inputs, outputs, initializers, nodes (all always present), then
// training_state in a checkpoint; one line per
// graph input, initializer and node. Node keys in the order op_type, name,
// inputs, specified_outputs_name, attributes, training, lda_coeff, position;
// the last five are written only when they differ from their defaults (unset,
// empty, true, 1.0, unset). Attributes are sorted by name. Initializer keys: name, dtype,
// shape, trainable, data.
//
// Numbers: float32 and float64 values are written with the fewest digits that
// read back to the same bits (std::to_chars), float16 and bfloat16 with the
// fewest that read back to the same 16 bits; a float always carries a '.' or
// an exponent ("1.0", "-0.0", "1e-45") so that no reader takes it for an
// integer. Initializer data is a list of numbers when the tensor has at most
// JsonWriteOptions::inline_limit elements and every value is finite, else
// {"base64": ...} of the little-endian bytes (NaN payloads included).
#include <cstddef>
#include <filesystem>
#include <string>

#include "core/graph.hpp"
#include "serialization/atomic_file.hpp"

namespace nodeflow {

struct JsonWriteOptions {
  /// Initializers with more elements than this are written as base64.
  std::size_t inline_limit = 64;
  /// When not empty, written as the optional top-level member
  /// "training_state" after "nodes": the compact JSON object of a training
  /// checkpoint (training/checkpoint.hpp; docs/graph-format.md). The writer
  /// takes it as given; the checkpoint code renders it.
  std::string training_state;
};

/// The document for `def`. Writes what `def` holds without validating it as a
/// graph (an editor may save work in progress; the reader validates), but
/// refuses what JSON cannot carry: names that are not valid UTF-8, non-finite
/// float attributes or lda_coeff, and initializers without a value. Those throw
/// InvalidGraph / InvalidAttribute naming the JSON path
/// ("nodes[2] (pool2).attributes.p: ...").
std::string write_graph_json(const GraphDef& def, const JsonWriteOptions& options = {});

/// Saves `def` as write_graph_json does, atomically (write_file_atomically):
/// after a failure, including one injected through `progress`, `path` holds
/// its previous content and no temporary file is left. Throws IoError naming
/// the path for system failures.
void save_graph_file(const std::filesystem::path& path, const GraphDef& def,
                     const JsonWriteOptions& options = {}, const WriteProgress& progress = {});

/// A tensor as one JSON object, {"dtype": "float32", "shape": [2, 3], "data":
/// [...]}, its data written as an initializer's is (a list of numbers, or
/// {"base64": ...} above options.inline_limit elements or when a value is not
/// finite). The inverse of read_tensor_json (serialization/json_reader.hpp).
std::string write_tensor_json(const Tensor& tensor, const JsonWriteOptions& options = {});

}  // namespace nodeflow
