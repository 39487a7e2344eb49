#include "serialization/graph_check.hpp"

#include <cctype>

#include "core/errors.hpp"

namespace nodeflow {
namespace {

bool is_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Length of the key at `s[at]` ([A-Za-z0-9_]+), 0 when there is none.
std::size_t key_length(std::string_view s, std::size_t at) {
  std::size_t n = 0;
  while (at + n < s.size() && is_key_char(s[at + n])) ++n;
  return n;
}

// Length of "[digits]" at `s[at]`, 0 when there is none.
std::size_t index_length(std::string_view s, std::size_t at) {
  if (at >= s.size() || s[at] != '[') return 0;
  std::size_t n = 1;
  while (at + n < s.size() && std::isdigit(static_cast<unsigned char>(s[at + n]))) ++n;
  return n > 1 && at + n < s.size() && s[at + n] == ']' ? n + 1 : 0;
}

// The top-level keys of a graph document (docs/graph-format.md, "Document").
bool is_document_key(std::string_view key) {
  return key == "format" || key == "version" || key == "name" || key == "inputs" ||
         key == "outputs" || key == "initializers" || key == "nodes";
}

}  // namespace

ErrorLocation locate_error(std::string_view message) {
  ErrorLocation where;
  std::size_t at = key_length(message, 0);
  if (at == 0 || !is_document_key(message.substr(0, at))) return where;
  std::string path(message.substr(0, at));
  bool in_nodes = path == "nodes";
  bool after_attributes = false;
  while (at < message.size()) {
    if (const std::size_t n = index_length(message, at)) {
      path += message.substr(at, n);
      at += n;
      // "nodes[3] (pool1)": the name the message gives the element.
      if (message.substr(at, 2) == " (") {
        std::size_t close = at + 2;
        while ((close = message.find(')', close)) != std::string_view::npos) {
          if (close + 1 == message.size() || message[close + 1] == '.' || message[close + 1] == ':')
            break;
          ++close;
        }
        if (close == std::string_view::npos) break;
        if (in_nodes && where.node.empty()) where.node = std::string(message.substr(at + 2, close - at - 2));
        at = close + 1;
      }
      in_nodes = false;
    } else if (message[at] == '.' && key_length(message, at + 1) > 0) {
      const std::size_t length = key_length(message, at + 1);
      const std::string_view key = message.substr(at + 1, length);
      if (after_attributes && where.attribute.empty()) where.attribute = std::string(key);
      after_attributes = key == "attributes";
      path += '.';
      path += key;
      at += 1 + length;
    } else {
      break;
    }
  }
  // A location is followed by ": " (or ends the message); anything else is
  // free text that happens to start with a key's word.
  if (at != message.size() && message.substr(at, 1) != ":") return {};
  where.path = std::move(path);
  return where;
}

CheckReport check_graph(const std::function<Graph()>& load) {
  CheckReport report;
  try {
    report.graph.emplace(load());
  } catch (const Error& e) {
    report.errors.push_back({e.what(), locate_error(e.what())});
    report.failure = std::current_exception();
    return report;
  }
  const Graph& graph = *report.graph;
  for (const auto& [name, info] : graph.tensor_infos()) report.tensors.emplace_back(name, info);
  report.parameters = graph.parameter_count();
  for (const auto& init : graph.def().initializers)
    if (init.trainable) report.trainable_parameters += init.value.numel();
  return report;
}

}  // namespace nodeflow
