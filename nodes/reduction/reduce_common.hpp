#pragma once
// What the reduction nodes (Reduce*, ArgMax) share besides the traversal:
// their dtype sets and dtype check and the keepdims attribute. The `axes`
// input is read by nodes/common/constant_inputs.hpp.
#include <string>
#include <vector>

#include "core/attributes.hpp"
#include "core/dtype.hpp"

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

}  // namespace nodeflow
