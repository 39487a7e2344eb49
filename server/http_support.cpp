#include "server/http_support.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <exception>
#include <new>

#include "core/errors.hpp"
#include "serialization/json_support.hpp"
#include "server/root_directory.hpp"
#include "server/training_runs.hpp"

namespace nodeflow::server {

void send_json(httplib::Response& res, int status, const Json& body) {
  // Messages quote user text: invalid UTF-8 in it is replaced, never a throw.
  send_json_text(res, status, body.dump(-1, ' ', false, Json::error_handler_t::replace));
}

void send_json_text(httplib::Response& res, int status, std::string body) {
  res.status = status;
  if (body.empty() || body.back() != '\n') body += '\n';
  res.set_content(body, "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message) {
  send_json(res, status, Json{{"error", message}});
}

Json json_body(const httplib::Request& req) {
  Json body;
  try {
    body = json_detail::parse_json(req.body);
  } catch (const Error& e) {
    throw ApiError(400, std::string("request body: ") + e.what());
  }
  if (!body.is_object()) throw ApiError(400, "request body: expected a JSON object");
  return body;
}

void check_members(const Json& body, std::initializer_list<std::string_view> required,
                   std::initializer_list<std::string_view> optional) {
  try {
    json_detail::check_keys(body, "", required, optional);
  } catch (const Error& e) {
    // check_keys calls the top of a document "document".
    std::string message = e.what();
    if (message.rfind("document: ", 0) == 0) message.replace(0, 8, "request body");
    throw ApiError(400, message);
  }
}

std::string nested_message(const std::string& where, const std::string& message) {
  // check_keys and the JSON helpers call the top of a document "document".
  if (message.rfind("document: ", 0) == 0) return where + message.substr(8);
  std::size_t n = 0;
  while (n < message.size() && (std::isalnum(static_cast<unsigned char>(message[n])) || message[n] == '_')) ++n;
  const bool path = n > 0 && n < message.size() &&
                    (message[n] == '.' || message[n] == '[' || message[n] == ':' ||
                     message.compare(n, 2, " (") == 0);
  return where + (path ? "." : ": ") + message;
}

const Json& member(const Json& body, const std::string& key, const char* what) {
  const auto it = body.find(key);
  if (it == body.end()) throw ApiError(400, "request body: missing \"" + key + "\" (" + what + ")");
  return *it;
}

httplib::Server::Handler guarded(httplib::Server::Handler handler) {
  return [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const ApiError& e) {
      send_error(res, e.status(), e.what());
    } catch (const PathRefused& e) {
      send_error(res, e.status(), e.what());
    } catch (const BusyError& e) {
      send_error(res, 409, e.what());
    } catch (const Error& e) {
      send_error(res, 400, e.what());
    } catch (const std::bad_alloc&) {
      send_error(res, 503, "out of memory");
    } catch (const std::exception& e) {
      spdlog::error("{} {}: {}", req.method, req.path, e.what());
      send_error(res, 500, e.what());
    }
  };
}

}  // namespace nodeflow::server
