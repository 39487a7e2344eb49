#include "serialization/onnx/onnx_reader.hpp"

#include <charconv>
#include <cstring>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <onnx/onnx_pb.h>  // onnx-ml.pb.h (ONNX_ML), with the ONNX_API it needs

#include "core/errors.hpp"
#include "core/graph.hpp"
#include "serialization/detail/constant_fold.hpp"
#include "serialization/onnx.hpp"
#include "serialization/onnx/detail/proto_parse.hpp"
#include "serialization/onnx/onnx_tensor.hpp"
#include "serialization/onnx/opset_history.hpp"
#include "serialization/text_file.hpp"

namespace nodeflow {
namespace onnx_io {

std::string metadata_key(const std::string& name, std::string_view suffix) {
  return std::string(kMetadataPrefix) + name + std::string(suffix);
}

double attribute_double(float f) {
  if (!std::isfinite(f)) return static_cast<double>(f);
  char text[64];
  const auto written = std::to_chars(text, text + sizeof text, f);
  double d = 0;
  std::from_chars(text, written.ptr, d);
  // The decimal's nearest double rounds back to f but for a decimal within
  // 2^-54 of a float32 rounding boundary: then f itself, exactly.
  return static_cast<float>(d) == f ? d : static_cast<double>(f);
}

namespace {

using AttrType = onnx::AttributeProto::AttributeType;

const char* attribute_type_name(int type) {
  switch (type) {
    case onnx::AttributeProto::FLOAT: return "FLOAT";
    case onnx::AttributeProto::INT: return "INT";
    case onnx::AttributeProto::STRING: return "STRING";
    case onnx::AttributeProto::TENSOR: return "TENSOR";
    case onnx::AttributeProto::GRAPH: return "GRAPH";
    case onnx::AttributeProto::SPARSE_TENSOR: return "SPARSE_TENSOR";
    case onnx::AttributeProto::TYPE_PROTO: return "TYPE_PROTO";
    case onnx::AttributeProto::FLOATS: return "FLOATS";
    case onnx::AttributeProto::INTS: return "INTS";
    case onnx::AttributeProto::STRINGS: return "STRINGS";
    case onnx::AttributeProto::TENSORS: return "TENSORS";
    case onnx::AttributeProto::GRAPHS: return "GRAPHS";
    case onnx::AttributeProto::SPARSE_TENSORS: return "SPARSE_TENSORS";
    case onnx::AttributeProto::TYPE_PROTOS: return "TYPE_PROTOS";
    default: return nullptr;
  }
}

/// The kind of an attribute that does not state it, from the one field it fills.
int implied_type(const onnx::AttributeProto& a, const std::string& where) {
  std::vector<int> kinds;
  if (a.has_f()) kinds.push_back(onnx::AttributeProto::FLOAT);
  if (a.has_i()) kinds.push_back(onnx::AttributeProto::INT);
  if (a.has_s()) kinds.push_back(onnx::AttributeProto::STRING);
  if (a.has_t()) kinds.push_back(onnx::AttributeProto::TENSOR);
  if (a.has_g()) kinds.push_back(onnx::AttributeProto::GRAPH);
  if (a.has_sparse_tensor()) kinds.push_back(onnx::AttributeProto::SPARSE_TENSOR);
  if (a.has_tp()) kinds.push_back(onnx::AttributeProto::TYPE_PROTO);
  if (a.floats_size()) kinds.push_back(onnx::AttributeProto::FLOATS);
  if (a.ints_size()) kinds.push_back(onnx::AttributeProto::INTS);
  if (a.strings_size()) kinds.push_back(onnx::AttributeProto::STRINGS);
  if (a.tensors_size()) kinds.push_back(onnx::AttributeProto::TENSORS);
  if (a.graphs_size()) kinds.push_back(onnx::AttributeProto::GRAPHS);
  if (a.sparse_tensors_size()) kinds.push_back(onnx::AttributeProto::SPARSE_TENSORS);
  if (a.type_protos_size()) kinds.push_back(onnx::AttributeProto::TYPE_PROTOS);
  if (kinds.size() != 1)
    throw InvalidAttribute(where + ": attribute '" + printable(a.name(), 100) +
                           "' states no type and " +
                           (kinds.empty() ? std::string("holds no value")
                                          : std::string("fills several value fields")) +
                           ", so its kind cannot be told");
  return kinds.front();
}

}  // namespace

AttrValue attribute_value(const onnx::AttributeProto& a, const std::string& where) {
  const std::string name = "attribute '" + printable(a.name(), 100) + "'";
  if (!a.ref_attr_name().empty())
    throw InvalidAttribute(where + ": " + name + " refers to the attribute '" +
                           printable(a.ref_attr_name(), 100) +
                           "' of a function (ref_attr_name), which nodeflow does not support");
  const int type = a.has_type() && a.type() != onnx::AttributeProto::UNDEFINED
                       ? static_cast<int>(a.type())
                       : implied_type(a, where);
  switch (type) {
    case onnx::AttributeProto::INT: return a.i();
    case onnx::AttributeProto::FLOAT: return attribute_double(a.f());
    case onnx::AttributeProto::STRING: return a.s();
    case onnx::AttributeProto::INTS: return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto::FLOATS: {
      std::vector<double> out;
      out.reserve(static_cast<std::size_t>(a.floats_size()));
      for (const float f : a.floats()) out.push_back(attribute_double(f));
      return out;
    }
    case onnx::AttributeProto::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    default: break;
  }
  const char* kind = attribute_type_name(type);
  throw InvalidAttribute(where + ": " + name + " is " +
                         (kind ? std::string("a ") + kind : "of type " + std::to_string(type)) +
                         ", which nodeflow does not support (it takes INT, FLOAT, STRING, INTS, "
                         "FLOATS and STRINGS)");
}

namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string& name) {
  std::string out(1, '\'');  // not "'" + ...: GCC 12's -Wrestrict misfires on it
  out += printable(name, 200);
  out += '\'';
  return out;
}

/// "graph.input[2] (x)".
std::string element(const char* list, std::size_t i, const std::string& name) {
  std::string out = std::string("graph.") + list + "[" + std::to_string(i) + "]";
  if (!name.empty()) out += " (" + printable(name, 200) + ")";
  return out;
}

/// The default-domain opset of the model.
int model_opset(const onnx::ModelProto& model) {
  std::optional<int> opset;
  for (int i = 0; i < model.opset_import_size(); ++i) {
    const auto& entry = model.opset_import(i);
    if (entry.domain() != "" && entry.domain() != "ai.onnx") continue;
    const std::string where = "model.opset_import[" + std::to_string(i) + "]";
    if (opset)
      throw InvalidGraph(where + ": the default domain is imported twice (opsets " +
                         std::to_string(*opset) + " and " + std::to_string(entry.version()) + ")");
    if (entry.version() < 1 || entry.version() > onnx_import::kMaxOpset)
      throw InvalidGraph(where + ": opset " + std::to_string(entry.version()) +
                         " of the default domain is not supported (nodeflow reads opsets 1 to " +
                         std::to_string(onnx_import::kMaxOpset) + ")");
    opset = static_cast<int>(entry.version());
  }
  if (!opset)
    throw InvalidGraph("model.opset_import: no opset of the default domain ('' or 'ai.onnx') is "
                       "imported");
  return *opset;
}

/// The nodeflow keys of metadata_props, by node or initializer name.
struct TrainingKeys {
  std::map<std::string, bool> training;
  std::map<std::string, double> lda_coeff;
  std::map<std::string, bool> trainable;
  std::set<std::string> specified_outputs;  ///< nodes whose outputs are their specified_outputs_name
  std::set<std::string> ratio_attribute;    ///< Dropouts whose input 1 is their ratio attribute
  /// metadata key -> its path, for messages, and the node or initializer it names.
  struct Subject {
    std::string where, name;
    bool initializer = false;
  };
  std::map<std::string, Subject> subjects;
};

bool parse_bool(const std::string& value, const std::string& where) {
  if (value == "true") return true;
  if (value == "false") return false;
  throw InvalidGraph(where + ": expected true or false, got " + quoted(value));
}

double parse_number(const std::string& value, const std::string& where) {
  double d = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, d);
  // JSON number text: no leading '+', no 'inf'/'nan', no trailing bytes.
  if (value.empty() || value.front() == '+' || ec != std::errc() || ptr != end || !std::isfinite(d))
    throw InvalidGraph(where + ": expected a finite number (JSON text such as 0.25), got " +
                       quoted(value));
  return d;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TrainingKeys read_metadata(const onnx::ModelProto& model) {
  TrainingKeys keys;
  std::set<std::string> seen;
  for (int i = 0; i < model.metadata_props_size(); ++i) {
    const auto& entry = model.metadata_props(i);
    const std::string& key = entry.key();
    if (key.compare(0, kMetadataPrefix.size(), kMetadataPrefix) != 0) continue;  // another tool's
    const std::string where = "model.metadata_props[" + std::to_string(i) + "] (" +
                              printable(key, 200) + ")";
    if (!seen.insert(key).second) throw InvalidGraph(where + ": the key is given twice");
    if (key == kGraphVersionKey) {
      if (entry.value() != "1")
        throw InvalidGraph(where + ": version " + quoted(entry.value()) +
                           " of the nodeflow keys is not supported (this reader knows 1)");
      continue;
    }
    const auto is = [&](std::string_view suffix) {
      return ends_with(key, suffix) && key.size() > kMetadataPrefix.size() + suffix.size();
    };
    const auto name_of = [&](std::string_view suffix, bool initializer = false) {
      const std::string name = key.substr(kMetadataPrefix.size(),
                                          key.size() - kMetadataPrefix.size() - suffix.size());
      keys.subjects[key] = {where, name, initializer};
      return name;
    };
    const auto require_true = [&] {
      if (entry.value() != "true")
        throw InvalidGraph(where + ": expected true (the key is written only then), got " +
                           quoted(entry.value()));
    };
    if (is(kTrainingSuffix)) {
      keys.training[name_of(kTrainingSuffix)] = parse_bool(entry.value(), where);
    } else if (is(kLdaCoeffSuffix)) {
      keys.lda_coeff[name_of(kLdaCoeffSuffix)] = parse_number(entry.value(), where);
    } else if (is(kTrainableSuffix)) {
      keys.trainable[name_of(kTrainableSuffix, true)] = parse_bool(entry.value(), where);
    } else if (is(kSpecifiedOutputsSuffix)) {
      require_true();
      keys.specified_outputs.insert(name_of(kSpecifiedOutputsSuffix));
    } else if (is(kRatioAttributeSuffix)) {
      require_true();
      keys.ratio_attribute.insert(name_of(kRatioAttributeSuffix));
    } else {
      throw InvalidGraph(where + ": unknown nodeflow key (known: nodeflow.graph.version, "
                                 "nodeflow.<node>.training, nodeflow.<node>.lda_coeff, "
                                 "nodeflow.<node>.specified_outputs_name, "
                                 "nodeflow.<node>.ratio_attribute, nodeflow.<initializer>.trainable)");
    }
  }
  return keys;
}

/// A graph input's dtype and shape from its ValueInfoProto.
TensorInfo input_info(const onnx::ValueInfoProto& v, const std::string& where) {
  if (!v.has_type() || !v.type().has_tensor_type()) {
    const char* what = !v.has_type()                      ? "has no type"
                       : v.type().has_sequence_type()     ? "is a sequence"
                       : v.type().has_map_type()          ? "is a map"
                       : v.type().has_optional_type()     ? "is an optional"
                       : v.type().has_sparse_tensor_type() ? "is a sparse tensor"
                                                           : "is not a tensor";
    throw InvalidGraph(where + ".type: the input " + what + "; nodeflow's graph inputs are dense tensors");
  }
  const auto& tensor = v.type().tensor_type();
  TensorInfo info;
  const std::optional<DType> dtype = onnx_io::graph_dtype_of(tensor.elem_type());
  if (!dtype) onnx_io::refuse_data_type(tensor.elem_type(), where + ".type.tensor_type.elem_type");
  info.dtype = *dtype;
  if (!tensor.has_shape())
    throw InvalidGraph(where + ".type.tensor_type.shape: missing; nodeflow needs the rank of every "
                               "graph input");
  Shape known;
  for (int k = 0; k < tensor.shape().dim_size(); ++k) {
    const auto& dim = tensor.shape().dim(k);
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0)
        throw InvalidGraph(where + ".type.tensor_type.shape.dim[" + std::to_string(k) +
                           "]: dim_value " + std::to_string(dim.dim_value()) + " is negative");
      info.shape.push_back(dim.dim_value());
      known.push_back(dim.dim_value());
    } else {
      info.shape.push_back(kDynamicDim);  // dim_param, or nothing: fixed at run time
    }
  }
  try {
    element_count(known);
  } catch (const ShapeMismatch&) {
    throw ShapeMismatch(where + ".type.tensor_type.shape: element count of the known dimensions "
                                "of " + to_string(info.shape) + " overflows int64");
  }
  return info;
}

