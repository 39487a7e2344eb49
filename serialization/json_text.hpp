#pragma once
// The lexical pieces of the graph-document writer: JSON strings and numbers
// that read back exactly. The command line's output manifest
// (apps/output_files.cpp) writes its strings with them too.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/dtype.hpp"

namespace nodeflow::json_text {

/// Appends `s` as a JSON string: quotes, backslash and control characters
/// escaped, other text copied as UTF-8. Returns false (appending nothing) when
/// `s` is not valid UTF-8 (overlong forms, surrogates and code points above
/// U+10FFFF included), which no JSON document can carry.
bool append_string(std::string& out, std::string_view s);

void append_int(std::string& out, std::int64_t v);

/// Appends a finite float with the fewest significant digits that read back
/// (decimal -> nearest double -> T, the reader's path) to the same bits,
/// always with a '.' or an exponent: 1.0, -0.0, 0.1, 1e-45, 3.4028235e+38.
/// Precondition: v is finite.
void append_float(std::string& out, float v);
void append_float(std::string& out, double v);
void append_float(std::string& out, half v);
void append_float(std::string& out, bfloat16 v);

}  // namespace nodeflow::json_text
