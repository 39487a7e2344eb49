#pragma once
// IDX files, the format of the MNIST and Fashion-MNIST distributions
// (docs/training-config.md, "Datasets"; the format is defined on Yann LeCun's
// MNIST page): a 4-byte magic number 00 00 TYPE RANK, RANK big-endian uint32
// dimensions, then the elements, big-endian, row-major.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "core/tensor.hpp"

namespace nodeflow {

/// The most data bytes an IDX file may announce (4 GiB): a header is checked
/// against it before anything is allocated or decompressed.
inline constexpr std::uint64_t kMaxIdxDataBytes = std::uint64_t{1} << 32;

/// What the header of an IDX file says.
struct IdxHeader {
  DType dtype = DType::UInt8;     ///< the tensor's dtype (int32 elements become int64)
  std::uint8_t type_code = 0x08;  ///< the file's type byte
  Shape shape;                    ///< the dimensions, in file order
  std::size_t header_bytes = 0;   ///< 4 + 4 * rank
  std::size_t data_bytes = 0;     ///< elements * the file's element size
};

/// The header at the start of `bytes` (which may hold only the header).
/// Type bytes: 0x08 uint8, 0x09 int8, 0x0C int32 (read as int64), 0x0D float32,
/// 0x0E float64; 0x0B (int16) and others are refused. Throws IoError naming
/// `source` when there are fewer than 4 + 4 * rank bytes, the magic's first
/// two bytes are not 0, the type or a rank of 0 is not supported, or the data
/// would pass kMaxIdxDataBytes.
IdxHeader parse_idx_header(std::span<const std::byte> bytes, const std::string& source);

/// A whole IDX file held in memory, as a native row-major tensor. Throws
/// IoError naming `source` for a bad header (parse_idx_header), for data
/// shorter than the header announces (a truncated file, or dimensions larger
/// than the data) and for bytes after the data.
Tensor parse_idx(std::span<const std::byte> bytes, const std::string& source);

/// Reads the IDX file at `path`; a name ending in `.gz` is a gzip file
/// (GzipReader), decompressed as far as its header announces and checked to
/// end exactly there. Throws IoError naming the path when it cannot be read,
/// is not gzip where expected, or is malformed (parse_idx).
Tensor read_idx(const std::filesystem::path& path);

}  // namespace nodeflow