/// Names unique among a set, made from hints: "w", "w_1", "w_2", ...
class UniqueNames {
 public:
  bool taken(const std::string& name) const { return names_.count(name) > 0; }
  void take(const std::string& name) { names_.insert(name); }
  std::string make(const std::string& hint) {
    std::string name = hint;
    for (std::size_t k = 1; taken(name); ++k) name = hint + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

 private:
  std::unordered_set<std::string> names_;
};

std::string node_label(const std::string& name, const std::string& op_type, int opset) {
  return "node " + quoted(name) + " (" + printable(op_type, 100) + ", opset " +
         std::to_string(opset) + ")";
}

class ModelReader {
 public:
  ModelReader(const onnx::ModelProto& model, const fs::path& model_dir, const OpRegistry& registry,
              const ReadOptions& options)
      : model_(model),
        graph_(model.graph()),
        model_dir_(model_dir),
        registry_(registry),
        budget_(options.max_initializer_bytes) {}

  GraphDef read() {
    if (!model_.has_ir_version())
      throw InvalidGraph("model.ir_version: missing (nodeflow reads IR version 3 or later)");
    if (model_.ir_version() < kOnnxMinIrVersion)
      throw InvalidGraph("model.ir_version: IR version " + std::to_string(model_.ir_version()) +
                         " is not supported (nodeflow reads IR version 3 or later)");
    opset_ = model_opset(model_);
    if (model_.functions_size() > 0)
      throw InvalidGraph("model.functions: the model defines local functions ('" +
                         printable(model_.functions(0).name(), 100) +
                         "'...), which nodeflow does not support");
    if (model_.training_info_size() > 0)
      throw InvalidGraph("model.training_info: ONNX training information is not supported");
    if (!model_.has_graph()) throw InvalidGraph("model.graph: missing (the model has no graph)");
    if (graph_.sparse_initializer_size() > 0)
      throw InvalidGraph("graph.sparse_initializer: sparse initializers are not supported");
    keys_ = read_metadata(model_);
    def_.name = graph_.name();
    collect_names();
    read_initializers();
    read_inputs();
    read_outputs();
    read_nodes();
    drop_folded_ratios();
    apply_trainable();
    check_keys_used();
    return std::move(def_);
  }

