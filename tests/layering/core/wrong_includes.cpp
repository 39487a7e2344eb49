// Fixture of the layer_includes_refused test (expect_refusals.cmake): never
// compiled. A line marked "refused: <rule>" must be reported with that rule;
// every other include must pass.
#include "core/tensor.hpp"

#include <vector>

#include "nodes/pooling/pool_node.hpp"  // refused: core/ may include only core/
#include <training/trainer.hpp>  // refused: core/ may include only core/
#include "../nodes/builtin_ops.hpp"  // refused: without '..'
#  include "serialization/npy.hpp"  // refused: core/ may include only core/
