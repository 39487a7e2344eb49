#pragma once
// Who may talk to the server (docs/server.md, "Security"): the Host header
// must name this server (a web page elsewhere cannot reach it through DNS
// rebinding), an Origin, when sent, must be this server's own (no other page
// can drive it from a browser), and every /api/ request carries the token
// printed with the URL, as Jupyter's does.
#include <optional>
#include <string>
#include <string_view>

namespace nodeflow::server {

/// A refusal: the HTTP status (401, 403) and the message of the JSON error.
struct Refusal {
  int status = 0;
  std::string message;
};

/// 32 random bytes (OpenSSL's RAND_bytes) as 64 lowercase hex digits. Throws
/// nodeflow::Error when the generator fails.
std::string random_token();

/// The checks of one server: its bound host and port and its token.
class AccessPolicy {
 public:
  AccessPolicy(std::string host, int port, std::string token);

  /// True when a Host header value names this server: "<name>:<port>" with
  /// the bound host, localhost, 127.0.0.1 or [::1] as name and the bound port
  /// (the port may be left out only as browsers never do: it is required).
  /// When bound to all interfaces (0.0.0.0, ::), any IP literal (never a DNS
  /// name, which rebinding could point anywhere) with the port is accepted too.
  bool host_allowed(std::string_view host) const;

  /// True when an Origin header value is this server's: "http://" followed by
  /// a value host_allowed accepts.
  bool origin_allowed(std::string_view origin) const;

  /// True when `token` equals the server's (compared in constant time).
  bool token_matches(std::string_view token) const;

  /// The token of a request: the Authorization header's "Bearer <token>",
  /// else the `token` query parameter (EventSource cannot set headers).
  /// Returns the refusal of a request that has neither, or a wrong one.
  /// `host` and `origin` are the request's headers ("" when absent),
  /// `api` whether the path is under /api/.
  std::optional<Refusal> check(std::string_view host, std::string_view origin, bool has_origin,
                               bool api, std::string_view authorization,
                               std::string_view query_token) const;

  const std::string& token() const { return token_; }

 private:
  std::string host_;
  int port_;
  std::string token_;
};

}  // namespace nodeflow::server
