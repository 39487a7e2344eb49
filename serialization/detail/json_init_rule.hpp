#pragma once
// An initializer's `init` object: an initialisation rule in place of `data`
// (core/init_rules.hpp; documented in docs/training-config.md).
// Internal: not installed.
#include <string>

#include "core/tensor.hpp"
#include "serialization/json_support.hpp"

namespace nodeflow::json_detail {

/// The tensor that `init` ({"rule": ..., "seed": ..., rule parameters}) makes
/// for `dtype` and the static `shape`. `path` is the init's path
/// ("initializers[0] (conv1.W).init"). Keys are checked per rule: random rules
/// need "seed" (a non-negative integer); "constant" needs "value"; "uniform"
/// takes "low"/"high" (default 0/1), "normal" "mean"/"std" (default 0/1), the
/// he_* rules "mode" ("fan_in" default, or "fan_out"). Throws InvalidGraph for
/// structure errors and the rule's own errors (InvalidAttribute, ShapeMismatch,
/// UnsupportedDType) prefixed by `path`.
Tensor read_init_rule(const Json& init, DType dtype, const Shape& shape, const std::string& path);

}  // namespace nodeflow::json_detail
