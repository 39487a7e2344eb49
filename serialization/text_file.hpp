#pragma once
// Reading a whole document (a graph, a training configuration) into memory.
#include <filesystem>
#include <string>
#include <string_view>

namespace nodeflow {

/// The bytes of the file at `path`. A pipe, FIFO or device (`<(...)`,
/// /dev/stdin), which has no size to check first, is read as its data arrives
/// until end of file (memory grows with the bytes actually sent). Throws
/// IoError "cannot read <what> <path>: <reason>" when it cannot be read
/// (missing, a directory, no permission, an I/O error), so that no such case
/// reaches a parser as an empty document. The path is shown with control
/// characters escaped.
std::string read_text_file(const std::filesystem::path& path, std::string_view what);

/// Everything on standard input, until end of file. Throws IoError "cannot
/// read <what> from standard input: <reason>" (standard input closed, say).
std::string read_standard_input(std::string_view what);

}  // namespace nodeflow
