#include "serialization/detail/npy_header.hpp"

#include <array>
#include <bit>
#include <limits>
#include <optional>

#include "core/errors.hpp"

namespace nodeflow::npy {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kAlignment = 64;
constexpr std::size_t kMaxRank = 64;  // numpy's NPY_MAXDIMS

std::uint8_t byte_at(std::span<const std::byte> b, std::size_t i) {
  return std::to_integer<std::uint8_t>(b[i]);
}

/// Header text is attacker-controlled: show it printable and bounded.
std::string printable(std::string_view s) { return nodeflow::printable(s, 60, true); }

struct DescrInfo {
  std::string_view code;  // without the byte-order character
  DType dtype;
};
constexpr std::array<DescrInfo, 6> kDescrs{{{"f4", DType::Float32},
                                            {"f8", DType::Float64},
                                            {"f2", DType::Float16},
                                            {"i8", DType::Int64},
                                            {"i1", DType::Int8},
                                            {"u1", DType::UInt8}}};

/// A recursive-descent reader for the one dictionary literal numpy writes.
/// Everything it accepts is ASCII; anything else is an error with its offset.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Header parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<Shape> shape;
    skip_space();
    expect('{');
    skip_space();
    while (!at('}')) {
      const std::size_t key_pos = pos_;
      const std::string key = parse_string("a quoted key");
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (descr) fail_at(key_pos, "key 'descr' appears twice");
        if (at('[')) fail("structured dtypes (a list as 'descr') are not supported");
        descr = parse_string("'descr' as a quoted dtype string");
      } else if (key == "fortran_order") {
        if (fortran) fail_at(key_pos, "key 'fortran_order' appears twice");
        fortran = parse_bool();
      } else if (key == "shape") {
        if (shape) fail_at(key_pos, "key 'shape' appears twice");
        shape = parse_shape();
      } else {
        fail_at(key_pos, "unknown key '" + printable(key) + "' (expected descr, fortran_order, shape)");
      }
      skip_space();
      if (at(',')) {
        ++pos_;
        skip_space();
      } else if (!at('}')) {
        fail("expected ',' or '}'");
      }
    }
    ++pos_;
    for (; pos_ < text_.size(); ++pos_)
      if (text_[pos_] != ' ' && text_[pos_] != '\n' && text_[pos_] != '\t' && text_[pos_] != '\r')
        fail("unexpected text after the dictionary");
    if (!descr) fail_at(0, "key 'descr' is missing");
    if (!fortran) fail_at(0, "key 'fortran_order' is missing");
    if (!shape) fail_at(0, "key 'shape' is missing");

    Header h;
    h.fortran_order = *fortran;
    h.shape = std::move(*shape);
    decode_descr(*descr, h);
    h.data_bytes = byte_count(h);
    return h;
  }

 private:
  [[noreturn]] void fail_at(std::size_t pos, const std::string& what) const {
    throw IoError(source_ + ": malformed .npy header: " + what + " at offset " +
                  std::to_string(pos) + " of '" + printable(text_) + "'");
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void expect(char c) {
    if (!at(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }

  std::string parse_string(const std::string& what) {
    if (!at('\'') && !at('"')) fail("expected " + what);
    const char quote = text_[pos_++];
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '\\' || c < 0x20 || c >= 0x7f) fail("unsupported character in a string");
      ++pos_;
    }
    if (pos_ == text_.size()) fail("unterminated string");
    return std::string(text_.substr(begin, pos_++ - begin));
  }

  bool parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False");
  }

  std::int64_t parse_dim() {
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9')
      fail("'shape' must be a tuple of non-negative integers");
    std::int64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_] - '0';
      if (v > (std::numeric_limits<std::int64_t>::max() - digit) / 10)
        fail("a 'shape' dimension does not fit int64");
      v = v * 10 + digit;
      ++pos_;
    }
    if (at('L')) ++pos_;  // Python 2 long literal, as old numpy wrote them
    return v;
  }

  /// "()", "(n,)", "(a, b)", "(a, b,)": a Python tuple, so one element needs its comma.
  Shape parse_shape() {
    expect('(');
    skip_space();
    Shape shape;
    bool trailing_comma = false;
    while (!at(')')) {
      if (shape.size() == kMaxRank) fail("'shape' has more than 64 dimensions");
      shape.push_back(parse_dim());
      skip_space();
      trailing_comma = at(',');
      if (trailing_comma) {
        ++pos_;
        skip_space();
      } else if (!at(')')) {
        fail("expected ',' or ')' in 'shape'");
      }
    }
    if (shape.size() == 1 && !trailing_comma) fail("'shape' (n) is not a tuple; write (n,)");
    ++pos_;
    return shape;
  }

  void decode_descr(const std::string& descr, Header& h) const {
    const bool little = std::endian::native == std::endian::little;
    if (descr.size() == 3) {
      const char order = descr[0];
      const std::string_view code = std::string_view(descr).substr(1);
      for (const auto& d : kDescrs) {
        if (d.code != code) continue;
        const bool one_byte = dtype_size(d.dtype) == 1;
        if (order == '<' || order == '>') {
          h.dtype = d.dtype;
          h.swap_bytes = !one_byte && ((order == '<') != little);
          return;
        }
        if (order == '|' || order == '=') {  // numpy reads both as the machine's order
          h.dtype = d.dtype;
          return;
        }
      }
    }
    throw IoError(source_ + ": .npy dtype '" + printable(descr) +
                  "' is not supported (supported: <f4, <f8, <f2, |i1, |u1, <i8, also big-endian; "
                  "bfloat16 travels as <f4)");
  }

  std::int64_t byte_count(const Header& h) const {
    std::int64_t n = 1;
    for (std::int64_t d : h.shape) {
      if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
        throw IoError(source_ + ": .npy shape " + to_string(h.shape) +
                      " has more elements than int64 can count");
      n *= d;
    }
    const auto item = static_cast<std::int64_t>(dtype_size(h.dtype));
    if (n > std::numeric_limits<std::int64_t>::max() / item)
      throw IoError(source_ + ": .npy shape " + to_string(h.shape) + " of " +
                    std::string(dtype_name(h.dtype)) + " has more bytes than int64 can count");
    return n * item;
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

}  // namespace

