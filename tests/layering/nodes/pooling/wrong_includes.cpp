// Fixture (expect_refusals.cmake): never compiled.
#include "core/registry.hpp"
#include "nodes/pooling/pool_node.hpp"
#include "serialization/json_reader.hpp"  // refused: nodes/ may include only core/, nodes/
#include "training/optimizer.hpp"  // refused: nodes/ may include only core/, nodes/
#include "apps/commands.hpp"  // refused: nodes/ may include only core/, nodes/