 private:
  /// Every tensor name the model uses, so that constants get fresh ones, and
  /// those that a node or the graph's outputs read.
  void collect_names() {
    for (const auto& init : graph_.initializer()) tensor_names_.take(init.name());
    for (const auto& in : graph_.input()) tensor_names_.take(in.name());
    for (const auto& out : graph_.output()) {
      tensor_names_.take(out.name());
      read_names_.insert(out.name());
    }
    for (const auto& node : graph_.node()) {
      for (const auto& n : node.input()) {
        tensor_names_.take(n);
        read_names_.insert(n);
      }
      for (const auto& n : node.output()) tensor_names_.take(n);
      if (!node.name().empty()) node_names_.take(node.name());
    }
  }

  /// Checked and charged to the budget all together, then built: nothing is
  /// allocated before the model's total is known to fit.
  void read_initializers() {
    std::vector<onnx_io::TensorPlan> plans;
    plans.reserve(static_cast<std::size_t>(graph_.initializer_size()));
    for (int i = 0; i < graph_.initializer_size(); ++i) {
      const auto& proto = graph_.initializer(i);
      const std::string where = element("initializer", static_cast<std::size_t>(i), proto.name());
      if (proto.name().empty()) throw InvalidGraph(where + ".name: an initializer needs a name");
      plans.push_back(onnx_io::plan_tensor(proto, where, model_dir_));
      budget_.charge(plans.back().shape, plans.back().dtype, where);
    }
    for (int i = 0; i < graph_.initializer_size(); ++i) {
      const auto& proto = graph_.initializer(i);
      const std::string where = element("initializer", static_cast<std::size_t>(i), proto.name());
      Initializer init;
      init.name = proto.name();
      init.value = onnx_io::build_tensor(proto, plans[static_cast<std::size_t>(i)], where);
      known_[init.name] = {TensorInfo{init.value.dtype(), init.value.shape()}, init.value};
      initializer_names_.insert(init.name);
      def_.initializers.push_back(std::move(init));
    }
  }

