#include "conformance_case.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace nodeflow::testing {
namespace {

using nlohmann::json;

std::map<std::string, std::filesystem::path> file_map(const json& doc, const char* key,
                                                      const std::filesystem::path& dir) {
  std::map<std::string, std::filesystem::path> files;
  if (!doc.contains(key)) return files;
  for (const auto& [name, relative] : doc.at(key).items())
    files.emplace(name, dir / relative.get<std::string>());
  return files;
}

Tolerance tolerance(const json& doc, const char* rtol, const char* atol) {
  return {doc.value(rtol, 0.0), doc.value(atol, 0.0)};
}

}  // namespace

Tolerance ConformanceCase::tolerance_for(const std::string& output) const {
  const auto it = output_tolerances.find(output);
  return it == output_tolerances.end() ? tolerance : it->second;
}

ConformanceCase load_conformance_case(const std::filesystem::path& dir) {
  const auto file = dir / "case.json";
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot open " + file.string());
  try {
    const json doc = json::parse(in);
    ConformanceCase c;
    c.dir = dir;
    c.name = dir.filename().string();
    c.kind = doc.at("kind").get<std::string>();
    c.tolerance = tolerance(doc, "rtol", "atol");
    c.grad_tolerance = tolerance(doc, "grad_rtol", "grad_atol");
    if (doc.contains("output_tolerances"))
      for (const auto& [name, tol] : doc.at("output_tolerances").items())
        c.output_tolerances.emplace(name, tolerance(tol, "rtol", "atol"));
    c.inputs = file_map(doc, "inputs", dir);
    c.expected = file_map(doc, "expected", dir);
    c.grad_outputs = file_map(doc, "grad_outputs", dir);
    c.expected_grads = file_map(doc, "expected_grads", dir);
    c.error_contains = doc.value("error_contains", std::vector<std::string>{});
    c.error_verbs = doc.value("error_verbs", std::vector<std::string>{"check", "run"});
    if (c.kind != "forward" && c.kind != "backward" && c.kind != "error")
      throw std::runtime_error("unknown kind '" + c.kind + "'");
    return c;
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

std::vector<std::filesystem::path> list_conformance_cases(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> cases;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "case.json"))
      cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

}  // namespace nodeflow::testing
