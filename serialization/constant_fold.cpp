#include <cstring>

#include "core/errors.hpp"
#include "serialization/detail/constant_fold.hpp"

namespace nodeflow::constant_fold {

std::optional<ConstantAttribute> constant_attribute(const std::string& name, const std::string& where) {
  if (name == "value") return ConstantAttribute::Value;
  if (name == "sparse_value") return ConstantAttribute::SparseValue;
  if (name == "value_float") return ConstantAttribute::ValueFloat;
  if (name == "value_floats") return ConstantAttribute::ValueFloats;
  if (name == "value_int") return ConstantAttribute::ValueInt;
  if (name == "value_ints") return ConstantAttribute::ValueInts;
  if (name == "value_string" || name == "value_strings")
    throw InvalidAttribute(where + ": this form of Constant is not supported (nodeflow has no string tensors)");
  return std::nullopt;
}

bool is_list(ConstantAttribute attribute) {
  return attribute == ConstantAttribute::ValueFloats || attribute == ConstantAttribute::ValueInts;
}

DType value_dtype(ConstantAttribute attribute) {
  return attribute == ConstantAttribute::ValueInt || attribute == ConstantAttribute::ValueInts ? DType::Int64
                                                                                               : DType::Float32;
}

Tensor default_fill() { return Tensor::from<float>({1}, {0.0f}); }

void check_fill(const Tensor& fill, const std::string& where) {
  if (fill.numel() != 1)
    throw InvalidAttribute(where + " must hold one element, got a " + to_string(fill.shape()) + " tensor");
}

void refuse_computed_shape(const std::string& input) {
  throw InvalidGraph(input +
                     " must be a constant (a non-trainable initializer or a Constant): nodeflow folds "
                     "ConstantOfShape into an initializer at load");
}

Shape shape_of(const Tensor& dims, const std::string& input) {
  if (dims.dtype() != DType::Int64 || dims.rank() != 1)
    throw InvalidGraph(input + " must be a 1-D int64 tensor, got " + std::string(dtype_name(dims.dtype())) + " " +
                       to_string(dims.shape()));
  Shape shape;
  for (const std::int64_t d : dims.values<std::int64_t>()) {
    if (d < 0) throw InvalidGraph(input + " holds the negative dimension " + std::to_string(d));
    shape.push_back(d);
  }
  try {
    element_count(shape);
  } catch (const ShapeMismatch&) {
    throw ShapeMismatch(input + ": the shape " + to_string(shape) + " has more elements than int64 counts");
  }
  return shape;
}

Tensor filled(const Shape& shape, const Tensor& fill) {
  Tensor value = Tensor::uninitialized(fill.dtype(), shape);
  const std::size_t width = dtype_size(fill.dtype());
  for (std::int64_t k = 0; k < value.numel(); ++k)
    std::memcpy(value.raw() + static_cast<std::size_t>(k) * width, fill.raw(), width);
  return value;
}

}  // namespace nodeflow::constant_fold
