#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/errors.hpp"
#include "serialization/base64.hpp"
#include "serialization/detail/json_parts.hpp"

namespace nodeflow::json_detail {
namespace {

// Conversions of JSON numbers to float16/bfloat16 go through float32 with
// round-to-odd: float32 keeps more than two extra bits over both, so the final
// round-to-nearest-even is the correct rounding of the original number (a plain
// double -> float -> half chain can round twice and land on the wrong side).

float double_to_float_round_odd(double d) {
  constexpr float kMax = std::numeric_limits<float>::max();  // odd: truncation of anything larger
  if (std::fabs(d) > kMax) return d < 0 ? -kMax : kMax;
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

float integer_to_float_round_odd(bool negative, std::uint64_t magnitude) {
  const int width = std::bit_width(magnitude);
  float f = 0;
  if (width <= std::numeric_limits<float>::digits) {
    f = static_cast<float>(magnitude);
  } else {
    const int shift = width - std::numeric_limits<float>::digits;
    std::uint64_t q = magnitude >> shift;
    if (magnitude & ((std::uint64_t{1} << shift) - 1)) q |= 1;
    f = std::ldexp(static_cast<float>(q), shift);
  }
  return negative ? -f : f;
}

/// The JSON number `v` as float32 rounded to odd (see above); false if not a number.
bool number_round_odd(const Json& v, float& out) {
  if (v.is_number_unsigned()) {
    out = integer_to_float_round_odd(false, v.get<std::uint64_t>());
  } else if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    const std::uint64_t mag = i < 0 ? 0 - static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(i);
    out = integer_to_float_round_odd(i < 0, mag);
  } else if (v.is_number_float() && std::isfinite(v.get<double>())) {
    out = double_to_float_round_odd(v.get<double>());
  } else {
    return false;
  }
  return true;
}

std::string range_words(DType dtype) {
  return visit_dtype(dtype, [&](auto tag) -> std::string {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>)
      return "an integer in [" + std::to_string(std::numeric_limits<T>::lowest()) + ", " +
             std::to_string(std::numeric_limits<T>::max()) + "]";
    else
      return "a number within the " + std::string(dtype_name(dtype)) + " range";
  });
}

/// Converts one JSON number to T, rounding to nearest; false if it is not a
/// number of the right kind or is out of T's range.
template <typename T> bool to_element(const Json& v, T& out) {
  if constexpr (std::is_integral_v<T>) {
    std::int64_t i = 0;
    if (!as_int64(v, i) || i < std::numeric_limits<T>::lowest() || i > std::numeric_limits<T>::max())
      return false;
    out = static_cast<T>(i);
    return true;
  } else if constexpr (std::is_same_v<T, double>) {
    if (!v.is_number()) return false;
    out = v.get<double>();
    return std::isfinite(out);
  } else if constexpr (std::is_same_v<T, float>) {
    if (v.is_number_unsigned()) {
      out = static_cast<float>(v.get<std::uint64_t>());
      return true;
    }
    if (v.is_number_integer()) {
      out = static_cast<float>(v.get<std::int64_t>());
      return true;
    }
    if (!v.is_number_float()) return false;
    const double d = v.get<double>();
    // Half-way between FLT_MAX and 2^128 is where rounding reaches infinity.
    const double limit = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
    if (!(std::fabs(d) < limit)) return false;
    constexpr float kMax = std::numeric_limits<float>::max();
    out = std::fabs(d) <= kMax ? static_cast<float>(d) : (d < 0 ? -kMax : kMax);
    return true;
  } else {  // half, bfloat16
    float f = 0;
    if (!number_round_odd(v, f)) return false;
    out = T(f);
    return std::isfinite(static_cast<float>(out));
  }
}

void check_list_size(const Json& data, const Shape& shape, std::int64_t numel,
                     const std::string& path) {
  if (data.size() != static_cast<std::size_t>(numel))
    throw InvalidGraph(path + ": expected " + std::to_string(numel) + " values for shape " +
                       to_string(shape) + ", got " + std::to_string(data.size()));
}

Tensor from_list(const Json& data, DType dtype, const Shape& shape, const std::string& path) {
  Tensor t(dtype, shape);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* dst = t.data<T>();
    for (std::size_t i = 0; i < data.size(); ++i)
      if (!to_element(data[i], dst[i]))
        expected(path + "[" + std::to_string(i) + "]", range_words(dtype), data[i]);
  });
  return t;
}

// numel * size was checked against int64 overflow by the caller.
std::string base64_needed(DType dtype, const Shape& shape, std::int64_t numel) {
  const auto bytes = static_cast<std::uint64_t>(numel) * dtype_size(dtype);
  return std::to_string(bytes) + " bytes: " + std::to_string(numel) + " " +
         std::string(dtype_name(dtype)) + " values for shape " + to_string(shape);
}

void check_base64_size(const Json& data, DType dtype, const Shape& shape, std::int64_t numel,
                       const std::string& path) {
  check_keys(data, path, {"base64"}, {});
  const std::string where = child(path, "base64");
  const Json& text = data.at("base64");
  if (!text.is_string()) expected(where, "a base64 string", text);
  const auto bytes = static_cast<std::uint64_t>(numel) * dtype_size(dtype);
  const std::uint64_t chars = (bytes + 2) / 3 * 4;
  if (text.get_ref<const std::string&>().size() != chars)
    throw InvalidGraph(where + ": expected " + std::to_string(chars) + " base64 characters (" +
                       base64_needed(dtype, shape, numel) + "), got " +
                       std::to_string(text.get_ref<const std::string&>().size()));
}

Tensor from_base64(const Json& data, DType dtype, const Shape& shape, std::int64_t numel,
                   const std::string& path) {
  const std::string where = child(path, "base64");
  const std::string& s = data.at("base64").get_ref<const std::string&>();
  const auto bytes = static_cast<std::uint64_t>(numel) * dtype_size(dtype);
  const std::string needed = base64_needed(dtype, shape, numel);
  std::vector<std::byte> raw;
  try {
    raw = decode_base64(s);
  } catch (const Error& e) {
    throw InvalidGraph(where + ": " + e.what());
  }
  if (raw.size() != bytes)
    throw InvalidGraph(where + ": decodes to " + std::to_string(raw.size()) + " bytes, expected " +
                       needed);
  Tensor t(dtype, shape);
  if (!raw.empty()) std::memcpy(t.raw(), raw.data(), raw.size());
  if constexpr (std::endian::native == std::endian::big) {
    const std::size_t item = dtype_size(dtype);
    for (std::size_t i = 0; i < raw.size(); i += item) std::reverse(t.raw() + i, t.raw() + i + item);
  }
  return t;
}

}  // namespace

void check_tensor_data(const Json& data, DType dtype, const Shape& shape, const std::string& path) {
  const std::int64_t numel = element_count(shape, path);
  if (data.is_array()) return check_list_size(data, shape, numel, path);
  if (data.is_object()) return check_base64_size(data, dtype, shape, numel, path);
  expected(path, "a list of numbers or {\"base64\": \"...\"}", data);
}

Tensor read_tensor_data(const Json& data, DType dtype, const Shape& shape, const std::string& path) {
  check_tensor_data(data, dtype, shape, path);
  if (data.is_array()) return from_list(data, dtype, shape, path);
  return from_base64(data, dtype, shape, element_count(shape, path), path);
}

}  // namespace nodeflow::json_detail
