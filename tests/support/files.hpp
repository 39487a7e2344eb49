#pragma once
// Whole-file reads and writes for tests that compare files byte for byte.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

namespace nodeflow::testing {

/// The bytes of `file` ("" when it cannot be read).
std::string read_bytes(const std::filesystem::path& file);

/// Replaces `file` with `text` (a plain write: the tests' own set-up).
void write_text(const std::filesystem::path& file, const std::string& text);

/// The bytes of `s` as the readers take them (parse_npy, parse_idx, gunzip); a view of `s`.
inline std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace nodeflow::testing
