#include "server/access.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <array>
#include <charconv>

#include "core/errors.hpp"

namespace nodeflow::server {
namespace {

// An IPv4 address in dotted form, or a bracketed IPv6 address.
bool is_ip_literal(std::string_view name) {
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
    for (char c : name.substr(1, name.size() - 2))
      if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return false;
    return true;
  }
  int parts = 0;
  std::size_t at = 0;
  while (at <= name.size()) {
    const std::size_t end = std::min(name.find('.', at), name.size());
    unsigned value = 256;
    const auto [ptr, ec] = std::from_chars(name.data() + at, name.data() + end, value);
    if (ec != std::errc() || ptr != name.data() + end || end == at || end - at > 3 || value > 255)
      return false;
    ++parts;
    at = end + 1;
  }
  return parts == 4;
}

bool is_wildcard(std::string_view host) { return host == "0.0.0.0" || host == "::" || host == "[::]"; }

// "::1" is written "[::1]" in a Host header.
std::string as_host_name(const std::string& host) {
  return host.find(':') != std::string::npos && host.front() != '[' ? "[" + host + "]" : host;
}

}  // namespace

std::string random_token() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
    throw Error("cannot draw the server's token: the random generator failed");
  constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

AccessPolicy::AccessPolicy(std::string host, int port, std::string token)
    : host_(as_host_name(host)), port_(port), token_(std::move(token)) {}

bool AccessPolicy::host_allowed(std::string_view host) const {
  const std::size_t colon = host.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view name = host.substr(0, colon);
  const std::string_view port = host.substr(colon + 1);
  int value = -1;
  const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || ptr != port.data() + port.size() || value != port_) return false;
  if (name == host_ || name == "localhost" || name == "127.0.0.1" || name == "[::1]") return true;
  return is_wildcard(host_) && is_ip_literal(name);
}

bool AccessPolicy::origin_allowed(std::string_view origin) const {
  constexpr std::string_view kScheme = "http://";
  return origin.substr(0, kScheme.size()) == kScheme && host_allowed(origin.substr(kScheme.size()));
}

bool AccessPolicy::token_matches(std::string_view token) const {
  return token.size() == token_.size() && CRYPTO_memcmp(token.data(), token_.data(), token.size()) == 0;
}

std::optional<Refusal> AccessPolicy::check(std::string_view host, std::string_view origin,
                                           bool has_origin, bool api,
                                           std::string_view authorization,
                                           std::string_view query_token) const {
  if (!host_allowed(host))
    return Refusal{403, "the Host header must name this server (" + host_ + ":" +
                            std::to_string(port_) + ", localhost or 127.0.0.1 with its port)"};
  if (has_origin && !origin_allowed(origin))
    return Refusal{403, "requests from another origin are refused (Origin must be this "
                        "server's own, http://" + host_ + ":" + std::to_string(port_) + ")"};
  if (!api) return std::nullopt;
  constexpr std::string_view kBearer = "Bearer ";
  std::string_view token = query_token;
  if (!authorization.empty()) {
    if (authorization.substr(0, kBearer.size()) != kBearer)
      return Refusal{401, "the Authorization header must be 'Bearer <token>'"};
    token = authorization.substr(kBearer.size());
  }
  if (token.empty())
    return Refusal{401, "the API needs the token printed with the server's URL (Authorization: "
                        "Bearer <token>, or ?token=<token>)"};
  if (!token_matches(token)) return Refusal{401, "wrong token"};
  return std::nullopt;
}

}  // namespace nodeflow::server
