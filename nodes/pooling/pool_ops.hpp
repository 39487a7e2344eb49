#pragma once
// Registration of the pooling family (ONNX AveragePool-22, MaxPool-22,
// LpPool-22, GlobalAveragePool-22, GlobalMaxPool-22, GlobalLpPool-22,
// MaxUnpool-22, MaxRoiPool-22). Each op
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
/// MaxRoiPool-22: X (N x C x H x W), rois (R x 5: batch index, x1, y1, x2,
/// y2) -> Y (R x C x pooled_h x pooled_w), the largest element of each bin
/// (docs/pooling.md, "MaxRoiPool"); float dtypes; rois gets no gradient.
void register_max_roi_pool(OpRegistry& registry);

}  // namespace nodeflow
