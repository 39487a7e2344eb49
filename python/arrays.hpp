#pragma once
// NumPy arrays <-> tensors (docs/python.md, "Arrays"): without a copy where the
// dtype and the layout allow it, else a copy; never a silent dtype conversion.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "core/executor.hpp"
#include "core/tensor.hpp"

namespace nodeflow::python {

namespace py = pybind11;

/// `value` (an array or anything numpy.asarray takes) as a tensor of its own
/// dtype: float32, float64, float16, int8, uint8, int64, and uint16 holding the
/// bits of bfloat16 when `expected` is bfloat16. A C-contiguous, aligned array
/// in native byte order is borrowed (Tensor::borrow; the tensor keeps the array
/// alive), any other layout is copied once into such an array. Throws
/// UnsupportedDType naming `what` for a dtype nodeflow has not. The dtype is
/// not converted: the library refuses a mismatch with its own message.
Tensor to_tensor(py::handle value, std::optional<DType> expected, const std::string& what);

/// The tensor as an array over its own buffer (no copy): the array's base is a
/// capsule holding the tensor. bfloat16 comes out as uint16 (its bits).
/// Read-only unless `writeable`.
py::array to_array(const Tensor& tensor, bool writeable);

/// Every tensor as an array; those sharing a buffer with one of `shared`'s
/// tensors or an initializer of `graph` (an output that is an input or a
/// weight, reshaped) are read-only, the others writeable.
py::dict to_arrays(const TensorMap& tensors, const TensorMap& shared, const Graph& graph);

/// The numpy dtype name of a nodeflow dtype ("uint16" for bfloat16).
std::string numpy_dtype_name(DType dtype);

/// A shape as a tuple, None for a dimension fixed only at run time.
py::tuple shape_tuple(const Shape& shape);

}  // namespace nodeflow::python
