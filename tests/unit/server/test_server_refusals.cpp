// What `nodeflow serve` refuses (docs/server.md, "Security"): requests without
// the token, from another origin or for another host, paths out of the root,
// oversized bodies, malformed requests; each with a JSON error and its status.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "support/files.hpp"
#include "support/server_fixture.hpp"
#include "unit/server/server_documents.hpp"

namespace nodeflow::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

using ServerRefusals = ServerTest;

struct Route {
  std::string method, path;
};

const std::vector<Route>& api_routes() {
  static const std::vector<Route> routes{
      {"GET", "/api/ops"},        {"POST", "/api/check"},       {"GET", "/api/files"},
      {"GET", "/api/files/a.json"}, {"PUT", "/api/files/a.json"}, {"POST", "/api/run"},
      {"GET", "/api/datasets"},   {"POST", "/api/train"},       {"GET", "/api/train/1"},
      {"GET", "/api/train/1/events"}, {"POST", "/api/train/1/stop"}, {"GET", "/api/train/1/graph"},
      {"POST", "/api/train/1/save"},  {"GET", "/api/nothing"}};
  return routes;
}

httplib::Result send(httplib::Client& c, const Route& r, const httplib::Headers& headers = {}) {
  if (r.method == "GET") return c.Get(r.path, headers);
  if (r.method == "PUT") return c.Put(r.path, headers, pool_document(), "application/json");
  return c.Post(r.path, headers, pool_document(), "application/json");
}

void expect_error(const httplib::Result& r, int status, const std::string& message_start) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, status) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  const Json body = ServerTest::body_of(r);
  ASSERT_TRUE(body.contains("error")) << r->body;
  EXPECT_EQ(body["error"].get<std::string>().rfind(message_start, 0), 0u) << body["error"];
}

TEST_F(ServerRefusals, EveryApiRouteNeedsTheToken) {
  write_text(root() / "a.json", pool_document());
  for (const Route& r : api_routes()) {
    SCOPED_TRACE(r.method + " " + r.path);
    expect_error(send(*bare_client(), r), 401, "the API needs the token");
    expect_error(send(*bare_client(), r, {{"Authorization", "Bearer wrong"}}), 401, "wrong token");
    expect_error(send(*bare_client(), r, {{"Authorization", std::string("Basic ") + kToken}}), 401,
                 "the Authorization header must be 'Bearer <token>'");
  }
  EXPECT_EQ(std::string(read_bytes(root() / "a.json")), pool_document());
  EXPECT_FALSE(fs::exists(root() / "a.json.tmp"));
}

TEST_F(ServerRefusals, TheTokenMayComeInTheQuery) {
  const auto r = bare_client()->Get(std::string("/api/files?token=") + kToken);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  expect_error(bare_client()->Get("/api/files?token=test-token"), 401, "wrong token");
}

