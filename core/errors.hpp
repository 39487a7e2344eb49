#pragma once
// The one exception hierarchy of nodeflow. Every error the library raises is a
// nodeflow::Error; messages name what is wrong and where (JSON path, node name,
// attribute, axis, tensor name, dtype), so the command line prints them as-is.
#include <stdexcept>
#include <string>
#include <string_view>

namespace nodeflow {

/// Base of every nodeflow error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The graph document or its wiring is wrong: JSON syntax, unknown keys or ops,
/// missing or duplicate names, cycles.
class InvalidGraph : public Error {
 public:
  using Error::Error;
};

/// An attribute has the wrong type or a value outside its valid range.
class InvalidAttribute : public Error {
 public:
  using Error::Error;
};

/// Shapes do not fit: shape inference, run-time inputs, overflowing element counts.
class ShapeMismatch : public Error {
 public:
  using Error::Error;
};

/// A dtype the operator or the request does not support (including gradients of
/// integer tensors).
class UnsupportedDType : public Error {
 public:
  using Error::Error;
};

/// Reading or writing files (.npy, JSON) failed or the file is malformed.
class IoError : public Error {
 public:
  using Error::Error;
};

/// A failure while running a valid graph (e.g. a MaxUnpool index outside the
/// output, backward before a training-mode forward).
class RunError : public Error {
 public:
  using Error::Error;
};

/// Prefixes the message of a nodeflow error with a location ("nodes[3] (pool1)")
/// and rethrows it with its original type. Used at layer boundaries so that inner
/// code can report relative paths.
[[noreturn]] void rethrow_with_context(const std::string& where);

/// The separator between a location and an inner message: "." when the inner
/// message starts with a relative JSON path ("attributes.kernel_shape: ..."),
/// ": " for free text ("axis 3: ..."). Returns where + separator.
std::string context_prefix(const std::string& where, const std::string& inner);

/// Text from a user's file shown inside a message, safe for a terminal: the
/// C0 controls and DEL as \xNN, each byte of ill-formed UTF-8 as \xNN, the C1
/// controls U+0080 ... U+009F as \u0080 ... \u009f (0x9B alone or as C2 9B
/// would start a CSI sequence); other well-formed UTF-8 passes unchanged. With
/// ascii_only, every byte outside printable ASCII is \xNN. Cut to at most
/// `limit` bytes of `s` (never inside a UTF-8 sequence) followed by "...". A
/// raw NUL would end the message wherever it is printed as a C string.
std::string printable(std::string_view s, std::size_t limit, bool ascii_only = false);

/// Runs f(); a nodeflow::Error escaping it is rethrown with `where` prepended.
template <typename F> decltype(auto) with_context(const std::string& where, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    rethrow_with_context(context_prefix(where, e.what()));
  }
}

/// with_context for hot loops: `where()` builds the location only when an error
/// escapes, so the common, successful call makes no string.
template <typename W, typename F> decltype(auto) with_lazy_context(W&& where, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    rethrow_with_context(context_prefix(where(), e.what()));
  }
}

}  // namespace nodeflow
