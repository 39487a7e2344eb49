#pragma once
// `nodeflow check` as data: the one validation the command line prints and the
// server's POST /api/check returns (docs/cli.md "check", docs/server.md), so
// that an editor shows exactly what the command says.
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/graph.hpp"

namespace nodeflow {

/// Where a reader's or the Graph's message points (docs/graph-format.md,
/// "Errors"): the JSON path it begins with, without the node's name
/// ("nodes[3].attributes.kernel_shape"), the node's name when the path is in
/// `nodes` and the message names it ("pool1"), and the attribute when the path
/// goes through `attributes` ("kernel_shape"). Each is empty when the message
/// does not say (a cycle, a free-text message).
struct ErrorLocation {
  std::string path;
  std::string node;
  std::string attribute;
};

/// The location at the head of `message`: a path of keys and [indices],
/// starting with a top-level key of the document, up to the first ": ". A node
/// name in parentheses after `nodes[i]` runs to the first ")" followed by ".",
/// ":" or the end (a name holding ")." or "):" is cut there).
ErrorLocation locate_error(std::string_view message);

/// One error of a check: the library's message and where it points.
struct CheckError {
  std::string message;
  ErrorLocation location;
};

/// What `check` found. A graph is either valid or refused with its first error
/// (loading never half-loads: docs/graph-format.md), so `errors` holds at most one.
struct CheckReport {
  std::optional<Graph> graph;             ///< the validated graph, when valid
  std::vector<CheckError> errors;         ///< empty when valid
  std::exception_ptr failure;             ///< the refusal as thrown (the command rethrows it)
  std::vector<std::pair<std::string, TensorInfo>> tensors;  ///< every tensor, by name
  std::int64_t parameters = 0;            ///< Graph::parameter_count()
  std::int64_t trainable_parameters = 0;  ///< elements of the trainable initializers

  bool ok() const { return errors.empty(); }
};

/// Runs `load` (which reads and validates a graph: load_graph, load_graph_path,
/// load_graph_bytes). A nodeflow::Error it throws becomes the report's error,
/// located by locate_error; other exceptions (std::bad_alloc) propagate.
CheckReport check_graph(const std::function<Graph()>& load);

}  // namespace nodeflow
