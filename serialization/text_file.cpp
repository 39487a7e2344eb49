#include "serialization/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/errors.hpp"

namespace nodeflow {

std::string read_text_file(const std::filesystem::path& path, std::string_view what) {
  const std::string where = "cannot read " + std::string(what) + " " + path.string();
  std::error_code ec;
  // file_size refuses directories and missing files with the system's reason.
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError(where + ": " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) throw IoError(where + ": " + std::strerror(errno));
  std::string text;
  text.reserve(static_cast<std::size_t>(size));
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) throw IoError(where + ": read error");
  return text;
}

}  // namespace nodeflow
