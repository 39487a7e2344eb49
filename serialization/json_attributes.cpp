#include <cmath>

#include "core/errors.hpp"
#include "serialization/detail/json_parts.hpp"

namespace nodeflow::json_detail {
namespace {

/// A JSON integer, or true/false as 1/0 (ONNX booleans are ints; graph-format.md).
bool as_int_or_bool(const Json& v, std::int64_t& out) {
  if (v.is_boolean()) {
    out = v.get<bool>() ? 1 : 0;
    return true;
  }
  return as_int64(v, out);
}

/// Integers and floats alike ("a float may be written as an integer").
bool as_double(const Json& v, double& out) {
  if (!v.is_number()) return false;
  out = v.get<double>();
  return std::isfinite(out);
}

template <typename T, typename Convert>
bool as_list(const Json& v, std::vector<T>& out, Convert convert) {
  if (!v.is_array()) return false;
  out.reserve(v.size());
  for (const Json& item : v) {
    T x{};
    if (!convert(item, x)) return false;
    out.push_back(std::move(x));
  }
  return true;
}

bool as_string(const Json& v, std::string& out) {
  if (!v.is_string()) return false;
  out = v.get<std::string>();
  return true;
}

/// The AttrValue of `v` for `kind`, or nullopt when the JSON type does not fit.
std::optional<AttrValue> convert(const Json& v, AttrKind kind) {
  switch (kind) {
    case AttrKind::Int:
      if (std::int64_t i = 0; as_int_or_bool(v, i)) return AttrValue(i);
      break;
    case AttrKind::Float:
      if (double d = 0; as_double(v, d)) return AttrValue(d);
      break;
    case AttrKind::String:
      if (std::string s; as_string(v, s)) return AttrValue(std::move(s));
      break;
    case AttrKind::Ints:
      if (std::vector<std::int64_t> is; as_list(v, is, as_int64)) return AttrValue(std::move(is));
      break;
    case AttrKind::Floats:
      if (std::vector<double> ds; as_list(v, ds, as_double)) return AttrValue(std::move(ds));
      break;
    case AttrKind::Strings:
      if (std::vector<std::string> ss; as_list(v, ss, as_string)) return AttrValue(std::move(ss));
      break;
  }
  return std::nullopt;
}

}  // namespace

Attributes read_attributes(const Json& attrs, const OpSchema& schema, const std::string& path) {
  if (!attrs.is_object()) expected(child(path, "attributes"), "an object of attributes", attrs);
  Attributes out;
  for (const auto& [name, value] : attrs.items()) {
    const AttrSpec* spec = find_spec(schema.attributes, name);
    if (!spec) {
      // validate_attributes owns the wording of an unknown-attribute error.
      try {
        validate_attributes(schema.op_type, schema.attributes, Attributes{{name, std::int64_t{0}}});
      } catch (const Error&) {
        rethrow_with_context(path + ".");
      }
      throw InvalidAttribute(child(child(path, "attributes"), name) + ": unknown attribute");
    }
    std::optional<AttrValue> converted = convert(value, spec->kind);
    if (!converted)
      throw InvalidAttribute(child(child(path, "attributes"), name) + ": expected " +
                             describe(*spec) + ", got " + render(value));
    out.emplace(name, std::move(*converted));
  }
  return out;
}

}  // namespace nodeflow::json_detail
