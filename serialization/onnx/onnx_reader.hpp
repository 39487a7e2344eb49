#pragma once
// The pieces of the ONNX reader (serialization/onnx.hpp, parse_onnx_def) that
// the writer shares: the metadata_props keys of the training keys and the
// reading of float attributes.
#include <string>
#include <string_view>

#include "core/attributes.hpp"

namespace onnx {
class AttributeProto;
}  // namespace onnx

namespace nodeflow::onnx_io {

/// metadata_props keys (docs/onnx.md, "Training keys"): "nodeflow.<name>.<key>".
inline constexpr std::string_view kMetadataPrefix = "nodeflow.";
inline constexpr std::string_view kGraphVersionKey = "nodeflow.graph.version";
inline constexpr std::string_view kTrainingSuffix = ".training";
inline constexpr std::string_view kLdaCoeffSuffix = ".lda_coeff";
inline constexpr std::string_view kTrainableSuffix = ".trainable";
/// `true`: the node's specified_outputs_name spells the default names (N, N:1,
/// ...), which the outputs alone would read back as a node without the key.
inline constexpr std::string_view kSpecifiedOutputsSuffix = ".specified_outputs_name";
/// `true`: the Dropout's input 1, a scalar float32 initializer the writer added,
/// is the document's `ratio` attribute (ONNX has no such attribute from opset 12).
inline constexpr std::string_view kRatioAttributeSuffix = ".ratio_attribute";

/// "nodeflow." + name + suffix.
std::string metadata_key(const std::string& name, std::string_view suffix);

/// The double a float attribute stands for: the float32 `f` read back from its
/// shortest decimal form (0.1f -> 0.1, not 0.100000001490116), so that a
/// number written from a JSON document reads back as the document had it
/// whenever float32 holds it. NaN and infinities pass unchanged.
double attribute_double(float f);

/// The AttrValue of an attribute of kind INT, FLOAT, STRING, INTS, FLOATS or
/// STRINGS (an attribute without `type`, as very old writers make them, by the
/// one field it fills). Throws InvalidAttribute "<where>: attribute 'body' is a
/// GRAPH, which nodeflow does not support" for the other kinds, a reference to
/// a function's attribute (ref_attr_name), and an attribute whose kind cannot
/// be told.
AttrValue attribute_value(const onnx::AttributeProto& attribute, const std::string& where);

}  // namespace nodeflow::onnx_io
