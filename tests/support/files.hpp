#pragma once
// Whole-file reads and writes for tests that compare files byte for byte.
#include <filesystem>
#include <string>

namespace nodeflow::testing {

/// The bytes of `file` ("" when it cannot be read).
std::string read_bytes(const std::filesystem::path& file);

/// Replaces `file` with `text` (a plain write: the tests' own set-up).
void write_text(const std::filesystem::path& file, const std::string& text);

}  // namespace nodeflow::testing
