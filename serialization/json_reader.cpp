#include "serialization/json_reader.hpp"

#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "core/errors.hpp"
#include "serialization/detail/constant_fold.hpp"
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
/// limit; `where` is the JSON path the message names ("initializers[0]
/// (w).shape"). `numel` * size fits int64.
void reserve_initializer_bytes(const Shape& shape, DType dtype, const std::string& where,
                               const ReadOptions& options, std::uint64_t& total) {
  const auto bytes = static_cast<std::uint64_t>(element_count(shape)) * dtype_size(dtype);
  if (bytes > options.max_initializer_bytes || total > options.max_initializer_bytes - bytes)
    throw InvalidGraph(where + ": " + to_string(shape) + " " +
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
  reserve_initializer_bytes(p.shape, p.dtype, child(path, "shape"), options, total_bytes);
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

/// Tensor values waiting for the document's initializer budget: their form
/// and count are checked, the tensor is built once its bytes are charged.
struct PendingTensor {
  std::string path;  ///< the JSON path of the values ("nodes[2] (c).attributes.value_floats")
  DType dtype{};
  Shape shape;
  Json data;  ///< a list of numbers or {"base64": "..."}

  Tensor build() {
    Tensor t = json_detail::read_tensor_data(data, dtype, shape, path);
    data = Json();
    return t;
  }
};

/// A Constant or ConstantOfShape node of the document, checked on its own and
/// waiting to be folded into an initializer (docs/graph-format.md, "Constant
/// and ConstantOfShape").
struct PendingConstant {
  std::string path;  ///< "nodes[2] (c)"
  std::string name;
  std::string output;  ///< specified_outputs_name[0], else the node's name
  bool of_shape = false;
  PendingTensor value;         ///< Constant: its value
  std::string input;           ///< ConstantOfShape: the shape's tensor
  std::optional<PendingTensor> fill;  ///< ConstantOfShape: `value`, absent: float32 0
};

bool is_folded_op(const Json& item) {
  if (!item.is_object()) return false;
  const auto it = item.find("op_type");
  return it != item.end() && it->is_string() &&
         (it->get_ref<const std::string&>() == "Constant" || it->get_ref<const std::string&>() == "ConstantOfShape");
}

constexpr std::string_view kJsonConstantAttributes = "value, value_float, value_floats, value_int, value_ints";

/// A tensor attribute (Constant's and ConstantOfShape's `value`): an object
/// with dtype, shape and data as an initializer has them.
PendingTensor read_tensor_attribute(Json& v, const std::string& path) {
  if (!v.is_object()) expected(path, "a tensor, {\"dtype\": ..., \"shape\": [...], \"data\": ...}", v);
  json_detail::check_keys(v, path, {"dtype", "shape", "data"}, {});
  PendingTensor t;
  t.path = child(path, "data");
  t.dtype = read_dtype(v, path);
  t.shape = read_shape(v, path, false);
  if (element_count(t.shape) >
      std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(dtype_size(t.dtype)))
    throw ShapeMismatch(child(path, "shape") + ": byte count of " + to_string(t.shape) + " " +
                        std::string(dtype_name(t.dtype)) + " values overflows int64");
  json_detail::check_tensor_data(v.at("data"), t.dtype, t.shape, t.path);
  t.data = std::move(v.at("data"));  // the values wait in the tensor's JSON, not copied
  return t;
}

/// Constant's value_float, value_floats, value_int, value_ints: read as the
/// `data` of a float32 or int64 initializer (a scalar for value_float and
/// value_int).
PendingTensor read_value_attribute(const Json& v, constant_fold::ConstantAttribute form, const std::string& path) {
  const DType dtype = constant_fold::value_dtype(form);
  const std::string what = dtype == DType::Float32 ? "a number within the float32 range" : "an integer";
  PendingTensor t;
  t.path = path;
  t.dtype = dtype;
  if (constant_fold::is_list(form)) {
    if (!v.is_array()) expected(path, dtype == DType::Float32 ? "a list of numbers" : "a list of integers", v);
    t.shape = {static_cast<std::int64_t>(v.size())};
    t.data = v;
  } else {
    t.data = Json::array({v});
    try {
      json_detail::read_tensor_data(t.data, dtype, {}, path);
    } catch (const InvalidGraph&) {
      expected(path, what, v);
    }
  }
  return t;
}

/// A Constant or ConstantOfShape node: its keys, name, inputs, output and
/// attributes; folded later (ListReader::fold_constants).
PendingConstant check_constant_node(Json& item, const std::string& path) {
  json_detail::check_keys(item, path, {"op_type", "name", "inputs"},
                          {"attributes", "specified_outputs_name", "training", "lda_coeff"});
  PendingConstant c;
  c.path = path;
  c.of_shape = item.at("op_type").get_ref<const std::string&>() == "ConstantOfShape";
  const char* op = c.of_shape ? "ConstantOfShape" : "Constant";
  c.name = json_detail::read_name(item.at("name"), child(path, "name"), "a node name (a string)");
  if (c.name.empty()) throw InvalidGraph(child(path, "name") + ": node name is empty");
  const std::vector<std::string> inputs =
      read_names(item.at("inputs"), child(path, "inputs"), "a list of tensor names");
  const std::size_t arity = c.of_shape ? 1 : 0;
  if (inputs.size() != arity)
    throw InvalidGraph(child(path, "inputs") + ": " + op + " takes " + std::to_string(arity) + " to " +
                       std::to_string(arity) + " inputs, got " + std::to_string(inputs.size()));
  if (c.of_shape) {
    if (inputs[0].empty())
      throw InvalidGraph(child(path, "inputs[0]") + ": required input 'input' of ConstantOfShape is absent");
    c.input = inputs[0];
  }
  c.output = c.name;
  if (const auto it = item.find("specified_outputs_name"); it != item.end()) {
    const std::vector<std::string> names =
        read_names(*it, child(path, "specified_outputs_name"), "a list of tensor names");
    if (names.size() != 1)
      throw InvalidGraph(child(path, "specified_outputs_name") + ": " + op + " has 1 to 1 outputs, got " +
                         std::to_string(names.size()) + " names");
    if (names[0].empty()) throw InvalidGraph(child(path, "specified_outputs_name[0]") + ": tensor name is empty");
    c.output = names[0];
  }
  // A folded node has no inputs to freeze or scale: the keys are checked as
  // for any node and change nothing.
  read_bool(item, path, "training", true);
  if (const auto it = item.find("lda_coeff"); it != item.end() && !it->is_number())
    expected(child(path, "lda_coeff"), "a finite number", *it);

  const std::string attrs_path = child(path, "attributes");
  const auto attrs = item.find("attributes");
  if (attrs != item.end() && !attrs->is_object()) expected(attrs_path, "an object of attributes", *attrs);
  if (c.of_shape) {
    if (attrs == item.end()) return c;
    for (auto&& [name, v] : attrs->items()) {
      const std::string where = child(attrs_path, name);
      if (name != "value")
        throw InvalidAttribute(where + ": unknown attribute '" + printable(name, 200) + "' for ConstantOfShape (known: value)");
      c.fill = read_tensor_attribute(v, where);
      if (element_count(c.fill->shape) != 1)
        throw InvalidAttribute(where + " must hold one element, got a " + to_string(c.fill->shape) + " tensor");
    }
    return c;
  }
  const std::size_t given = attrs == item.end() ? 0 : attrs->size();
  if (given != 1)
    throw InvalidAttribute(attrs_path + ": a Constant has exactly one of the attributes " +
                           std::string(kJsonConstantAttributes) + " (" + std::to_string(given) + " given)");
  // Not a binding to *items().begin(): that proxy dies with the statement.
  const auto only = attrs->begin();
  const std::string& name = only.key();
  Json& v = only.value();
  const std::string where = child(attrs_path, name);
  const std::optional<constant_fold::ConstantAttribute> form = constant_fold::constant_attribute(name, where);
  if (!form)
    throw InvalidAttribute(where + ": unknown attribute '" + printable(name, 200) + "' for Constant (known: " +
                           std::string(kJsonConstantAttributes) + ")");
  if (*form == constant_fold::ConstantAttribute::SparseValue)
    throw InvalidAttribute(where + ": a sparse tensor has no form in the graph document (give the dense tensor "
                                   "as value)");
  c.value = *form == constant_fold::ConstantAttribute::Value ? read_tensor_attribute(v, where)
                                                              : read_value_attribute(v, *form, where);
  return c;
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
    if (key == "nodes") {
      def_.nodes.clear();
      constants_.clear();
      positions_.clear();
    }
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
      } else if (is_folded_op(item)) {
        constants_.push_back(check_constant_node(item, element_path("nodes", i, item)));
      } else {
        def_.nodes.push_back(read_node(item, element_path("nodes", i, item), registry_));
        positions_.push_back(i);
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

  /// The Constant and ConstantOfShape nodes become non-trainable
  /// initializers named by their outputs (docs/graph-format.md, "Constant and
  /// ConstantOfShape"), once the initializers are built: Constants in document
  /// order, then each ConstantOfShape whose input is a constant by then, until
  /// none is left. Their bytes count against the document's budget.
  void fold_constants() {
    if (constants_.empty()) return;
    std::set<std::string> node_names;
    for (const NodeDef& n : def_.nodes) node_names.insert(n.name);
    std::map<std::string, std::size_t> tensors;  // name -> index in def_.initializers
    for (std::size_t k = 0; k < def_.initializers.size(); ++k) tensors.emplace(def_.initializers[k].name, k);
    std::set<std::string> inputs;
    for (const GraphInput& in : def_.inputs) inputs.insert(in.name);
    for (const PendingConstant& c : constants_) {
      if (!node_names.insert(c.name).second)
        throw InvalidGraph(child(c.path, "name") + ": duplicate node name '" + c.name + "'");
    }
    const auto add = [&](const PendingConstant& c, Tensor value) {
      if (inputs.count(c.output) || tensors.count(c.output))
        throw InvalidGraph(child(c.path, "specified_outputs_name") + ": tensor name '" + c.output +
                           "' is defined twice (names are unique in the graph)");
      Initializer init;
      init.name = c.output;
      init.value = std::move(value);
      tensors.emplace(init.name, def_.initializers.size());
      def_.initializers.push_back(std::move(init));
    };
    for (PendingConstant& c : constants_) {
      if (c.of_shape) continue;
      reserve_initializer_bytes(c.value.shape, c.value.dtype, c.value.path, options_, initializer_bytes_);
      add(c, c.value.build());
    }
    std::vector<PendingConstant*> waiting;
    for (PendingConstant& c : constants_)
      if (c.of_shape) waiting.push_back(&c);
    while (!waiting.empty()) {
      std::vector<PendingConstant*> still;
      for (PendingConstant* c : waiting) {
        const std::string input = child(c->path, "inputs[0]") + ": '" + c->input + "'";
        const auto it = tensors.find(c->input);
        if (it == tensors.end()) {
          still.push_back(c);
          continue;
        }
        if (def_.initializers[it->second].trainable) constant_fold::refuse_computed_shape(input);
        const Shape shape = constant_fold::shape_of(def_.initializers[it->second].value, input);
        Tensor fill = c->fill ? c->fill->build() : constant_fold::default_fill();
        reserve_initializer_bytes(shape, fill.dtype(), c->path, options_, initializer_bytes_);
        add(*c, constant_fold::filled(shape, fill));
      }
      // Nothing folded in a round: the first one left reads a computed tensor.
      if (still.size() == waiting.size())
        constant_fold::refuse_computed_shape(child(still[0]->path, "inputs[0]") + ": '" + still[0]->input + "'");
      waiting = std::move(still);
    }
    constants_.clear();
  }

  /// The index in the document's `nodes` of each node of def().nodes.
  const std::vector<std::size_t>& positions() const { return positions_; }

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
  std::vector<PendingConstant> constants_;
  std::vector<std::size_t> positions_;
  std::uint64_t initializer_bytes_ = 0;
};

}  // namespace

namespace {

/// A document's GraphDef, and where each of its nodes stands in the
/// document's `nodes` (folded Constants leave gaps).
struct ParsedDocument {
  GraphDef def;
  std::vector<std::size_t> positions;
  std::string training_state;  ///< GraphDocument::training_state
};

ParsedDocument parse_document(std::string_view text, const OpRegistry& registry, const ReadOptions& options) {
  ListReader lists(registry, options);
  const Json doc = json_detail::parse_json_streaming(
      text, {"inputs", "outputs", "initializers", "nodes"}, lists);
  if (!doc.is_object())
    throw InvalidGraph(std::string("document: expected a JSON object, got ") + doc.type_name());
  // Format and version first: a document of another version may have other
  // keys, and another kind of document (a training configuration) is named
  // for what it lacks rather than for its first key.
  for (const char* key : {"format", "version"})
    if (!doc.contains(key)) throw InvalidGraph(std::string("document: missing required key '") + key + "'");
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
  lists.fold_constants();
  return {std::move(def), lists.positions(), std::move(training_state)};
}

/// `message` with every "nodes[i]" of def.nodes' numbering renumbered as the
/// document's, so that the graph's errors name the document's node after
/// folded Constants.
std::string renumbered(const std::string& message, const std::vector<std::size_t>& positions) {
  constexpr std::string_view kNodes = "nodes[";
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = message.find(kNodes); at != std::string::npos; at = message.find(kNodes, from)) {
    const std::size_t digits = at + kNodes.size();
    std::size_t close = digits;
    while (close < message.size() && message[close] >= '0' && message[close] <= '9') ++close;
    out.append(message, from, digits - from);
    from = digits;
    if (close == digits || close >= message.size() || message[close] != ']' || close - digits > 18) continue;
    const std::size_t index = std::stoull(message.substr(digits, close - digits));
    if (index >= positions.size()) continue;
    out += std::to_string(positions[index]);
    from = close;
  }
  out.append(message, from, std::string::npos);
  return out;
}

}  // namespace

