#pragma once
// ONNX's Constant and ConstantOfShape folded into initializers at load: the
// part the ONNX reader and the graph-document reader share (docs/onnx.md,
// "Constant folding"; docs/graph-format.md, "Constant and ConstantOfShape").
// Each reader reads the attribute values of its own format and names its own
// paths; the forms, shapes, checks and fills are decided here, once.
// Internal: not installed.
#include <optional>
#include <string>
#include <string_view>

#include "core/tensor.hpp"

namespace nodeflow::constant_fold {

/// The attributes of Constant (opsets 1-22) that nodeflow folds.
enum class ConstantAttribute { Value, SparseValue, ValueFloat, ValueFloats, ValueInt, ValueInts };

/// Every attribute name of Constant, in ONNX's order, for messages.
inline constexpr std::string_view kConstantAttributeNames =
    "value, sparse_value, value_float, value_floats, value_int, value_ints, value_string, value_strings";

/// The attribute named `name`, nullopt for a name Constant does not have.
/// value_string and value_strings throw InvalidAttribute "<where>: this form
/// of Constant is not supported (nodeflow has no string tensors)".
std::optional<ConstantAttribute> constant_attribute(const std::string& name, const std::string& where);

/// value_float and value_int give a scalar (shape []); value_floats and
/// value_ints a 1-D tensor of the list's length.
bool is_list(ConstantAttribute attribute);

/// The dtype of the value_* forms: float32 for value_float(s), int64 for
/// value_int(s) (ONNX's Constant-12).
DType value_dtype(ConstantAttribute attribute);

/// ConstantOfShape's fill when `value` is absent: float32 0 (ONNX's default).
Tensor default_fill();

/// Checks that `fill`, ConstantOfShape's `value`, holds exactly one element:
/// InvalidAttribute "<where> must hold one element, got a [2] tensor".
void check_fill(const Tensor& fill, const std::string& where);

/// InvalidGraph "<input> must be a constant (a non-trainable initializer or a
/// Constant): nodeflow folds ConstantOfShape into an initializer at load".
/// `input` names ConstantOfShape's input as the reader does.
[[noreturn]] void refuse_computed_shape(const std::string& input);

/// The shape that ConstantOfShape's constant input `dims` holds: 1-D int64,
/// every dimension >= 0 (InvalidGraph "<input> must be a 1-D int64 tensor,
/// got ...", "<input> holds the negative dimension -1"), whose element count
/// fits int64 (ShapeMismatch "<input>: the shape [...] has more elements than
/// int64 counts").
Shape shape_of(const Tensor& dims, const std::string& input);

/// A tensor of `shape` with every element fill's one element, in fill's
/// dtype. The caller charged its bytes to the reader's initializer budget.
Tensor filled(const Shape& shape, const Tensor& fill);

}  // namespace nodeflow::constant_fold
