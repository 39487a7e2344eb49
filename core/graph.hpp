#pragma once
// A network: graph inputs, initializers and nodes wired by tensor names
// (docs/graph-format.md). GraphDef is the plain description (what the JSON holds or
// code builds); Graph is a validated, immutable, ready-to-run graph.
#include <array>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/attributes.hpp"
#include "core/node.hpp"
#include "core/registry.hpp"
#include "core/tensor.hpp"

namespace nodeflow {

struct GraphInput {
  std::string name;
  TensorInfo info;  ///< kDynamicDim for dimensions fixed only at run time
};

struct Initializer {
  std::string name;
  Tensor value;
  bool trainable = false;
};

struct NodeDef {
  std::string op_type;
  std::string name;
  std::vector<std::string> inputs;  ///< "" marks an absent optional input
  /// Names of the produced outputs; when set, only these outputs are produced
  /// (a prefix of the op's outputs). Unset: every output, named by default_output_name.
  std::optional<std::vector<std::string>> specified_outputs_name;
  Attributes attributes;
  bool training = true;
  double lda_coeff = 1.0;
  /// The node's place on the editor's canvas, [x, y] in canvas units: view
  /// state the JSON document carries (docs/graph-format.md, "Node positions")
  /// and nothing else reads; the ONNX writer leaves it out.
  std::optional<std::array<double, 2>> position;
};

struct GraphDef {
  std::string name;
  std::vector<GraphInput> inputs;
  std::vector<std::string> outputs;
  std::vector<Initializer> initializers;
  std::vector<NodeDef> nodes;
};

/// Output i of node `node`: "node" for i = 0, "node:i" otherwise.
std::string default_output_name(const std::string& node, std::size_t i);

/// A node as messages name it: "nodes[3] (pool1)", "nodes[3]" without a name.
std::string node_path(std::size_t index, const std::string& name);

/// The one way a node is built: `config`'s attributes go through
/// checked_attributes (the schema's specs, then its check_attributes) and
/// come back with every default filled in; schema.create then only reads
/// them. Throws InvalidAttribute ("attributes.kernel_shape: ...").
std::unique_ptr<Node> create_node(const OpSchema& schema, NodeConfig config);

namespace detail {
/// The schema of `op_type`, or InvalidGraph
/// "<where>.op_type: unknown op_type 'MaxPool2d' (known: AveragePool, ...)"
/// ("known: none" for an empty registry).
const OpSchema& find_schema(const OpRegistry& registry, const std::string& op_type,
                            const std::string& where);

/// A node of a graph checked on its own and built (the reader, Graph and
/// GraphBuilder share it, so each rule has one message): its names
/// (check_name, core/names.hpp: "nodes[2].name", "nodes[2] (p).inputs[0]",
/// specified_outputs_name), a non-empty name that `name_taken` does not
/// know, the op_type, the attributes (create_node), the input count and
/// required inputs, a finite lda_coeff and the output count. Names unique in
/// the graph, wiring and shapes are the caller's. Errors are prefixed
/// "nodes[i] (name)".
struct CompiledNode {
  std::unique_ptr<Node> node;
  std::vector<std::string> outputs;  ///< specified_outputs_name, else default_output_name's
};
CompiledNode compile_node(std::size_t index, const NodeDef& node, const OpRegistry& registry,
                          const std::function<bool(const std::string&)>& name_taken);

/// Every present input whose TensorSpec is `constant` has a value in
/// `constants` (InferContext::constants), else InvalidGraph
/// "<where>.inputs[1] (s): Reshape input 'shape' must be a non-trainable
/// initializer (its values decide the output shape); 's' is not".
void check_constant_inputs(const OpSchema& schema, const std::vector<std::string>& inputs,
                           const std::vector<const Tensor*>& constants, const std::string& where);

/// node.infer(ctx) with errors prefixed by where() ("nodes[0] (add1): ..."); a
/// ShapeMismatch or UnsupportedDType also names the node's input tensors with
/// their dtypes and shapes, which a node does not know: "...cannot be
/// broadcast (inputs: 'lhs' float32 [2, 3], 'rhs' float32 [4])".
/// `inputs` are the node's input names ("" for absent ones). Graph, GraphBuilder
/// and the executor's run-time inference all infer through it.
std::vector<TensorInfo> infer_node(const Node& node, const InferContext& ctx,
                                   const std::vector<std::string>& inputs,
                                   const std::function<std::string()>& where);

/// The lda_coeff rule: InvalidAttribute "<where>.lda_coeff: expected a finite number".
void check_lda_coeff(double lda_coeff, const std::string& where);
}  // namespace detail

/// A validated graph. Construction checks everything (names, as check_name
/// in core/names.hpp does: "nodes[2].name: a name must not contain control
/// characters (U+001B at byte 3)"; unknown ops and attributes, attribute
/// values, missing or duplicate names, cycles, dtypes and shapes where known)
/// and throws on the first problem, naming it
/// ("nodes[3] (pool1).attributes.kernel_shape: ..."); a Graph that exists is valid.
/// Op types are looked up in `registry` (OpRegistry::global() by default),
/// which must outlive construction only.
class Graph {
 public:
  explicit Graph(GraphDef def, const OpRegistry& registry = OpRegistry::global());
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  ~Graph();

