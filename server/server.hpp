#pragma once
// `nodeflow serve`: the editor's files and a JSON API over the library on one
// HTTP server (docs/server.md), on cpp-httplib. Binds to loopback unless told
// otherwise; every /api/ request needs the token of the printed URL; Host and
// Origin must be the server's own; file paths stay inside the root.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "serialization/json_reader.hpp"
#include "core/executor.hpp"
#include "server/datasets.hpp"

namespace nodeflow::server {

/// The default of ServerOptions::max_body_bytes: 64 MiB, room for a graph
/// document with some 10 million float32 weights in base64 (the JSON writer's
/// form above 64 values), while a client cannot make the server hold more.
inline constexpr std::size_t kDefaultMaxBodyBytes = std::size_t{64} << 20;

struct ServerOptions {
  std::string host = "127.0.0.1";  ///< address to bind; 0.0.0.0 for every interface
  int port = 8080;                 ///< 0: a free port the system picks (tests)
  std::filesystem::path root = ".";  ///< the files the API lists, opens and saves
  /// The editor's built files (editor/dist), served at /; empty or missing:
  /// / answers 404 saying how to build it.
  std::filesystem::path editor_dir;
  std::string token;  ///< empty: random_token()
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  ReadOptions read;   ///< the graph reader's limits
  std::uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;
  std::size_t threads = 8;  ///< connections served at once (an event stream holds one)
  DatasetCatalog datasets;  ///< what POST /api/train may train on
};

class Server {
 public:
  /// Checks the options and binds the socket. Throws nodeflow::IoError when
  /// the root is not a directory or the address cannot be bound (naming it).
  explicit Server(ServerOptions options);
  ~Server();  ///< stops the server and every training run
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  const std::string& token() const;
  /// http://HOST:PORT/?token=TOKEN (127.0.0.1 for a server bound to every interface).
  std::string url() const;
  /// True when the editor's index.html is where editor_dir says.
  bool editor_found() const;

  /// Serves until stop(); returns false when listening failed.
  bool run();
  /// True while run() serves.
  bool running() const;
  /// Stops run() and the training runs; callable from any thread, and before run().
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nodeflow::server
