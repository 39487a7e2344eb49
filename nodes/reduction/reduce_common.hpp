#pragma once
// What the reduction nodes (Reduce*, ArgMax) share besides the traversal:
// their dtype sets and dtype check, the keepdims attribute, and the reading of
// the `axes` input.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/attributes.hpp"
#include "core/dtype.hpp"
#include "core/tensor.hpp"

namespace nodeflow {

/// float32, float64, float16, bfloat16 and int64; with `small_ints` int8 and
/// uint8 too (ReduceMax/Min-20, ArgMax-13). ONNX's other integer types are not
/// nodeflow dtypes.
std::vector<DType> reduce_dtypes(bool small_ints);

/// Throws UnsupportedDType unless `dtype` is in `allowed`: "ReduceSum does not
/// take dtype int8 (input 0 (data); allowed: float32, ..., int64)".
void check_reduce_dtype(const std::string& op, DType dtype, const std::vector<DType>& allowed);

/// keepdims: Int 0 or 1, default 1.
AttrSpec keepdims_spec(std::string doc);

/// The values of Reduce*'s optional `axes` input (nullptr or an empty tensor:
/// absent). Throws UnsupportedDType unless it is int64 and ShapeMismatch unless
/// it is 1-D: "input 1 (axes) has shape [2, 1]; ReduceSum needs a 1-D int64 tensor".
std::span<const std::int64_t> axes_values(const std::string& op, const Tensor* axes);

}  // namespace nodeflow
