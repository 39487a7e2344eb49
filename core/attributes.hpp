#pragma once
// Node attributes (ONNX names and kinds) and their declarative specs.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace nodeflow {

/// One attribute value; the alternatives mirror ONNX's INT, FLOAT, STRING, INTS,
/// FLOATS, STRINGS. Booleans (ceil_mode, count_include_pad) are ints 0/1.
using AttrValue = std::variant<std::int64_t, double, std::string, std::vector<std::int64_t>,
                               std::vector<double>, std::vector<std::string>>;
using Attributes = std::map<std::string, AttrValue>;

enum class AttrKind { Int, Float, String, Ints, Floats, Strings };

/// Declaration of one attribute of an op: kind, default and allowed values.
/// Validation against it (validate_attributes) is the single place where the
/// kind and range rules are enforced, whether a graph comes from JSON or code.
struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::Int;
  bool required = false;
  std::optional<AttrValue> default_value;  ///< absent: no default (required or optional)
  std::optional<std::int64_t> min;          ///< Int/Ints: smallest allowed value
  std::optional<std::int64_t> max;          ///< Int/Ints: largest allowed value
  std::vector<std::string> allowed;         ///< String: allowed values (empty: any)
  std::string doc;
};

/// "a list of positive integers", "an integer 0 or 1", "one of NOTSET, VALID", ...
std::string describe(const AttrSpec& spec);
/// Compact rendering for messages: 3, 2.5, "SAME_UPPER", [2, 0].
std::string to_string(const AttrValue& v);

/// Checks kinds, required attributes, ranges and allowed strings; refuses unknown
/// names. Throws InvalidAttribute("attributes.<name>: expected ..., got ...") or
/// ("attributes.<name>: unknown attribute '<name>' for <op> (known: ...)").
void validate_attributes(const std::string& op_type, const std::vector<AttrSpec>& specs,
                         const Attributes& attrs);

/// Typed access with the spec's default. Throw InvalidAttribute if the kind differs.
std::int64_t get_int(const Attributes& a, const std::string& name, std::int64_t fallback);
double get_float(const Attributes& a, const std::string& name, double fallback);
std::string get_string(const Attributes& a, const std::string& name, const std::string& fallback);
/// Empty vector when absent.
std::vector<std::int64_t> get_ints(const Attributes& a, const std::string& name);

}  // namespace nodeflow
