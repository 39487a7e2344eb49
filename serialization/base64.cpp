#include "serialization/base64.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/errors.hpp"

namespace nodeflow {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::uint8_t kInvalid = 0xff;

constexpr std::array<std::uint8_t, 256> make_table() {
  std::array<std::uint8_t, 256> t{};
  for (auto& v : t) v = kInvalid;
  for (std::size_t i = 0; i < kAlphabet.size(); ++i)
    t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::uint8_t>(i);
  return t;
}
constexpr std::array<std::uint8_t, 256> kTable = make_table();

[[noreturn]] void fail(std::size_t offset, const std::string& what) {
  throw Error("invalid base64 at character " + std::to_string(offset) + ": " + what);
}

}  // namespace

std::string encode_base64(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k)
      group = (group << 8) | (k < n ? std::to_integer<std::uint32_t>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k)
      out += k <= n ? kAlphabet[(group >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::vector<std::byte> decode_base64(std::string_view text) {
  if (text.size() % 4 != 0)
    fail(text.size(), "length " + std::to_string(text.size()) + " is not a multiple of 4");
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::vector<std::byte> out;
  out.reserve(text.size() / 4 * 3 - padding);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const std::size_t chars = last ? 4 - padding : 4;
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      std::uint8_t v = 0;
      if (k < chars) {
        v = kTable[static_cast<unsigned char>(c)];
        if (v == kInvalid) {
          if (c == '=') fail(i + k, "'=' before the end");
          fail(i + k, "character code " + std::to_string(static_cast<unsigned char>(c)) +
                          " is not in the base64 alphabet");
        }
      }
      group = (group << 6) | v;
    }
    const std::size_t bytes = chars - 1;
    // The bits below the last full byte must be zero in a canonical encoding.
    if (last && padding && (group >> (8 * (3 - bytes))) << (8 * (3 - bytes)) != group)
      fail(i + chars - 1, "non-zero bits after the last byte");
    for (std::size_t k = 0; k < bytes; ++k)
      out.push_back(static_cast<std::byte>((group >> (16 - 8 * k)) & 0xff));
  }
  return out;
}

}  // namespace nodeflow
