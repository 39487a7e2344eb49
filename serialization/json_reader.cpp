#include "serialization/json_reader.hpp"

#include <exception>
#include <limits>

#include "core/errors.hpp"
#include "serialization/detail/json_init_rule.hpp"
#include "serialization/detail/json_parts.hpp"
#include "serialization/json_support.hpp"
#include "serialization/text_file.hpp"

namespace nodeflow {
namespace {

using json_detail::child;
using json_detail::element;
using json_detail::expected;
using json_detail::Json;

constexpr std::string_view kFormat = "nodeflow.graph";
constexpr std::int64_t kVersion = 1;

std::string known_dtypes() {
  std::string out;
  for (DType t : kGraphDTypes) out += (out.empty() ? "" : ", ") + std::string(dtype_name(t));
  return out;
}

DType read_dtype(const Json& obj, const std::string& path) {
  const Json& v = obj.at("dtype");
  DType t{};
  if (!v.is_string() || !parse_dtype(v.get_ref<const std::string&>(), t) || !is_graph_dtype(t))
    expected(child(path, "dtype"), "one of " + known_dtypes(), v);
  return t;
}

/// Dimensions >= 0, or null (kDynamicDim) where `allow_dynamic`; the element count
/// of the known dimensions must fit int64.
Shape read_shape(const Json& obj, const std::string& path, bool allow_dynamic) {
  const std::string where = child(path, "shape");
  const Json& v = obj.at("shape");
  const std::string what = allow_dynamic ? "a list of non-negative integers or null"
                                         : "a list of non-negative integers";
  if (!v.is_array()) expected(where, what, v);
  Shape shape;
  Shape known;
  for (const Json& d : v) {
    std::int64_t n = 0;
    if (allow_dynamic && d.is_null()) {
      shape.push_back(kDynamicDim);
    } else if (json_detail::as_int64(d, n) && n >= 0) {
      shape.push_back(n);
      known.push_back(n);
    } else {
      expected(where, what, v);
    }
  }
  if (is_static(shape)) {
    element_count(shape, where);
  } else {
    try {
      element_count(known, where);
    } catch (const ShapeMismatch&) {
      throw ShapeMismatch(where + ": element count of the known dimensions of " +
                          to_string(shape) + " overflows int64");
    }
  }
  return shape;
}

std::vector<std::string> read_names(const Json& v, const std::string& path, const std::string& what) {
  if (!v.is_array()) expected(path, what, v);
  std::vector<std::string> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(json_detail::read_name(v[i], path + "[" + std::to_string(i) + "]",
                                         "a tensor name (a string)"));
  return out;
}

bool read_bool(const Json& obj, const std::string& path, std::string_view key, bool fallback) {
  const auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_boolean()) expected(child(path, key), "true or false", *it);
  return it->get<bool>();
}

const Json& required_list(const Json& doc, std::string_view key, const std::string& what) {
  const Json& v = doc.at(key);
  if (!v.is_array()) expected(std::string(key), what, v);
  return v;
}

GraphInput read_input(const Json& item, const std::string& path) {
  if (!item.is_object()) expected(path, "an object with name, dtype and shape", item);
  json_detail::check_keys(item, path, {"name", "dtype", "shape"}, {});
  GraphInput in;
  in.name = json_detail::read_name(item.at("name"), child(path, "name"), "a tensor name (a string)");
  in.info.dtype = read_dtype(item, path);
  in.info.shape = read_shape(item, path, true);
  return in;
}

/// An initializer whose form is checked and whose bytes are counted, waiting
/// for the rest of the list to be counted too before its tensor is built.
struct PendingInitializer {
  std::string path;  ///< "initializers[1] (w)"
  Initializer init;  ///< all but the value
  DType dtype{};
  Shape shape;
  Json source;  ///< the "init" rule or the "data"
  bool is_rule = false;
};

/// Adds the initializer's bytes to the document's total, refusing to pass the
/// limit. `numel` * size fits int64.
void reserve_initializer_bytes(const Shape& shape, DType dtype, const std::string& path,
                               const ReadOptions& options, std::uint64_t& total) {
  const auto bytes = static_cast<std::uint64_t>(element_count(shape)) * dtype_size(dtype);
  if (bytes > options.max_initializer_bytes || total > options.max_initializer_bytes - bytes)
    throw InvalidGraph(child(path, "shape") + ": " + to_string(shape) + " " +
                       std::string(dtype_name(dtype)) + " needs " + std::to_string(bytes) +
                       " bytes, over the document's limit of " +
                       std::to_string(options.max_initializer_bytes) +
                       " bytes for initializers" +
                       (total > 0 ? " (" + std::to_string(total) + " already taken by earlier ones)"
                                  : std::string()) +
                       " (ReadOptions::max_initializer_bytes; on the command line "
                       "--max-initializer-bytes)");
  total += bytes;
}

/// Everything about an initializer but its values: keys, name, dtype, shape,
/// the count of its `data` (or base64 length), and its bytes counted against the
/// document's budget. Takes its `init` or `data` out of `item`.
PendingInitializer check_initializer(Json& item, const std::string& path,
                                     const ReadOptions& options, std::uint64_t& total_bytes) {
  if (!item.is_object()) expected(path, "an object with name, dtype, shape and data", item);
  json_detail::check_keys(item, path, {"name", "dtype", "shape"}, {"data", "init", "trainable"});
  if (!item.contains("data") && !item.contains("init"))
    throw InvalidGraph(path + ": missing required key 'data' (or 'init', an initialisation rule)");
  if (item.contains("data") && item.contains("init"))
    throw InvalidGraph(path + ": 'data' and 'init' exclude each other (give one)");
  PendingInitializer p;
  p.path = path;
  p.init.name =
      json_detail::read_name(item.at("name"), child(path, "name"), "a tensor name (a string)");
  p.dtype = read_dtype(item, path);
  p.shape = read_shape(item, path, false);
  if (element_count(p.shape) >
      std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(dtype_size(p.dtype)))
    throw ShapeMismatch(child(path, "shape") + ": byte count of " + to_string(p.shape) + " " +
                        std::string(dtype_name(p.dtype)) + " values overflows int64");
  p.is_rule = item.contains("init");
  // A list or base64 text too short for its shape is reported as such, before
  // the budget.
  if (!p.is_rule)
    json_detail::check_tensor_data(item.at("data"), p.dtype, p.shape, child(path, "data"));
  reserve_initializer_bytes(p.shape, p.dtype, path, options, total_bytes);
  p.init.trainable = read_bool(item, path, "trainable", false);
  p.source = std::move(item.at(p.is_rule ? "init" : "data"));
  return p;
}

Initializer build_initializer(PendingInitializer& p) {
  Initializer init = std::move(p.init);
  init.value = p.is_rule ? json_detail::read_init_rule(p.source, p.dtype, p.shape,
                                                       child(p.path, "init"))
                         : json_detail::read_tensor_data(p.source, p.dtype, p.shape,
                                                         child(p.path, "data"));
  p.source = Json();  // the values are in the tensor now
  return init;
}

NodeDef read_node(const Json& item, const std::string& path, const OpRegistry& registry) {
  if (!item.is_object()) expected(path, "an object with op_type, name and inputs", item);
  json_detail::check_keys(item, path, {"op_type", "name", "inputs"},
                          {"attributes", "specified_outputs_name", "training", "lda_coeff", "position"});
  NodeDef node;
  node.name = json_detail::read_name(item.at("name"), child(path, "name"), "a node name (a string)");
  node.op_type = json_detail::get_string(item, path, "op_type", "an op_type (a string)");
  const OpSchema& schema = detail::find_schema(registry, node.op_type, path);
  node.inputs = read_names(item.at("inputs"), child(path, "inputs"), "a list of tensor names");
  if (const auto it = item.find("attributes"); it != item.end())
    node.attributes = json_detail::read_attributes(*it, schema, path);
  if (const auto it = item.find("specified_outputs_name"); it != item.end())
    node.specified_outputs_name =
        read_names(*it, child(path, "specified_outputs_name"), "a list of tensor names");
  node.training = read_bool(item, path, "training", true);
  if (const auto it = item.find("lda_coeff"); it != item.end()) {
    // Graph checks the value (detail::check_lda_coeff); a JSON number is always
    // finite (the parser refuses NaN, Infinity and overflow).
    if (!it->is_number()) expected(child(path, "lda_coeff"), "a finite number", *it);
    node.lda_coeff = it->get<double>();
  }
  if (const auto it = item.find("position"); it != item.end()) {
    // The editor's view state (docs/graph-format.md, "Node positions"): kept
    // as read, so that the writer gives it back unchanged.
    if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !(*it)[1].is_number())
      expected(child(path, "position"), "[x, y], two numbers", *it);
    node.position = std::array<double, 2>{(*it)[0].get<double>(), (*it)[1].get<double>()};
  }
  return node;
}