  void read_inputs() {
    for (int i = 0; i < graph_.input_size(); ++i) {
      const auto& v = graph_.input(i);
      // IR < 4 lists every initializer among the inputs too (a default value).
      if (initializer_names_.count(v.name())) continue;
      const std::string where = element("input", static_cast<std::size_t>(i), v.name());
      GraphInput in;
      in.name = v.name();
      in.info = input_info(v, where);
      known_[in.name] = {in.info, Tensor()};
      def_.inputs.push_back(std::move(in));
    }
  }

  void read_outputs() {
    for (int i = 0; i < graph_.output_size(); ++i) {
      const auto& v = graph_.output(i);
      if (v.name().empty())
        throw InvalidGraph(element("output", static_cast<std::size_t>(i), "") +
                           ".name: a graph output needs a name");
      def_.outputs.push_back(v.name());
    }
  }

  std::string node_name(const onnx::NodeProto& node, std::size_t index) {
    if (!node.name().empty()) return node.name();
    return node_names_.make(node.op_type() + "_" + std::to_string(index));
  }

  void read_nodes() {
    for (int i = 0; i < graph_.node_size(); ++i) {
      const auto& proto = graph_.node(i);
      const std::string name = node_name(proto, static_cast<std::size_t>(i));
      const std::string label = node_label(name, proto.op_type(), opset_);
      if (!proto.domain().empty() && proto.domain() != "ai.onnx")
        throw InvalidGraph(label + ": domain " + quoted(proto.domain()) +
                           " is not supported (nodeflow reads the default domain, '' or 'ai.onnx')");
      if (proto.op_type() == "Constant") {
        read_constant(proto, label);
        continue;
      }
      if (proto.op_type() == "ConstantOfShape") {
        read_constant_of_shape(proto, label);
        continue;
      }
      read_node(proto, name, label);
    }
  }

