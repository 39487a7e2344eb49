#include "serialization/json_support.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

#include "core/errors.hpp"
#include "core/names.hpp"

namespace nodeflow::json_detail {
namespace {

constexpr std::size_t kRenderLimit = 200;

/// Cuts `s` to at most `limit` bytes without splitting a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t limit) {
  if (s.size() <= limit) return s;
  std::size_t n = limit;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
  return s.substr(0, n);
}

/// Text from the document shown inside a message: control characters escaped.
std::string plain(std::string_view s) { return printable(s, kRenderLimit); }

void render_to(const Json& v, std::string& out) {
  if (out.size() > kRenderLimit) return;
  switch (v.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : v.items()) {
        if (out.size() > kRenderLimit) return;
        if (!first) out += ", ";
        first = false;
        render_to(Json(std::string(utf8_prefix(key, kRenderLimit))), out);
        out += ": ";
        render_to(item, out);
      }
      out += '}';
      return;
    }
    case Json::value_t::array: {
      out += '[';
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (out.size() > kRenderLimit) return;
        if (i) out += ", ";
        render_to(v[i], out);
      }
      out += ']';
      return;
    }
    case Json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      // nlohmann escapes C0 controls but leaves DEL and the C1 controls raw;
      // they reach terminals too, so they become JSON \u escapes here.
      const std::string quoted = Json(std::string(utf8_prefix(s, kRenderLimit)))
                                     .dump(-1, ' ', false, Json::error_handler_t::replace);
      for (std::size_t i = 0; i < quoted.size(); ++i) {
        const auto c = static_cast<unsigned char>(quoted[i]);
        const auto next = i + 1 < quoted.size() ? static_cast<unsigned char>(quoted[i + 1]) : 0;
        if (c == 0x7f) {
          out += "\\u007f";
        } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[next >> 4];
          out += kHex[next & 0xf];
          ++i;
        } else {
          out += quoted[i];
        }
      }
      return;
    }
    default:
      out += v.dump();
      return;
  }
}

[[noreturn]] void syntax_error(std::string_view text, const nlohmann::json::exception& e) {
  std::string message = e.what();
  // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep its position.
  if (const auto tag_end = message.find("] "); message.rfind("[json.exception.", 0) == 0 &&
                                              tag_end != std::string::npos)
    message.erase(0, tag_end + 2);
  if (const auto* pe = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
    std::size_t start = pe->byte > 0 ? std::min<std::size_t>(pe->byte - 1, text.size()) : 0;
    while (start > 0 && (std::isalpha(static_cast<unsigned char>(text[start - 1])) ||
                         text[start - 1] == '-'))
      --start;
    std::string_view token = text.substr(start);
    if (!token.empty() && token[0] == '-') token.remove_prefix(1);
    for (std::string_view word : {"NaN", "nan", "Infinity", "inf", "Inf"})
      if (token.substr(0, word.size()) == word) {
        message += " (NaN is not a JSON number; NaN and infinities travel as base64)";
        break;
      }
  }
  throw InvalidGraph("invalid JSON: " + plain(message));
}

void check_depth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    }
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        throw InvalidGraph("invalid JSON: nesting deeper than " + std::to_string(kMaxDepth) +
                           " levels at line " + std::to_string(line) + ", column " +
                           std::to_string(i - line_start + 1));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

/// nlohmann's SAX events building the same tree as its DOM parser, handing out
/// the streamed arrays' elements. A key given twice in one object is refused
/// (nlohmann would keep the later value and silently drop the earlier one).
class StreamingBuilder {
 public:
  StreamingBuilder(std::initializer_list<std::string_view> streamed, ElementSink& sink)
      : streamed_(streamed), sink_(sink) {}

  Json& root() { return root_; }

