#pragma once
// `nodeflow serve` (docs/cli.md "serve", docs/server.md): the editor and the
// JSON API on an HTTP server until SIGINT or SIGTERM.
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace nodeflow::server {
struct ServerOptions;
}

namespace nodeflow::cli {

/// What serve's options parse into.
struct ServeVerb {
  CLI::App* serve = nullptr;
  std::string host = "127.0.0.1";
  std::uint64_t port = 8080;
  std::filesystem::path root = ".";
  std::filesystem::path editor;  ///< empty: default_editor_dir()
  std::vector<std::string> datasets;  ///< --data, repeatable
  std::uint64_t max_body_bytes = 0;  ///< set from server::kDefaultMaxBodyBytes
  std::uint64_t max_initializer_bytes = 0;
  std::uint64_t max_tensor_bytes = 0;
};

/// Adds `serve` to `app`.
void add_serve_verb(CLI::App& app, ServeVerb& verb);

/// The editor's files when --editor is not given: share/nodeflow/editor beside
/// the installed binary (../share/nodeflow/editor from its bin/), else the
/// editor/dist of the source tree this binary was built from.
std::filesystem::path default_editor_dir();

/// Runs the server when `serve` was parsed (the URL on `out`, then serving
/// until SIGINT or SIGTERM); returns false when it was not.
bool run_serve_verb(const ServeVerb& verb, std::ostream& out);

}  // namespace nodeflow::cli
