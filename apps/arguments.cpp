#include "apps/arguments.hpp"

#include <set>

namespace nodeflow::cli {

NamedFile parse_named_file(std::string_view argument, std::string_view option) {
  const auto eq = argument.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == argument.size())
    throw UsageError(std::string(option) + " expects NAME=FILE.npy, got '" + std::string(argument) +
                     "'");
  return {std::string(argument.substr(0, eq)), std::filesystem::path(argument.substr(eq + 1))};
}

std::vector<NamedFile> parse_named_files(const std::vector<std::string>& arguments,
                                         std::string_view option) {
  std::vector<NamedFile> files;
  std::set<std::string> seen;
  for (const auto& argument : arguments) {
    files.push_back(parse_named_file(argument, option));
    if (!seen.insert(files.back().name).second)
      throw UsageError(std::string(option) + " names '" + files.back().name + "' twice");
  }
  return files;
}

}  // namespace nodeflow::cli
