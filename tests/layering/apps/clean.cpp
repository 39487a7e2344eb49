// Fixture (expect_refusals.cmake): the command line may include every layer.
#include "apps/commands.hpp"
#include "core/graph.hpp"
#include "nodes/builtin_ops.hpp"
#include "serialization/json_reader.hpp"
#include "training/trainer.hpp"
