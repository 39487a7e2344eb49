#pragma once
// Steps and shorthands several families share
// (serialization/onnx/detail/opset_table.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "serialization/onnx/detail/opset_table.hpp"

namespace nodeflow::onnx_import::detail {

/// A version with its attributes, input and output counts and steps.
OpVersion version(int since, std::vector<AttrInfo> attributes, std::size_t max_inputs,
                  std::size_t max_outputs, std::vector<Step> steps = {});
/// A version whose nodes are refused, for `why`.
OpVersion refused_version(int since, std::vector<AttrInfo> attributes, std::size_t max_inputs,
                          std::size_t max_outputs, std::string why);

/// Opset 1's in-place hint, without meaning for the result.
inline const AttrInfo kConsumedInputs = ints_attr("consumed_inputs");
inline const Drop kDropConsumedInputs{"consumed_inputs"};

/// An attribute the version requires, refused when absent ("attribute 'axes'
/// is required at opset 11"), before a ToInput moves it.
Custom required(const std::string& attribute);

/// A FLOAT attribute that a later version made an INT (LpPool-1's p): an
/// integral value becomes that INT, any other is refused.
Custom float_to_int(const std::string& attribute, const std::string& why);

/// Attribute `from` is renamed `to` (Pad-1's paddings, Pad-2's pads).
Custom rename(const std::string& from, const std::string& to);

/// Refuses outputs from index `first` on ("output 1 (mask) ...: why").
Custom no_outputs_from(std::size_t first, const std::string& what, const std::string& why);

/// The values of input `index` when the reader knows it as an int64 or
/// float constant (an initializer), converted to int64; nullopt otherwise.
std::optional<std::vector<std::int64_t>> known_ints(const Upgrade& up, std::size_t index);
/// The rank of input `index` when known.
std::optional<std::size_t> known_rank(const Upgrade& up, std::size_t index);

}  // namespace nodeflow::onnx_import::detail
