#include "apps/arguments.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <set>
#include <system_error>

#include "core/errors.hpp"

namespace nodeflow::cli {

NamedFile parse_named_file(std::string_view argument, std::string_view option) {
  const auto eq = argument.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == argument.size())
    throw UsageError(std::string(option) + " expects NAME=FILE.npy, got '" +
                     printable(argument, std::string_view::npos) + "'");
  return {std::string(argument.substr(0, eq)), std::filesystem::path(argument.substr(eq + 1))};
}

std::vector<NamedFile> parse_named_files(const std::vector<std::string>& arguments,
                                         std::string_view option) {
  std::vector<NamedFile> files;
  std::set<std::string> seen;
  for (const auto& argument : arguments) {
    files.push_back(parse_named_file(argument, option));
    if (!seen.insert(files.back().name).second)
      throw UsageError(std::string(option) + " names '" +
                       printable(files.back().name, std::string_view::npos) + "' twice");
  }
  return files;
}

namespace {

bool parse_uint64(std::string_view text, std::uint64_t& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && !text.empty();
}

}  // namespace

CLI::Option* add_seed_option(CLI::App& verb, std::uint64_t& seed, const std::string& help) {
  return verb
      .add_option_function<std::string>(
          "--seed", [&seed](const std::string& text) { parse_uint64(text, seed); }, help)
      ->check(CLI::Validator(
          [](std::string& text) {
            std::uint64_t ignored = 0;
            return parse_uint64(text, ignored)
                       ? std::string()
                       : "expected an integer from 0 to 18446744073709551615, got '" +
                             printable(text, 60) + "'";
          },
          "UINT64"))
      ->type_name("N");
}

CLI::Option* add_threads_option(CLI::App& verb, int& threads, const std::string& help) {
  return verb.add_option("--threads", threads, help)->check(CLI::Range(1, 1024));
}

}  // namespace nodeflow::cli
