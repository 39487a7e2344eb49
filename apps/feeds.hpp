#pragma once
// Reading the -i and -g tensors of a command against the graph's declarations.
#include <vector>

#include "apps/arguments.hpp"
#include "core/executor.hpp"

namespace nodeflow::cli {

/// Checks the `-i` names against the graph inputs without reading any file.
/// Throws nodeflow::Error naming every name that is not a graph input, and the
/// first graph input that has no `-i`.
void check_input_names(const Graph& graph, const std::vector<NamedFile>& inputs);

/// Checks the `-g` names without reading any file: each must be a graph output
/// of a float dtype. Throws nodeflow::Error naming unknown outputs, and
/// UnsupportedDType for an integer output ("gradient given for output 'y' of
/// dtype int8 (not differentiable)").
void check_grad_output_names(const Graph& graph, const std::vector<NamedFile>& grad_outputs);

/// Reads the `-i` files (.npy) as feeds. A float32 file for a bfloat16 input
/// is cast (bfloat16 travels as float32); any other dtype difference throws
/// UnsupportedDType naming the input, the file and both dtypes. IoError for
/// unreadable or malformed files, naming the input and the file ("input 'x':
/// x.npy: ..."). Shapes are left to the executor.
TensorMap read_inputs(const Graph& graph, const std::vector<NamedFile>& inputs);

/// Reads the `-g` files as seeds for backward, with the same dtype rule; errors
/// name the output ("gradient of output 'y': y.npy: ...").
TensorMap read_grad_outputs(const Graph& graph, const std::vector<NamedFile>& grad_outputs);

}  // namespace nodeflow::cli
