#pragma once
// The opset table's types (serialization/onnx/opset_history.hpp): one
// OpHistory per op, one OpVersion per ONNX version of it, each with the
// attributes it has and the steps that turn its node into the opset-22 form.
// The tables live in serialization/onnx/opset/<family>.cpp.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/attributes.hpp"
#include "core/dtype.hpp"
#include "serialization/onnx/opset_history.hpp"

namespace nodeflow::onnx_import::detail {

inline constexpr std::size_t kVariadic = std::numeric_limits<std::size_t>::max();

/// The node being upgraded and what a step may do to it.
class Upgrade {
 public:
  Upgrade(OnnxNode& node, int opset, const AddConstant& add_constant, const TensorLookup& known,
          const TensorRead& read = {})
      : node_(node), opset_(opset), add_constant_(add_constant), known_(known), read_(read) {}

  OnnxNode& node() { return node_; }
  int opset() const { return opset_; }
  /// "node 'p1' (AveragePool, opset 9)"
  std::string where() const;
  /// Throws InvalidAttribute "<where>: <what>".
  [[noreturn]] void refuse_attribute(const std::string& what) const;
  /// Throws InvalidGraph "<where>: <what>".
  [[noreturn]] void refuse(const std::string& what) const;

  /// The attribute, or nullptr.
  const AttrValue* attribute(const std::string& name) const;
  /// Input `index` becomes `tensor`; absent inputs before it become "".
  void set_input(std::size_t index, std::string tensor);
  /// Input `index` or "" when absent.
  std::string input(std::size_t index) const;
  /// A new constant initializer, named after the node and `what`.
  std::string constant(const std::string& what, Tensor value) const;
  /// What the reader knows of input `index`, if anything.
  std::optional<KnownTensor> known_input(std::size_t index) const;
  /// True when output `index` is present and read by a node or the graph's
  /// outputs (present counts as read when the reader cannot tell).
  bool output_read(std::size_t index) const;

 private:
  OnnxNode& node_;
  int opset_;
  const AddConstant& add_constant_;
  const TensorLookup& known_;
  const TensorRead& read_;
};

// The steps, applied in order after the attribute names were checked.

/// A present attribute moves to constant input `input` (Ints: an int64 1-D
/// tensor; Float: a scalar of input 0's dtype when known, else float32). An
/// input already there next to the attribute is refused.
struct ToInput {
  std::string attribute;
  std::size_t input = 1;
};
/// The attribute's default at this version differs from opset 22's: an absent
/// attribute gets this value.
struct OldDefault {
  std::string attribute;
  AttrValue value;
};
/// An attribute without meaning for the result (opset 1's consumed_inputs,
/// an in-place hint) is removed.
struct Drop {
  std::string attribute;
};
/// The attribute is accepted only when absent or equal to `value` (the form
/// the opset-22 op computes), then removed; else refused with `why`.
struct Only {
  std::string attribute;
  AttrValue value;
  std::string why;
};
/// Input `from` moves to index `to` (Resize-10's scales, 1 -> 2).
struct MoveInput {
  std::size_t from = 1;
  std::size_t to = 2;
};
/// Anything else; `doc` says what it does (docs/onnx.md).
struct Custom {
  std::function<void(Upgrade&)> apply;
  std::string doc;
};
using Step = std::variant<ToInput, OldDefault, Drop, Only, MoveInput, Custom>;

/// One ONNX version of an op.
struct OpVersion {
  int since = 1;
  std::vector<AttrInfo> attributes;
  std::size_t max_inputs = 1;
  std::size_t max_outputs = 1;
  std::vector<Step> steps;
  /// Non-empty: nodes of this version are refused, for this reason.
  std::string refused;
};

/// A dtype an op's input takes only from an opset on (bfloat16 pooling: 22).
struct DTypeSince {
  DType dtype = DType::BFloat16;
  int since = 22;
  std::size_t input = kVariadic;  ///< the input it concerns; kVariadic: every input
};

/// Every ONNX version of one op, ascending; the last is the one nodeflow registers.
struct OpHistory {
  std::string op_type;
  std::vector<OpVersion> versions;
  /// For lowest_opset: the dtypes the op takes only from an opset > 19 on.
  /// Dtypes not listed are taken by every version in effect from opset 19.
  std::vector<DTypeSince> dtype_since;
};

/// ONNX's type constraint of each input and output of an op at opset 22, among
/// nodeflow's dtypes; the last entry stands for the rest (a variadic input or
/// output). An empty list: a type nodeflow has not (bool).
struct OnnxTypes {
  std::vector<std::vector<DType>> inputs, outputs;
};
/// Every op's, by op_type (serialization/onnx/opset/types.cpp).
const std::map<std::string, OnnxTypes>& onnx_types_table();

// Shorthands for the tables.
inline AttrInfo int_attr(std::string name) { return {std::move(name), AttrKind::Int}; }
inline AttrInfo float_attr(std::string name) { return {std::move(name), AttrKind::Float}; }
inline AttrInfo string_attr(std::string name) { return {std::move(name), AttrKind::String}; }
inline AttrInfo ints_attr(std::string name) { return {std::move(name), AttrKind::Ints}; }
inline AttrInfo floats_attr(std::string name) { return {std::move(name), AttrKind::Floats}; }
inline AttrInfo strings_attr(std::string name) { return {std::move(name), AttrKind::Strings}; }

/// `base` with `more` appended.
std::vector<AttrInfo> with(std::vector<AttrInfo> base, std::vector<AttrInfo> more);

// The families' tables (serialization/onnx/opset/<family>.cpp).
std::vector<OpHistory> activations_history();
std::vector<OpHistory> elementwise_history();
std::vector<OpHistory> linear_history();
std::vector<OpHistory> normalization_history();
std::vector<OpHistory> pooling_history();
std::vector<OpHistory> reduction_history();
std::vector<OpHistory> shape_history();

}  // namespace nodeflow::onnx_import::detail
