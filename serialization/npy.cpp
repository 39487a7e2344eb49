#include "serialization/npy.hpp"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <cstdint>
#include <fstream>
#include <istream>
#include <vector>

#include "core/errors.hpp"
#include "serialization/atomic_file.hpp"
#include "serialization/detail/npy_header.hpp"

namespace nodeflow {
namespace {

struct Layout {
  npy::Header header;
  std::size_t data_offset = 0;
};

Layout decode_layout(std::span<const std::byte> head, const npy::Preamble& p,
                     const std::string& source) {
  const std::string_view text(reinterpret_cast<const char*>(head.data()) + p.header_begin,
                              p.header_length);
  return {npy::parse_header(text, source), p.header_begin + p.header_length};
}

void check_data_size(const Layout& l, std::uint64_t available, const std::string& source) {
  const auto want = static_cast<std::uint64_t>(l.header.data_bytes);
  if (available < want)
    throw IoError(source + ": .npy data is truncated: shape " + to_string(l.header.shape) +
                  " of " + std::string(dtype_name(l.header.dtype)) + " needs " +
                  std::to_string(want) + " bytes, the file holds " + std::to_string(available));
  if (available > want)
    throw IoError(source + ": .npy file has " + std::to_string(available - want) +
                  " bytes after the data of shape " + to_string(l.header.shape));
}

void swap_bytes(Tensor& t) {
  const std::size_t item = dtype_size(t.dtype());
  std::byte* p = t.raw();
  for (std::int64_t i = 0; i < t.numel(); ++i, p += item) std::reverse(p, p + item);
}

/// Fortran (column-major) element order to C (row-major) order.
Tensor to_c_order(const Tensor& f) {
  Tensor c(f.dtype(), f.shape());
  const Shape& shape = f.shape();
  const std::size_t item = dtype_size(f.dtype());
  // Column-major strides: the first axis is contiguous.
  Shape f_stride;
  std::int64_t stride = 1;
  for (std::int64_t d : shape) {
    f_stride.push_back(stride);
    stride *= d;
  }
  Shape index(shape.size(), 0);
  std::int64_t f_offset = 0;
  for (std::int64_t i = 0; i < f.numel(); ++i) {
    std::memcpy(c.raw() + static_cast<std::size_t>(i) * item,
                f.raw() + static_cast<std::size_t>(f_offset) * item, item);
    // Advance the row-major multi-index, last axis fastest.
    for (std::size_t k = shape.size(); k-- > 0;) {
      f_offset += f_stride[k];
      if (++index[k] < shape[k]) break;
      f_offset -= f_stride[k] * shape[k];
      index[k] = 0;
    }
  }
  return c;
}

Tensor finish(Tensor t, const npy::Header& h) {
  if (h.swap_bytes) swap_bytes(t);
  if (h.fortran_order && t.rank() > 1 && t.numel() > 0) return to_c_order(t);
  return t;
}

std::string system_reason() { return std::strerror(errno); }

std::size_t read_some(std::istream& in, std::byte* dst, std::size_t n) {
  in.read(reinterpret_cast<char*>(dst), static_cast<std::streamsize>(n));
  return static_cast<std::size_t>(in.gcount());
}

/// Reads the preamble and the header dictionary (at most kMaxHeaderBytes, so
/// nothing large is allocated before the data's size is known).
Layout read_head(std::istream& in, const std::string& source) {
  std::vector<std::byte> head(npy::kMinPreamble);
  head.resize(read_some(in, head.data(), head.size()));
  const std::size_t preamble = npy::preamble_size(head, source);
  head.resize(preamble);
  if (read_some(in, head.data() + npy::kMinPreamble, preamble - npy::kMinPreamble) !=
      preamble - npy::kMinPreamble)
    throw IoError(source + ": .npy preamble is truncated");
  const npy::Preamble p = npy::parse_preamble(head, source);
  head.resize(preamble + p.header_length);
  if (const std::size_t got = read_some(in, head.data() + preamble, p.header_length);
      got != p.header_length)
    throw IoError(source + ": .npy header is truncated (" + std::to_string(p.header_length) +
                  " bytes announced, " + std::to_string(got) + " present)");
  return decode_layout(head, p, source);
}

/// The data of a pipe or device, which has no size to check first: read in
/// blocks as it arrives (memory grows with the bytes actually sent, not with
/// the header's claim) up to one byte past what the header announces.
Tensor read_stream_data(std::istream& in, const Layout& l, const std::string& source) {
  const auto want = static_cast<std::uint64_t>(l.header.data_bytes);
  std::vector<std::byte> data;
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  while (data.size() <= want) {
    const std::size_t at = data.size();
    data.resize(at + static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, want + 1 - at)));
    const std::size_t got = read_some(in, data.data() + at, data.size() - at);
    data.resize(at + got);
    if (got == 0) break;
  }
  if (data.size() > want)
    throw IoError(source + ": .npy stream has bytes after the data of shape " +
                  to_string(l.header.shape));
  check_data_size(l, data.size(), source);
  Tensor t(l.header.dtype, l.header.shape);
  if (t.nbytes()) std::memcpy(t.raw(), data.data(), t.nbytes());
  return t;
}

}  // namespace

