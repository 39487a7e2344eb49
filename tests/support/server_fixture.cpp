#include "support/server_fixture.hpp"

#include <chrono>
#include <nlohmann/json.hpp>

namespace nodeflow::testing {

server::DatasetEntry tiny_dataset() {
  server::DatasetEntry entry;
  entry.name = "tiny";
  entry.description = "64 lit-block digits";
  entry.problem = [] { return std::string(); };
  entry.load = [] {
    const auto make = [](std::int64_t n, std::int64_t offset) {
      training::Dataset d;
      d.num_classes = 10;
      d.samples = Tensor(DType::Float32, {n, 1, 28, 28});
      float* x = d.samples.data<float>();
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t label = (i + offset) % 10;
        d.labels.push_back(label);
        for (std::int64_t k = 0; k < 78; ++k) x[i * 784 + label * 78 + k] = 1.0f;
      }
      return d;
    };
    return server::SplitDataset{make(48, 0), make(16, 3)};
  };
  return entry;
}

server::ServerOptions ServerTest::options() {
  server::ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.root = root();
  o.token = kToken;
  o.threads = 12;
  o.datasets = {tiny_dataset()};
  return o;
}

void ServerTest::SetUp() { start(options()); }

void ServerTest::TearDown() { stop(); }

void ServerTest::start(server::ServerOptions o) {
  stop();
  server_ = std::make_unique<server::Server>(std::move(o));
  thread_ = std::thread([this] { server_->run(); });
  for (int i = 0; i < 500 && !server_->running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(server_->running());
}

void ServerTest::stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

std::unique_ptr<httplib::Client> ServerTest::bare_client() const {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port());
  c->set_read_timeout(30, 0);
  return c;
}

std::unique_ptr<httplib::Client> ServerTest::client() const {
  auto c = bare_client();
  c->set_bearer_token_auth(kToken);
  return c;
}

nlohmann::json ServerTest::body_of(const httplib::Result& result) {
  if (!result) {
    ADD_FAILURE() << "no response: " << httplib::to_string(result.error());
    return nullptr;
  }
  try {
    return nlohmann::json::parse(result->body);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "): " << result->body.substr(0, 300);
    return nullptr;
  }
}

}  // namespace nodeflow::testing
