#pragma once
// The built-in ops and the process-wide registry that holds them
// (OpRegistry::global(), declared in core/registry.hpp, is defined here).
namespace nodeflow {

class OpRegistry;

/// Adds every built-in op (each one registered next to its node, in its
/// family's folder) to `registry`, e.g. to build a registry that holds them
/// and ops of one's own. Throws InvalidGraph if one is registered already.
void register_builtin_ops(OpRegistry& registry);

}  // namespace nodeflow
