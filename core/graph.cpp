#include "core/graph.hpp"

#include <cmath>
#include <set>

#include "core/errors.hpp"
#include "core/registry.hpp"

namespace nodeflow {
namespace {

std::string node_path(std::size_t i, const NodeDef& n) {
  return "nodes[" + std::to_string(i) + "]" + (n.name.empty() ? "" : " (" + n.name + ")");
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

}  // namespace

std::string default_output_name(const std::string& node, std::size_t i) {
  return i == 0 ? node : node + ":" + std::to_string(i);
}

Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::~Graph() = default;

Graph::Graph(GraphDef def) : def_(std::move(def)) {
  const OpRegistry& registry = OpRegistry::global();
  // Where each tensor name is defined, so a second definition can be reported.
  std::set<std::string> defined;
  auto define = [&](const std::string& name, const std::string& where) {
    if (name.empty()) throw InvalidGraph(where + ": tensor name is empty");
    if (!defined.insert(name).second)
      throw InvalidGraph(where + ": tensor name '" + name +
                         "' is defined twice (names are unique in the graph)");
  };

  for (std::size_t i = 0; i < def_.inputs.size(); ++i) {
    const GraphInput& in = def_.inputs[i];
    const std::string where = "inputs[" + std::to_string(i) + "] (" + in.name + ")";
    define(in.name, where + ".name");
    Shape known;
    for (std::int64_t d : in.info.shape) {
      if (d < kDynamicDim) throw ShapeMismatch(where + ".shape: dimension " + std::to_string(d) + " is negative");
      known.push_back(d < 0 ? 1 : d);
    }
    try {
      element_count(known);
    } catch (const ShapeMismatch&) {
      throw ShapeMismatch(where + ".shape: element count of " + to_string(in.info.shape) + " overflows int64");
    }
    infos_[in.name] = in.info;
  }
  for (std::size_t i = 0; i < def_.initializers.size(); ++i) {
    const Initializer& init = def_.initializers[i];
    const std::string where = "initializers[" + std::to_string(i) + "] (" + init.name + ")";
    define(init.name, where + ".name");
    if (init.value.empty()) throw InvalidGraph(where + ".data: initializer has no value");
    if (init.trainable && !is_float(init.value.dtype()))
      throw UnsupportedDType(where + ".trainable: initializer of dtype " +
                             std::string(dtype_name(init.value.dtype())) + " cannot be trainable");
    infos_[init.name] = TensorInfo{init.value.dtype(), init.value.shape()};
    initializer_index_[init.name] = i;
  }

  // Nodes: op, name, attributes, output names.
  std::set<std::string> node_names;
  std::vector<std::vector<std::string>> outputs(def_.nodes.size());
  std::vector<std::unique_ptr<Node>> instances(def_.nodes.size());
  for (std::size_t i = 0; i < def_.nodes.size(); ++i) {
    const NodeDef& n = def_.nodes[i];
    const std::string where = node_path(i, n);
    if (n.name.empty()) throw InvalidGraph(where + ".name: node name is empty");
    if (!node_names.insert(n.name).second)
      throw InvalidGraph(where + ".name: duplicate node name '" + n.name + "'");
    const OpSchema* schema = registry.find(n.op_type);
    if (!schema)
      throw InvalidGraph(where + ".op_type: unknown op_type '" + n.op_type + "' (known: " +
                         join(registry.names()) + ")");
    with_context(where, [&] { validate_attributes(n.op_type, schema->attributes, n.attributes); });
    if (n.inputs.size() < schema->min_inputs || n.inputs.size() > schema->inputs.size())
      throw InvalidGraph(where + ".inputs: " + n.op_type + " takes " +
                         std::to_string(schema->min_inputs) + " to " +
                         std::to_string(schema->inputs.size()) + " inputs, got " +
                         std::to_string(n.inputs.size()));
    for (std::size_t k = 0; k < schema->min_inputs; ++k)
      if (n.inputs[k].empty())
        throw InvalidGraph(where + ".inputs[" + std::to_string(k) + "]: required input '" +
                           schema->inputs[k] + "' of " + n.op_type + " is absent");
    if (!std::isfinite(n.lda_coeff))
      throw InvalidAttribute(where + ".lda_coeff: expected a finite number");
    if (n.specified_outputs_name) {
      const auto& names = *n.specified_outputs_name;
      if (names.size() < schema->min_outputs || names.size() > schema->outputs.size())
        throw InvalidGraph(where + ".specified_outputs_name: " + n.op_type + " has " +
                           std::to_string(schema->min_outputs) + " to " +
                           std::to_string(schema->outputs.size()) + " outputs, got " +
                           std::to_string(names.size()) + " names");
      outputs[i] = names;
    } else {
      for (std::size_t k = 0; k < schema->outputs.size(); ++k)
        outputs[i].push_back(default_output_name(n.name, k));
    }
    for (const auto& out : outputs[i]) define(out, where + ".specified_outputs_name");
    with_context(where, [&] {
      instances[i] = schema->create(NodeConfig{n.op_type, n.name, n.attributes, n.training, n.lda_coeff});
    });
  }

  // Wiring: every input is defined somewhere.
  std::map<std::string, std::size_t> producer;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (const auto& out : outputs[i]) producer[out] = i;
  for (std::size_t i = 0; i < def_.nodes.size(); ++i)
    for (std::size_t k = 0; k < def_.nodes[i].inputs.size(); ++k) {
      const std::string& t = def_.nodes[i].inputs[k];
      if (!t.empty() && !defined.count(t))
        throw InvalidGraph(node_path(i, def_.nodes[i]) + ".inputs[" + std::to_string(k) +
                           "]: tensor '" + t + "' is not a graph input, initializer or node output");
    }
  for (std::size_t k = 0; k < def_.outputs.size(); ++k)
    if (!defined.count(def_.outputs[k]))
      throw InvalidGraph("outputs[" + std::to_string(k) + "]: tensor '" + def_.outputs[k] +
                         "' is not a graph input, initializer or node output");

  // Topological order (Kahn), stable with respect to document order.
  std::vector<std::size_t> pending(def_.nodes.size(), 0);
  std::vector<std::vector<std::size_t>> consumers(def_.nodes.size());
  for (std::size_t i = 0; i < def_.nodes.size(); ++i)
    for (const auto& t : def_.nodes[i].inputs)
      if (auto it = producer.find(t); it != producer.end()) {
        ++pending[i];
        consumers[it->second].push_back(i);
      }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < pending.size(); ++i)
    if (pending[i] == 0) ready.insert(i);
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (std::size_t c : consumers[i])
      if (--pending[c] == 0) ready.insert(c);
  }
  if (order.size() != def_.nodes.size()) {
    std::vector<std::string> on_cycle;
    for (std::size_t i = 0; i < pending.size(); ++i)
      if (pending[i] > 0) on_cycle.push_back(def_.nodes[i].name);
    throw InvalidGraph("nodes: the graph has a cycle through " + join(on_cycle));
  }

