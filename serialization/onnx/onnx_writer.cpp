#include "serialization/onnx/onnx_writer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>  // onnx-ml.pb.h (ONNX_ML), with the ONNX_API it needs

#include "core/errors.hpp"
#include "serialization/json_text.hpp"
#include "serialization/onnx.hpp"
#include "serialization/onnx/onnx_reader.hpp"
#include "serialization/onnx/onnx_tensor.hpp"
#include "serialization/onnx/opset_history.hpp"

namespace nodeflow {
namespace onnx_io {
namespace {

bool is_one_of(const std::string& op, std::initializer_list<const char*> ops) {
  return std::any_of(ops.begin(), ops.end(), [&](const char* o) { return op == o; });
}

std::string quoted(const std::string& name) {
  std::string out(1, '\'');  // not "'" + ...: GCC 12's -Wrestrict misfires on it
  out += printable(name, 200);
  out += '\'';
  return out;
}

}  // namespace

namespace {

/// An element type ONNX allows that onnxruntime 1.30's CPU provider has no
/// kernel for: the ones tests/onnxruntime/cross_check.py meets in the
/// conformance corpora (it requires each such node to fail there).
struct OrtGap {
  const char* op;
  DType dtype;
};
constexpr OrtGap kOrtGaps[] = {
    {"AveragePool", DType::Float64}, {"LpPool", DType::Float64},        {"GlobalLpPool", DType::Float64},
    {"ConvTranspose", DType::Float64}, {"Erf", DType::Float64},         {"Resize", DType::Float64},
    {"AveragePool", DType::BFloat16}, {"LpPool", DType::BFloat16},      {"MaxPool", DType::BFloat16},
    {"Gelu", DType::Float64},  // onnxruntime runs Gelu-20 as its function body, whose Erf has no float64 kernel
};

}  // namespace

std::string portability_problem(const NodeDef& def, const std::vector<TensorInfo>& inputs) {
  const std::string& op = def.op_type;
  if (inputs.empty()) return "";
  const TensorInfo& x = inputs.front();
  const auto approximate = def.attributes.find("approximate");
  const bool tanh_gelu = approximate != def.attributes.end() && approximate->second == AttrValue(std::string("tanh"));
  for (const OrtGap& gap : kOrtGaps)
    if (op == gap.op && x.dtype == gap.dtype && !(op == "Gelu" && tanh_gelu))
      return "onnxruntime (1.30, CPU) has no " + std::string(dtype_name(x.dtype)) + " kernel for " + op +
             (op == "Gelu" ? " (its function body's Erf)" : "");
  const bool windowed = is_one_of(op, {"AveragePool", "MaxPool", "LpPool", "MaxUnpool", "Conv",
                                       "ConvTranspose"});
  if (windowed && x.shape.size() > 5)
    return "onnxruntime runs " + op + " over 1 to 3 spatial axes, this node has " + std::to_string(x.shape.size() - 2);
  return "";
}

namespace {

void set_type(onnx::TypeProto& type, const TensorInfo& info, const std::string& dim_param_prefix) {
  auto* tensor = type.mutable_tensor_type();
  tensor->set_elem_type(onnx_data_type(info.dtype));
  auto* shape = tensor->mutable_shape();
  for (std::size_t k = 0; k < info.shape.size(); ++k) {
    auto* dim = shape->add_dim();
    if (info.shape[k] != kDynamicDim)
      dim->set_dim_value(info.shape[k]);
    else if (!dim_param_prefix.empty())
      dim->set_dim_param(dim_param_prefix + "_dim" + std::to_string(k));
  }
}

/// The shortest decimal that reads back to `v` (as the JSON writer writes it).
template <typename T>
std::string shortest(T v) {
  std::string text;
  json_text::append_float(text, v);
  return text;
}

/// A float attribute as ONNX holds it (float32); a warning when the value
/// changes, an error when float32 has no such number.
float attribute_float(double v, const std::string& where, std::vector<std::string>& warnings) {
  if (!std::isfinite(v)) return static_cast<float>(v);
  if (std::fabs(v) > static_cast<double>(std::numeric_limits<float>::max()))
    throw InvalidAttribute(where + ": " + shortest(v) +
                           " is beyond float32, the type of ONNX's FLOAT attributes");
  const auto f = static_cast<float>(v);
  if (attribute_double(f) != v)
    warnings.push_back(where + ": " + shortest(v) + " is written as the float32 " + shortest(f) +
                       " (ONNX's FLOAT attributes are float32)");
  return f;
}

void write_attribute(const std::string& name, const AttrValue& value, onnx::AttributeProto& a,
                     const std::string& where, std::vector<std::string>& warnings) {
  a.set_name(name);
  const std::string at = where + ": attribute " + quoted(name);
  if (const auto* i = std::get_if<std::int64_t>(&value)) {
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(*i);
  } else if (const auto* d = std::get_if<double>(&value)) {
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(attribute_float(*d, at, warnings));
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(*s);
  } else if (const auto* is = std::get_if<std::vector<std::int64_t>>(&value)) {
    a.set_type(onnx::AttributeProto::INTS);
    for (const std::int64_t v : *is) a.add_ints(v);
  } else if (const auto* ds = std::get_if<std::vector<double>>(&value)) {
    a.set_type(onnx::AttributeProto::FLOATS);
    for (std::size_t k = 0; k < ds->size(); ++k)
      a.add_floats(attribute_float((*ds)[k], at + "[" + std::to_string(k) + "]", warnings));
  } else {
    a.set_type(onnx::AttributeProto::STRINGS);
    for (const auto& v : std::get<std::vector<std::string>>(value)) a.add_strings(v);
  }
}

void add_metadata(onnx::ModelProto& model, const std::string& key, const std::string& value) {
  auto* entry = model.add_metadata_props();
  entry->set_key(key);
  entry->set_value(value);
}

}  // namespace

bool spells_default_names(const NodeDef& def) {
  if (!def.specified_outputs_name) return false;
  const std::vector<std::string>& names = *def.specified_outputs_name;
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k] != default_output_name(def.name, k)) return false;
  return true;
}

