// Fixture (expect_refusals.cmake): never compiled. The Python module may
// include every library layer, but not the command line nor a layer's detail/.
#include "core/graph.hpp"
#include "nodes/builtin_ops.hpp"
#include "serialization/json_reader.hpp"
#include "training/trainer.hpp"
#include "apps/commands.hpp"  // refused: python/ may include only core/, nodes/, serialization/, training/, python/
#include "server/server.hpp"  // refused: python/ may include only core/, nodes/, serialization/, training/, python/
#include "serialization/detail/json_support.hpp"  // refused: serialization/detail/ is private to serialization/