  // Shape and dtype inference in execution order.
  for (std::size_t i : order) {
    const NodeDef& n = def_.nodes[i];
    InferContext ctx;
    ctx.num_outputs = outputs[i].size();
    for (const auto& t : n.inputs) {
      ctx.inputs.push_back(t.empty() ? nullptr : &infos_.at(t));
      const Initializer* init = t.empty() ? nullptr : initializer(t);
      ctx.constants.push_back(init && !init->trainable ? &init->value : nullptr);
    }
    std::vector<TensorInfo> out_infos;
    with_context(node_path(i, n), [&] { out_infos = instances[i]->infer(ctx); });
    if (out_infos.size() < outputs[i].size())
      throw InvalidGraph(node_path(i, n) + ": shape inference gave " +
                         std::to_string(out_infos.size()) + " outputs, expected " +
                         std::to_string(outputs[i].size()));
    for (std::size_t k = 0; k < outputs[i].size(); ++k) infos_[outputs[i][k]] = out_infos[k];
    steps_.push_back(Step{i, std::move(instances[i]), n.inputs, outputs[i]});
  }
}

const TensorInfo& Graph::info(const std::string& tensor) const {
  auto it = infos_.find(tensor);
  if (it == infos_.end()) throw InvalidGraph("tensor '" + tensor + "' is not in the graph");
  return it->second;
}

const Initializer* Graph::initializer(const std::string& name) const {
  auto it = initializer_index_.find(name);
  return it == initializer_index_.end() ? nullptr : &def_.initializers[it->second];
}

std::int64_t Graph::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& init : def_.initializers) n += init.value.numel();
  return n;
}

void Graph::set_initializer(const std::string& name, Tensor value) {
  auto it = initializer_index_.find(name);
  if (it == initializer_index_.end()) throw InvalidGraph("'" + name + "' is not an initializer");
  Initializer& init = def_.initializers[it->second];
  if (value.dtype() != init.value.dtype())
    throw UnsupportedDType("initializer '" + name + "': expected dtype " +
                           std::string(dtype_name(init.value.dtype())) + ", got " +
                           std::string(dtype_name(value.dtype())));
  if (value.shape() != init.value.shape())
    throw ShapeMismatch("initializer '" + name + "': expected shape " + to_string(init.value.shape()) +
                        ", got " + to_string(value.shape()));
  init.value = std::move(value);
}

}  // namespace nodeflow
