// Fixture (expect_refusals.cmake): never compiled. The server may include
// every library layer, not the command line that runs it.
#include "server/server.hpp"
#include "core/graph.hpp"
#include "nodes/builtin_ops.hpp"
#include "serialization/json_reader.hpp"
#include "training/trainer.hpp"
#include "apps/commands.hpp"  // refused: server/ may include only core/, nodes/, serialization/, training/, server/
#include "training/detail/x.hpp"  // refused: training/detail/ is private to training/
