#include "python/arrays.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "core/graph.hpp"

namespace nodeflow::python {
namespace {

// The nodeflow dtype of a numpy dtype, or nothing. uint16 is bfloat16's bits,
// taken only where bfloat16 is expected.
std::optional<DType> dtype_of(const py::dtype& dt, std::optional<DType> expected) {
  const char kind = dt.kind();
  const py::ssize_t size = dt.itemsize();
  if (kind == 'f' && size == 4) return DType::Float32;
  if (kind == 'f' && size == 8) return DType::Float64;
  if (kind == 'f' && size == 2) return DType::Float16;
  if (kind == 'i' && size == 1) return DType::Int8;
  if (kind == 'u' && size == 1) return DType::UInt8;
  if (kind == 'i' && size == 8) return DType::Int64;
  if (kind == 'u' && size == 2 && expected == DType::BFloat16) return DType::BFloat16;
  return std::nullopt;
}

bool borrowable(const py::array& a, DType dtype) {
  return (a.flags() & py::array::c_style) != 0 && a.dtype().attr("isnative").cast<bool>() &&
         Tensor::can_borrow(dtype, a.data());
}

// The owner of a borrowed array: its reference is dropped with the GIL held,
// wherever the last tensor handle dies (a kernel thread, a released-GIL call).
std::shared_ptr<const void> keep_alive(py::array array) {
  return std::shared_ptr<const void>(new py::array(std::move(array)), [](const void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<const py::array*>(p);
  });
}

}  // namespace

std::string numpy_dtype_name(DType dtype) {
  if (dtype == DType::BFloat16) return "uint16";
  return std::string(dtype_name(dtype));
}

py::tuple shape_tuple(const Shape& shape) {
  py::tuple t(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i)
    t[i] = shape[i] == kDynamicDim ? py::object(py::none()) : py::object(py::int_(shape[i]));
  return t;
}

Tensor to_tensor(py::handle value, std::optional<DType> expected, const std::string& what) {
  const py::module_ np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(value);
  const std::optional<DType> dtype = dtype_of(a.dtype(), expected);
  if (!dtype)
    throw UnsupportedDType(what + ": numpy dtype " + py::str(a.dtype()).cast<std::string>() +
                           " has no nodeflow dtype (float32, float64, float16, int8, uint8, "
                           "int64, and uint16 as the bits of a bfloat16 tensor)");
  if (!borrowable(a, *dtype))  // one copy, C-contiguous, aligned, native byte order
    a = np.attr("require")(a, a.dtype().attr("newbyteorder")("="), "CA");
  Shape shape(a.shape(), a.shape() + a.ndim());
  // Never written through: kernels do not write their inputs (a read-only array will do).
  void* data = const_cast<void*>(a.data());
  return Tensor::borrow(*dtype, std::move(shape), data, keep_alive(std::move(a)));
}

py::array to_array(const Tensor& tensor, bool writeable) {
  auto* kept = new Tensor(tensor);
  py::capsule base(kept, [](void* p) { delete static_cast<Tensor*>(p); });
  const std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  py::array a(py::dtype(numpy_dtype_name(tensor.dtype())), shape, kept->raw(), base);
  if (!writeable) a.attr("flags").attr("writeable") = false;
  return a;
}

py::dict to_arrays(const TensorMap& tensors, const TensorMap& shared, const Graph& graph) {
  py::dict out;
  for (const auto& [name, tensor] : tensors) {
    bool aliased = false;
    for (const auto& [other, value] : shared) aliased = aliased || tensor.shares_buffer(value);
    for (const Initializer& init : graph.def().initializers)
      aliased = aliased || tensor.shares_buffer(init.value);
    out[py::str(name)] = to_array(tensor, !aliased);
  }
  return out;
}

}  // namespace nodeflow::python