namespace {

std::string serialized(const onnx::ModelProto& model) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    if (!model.SerializeToCodedStream(&out))
      throw InvalidGraph("model: the ModelProto cannot be serialized (over 2 GiB?)");
  }
  return bytes;
}

}  // namespace
}  // namespace onnx_io

OnnxModel write_onnx(const Graph& graph) {
  const GraphDef& def = graph.def();
  OnnxModel result;

  // Each node as written, in execution order: Dropout's ratio attribute, which
  // ONNX has not from opset 12, becomes a constant input 1 (docs/onnx.md).
  std::vector<onnx_io::WrittenNode> nodes;
  std::vector<Initializer> added;
  for (const Graph::Step& step : graph.steps()) {
    onnx_io::WrittenNode& w = nodes.emplace_back();
    w.def = def.nodes[step.def_index];
    w.def.inputs = step.inputs;
    w.outputs = step.outputs;
    if (w.def.op_type == "Dropout")
      if (const auto it = w.def.attributes.find("ratio"); it != w.def.attributes.end()) {
        const double ratio = std::get<double>(it->second);
        w.def.attributes.erase(it);
        std::string name = w.def.name + "_ratio";
        for (std::size_t k = 1; graph.slot(name) != Graph::kAbsent ||
                                std::any_of(added.begin(), added.end(), [&](const Initializer& i) { return i.name == name; });
             ++k)
          name = w.def.name + "_ratio_" + std::to_string(k);
        const float f = onnx_io::attribute_float(ratio, "node " + onnx_io::quoted(w.def.name) + " (Dropout): attribute 'ratio'", result.warnings);
        added.push_back({name, Tensor::from<float>({}, {f}), false});
        w.def.inputs.resize(std::max<std::size_t>(w.def.inputs.size(), 2));
        w.def.inputs[1] = name;  // the graph refuses the attribute next to input 1
        w.ratio_attribute = true;
      }
    for (const std::string& in : w.def.inputs) {
      if (in.empty()) {
        w.inputs.emplace_back();
      } else if (graph.slot(in) != Graph::kAbsent) {
        w.inputs.push_back(graph.info(in));
      } else {
        w.inputs.push_back(TensorInfo{DType::Float32, {}});  // an added ratio
      }
    }
  }

  // The opset: the lowest that holds every node, and at least 19.
  int opset = onnx_import::kMinWrittenOpset;
  for (const onnx_io::WrittenNode& w : nodes) {
    std::vector<DType> dtypes;
    for (const auto& info : w.inputs) dtypes.push_back(info ? info->dtype : DType::Float32);
    opset = std::max(opset, onnx_import::lowest_opset(w.def, dtypes));
  }
  result.opset = opset;

  onnx::ModelProto model;
  model.set_ir_version(kOnnxWrittenIrVersion);
  model.set_producer_name("nodeflow");
  auto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);

  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(def.name);
  for (const GraphInput& in : def.inputs) {
    auto* v = g.add_input();
    v->set_name(in.name);
    onnx_io::set_type(*v->mutable_type(), in.info, in.name);
  }
  for (const Initializer& init : def.initializers) {
    if (init.value.empty())
      throw InvalidGraph("initializers (" + init.name + "): initializer has no value");
    onnx_io::write_tensor(init.value, init.name, *g.add_initializer());
  }
  for (const Initializer& init : added) onnx_io::write_tensor(init.value, init.name, *g.add_initializer());
  std::set<std::string> used(def.outputs.begin(), def.outputs.end());
  for (const onnx_io::WrittenNode& w : nodes) used.insert(w.def.inputs.begin(), w.def.inputs.end());
  for (const onnx_io::WrittenNode& w : nodes) {
    const NodeDef& n = w.def;
    const std::string where = "node " + onnx_io::quoted(n.name) + " (" + n.op_type + ")";
    auto* node = g.add_node();
    node->set_name(n.name);
    node->set_op_type(n.op_type);
    for (const std::string& in : n.inputs) node->add_input(in);
    for (const std::string& out : w.outputs) node->add_output(out);
    for (const auto& [name, value] : n.attributes)
      onnx_io::write_attribute(name, value, *node->add_attribute(), where, result.warnings);
    std::vector<std::optional<DType>> in_dtypes;
    std::vector<TensorInfo> present;
    for (const auto& info : w.inputs) {
      in_dtypes.push_back(info ? std::optional<DType>(info->dtype) : std::nullopt);
      if (info) present.push_back(*info);
    }
    // An output nothing reads is ONNX's to type (Dropout's unused mask is a bool there).
    std::vector<std::optional<DType>> out_dtypes;
    for (const std::string& out : w.outputs)
      out_dtypes.push_back(used.count(out) ? std::optional<DType>(graph.info(out).dtype) : std::nullopt);
    // One line per node: what ONNX cannot type, then what onnxruntime cannot run.
    std::string problems;
    for (const std::string& problem :
         {onnx_import::type_problem(n.op_type, opset, in_dtypes, out_dtypes), onnx_io::portability_problem(n, present)})
      if (!problem.empty()) problems += (problems.empty() ? "" : "; ") + problem;
    if (!problems.empty()) result.warnings.push_back(where + ": " + problems + "; written all the same");
  }
  for (const std::string& out : def.outputs) {
    auto* v = g.add_output();
    v->set_name(out);
    onnx_io::set_type(*v->mutable_type(), graph.info(out), "");
  }

  // The training keys (docs/onnx.md): one entry per key the JSON document has.
  onnx_io::add_metadata(model, std::string(onnx_io::kGraphVersionKey), "1");
  for (const onnx_io::WrittenNode& w : nodes) {
    const NodeDef& n = w.def;
    if (!n.training)
      onnx_io::add_metadata(model, onnx_io::metadata_key(n.name, onnx_io::kTrainingSuffix), "false");
    if (n.lda_coeff != 1.0) {
      detail::check_lda_coeff(n.lda_coeff, "node " + onnx_io::quoted(n.name));
      std::string text;
      json_text::append_float(text, n.lda_coeff);
      onnx_io::add_metadata(model, onnx_io::metadata_key(n.name, onnx_io::kLdaCoeffSuffix), text);
    }
    if (onnx_io::spells_default_names(n))
      onnx_io::add_metadata(model, onnx_io::metadata_key(n.name, onnx_io::kSpecifiedOutputsSuffix), "true");
    if (w.ratio_attribute)
      onnx_io::add_metadata(model, onnx_io::metadata_key(n.name, onnx_io::kRatioAttributeSuffix), "true");
  }
  for (const Initializer& init : def.initializers)
    onnx_io::add_metadata(model, onnx_io::metadata_key(init.name, onnx_io::kTrainableSuffix),
                          init.trainable ? "true" : "false");

  result.bytes = onnx_io::serialized(model);
  return result;
}

OnnxModel save_onnx_file(const std::filesystem::path& path, const Graph& graph,
                         const WriteProgress& progress) {
  // The whole model is serialized before the file is touched.
  OnnxModel model = write_onnx(graph);
  write_file_atomically(path, model.bytes, progress);
  return model;
}

}  // namespace nodeflow