/// The lists of a document, read element by element while it is parsed
/// (json_detail::parse_json_streaming). An element's error is kept, not thrown,
/// until its list's turn comes in parse_graph_def, so that errors come in the
/// same order as from a reader that parses the whole document first.
class ListReader : public json_detail::ElementSink {
 public:
  ListReader(const OpRegistry& registry, const ReadOptions& options)
      : registry_(registry), options_(options) {}

  void begin(std::string_view key) override {
    List& list = at(key);
    list.error = nullptr;
    if (key == "inputs") def_.inputs.clear();
    if (key == "outputs") def_.outputs.clear();
    if (key == "initializers") {
      pending_.clear();
      initializer_bytes_ = 0;
    }
    if (key == "nodes") def_.nodes.clear();
  }

  void element(std::string_view key, std::size_t i, Json& item) override {
    List& list = at(key);
    if (list.error) return;  // the first error of a list is the one reported
    try {
      if (key == "inputs") {
        def_.inputs.push_back(read_input(item, element_path("inputs", i, item)));
      } else if (key == "outputs") {
        def_.outputs.push_back(json_detail::read_name(item, "outputs[" + std::to_string(i) + "]",
                                                      "a tensor name (a string)"));
      } else if (key == "initializers") {
        // Built only once the whole list is counted (build_initializers).
        pending_.push_back(check_initializer(item, element_path("initializers", i, item), options_,
                                             initializer_bytes_));
      } else {
        def_.nodes.push_back(read_node(item, element_path("nodes", i, item), registry_));
      }
    } catch (...) {
      list.error = std::current_exception();
    }
  }

