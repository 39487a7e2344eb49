#pragma once
// The ONNX opset history of every op nodeflow registers: which version of an
// op a model of opset 1 ... 22 uses, the attributes that version has, and how
// a node of that version becomes the node nodeflow registers (the op's opset-22
// form). Protobuf-free: the ONNX reader (onnx_reader.cpp) converts a NodeProto
// to an OnnxNode and calls upgrade_node; the writer asks lowest_opset.
//
// The interface the reader and writer call:
//
//   struct OnnxNode { op_type, name, inputs, outputs, attributes };
//   using AddConstant = std::function<std::string(const std::string& hint, Tensor value)>;
//   struct KnownTensor { TensorInfo info; Tensor value; };
//   using TensorLookup = std::function<std::optional<KnownTensor>(const std::string& tensor)>;
//   using TensorRead = std::function<bool(const std::string& tensor)>;
//   void upgrade_node(OnnxNode& node, int opset, const AddConstant& add_constant,
//                     const OpRegistry& registry = OpRegistry::global(),
//                     const TensorLookup& known = {}, const TensorRead& read = {});
//   int lowest_opset(const NodeDef& def, const std::vector<DType>& input_dtypes);

//
// `known` is optional: the dtype and shape of a tensor when the reader knows
// them (graph inputs, initializers, outputs of earlier nodes, which the reader
// infers with the library's shape inference) and the value of an initializer. A few old forms map exactly only for
// some shapes or values (Softmax before 13 flattens from `axis`: it equals
// opset-13 Softmax only when axis is the input's last axis; PRelu before 7
// applies a [C] slope per channel; Resize-10's nearest rounding is defined for
// scales >= 1); without the fact they are refused, never guessed. A moved float attribute (Clip's min/max,
// Pad's value, Dropout's ratio) becomes a constant of the data input's dtype
// when `known` tells it, else float32.
//
// Errors name node, op, opset and what is refused:
//   InvalidGraph     "node 'c7' (ConvInteger, opset 10): op not supported"
//   InvalidGraph     "node 'g' (Gelu, opset 19): op not supported at opset 19 (Gelu exists from opset 20)"
//   InvalidAttribute "node 'p1' (AveragePool, opset 9): attribute 'ceil_mode' exists from opset 10"
//   InvalidAttribute "node 'b' (BatchNormalization, opset 7): attribute 'spatial' = 0 is not supported: ..."
// docs/onnx.md, "Opset history", lists per op the boundaries handled.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/attributes.hpp"
#include "core/dtype.hpp"
#include "core/graph.hpp"
#include "core/registry.hpp"
#include "core/tensor.hpp"

