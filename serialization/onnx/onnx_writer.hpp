#pragma once
// The pieces of the ONNX writer (serialization/onnx.hpp, write_onnx) that are
// decided per node, tested on their own.
#include <optional>
#include <string>
#include <vector>

#include "core/graph.hpp"

namespace nodeflow::onnx_io {

/// A node as the writer writes it: the document's node with its wiring (the
/// produced outputs) and what ONNX has no form for rewritten.
struct WrittenNode {
  NodeDef def;  ///< inputs as written ("" for an absent one)
  std::vector<std::string> outputs;
  std::vector<std::optional<TensorInfo>> inputs;  ///< per input; nullopt for an absent one
  /// Dropout's `ratio` attribute written as input 1 (metadata nodeflow.<node>.ratio_attribute).
  bool ratio_attribute = false;
};

/// Why onnxruntime 1.30 (CPU) cannot run the node ("" when nothing is known
/// against it): an element type of input 0 it has no kernel for (float64
/// AveragePool, LpPool, GlobalLpPool, ConvTranspose, Erf, Resize, Gelu but
/// with approximate "tanh" (its function body's Erf); bfloat16
/// AveragePool, LpPool, MaxPool: what tests/onnxruntime meets), pooling and
/// convolution over more than 3 spatial axes (onnxruntime runs 1 to 3).
/// `inputs` are the present inputs' infos. ONNX's type constraints are
/// onnx_import::type_problem's.
std::string portability_problem(const NodeDef& def, const std::vector<TensorInfo>& inputs);

/// True when the node has a specified_outputs_name that spells the default
/// names (N, N:1, ...): the reader would take it for a node without the key,
/// so metadata nodeflow.<node>.specified_outputs_name says it has one.
bool spells_default_names(const NodeDef& def);

}  // namespace nodeflow::onnx_io