  bool null() { return scalar(Json(nullptr)); }
  bool boolean(bool v) { return scalar(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return scalar(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return scalar(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return scalar(Json(v)); }
  bool string(Json::string_t& v) { return scalar(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return scalar(Json::binary(std::move(v))); }
  bool start_object(std::size_t) {
    open_.push_back(place(Json::object()));
    return true;
  }
  bool start_array(std::size_t) {
    const bool stream = open_.size() == 1 && open_.back()->is_object() && is_streamed(key_);
    open_.push_back(place(Json::array()));
    if (stream) {
      stream_ = open_.back();
      stream_key_ = key_;
      stream_index_ = 0;
      sink_.begin(stream_key_);
    }
    return true;
  }
  bool key(Json::string_t& k) {
    if (open_.back()->contains(k))
      throw InvalidGraph(child(open_path(), k) + ": duplicate key '" + plain(k) +
                         "' (each key may appear once in an object)");
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  template <typename Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;  // the concrete type, as nlohmann's own DOM parser throws it
  }

 private:
  bool is_streamed(const std::string& key) const {
    for (std::string_view k : streamed_)
      if (k == key) return true;
    return false;
  }

  /// The JSON path of the innermost open container, as the reader's messages
  /// spell it ("nodes[3] (pool1).attributes"); built only for an error.
  std::string open_path() const {
    std::string path;
    for (std::size_t level = 1; level < open_.size(); ++level) {
      const Json& parent = *open_[level - 1];
      const Json* self = open_[level];
      if (parent.is_array()) {
        // A streamed array keeps none of its finished elements.
        const std::size_t index = &parent == stream_ ? stream_index_ : parent.size() - 1;
        path = element(path, index, *self);
      } else {
        for (const auto& [name, value] : parent.items())
          if (&value == self) path = child(path, name);
      }
    }
    return path;
  }

  Json* place(Json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    Json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }

  bool scalar(Json&& v) {
    place(std::move(v));
    if (!open_.empty() && open_.back() == stream_) deliver();
    return true;
  }

  bool close() {
    if (open_.back() == stream_) stream_ = nullptr;
    open_.pop_back();
    if (!open_.empty() && open_.back() == stream_) deliver();
    return true;
  }

  void deliver() {
    auto& items = stream_->get_ref<Json::array_t&>();
    sink_.element(stream_key_, stream_index_++, items.back());
    items.pop_back();
  }

  std::initializer_list<std::string_view> streamed_;
  ElementSink& sink_;
  Json root_;
  std::vector<Json*> open_;  ///< containers being filled, outermost first
  std::string key_;          ///< the last key read
  Json* stream_ = nullptr;   ///< the streamed array being filled, if any
  std::string stream_key_;
  std::size_t stream_index_ = 0;
};

}  // namespace

Json parse_json_streaming(std::string_view text, std::initializer_list<std::string_view> streamed,
                          ElementSink& sink) {
  check_depth(text);
  StreamingBuilder builder(streamed, sink);
  try {
    Json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const nlohmann::json::exception& e) {
    syntax_error(text, e);
  }
  return std::move(builder.root());
}

Json parse_json(std::string_view text) {
  // The streaming builder with nothing streamed: the same tree, and the same
  // refusal of duplicate keys, as for a graph document.
  class NoElements : public ElementSink {
    void begin(std::string_view) override {}
    void element(std::string_view, std::size_t, Json&) override {}
  } none;
  return parse_json_streaming(text, {}, none);
}

std::string render(const Json& v) {
  std::string out;
  if (v.is_string()) {
    out += '\'';
    out += plain(v.get_ref<const std::string&>());
    out += '\'';
    return out;
  }
  render_to(v, out);
  if (out.size() > kRenderLimit) {
    out = std::string(utf8_prefix(out, kRenderLimit));
    out += "...";
  }
  return out;
}

std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? plain(key) : path + "." + plain(key);
}

std::string element(const std::string& path, std::size_t i, const Json& item) {
  std::string out = path + "[" + std::to_string(i) + "]";
  if (item.is_object())
    if (const auto it = item.find("name"); it != item.end() && it->is_string() &&
                                           name_problem(it->get_ref<const std::string&>()).empty())
      out += " (" + plain(it->get_ref<const std::string&>()) + ")";
  return out;
}

void expected(const std::string& path, const std::string& what, const Json& v) {
  throw InvalidGraph((path.empty() ? std::string("document") : path) + ": expected " + what +
                     ", got " + render(v));
}

void check_keys(const Json& obj, const std::string& path,
                std::initializer_list<std::string_view> required,
                std::initializer_list<std::string_view> optional) {
  for (const auto& [key, value] : obj.items()) {
    bool known = false;
    for (auto k : required) known = known || k == key;
    for (auto k : optional) known = known || k == key;
    if (known) continue;
    std::string list;
    for (auto k : required) list += (list.empty() ? "" : ", ") + std::string(k);
    for (auto k : optional) list += (list.empty() ? "" : ", ") + std::string(k);
    throw InvalidGraph(child(path, key) + ": unknown key '" + plain(key) + "' (known: " + list +
                       ")");
  }
  for (auto k : required)
    if (!obj.contains(k))
      throw InvalidGraph((path.empty() ? std::string("document") : path) +
                         ": missing required key '" + std::string(k) + "'");
}

bool as_int64(const Json& v, std::int64_t& out) {
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    out = v.get<std::int64_t>();
    return true;
  }
  if (v.is_number_unsigned() &&
      v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    out = static_cast<std::int64_t>(v.get<std::uint64_t>());
    return true;
  }
  return false;
}

std::string int64_expectation(const Json& v, std::int64_t min) {
  if (v.is_number_unsigned() &&
      v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return "an integer from " + std::to_string(min) + " to " +
           std::to_string(std::numeric_limits<std::int64_t>::max());
  return min == 0 ? "a non-negative integer" : "an integer >= " + std::to_string(min);
}

std::string get_string(const Json& obj, const std::string& path, std::string_view key,
                       const std::string& what) {
  const Json& v = obj.at(key);
  if (!v.is_string()) expected(child(path, key), what, v);
  return v.get<std::string>();
}

std::string read_name(const Json& v, const std::string& path, const std::string& what) {
  if (!v.is_string()) expected(path, what, v);
  const auto& name = v.get_ref<const std::string&>();
  check_name(name, [&] { return path; });
  return name;
}

}  // namespace nodeflow::json_detail
