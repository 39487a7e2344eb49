#include "core/registry.hpp"
#include "nodes/pool_ops.hpp"

namespace nodeflow {

void register_builtin_ops(OpRegistry& registry) {
  register_average_pool(registry);
  register_max_pool(registry);
  register_lp_pool(registry);
  register_global_average_pool(registry);
  register_global_max_pool(registry);
  register_max_unpool(registry);
}

}  // namespace nodeflow
