#include "capi/tensor_io.hpp"

#include <cstring>
#include <memory>

#include "capi/api_guard.hpp"
#include "core/errors.hpp"

namespace nodeflow::capi {
namespace {

struct CodeOf {
  nf_dtype code;
  DType dtype;
};
constexpr CodeOf kCodes[] = {{NF_FLOAT32, DType::Float32},  {NF_UINT8, DType::UInt8},
                             {NF_INT8, DType::Int8},        {NF_INT64, DType::Int64},
                             {NF_FLOAT16, DType::Float16},  {NF_FLOAT64, DType::Float64},
                             {NF_BFLOAT16, DType::BFloat16}};

// "(needs 40 bytes, the buffer has 8)"
std::string too_small(const std::string& what, std::size_t needed, std::size_t capacity,
                      const char* unit) {
  return what + " needs " + std::to_string(needed) + " " + unit + ", the buffer has " +
         std::to_string(capacity);
}

}  // namespace

DType dtype_from_code(std::int64_t code) {
  for (const CodeOf& c : kCodes)
    if (c.code == code) return c.dtype;
  throw UnsupportedDType("dtype code " + std::to_string(code) +
                         " is not a nodeflow dtype (1 float32, 2 uint8, 3 int8, 7 int64, "
                         "10 float16, 11 float64, 16 bfloat16)");
}

nf_dtype code_of(DType dtype) {
  for (const CodeOf& c : kCodes)
    if (c.dtype == dtype) return c.code;
  throw UnsupportedDType(std::string(dtype_name(dtype)) + " has no nf_dtype code");
}

Tensor tensor_from_host(const std::string& what, std::int64_t dtype, std::int32_t rank,
                        const std::int64_t* dims, const void* data, std::size_t size,
                        Ownership ownership) {
  const DType t = dtype_from_code(dtype);
  if (rank < 0)
    throw ApiError(NF_ERR_INVALID_ARGUMENT, what + ": rank " + std::to_string(rank) + " < 0");
  if (rank > 0) require(dims, (what + ": dims").c_str());
  Shape shape(dims, dims + rank);
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      throw ShapeMismatch(what + ": dims[" + std::to_string(i) + "] is " +
                          std::to_string(shape[i]) + ", a dimension must be >= 0");
  // Inputs are only read: the const_cast never leads to a write.
  const bool borrow = ownership == Ownership::Borrow && Tensor::can_borrow(t, data);
  Tensor tensor = borrow ? Tensor::borrow(t, shape, const_cast<void*>(data), nullptr)
                         : Tensor::uninitialized(t, shape);
  if (tensor.nbytes() != size)
    throw ShapeMismatch(what + ": " + std::to_string(size) + " bytes given for " +
                        std::string(dtype_name(t)) + " " + to_string(shape) + ", which takes " +
                        std::to_string(tensor.nbytes()));
  if (size > 0) require(data, (what + ": data").c_str());
  if (!borrow && size > 0) std::memcpy(tensor.raw(), data, size);
  return tensor;
}

void describe(const std::string& what, DType dtype, const Shape& shape, nf_dtype* dtype_out,
              std::int32_t* rank, std::int64_t* dims, std::size_t dims_capacity) {
  if (dims == nullptr && dims_capacity > 0)
    throw ApiError(NF_ERR_INVALID_ARGUMENT,
                   what + ": dims is NULL with a capacity of " + std::to_string(dims_capacity));
  if (dtype_out) *dtype_out = code_of(dtype);
  if (rank) *rank = static_cast<std::int32_t>(shape.size());
  const std::size_t n = std::min(shape.size(), dims_capacity);
  for (std::size_t i = 0; i < n; ++i) dims[i] = shape[i];
  if (dims_capacity < shape.size())
    throw ApiError(NF_ERR_BUFFER_TOO_SMALL,
                   too_small(what + " (rank " + std::to_string(shape.size()) + ")", shape.size(),
                             dims_capacity, "dims"));
}

namespace {

// Checks (buffer, capacity) for `needed` bytes; false for a size query (a NULL
// buffer with capacity 0), which copies nothing.
bool room_for(const std::string& what, std::size_t needed, const void* buffer, std::size_t capacity,
              const char* unit) {
  if (buffer == nullptr) {
    if (capacity == 0) return false;
    throw ApiError(NF_ERR_INVALID_ARGUMENT,
                   what + ": the buffer is NULL with a capacity of " + std::to_string(capacity));
  }
  if (capacity < needed)
    throw ApiError(NF_ERR_BUFFER_TOO_SMALL, too_small(what, needed, capacity, unit));
  return true;
}

}  // namespace

void copy_bytes_out(const std::string& what, std::string_view bytes, void* buffer,
                    std::size_t capacity, std::size_t* size) {
  if (size) *size = bytes.size();
  if (room_for(what, bytes.size(), buffer, capacity, "bytes") && !bytes.empty())
    std::memcpy(buffer, bytes.data(), bytes.size());
}

void copy_string_out(const std::string& what, std::string_view text, char* buffer,
                     std::size_t capacity, std::size_t* length) {
  if (length) *length = text.size();
  if (!room_for(what, text.size() + 1, buffer, capacity, "bytes (with the NUL)")) return;
  std::memcpy(buffer, text.data(), text.size());
  buffer[text.size()] = '\0';
}

std::string name_arg(const char* name, const char* what) { return require(name, what); }

}  // namespace nodeflow::capi
