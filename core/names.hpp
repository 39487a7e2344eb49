#pragma once
// Names of the graph, its nodes and its tensors (docs/graph-format.md, "Names"):
// UTF-8 without control characters, so that a name printed in a message or by
// `nodeflow check` is printed as it is. One check, used by the JSON reader,
// Graph and GraphBuilder alike.
#include <cstddef>
#include <string>
#include <string_view>

#include "core/errors.hpp"

namespace nodeflow {

/// Length (1 to 4) of the valid UTF-8 sequence starting at s[i], or 0 when the
/// bytes there are not one: a stray continuation byte, a truncated sequence, an
/// overlong form, a surrogate or a code point above U+10FFFF (RFC 3629; table
/// 3-7 of the Unicode standard). Precondition: i < s.size().
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

/// What makes `name` unfit as a name, or "" when nothing does. A name is valid
/// UTF-8 without control characters (U+0000 to U+001F and U+007F):
/// "a name must not contain control characters (U+001B at byte 3)" or
/// "a name must be valid UTF-8 (byte 0xFF at byte 2)", byte offsets counted
/// from 0. The offending bytes are never repeated raw. Emptiness is not judged
/// here: "" is a valid absent node input, and an empty node or tensor name is
/// Graph's to refuse.
std::string name_problem(std::string_view name);

/// Throws InvalidGraph("<where()>: <name_problem(name)>") when `name` has a
/// problem. `where()` returns its JSON path ("nodes[2].name", "outputs[0]");
/// it is called only then, so checking every name of a large graph builds no
/// string.
template <typename Where>
void check_name(std::string_view name, const Where& where) {
  if (std::string problem = name_problem(name); !problem.empty())
    throw InvalidGraph(where() + ": " + problem);
}

}  // namespace nodeflow
