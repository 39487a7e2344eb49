// Fixture (expect_refusals.cmake): never compiled.
#include "core/graph.hpp"
#include "nodes/builtin_ops.hpp"
#include "serialization/json_reader.hpp"
#include "serialization/detail/json_support.hpp"  // refused: serialization/detail/ is private to serialization/
#include "apps/feeds.hpp"  // refused: training/ may include only core/, nodes/, serialization/, training/
