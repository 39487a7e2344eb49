#pragma once
// Parsing protobuf messages from untrusted bytes (docs/onnx.md, "Limits").
#include <cstdint>
#include <string>
#include <string_view>

#include <google/protobuf/message.h>

namespace nodeflow::onnx_io::detail {

/// Nesting of messages the parser follows: a model is Model -> Graph -> Node ->
/// Attribute -> Tensor/Graph, and a type (TypeProto) nests a few levels more;
/// nodeflow reads no subgraphs. A file nesting deeper is refused instead of
/// being followed down the stack.
inline constexpr int kRecursionLimit = 64;

/// What parsing `bytes` as a `descriptor` message would allocate for its
/// structure, found by walking the wire format along the message's schema
/// (no object is made): the size of every message object (its type's
/// SpaceUsedLong) plus a std::string per string or bytes field and an entry
/// per unknown field; the contents of strings are not counted (they are the
/// file's own bytes, copied once). Stops counting past `stop`. Malformed or
/// too deeply nested bytes end the walk early: the parser reports them.
std::uint64_t structure_bytes(std::string_view bytes, const google::protobuf::Descriptor& descriptor,
                              std::uint64_t stop);

/// Parses `bytes` into `message` (cleared first): refused first when its
/// structure_bytes exceed `max_structure_bytes` (InvalidGraph "<what>: parsing
/// it would take more than N bytes for its messages and names, over the
/// reader's limit ... (ReadOptions::max_model_structure_bytes)"), then
/// through a CodedInputStream bounded by the input's size and
/// kRecursionLimit; the whole input must be one message. Throws InvalidGraph
/// "<what>: not a valid <type> (N bytes that are truncated or malformed
/// protobuf, or nest messages deeper than 64 levels)" otherwise (protobuf
/// does not say which, nor where), "(it nests messages deeper than 64
/// levels)" when a deeper limit would have read it, and for inputs of 2 GiB
/// or more, which protobuf cannot address. Leaves `message` cleared after a
/// failure.
void parse_bounded(google::protobuf::Message& message, std::string_view bytes,
                   const std::string& what, const std::string& type,
                   std::uint64_t max_structure_bytes);

}  // namespace nodeflow::onnx_io::detail
