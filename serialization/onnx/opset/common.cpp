#include "serialization/onnx/detail/opset_common.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace nodeflow::onnx_import::detail {

OpVersion version(int since, std::vector<AttrInfo> attributes, std::size_t max_inputs,
                  std::size_t max_outputs, std::vector<Step> steps) {
  return {since, std::move(attributes), max_inputs, max_outputs, std::move(steps), {}};
}

OpVersion refused_version(int since, std::vector<AttrInfo> attributes, std::size_t max_inputs,
                          std::size_t max_outputs, std::string why) {
  return {since, std::move(attributes), max_inputs, max_outputs, {}, std::move(why)};
}

Custom required(const std::string& attribute) {
  return {[attribute](Upgrade& up) {
            if (up.attribute(attribute) == nullptr)
              up.refuse_attribute("attribute '" + attribute + "' is required at opset " +
                                  std::to_string(up.opset()));
          },
          "'" + attribute + "' is required"};
}

Custom float_to_int(const std::string& attribute, const std::string& why) {
  return {[attribute, why](Upgrade& up) {
            const AttrValue* v = up.attribute(attribute);
            if (v == nullptr) return;
            const double f = std::get<double>(*v);
            // Integral and inside int64 (2^63 is the first double past it).
            if (!(std::floor(f) == f && std::fabs(f) < 9.2233720368547758e18))
              up.refuse_attribute("attribute '" + attribute + "' = " + to_string(*v) +
                                  " is not supported: " + why);
            up.node().attributes[attribute] = static_cast<std::int64_t>(f);
          },
          "an integral FLOAT '" + attribute + "' becomes an INT"};
}

Custom rename(const std::string& from, const std::string& to) {
  return {[from, to](Upgrade& up) {
            auto& attrs = up.node().attributes;
            auto it = attrs.find(from);
            if (it == attrs.end()) return;
            AttrValue v = std::move(it->second);
            attrs.erase(it);
            attrs[to] = std::move(v);
          },
          "'" + from + "' is renamed '" + to + "'"};
}

Custom no_outputs_from(std::size_t first, const std::string& what, const std::string& why) {
  return {[first, what, why](Upgrade& up) {
            const auto& out = up.node().outputs;
            for (std::size_t k = first; k < out.size(); ++k)
              if (!out[k].empty())
                up.refuse("output " + std::to_string(k) + " (" + what + ") is not supported: " + why);
          },
          "refuses " + what};
}

std::optional<std::vector<std::int64_t>> known_ints(const Upgrade& up, std::size_t index) {
  const std::optional<KnownTensor> k = up.known_input(index);
  if (!k || k->value.empty()) return std::nullopt;
  const Tensor& t = k->value;
  if (t.dtype() == DType::Int64) {
    auto v = t.values<std::int64_t>();
    return std::vector<std::int64_t>(v.begin(), v.end());
  }
  if (is_float(t.dtype())) {
    const Tensor d = t.cast(DType::Float64);
    std::vector<std::int64_t> out;
    for (double x : d.values<double>()) {
      if (!(std::floor(x) == x && std::fabs(x) < 9.2233720368547758e18)) return std::nullopt;
      out.push_back(static_cast<std::int64_t>(x));
    }
    return out;
  }
  return std::nullopt;
}

std::optional<std::size_t> known_rank(const Upgrade& up, std::size_t index) {
  const std::optional<KnownTensor> k = up.known_input(index);
  if (!k) return std::nullopt;
  return k->info.shape.size();
}

}  // namespace nodeflow::onnx_import::detail
