#include "serialization/op_schema_json.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <variant>

#include "core/dtype.hpp"
#include "serialization/onnx/opset_history.hpp"

namespace nodeflow {
namespace {

using Json = nlohmann::ordered_json;

Json value_json(const AttrValue& value) {
  return std::visit([](const auto& v) { return Json(v); }, value);
}

Json bound_json(const FloatBound& bound) { return {{"value", bound.value}, {"open", bound.open}}; }

Json attribute_json(const AttrSpec& spec) {
  Json a;
  a["name"] = spec.name;
  a["kind"] = onnx_import::onnx_attribute_type(spec.kind);
  a["required"] = spec.required;
  a["default"] = spec.default_value ? value_json(*spec.default_value) : Json(nullptr);
  // The rule in words, as the graph's messages say it ("expected <rule>").
  a["rule"] = describe(spec);
  if (spec.min) a["min"] = *spec.min;
  if (spec.max) a["max"] = *spec.max;
  if (spec.limit) a["limit"] = *spec.limit;
  if (spec.min_float) a["min_float"] = bound_json(*spec.min_float);
  if (spec.max_float) a["max_float"] = bound_json(*spec.max_float);
  if (!spec.allowed_ints.empty()) a["allowed"] = spec.allowed_ints;
  if (!spec.allowed.empty()) a["allowed"] = spec.allowed;
  if (spec.kind == AttrKind::Ints || spec.kind == AttrKind::Floats ||
      spec.kind == AttrKind::Strings) {
    a["min_length"] = spec.min_length;
    if (spec.length)
      a["length"] = {{"of", spec.length->of.empty() ? Json(nullptr) : Json(spec.length->of)},
                     {"factor", spec.length->factor},
                     {"rule", spec.length->what}};
  }
  a["since_version"] = spec.since_version;
  a["doc"] = spec.doc;
  return a;
}

Json tensor_json(const TensorSpec& spec, bool optional) {
  Json dtypes = Json::array();
  for (DType t : spec.dtypes) dtypes.push_back(std::string(dtype_name(t)));
  return {{"name", spec.name},
          {"dtypes", dtypes},
          {"optional", optional},
          {"variadic", spec.variadic},
          {"constant", spec.constant},
          {"differentiable", receives_gradient(spec)},
          {"doc", spec.doc}};
}

Json tensors_json(const std::vector<TensorSpec>& specs, std::size_t required) {
  Json list = Json::array();
  for (std::size_t k = 0; k < specs.size(); ++k) list.push_back(tensor_json(specs[k], k >= required));
  return list;
}

// SIZE_MAX (a variadic last tensor) is "no upper bound".
Json count_json(std::size_t count) { return count == SIZE_MAX ? Json(nullptr) : Json(count); }

Json op_json(const OpSchema& s) {
  const OpVersion version = op_version(s);
  bool differentiable = false;
  for (const auto& input : s.inputs) differentiable = differentiable || receives_gradient(input);
  Json attributes = Json::array();
  for (const auto& spec : s.attributes) attributes.push_back(attribute_json(spec));
  return {{"op_type", s.op_type},
          {"domain", version.domain},
          {"version", version.version == 0 ? Json(nullptr) : Json(version.version)},
          {"definition", s.definition},
          {"doc", s.doc},
          {"differentiable", differentiable},
          {"min_inputs", s.min_inputs},
          {"max_inputs", count_json(s.max_inputs())},
          {"inputs", tensors_json(s.inputs, s.min_inputs)},
          {"min_outputs", s.min_outputs},
          {"max_outputs", count_json(s.max_outputs())},
          {"outputs", tensors_json(s.outputs, s.min_outputs)},
          {"attributes", attributes}};
}

// The keys of docs/graph-format.md, "Nodes", that are not the op's.
Json node_keys_json() {
  return Json::array(
      {{{"name", "training"},
        {"type", "boolean"},
        {"default", true},
        {"doc", "false freezes the node: it runs as in inference and passes no gradient to its "
                "inputs"}},
       {{"name", "lda_coeff"},
        {"type", "number"},
        {"default", 1.0},
        {"doc", "multiplies the gradient the node sends to its inputs, except its trainable "
                "initializers"}},
       {{"name", "specified_outputs_name"},
        {"type", "list of strings"},
        {"default", nullptr},
        {"doc", "names of a prefix of the op's outputs (at least the required ones); absent: "
                "output i of node N is N for i = 0 and N:i after, and every output is "
                "produced"}}});
}

}  // namespace

OpVersion op_version(const OpSchema& schema) {
  const std::string prefix = "ONNX " + schema.op_type + "-";
  const std::string& d = schema.definition;
  if (d.size() > prefix.size() && d.compare(0, prefix.size(), prefix) == 0) {
    int version = 0;
    for (std::size_t i = prefix.size(); i < d.size(); ++i) {
      if (d[i] < '0' || d[i] > '9' || version > 9999) return {"nodeflow", 0};
      version = version * 10 + (d[i] - '0');
    }
    return {"", version};
  }
  return {"nodeflow", 0};
}

std::string op_schemas_json(const OpRegistry& registry) {
  Json ops = Json::array();
  for (const auto& name : registry.names()) ops.push_back(op_json(*registry.find(name)));
  const Json doc = {{"format", "nodeflow.ops"},
                    {"version", 1},
                    {"node_keys", node_keys_json()},
                    {"ops", ops}};
  // Every string is the schemas' own ASCII; replace guards against a stray byte.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace nodeflow
