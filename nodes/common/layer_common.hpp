#pragma once
// Pieces shared by the layer nodes (Conv, Gemm, MatMul, Add, activations,
// Softmax, losses, BatchNormalization, Dropout, Flatten, Reshape): dtype
// checks, the dtype kernels compute in and gradient accumulation; numpy
// broadcasting is in broadcast.hpp.
//
// Kernels run in float32 or float64 only: float16 and bfloat16 tensors are
// converted to float32 (their accumulator_t) on the way in and back on the way
// out, so every Eigen-heavy template is instantiated twice, not four times.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"
#include "nodes/common/broadcast.hpp"  // the broadcasting helpers, which used to live here

namespace nodeflow {

/// The dtypes of the schemas' TensorSpecs: the float ones check_float_input
/// takes, int64 (check_int64_input) and every graph dtype (kGraphDTypes).
inline std::vector<DType> float_dtypes() {
  return {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
}
inline std::vector<DType> int64_dtypes() { return {DType::Int64}; }
inline std::vector<DType> graph_dtypes() { return {std::begin(kGraphDTypes), std::end(kGraphDTypes)}; }

/// Throws UnsupportedDType unless `dtype` is float32, float64, float16 or bfloat16:
/// "Conv does not take dtype int8 (input 0 (X); allowed: float32, float64, float16, bfloat16)".
void check_float_input(const std::string& op, std::size_t index, const std::string& input_name,
                       DType dtype);

/// Throws UnsupportedDType when input `index` has another dtype than input 0:
/// "input 1 (W) has dtype float64 but input 0 (X) has float32; Conv needs one dtype".
void check_same_dtype(const std::string& op, std::size_t index, const std::string& input_name,
                      DType dtype, const std::string& first_name, DType first);

/// Throws UnsupportedDType unless `dtype` is int64 (labels, shapes).
void check_int64_input(const std::string& op, std::size_t index, const std::string& input_name,
                       DType dtype);

/// The dtype kernels compute in: float32 for float16 and bfloat16, else `dtype`.
DType compute_dtype(DType dtype);

/// `t` converted to `dtype`; shares t's buffer when it already has that dtype.
Tensor as_dtype(const Tensor& t, DType dtype);

/// `t` in compute_dtype(t.dtype()) (shares the buffer when no conversion is needed).
inline Tensor to_compute(const Tensor& t) { return as_dtype(t, compute_dtype(t.dtype())); }

/// dst += scale * src element by element (core/accumulate.hpp's add_scaled:
/// in float64 when either is float64, else float32). Both are float tensors
/// with the same element count (their shapes may differ, e.g. Flatten), else
/// RunError. An empty dst (gradient not wanted) or an empty src (zero
/// gradient) is a no-op.
void accumulate_gradient(Tensor& dst, const Tensor& src, double scale);

/// Throws RunError unless backward received at least `count` saved tensors
/// (backward needs a training-mode forward of the node first).
void require_saved(const std::string& op, std::size_t saved, std::size_t count);

/// Throws ShapeMismatch unless the gradient of output `k` has the shape that
/// output had in the forward (`expected`). An empty gradient passes (zero).
void check_output_gradient(const std::string& op, std::size_t k, const Tensor& gradient,
                           const Shape& expected);

/// Calls f(float{}) or f(double{}) for a compute dtype (float32 or float64).
template <typename F> void visit_compute_dtype(DType compute, F&& f) {
  if (compute == DType::Float64)
    f(double{});
  else
    f(float{});
}

/// Product of dims [begin, end) of a static shape.
std::int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end);

/// Normalizes an ONNX axis attribute in [-rank, rank + extra) to [0, rank + extra).
/// Throws InvalidAttribute("attributes.axis: expected an integer in [-r, r+extra-1] for
/// input rank r, got v").
std::size_t normalize_axis(std::int64_t axis, std::size_t rank, std::size_t extra = 0);

}  // namespace nodeflow
