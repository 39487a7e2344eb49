#pragma once
// Parsing protobuf messages from untrusted bytes (docs/onnx.md, "Limits").
#include <string>
#include <string_view>

#include <google/protobuf/message_lite.h>

namespace nodeflow::onnx_io::detail {

/// Nesting of messages the parser follows: a model is Model -> Graph -> Node ->
/// Attribute -> Tensor/Graph, and a type (TypeProto) nests a few levels more;
/// nodeflow reads no subgraphs. A file nesting deeper is refused instead of
/// being followed down the stack.
inline constexpr int kRecursionLimit = 64;

/// Parses `bytes` into `message` (cleared first) through a CodedInputStream
/// bounded by the input's size and kRecursionLimit; the whole input must be
/// one message. Throws InvalidGraph "<what>: not a valid <type> (N bytes that
/// are truncated or malformed protobuf, or nest messages deeper than 64
/// levels)" otherwise (protobuf does not say which, nor where), "(it nests
/// messages deeper than 64 levels)" when a deeper limit would have read it,
/// and for inputs of 2 GiB or more, which protobuf cannot address. Leaves
/// `message` cleared after a failure.
void parse_bounded(google::protobuf::MessageLite& message, std::string_view bytes,
                   const std::string& what, const std::string& type);

}  // namespace nodeflow::onnx_io::detail
