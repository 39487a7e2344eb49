#pragma once
// The .npy preamble and header dictionary (numpy/lib/format.py), shared by the
// in-memory and the file readers and by the writer. Internal: not installed.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace nodeflow::npy {

/// Bytes of the fixed preamble (magic, version, header length) of a version
/// 1.0 file; 2.0 has 12.
inline constexpr std::size_t kMinPreamble = 10;
/// Header dictionaries longer than this are refused before they are read
/// (numpy's own writer never exceeds a few hundred bytes).
inline constexpr std::size_t kMaxHeaderBytes = std::size_t{1} << 20;

/// Where the header dictionary lies, from the first 10 or 12 bytes.
struct Preamble {
  int major = 1;
  std::size_t header_begin = 10;  ///< offset of the dictionary text
  std::size_t header_length = 0;  ///< its length in bytes (padding and '\n' included)
};

/// Bytes needed to decode the preamble once the first kMinPreamble bytes are known
/// (10 for version 1.0, 12 for 2.0). Throws IoError for a bad magic or a version
/// other than 1.0 and 2.0 (docs/graph-format.md).
std::size_t preamble_size(std::span<const std::byte> first, const std::string& source);

/// Decodes the preamble; `bytes` holds at least preamble_size(...) bytes.
/// Throws IoError for a header longer than kMaxHeaderBytes.
Preamble parse_preamble(std::span<const std::byte> bytes, const std::string& source);

/// The decoded header dictionary.
struct Header {
  DType dtype = DType::Float32;
  Shape shape;
  bool fortran_order = false;
  bool swap_bytes = false;      ///< file byte order differs from the machine's
  std::int64_t data_bytes = 0;  ///< element count times item size, overflow-checked
};

/// Parses "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" (any key
/// order, either quote, optional trailing comma, whitespace, then only spaces
/// and a final newline). Throws IoError naming `source` and the problem.
Header parse_header(std::string_view text, const std::string& source);

/// The descr numpy writes for `dtype` (bfloat16 has none: callers widen it to
/// float32 first).
std::string_view descr_of(DType dtype);

/// Preamble plus padded header dictionary for a C-order little-endian array,
/// sized so that the data starts at a multiple of 64 bytes (as numpy writes).
std::string encode_header(DType dtype, const Shape& shape);

}  // namespace nodeflow::npy