TEST_F(ServerRefusals, AForeignOriginIsRefusedEverywhere) {
  for (const std::string& origin : {std::string("http://evil.example"), std::string("null"),
                                    "http://127.0.0.1:" + std::to_string(port() + 1),
                                    "https://127.0.0.1:" + std::to_string(port())}) {
    SCOPED_TRACE(origin);
    for (const Route& r : api_routes())
      expect_error(send(*client(), r, {{"Origin", origin}}), 403, "requests from another origin are refused");
    expect_error(bare_client()->Get("/", {{"Origin", origin}}), 403, "requests from another origin");
  }
  for (const std::string& own : {"http://127.0.0.1:" + std::to_string(port()),
                                 "http://localhost:" + std::to_string(port())}) {
    const auto r = client()->Get("/api/ops", {{"Origin", own}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << own;
  }
}

TEST_F(ServerRefusals, AForeignHostIsRefused) {
  // DNS rebinding: a name the attacker controls pointed at 127.0.0.1.
  for (const std::string& host : {"evil.example:" + std::to_string(port()), std::string("127.0.0.1"),
                                  "127.0.0.1:" + std::to_string(port() + 1), std::string("")}) {
    SCOPED_TRACE(host);
    expect_error(client()->Get("/api/ops", {{"Host", host}}), 403, "the Host header must name this server");
  }
  const auto ok = client()->Get("/api/ops", {{"Host", "localhost:" + std::to_string(port())}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(ServerRefusals, PathsStayInsideTheRoot) {
  const fs::path outside = root().parent_path() / (root().filename().string() + "-outside");
  fs::create_directories(outside);
  write_text(outside / "secret.json", pool_document());
  fs::create_symlink(outside / "secret.json", root() / "link.json");
  fs::create_symlink(outside, root() / "linked");
  auto c = client();
  c->set_url_encode(false);
  const std::vector<std::pair<std::string, int>> cases{
      {"../x.json", 400},          {"%2e%2e/x.json", 400},   {"a/../../x.json", 400},
      {"a//b.json", 400},          {"./a.json", 400},        {".hidden.json", 400},
      {"x.txt", 400},              {"a%00b.json", 400},      {"a%5cb.json", 400},
      {"link.json", 403},          {"linked/secret.json", 403}};
  for (const auto& [path, status] : cases) {
    SCOPED_TRACE(path);
    const auto get = c->Get("/api/files/" + path);
    ASSERT_TRUE(get);
    EXPECT_EQ(get->status, status) << get->body;
    const auto put = c->Put("/api/files/" + path, pool_document(), "application/json");
    ASSERT_TRUE(put);
    EXPECT_EQ(put->status, status) << put->body;
  }
  // An absolute path reaches the route as /api/files//etc/...: refused too.
  EXPECT_EQ(c->Get("/api/files//etc/passwd.json")->status, 400);
  EXPECT_EQ(read_bytes(outside / "secret.json"), pool_document());
  EXPECT_EQ(std::distance(fs::directory_iterator(outside), fs::directory_iterator()), 1);
  fs::remove_all(outside);
}

TEST_F(ServerRefusals, AListingLeavesOutLinksThatLeadOut) {
  const fs::path outside = root().parent_path() / (root().filename().string() + "-out2");
  fs::create_directories(outside);
  write_text(outside / "secret.json", "{}");
  fs::create_symlink(outside / "secret.json", root() / "link.json");
  fs::create_symlink(outside, root() / "linked");
  write_text(root() / "in.json", "{}");
  fs::create_symlink(root() / "in.json", root() / "alias.json");
  const Json files = body_of(client()->Get("/api/files"))["files"];
  ASSERT_EQ(files.size(), 2u) << files;
  EXPECT_EQ(files[0]["path"], "alias.json");
  EXPECT_EQ(files[1]["path"], "in.json");
  fs::remove_all(outside);
}

TEST_F(ServerRefusals, OversizedBodiesAreRefused) {
  server::ServerOptions o = options();
  o.max_body_bytes = 4096;
  start(o);
  const std::string big(5000, ' ');
  expect_error(client()->Post("/api/check", big, "application/json"), 413,
               "request body over the limit of 4096 bytes");
  expect_error(client()->Put("/api/files/big.json", big, "application/json"), 413,
               "request body over the limit of 4096 bytes");
  EXPECT_FALSE(fs::exists(root() / "big.json"));
  // Without the token the body is not even read.
  expect_error(bare_client()->Post("/api/check", big, "application/json"), 401, "the API needs the token");
  // The server goes on serving.
  const auto r = client()->Post("/api/check", pool_document(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(ServerRefusals, MalformedBodiesGetAnErrorNamingThem) {
  expect_error(client()->Post("/api/run", "{\"graph\": [", "application/json"), 400,
               "request body: invalid JSON");
  expect_error(client()->Post("/api/run", "[1]", "application/json"), 400,
               "request body: expected a JSON object");
  expect_error(client()->Post("/api/run", "{\"inputs\": {}}", "application/json"), 400,
               "request body: missing required key 'graph'");
  expect_error(client()->Post("/api/run", "{\"graph\": 1, \"inputs\": {}}", "application/json"), 400,
               "graph: expected a graph document");
  expect_error(client()->Post("/api/run", "{\"graph\": {}, \"inputs\": {}, \"extra\": 1}", "application/json"),
               400, "extra: unknown key 'extra'");
  std::string deep(200, '[');
  expect_error(client()->Post("/api/run", deep, "application/json"), 400, "request body: invalid JSON");
}

// Sends `request` as it is on a new connection and returns what the server
// answered within 3 s (httplib's read timeout, which a body of no stated
// length would wait out, is 5 s).
std::string raw_exchange(int port, const std::string& request) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  timeval timeout{3, 0};
  ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string answer;
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::send(s, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    // Until the JSON body's closing brace and newline, the connection's end, or the timeout.
    while (answer.find("}\n") == std::string::npos) {
      const ssize_t n = ::recv(s, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      answer.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(s);
  return answer;
}

TEST_F(ServerRefusals, ABodyOfNoStatedLengthIsRefusedAtOnce) {
  const std::string head = "Host: 127.0.0.1:" + std::to_string(port()) + "\r\nAuthorization: Bearer " + kToken + "\r\n";
  const std::string answer = raw_exchange(port(), "POST /api/train/1/stop HTTP/1.1\r\n" + head + "\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 411", 0), 0u) << answer;
  EXPECT_NE(answer.find("{\"error\":\"a POST request needs a Content-Length header (Content-Length: 0 for no body"),
            std::string::npos)
      << answer;
  // The token is still checked first; with a length the request goes through.
  EXPECT_EQ(raw_exchange(port(), "PUT /api/files/a.json HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port()) + "\r\n\r\n")
                .rfind("HTTP/1.1 401", 0),
            0u);
  const std::string stop = raw_exchange(port(), "POST /api/train/1/stop HTTP/1.1\r\n" + head + "Content-Length: 0\r\n\r\n");
  EXPECT_EQ(stop.rfind("HTTP/1.1 404", 0), 0u) << stop;
  EXPECT_NE(stop.find("no training run 1"), std::string::npos) << stop;
}

TEST_F(ServerRefusals, ALongHeaderIsRefusedAndTheServerGoesOn) {
  const auto r = client()->Get("/api/ops", {{"X-Long", std::string(20000, 'a')}});
  if (r) {
    EXPECT_GE(r->status, 400);  // httplib answers 400, or closes the connection
  }
  const auto after = client()->Get("/api/ops");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

TEST_F(ServerRefusals, UnknownRoutesAndTheMissingEditorAnswerJson) {
  expect_error(client()->Get("/api/nothing"), 404, "no API route GET /api/nothing");
  expect_error(client()->Delete("/api/files/a.json"), 404, "no API route DELETE /api/files/a.json");
  expect_error(bare_client()->Get("/"), 404, "the editor is not built");
}

TEST_F(ServerRefusals, TheEditorIsServedWithoutTheToken) {
  const fs::path editor = root() / "editor-dist";
  fs::create_directories(editor / "assets");
  write_text(editor / "index.html", "<!doctype html><title>nodeflow</title>");
  write_text(editor / "assets" / "app.js", "console.log(1);");
  server::ServerOptions o = options();
  o.editor_dir = editor;
  start(o);
  const auto index = bare_client()->Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->body, "<!doctype html><title>nodeflow</title>");
  EXPECT_EQ(index->get_header_value("Referrer-Policy"), "no-referrer");
  const auto js = bare_client()->Get(std::string("/assets/app.js?token=") + kToken);
  ASSERT_TRUE(js);
  EXPECT_EQ(js->status, 200);
  EXPECT_NE(js->get_header_value("Content-Type").find("javascript"), std::string::npos);
  auto raw = bare_client();
  raw->set_url_encode(false);
  EXPECT_GE(raw->Get("/../index.html")->status, 400);
}

TEST(ServerStart, AnAddressInUseOrABadRootIsAnError) {
  ScratchDir scratch("nodeflow-server-start");
  server::ServerOptions o;
  o.port = 0;
  o.root = scratch.path() / "missing";
  EXPECT_THROW(server::Server{o}, IoError);
  o.root = scratch.path();
  server::Server first(o);
  o.port = first.port();
  EXPECT_THROW(server::Server{o}, IoError);
  EXPECT_EQ(first.url().rfind("http://127.0.0.1:" + std::to_string(first.port()) + "/?token=", 0), 0u);
  EXPECT_EQ(first.token().size(), 64u);
}

}  // namespace
}  // namespace nodeflow::testing
