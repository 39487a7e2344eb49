#pragma once
// Registration of the pooling family (ONNX AveragePool-22, MaxPool-22,
// LpPool-22, GlobalAveragePool-22, GlobalMaxPool-22, GlobalLpPool-22,
// MaxUnpool-22). Each op
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
/// GlobalLpPool-22: X (N x C x D1..Dn) -> Y (N x C x 1..1), (sum |x|^p)^(1/p)
/// over each plane (attribute p, default 2); LpPool's kernels over one
/// window, so its values, dtypes and gradient (0 where y is 0) are LpPool's.
void register_global_lp_pool(OpRegistry& registry);

}  // namespace nodeflow
