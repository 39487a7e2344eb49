#include "core/graph.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <queue>
#include <string_view>
#include <unordered_set>

#include "core/errors.hpp"
#include "core/names.hpp"
#include "core/registry.hpp"

namespace nodeflow {
namespace {

/// Throws ShapeMismatch (`what`: where the shape is) when the element count
/// of `shape`, dimensions known only at run time counted as 1, overflows
/// int64: no tensor of that shape could ever be made.
void require_countable(const Shape& shape, const std::string& what) {
  Shape known;
  for (std::int64_t d : shape) known.push_back(d < 0 ? 1 : d);
  try {
    element_count(known);
  } catch (const ShapeMismatch&) {
    throw ShapeMismatch(what + ": element count of " + to_string(shape) + " overflows int64");
  }
}

/// " (inputs: 'lhs' [2, 3], 'rhs' [4])": the node's present inputs by name
/// and shape, for a shape or dtype error of its inference ("" if none).
std::string inputs_named(const InferContext& ctx, const std::vector<std::string>& inputs) {
  // A Concat of thousands of inputs would make a message of megabytes.
  constexpr std::size_t kNamed = 8;
  std::string named;
  std::size_t count = 0;
  for (std::size_t k = 0; k < inputs.size() && k < ctx.inputs.size(); ++k) {
    if (inputs[k].empty() || ctx.inputs[k] == nullptr) continue;
    if (count++ == kNamed) {
      named += ", ...";
      break;
    }
    named += (named.empty() ? "'" : ", '") + printable(inputs[k], 200) + "' " +
             std::string(dtype_name(ctx.inputs[k]->dtype)) + " " + to_string(ctx.inputs[k]->shape);
  }
  return named.empty() ? "" : " (inputs: " + named + ")";
}

}  // namespace

std::string default_output_name(const std::string& node, std::size_t i) {
  return i == 0 ? node : node + ":" + std::to_string(i);
}

std::string node_path(std::size_t index, const std::string& name) {
  return "nodes[" + std::to_string(index) + "]" + (name.empty() ? "" : " (" + name + ")");
}

std::unique_ptr<Node> create_node(const OpSchema& schema, NodeConfig config) {
  config.attributes = checked_attributes(schema.op_type, schema.attributes, config.attributes,
                                         schema.check_attributes);
  return schema.create(std::move(config));
}

const OpSchema& detail::find_schema(const OpRegistry& registry, const std::string& op_type,
                                    const std::string& where) {
  const OpSchema* schema = registry.find(op_type);
  if (!schema) {
    const std::vector<std::string> known = registry.names();
    throw InvalidGraph(where + ".op_type: unknown op_type '" + printable(op_type, 200) +
                       "' (known: " + (known.empty() ? "none" : join(known)) + ")");
  }
  return *schema;
}

void detail::check_constant_inputs(const OpSchema& schema, const std::vector<std::string>& inputs,
                                   const std::vector<const Tensor*>& constants,
                                   const std::string& where) {
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!inputs[k].empty() && schema.input(k).constant && constants[k] == nullptr)
      throw InvalidGraph(where + ".inputs[" + std::to_string(k) + "] (" + printable(inputs[k], 200) +
                         "): " + schema.op_type + " input '" + schema.input(k).name +
                         "' must be a non-trainable initializer (its values decide the output "
                         "shape); '" + printable(inputs[k], 200) + "' is not");
}

std::vector<TensorInfo> detail::infer_node(const Node& node, const InferContext& ctx,
                                           const std::vector<std::string>& inputs,
                                           const std::function<std::string()>& where) {
  try {
    return node.infer(ctx);
  } catch (const UnsupportedDType& e) {
    throw UnsupportedDType(context_prefix(where(), e.what()) + e.what() + inputs_named(ctx, inputs));
  } catch (const ShapeMismatch& e) {
    throw ShapeMismatch(context_prefix(where(), e.what()) + e.what() + inputs_named(ctx, inputs));
  } catch (const Error& e) {
    rethrow_with_context(context_prefix(where(), e.what()));
  }
}
void detail::check_lda_coeff(double lda_coeff, const std::string& where) {
  if (!std::isfinite(lda_coeff))
    throw InvalidAttribute(where + ".lda_coeff: expected a finite number");
}

