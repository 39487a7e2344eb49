#include "core/graph_builder.hpp"

#include <memory>

#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/registry.hpp"

namespace nodeflow {
namespace {

std::string undefined_tensor(const std::string& where, const std::string& tensor) {
  return where + ": tensor '" + tensor + "' is not a graph input, initializer or node output";
}

}  // namespace

GraphBuilder::GraphBuilder(std::string name, const OpRegistry& registry) : registry_(&registry) {
  check_name(name, [] { return std::string("name"); });
  def_.name = std::move(name);
}

void GraphBuilder::check_new_tensor(const std::string& name, const std::string& where) const {
  if (name.empty()) throw InvalidGraph(where + ": tensor name is empty");
  if (infos_.count(name))
    throw InvalidGraph(where + ": tensor name '" + name +
                       "' is defined twice (names are unique in the graph)");
}

GraphBuilder& GraphBuilder::add_input(const std::string& name, DType dtype, Shape shape) {
  check_name(name, [&] { return "inputs[" + std::to_string(def_.inputs.size()) + "].name"; });
  const std::string where = "inputs[" + std::to_string(def_.inputs.size()) + "] (" + name + ")";
  check_new_tensor(name, where + ".name");
  require_graph_dtype(dtype, where);
  Shape known;
  for (std::int64_t d : shape) {
    if (d < kDynamicDim)
      throw ShapeMismatch(where + ".shape: dimension " + std::to_string(d) + " is negative");
    known.push_back(d < 0 ? 1 : d);
  }
  try {
    element_count(known);
  } catch (const ShapeMismatch&) {
    throw ShapeMismatch(where + ".shape: element count of " + to_string(shape) +
                        " overflows int64");
  }
  TensorInfo info{dtype, std::move(shape)};
  def_.inputs.push_back(GraphInput{name, info});
  infos_.emplace(name, std::move(info));
  return *this;
}

GraphBuilder& GraphBuilder::add_initializer(const std::string& name, Tensor value, bool trainable) {
  check_name(name,
             [&] { return "initializers[" + std::to_string(def_.initializers.size()) + "].name"; });
  const std::string where =
      "initializers[" + std::to_string(def_.initializers.size()) + "] (" + name + ")";
  check_new_tensor(name, where + ".name");
  if (value.empty()) throw InvalidGraph(where + ".data: initializer has no value");
  require_graph_dtype(value.dtype(), where);
  if (trainable && !is_float(value.dtype()))
    throw UnsupportedDType(where + ".trainable: initializer of dtype " +
                           std::string(dtype_name(value.dtype())) + " cannot be trainable");
  TensorInfo info{value.dtype(), value.shape()};
  def_.initializers.push_back(Initializer{name, std::move(value), trainable});
  infos_.emplace(name, std::move(info));
  if (!trainable) constants_.emplace(name, def_.initializers.size() - 1);
  return *this;
}

const std::vector<std::string>& GraphBuilder::add_node(const std::string& op_type,
                                                       const std::string& name,
                                                       std::vector<std::string> inputs,
                                                       Attributes attributes) {
  NodeDef node;
  node.op_type = op_type;
  node.name = name;
  node.inputs = std::move(inputs);
  node.attributes = std::move(attributes);
  return add_node(std::move(node));
}

const std::vector<std::string>& GraphBuilder::add_node(NodeDef n) {
  const std::size_t index = def_.nodes.size();
  detail::CompiledNode compiled = detail::compile_node(
      index, n, *registry_, [&](const std::string& name) { return node_names_.count(name) != 0; });
  const std::string where = node_path(index, n.name);
  std::vector<std::string>& outputs = compiled.outputs;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    check_new_tensor(outputs[k], where + ".specified_outputs_name");
    for (std::size_t j = 0; j < k; ++j)
      if (outputs[j] == outputs[k])
        throw InvalidGraph(where + ".specified_outputs_name: tensor name '" + outputs[k] +
                           "' is defined twice (names are unique in the graph)");
  }
  const Node& instance = *compiled.node;

  InferContext ctx;
  ctx.num_outputs = outputs.size();
  ctx.input_names = n.inputs;
  for (std::size_t k = 0; k < n.inputs.size(); ++k) {
    const std::string& t = n.inputs[k];
    if (t.empty()) {
      ctx.inputs.push_back(nullptr);
      ctx.constants.push_back(nullptr);
      continue;
    }
    const auto it = infos_.find(t);
    if (it == infos_.end())
      throw InvalidGraph(undefined_tensor(where + ".inputs[" + std::to_string(k) + "]", t));
    ctx.inputs.push_back(&it->second);
    const auto c = constants_.find(t);
    ctx.constants.push_back(c == constants_.end() ? nullptr : &def_.initializers[c->second].value);
  }
  detail::check_constant_inputs(detail::find_schema(*registry_, n.op_type, where), n.inputs,
                                ctx.constants, where);
  std::vector<TensorInfo> out_infos;
  with_context(where, [&] { out_infos = instance.infer(ctx); });
  if (out_infos.size() < outputs.size())
    throw InvalidGraph(where + ": shape inference gave " + std::to_string(out_infos.size()) +
                       " outputs, expected " + std::to_string(outputs.size()));

  // Everything is checked: commit.
  for (std::size_t k = 0; k < outputs.size(); ++k)
    infos_.emplace(outputs[k], std::move(out_infos[k]));
  node_names_.insert(n.name);
  def_.nodes.push_back(std::move(n));
  outputs_.push_back(std::move(outputs));
  return outputs_.back();
}

GraphBuilder& GraphBuilder::add_output(const std::string& tensor) {
  check_name(tensor, [&] { return "outputs[" + std::to_string(def_.outputs.size()) + "]"; });
  if (!infos_.count(tensor))
    throw InvalidGraph(
        undefined_tensor("outputs[" + std::to_string(def_.outputs.size()) + "]", tensor));
  def_.outputs.push_back(tensor);
  return *this;
}

const TensorInfo& GraphBuilder::info(const std::string& tensor) const {
  const auto it = infos_.find(tensor);
  if (it == infos_.end())
    throw InvalidGraph("tensor '" + printable(tensor, 200) + "' is not in the graph");
  return it->second;
}

Graph GraphBuilder::build() const { return Graph(def_, *registry_); }

}  // namespace nodeflow
