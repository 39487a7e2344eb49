#include "apps/serve_command.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <thread>

#include "apps/arguments.hpp"
#include "serialization/json_reader.hpp"
#include "server/server.hpp"

namespace nodeflow::cli {

namespace fs = std::filesystem;

void add_serve_verb(CLI::App& app, ServeVerb& verb) {
  verb.max_body_bytes = server::kDefaultMaxBodyBytes;
  verb.max_initializer_bytes = kDefaultMaxInitializerBytes;
  verb.max_tensor_bytes = kDefaultMaxTensorBytes;
  CLI::App* s = verb.serve = app.add_subcommand(
      "serve", "Serve the graph editor and a JSON API over the library (prints its URL with a token)");
  s->add_option("--host", verb.host, "Address to listen on (default 127.0.0.1, this machine only)");
  add_count_option(*s, "--port", verb.port, 1, 65535, false, "Port (default 8080)");
  s->add_option("--root", verb.root,
                "Folder whose .json and .onnx graphs the API lists, opens and saves (default .)")
      ->check(CLI::ExistingDirectory);
  s->add_option("--editor", verb.editor,
                "Folder of the editor's built files (default: the installed editor, else "
                "editor/dist of the source tree)");
  s->add_option("--data", verb.datasets,
                "Datasets training runs may use, as train --data takes them (repeatable; "
                "default: mnist and fashion-mnist)");
  add_count_option(*s, "--max-body-bytes", verb.max_body_bytes, 1, UINT64_MAX, true,
                   "Bytes a request body may hold (default " +
                       std::to_string(server::kDefaultMaxBodyBytes) + " = 64 MiB)");
  add_count_option(*s, "--max-initializer-bytes", verb.max_initializer_bytes, 0, UINT64_MAX, true,
                   "Bytes a graph's initializers may hold together (default " +
                       std::to_string(kDefaultMaxInitializerBytes) + " = 1 GiB)");
  add_count_option(*s, "--max-tensor-bytes", verb.max_tensor_bytes, 0, UINT64_MAX, true,
                   "Bytes any one tensor a node outputs may take (default " +
                       std::to_string(kDefaultMaxTensorBytes) + " = 4 GiB)");
}

fs::path default_editor_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = self.parent_path().parent_path() / NODEFLOW_EDITOR_INSTALL_DIR;
    if (fs::is_regular_file(installed / "index.html", ec)) return installed;
  }
  return NODEFLOW_EDITOR_SOURCE_DIR;
}

bool run_serve_verb(const ServeVerb& verb, std::ostream& out) {
  if (!verb.serve->parsed()) return false;
  server::ServerOptions options;
  options.host = verb.host;
  options.port = static_cast<int>(verb.port);
  options.root = verb.root;
  options.editor_dir = verb.editor.empty() ? default_editor_dir() : verb.editor;
  options.max_body_bytes = static_cast<std::size_t>(verb.max_body_bytes);
  options.read.max_initializer_bytes = verb.max_initializer_bytes;
  options.max_tensor_bytes = verb.max_tensor_bytes;
  options.datasets = server::default_datasets(
      verb.datasets.empty() ? std::vector<std::string>{"mnist", "fashion-mnist"} : verb.datasets);

  // SIGINT and SIGTERM are taken by one thread that stops the server, not by
  // a handler interrupting whatever thread runs: blocked here, before any
  // thread starts, so that every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  server::Server server(std::move(options));
  if (!server.editor_found())
    spdlog::warn("no editor at {} (build it: cd editor && npm ci && npm run build; or give --editor "
                 "DIR): the API is served alone",
                 (verb.editor.empty() ? default_editor_dir() : verb.editor).string());
  spdlog::set_level(spdlog::level::info);  // training progress lines (stderr)
  out << "nodeflow serve: the editor and the API of " << fs::absolute(verb.root).string()
      << " at\n  " << server.url() << "\n(Ctrl-C stops the server)" << std::endl;

  std::thread waiter([&server, signals] {
    int received = 0;
    sigwait(&signals, &received);
    server.stop();
  });
  const bool served = server.run();
  // The server stopped by itself (a failure): end the waiter with a signal of its own.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  if (!served) throw IoError("the server stopped: listening failed");
  return true;
}

}  // namespace nodeflow::cli
