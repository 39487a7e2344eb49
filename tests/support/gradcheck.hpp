#pragma once
// Drives any registered Node directly (no graph, no executor) and checks its
// backward against central finite differences in float64.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/attributes.hpp"
#include "core/node.hpp"
#include "core/tensor.hpp"

namespace nodeflow::testing {

/// Builds a node of a registered op (attributes validated by its schema).
/// Throws InvalidGraph for an unknown op_type, else what the factory throws.
std::unique_ptr<Node> make_node(const std::string& op_type, const Attributes& attributes,
                                bool training = true, double lda_coeff = 1.0);

/// What one forward produced: the outputs and, in training mode, the saved state.
struct ForwardResult {
  std::vector<Tensor> outputs;
  std::vector<Tensor> saved;
};

/// The threads and the max_tensor_bytes a forward or backward runs with
/// (ForwardContext, BackwardContext; the executor's defaults unless given).
struct RunSettings {
  int threads = 1;
  std::uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;
  /// Backward only: BackwardContext::overwrite_inputs (none: every buffer is added into).
  std::vector<std::uint8_t> overwrite = {};
};

/// Runs node.forward asking for `num_outputs` outputs; `training` passes a
/// saved-state vector (ForwardContext::saved) to fill.
ForwardResult run_forward(const Node& node, const std::vector<Tensor>& inputs,
                          std::size_t num_outputs = 1, bool training = true,
                          const RunSettings& settings = {});

/// Runs node.backward with the forward's inputs and saved state. grad_inputs
/// are added into (a gradient is wanted for every non-empty one); the scale is
/// the node's lda_coeff.
void run_backward(const Node& node, const std::vector<Tensor>& inputs, const ForwardResult& forward,
                  const std::vector<Tensor>& grad_outputs, std::vector<Tensor>& grad_inputs,
                  const RunSettings& settings = {});

struct GradCheckOptions {
  double step = 1e-5;  ///< central-difference step h
  double rtol = 1e-5;
  double atol = 1e-6;
  std::uint64_t seed = 1;       ///< for the output weights and the gradient pre-fill
  std::size_t num_outputs = 1;  ///< outputs to ask the node for (e.g. 2 for Y and Indices)
  /// Take the finite differences over training-mode forwards (ForwardContext::saved
  /// set, seed 0), the function backward differentiates for the nodes whose
  /// inference-mode forward differs (BatchNormalization, Dropout).
  bool training = false;
};

struct GradCheckResult {
  bool ok = true;
  double max_error = 0;  ///< largest |analytic - numeric|
  std::string failures;  ///< first mismatching elements, one per line
};

/// Checks d(sum_k sum(w_k * y_k))/dx, for random weights w_k on every float
/// output y_k, against the node's backward for every float64 input x:
/// analytic = what backward adds into a gradient buffer pre-filled with random
/// values (so += is checked too) and, for a node that overwrites gradients
/// (Node::overwrites_gradients), what it writes into a NaN-filled buffer it is
/// told to overwrite (so every element must be written), expected = lda_coeff * central differences
/// (L(x+h) - L(x-h)) / 2h from inference-mode forwards (training-mode ones with
/// options.training). Inputs of other dtypes (int64 indices, shapes) are passed
/// through unperturbed.
GradCheckResult check_gradient(const Node& node, const std::vector<Tensor>& inputs,
                               const GradCheckOptions& options = {});

}  // namespace nodeflow::testing
