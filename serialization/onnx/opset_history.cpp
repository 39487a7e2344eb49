#include "serialization/onnx/opset_history.hpp"

#include <algorithm>
#include <map>
#include <type_traits>

#include "core/errors.hpp"
#include "serialization/onnx/detail/opset_table.hpp"

namespace nodeflow::onnx_import {
namespace detail {

std::vector<AttrInfo> with(std::vector<AttrInfo> base, std::vector<AttrInfo> more) {
  base.insert(base.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return base;
}

namespace {

constexpr std::size_t kMessageNameLimit = 200;

std::string quoted(const std::string& s) {
  std::string out = "'";
  out += printable(s, kMessageNameLimit);
  out += '\'';
  return out;
}

std::string where_of(const OnnxNode& node, int opset) {
  return "node " + quoted(node.name) + " (" + printable(node.op_type, kMessageNameLimit) +
         ", opset " + std::to_string(opset) + ")";
}

AttrKind kind_of(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }

static_assert(std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(AttrKind::Int), AttrValue>,
                             std::int64_t> &&
              std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(AttrKind::Strings), AttrValue>,
                             std::vector<std::string>>);

/// Every table, by op_type.
const std::map<std::string, OpHistory>& tables() {
  static const std::map<std::string, OpHistory> all = [] {
    std::map<std::string, OpHistory> m;
    for (auto family : {activations_history, elementwise_history, linear_history, normalization_history,
                        pooling_history, reduction_history, shape_history})
      for (OpHistory& h : family()) {
        for (OpVersion& v : h.versions)
          std::sort(v.attributes.begin(), v.attributes.end(),
                    [](const AttrInfo& a, const AttrInfo& b) { return a.name < b.name; });
        const std::string name = h.op_type;
        if (!m.emplace(name, std::move(h)).second) throw Error("opset history: " + name + " has two tables");
      }
    return m;
  }();
  return all;
}

const OpHistory* find_history(const std::string& op_type) {
  auto it = tables().find(op_type);
  return it == tables().end() ? nullptr : &it->second;
}

/// The version in effect at `opset`, or nullptr before the op's first one.
const OpVersion* version_at(const OpHistory& h, int opset) {
  const OpVersion* found = nullptr;
  for (const OpVersion& v : h.versions)
    if (v.since <= opset) found = &v;
  return found;
}

const AttrInfo* find_attr(const OpVersion& v, const std::string& name) {
  for (const AttrInfo& a : v.attributes)
    if (a.name == name) return &a;
  return nullptr;
}

std::string attr_names(const OpVersion& v) {
  std::vector<std::string> names;
  for (const AttrInfo& a : v.attributes) names.push_back(a.name);
  return names.empty() ? "none" : join(names);
}

std::string count_text(std::size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

/// Present inputs/outputs: the index after the last non-empty name.
std::size_t present_count(const std::vector<std::string>& names) {
  std::size_t n = names.size();
  while (n > 0 && names[n - 1].empty()) --n;
  return n;
}

/// The attribute names of the node are those of its version, with their kinds.
void check_attributes(Upgrade& up, const OpHistory& h, const OpVersion& v) {
  for (const auto& [name, value] : up.node().attributes) {
    const AttrInfo* info = find_attr(v, name);
    if (info == nullptr) {
      for (const OpVersion& later : h.versions)
        if (later.since > v.since && find_attr(later, name) != nullptr)
          up.refuse_attribute("attribute " + quoted(name) + " exists from opset " +
                              std::to_string(later.since));
      int removed_in = 0;
      bool had = false;
      for (const OpVersion& e : h.versions) {
        if (e.since > v.since) break;
        if (find_attr(e, name) != nullptr) {
          had = true;
          removed_in = 0;
        } else if (had && removed_in == 0) {
          removed_in = e.since;
        }
      }
      if (removed_in != 0)
        up.refuse_attribute("attribute " + quoted(name) + " was removed in opset " +
                            std::to_string(removed_in));
      up.refuse_attribute("unknown attribute " + quoted(name) + " (known at opset " +
                          std::to_string(up.opset()) + ": " + attr_names(v) + ")");
    }
    if (kind_of(value) != info->kind)
      up.refuse_attribute("attribute " + quoted(name) + " must be " + onnx_attribute_type(info->kind) +
                          " at opset " + std::to_string(up.opset()) + ", got " +
                          onnx_attribute_type(kind_of(value)));
  }
}

void check_counts(Upgrade& up, const OpHistory& h, const OpVersion& v) {
  const std::size_t inputs = present_count(up.node().inputs);
  if (inputs > v.max_inputs)
    up.refuse("has " + count_text(inputs, "input") + "; " + h.op_type + " at opset " +
              std::to_string(up.opset()) + " takes at most " + std::to_string(v.max_inputs));
  const std::size_t outputs = present_count(up.node().outputs);
  if (outputs > v.max_outputs)
    up.refuse("has " + count_text(outputs, "output") + "; " + h.op_type + " at opset " +
              std::to_string(up.opset()) + " has at most " + std::to_string(v.max_outputs));
}

Tensor moved_tensor(Upgrade& up, const std::string& name, const AttrValue& value) {
  if (const auto* ints = std::get_if<std::vector<std::int64_t>>(&value))
    return Tensor::from<std::int64_t>({static_cast<std::int64_t>(ints->size())}, *ints);
  if (const auto* f = std::get_if<double>(&value)) {
    Tensor scalar = Tensor::from<double>({}, {*f});
    const std::optional<KnownTensor> data = up.known_input(0);
    const DType dtype = data && is_float(data->info.dtype) ? data->info.dtype : DType::Float32;
    return scalar.cast(dtype);
  }
  if (const auto* i = std::get_if<std::int64_t>(&value)) return Tensor::from<std::int64_t>({}, {*i});
  up.refuse_attribute("attribute " + quoted(name) + " cannot become an input");
}

void apply(Upgrade& up, const ToInput& s) {
  auto& attrs = up.node().attributes;
  auto it = attrs.find(s.attribute);
  if (it == attrs.end()) return;
  if (!up.input(s.input).empty())
    up.refuse_attribute("attribute " + quoted(s.attribute) + " and input " +
                        std::to_string(s.input) + " are both given");
  Tensor value = moved_tensor(up, s.attribute, it->second);
  attrs.erase(it);
  up.set_input(s.input, up.constant(s.attribute, std::move(value)));
}

void apply(Upgrade& up, const OldDefault& s) { up.node().attributes.try_emplace(s.attribute, s.value); }

void apply(Upgrade& up, const Drop& s) { up.node().attributes.erase(s.attribute); }

void apply(Upgrade& up, const Only& s) {
  auto& attrs = up.node().attributes;
  auto it = attrs.find(s.attribute);
  if (it == attrs.end()) return;
  if (it->second != s.value)
    up.refuse_attribute("attribute " + quoted(s.attribute) + " = " + to_string(it->second) +
                        " is not supported: " + s.why);
  attrs.erase(it);
}

void apply(Upgrade& up, const MoveInput& s) {
  std::string tensor = up.input(s.from);
  if (tensor.empty()) return;
  up.node().inputs[s.from].clear();
  up.set_input(s.to, std::move(tensor));
  auto& in = up.node().inputs;
  in.resize(std::max(present_count(in), std::size_t{1}));
}

void apply(Upgrade& up, const Custom& s) { s.apply(up); }

}  // namespace

std::string Upgrade::where() const { return where_of(node_, opset_); }

void Upgrade::refuse_attribute(const std::string& what) const {
  throw InvalidAttribute(where() + ": " + what);
}

void Upgrade::refuse(const std::string& what) const { throw InvalidGraph(where() + ": " + what); }

const AttrValue* Upgrade::attribute(const std::string& name) const {
  auto it = node_.attributes.find(name);
  return it == node_.attributes.end() ? nullptr : &it->second;
}

void Upgrade::set_input(std::size_t index, std::string tensor) {
  if (node_.inputs.size() <= index) node_.inputs.resize(index + 1);
  node_.inputs[index] = std::move(tensor);
}

std::string Upgrade::input(std::size_t index) const {
  return index < node_.inputs.size() ? node_.inputs[index] : std::string();
}

std::string Upgrade::constant(const std::string& what, Tensor value) const {
  if (!add_constant_) refuse("attribute '" + what + "' moves to an input, but no constant can be added");
  return add_constant_(node_.name + "_" + what, std::move(value));
}

bool Upgrade::output_read(std::size_t index) const {
  if (index >= node_.outputs.size() || node_.outputs[index].empty()) return false;
  return !read_ || read_(node_.outputs[index]);
}

std::optional<KnownTensor> Upgrade::known_input(std::size_t index) const {
  const std::string tensor = input(index);
  if (tensor.empty() || !known_) return std::nullopt;
  return known_(tensor);
}

}  // namespace detail

using detail::OpHistory;
using detail::OpVersion;

void upgrade_node(OnnxNode& node, int opset, const AddConstant& add_constant,
                  const OpRegistry& registry, const TensorLookup& known, const TensorRead& read) {
  detail::Upgrade up(node, opset, add_constant, known, read);
  if (opset < 1 || opset > kMaxOpset)
    up.refuse("opset " + std::to_string(opset) + " is not read (the default-domain opsets read are 1 to " +
              std::to_string(kMaxOpset) + ")");
  if (registry.find(node.op_type) == nullptr) up.refuse("op not supported");
  const OpHistory* h = detail::find_history(node.op_type);
  // A registered op without a history (an op of the tests, a new op) has no
  // known ONNX versions to read it at.
  if (h == nullptr) up.refuse("op not supported (no ONNX opset history for it)");
  const OpVersion* v = detail::version_at(*h, opset);
  if (v == nullptr)
    up.refuse("op not supported at opset " + std::to_string(opset) + " (" + h->op_type +
              " exists from opset " + std::to_string(h->versions.front().since) + ")");
  if (!v->refused.empty()) up.refuse(h->op_type + "-" + std::to_string(v->since) + " is not supported: " + v->refused);
  detail::check_attributes(up, *h, *v);
  detail::check_counts(up, *h, *v);
  for (const detail::Step& step : v->steps) std::visit([&](const auto& s) { detail::apply(up, s); }, step);
}

namespace {

/// True when the version of `h` at `opset` takes `def` as nodeflow writes it.
bool holds(const OpHistory& h, int opset, const NodeDef& def, const std::vector<DType>& input_dtypes) {
  const OpVersion* v = detail::version_at(h, opset);
  if (v == nullptr || !v->refused.empty()) return false;
  for (const auto& [name, value] : def.attributes) {
    const AttrInfo* info = detail::find_attr(*v, name);
    if (info == nullptr || info->kind != detail::kind_of(value)) return false;
  }
  for (const detail::Step& step : v->steps) {
    // An old default the node does not state would be read as the old one.
    if (const auto* d = std::get_if<detail::OldDefault>(&step))
      if (!def.attributes.contains(d->attribute)) return false;
    if (std::holds_alternative<detail::Custom>(step) || std::holds_alternative<detail::MoveInput>(step))
      return false;
  }
  if (detail::present_count(def.inputs) > v->max_inputs) return false;
  if (def.specified_outputs_name && def.specified_outputs_name->size() > v->max_outputs) return false;
  for (const detail::DTypeSince& d : h.dtype_since) {
    if (opset >= d.since) continue;
    for (std::size_t k = 0; k < input_dtypes.size(); ++k)
      if (!(k < def.inputs.size() && def.inputs[k].empty()) && input_dtypes[k] == d.dtype &&
          (d.input == detail::kVariadic || d.input == k)) return false;
  }
  return true;
}

VersionInfo info_of(const OpVersion& v) {
  VersionInfo info{v.since, v.attributes, v.max_inputs, v.max_outputs, v.refused, {}, {}, {}};
  for (const detail::Step& step : v.steps) {
    if (const auto* d = std::get_if<detail::OldDefault>(&step)) info.old_defaults.emplace_back(d->attribute, d->value);
    if (const auto* m = std::get_if<detail::ToInput>(&step)) info.moved_to_inputs.emplace_back(m->attribute, m->input);
    if (const auto* d = std::get_if<detail::Drop>(&step)) info.notes.push_back("'" + d->attribute + "' dropped");
    if (const auto* o = std::get_if<detail::Only>(&step))
      info.notes.push_back("'" + o->attribute + "' only " + to_string(o->value));
    if (const auto* m = std::get_if<detail::MoveInput>(&step))
      info.notes.push_back("input " + std::to_string(m->from) + " becomes input " + std::to_string(m->to));
    if (const auto* c = std::get_if<detail::Custom>(&step)) info.notes.push_back(c->doc);
  }
  return info;
}

}  // namespace

int lowest_opset(const NodeDef& def, const std::vector<DType>& input_dtypes) {
  const OpHistory* h = detail::find_history(def.op_type);
  if (h == nullptr) return kMaxOpset;
  for (int opset = kMinWrittenOpset; opset < kMaxOpset; ++opset)
    if (holds(*h, opset, def, input_dtypes)) return opset;
  return kMaxOpset;
}

std::vector<std::string> history_ops() {
  std::vector<std::string> names;
  for (const auto& [name, h] : detail::tables()) names.push_back(name);
  return names;
}

std::vector<VersionInfo> op_versions(const std::string& op_type) {
  std::vector<VersionInfo> out;
  if (const OpHistory* h = detail::find_history(op_type))
    for (const OpVersion& v : h->versions)
      if (v.since <= kMaxOpset) out.push_back(info_of(v));
  return out;
}

std::optional<TypeConstraints> onnx_type_constraints(const std::string& op_type, int opset) {
  const OpHistory* h = detail::find_history(op_type);
  const auto& table = detail::onnx_types_table();
  const auto it = table.find(op_type);
  if (h == nullptr || it == table.end() || detail::version_at(*h, opset) == nullptr) return std::nullopt;
  TypeConstraints out{it->second.inputs, it->second.outputs};
  // The dtypes that came after `opset`: of one input, or of every input; the
  // outputs share the type of input 0 (the data) in every op that has such.
  for (const detail::DTypeSince& d : h->dtype_since) {
    if (opset >= d.since) continue;
    const auto drop = [&](std::vector<DType>& dtypes) { std::erase(dtypes, d.dtype); };
    for (std::size_t k = 0; k < out.inputs.size(); ++k)
      if (d.input == detail::kVariadic || d.input == k) drop(out.inputs[k]);
    if (d.input == detail::kVariadic || d.input == 0)
      for (auto& o : out.outputs) drop(o);
  }
  return out;
}

std::string type_problem(const std::string& op_type, int opset, const std::vector<std::optional<DType>>& inputs,
                         const std::vector<std::optional<DType>>& outputs) {
  const std::optional<TypeConstraints> types = onnx_type_constraints(op_type, opset);
  if (!types) return "";
  std::vector<std::string> problems;
  const auto check = [&](const char* what, std::size_t k, DType dtype, const std::vector<std::vector<DType>>& specs) {
    if (specs.empty()) return;
    const std::vector<DType>& allowed = specs[std::min(k, specs.size() - 1)];
    if (std::find(allowed.begin(), allowed.end(), dtype) != allowed.end()) return;
    std::vector<std::string> names;
    for (DType t : allowed) names.emplace_back(dtype_name(t));
    problems.push_back(std::string(what) + " " + std::to_string(k) + " is " + std::string(dtype_name(dtype)) +
                       ", which ONNX's " + op_type + " at opset " + std::to_string(opset) + " does not take (" +
                       (names.empty() ? std::string("it takes a type nodeflow has not, bool")
                                      : "it takes " + join(names)) +
                       ")");
  };
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k]) check("input", k, *inputs[k], types->inputs);
  for (std::size_t k = 0; k < outputs.size(); ++k)
    if (outputs[k]) check("output", k, *outputs[k], types->outputs);
  std::string text;
  for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
  return text;
}

const char* onnx_attribute_type(AttrKind kind) {
  switch (kind) {
    case AttrKind::Int: return "INT";
    case AttrKind::Float: return "FLOAT";
    case AttrKind::String: return "STRING";
    case AttrKind::Ints: return "INTS";
    case AttrKind::Floats: return "FLOATS";
    case AttrKind::Strings: return "STRINGS";
  }
  return "UNKNOWN";
}

}  // namespace nodeflow::onnx_import