  /// A Constant node becomes the initializer of its output.
  void read_constant(const onnx::NodeProto& proto, const std::string& label) {
    if (proto.input_size() != 0 || proto.output_size() != 1 || proto.output(0).empty())
      throw InvalidGraph(label + ": a Constant has no inputs and one output (" +
                         std::to_string(proto.input_size()) + " inputs, " +
                         std::to_string(proto.output_size()) + " outputs given)");
    if (proto.attribute_size() != 1)
      throw InvalidAttribute(label + ": a Constant has exactly one of the attributes value, "
                                     "value_float, value_floats, value_int, value_ints (" +
                             std::to_string(proto.attribute_size()) + " given)");
    const auto& a = proto.attribute(0);
    const std::string attr = label + ": attribute " + quoted(a.name());
    // value_string(s) is refused here, an unknown name after the opset checks.
    const std::optional<constant_fold::ConstantAttribute> form = constant_fold::constant_attribute(a.name(), attr);
    if (form && *form == constant_fold::ConstantAttribute::SparseValue && opset_ < 11)
      throw InvalidAttribute(attr + " exists from opset 11");
    if (form && *form != constant_fold::ConstantAttribute::Value &&
        *form != constant_fold::ConstantAttribute::SparseValue && opset_ < 12)
      throw InvalidAttribute(attr + " exists from opset 12");
    if (!form)
      throw InvalidAttribute(attr + " is not an attribute of Constant (known: " +
                             std::string(constant_fold::kConstantAttributeNames) + ")");
    Tensor value;
    const auto expect = [&](int type) {
      if (a.has_type() && a.type() != type)
        throw InvalidAttribute(attr + " must be a " + attribute_type_name(type) + ", got a " +
                               (attribute_type_name(a.type()) ? attribute_type_name(a.type()) : "?"));
    };
    switch (*form) {
      case constant_fold::ConstantAttribute::Value:
        expect(onnx::AttributeProto::TENSOR);
        if (!a.has_t()) throw InvalidAttribute(attr + " holds no tensor");
        value = onnx_io::read_tensor(a.t(), label + ".attribute[0] (value)", model_dir_, budget_);
        break;
      case constant_fold::ConstantAttribute::SparseValue:
        expect(onnx::AttributeProto::SPARSE_TENSOR);
        if (!a.has_sparse_tensor()) throw InvalidAttribute(attr + " holds no sparse tensor");
        value = dense_of(a.sparse_tensor(), label + ".attribute[0] (sparse_value)");
        break;
      case constant_fold::ConstantAttribute::ValueFloat:
      case constant_fold::ConstantAttribute::ValueFloats: {
        const bool list = constant_fold::is_list(*form);
        expect(list ? onnx::AttributeProto::FLOATS : onnx::AttributeProto::FLOAT);
        const std::vector<float> fs = list ? std::vector<float>(a.floats().begin(), a.floats().end())
                                           : std::vector<float>{a.f()};
        const Shape shape = list ? Shape{static_cast<std::int64_t>(fs.size())} : Shape{};
        budget_.charge(shape, DType::Float32, label);
        value = Tensor::from<float>(shape, std::span<const float>(fs));
        break;
      }
      case constant_fold::ConstantAttribute::ValueInt:
      case constant_fold::ConstantAttribute::ValueInts: {
        const bool list = constant_fold::is_list(*form);
        expect(list ? onnx::AttributeProto::INTS : onnx::AttributeProto::INT);
        const std::vector<std::int64_t> vs = list ? std::vector<std::int64_t>(a.ints().begin(), a.ints().end())
                                                  : std::vector<std::int64_t>{a.i()};
        const Shape shape = list ? Shape{static_cast<std::int64_t>(vs.size())} : Shape{};
        budget_.charge(shape, DType::Int64, label);
        value = Tensor::from<std::int64_t>(shape, std::span<const std::int64_t>(vs));
        break;
      }
    }
    add_folded(proto.output(0), std::move(value));
  }

  /// The output of a folded Constant or ConstantOfShape becomes a
  /// non-trainable initializer of that name (docs/onnx.md, "Constant folding").
  void add_folded(const std::string& name, Tensor value) {
    Initializer init;
    init.name = name;
    init.value = std::move(value);
    known_[init.name] = {TensorInfo{init.value.dtype(), init.value.shape()}, init.value};
    initializer_names_.insert(init.name);
    def_.initializers.push_back(std::move(init));
  }

  /// A SparseTensorProto (Constant's sparse_value, opset 11) as a dense tensor:
  /// `values` [NNZ], `indices` int64 [NNZ, rank] (coordinates) or [NNZ]
  /// (linear positions), each inside `dims` and none given twice; the rest 0.
  Tensor dense_of(const onnx::SparseTensorProto& sparse, const std::string& where) {
    Shape shape;
    for (int i = 0; i < sparse.dims_size(); ++i) {
      if (sparse.dims(i) < 0)
        throw InvalidGraph(where + ".dims[" + std::to_string(i) + "]: " + std::to_string(sparse.dims(i)) +
                           " is negative");
      shape.push_back(sparse.dims(i));
    }
    if (!sparse.has_values()) throw InvalidGraph(where + ".values: missing");
    const Tensor values = onnx_io::read_tensor(sparse.values(), where + ".values", model_dir_, budget_);
    if (values.rank() != 1)
      throw InvalidGraph(where + ".values: must be 1-D [NNZ], got " + to_string(values.shape()));
    const std::int64_t nnz = values.shape()[0];
    std::int64_t numel = 0;
    try {
      numel = element_count(shape);
    } catch (const ShapeMismatch&) {
      throw ShapeMismatch(where + ".dims: element count of " + to_string(shape) + " overflows int64");
    }
    budget_.charge(shape, values.dtype(), where);
    Tensor indices;
    if (sparse.has_indices())
      indices = onnx_io::read_tensor(sparse.indices(), where + ".indices", model_dir_, budget_);
    const auto rank = static_cast<std::int64_t>(shape.size());
    const bool linear = indices.rank() == 1;
    if (!sparse.has_indices() || indices.dtype() != DType::Int64 ||
        !(linear ? indices.shape()[0] == nnz
                 : indices.rank() == 2 && indices.shape()[0] == nnz && indices.shape()[1] == rank))
      throw InvalidGraph(where + ".indices: must be int64 [" + std::to_string(nnz) + ", " + std::to_string(rank) +
                         "] or [" + std::to_string(nnz) + "] for " + std::to_string(nnz) + " values of a " +
                         to_string(shape) + " tensor" +
                         (sparse.has_indices() ? ", got " + std::string(dtype_name(indices.dtype())) + " " +
                                                     to_string(indices.shape())
                                               : std::string(", got none")));
    Tensor dense(values.dtype(), shape);
    const std::size_t width = dtype_size(values.dtype());
    const std::int64_t* idx = indices.data<std::int64_t>();
    std::vector<bool> seen(static_cast<std::size_t>(numel), false);
    for (std::int64_t k = 0; k < nnz; ++k) {
      std::int64_t at = 0;
      if (linear) {
        at = idx[k];
      } else {
        for (std::int64_t d = 0; d < rank; ++d) {
          const std::int64_t i = idx[k * rank + d];
          if (i < 0 || i >= shape[static_cast<std::size_t>(d)])
            throw InvalidGraph(where + ".indices: value " + std::to_string(k) + " has index " + std::to_string(i) +
                               " on axis " + std::to_string(d) + ", outside [0, " +
                               std::to_string(shape[static_cast<std::size_t>(d)]) + ")");
          at = at * shape[static_cast<std::size_t>(d)] + i;
        }
      }
      if (at < 0 || at >= numel)
        throw InvalidGraph(where + ".indices: value " + std::to_string(k) + " has position " + std::to_string(at) +
                           ", outside [0, " + std::to_string(numel) + ")");
      if (seen[static_cast<std::size_t>(at)])
        throw InvalidGraph(where + ".indices: position " + std::to_string(at) + " is given twice");
      seen[static_cast<std::size_t>(at)] = true;
      std::memcpy(dense.raw() + static_cast<std::size_t>(at) * width, values.raw() + static_cast<std::size_t>(k) * width,
                  width);
    }
    return dense;
  }