detail::CompiledNode detail::compile_node(std::size_t index, const NodeDef& n,
                                          const OpRegistry& registry,
                                          const std::function<bool(const std::string&)>& name_taken) {
  check_name(n.name, [&] { return "nodes[" + std::to_string(index) + "].name"; });
  auto where = [&] { return node_path(index, n.name); };
  for (std::size_t k = 0; k < n.inputs.size(); ++k)
    check_name(n.inputs[k], [&] { return where() + ".inputs[" + std::to_string(k) + "]"; });
  if (n.specified_outputs_name)
    for (std::size_t k = 0; k < n.specified_outputs_name->size(); ++k)
      check_name((*n.specified_outputs_name)[k], [&] {
        return where() + ".specified_outputs_name[" + std::to_string(k) + "]";
      });
  if (n.name.empty()) throw InvalidGraph(where() + ".name: node name is empty");
  if (name_taken(n.name)) throw InvalidGraph(where() + ".name: duplicate node name '" + n.name + "'");
  const OpSchema& schema = find_schema(registry, n.op_type, where());
  Attributes attributes = with_lazy_context(where, [&] {
    return checked_attributes(n.op_type, schema.attributes, n.attributes, schema.check_attributes);
  });
  auto arity = [](std::size_t min, std::size_t max) {
    return max == std::numeric_limits<std::size_t>::max()
               ? "at least " + std::to_string(min)
               : std::to_string(min) + " to " + std::to_string(max);
  };
  if (n.inputs.size() < schema.min_inputs || n.inputs.size() > schema.max_inputs())
    throw InvalidGraph(where() + ".inputs: " + n.op_type + " takes " +
                       arity(schema.min_inputs, schema.max_inputs()) + " inputs, got " +
                       std::to_string(n.inputs.size()));
  for (std::size_t k = 0; k < schema.min_inputs; ++k)
    if (n.inputs[k].empty())
      throw InvalidGraph(where() + ".inputs[" + std::to_string(k) + "]: required input '" +
                         schema.inputs[k].name + "' of " + n.op_type + " is absent");
  check_lda_coeff(n.lda_coeff, where());
  CompiledNode out;
  if (n.specified_outputs_name) {
    const auto& names = *n.specified_outputs_name;
    if (names.size() < schema.min_outputs || names.size() > schema.max_outputs())
      throw InvalidGraph(where() + ".specified_outputs_name: " + n.op_type + " has " +
                         arity(schema.min_outputs, schema.max_outputs()) + " outputs, got " +
                         std::to_string(names.size()) + " names");
    out.outputs = names;
  } else {
    std::size_t count = schema.outputs.size();
    if (schema.outputs.back().variadic) {
      count = schema.default_output_count ? schema.default_output_count(attributes) : 0;
      if (count == 0)
        throw InvalidGraph(where() + ".specified_outputs_name: " + n.op_type +
                           " needs its output names here (its attributes do not say how many "
                           "outputs it has)");
    }
    for (std::size_t k = 0; k < count; ++k) out.outputs.push_back(default_output_name(n.name, k));
  }
  with_lazy_context(where, [&] {
    out.node = schema.create(
        NodeConfig{n.op_type, n.name, std::move(attributes), n.training, n.lda_coeff});
  });
  return out;
}

struct Graph::NameIndex {
  std::once_flag once;
  std::map<std::string, TensorInfo> infos;
};

Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::~Graph() = default;

