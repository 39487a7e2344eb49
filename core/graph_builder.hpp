#pragma once
// Building a graph in code (the graph editor, tests, benchmarks): the same
// GraphDef the JSON reader produces, checked one step at a time so that a
// mistake is reported at the call that makes it.
#include <cstddef>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/graph.hpp"

namespace nodeflow {

/// Adds graph inputs, initializers, nodes and outputs to a GraphDef, checking
/// each addition against what is already there: names valid (check_name in
/// core/names.hpp; the graph's own name in the constructor) and unique, op_type known,
/// attributes valid for the op's schema, input count, every input already
/// defined, and dtype/shape inference. A node's inputs must exist when it is
/// added, so a built graph is in topological order and acyclic by construction
/// (documents whose nodes come in any order go through the JSON reader).
///
/// Every error is the one Graph's constructor (and so the reader) gives for the
/// same mistake, naming the element as it will appear in the document
/// ("nodes[3] (pool1).attributes.kernel_shape: expected ..."). A call that
/// throws changes nothing, so an editor can report the error and carry on.
/// Each addition costs O(1) expected time apart from shape inference, so
/// building n nodes is linear in n.
class GraphBuilder {
 public:
  /// Op types are looked up in `registry`, which must outlive the builder.
  explicit GraphBuilder(std::string name = "", const OpRegistry& registry = OpRegistry::global());

  /// Declares a graph input; kDynamicDim marks a dimension fixed at run time.
  /// Throws InvalidGraph (empty or duplicate name), ShapeMismatch (dimension
  /// below kDynamicDim, element count overflowing int64).
  GraphBuilder& add_input(const std::string& name, DType dtype, Shape shape);

  /// Adds a constant (trainable = false) or a weight (trainable = true).
  /// Throws InvalidGraph (empty or duplicate name, empty tensor) and
  /// UnsupportedDType (a trainable integer tensor).
  GraphBuilder& add_initializer(const std::string& name, Tensor value, bool trainable = false);

  /// Adds a node and returns the names of its outputs (specified_outputs_name,
  /// else "name", "name:1", ...). Throws InvalidGraph, InvalidAttribute,
  /// ShapeMismatch or UnsupportedDType as Graph's constructor does.
  const std::vector<std::string>& add_node(NodeDef node);
  /// Shorthand for a node with default settings (training, lda_coeff 1.0, every output).
  const std::vector<std::string>& add_node(const std::string& op_type, const std::string& name,
                                           std::vector<std::string> inputs,
                                           Attributes attributes = {});

  /// Marks a defined tensor as a graph output. Throws InvalidGraph for an
  /// unknown tensor.
  GraphBuilder& add_output(const std::string& tensor);

  /// The description built so far (nodes in the order added).
  const GraphDef& def() const { return def_; }
  /// Dtype and inferred shape of a defined tensor. Throws InvalidGraph for an
  /// unknown name.
  const TensorInfo& info(const std::string& tensor) const;
  /// The validated, runnable graph (validates the whole description again, so a
  /// Graph is only ever made one way).
  Graph build() const;

 private:
  void check_new_tensor(const std::string& name, const std::string& where) const;

  const OpRegistry* registry_;
  GraphDef def_;
  std::unordered_map<std::string, TensorInfo> infos_;
  std::unordered_set<std::string> node_names_;
  /// Non-trainable initializers (the constants shape inference may read), by name.
  std::unordered_map<std::string, std::size_t> constants_;
  std::deque<std::vector<std::string>>
      outputs_;  ///< per node, its output names (stable references)
};

}  // namespace nodeflow
