#include "core/tensor.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <limits>
#include <new>

namespace nodeflow {
namespace {
constexpr std::size_t kAlign = 64;

// One allocation holds the reference count and the bytes (the buffer starts at
// the first 64-byte boundary inside it): an aligned allocation plus a separate
// control block would cost two allocations per tensor, and glibc's aligned
// allocation leaves a free fragment on either side of each buffer, which in a
// graph of many live tensors litters the heap.
std::shared_ptr<std::byte[]> allocate(std::size_t bytes, bool zero_fill) {
  const std::size_t rounded = bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
  std::shared_ptr<std::byte[]> block;
  try {
    block = std::make_shared_for_overwrite<std::byte[]>(rounded + kAlign - 1);
  } catch (const std::bad_alloc&) {
    throw Error("cannot allocate " + std::to_string(bytes) + " bytes for a tensor");
  }
  const auto address = reinterpret_cast<std::uintptr_t>(block.get());
  std::byte* p = block.get() + ((kAlign - address % kAlign) % kAlign);
  if (zero_fill) std::memset(p, 0, rounded);
  return std::shared_ptr<std::byte[]>(std::move(block), p);
}
}  // namespace

Tensor::Tensor(DType dtype, Shape shape) : Tensor(dtype, std::move(shape), true) {}

Tensor Tensor::uninitialized(DType dtype, Shape shape) {
  return Tensor(dtype, std::move(shape), false);
}

Tensor::Tensor(DType dtype, Shape shape, bool zero_fill) : dtype_(dtype) {
  set_shape(std::move(shape));
  buffer_ = allocate(nbytes(), zero_fill);
}

void Tensor::set_shape(Shape shape) {
  shape_ = std::move(shape);
  numel_ = element_count(shape_);
  const auto esize = static_cast<std::int64_t>(dtype_size(dtype_));
  if (numel_ > (std::numeric_limits<std::int64_t>::max() - 64) / esize)
    throw ShapeMismatch("tensor of shape " + to_string(shape_) + " and dtype " +
                        std::string(dtype_name(dtype_)) + " overflows the byte count");
}

bool Tensor::can_borrow(DType dtype, const void* data) {
  return data != nullptr && reinterpret_cast<std::uintptr_t>(data) % dtype_size(dtype) == 0;
}

Tensor Tensor::borrow(DType dtype, Shape shape, void* data, std::shared_ptr<const void> owner) {
  if (!can_borrow(dtype, data))
    throw Error("Tensor::borrow: the " + std::string(dtype_name(dtype)) + " data at " +
                          (data ? "an address not aligned to " + std::to_string(dtype_size(dtype)) + " bytes"
                                : "a null address") +
                          " cannot be used without a copy");
  Tensor t;
  t.dtype_ = dtype;
  t.set_shape(std::move(shape));
  t.buffer_ = std::shared_ptr<std::byte[]>(std::move(owner), static_cast<std::byte*>(data));
  return t;
}

void Tensor::check_type(DType requested) const {
  if (requested != dtype_)
    throw UnsupportedDType("tensor of dtype " + std::string(dtype_name(dtype_)) +
                           " accessed as " + std::string(dtype_name(requested)));
}

Tensor Tensor::clone() const {
  if (empty()) return {};
  Tensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (element_count(shape) != numel_)
    throw ShapeMismatch("cannot reshape " + to_string(shape_) + " to " + to_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::cast(DType to) const {
  if (to == dtype_) return clone();
  Tensor out(to, shape_);
  visit_dtype(dtype_, [&](auto from_tag) {
    using From = decltype(from_tag);
    visit_dtype(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* src = data<From>();
      To* dst = out.data<To>();
      for (std::int64_t i = 0; i < numel_; ++i) {
        const double v = static_cast<double>(src[i]);
        if constexpr (std::is_integral_v<To>) {
          // Out-of-range float->int conversion is undefined behaviour: refuse it.
          if (!(v >= static_cast<double>(std::numeric_limits<To>::lowest()) &&
                v <= static_cast<double>(std::numeric_limits<To>::max())))
            throw UnsupportedDType("cannot cast value " + std::to_string(v) + " to " +
                                   std::string(dtype_name(to)));
        }
        dst[i] = static_cast<To>(v);
      }
    });
  });
  return out;
}

}  // namespace nodeflow