  /// Throws the first error of list `key`, if it had one.
  void check(std::string_view key) {
    if (const List& list = at(key); list.error) std::rethrow_exception(list.error);
  }

  /// The tensors of the initializers, once check("initializers") found every
  /// one of them within the budget: nothing is allocated before the whole
  /// document's total is known.
  void build_initializers() {
    def_.initializers.clear();
    def_.initializers.reserve(pending_.size());
    for (PendingInitializer& p : pending_) def_.initializers.push_back(build_initializer(p));
    pending_.clear();
  }

  GraphDef& def() { return def_; }

 private:
  struct List {
    std::exception_ptr error;
  };

  static std::string element_path(const std::string& list, std::size_t i, const Json& item) {
    return json_detail::element(list, i, item);
  }

  List& at(std::string_view key) {
    if (key == "inputs") return inputs_;
    if (key == "outputs") return outputs_;
    if (key == "initializers") return initializers_;
    return nodes_;
  }

  const OpRegistry& registry_;
  const ReadOptions& options_;
  GraphDef def_;
  List inputs_, outputs_, initializers_, nodes_;
  std::vector<PendingInitializer> pending_;
  std::uint64_t initializer_bytes_ = 0;
};

}  // namespace

GraphDef parse_graph_def(std::string_view text, const OpRegistry& registry,
                         const ReadOptions& options) {
  return parse_graph_document(text, registry, options).def;
}

GraphDocument parse_graph_document(std::string_view text, const OpRegistry& registry,
                                   const ReadOptions& options) {
  ListReader lists(registry, options);
  const Json doc = json_detail::parse_json_streaming(
      text, {"inputs", "outputs", "initializers", "nodes"}, lists);
  if (!doc.is_object())
    throw InvalidGraph(std::string("document: expected a JSON object, got ") + doc.type_name());
  // Format and version first: a document of another version may have other keys.
  if (const auto it = doc.find("format"); it != doc.end() &&
                                                (!it->is_string() || it->get_ref<const std::string&>() != kFormat))
    expected("format", std::string("\"").append(kFormat).append("\""), *it);
  if (const auto it = doc.find("version"); it != doc.end()) {
    std::int64_t v = 0;
    if (!json_detail::as_int64(*it, v) || v != kVersion) expected("version", std::to_string(kVersion), *it);
  }
  json_detail::check_keys(doc, "", {"format", "version", "inputs", "outputs", "nodes"},
                          {"name", "initializers", "training_state"});
  std::string training_state;
  if (const auto it = doc.find("training_state"); it != doc.end()) {
    if (!it->is_object()) expected("training_state", "an object (a checkpoint's training state)", *it);
    training_state = it->dump();
  }

  // The lists' elements were read during parsing: a list that is an array in
  // the document holds them (its array there is empty now).
  GraphDef& def = lists.def();
  if (const auto it = doc.find("name"); it != doc.end()) {
    def.name = json_detail::read_name(*it, "name", "a string");
  }
  required_list(doc, "inputs", "a list of graph inputs");
  lists.check("inputs");
  required_list(doc, "outputs", "a list of tensor names");
  lists.check("outputs");
  if (const auto it = doc.find("initializers"); it != doc.end()) {
    if (!it->is_array()) expected("initializers", "a list of initializers", *it);
    lists.check("initializers");
    lists.build_initializers();
  }
  required_list(doc, "nodes", "a list of nodes");
  lists.check("nodes");
  return GraphDocument{std::move(def), std::move(training_state)};
}

Graph load_graph(std::string_view text, const ReadOptions& options, const OpRegistry& registry) {
  return Graph(parse_graph_def(text, registry, options), registry);
}

Graph load_graph_file(const std::filesystem::path& path, const ReadOptions& options,
                      const OpRegistry& registry) {
  return load_graph(read_text_file(path, "graph"), options, registry);
}

Tensor read_tensor_json(const nlohmann::json& value, const std::string& path,
                        std::uint64_t max_bytes) {
  if (!value.is_object()) expected(path, "an object with dtype, shape and data", value);
  json_detail::check_keys(value, path, {"dtype", "shape", "data"}, {});
  const DType dtype = read_dtype(value, path);
  const Shape shape = read_shape(value, path, false);
  const std::int64_t count = element_count(shape, child(path, "shape"));
  // Checked before the values are: a short document must not allocate without bound.
  if (static_cast<std::uint64_t>(count) > max_bytes / dtype_size(dtype))
    throw InvalidGraph(child(path, "shape") + ": " + to_string(shape) + " " + std::string(dtype_name(dtype)) +
                       " is over the limit of " + std::to_string(max_bytes) + " bytes");
  return json_detail::read_tensor_data(value.at("data"), dtype, shape, child(path, "data"));
}

}  // namespace nodeflow