GraphDef parse_graph_def(std::string_view text, const OpRegistry& registry, const ReadOptions& options) {
  return parse_document(text, registry, options).def;
}

GraphDocument parse_graph_document(std::string_view text, const OpRegistry& registry,
                                   const ReadOptions& options) {
  ParsedDocument doc = parse_document(text, registry, options);
  return GraphDocument{std::move(doc.def), std::move(doc.training_state)};
}

Graph load_graph(std::string_view text, const ReadOptions& options, const OpRegistry& registry) {
  ParsedDocument doc = parse_document(text, registry, options);
  bool shifted = false;
  for (std::size_t i = 0; i < doc.positions.size(); ++i) shifted = shifted || doc.positions[i] != i;
  if (!shifted) return Graph(std::move(doc.def), registry);
  try {
    return Graph(std::move(doc.def), registry);
  } catch (const InvalidAttribute& e) {
    throw InvalidAttribute(renumbered(e.what(), doc.positions));
  } catch (const ShapeMismatch& e) {
    throw ShapeMismatch(renumbered(e.what(), doc.positions));
  } catch (const UnsupportedDType& e) {
    throw UnsupportedDType(renumbered(e.what(), doc.positions));
  } catch (const InvalidGraph& e) {
    throw InvalidGraph(renumbered(e.what(), doc.positions));
  }
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
