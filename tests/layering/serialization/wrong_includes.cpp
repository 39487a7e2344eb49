// Fixture (expect_refusals.cmake): never compiled.
#include "core/tensor.hpp"
#include "serialization/detail/json_parts.hpp"
#include "training/init_rules.hpp"  // refused: serialization/ may include only core/, serialization/
#include "nodes/builtin_ops.hpp"  // refused: serialization/ may include only core/, serialization/
