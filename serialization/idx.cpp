#include "serialization/idx.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "core/errors.hpp"
#include "serialization/gzip.hpp"
#include "serialization/text_file.hpp"

namespace nodeflow {
namespace {

std::uint32_t big_endian_u32(const std::byte* p) {
  return (std::to_integer<std::uint32_t>(p[0]) << 24) |
         (std::to_integer<std::uint32_t>(p[1]) << 16) |
         (std::to_integer<std::uint32_t>(p[2]) << 8) | std::to_integer<std::uint32_t>(p[3]);
}

// The file's element size for a type byte the reader supports (0 otherwise).
std::size_t element_size(std::uint8_t type_code) {
  switch (type_code) {
    case 0x08: case 0x09: return 1;
    case 0x0C: case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
  }
}

DType idx_dtype(std::uint8_t type_code) {
  switch (type_code) {
    case 0x08: return DType::UInt8;
    case 0x09: return DType::Int8;
    case 0x0C: return DType::Int64;
    case 0x0D: return DType::Float32;
    default: return DType::Float64;
  }
}

std::string hex(std::uint8_t b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 15];
}

// Big-endian elements of `size` bytes -> the tensor's native elements.
void decode(const std::byte* in, const IdxHeader& h, Tensor& t) {
  const auto n = static_cast<std::size_t>(t.numel());
  if (h.type_code == 0x08 || h.type_code == 0x09) {
    if (n) std::memcpy(t.raw(), in, n);
    return;
  }
  const std::size_t size = element_size(h.type_code);
  std::byte* out = t.raw();
  if (h.type_code == 0x0C) {
    auto* values = reinterpret_cast<std::int64_t*>(out);
    for (std::size_t i = 0; i < n; ++i)
      values[i] = static_cast<std::int32_t>(big_endian_u32(in + 4 * i));
    return;
  }
  if (n) std::memcpy(out, in, n * size);
  if constexpr (std::endian::native == std::endian::little)
    for (std::size_t i = 0; i < n; ++i) std::reverse(out + i * size, out + (i + 1) * size);
}

}  // namespace

IdxHeader parse_idx_header(std::span<const std::byte> bytes, const std::string& source) {
  if (bytes.size() < 4)
    throw IoError(source + ": not an IDX file: " + std::to_string(bytes.size()) +
                  " bytes, shorter than the 4-byte magic number");
  const auto byte = [&](std::size_t i) { return std::to_integer<std::uint8_t>(bytes[i]); };
  if (byte(0) != 0 || byte(1) != 0)
    throw IoError(source + ": not an IDX file: the magic number starts with " + hex(byte(0)) +
                  " " + hex(byte(1)) + ", not 0x00 0x00" +
                  (has_gzip_magic(bytes) ? " (it is gzip-compressed: name it .gz)" : ""));
  IdxHeader h;
  h.type_code = byte(2);
  const std::size_t size = element_size(h.type_code);
  if (size == 0)
    throw IoError(source + ": IDX element type " + hex(h.type_code) +
                  (h.type_code == 0x0B ? " (int16)" : "") +
                  " is not supported (0x08 uint8, 0x09 int8, 0x0c int32, 0x0d float32, 0x0e "
                  "float64)");
  h.dtype = idx_dtype(h.type_code);
  const std::size_t rank = byte(3);
  if (rank == 0) throw IoError(source + ": IDX file of rank 0 (no dimensions)");
  h.header_bytes = 4 + 4 * rank;
  if (bytes.size() < h.header_bytes)
    throw IoError(source + ": IDX header is truncated: rank " + std::to_string(rank) + " needs " +
                  std::to_string(h.header_bytes) + " bytes, the file holds " +
                  std::to_string(bytes.size()));
  for (std::size_t d = 0; d < rank; ++d) h.shape.push_back(big_endian_u32(bytes.data() + 4 + 4 * d));
  // Counted within the limit, so that the product never wraps: each factor
  // is below 2^32 and the running count at most the limit.
  const std::uint64_t limit = kMaxIdxDataBytes / size;
  const bool empty = std::find(h.shape.begin(), h.shape.end(), 0) != h.shape.end();
  std::uint64_t count = 1;
  bool too_big = false;
  for (std::size_t d = 0; d < rank && !empty && !too_big; ++d) {
    count *= static_cast<std::uint64_t>(h.shape[d]);
    too_big = count > limit;
  }
  if (empty) count = 0;
  if (too_big)
    throw IoError(source + ": IDX dimensions " + to_string(h.shape) + " of " +
                  std::to_string(size) + "-byte elements announce more than " +
                  std::to_string(kMaxIdxDataBytes) + " bytes of data, the limit");
  h.data_bytes = static_cast<std::size_t>(count * size);
  return h;
}

Tensor parse_idx(std::span<const std::byte> bytes, const std::string& source) {
  const IdxHeader h = parse_idx_header(bytes, source);
  const std::size_t available = bytes.size() - h.header_bytes;
  if (available < h.data_bytes)
    throw IoError(source + ": IDX data is truncated: dimensions " + to_string(h.shape) +
                  " need " + std::to_string(h.data_bytes) + " bytes, the file holds " +
                  std::to_string(available));
  if (available > h.data_bytes)
    throw IoError(source + ": IDX file has " + std::to_string(available - h.data_bytes) +
                  " bytes after the data of dimensions " + to_string(h.shape));
  Tensor t = Tensor::uninitialized(h.dtype, h.shape);
  decode(bytes.data() + h.header_bytes, h, t);
  return t;
}

Tensor read_idx(const std::filesystem::path& path) {
  const std::string source = printable(path.string(), std::string::npos);
  const std::string file = read_text_file(path, "the IDX file");
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(file.data()),
                                         file.size());
  if (path.extension() != ".gz") return parse_idx(bytes, source);

  // Decompress the header first, then exactly the data it announces (one byte
  // more, to find data beyond it): a small file cannot make us decompress or
  // allocate more than the header's own, bounded, claim.
  GzipReader reader(bytes, source);
  std::string content(8, '\0');
  content.resize(reader.read(reinterpret_cast<std::byte*>(content.data()), 4));
  if (content.size() == 4) {
    const std::size_t rank = std::to_integer<std::uint8_t>(std::byte(content[3]));
    content.resize(4 + 4 * rank);
    content.resize(4 + reader.read(reinterpret_cast<std::byte*>(content.data() + 4), 4 * rank));
  }
  const IdxHeader h = parse_idx_header(
      std::span(reinterpret_cast<const std::byte*>(content.data()), content.size()), source);
  // Grown block by block: memory follows the data actually there.
  constexpr std::size_t kBlock = std::size_t{1} << 22;
  const std::size_t total = h.header_bytes + h.data_bytes;
  while (content.size() <= total) {
    const std::size_t at = content.size();
    const std::size_t want = std::min(kBlock, total + 1 - at);
    content.resize(at + want);
    const std::size_t got = reader.read(reinterpret_cast<std::byte*>(content.data() + at), want);
    content.resize(at + got);
    if (got < want) break;
  }
  if (content.size() > total)
    throw IoError(source + ": IDX file has bytes after the data of dimensions " +
                  to_string(h.shape) + " (decompressed)");
  return parse_idx(std::span(reinterpret_cast<const std::byte*>(content.data()), content.size()),
                   source);
}

}  // namespace nodeflow
