#include "apps/arguments.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
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

std::optional<std::uint64_t> parse_count(std::string_view text, bool units) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc() || ptr != text.data() + digits) return std::nullopt;  // past 2^64 - 1
  std::string unit;
  for (char c : text.substr(digits))
    unit += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (unit.empty()) return value;
  if (!units) return std::nullopt;
  std::uint64_t factor = 0;
  if (unit == "b") {
    factor = 1;
  } else {
    static constexpr std::string_view kPrefixes = "kmgtpe";
    const std::size_t power = kPrefixes.find(unit[0]);
    const std::string_view rest = std::string_view(unit).substr(1);
    const bool binary = rest == "i" || rest == "ib";
    if (power == std::string_view::npos || !(binary || rest.empty() || rest == "b"))
      return std::nullopt;
    factor = 1;
    for (std::size_t p = 0; p <= power; ++p) factor *= binary ? 1024 : 1000;
  }
  if (value > UINT64_MAX / factor) return std::nullopt;
  return value * factor;
}

CLI::Option* add_count_option(CLI::App& verb, const std::string& flag, std::uint64_t& into,
                              std::uint64_t min, std::uint64_t max, bool units,
                              const std::string& help) {
  const std::string expected =
      std::string(units ? "a byte count" : "an integer") + " from " + std::to_string(min) +
      " to " + std::to_string(max) +
      (units ? " (decimal digits, optionally with a unit: 512MiB, 2GB)" : "");
  return verb
      .add_option_function<std::string>(
          flag, [&into, units](const std::string& text) { into = *parse_count(text, units); },
          help)
      ->check(CLI::Validator(
          [=](std::string& text) {
            const std::optional<std::uint64_t> value = parse_count(text, units);
            return value && *value >= min && *value <= max
                       ? std::string()
                       : "expected " + expected + ", got '" + printable(text, 60) + "'";
          },
          units ? "BYTES" : "N"))
      ->type_name(units ? "BYTES" : "N");
}

CLI::Option* add_seed_option(CLI::App& verb, std::uint64_t& seed, const std::string& help) {
  return add_count_option(verb, "--seed", seed, 0, UINT64_MAX, false, help);
}

CLI::Option* add_threads_option(CLI::App& verb, int& threads, const std::string& help) {
  return verb.add_option("--threads", threads, help)->check(CLI::Range(1, 1024));
}

}  // namespace nodeflow::cli
