#include "core/init_rules.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "core/errors.hpp"
#include "core/number_text.hpp"
#include "core/random.hpp"

namespace nodeflow {
namespace {

constexpr std::array<std::pair<InitKind, std::string_view>, 9> kNames{{
    {InitKind::Zeros, "zeros"},
    {InitKind::Ones, "ones"},
    {InitKind::Constant, "constant"},
    {InitKind::Uniform, "uniform"},
    {InitKind::Normal, "normal"},
    {InitKind::HeNormal, "he_normal"},
    {InitKind::HeUniform, "he_uniform"},
    {InitKind::GlorotNormal, "glorot_normal"},
    {InitKind::GlorotUniform, "glorot_uniform"},
}};

void require_finite(double v, const char* what) {
  if (!std::isfinite(v))
    throw InvalidAttribute(std::string(what) + " must be finite, got " + number_text(v));
}

/// v as T, refused (rather than wrapped, saturated or made infinite; a double
/// beyond an integer type's range does not even convert defined) unless T
/// holds it: integers exactly, floats as a finite value.
template <typename T> T element(double v, const std::string& rule) {
  T out{};
  bool ok = false;
  if constexpr (std::is_integral_v<T>) {
    // [lowest, 2^digits): both ends exact in a double for every integer dtype.
    ok = v == std::floor(v) && v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
         v < std::ldexp(1.0, std::numeric_limits<T>::digits);
    if (ok) out = static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, double>) {
    ok = std::isfinite(v);
    out = v;
  } else {
    ok = std::fabs(v) <= static_cast<double>(std::numeric_limits<float>::max());
    if (ok) out = T(static_cast<float>(v));
    ok = ok && std::isfinite(static_cast<float>(out));
  }
  if (!ok) {
    const std::string range =
        std::is_integral_v<T> ? "integers in [" + std::to_string(std::numeric_limits<T>::lowest()) +
                                    ", " + std::to_string(std::numeric_limits<T>::max()) + "]"
                              : "finite values";
    throw InvalidAttribute("init rule '" + rule + "' gives " + number_text(v) + ", which " +
                           std::string(dtype_name(dtype_of_v<T>)) + " cannot hold (" + range + ")");
  }
  return out;
}

/// An integer value as T: exact for the integer dtypes, else through element().
template <typename T> T element_of_integer(std::int64_t v, const std::string& rule) {
  if constexpr (std::is_integral_v<T>) {
    if (std::in_range<T>(v)) return static_cast<T>(v);
    throw InvalidAttribute("init rule '" + rule + "' gives " + std::to_string(v) + ", which " +
                           std::string(dtype_name(dtype_of_v<T>)) + " cannot hold (integers in [" +
                           std::to_string(std::numeric_limits<T>::lowest()) + ", " +
                           std::to_string(std::numeric_limits<T>::max()) + "])");
  } else {
    return element<T>(static_cast<double>(v), rule);
  }
}

template <typename T, typename Draw>
void fill(Tensor& t, const std::string& rule, Draw&& draw) {
  for (T& x : t.values<T>()) x = element<T>(draw(), rule);
}

}  // namespace

bool parse_init_kind(std::string_view name, InitKind& out) {
  for (const auto& [kind, text] : kNames)
    if (text == name) {
      out = kind;
      return true;
    }
  return false;
}

std::string_view init_kind_name(InitKind kind) {
  for (const auto& [k, text] : kNames)
    if (k == kind) return text;
  return "zeros";
}

std::string init_kind_names() {
  std::string all;
  for (const auto& [kind, text] : kNames) all += (all.empty() ? "" : ", ") + std::string(text);
  return all;
}

bool is_random(InitKind kind) {
  return kind != InitKind::Zeros && kind != InitKind::Ones && kind != InitKind::Constant;
}

Fans compute_fans(const Shape& shape) {
  if (shape.size() < 2)
    throw ShapeMismatch(
        "fan-based initialisation needs a tensor of rank >= 2 ([out, in, ...]), got " +
        to_string(shape));
  std::int64_t receptive = 1;
  for (std::size_t a = 2; a < shape.size(); ++a) receptive *= shape[a];
  return {shape[1] * receptive, shape[0] * receptive};
}

Tensor make_initialized(const InitRule& rule, DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  if (is_random(rule.kind) && !is_float(dtype))
    throw UnsupportedDType("init rule '" + std::string(init_kind_name(rule.kind)) +
                           "' draws random floats and cannot fill a " +
                           std::string(dtype_name(dtype)) + " tensor");
  // The draw for every random rule: a location-scale transform of one stream.
  double scale = 0.0, shift = 0.0;
  bool gaussian = false;
  switch (rule.kind) {
    case InitKind::Zeros:
      return t;
    case InitKind::Ones:
    case InitKind::Constant: {
      const double v = rule.kind == InitKind::Ones ? 1.0 : rule.value;
      require_finite(v, "value");
      const std::string rule_name(init_kind_name(rule.kind));
      visit_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        if (rule.kind == InitKind::Constant && rule.integer_value) {
          const T x = element_of_integer<T>(*rule.integer_value, rule_name);
          for (T& e : t.values<T>()) e = x;
        } else {
          fill<T>(t, rule_name, [&] { return v; });
        }
      });
      return t;
    }
    case InitKind::Uniform:
      require_finite(rule.low, "low");
      require_finite(rule.high, "high");
      if (rule.low > rule.high)
        throw InvalidAttribute("low must not exceed high, got " + number_text(rule.low) + " > " +
                               number_text(rule.high));
      scale = rule.high - rule.low;
      shift = rule.low;
      break;
    case InitKind::Normal:
      require_finite(rule.mean, "mean");
      require_finite(rule.std, "std");
      if (rule.std < 0) throw InvalidAttribute("std must be >= 0, got " + number_text(rule.std));
      gaussian = true;
      scale = rule.std;
      shift = rule.mean;
      break;
    case InitKind::HeNormal:
    case InitKind::HeUniform:
    case InitKind::GlorotNormal:
    case InitKind::GlorotUniform: {
      const Fans fans = compute_fans(shape);
      const bool he = rule.kind == InitKind::HeNormal || rule.kind == InitKind::HeUniform;
      const double fan =
          he ? static_cast<double>(rule.mode == FanMode::FanIn ? fans.fan_in : fans.fan_out)
             : static_cast<double>(fans.fan_in + fans.fan_out) / 2.0;
      if (fan <= 0)
        throw ShapeMismatch("fan-based initialisation of shape " + to_string(shape) +
                            " has a zero fan");
      // He: variance 2 / fan; Glorot: variance 2 / (fan_in + fan_out) = 1 / mean fan.
      const double variance = (he ? 2.0 : 1.0) / fan;
      gaussian = rule.kind == InitKind::HeNormal || rule.kind == InitKind::GlorotNormal;
      const double bound = std::sqrt(3.0 * variance);  // U(-b, b) has variance b^2 / 3
      scale = gaussian ? std::sqrt(variance) : 2.0 * bound;
      shift = gaussian ? 0.0 : -bound;
      break;
    }
  }
  Rng rng(rule.seed);
  const std::string rule_name(init_kind_name(rule.kind));
  visit_float_dtype(dtype, [&](auto tag) {
    fill<decltype(tag)>(t, rule_name,
                        [&] { return shift + scale * (gaussian ? rng.normal() : rng.uniform()); });
  });
  return t;
}

}  // namespace nodeflow