  const GraphDef& def() const { return def_; }
  const std::string& name() const { return def_.name; }

  /// Every tensor of the graph has a dense index, its slot: graph inputs first
  /// (document order), then initializers (document order), then node outputs
  /// (document order of the nodes). Runners keep tensors in a vector indexed by
  /// slot, so running a step looks no name up.
  static constexpr std::size_t kAbsent = std::numeric_limits<std::size_t>::max();

  /// One compiled node: the instance plus its wiring, in topological order.
  struct Step {
    std::size_t def_index;                  ///< index into def().nodes
    std::unique_ptr<Node> node;
    std::vector<std::string> inputs;        ///< "" for absent optional inputs
    std::vector<std::string> outputs;       ///< produced outputs' names
    std::vector<std::size_t> input_slots;   ///< slots of `inputs`; kAbsent for ""
    std::vector<std::size_t> output_slots;  ///< slots of `outputs`
  };
  /// Nodes in execution order (a topological order, stable with respect to the
  /// document order).
  const std::vector<Step>& steps() const { return steps_; }
  /// Dtype and inferred shape of every tensor (inputs, initializers, node
  /// outputs), by name. Built on first use (loading does not pay for it).
  const std::map<std::string, TensorInfo>& tensor_infos() const;
  /// Throws InvalidGraph when `tensor` is not in the graph.
  const TensorInfo& info(const std::string& tensor) const;
  /// nullptr when `name` is not an initializer.
  const Initializer* initializer(const std::string& name) const;
  /// Number of scalar parameters in initializers (trainable or not).
  std::int64_t parameter_count() const;
  /// Replaces an initializer's value (optimizer steps, running statistics).
  /// The dtype and shape must stay the same (throws ShapeMismatch /
  /// UnsupportedDType; InvalidGraph for an unknown name). Not safe while a run
  /// of this graph is in flight on another thread.
  void set_initializer(const std::string& name, Tensor value);

  /// Number of tensors (slots 0 .. tensor_count() - 1).
  std::size_t tensor_count() const { return slot_names_.size(); }
  /// The slot of `tensor`, or kAbsent when it is not in the graph.
  std::size_t slot(const std::string& tensor) const;
  const std::string& tensor_name(std::size_t slot) const { return slot_names_.at(slot); }
  const TensorInfo& tensor_info(std::size_t slot) const { return slot_infos_.at(slot); }
  /// The initializer in `slot`, or nullptr when the slot holds another tensor.
  const Initializer* initializer_at(std::size_t slot) const;
  /// Slots of def().outputs, in the same order.
  const std::vector<std::size_t>& output_slots() const { return output_slots_; }

 private:
  struct NameIndex;  // the by-name map of tensor_infos(), built once on demand

  GraphDef def_;
  std::vector<Step> steps_;
  std::vector<std::string> slot_names_;
  std::vector<TensorInfo> slot_infos_;
  std::unordered_map<std::string, std::size_t> slot_of_;  ///< name -> slot
  std::vector<std::size_t> output_slots_;
  std::unique_ptr<NameIndex> name_index_;
};

}  // namespace nodeflow
