#pragma once
// Node attributes (ONNX names and kinds) and their declarative specs: the one
// source of an attribute's kind, default, range, allowed values, list length
// and opset availability (docs/graph-format.md, "Attributes").
#include <cstddef>
#include <cstdint>
#include <functional>
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

/// One end of a Float range.
struct FloatBound {
  double value = 0;
  bool open = false;  ///< the end itself is excluded (Dropout's ratio < 1)
};

/// A list whose length follows another list of the node (pooling's strides
/// follow kernel_shape) or, with `of` empty, the spatial rank of the input
/// (input rank - 2; known at shape inference, not when the graph is loaded).
struct ListLength {
  std::string of;          ///< the attribute followed, e.g. "kernel_shape"; "": the input
  std::size_t factor = 1;  ///< values per entry of `of` (pads: 2, begin and end)
  std::string what;        ///< the rule in words: "one per spatial axis"
};

/// Declaration of one attribute of an op. validate_attributes enforces every
/// rule below and is the only place they are enforced, whether a graph comes
/// from JSON or code; with_defaults fills default_value in.
struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::Int;
  bool required = false;
  /// Filled into the node's attributes when absent. Absent: no default (the
  /// attribute is required, or optional and read as std::optional).
  std::optional<AttrValue> default_value;
  std::optional<std::int64_t> min;  ///< Int/Ints: smallest allowed value
  std::optional<std::int64_t> max;  ///< Int/Ints: largest allowed value
  /// Int/Ints: largest value this implementation takes (sizes stay inside
  /// int64); refused as "value 1099511627776 is too large (at most 2147483647)",
  /// not part of the ONNX range `describe` shows.
  std::optional<std::int64_t> limit;
  std::optional<FloatBound> min_float;  ///< Float: smallest allowed value
  std::optional<FloatBound> max_float;  ///< Float: largest allowed value
  std::vector<std::int64_t> allowed_ints;  ///< Int: allowed values (empty: any in range)
  std::vector<std::string> allowed;        ///< String: allowed values (empty: any)
  std::size_t min_length = 0;              ///< lists: fewest values
  std::optional<ListLength> length;        ///< lists: length tied to another list or the input
  /// First ONNX opset whose version of the op has the attribute (an importer
  /// refuses it in an older model: "added in opset 19").
  int since_version = 1;
  std::string doc;  ///< one line for documentation and editors
};

/// The specs ops declare most: a flag (Int 0 or 1, default 0) and a Float
/// with a default.
AttrSpec flag_spec(std::string name, std::string doc);
AttrSpec float_spec(std::string name, double default_value, std::string doc);

/// A rule over several attributes that an AttrSpec cannot state (pooling's
/// "a pad is below the kernel extent"); sees the attributes with defaults filled.
/// Throws InvalidAttribute("attributes.<name>: ...").
using AttrCheck = std::function<void(const Attributes&)>;

/// "a list of positive integers", "an integer 0 or 1", "a number in [0, 1)", ...
std::string describe(const AttrSpec& spec);
/// Compact rendering for messages: 3, 2.5, "SAME_UPPER", [2, 0].
std::string to_string(const AttrValue& v);
/// The spec named `name`, or nullptr.
const AttrSpec* find_spec(const std::vector<AttrSpec>& specs, const std::string& name);
/// "a, b, c": the lists of messages ("known: ...", "one of ...").
std::string join(const std::vector<std::string>& items);

/// Checks kinds, required attributes, ranges, allowed values, list lengths
/// (those tied to another attribute; the input-rank ones are the op's shape
/// inference's) and limits; refuses unknown names. Throws
/// InvalidAttribute("attributes.<name>: expected ..., got ...") or
/// ("attributes.<name>: unknown attribute '<name>' for <op> (known: ...)").
void validate_attributes(const std::string& op_type, const std::vector<AttrSpec>& specs,
                         const Attributes& attrs);

/// `attrs` with the default_value of every absent attribute that has one.
Attributes with_defaults(const std::vector<AttrSpec>& specs, Attributes attrs);

/// The one attribute check of a node: validate_attributes, then `check`
/// (the op's multi-attribute rules) on the attributes with defaults filled;
/// returns those. Nodes are built from what it returns (NodeConfig).
Attributes checked_attributes(const std::string& op_type, const std::vector<AttrSpec>& specs,
                              const Attributes& given, const AttrCheck& check = {});

/// Typed reads of checked attributes (checked_attributes): an attribute with a
/// default is always present. Throw InvalidAttribute when it is absent or of
/// another kind (a node built from unchecked attributes).
std::int64_t attr_int(const Attributes& a, const std::string& name);
double attr_float(const Attributes& a, const std::string& name);
const std::string& attr_string(const Attributes& a, const std::string& name);
const std::vector<std::int64_t>& attr_ints(const Attributes& a, const std::string& name);
/// Attributes without a default: nullopt when absent.
std::optional<std::int64_t> optional_int(const Attributes& a, const std::string& name);
std::optional<double> optional_float(const Attributes& a, const std::string& name);
std::optional<std::vector<std::int64_t>> optional_ints(const Attributes& a, const std::string& name);

}  // namespace nodeflow
