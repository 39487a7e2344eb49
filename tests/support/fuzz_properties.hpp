#pragma once
// What the fuzz targets (fuzz/) check for each input, shared with the
// regression test that replays every input they ever crashed on
// (tests/regression/). A property that does not hold throws
// PropertyViolation; a crash or sanitizer report is a failure by itself.
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string_view>

namespace nodeflow::testing {

class PropertyViolation : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Loads `text` as a graph document. A refusal must be a nodeflow::Error (any
/// other exception escapes to the caller) whose message holds no raw control
/// character (names, keys and values are quoted escaped). An accepted document must write
/// out, read back to the same description bit for bit, rewrite to the same
/// bytes and load again as a valid graph.
void check_graph_document(std::string_view text);

/// Loads `bytes` as an ONNX model (no folder: external data refused). A
/// refusal must be a nodeflow::Error whose message holds no raw control
/// character. An accepted model must write out as ONNX, load again, and write
/// again to the same bytes with the same initializer bits.
void check_onnx_model(std::string_view bytes);

/// Parses `bytes` as a .npy file. A refusal must be a nodeflow::Error. An
/// accepted file must encode and parse back to the same tensor bit for bit,
/// and encode again to the same bytes.
void check_npy_bytes(std::span<const std::byte> bytes);

}  // namespace nodeflow::testing
