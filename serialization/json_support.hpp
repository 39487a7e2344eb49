#pragma once
// Reading JSON documents: parsing with a depth limit, JSON paths and the
// bounded rendering of offending values, so that every message reads
// "<path>: expected <what>, got <value>". The graph-document reader and the
// training configuration's reader (training/train_config.cpp) share them.
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace nodeflow::json_detail {

using Json = nlohmann::json;

/// Containers nested deeper than this are refused before the parser runs.
inline constexpr int kMaxDepth = 100;

/// Parses `text` as one JSON document. Throws InvalidGraph("invalid JSON: ...")
/// with the parser's line and column for a syntax error, and for nesting deeper
/// than kMaxDepth; throws InvalidGraph("<path>.<key>: duplicate key '<key>' ...")
/// for a key given twice in one object.
Json parse_json(std::string_view text);

/// Receives the elements of the arrays parse_json_streaming hands out.
class ElementSink {
 public:
  virtual ~ElementSink() = default;
  /// An array under root key `key` starts (once: a repeated key is refused).
  virtual void begin(std::string_view key) = 0;
  /// Element `index` of that array, complete; it is discarded afterwards (the
  /// sink may move it out to keep it).
  virtual void element(std::string_view key, std::size_t index, Json& item) = 0;
};

/// parse_json, except that each element of an array under one of the root
/// object's keys `streamed` goes to `sink` as soon as it is complete and is not
/// kept: the document returned holds those arrays empty. A large document is
/// then read one element at a time, each in the memory its predecessor freed,
/// instead of as one tree of millions of scattered allocations. Exceptions from
/// the sink propagate (the reader defers its own errors to keep their order).
Json parse_json_streaming(std::string_view text, std::initializer_list<std::string_view> streamed,
                          ElementSink& sink);

/// Compact JSON of `v` for messages, cut after about 200 characters ("...").
/// A string at the top is shown in single quotes: 'nodeflow.grph'.
std::string render(const Json& v);

/// "path.key", or "key" at the top of the document.
std::string child(const std::string& path, std::string_view key);
/// "path[i]", or "path[i] (name)" when the element has a string "name" that is
/// a valid name (one that is not is refused at "path[i].name", without it).
std::string element(const std::string& path, std::size_t i, const Json& item);

/// Throws InvalidGraph("<path>: expected <what>, got <render(v)>").
[[noreturn]] void expected(const std::string& path, const std::string& what, const Json& v);

/// Refuses keys of `obj` outside `required` and `optional` (naming the known
/// ones) and missing required keys. `obj` must be an object.
void check_keys(const Json& obj, const std::string& path,
                std::initializer_list<std::string_view> required,
                std::initializer_list<std::string_view> optional);

/// The integer value of a JSON integer that fits int64 (booleans and floats are
/// not integers here); false otherwise.
bool as_int64(const Json& v, std::int64_t& out);

/// What an int64 at least `min` is, for "expected ..." messages: "an integer
/// >= min" ("a non-negative integer" for 0), or for a JSON integer past int64
/// (which as_int64 refuses) the upper bound too, so that a too-large value is
/// not called too small.
std::string int64_expectation(const Json& v, std::int64_t min);

/// Required string member.
std::string get_string(const Json& obj, const std::string& path, std::string_view key,
                       const std::string& what);

/// A name of the graph, a node or a tensor at `path` ("nodes[2].name",
/// "outputs[0]"): a JSON string (else expected(path, what, v)) that passes
/// check_name (core/names.hpp), else InvalidGraph "<path>: a name must not
/// contain control characters (U+001B at byte 3)".
std::string read_name(const Json& v, const std::string& path, const std::string& what);

}  // namespace nodeflow::json_detail
