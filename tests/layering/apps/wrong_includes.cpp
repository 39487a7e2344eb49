// Fixture (expect_refusals.cmake): never compiled. The command line may include
// every library layer and the server, not the Python module.
#include "apps/commands.hpp"
#include "core/graph.hpp"
#include "nodes/builtin_ops.hpp"
#include "serialization/json_reader.hpp"
#include "training/trainer.hpp"
#include "server/server.hpp"
#include "python/arrays.hpp"  // refused: apps/ may include only core/, nodes/, serialization/, training/, server/, apps/
