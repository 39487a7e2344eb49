#pragma once
// Registration of the pooling family (ONNX AveragePool-22, MaxPool-22,
// LpPool-22, GlobalAveragePool-22, GlobalMaxPool-22, MaxUnpool-22). Each op
// registers its schema and factory from its own .cpp, next to its node class;
// register_builtin_ops (nodes/builtin_ops.hpp) calls them all.
namespace nodeflow {

class OpRegistry;

void register_average_pool(OpRegistry& registry);
void register_max_pool(OpRegistry& registry);
void register_lp_pool(OpRegistry& registry);
void register_global_average_pool(OpRegistry& registry);
void register_global_max_pool(OpRegistry& registry);
void register_max_unpool(OpRegistry& registry);

}  // namespace nodeflow