  /// ConstantOfShape (opsets 9, 20, 21) whose shape input is a constant (an
  /// initializer or a folded Constant) becomes the initializer of its output:
  /// the shape filled with `value`'s one element (default float32 0).
  void read_constant_of_shape(const onnx::NodeProto& proto, const std::string& label) {
    if (opset_ < 9)
      throw InvalidGraph(label + ": op not supported at opset " + std::to_string(opset_) +
                         " (ConstantOfShape exists from opset 9)");
    if (proto.input_size() != 1 || proto.input(0).empty() || proto.output_size() != 1 || proto.output(0).empty())
      throw InvalidGraph(label + ": a ConstantOfShape has one input and one output (" +
                         std::to_string(proto.input_size()) + " inputs, " + std::to_string(proto.output_size()) +
                         " outputs given)");
    Tensor fill = constant_fold::default_fill();
    for (int k = 0; k < proto.attribute_size(); ++k) {
      const auto& a = proto.attribute(k);
      const std::string attr = label + ": attribute " + quoted(a.name());
      if (a.name() != "value") throw InvalidAttribute(attr + " is not an attribute of ConstantOfShape (known: value)");
      if (k > 0) throw InvalidAttribute(attr + " is given twice");
      if ((a.has_type() && a.type() != onnx::AttributeProto::TENSOR) || !a.has_t())
        throw InvalidAttribute(attr + " must be a TENSOR of one element");
      fill = onnx_io::read_tensor(a.t(), label + ".attribute[" + std::to_string(k) + "] (value)", model_dir_,
                                  budget_);
      constant_fold::check_fill(fill, attr);
    }
    const std::string& input = proto.input(0);
    const std::string input_label = label + ": input 0 (input) " + quoted(input);
    const auto it = known_.find(input);
    const bool trainable = keys_.trainable.count(input) && keys_.trainable.at(input);
    if (it == known_.end() || it->second.value.empty() || trainable) constant_fold::refuse_computed_shape(input_label);
    const Shape shape = constant_fold::shape_of(it->second.value, input_label);
    budget_.charge(shape, fill.dtype(), label);
    add_folded(proto.output(0), constant_fold::filled(shape, fill));
  }

  void read_node(const onnx::NodeProto& proto, const std::string& name, const std::string& label) {
    onnx_import::OnnxNode node;
    node.op_type = proto.op_type();
    node.name = name;
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    // An attribute kind nodeflow lacks is reported after an op it lacks:
    // "op not supported" is the first thing to know about an If node.
    std::optional<InvalidAttribute> refused_attribute;
    for (int k = 0; k < proto.attribute_size(); ++k) {
      const auto& a = proto.attribute(k);
      try {
        AttrValue value = onnx_io::attribute_value(a, label);
        if (!node.attributes.emplace(a.name(), std::move(value)).second)
          throw InvalidAttribute(label + ": attribute " + quoted(a.name()) + " is given twice");
      } catch (const InvalidAttribute& e) {
        if (!refused_attribute) refused_attribute = e;
      }
    }
    if (refused_attribute) {
      if (!registry_.find(node.op_type)) {
        onnx_import::OnnxNode bare = node;
        bare.attributes.clear();
        upgrade(bare);  // throws for an op nodeflow lacks
      }
      throw *refused_attribute;
    }
    upgrade(node);

    NodeDef def;
    def.op_type = node.op_type;
    def.name = node.name;
    def.inputs = std::move(node.inputs);
    def.attributes = std::move(node.attributes);
    def.specified_outputs_name = output_names(node.outputs, def, take_key(keys_.specified_outputs, def.name,
                                                                           onnx_io::kSpecifiedOutputsSuffix));
    if (take_key(keys_.ratio_attribute, def.name, onnx_io::kRatioAttributeSuffix)) fold_ratio(def);
    if (const auto it = keys_.training.find(def.name); it != keys_.training.end()) {
      def.training = it->second;
      used_keys_.insert(onnx_io::metadata_key(def.name, onnx_io::kTrainingSuffix));
    }
    if (const auto it = keys_.lda_coeff.find(def.name); it != keys_.lda_coeff.end()) {
      def.lda_coeff = it->second;
      used_keys_.insert(onnx_io::metadata_key(def.name, onnx_io::kLdaCoeffSuffix));
    }
    def_.nodes.push_back(std::move(def));
    infer_outputs(def_.nodes.size() - 1);
  }

