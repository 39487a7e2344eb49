#pragma once
// Tensors and strings across the C boundary: nf_dtype codes, tensors from
// (dtype, rank, dims, data, size), and results copied into caller buffers.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "capi/nodeflow.h"
#include "core/tensor.hpp"

namespace nodeflow::capi {

/// The integer a host passed for an enum parameter (nf_dtype, nf_format,
/// nf_tensor_list). A C host may pass any int, and reading a value outside
/// the enumerators' range as the C++ enum is undefined behaviour: its bytes
/// are read as the underlying type instead. Every enum argument goes through it.
template <typename E> std::int64_t raw_code(const E& value) {
  std::underlying_type_t<E> raw;
  std::memcpy(&raw, &value, sizeof raw);
  return static_cast<std::int64_t>(raw);
}

/// The DType of an nf_dtype code (raw_code); UnsupportedDType for an unknown code.
DType dtype_from_code(std::int64_t code);
/// The nf_dtype code of a graph dtype.
nf_dtype code_of(DType dtype);

/// How a host's tensor becomes a Tensor.
enum class Ownership { Borrow, Copy };

/// The tensor (dtype, rank, dims, data, size): checks the code, the rank, the
/// dims (>= 0) and that `size` is their byte count (ShapeMismatch naming
/// `what`). Borrow wraps `data` when Tensor::can_borrow allows, else copies.
Tensor tensor_from_host(const std::string& what, std::int64_t dtype, std::int32_t rank,
                        const std::int64_t* dims, const void* data, std::size_t size,
                        Ownership ownership);

/// Writes dtype, rank and min(rank, dims_capacity) dims (each output may be
/// NULL, dims only with dims_capacity 0); BUFFER_TOO_SMALL after writing when
/// dims_capacity < rank. `what` names the tensor in the message.
void describe(const std::string& what, DType dtype, const Shape& shape, nf_dtype* dtype_out,
              std::int32_t* rank, std::int64_t* dims, std::size_t dims_capacity);

/// Copies `bytes` into (buffer, capacity), *size (may be NULL) getting their
/// count: a NULL buffer with capacity 0 only asks for the size;
/// BUFFER_TOO_SMALL when capacity is smaller.
void copy_bytes_out(const std::string& what, std::string_view bytes, void* buffer,
                    std::size_t capacity, std::size_t* size);

/// Copies `text` and its NUL into (buffer, capacity), *length (may be NULL)
/// getting its length without the NUL; as copy_bytes_out otherwise.
void copy_string_out(const std::string& what, std::string_view text, char* buffer,
                     std::size_t capacity, std::size_t* length);

/// A NUL-terminated name from the host: InvalidArgument for NULL.
std::string name_arg(const char* name, const char* what);

}  // namespace nodeflow::capi
