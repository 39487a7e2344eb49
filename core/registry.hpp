#pragma once
// The one registry of node types: op_type -> schema (inputs, outputs,
// attributes) and factory. JSON validation, the command line and tests all
// iterate it.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/attributes.hpp"
#include "core/dtype.hpp"
#include "core/node.hpp"

namespace nodeflow {

/// One input or output of an op (ONNX order).
struct TensorSpec {
  std::string name;
  /// The dtypes it takes (ONNX type constraint, as far as nodeflow has them);
  /// empty: the op refuses the tensor (Dropout's training_mode).
  std::vector<DType> dtypes;
  std::string doc;  ///< one line: shape and meaning
  /// Shape-like data (Reshape's shape, Slice's starts, Reduce*'s axes): when
  /// present it must be a non-trainable initializer, since the output shape
  /// depends on its values (docs/operators.md, "Inputs that ONNX passes as
  /// tensors"); the graph refuses anything else, naming the input. It never
  /// receives a gradient.
  bool constant = false;
  /// Only the last input or output: it repeats (Concat's inputs, Split's
  /// outputs), at least once.
  bool variadic = false;
  /// False for a float input that gets no gradient (ArgMax's data); a
  /// non-float or constant input is never differentiable.
  bool differentiable = true;
};

/// True when `spec` receives a gradient in backward: differentiable, not
/// constant, and of a float dtype.
bool receives_gradient(const TensorSpec& spec);

/// Declarative description of one op type: what an editor, an importer and
/// the graph's validation read.
struct OpSchema {
  std::string op_type;
  std::string definition;            ///< source of the semantics, e.g. "ONNX MaxPool-22"
  std::string doc;  ///< one line: what the op computes (the palette's tooltip)
  std::vector<TensorSpec> inputs;    ///< in ONNX order
  std::size_t min_inputs = 1;        ///< inputs after min_inputs are optional
                                     ///< (a variadic last input: no upper bound)
  std::vector<TensorSpec> outputs;   ///< in ONNX order
  std::size_t min_outputs = 1;       ///< outputs after min_outputs are optional
  /// With a variadic last output: how many outputs a node has when the
  /// document gives no specified_outputs_name (Split's num_outputs), from its
  /// checked attributes; 0, or an empty function, means the names are required.
  std::function<std::size_t(const Attributes&)> default_output_count;
  std::vector<AttrSpec> attributes;
  /// The op's rules over several attributes (checked_attributes runs it after
  /// the specs' rules); empty when the specs say everything.
  AttrCheck check_attributes;
  /// Builds a node from a NodeConfig whose attributes checked_attributes
  /// returned (create_node, core/graph.hpp): the node only reads them.
  std::function<std::unique_ptr<Node>(NodeConfig)> create;

  /// The spec of input `k` (the last one for the repeats of a variadic input).
  const TensorSpec& input(std::size_t k) const;
  /// At most this many inputs/outputs (SIZE_MAX with a variadic last one).
  std::size_t max_inputs() const;
  std::size_t max_outputs() const;
};

class OpRegistry {
 public:
  /// The process-wide registry, filled with every built-in op on first use.
  /// Defined by the nodes layer (nodes/builtin_ops.cpp), which core sits
  /// below: core code names it only in default arguments, which are evaluated
  /// where the call is written, so no core object file refers to it.
  static OpRegistry& global();

  /// Adds a schema; throws InvalidGraph if the op_type is already registered.
  void add(OpSchema schema);
  /// nullptr when unknown.
  const OpSchema* find(const std::string& op_type) const;
  /// Sorted op_type names.
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OpSchema> schemas_;
};

}  // namespace nodeflow
