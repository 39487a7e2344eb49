#pragma once
// Reading a whole document (a graph, a training configuration) into memory.
#include <filesystem>
#include <string>
#include <string_view>

namespace nodeflow {

/// The bytes of the file at `path`. Throws IoError "cannot read <what> <path>:
/// <reason>" when it cannot be read (missing, a directory, no permission, an
/// I/O error), so that no such case reaches a parser as an empty document.
std::string read_text_file(const std::filesystem::path& path, std::string_view what);

}  // namespace nodeflow