namespace nodeflow::onnx_import {

/// The default-domain opsets read: 1 ... kMaxOpset.
inline constexpr int kMaxOpset = 22;
/// The lowest opset the writer states (dilated AveragePool needs 19).
inline constexpr int kMinWrittenOpset = 19;

/// A node as the model states it, attributes already converted to AttrValue.
struct OnnxNode {
  std::string op_type, name;
  std::vector<std::string> inputs, outputs;  ///< "" = absent optional
  Attributes attributes;                     ///< core/attributes.hpp
};

/// Adds a constant int64/float initializer that an attribute moved to an input
/// (Squeeze axes before 13, ...) and returns its unique tensor name.
using AddConstant = std::function<std::string(const std::string& hint, Tensor value)>;

/// What the reader knows of a tensor.
struct KnownTensor {
  TensorInfo info;  ///< dtype and shape (kDynamicDim where unknown)
  Tensor value;     ///< an initializer's value; empty() for other tensors
};
/// The facts of a tensor by name; nullopt when the reader does not know it.
using TensorLookup = std::function<std::optional<KnownTensor>(const std::string& tensor)>;
/// True when a node or the graph's outputs read the tensor (the reader knows the
/// whole graph). Without it every output counts as read.
using TensorRead = std::function<bool(const std::string& tensor)>;

/// Rewrites `node`, read at `opset`, into the form of the op nodeflow registers
/// (opset 22): attributes that moved to inputs become constants, old defaults
/// that differ are made explicit, attributes the op did not have at `opset` are
/// refused ("node 'p1' (AveragePool, opset 9): attribute 'ceil_mode' exists from
/// opset 10"), ops nodeflow lacks or that did not exist at `opset` refused
/// ("node 'c7' (ConvInteger, opset 10): op not supported"), as are old forms
/// that cannot be mapped exactly. Attribute values are the Graph's to check.
void upgrade_node(OnnxNode& node, int opset, const AddConstant& add_constant,
                  const OpRegistry& registry = OpRegistry::global(),
                  const TensorLookup& known = {}, const TensorRead& read = {});

/// The lowest default-domain opset, at least kMinWrittenOpset, whose version of
/// def.op_type holds this node as nodeflow writes it (its attributes, its input
/// and output counts, its input dtypes): dilated AveragePool 19, bfloat16
/// pooling 22, Gelu 20, ... kMaxOpset when no table knows the op.
/// input_dtypes[k] is the dtype of def.inputs[k] (ignored for an absent "" one).
int lowest_opset(const NodeDef& def, const std::vector<DType>& input_dtypes);

/// ONNX's type constraints of an op at an opset, among nodeflow's dtypes: per
/// input and output the dtypes it takes (the last entry stands for the rest of
/// a variadic input or output; empty: a type nodeflow has not, as bool).
struct TypeConstraints {
  std::vector<std::vector<DType>> inputs, outputs;
};
/// nullopt when no table knows the op or it did not exist at `opset`.
std::optional<TypeConstraints> onnx_type_constraints(const std::string& op_type, int opset);

/// Where the dtypes of a node as nodeflow writes it fall outside ONNX's type
/// constraints of its op at `opset`, one clause per input or output, joined by
/// "; " ("" when every one fits or the op is unknown): "input 0 is int8, which
/// ONNX's GlobalMaxPool at opset 19 does not take (it takes float16, float32,
/// float64)". inputs[k] is the dtype of input k, nullopt for an absent one;
/// outputs[k] likewise, nullopt for one that is not checked.
std::string type_problem(const std::string& op_type, int opset, const std::vector<std::optional<DType>>& inputs,
                         const std::vector<std::optional<DType>>& outputs);

/// ONNX's name of an attribute kind (AttributeProto.AttributeType): "INT",
/// "FLOAT", "STRING", "INTS", "FLOATS", "STRINGS".
const char* onnx_attribute_type(AttrKind kind);

// Introspection, for tests and documentation.

/// One attribute of one ONNX version of an op.
struct AttrInfo {
  std::string name;
  AttrKind kind = AttrKind::Int;
};

/// One ONNX version of an op as the table knows it.
struct VersionInfo {
  int since = 1;                     ///< the opset that introduced this version
  std::vector<AttrInfo> attributes;  ///< the attributes it has, sorted by name
  std::size_t max_inputs = 1;        ///< SIZE_MAX: variadic
  std::size_t max_outputs = 1;       ///< SIZE_MAX: variadic
  /// Non-empty: a node of this version is refused, for this reason.
  std::string refused;
  /// Defaults of this version that differ from the registered op's, made
  /// explicit when the attribute is absent.
  std::vector<std::pair<std::string, AttrValue>> old_defaults;
  /// Attributes that become constant inputs: name and input index.
  std::vector<std::pair<std::string, std::size_t>> moved_to_inputs;
  /// What the other steps do, one line each (docs/onnx.md).
  std::vector<std::string> notes;
};

/// The ops the history knows, sorted.
std::vector<std::string> history_ops();
/// The versions of `op_type` with since <= kMaxOpset, ascending; empty when unknown.
std::vector<VersionInfo> op_versions(const std::string& op_type);

}  // namespace nodeflow::onnx_import