Tensor parse_npy(std::span<const std::byte> bytes, const std::string& source) {
  const npy::Preamble p = npy::parse_preamble(bytes, source);
  if (bytes.size() - p.header_begin < p.header_length)
    throw IoError(source + ": .npy header is truncated (" + std::to_string(p.header_length) +
                  " bytes announced, " + std::to_string(bytes.size() - p.header_begin) +
                  " present)");
  const Layout l = decode_layout(bytes, p, source);
  check_data_size(l, bytes.size() - l.data_offset, source);
  Tensor t(l.header.dtype, l.header.shape);
  if (t.nbytes()) std::memcpy(t.raw(), bytes.data() + l.data_offset, t.nbytes());
  return finish(std::move(t), l.header);
}

Tensor read_npy(const std::filesystem::path& path) {
  const std::string source = printable(path.string(), std::string::npos);  // a user's path
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  // A pipe or a device (<(...), /dev/stdin) has no size; a regular file's is
  // checked against the header before the data is read.
  const bool stream = !ec && std::filesystem::exists(status) &&
                      !std::filesystem::is_regular_file(status) &&
                      !std::filesystem::is_directory(status);
  std::uintmax_t file_size = 0;
  if (!stream) {
    file_size = std::filesystem::file_size(path, ec);
    if (ec) throw IoError("cannot read " + source + ": " + ec.message());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open " + source + ": " + system_reason());
  const Layout l = read_head(in, source);
  if (stream) return finish(read_stream_data(in, l, source), l.header);
  check_data_size(l, file_size - std::min<std::uintmax_t>(file_size, l.data_offset), source);
  Tensor t(l.header.dtype, l.header.shape);
  // The file may change under us: trust only what is actually read.
  if (read_some(in, t.raw(), t.nbytes()) != t.nbytes() ||
      in.peek() != std::ifstream::traits_type::eof())
    throw IoError(source + ": .npy file changed size while being read");
  return finish(std::move(t), l.header);
}

std::string encode_npy(const Tensor& tensor) {
  if (tensor.dtype() == DType::BFloat16) return encode_npy(tensor.cast(DType::Float32));
  std::string out = npy::encode_header(tensor.dtype(), tensor.shape());
  const std::size_t begin = out.size();
  out.resize(begin + tensor.nbytes());
  if (tensor.nbytes()) std::memcpy(out.data() + begin, tensor.raw(), tensor.nbytes());
  if constexpr (std::endian::native == std::endian::big) {
    const std::size_t item = dtype_size(tensor.dtype());
    for (std::size_t i = begin; i < out.size(); i += item)
      std::reverse(out.begin() + static_cast<std::ptrdiff_t>(i),
                   out.begin() + static_cast<std::ptrdiff_t>(i + item));
  }
  return out;
}

void write_npy(const std::filesystem::path& path, const Tensor& tensor) {
  write_file_atomically(path, encode_npy(tensor));
}

}  // namespace nodeflow
