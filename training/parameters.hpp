#pragma once
// Which trainable initializers an optimizer step touches, and with what
// weight decay (docs/training-config.md: parameters that receive no gradient are not
// touched; weight decay applies to weights, not to biases or normalization
// parameters, unless configured per initializer).
#include <map>
#include <set>
#include <string>

#include "core/graph.hpp"

namespace nodeflow::training {

/// Trainable initializers that receive a gradient when backward is seeded at
/// graph output `output`: those read by a node with `training: true` from which
/// `output` is reachable through float tensors and training nodes only. (The
/// executor returns zero gradients for the others; they must not be stepped.)
/// Throws InvalidGraph when `output` is not a graph output.
std::set<std::string> parameters_reached(const Graph& graph, const std::string& output);

/// Trainable initializers that are weights: the W input of Conv and
/// ConvTranspose, either operand of Gemm's product (A, B) or of MatMul.
/// Biases (Conv B, Gemm C, Add operands) and normalization parameters are not.
std::set<std::string> weight_parameters(const Graph& graph);

/// Weight decay coefficient of every trainable initializer: `weight_decay` for
/// weights, 0 for the others, and `overrides` (by initializer name) last.
/// Throws InvalidAttribute when an override names no trainable initializer
/// (a typo must not be silently ignored) or has a negative or non-finite value.
std::map<std::string, double> weight_decay_plan(const Graph& graph, double weight_decay,
                                                const std::map<std::string, double>& overrides);

}  // namespace nodeflow::training
