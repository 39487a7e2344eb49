#pragma once
// The one tensor type: dtype + static shape + contiguous row-major storage.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/shape.hpp"

namespace nodeflow {

/// A dense N-D tensor, row-major, 64-byte aligned storage.
///
/// Copies share the buffer (a Tensor is a handle, like a numpy view of a whole
/// array); use clone() for a deep copy. Graph initializers are shared read-only
/// between runs, so kernels never write into their inputs.
/// A default-constructed Tensor is "absent" (empty(), no dtype meaning).
class Tensor {
 public:
  Tensor() = default;
  /// Zero-filled tensor. Throws ShapeMismatch if the shape is dynamic or its
  /// element/byte count overflows, Error if the memory cannot be allocated.
  Tensor(DType dtype, Shape shape);
  /// A tensor whose elements are left unset, for a kernel that writes every
  /// element: it saves the pass over memory the zero fill costs, which is
  /// much of the time of a memory-bound kernel. Throws as Tensor(dtype, shape).
  static Tensor uninitialized(DType dtype, Shape shape);

  /// A tensor over memory someone else owns (a NumPy array, a C host's
  /// buffer), without a copy: the handle keeps `owner` alive, and the bytes
  /// must stay valid and unmodified while any handle to the tensor lives.
  /// `data` holds numel * dtype_size bytes, row-major, aligned to the dtype's
  /// size (no kernel assumes more; the library's own tensors are 64-byte
  /// aligned). Throws ShapeMismatch as Tensor(dtype, shape), Error
  /// for a null or misaligned `data` (can_borrow says beforehand).
  static Tensor borrow(DType dtype, Shape shape, void* data, std::shared_ptr<const void> owner);
  /// True when borrow accepts `data` for `dtype`.
  static bool can_borrow(DType dtype, const void* data);

  /// Tensor filled from typed values (size must equal the element count).
  template <typename T> static Tensor from(Shape shape, std::span<const T> values) {
    Tensor t(dtype_of_v<T>, std::move(shape));
    if (static_cast<std::int64_t>(values.size()) != t.numel())
      throw ShapeMismatch("Tensor::from: " + std::to_string(values.size()) +
                          " values for shape " + to_string(t.shape()));
    std::copy(values.begin(), values.end(), t.data<T>());
    return t;
  }
  template <typename T> static Tensor from(Shape shape, std::initializer_list<T> values) {
    return from<T>(std::move(shape), std::span<const T>(values.begin(), values.size()));
  }

  bool empty() const { return buffer_ == nullptr && numel_ == 0 && shape_.empty(); }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::size_t rank() const { return shape_.size(); }
  std::int64_t numel() const { return numel_; }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel_) * dtype_size(dtype_); }

  /// Typed element pointer. Throws UnsupportedDType if T is not the tensor's dtype.
  template <typename T> T* data() {
    check_type(dtype_of_v<T>);
    return static_cast<T*>(static_cast<void*>(buffer_.get()));
  }
  template <typename T> const T* data() const {
    check_type(dtype_of_v<T>);
    return static_cast<const T*>(static_cast<const void*>(buffer_.get()));
  }
  template <typename T> std::span<T> values() { return {data<T>(), static_cast<std::size_t>(numel_)}; }
  template <typename T> std::span<const T> values() const {
    return {data<T>(), static_cast<std::size_t>(numel_)};
  }
  std::byte* raw() { return buffer_.get(); }
  const std::byte* raw() const { return buffer_.get(); }

  /// Deep copy with its own buffer.
  Tensor clone() const;
  /// Same buffer, new shape with the same element count (throws ShapeMismatch).
  Tensor reshaped(Shape shape) const;
  /// Element-wise conversion to another dtype (float->int truncates toward zero).
  Tensor cast(DType to) const;
  /// True when both tensors share one buffer.
  bool shares_buffer(const Tensor& other) const { return buffer_ && buffer_ == other.buffer_; }

 private:
  Tensor(DType dtype, Shape shape, bool zero_fill);
  // Sets shape_ and numel_, refusing a byte count that overflows.
  void set_shape(Shape shape);
  void check_type(DType requested) const;
  DType dtype_ = DType::Float32;
  Shape shape_;
  std::int64_t numel_ = 0;
  std::shared_ptr<std::byte[]> buffer_;
};

/// Dtype and (possibly dynamic) shape of a tensor, as known at load time.
struct TensorInfo {
  DType dtype = DType::Float32;
  Shape shape;  ///< kDynamicDim (-1) for dimensions known only at run time
};

}  // namespace nodeflow