// Names are resolved once, here, through a hash map; everything after works on
// slots and node indices, so construction stays linear in the graph's size.
// Error locations are built only when an error is thrown.
Graph::Graph(GraphDef def, const OpRegistry& registry)
    : def_(std::move(def)), name_index_(std::make_unique<NameIndex>()) {
  std::size_t expected_tensors = def_.inputs.size() + def_.initializers.size();
  for (const NodeDef& n : def_.nodes)
    expected_tensors += n.specified_outputs_name ? n.specified_outputs_name->size() : 1;
  slot_of_.reserve(expected_tensors);
  slot_names_.reserve(expected_tensors);
  slot_infos_.reserve(expected_tensors);
  // Names are checked before any message can print one.
  check_name(def_.name, [] { return std::string("name"); });
  // A second definition of a name is reported where it happens.
  auto define = [&](const std::string& name, const auto& where) {
    if (name.empty()) throw InvalidGraph(where() + ": tensor name is empty");
    if (!slot_of_.emplace(name, slot_names_.size()).second)
      throw InvalidGraph(where() + ": tensor name '" + name +
                         "' is defined twice (names are unique in the graph)");
    slot_names_.push_back(name);
    slot_infos_.emplace_back();
    return slot_names_.size() - 1;
  };

  for (std::size_t i = 0; i < def_.inputs.size(); ++i) {
    const GraphInput& in = def_.inputs[i];
    check_name(in.name, [&] { return "inputs[" + std::to_string(i) + "].name"; });
    auto where = [&] { return "inputs[" + std::to_string(i) + "] (" + in.name + ")"; };
    const std::size_t slot = define(in.name, [&] { return where() + ".name"; });
    require_graph_dtype(in.info.dtype, where());
    for (std::int64_t d : in.info.shape)
      if (d < kDynamicDim) throw ShapeMismatch(where() + ".shape: dimension " + std::to_string(d) + " is negative");
    require_countable(in.info.shape, where() + ".shape");
    slot_infos_[slot] = in.info;
  }
  for (std::size_t i = 0; i < def_.initializers.size(); ++i) {
    const Initializer& init = def_.initializers[i];
    check_name(init.name, [&] { return "initializers[" + std::to_string(i) + "].name"; });
    auto where = [&] { return "initializers[" + std::to_string(i) + "] (" + init.name + ")"; };
    const std::size_t slot = define(init.name, [&] { return where() + ".name"; });
    if (init.value.empty()) throw InvalidGraph(where() + ".data: initializer has no value");
    require_graph_dtype(init.value.dtype(), where());
    if (init.trainable && !is_float(init.value.dtype()))
      throw UnsupportedDType(where() + ".trainable: initializer of dtype " +
                             std::string(dtype_name(init.value.dtype())) + " cannot be trainable");
    slot_infos_[slot] = TensorInfo{init.value.dtype(), init.value.shape()};
  }

  // Nodes: op, name, attributes, output names.
  const std::size_t node_count = def_.nodes.size();
  std::unordered_set<std::string_view> node_names;  // views of def_, which outlives the loop
  node_names.reserve(node_count);
  std::vector<Step> compiled(node_count);
  std::vector<std::size_t> producer(expected_tensors, kAbsent);  // slot -> node index
  for (std::size_t i = 0; i < node_count; ++i) {
    const NodeDef& n = def_.nodes[i];
    detail::CompiledNode node = detail::compile_node(
        i, n, registry, [&](const std::string& name) { return !node_names.insert(name).second; });
    Step& step = compiled[i];
    step.def_index = i;
    step.node = std::move(node.node);
    step.outputs = std::move(node.outputs);
    step.output_slots.reserve(step.outputs.size());
    for (const auto& out : step.outputs) {
      const std::size_t slot =
          define(out, [&] { return node_path(i, n.name) + ".specified_outputs_name"; });
      if (slot >= producer.size()) producer.resize(slot + 1, kAbsent);
      producer[slot] = i;
      step.output_slots.push_back(slot);
    }
  }

  // Wiring: every input is defined somewhere.
  for (std::size_t i = 0; i < node_count; ++i) {
    Step& step = compiled[i];
    step.inputs = def_.nodes[i].inputs;
    step.input_slots.reserve(step.inputs.size());
    for (std::size_t k = 0; k < step.inputs.size(); ++k) {
      const std::string& t = step.inputs[k];
      const std::size_t s = t.empty() ? kAbsent : slot(t);
      if (!t.empty() && s == kAbsent)
        throw InvalidGraph(node_path(i, def_.nodes[i].name) + ".inputs[" + std::to_string(k) +
                           "]: tensor '" + t + "' is not a graph input, initializer or node output");
      step.input_slots.push_back(s);
    }
  }
  output_slots_.reserve(def_.outputs.size());
  for (std::size_t k = 0; k < def_.outputs.size(); ++k) {
    check_name(def_.outputs[k], [&] { return "outputs[" + std::to_string(k) + "]"; });
    const std::size_t s = slot(def_.outputs[k]);
    if (s == kAbsent)
      throw InvalidGraph("outputs[" + std::to_string(k) + "]: tensor '" + def_.outputs[k] +
                         "' is not a graph input, initializer or node output");
    output_slots_.push_back(s);
  }

  // Topological order, stable with respect to document order: the smallest
  // ready node index runs first. Consumers in one flat array.
  std::vector<std::size_t> pending(node_count, 0);
  std::vector<std::size_t> consumer_begin(node_count + 1, 0);
  auto producer_of = [&](std::size_t s) { return s < producer.size() ? producer[s] : kAbsent; };
  for (std::size_t i = 0; i < node_count; ++i)
    for (std::size_t s : compiled[i].input_slots)
      if (const std::size_t p = s == kAbsent ? kAbsent : producer_of(s); p != kAbsent) {
        ++pending[i];
        ++consumer_begin[p + 1];
      }
  for (std::size_t i = 0; i < node_count; ++i) consumer_begin[i + 1] += consumer_begin[i];
  std::vector<std::size_t> consumers(consumer_begin[node_count]);
  {
    std::vector<std::size_t> fill(consumer_begin.begin(), consumer_begin.end() - 1);
    for (std::size_t i = 0; i < node_count; ++i)
      for (std::size_t s : compiled[i].input_slots)
        if (const std::size_t p = s == kAbsent ? kAbsent : producer_of(s); p != kAbsent)
          consumers[fill[p]++] = i;
  }
  // Kahn's algorithm taking the smallest ready node index each time. A cursor
  // walks the indices; only nodes that become ready behind it wait in a heap,
  // so a document already in execution order (the usual case) costs linear time.
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> behind;
  std::vector<std::size_t> order;
  order.reserve(node_count);
  for (std::size_t cursor = 0;;) {
    std::size_t i = 0;
    if (!behind.empty()) {
      i = behind.top();
      behind.pop();
    } else {
      while (cursor < node_count && pending[cursor] != 0) ++cursor;
      if (cursor == node_count) break;
      i = cursor++;
    }
    order.push_back(i);
    for (std::size_t c = consumer_begin[i]; c < consumer_begin[i + 1]; ++c)
      if (const std::size_t j = consumers[c]; --pending[j] == 0 && j < cursor) behind.push(j);
  }
  if (order.size() != node_count) {
    // The first few are named: a 300,000-node ring made a 2.6 MB message.
    constexpr std::size_t kNamed = 10;
    std::vector<std::string> on_cycle;
    std::size_t stuck = 0;
    for (std::size_t i = 0; i < pending.size(); ++i)
      if (pending[i] > 0 && stuck++ < kNamed) on_cycle.push_back(def_.nodes[i].name);
    throw InvalidGraph("nodes: the graph has a cycle through " + join(on_cycle) +
                       (stuck > kNamed ? " and " + std::to_string(stuck - kNamed) +
                                             " more nodes (on the cycle or after it)"
                                       : ""));
  }

  // Shape and dtype inference in execution order.
  steps_.reserve(node_count);
  InferContext ctx;
  std::vector<TensorInfo> out_infos;
  for (std::size_t i : order) {
    Step& step = compiled[i];
    auto where = [&] { return node_path(i, def_.nodes[i].name); };
    ctx.inputs.clear();
    ctx.constants.clear();
    ctx.num_outputs = step.outputs.size();
    for (std::size_t s : step.input_slots) {
      ctx.inputs.push_back(s == kAbsent ? nullptr : &slot_infos_[s]);
      const Initializer* init = s == kAbsent ? nullptr : initializer_at(s);
      ctx.constants.push_back(init && !init->trainable ? &init->value : nullptr);
    }
    detail::check_constant_inputs(detail::find_schema(registry, step.node->op_type(), where()),
                                  step.inputs, ctx.constants, where());
    out_infos = detail::infer_node(*step.node, ctx, step.inputs, where);
    if (out_infos.size() < step.outputs.size())
      throw InvalidGraph(where() + ": shape inference gave " + std::to_string(out_infos.size()) +
                         " outputs, expected " + std::to_string(step.outputs.size()));
    for (std::size_t k = 0; k < step.outputs.size(); ++k) {
      require_countable(out_infos[k].shape,
                        where() + ": output " + std::to_string(k) + " ('" + step.outputs[k] + "')");
      slot_infos_[step.output_slots[k]] = std::move(out_infos[k]);
    }
    steps_.push_back(std::move(step));
  }
}

