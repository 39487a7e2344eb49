#pragma once
// Parts of a graph document that need more than structure: attribute values
// (typed by the op's schema) and initializer data (typed by the dtype).
// Internal: not installed.
#include <string>

#include "core/attributes.hpp"
#include "core/registry.hpp"
#include "core/tensor.hpp"
#include "serialization/json_support.hpp"

namespace nodeflow::json_detail {

/// Converts the JSON object `attrs` to Attributes using each attribute's AttrKind
/// in `schema`. `path` is the node's path ("nodes[0] (pool1)"); messages name
/// "<path>.attributes.<name>".
/// Throws InvalidAttribute for an unknown name (validate_attributes' words) or a
/// value of the wrong JSON type; ranges are left to validate_attributes.
Attributes read_attributes(const Json& attrs, const OpSchema& schema, const std::string& path);

/// Checks, without allocating, that `data` (a flat row-major list of numbers,
/// or {"base64": "..."} with little-endian bytes) has the form and the value
/// count (or base64 length) of a tensor of `dtype` and the static `shape`.
/// `path` is the data's path ("initializers[0] (w).data"). Throws InvalidGraph
/// naming the path.
void check_tensor_data(const Json& data, DType dtype, const Shape& shape, const std::string& path);

/// The tensor held by `data`: check_tensor_data, then the values converted
/// (each must fit the dtype). Throws InvalidGraph naming the path and the
/// offending element.
Tensor read_tensor_data(const Json& data, DType dtype, const Shape& shape, const std::string& path);

}  // namespace nodeflow::json_detail
