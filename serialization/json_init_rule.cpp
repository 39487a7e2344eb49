#include "serialization/detail/json_init_rule.hpp"

#include "core/errors.hpp"
#include "core/init_rules.hpp"

namespace nodeflow::json_detail {
namespace {

double read_number(const Json& init, const std::string& path, std::string_view key,
                   double fallback) {
  auto it = init.find(key);
  if (it == init.end()) return fallback;
  if (!it->is_number()) expected(child(path, key), "a number", *it);
  return it->get<double>();
}

}  // namespace

Tensor read_init_rule(const Json& init, DType dtype, const Shape& shape, const std::string& path) {
  if (!init.is_object()) expected(path, "an object {\"rule\": ..., \"seed\": ...}", init);
  InitRule rule;
  const Json* name = init.contains("rule") ? &init.at("rule") : nullptr;
  if (name == nullptr || !name->is_string() ||
      !parse_init_kind(name->get<std::string>(), rule.kind))
    expected(child(path, "rule"), "one of " + init_kind_names(), name ? *name : Json());
  switch (rule.kind) {
    case InitKind::Zeros:
    case InitKind::Ones:
      check_keys(init, path, {"rule"}, {});
      break;
    case InitKind::Constant:
      check_keys(init, path, {"rule", "value"}, {});
      break;
    case InitKind::Uniform:
      check_keys(init, path, {"rule", "seed"}, {"low", "high"});
      break;
    case InitKind::Normal:
      check_keys(init, path, {"rule", "seed"}, {"mean", "std"});
      break;
    case InitKind::HeNormal:
    case InitKind::HeUniform:
      check_keys(init, path, {"rule", "seed"}, {"mode"});
      break;
    case InitKind::GlorotNormal:
    case InitKind::GlorotUniform:
      check_keys(init, path, {"rule", "seed"}, {});
      break;
  }
  if (is_random(rule.kind)) {
    std::int64_t seed = 0;
    if (!as_int64(init.at("seed"), seed) || seed < 0)
      expected(child(path, "seed"), int64_expectation(init.at("seed"), 0), init.at("seed"));
    rule.seed = static_cast<std::uint64_t>(seed);
  }
  rule.value = read_number(init, path, "value", 0.0);
  if (std::int64_t exact = 0; init.contains("value") && as_int64(init.at("value"), exact))
    rule.integer_value = exact;
  rule.low = read_number(init, path, "low", 0.0);
  rule.high = read_number(init, path, "high", 1.0);
  rule.mean = read_number(init, path, "mean", 0.0);
  rule.std = read_number(init, path, "std", 1.0);
  if (auto it = init.find("mode"); it != init.end()) {
    if (*it == "fan_in")
      rule.mode = FanMode::FanIn;
    else if (*it == "fan_out")
      rule.mode = FanMode::FanOut;
    else
      expected(child(path, "mode"), "\"fan_in\" or \"fan_out\"", *it);
  }
  try {
    return make_initialized(rule, dtype, shape);
  } catch (const Error&) {
    rethrow_with_context(path + ": ");
  }
}

}  // namespace nodeflow::json_detail