const std::map<std::string, TensorInfo>& Graph::tensor_infos() const {
  std::call_once(name_index_->once, [&] {
    for (std::size_t s = 0; s < slot_names_.size(); ++s)
      name_index_->infos.emplace(slot_names_[s], slot_infos_[s]);
  });
  return name_index_->infos;
}

std::size_t Graph::slot(const std::string& tensor) const {
  const auto it = slot_of_.find(tensor);
  return it == slot_of_.end() ? kAbsent : it->second;
}

const TensorInfo& Graph::info(const std::string& tensor) const {
  const std::size_t s = slot(tensor);
  if (s == kAbsent)
    throw InvalidGraph("tensor '" + printable(tensor, 200) + "' is not in the graph");
  return slot_infos_[s];
}

const Initializer* Graph::initializer_at(std::size_t slot) const {
  const std::size_t first = def_.inputs.size();
  if (slot < first || slot - first >= def_.initializers.size()) return nullptr;
  return &def_.initializers[slot - first];
}

const Initializer* Graph::initializer(const std::string& name) const {
  const std::size_t s = slot(name);
  return s == kAbsent ? nullptr : initializer_at(s);
}

std::int64_t Graph::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& init : def_.initializers) n += init.value.numel();
  return n;
}

void Graph::set_initializer(const std::string& name, Tensor value) {
  const Initializer* found = initializer(name);
  if (found == nullptr) throw InvalidGraph("'" + printable(name, 200) + "' is not an initializer");
  Initializer& init = def_.initializers[static_cast<std::size_t>(found - def_.initializers.data())];
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