std::size_t preamble_size(std::span<const std::byte> first, const std::string& source) {
  if (first.size() < kMinPreamble)
    throw IoError(source + ": not a .npy file (" + std::to_string(first.size()) +
                  " bytes, shorter than the 10-byte preamble)");
  for (std::size_t i = 0; i < kMagic.size(); ++i)
    if (byte_at(first, i) != static_cast<unsigned char>(kMagic[i]))
      throw IoError(source + ": not a .npy file (it does not start with \\x93NUMPY)");
  const int major = byte_at(first, 6);
  const int minor = byte_at(first, 7);
  // docs/graph-format.md reads format 1.0 and 2.0 only (3.0's UTF-8 header is not
  // part of the contract; numpy writes it only for non-Latin-1 field names).
  if (major < 1 || major > 2 || minor != 0)
    throw IoError(source + ": .npy format version " + std::to_string(major) + "." +
                  std::to_string(minor) + " is not supported (1.0 and 2.0 are)");
  return major == 1 ? 10 : 12;
}

Preamble parse_preamble(std::span<const std::byte> bytes, const std::string& source) {
  Preamble p;
  p.header_begin = preamble_size(bytes, source);
  if (bytes.size() < p.header_begin)
    throw IoError(source + ": .npy preamble is truncated");
  p.major = byte_at(bytes, 6);
  std::size_t len = 0;
  for (std::size_t i = p.header_begin; i-- > 8;) len = (len << 8) | byte_at(bytes, i);
  if (len > kMaxHeaderBytes)
    throw IoError(source + ": .npy header length " + std::to_string(len) +
                  " exceeds the limit of " + std::to_string(kMaxHeaderBytes) + " bytes");
  p.header_length = len;
  return p;
}

Header parse_header(std::string_view text, const std::string& source) {
  return HeaderParser(text, source).parse();
}

std::string_view descr_of(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Float16: return "<f2";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::Int64: return "<i8";
    case DType::BFloat16: throw UnsupportedDType("bfloat16 has no .npy dtype (it is written as <f4)");
    case DType::Int32: break;
  }
  throw UnsupportedDType("int32 is internal to nodeflow (MaxPool's training state) and has no .npy form");
}

std::string encode_header(DType dtype, const Shape& shape) {
  std::string dict = "{'descr': '" + std::string(descr_of(dtype)) +
                     "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }";

  // Version 1.0 holds a 16-bit length; only a very long shape needs 2.0.
  const bool v1 = dict.size() + 1 + 10 + kAlignment <= 0xffff;
  const std::size_t preamble = v1 ? 10 : 12;
  const std::size_t unpadded = preamble + dict.size() + 1;
  const std::size_t total = (unpadded + kAlignment - 1) / kAlignment * kAlignment;
  dict.append(total - unpadded, ' ');
  dict += '\n';

  std::string out(kMagic);
  out += static_cast<char>(v1 ? 1 : 2);
  out += '\0';
  std::size_t len = dict.size();
  for (std::size_t i = 0; i < preamble - 8; ++i, len >>= 8) out += static_cast<char>(len & 0xff);
  return out + dict;
}

}  // namespace nodeflow::npy
