#pragma once
// The JSON side of every API route (docs/server.md, "Errors"): request bodies
// parsed with the graph reader's limits, responses and errors as JSON, and
// the one place where an exception becomes a status.
#include "server/http.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <initializer_list>
#include <string>
#include <string_view>

namespace nodeflow::server {

using Json = nlohmann::json;

/// An error with its HTTP status; the message becomes {"error": message}.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

/// Sets `res` to `status` with the body `body` (application/json).
void send_json(httplib::Response& res, int status, const Json& body);
/// Sets `res` to `status` with a body already written as JSON text.
void send_json_text(httplib::Response& res, int status, std::string body);
/// {"error": message} with `status`.
void send_error(httplib::Response& res, int status, const std::string& message);

/// The request's body as one JSON value: the reader's syntax and nesting
/// checks (json_detail::parse_json); ApiError 400 "request body: invalid JSON
/// ..." otherwise, or when it is not an object.
Json json_body(const httplib::Request& req);

/// Refuses members of `body` outside `required` and `optional`, and missing
/// required ones (json_detail::check_keys' words): ApiError 400.
void check_members(const Json& body, std::initializer_list<std::string_view> required,
                   std::initializer_list<std::string_view> optional);

/// `message`, an error about a part of a request, named from the request's
/// top: "graph.nodes[1] (fc).inputs[0]: ..." for a message that begins with a
/// path, "graph: invalid JSON ..." for one that does not.
std::string nested_message(const std::string& where, const std::string& message);

/// The member `key` of the request object `body`, required; ApiError 400 naming it.
const Json& member(const Json& body, const std::string& key, const char* what);

/// A route's handler with every exception turned into a JSON error: ApiError
/// and PathRefused with their status; the library's errors (a graph refused,
/// a file that cannot be read, a tensor of the wrong shape) 400; BusyError
/// 409; std::bad_alloc 503; anything else 500 (a save that failed is an
/// ApiError 500 of its route).
httplib::Server::Handler guarded(httplib::Server::Handler handler);

}  // namespace nodeflow::server