  /// True when `names` holds `name` (a key of metadata_props, then used).
  bool take_key(const std::set<std::string>& names, const std::string& name, std::string_view suffix) {
    if (!names.count(name)) return false;
    used_keys_.insert(onnx_io::metadata_key(name, suffix));
    return true;
  }

  /// A Dropout whose `ratio` attribute the writer gave as input 1 (the key
  /// nodeflow.<node>.ratio_attribute): the scalar float32 initializer becomes
  /// the attribute again, read as a FLOAT attribute is; the initializer goes
  /// once every node is read, if nothing else uses it.
  void fold_ratio(NodeDef& def) {
    const std::string key = onnx_io::metadata_key(def.name, onnx_io::kRatioAttributeSuffix);
    const std::string where = keys_.subjects.at(key).where;
    if (def.op_type != "Dropout")
      throw InvalidGraph(where + ": node " + quoted(std::as_const(def.name)) + " is a " + printable(def.op_type, 100) +
                         ", not a Dropout");
    const Initializer* ratio = nullptr;
    if (def.inputs.size() == 2)
      for (const Initializer& init : def_.initializers)
        if (init.name == def.inputs[1]) ratio = &init;
    if (ratio == nullptr || ratio->value.dtype() != DType::Float32 || !ratio->value.shape().empty())
      throw InvalidGraph(where + ": node " + quoted(std::as_const(def.name)) +
                         " needs exactly 2 inputs, the second a scalar float32 initializer (its ratio)");
    def.attributes["ratio"] = attribute_double(ratio->value.values<float>()[0]);
    folded_ratios_.emplace(def.inputs[1], where);
    def.inputs.pop_back();
  }

  /// Removes the initializers fold_ratio turned into attributes.
  void drop_folded_ratios() {
    if (folded_ratios_.empty()) return;
    const auto check_unused = [&](const std::string& tensor, const std::string& user) {
      if (const auto it = folded_ratios_.find(tensor); it != folded_ratios_.end())
        throw InvalidGraph(it->second + ": its initializer " + quoted(tensor) + " is also used by " + user);
    };
    for (const NodeDef& n : def_.nodes)
      for (const std::string& in : n.inputs) check_unused(in, "node " + quoted(n.name));
    for (const std::string& out : def_.outputs) check_unused(out, "the graph outputs");
    std::erase_if(def_.initializers, [&](const Initializer& init) { return folded_ratios_.count(init.name) > 0; });
  }

  /// The dtypes and shapes of node `index`'s outputs by the library's own
  /// inference, as the Graph infers them (compile_node, infer_node), so that a
  /// later node whose old form needs its input's shape (Softmax before 13, PRelu
  /// before 7) is read after any node. Nothing is learnt when an input is not
  /// known yet (ONNX lists nodes in order, but the Graph sorts them anyway). An
  /// error is kept and thrown when a later node asks for the output: it is the
  /// error the Graph reports for that node.
  void infer_outputs(std::size_t index) {
    const NodeDef& def = def_.nodes[index];
    InferContext ctx;
    for (const std::string& in : def.inputs) {
      if (in.empty()) {
        ctx.inputs.push_back(nullptr);
        ctx.constants.push_back(nullptr);
        continue;
      }
      const auto it = known_.find(in);
      if (it == known_.end()) return;
      const bool trainable = keys_.trainable.count(in) && keys_.trainable.at(in);
      ctx.inputs.push_back(&it->second.info);
      ctx.constants.push_back(it->second.value.empty() || trainable ? nullptr : &it->second.value);
    }
    std::vector<std::string> outputs;
    try {
      nodeflow::detail::CompiledNode compiled =
          nodeflow::detail::compile_node(index, def, registry_, [](const std::string&) { return false; });
      outputs = std::move(compiled.outputs);
      const auto where = [&] { return node_path(index, def.name); };
      ctx.num_outputs = outputs.size();
      nodeflow::detail::check_constant_inputs(nodeflow::detail::find_schema(registry_, def.op_type, where()), def.inputs,
                                    ctx.constants, where());
      std::vector<TensorInfo> infos = nodeflow::detail::infer_node(*compiled.node, ctx, def.inputs, where);
      // A shape whose element count overflows stays unknown: the Graph refuses it.
      const auto countable = [](const Shape& shape) {
        Shape known;
        for (const std::int64_t d : shape) known.push_back(d < 0 ? 1 : d);
        try {
          element_count(known);
          return true;
        } catch (const ShapeMismatch&) {
          return false;
        }
      };
      for (std::size_t k = 0; k < outputs.size() && k < infos.size(); ++k)
        if (countable(infos[k].shape))
          known_.try_emplace(outputs[k], onnx_import::KnownTensor{std::move(infos[k]), Tensor()});
    } catch (const Error&) {
      if (outputs.empty() && def.specified_outputs_name) outputs = *def.specified_outputs_name;
      if (outputs.empty()) outputs.push_back(default_output_name(def.name, 0));
      for (const std::string& out : outputs) failed_.try_emplace(out, std::current_exception());
    }
  }

