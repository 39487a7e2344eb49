#include "serialization/text_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/errors.hpp"

namespace nodeflow {
namespace {

/// Reads `fd` to its end in blocks, retrying reads a signal interrupted.
std::string read_to_end(int fd, const std::string& where) {
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  std::string text;
  for (;;) {
    const std::size_t at = text.size();
    text.resize(at + kBlock);
    const ssize_t got = ::read(fd, text.data() + at, kBlock);
    if (got < 0) {
      const int error = errno;
      text.resize(at);
      if (error == EINTR) continue;
      throw IoError(where + ": " + std::strerror(error));
    }
    text.resize(at + static_cast<std::size_t>(got));
    if (got == 0) return text;
  }
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path, std::string_view what) {
  const std::string where =
      "cannot read " + std::string(what) + " " + printable(path.string(), std::string::npos);
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_directory(status)) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw IoError(where + ": " + std::strerror(errno));
    try {
      std::string text = read_to_end(fd, where);
      ::close(fd);
      return text;
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
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

std::string read_standard_input(std::string_view what) {
  return read_to_end(STDIN_FILENO, "cannot read " + std::string(what) + " from standard input");
}

}  // namespace nodeflow
