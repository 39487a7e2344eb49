#include "core/names.hpp"

namespace nodeflow {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

std::string hex_byte(unsigned char c) { return {kHex[c >> 4], kHex[c & 15]}; }

}  // namespace

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;  // overlong
    if (c == 0xed) hi = 0x9f;  // surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;  // overlong
    if (c == 0xf4) hi = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  return n;
}

std::string name_problem(std::string_view name) {
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f)
      return "a name must not contain control characters (U+00" + hex_byte(c) + " at byte " +
             std::to_string(i) + ")";
    const std::size_t n = utf8_sequence_length(name, i);
    if (n == 0)
      return "a name must be valid UTF-8 (byte 0x" + hex_byte(c) + " at byte " +
             std::to_string(i) + ")";
    i += n;
  }
  return {};
}

}  // namespace nodeflow
