#include "serialization/json_text.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

#include "core/names.hpp"

namespace nodeflow::json_text {
namespace {

void append_number_text(std::string& out, const char* begin, const char* end) {
  out.append(begin, end);
  for (const char* p = begin; p != end; ++p)
    if (*p == '.' || *p == 'e') return;
  out += ".0";
}

template <typename T>
void append_shortest(std::string& out, T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  append_number_text(out, buf, r.ptr);
}

/// The reader's double -> float step for float16/bfloat16 (json_tensor.cpp):
/// rounding to odd, so that the final rounding to T is the correct one.
float to_float_round_odd(double d) {
  constexpr float kMax = std::numeric_limits<float>::max();
  if (std::fabs(d) > kMax) return d < 0 ? -kMax : kMax;
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

/// float16 / bfloat16: the shortest general-format rendering of the value
/// (exact in float) that reads back, through the reader's path, to the same
/// bits.
template <typename T>
void append_short_float(std::string& out, T v) {
  const float f = static_cast<float>(v);
  char buf[64];
  for (int precision = 1; precision <= 9; ++precision) {
    const auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::general, precision);
    double back = 0;
    std::from_chars(buf, r.ptr, back);
    const T t = static_cast<T>(to_float_round_odd(back));
    if (std::memcmp(&t, &v, sizeof(T)) == 0) {
      append_number_text(out, buf, r.ptr);
      return;
    }
  }
  append_shortest(out, f);  // 9 digits always round-trip a float, hence a T
}

}  // namespace

bool append_string(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return true;
}

void append_int(std::string& out, std::int64_t v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_float(std::string& out, float v) { append_shortest(out, v); }
void append_float(std::string& out, double v) { append_shortest(out, v); }
void append_float(std::string& out, half v) { append_short_float(out, v); }
void append_float(std::string& out, bfloat16 v) { append_short_float(out, v); }

}  // namespace nodeflow::json_text
