#pragma once
// Steps several families share (serialization/onnx/detail/opset_table.hpp).
#include <string>

#include "serialization/onnx/detail/opset_table.hpp"

namespace nodeflow::onnx_import::detail {

/// An attribute the version requires, refused when absent ("attribute 'axes'
/// is required at opset 11"), before a ToInput moves it.
Custom required(const std::string& attribute);

/// A FLOAT attribute that a later version made an INT (LpPool-1's p): an
/// integral value becomes that INT, any other is refused.
Custom float_to_int(const std::string& attribute, const std::string& why);

}  // namespace nodeflow::onnx_import::detail