  void upgrade(onnx_import::OnnxNode& node) {
    const onnx_import::AddConstant add_constant = [this](const std::string& hint, Tensor value) {
      budget_.charge(value.shape(), value.dtype(), "constant " + quoted(hint));
      Initializer init;
      init.name = tensor_names_.make(hint);
      init.value = std::move(value);
      known_[init.name] = {TensorInfo{init.value.dtype(), init.value.shape()}, init.value};
      initializer_names_.insert(init.name);
      def_.initializers.push_back(init);
      return init.name;
    };
    const onnx_import::TensorLookup known =
        [this](const std::string& tensor) -> std::optional<onnx_import::KnownTensor> {
      if (const auto it = known_.find(tensor); it != known_.end()) return it->second;
      if (const auto it = failed_.find(tensor); it != failed_.end()) std::rethrow_exception(it->second);
      return std::nullopt;
    };
    const onnx_import::TensorRead read = [this](const std::string& tensor) { return read_names_.count(tensor) > 0; };
    onnx_import::upgrade_node(node, opset_, add_constant, registry_, known, read);
  }

  /// The node's specified_outputs_name: unset when its outputs are exactly the
  /// ones a document without the key gets (every output, default names).
  /// Trailing absent outputs ("") are dropped; an absent one before a named
  /// one gets a fresh name, since nodeflow's outputs are a prefix.
  /// `specified` (the key nodeflow.<node>.specified_outputs_name): set whatever the names.
  std::optional<std::vector<std::string>> output_names(std::vector<std::string> outputs,
                                                       const NodeDef& def, bool specified) {
    while (!outputs.empty() && outputs.back().empty()) outputs.pop_back();
    for (std::size_t k = 0; k < outputs.size(); ++k)
      if (outputs[k].empty()) outputs[k] = tensor_names_.make(default_output_name(def.name, k));
    const OpSchema* schema = registry_.find(def.op_type);
    if (!schema || specified) return outputs;
    std::size_t count = schema->outputs.size();
    if (!schema->outputs.empty() && schema->outputs.back().variadic) {
      count = 0;
      if (schema->default_output_count) {
        try {
          count = schema->default_output_count(checked_attributes(
              def.op_type, schema->attributes, def.attributes, schema->check_attributes));
        } catch (const Error&) {
          count = 0;  // the Graph reports the attributes
        }
      }
    }
    bool defaults = count > 0 && outputs.size() == count;
    for (std::size_t k = 0; defaults && k < outputs.size(); ++k)
      defaults = outputs[k] == default_output_name(def.name, k);
    if (defaults) return std::nullopt;
    return outputs;
  }

  void apply_trainable() {
    for (Initializer& init : def_.initializers)
      if (const auto it = keys_.trainable.find(init.name); it != keys_.trainable.end()) {
        init.trainable = it->second;
        used_keys_.insert(onnx_io::metadata_key(init.name, onnx_io::kTrainableSuffix));
      }
  }

  void check_keys_used() {
    for (const auto& [key, subject] : keys_.subjects)
      if (!used_keys_.count(key))
        throw InvalidGraph(subject.where + ": the model has no " +
                           (subject.initializer ? "initializer " : "node ") + quoted(subject.name));
  }

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_;
  fs::path model_dir_;
  const OpRegistry& registry_;
  onnx_io::InitializerBudget budget_;
  int opset_ = 0;
  TrainingKeys keys_;
  GraphDef def_;
  UniqueNames tensor_names_, node_names_;
  std::unordered_set<std::string> initializer_names_;
  /// Tensors a node or the graph's outputs read.
  std::unordered_set<std::string> read_names_;
  /// Graph inputs, initializers and the node outputs infer_outputs inferred.
  std::unordered_map<std::string, onnx_import::KnownTensor> known_;
  /// Node outputs whose inference failed: the error.
  std::unordered_map<std::string, std::exception_ptr> failed_;
  /// Initializers fold_ratio made attributes again: the metadata key's path.
  std::map<std::string, std::string> folded_ratios_;
  std::set<std::string> used_keys_;
};

}  // namespace
}  // namespace onnx_io

bool is_onnx_path(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".onnx") == 0;
}

GraphDef parse_onnx_def(std::string_view bytes, const std::filesystem::path& model_dir,
                        const OpRegistry& registry, const ReadOptions& options) {
  // What a user most likely handed over instead of a model, said plainly.
  if (bytes.empty()) throw InvalidGraph("model: the file is empty (0 bytes), not a ModelProto");
  onnx::ModelProto model;
  try {
    onnx_io::detail::parse_bounded(model, bytes, "model", "ModelProto", options.max_model_structure_bytes);
  } catch (const InvalidGraph& e) {
    const auto first = bytes.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || bytes[first] != '{') throw;
    throw InvalidGraph(std::string(e.what()) +
                       "; it starts with '{' like a JSON graph document, which nodeflow reads from a file whose "
                       "name does not end in .onnx");
  }
  return onnx_io::ModelReader(model, model_dir, registry, options).read();
}

Graph load_onnx(std::string_view bytes, const std::filesystem::path& model_dir,
                const ReadOptions& options, const OpRegistry& registry) {
  return Graph(parse_onnx_def(bytes, model_dir, registry, options), registry);
}

Graph load_onnx_file(const std::filesystem::path& path, const ReadOptions& options,
                     const OpRegistry& registry) {
  const std::string bytes = read_text_file(path, "ONNX model");
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  return load_onnx(bytes, dir, options, registry);
}

}  // namespace nodeflow
