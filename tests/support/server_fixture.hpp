#pragma once
// A `nodeflow serve` server inside the test process: bound to an ephemeral
// loopback port, serving a scratch root, with a fixed token and a tiny
// dataset instead of MNIST, run on a thread of its own.
#include <httplib.h>
#undef _res  // server/http.hpp: <resolv.h>'s macro would rewrite Eigen's parameters

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "server/server.hpp"
#include "support/subprocess.hpp"

namespace nodeflow::testing {

/// "tiny": 48 training and 16 held-out 1x28x28 float32 samples of 10
/// classes, whose class is the pixel block that is lit; loads at once.
server::DatasetEntry tiny_dataset();

class ServerTest : public ::testing::Test {
 public:
  static constexpr const char* kToken = "test-token-0123456789";

  /// The JSON of a response body; a failed parse fails the test.
  static nlohmann::json body_of(const httplib::Result& result);

 protected:

  void SetUp() override;
  void TearDown() override;

  /// Options of the server SetUp starts; tests that need others restart it.
  virtual server::ServerOptions options();
  void start(server::ServerOptions options);
  void stop();

  /// A client that sends the token (Authorization: Bearer) and nothing else.
  std::unique_ptr<httplib::Client> client() const;
  /// A client without the token.
  std::unique_ptr<httplib::Client> bare_client() const;
  const std::filesystem::path& root() const { return scratch_.path(); }
  int port() const { return server_->port(); }

  ScratchDir scratch_{"nodeflow-server-test"};
  std::unique_ptr<server::Server> server_;
  std::thread thread_;
};

}  // namespace nodeflow::testing
