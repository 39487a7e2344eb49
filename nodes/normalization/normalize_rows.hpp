#pragma once
// The normalise-and-scale math of LayerNormalization, InstanceNormalization and
// GroupNormalization: a tensor seen as `rows` rows of `cols` contiguous values,
// each row normalised by its own mean and biased variance,
//   y = (x - mean) / sqrt(var + epsilon) * scale[p] + bias[p],
// and the exact gradient of that with the statistics as functions of x
// (docs/operators.md, "Gradient conventions").
#include <cstdint>

#include "core/tensor.hpp"

namespace nodeflow {

/// Which affine parameter element (r, c) of the rows uses:
///   p = (r % groups) * per_row + c / span   (per_row * span == cols),
/// with params() = groups * per_row parameters in all.
/// LayerNormalization: groups 1, per_row cols, span 1 (one per column);
/// InstanceNormalization: groups C, per_row 1, span cols (one per row's channel);
/// GroupNormalization: groups G, per_row C / G, span = spatial size.
struct RowLayout {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t groups = 1;
  std::int64_t per_row = 0;
  std::int64_t span = 1;
  std::int64_t params() const { return groups * per_row; }
};

/// What the forward gives: y (x's shape and dtype) and the per-row mean and
/// 1 / sqrt(var + epsilon), shape [rows], in x's dtype.
struct RowStatistics {
  Tensor y;
  Tensor mean;
  Tensor inv_std;
};

/// x, scale ([params]) and bias ([params], or empty: no bias) in one compute
/// dtype (float32 or float64). Rows are split over `threads`. The statistics
/// take two passes over each row (mean, then squared deviations), so a large
/// mean does not cancel the variance away.
RowStatistics normalize_rows(const RowLayout& layout, const Tensor& x, const Tensor& scale, const Tensor& bias,
                             double epsilon, int threads);

/// The gradients of one backward of normalize_rows: what comes in (dy of y,
/// x's shape; optional dmean, dinv_std of the statistics, [rows]; empty: zero)
/// and where it goes: `dx` (x's shape; empty: not wanted) += dx_scale * dL/dx,
/// possibly of another float dtype than x, or = when `dx_overwrite` (dx
/// uninitialised, BackwardContext::overwrite_inputs); `dscale`, `dbias`
/// ([params] in x's dtype; empty: not wanted) += dL/dscale, dL/dbias.
struct RowGradients {
  const Tensor* dy;
  const Tensor* dmean;
  const Tensor* dinv_std;
  Tensor* dx;
  double dx_scale;
  bool dx_overwrite;
  Tensor* dscale;
  Tensor* dbias;
};

/// x, mean, inv_std, scale are the forward's (one compute dtype).
void normalize_rows_backward(const RowLayout& layout, const Tensor& x, const Tensor& mean, const Tensor& inv_std,
                             const Tensor& scale, const RowGradients& g, int threads);

}  // namespace nodeflow
