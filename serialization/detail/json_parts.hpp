#pragma once
// Parts of a graph document that need more than structure: attribute values
// (typed by the op's schema) and initializer data (typed by the dtype).
// Internal: not installed.
#include <functional>
#include <string>

#include "core/attributes.hpp"
#include "core/registry.hpp"
#include "core/tensor.hpp"
#include "serialization/detail/json_support.hpp"

namespace nodeflow::json_detail {

/// Converts the JSON object `attrs` to Attributes using each attribute's AttrKind
/// in `schema`. `path` is the node's path ("nodes[0] (pool1)"); messages name
/// "<path>.attributes.<name>".
/// Throws InvalidAttribute for an unknown name (validate_attributes' words) or a
/// value of the wrong JSON type; ranges are left to validate_attributes.
Attributes read_attributes(const Json& attrs, const OpSchema& schema, const std::string& path);

/// The tensor held by `data` (a flat row-major list of numbers, or
/// {"base64": "..."} with little-endian bytes) for `dtype` and a static `shape`.
/// `path` is the data's path ("initializers[0] (w).data"). The value count or
/// byte count is checked against the shape before anything is allocated; then
/// `before_allocation` runs (the reader's memory budget), then the tensor is made.
/// Throws InvalidGraph naming the path and the offending element.
Tensor read_tensor_data(const Json& data, DType dtype, const Shape& shape, const std::string& path,
                        const std::function<void()>& before_allocation);

}  // namespace nodeflow::json_detail
