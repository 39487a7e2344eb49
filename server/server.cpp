#include "server/server.hpp"

#include "server/http.hpp"
#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "serialization/op_schema_json.hpp"
#include "server/access.hpp"
#include "server/http_support.hpp"
#include "server/routes.hpp"

namespace nodeflow::server {
namespace {

bool is_api(const std::string& path) { return path == "/api" || path.rfind("/api/", 0) == 0; }

// The message of an error status httplib set itself, or a route left empty.
std::string status_message(const httplib::Request& req, int status, std::size_t max_body,
                           bool editor) {
  switch (status) {
    case 404:
      if (is_api(req.path)) return "no API route " + req.method + " " + printable(req.path, 200);
      return editor ? "not found: " + printable(req.path, 200)
                    : "the editor is not built: run `npm ci && npm run build` in editor/, or give "
                      "`nodeflow serve --editor DIR`";
    case 413:
      // httplib holds form bodies to its own 8 KiB limit.
      if (req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0)
        return "a request body sent as application/x-www-form-urlencoded is limited to 8192 "
               "bytes: send JSON as application/json";
      return "request body over the limit of " + std::to_string(max_body) +
             " bytes (nodeflow serve --max-body-bytes)";
    case 414: return "request line too long";
    case 400: return "malformed request";
    default: return "HTTP status " + std::to_string(status);
  }
}

// Why a request whose method carries a body states no length, if it does not.
std::optional<std::string> length_required(const httplib::Request& req) {
  if (req.method != "POST" && req.method != "PUT") return std::nullopt;
  if (req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) return std::nullopt;
  return "a " + req.method +
         " request needs a Content-Length header (Content-Length: 0 for no body; curl sends it "
         "with -d '') or Transfer-Encoding: chunked";
}

}  // namespace

struct Server::Impl {
  Impl(ServerOptions o)
      : options(std::move(o)),
        api{RootDirectory(options.root), options.datasets, TrainingRuns(), options.read,
            options.max_tensor_bytes, op_schemas_json()},
        token(options.token.empty() ? random_token() : options.token) {}

  ServerOptions options;
  ApiContext api;
  std::string token;
  std::unique_ptr<AccessPolicy> access;
  httplib::Server http;
  int port = 0;
  bool editor = false;
  std::atomic<bool> stopped{false};
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& s = *impl_;
  const ServerOptions& o = s.options;
  std::error_code ec;
  s.editor = !o.editor_dir.empty() && std::filesystem::is_regular_file(o.editor_dir / "index.html", ec);

  s.http.set_payload_max_length(o.max_body_bytes);
  // httplib's default sets SO_REUSEPORT, with which a second server of the
  // same user binds the same port and silently shares its connections: a
  // port in use must be an error instead. SO_REUSEADDR alone lets a restart
  // bind while the last run's connections linger in TIME_WAIT.
  s.http.set_socket_options([](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  const std::size_t threads = std::max<std::size_t>(o.threads, 2);
  s.http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // The token travels in the URL: no page may be sent it as a Referer.
  s.http.set_default_headers({{"X-Content-Type-Options", "nosniff"},
                              {"X-Frame-Options", "DENY"},
                              {"Referrer-Policy", "no-referrer"},
                              {"Cache-Control", "no-store"}});
  s.http.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
    const std::optional<Refusal> refusal =
        s.access->check(req.get_header_value("Host"), req.get_header_value("Origin"),
                        req.has_header("Origin"), is_api(req.path),
                        req.get_header_value("Authorization"), req.get_param_value("token"));
    if (refusal) {
      send_error(res, refusal->status, refusal->message);
      return httplib::Server::HandlerResponse::Handled;
    }
    // A body of no stated length is read by httplib until the client closes
    // the connection, so `curl -X POST .../stop` (no body, no Content-Length)
    // would wait out the read timeout and get a bare 400: answer at once
    // (before the body is read) with what to send instead.
    if (const std::optional<std::string> message = length_required(req)) {
      send_error(res, 411, *message);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Every error status gets a JSON body: those httplib sets itself (404, 413)
  // and any a route left without one.
  s.http.set_error_handler(httplib::Server::HandlerWithResponse(
      [&s](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        send_error(res, res.status, status_message(req, res.status, s.options.max_body_bytes, s.editor));
        return httplib::Server::HandlerResponse::Handled;
      }));
  s.http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_error(res, 500, "internal error");
  });
  s.http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    // The path only: the query may hold the token.
    spdlog::debug("{} {} {}", req.method, printable(req.path, 200), res.status);
  });
  if (s.editor) s.http.set_mount_point("/", o.editor_dir.string());
  add_graph_routes(s.http, s.api);
  add_training_routes(s.http, s.api);

  if (o.port == 0) {
    s.port = s.http.bind_to_any_port(o.host);
    if (s.port < 0) s.port = 0;
  } else if (o.port > 0 && o.port < 65536 && s.http.bind_to_port(o.host, o.port)) {
    s.port = o.port;
  }
  if (s.port == 0)
    throw IoError("cannot listen on " + o.host + " port " + std::to_string(o.port) +
                  " (in use, or not an address of this machine)");
  s.access = std::make_unique<AccessPolicy>(o.host, s.port, s.token);
}

Server::~Server() { stop(); }

int Server::port() const { return impl_->port; }
const std::string& Server::token() const { return impl_->token; }
bool Server::editor_found() const { return impl_->editor; }

std::string Server::url() const {
  std::string host = impl_->options.host;
  if (host == "0.0.0.0" || host == "::") host = "127.0.0.1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(impl_->port) + "/?token=" + impl_->token;
}

bool Server::run() {
  if (impl_->stopped) return true;
  return impl_->http.listen_after_bind();
}

bool Server::running() const { return impl_->http.is_running(); }

void Server::stop() {
  impl_->stopped = true;
  impl_->api.runs.stop_all();
  impl_->http.stop();
}

}  // namespace nodeflow::server
