#pragma once
// Runs a Graph: inference, and training-mode forward + backward.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/graph.hpp"

namespace nodeflow {

using TensorMap = std::map<std::string, Tensor>;

/// State of one training-mode forward pass: what each node saved for backward.
/// It belongs to the run, not to the graph, so several runs (threads) can use
/// one Graph at once. backward() consumes it.
class TrainingRun {
 public:
  /// Graph outputs of the forward pass.
  const TensorMap& outputs() const { return outputs_; }
  /// What node `node_name` keeps for backward (empty after backward).
  const std::vector<Tensor>& saved(const std::string& node_name) const;
  bool consumed() const { return consumed_; }
  /// New values the nodes computed for non-trainable initializers
  /// (BatchNormalization running statistics), by initializer name.
  const TensorMap& initializer_updates() const { return updates_; }

 private:
  friend class Executor;
  TensorMap outputs_;
  TensorMap feeds_;                              ///< graph inputs (shape source for grads)
  std::vector<std::vector<Tensor>> saved_;       ///< per step
  std::vector<std::vector<TensorInfo>> input_infos_;  ///< per step, run-time input shapes
  TensorMap updates_;
  const Graph* graph_ = nullptr;
  bool consumed_ = false;
};

/// Settings of an Executor.
struct ExecutorOptions {
  /// Threads each node's kernels may use (the one thread-count setting of a
  /// run; kernels that do not split their work ignore it). Must be >= 1.
  int threads = 1;
  /// Bytes (element count x dtype size) that any one output of a node may
  /// take. Checked before the node runs, from the output shapes that shape
  /// inference gives for the run's actual input shapes and values; a node
  /// output whose shape is fixed by the graph alone is checked when the
  /// Executor is made. Graph inputs and initializers are not checked (they
  /// exist already; ReadOptions::max_initializer_bytes bounds the latter).
  /// The same cap holds for each buffer a node allocates beyond the sizes of
  /// its inputs and outputs (Conv's im2col columns and row table, MaxPool's
  /// saved argmax), refused before allocation as an output is; a float32
  /// compute copy of a float16 tensor (twice its bytes) is not counted
  /// (check_tensor_bytes in core/node.hpp). The command line's --max-tensor-bytes.
  std::uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;
};

namespace detail {
/// What an Executor works out once for its graph, so that a run looks no name up.
struct ExecutionPlan {
  std::vector<std::size_t> reads;            ///< per slot: readers, plus one for graph outputs
  std::vector<std::size_t> outputs_by_name;  ///< positions in def().outputs, sorted by name
  /// Per step: some output shape depends on the run's input shapes, so shape
  /// inference runs again before the node (for ExecutorOptions::max_tensor_bytes).
  std::vector<std::uint8_t> infer_at_run;
};
}  // namespace detail

/// Runs a graph. Stateless apart from the graph reference, its options and
/// bookkeeping derived from the graph's structure when constructed:
/// every method is safe to call from several threads at once.
class Executor {
 public:
  /// Throws InvalidAttribute if options.threads < 1, RunError (as run() does)
  /// for a node output whose shape the graph fixes and whose bytes exceed
  /// options.max_tensor_bytes.
  explicit Executor(const Graph& graph, ExecutorOptions options = {});

  /// Inference. `feeds` holds every graph input (dtype must match; shape must
  /// match the declared one, dynamic dims free). Returns every graph output.
  /// Each intermediate tensor is freed once its last consumer has run.
  /// Throws ShapeMismatch / UnsupportedDType / InvalidGraph naming the input,
  /// RunError for failures inside a node (prefixed by the node name), and
  /// RunError before a node runs when one of its outputs would exceed
  /// options().max_tensor_bytes: "nodes[0] (conv): output 'y' of shape
  /// [1, 1, 200006, 200006] and dtype float32 would take 160009600144 bytes,
  /// over the limit of 4294967296 bytes per tensor (...)". Shape inference
  /// runs again for the nodes whose output shapes depend on the run, so its
  /// errors (ShapeMismatch, ...) may come before the node's own. `seed` reaches
  /// each node's ForwardContext::seed as forward()'s does; the random nodes
  /// there are today (Dropout) are the identity in inference, so outputs do
  /// not depend on it.
  TensorMap run(const TensorMap& feeds, std::uint64_t seed = 0) const;

  /// Training-mode forward: nodes with training=true save what backward needs.
  /// `seed` drives the random nodes (Dropout): the same seed gives the same masks.
  /// Throws as run() does.
  TrainingRun forward(const TensorMap& feeds, std::uint64_t seed = 0) const;

  /// Backward through the whole graph in reverse topological order, seeded with
  /// `grad_outputs` (graph output name -> gradient of the output's dtype and
  /// shape; outputs without one get zero). Returns gradients for every float
  /// graph input and every trainable initializer ("<name>" -> gradient).
  /// Throws RunError if `run` was already consumed, UnsupportedDType for a
  /// gradient on an integer tensor or a seed of another dtype than its output,
  /// ShapeMismatch for a wrongly shaped seed (as run() does for feeds).
  /// With `input_gradients` false the float graph inputs get no gradient (none
  /// is computed for them nor returned): a trainer needs the initializers' only.
  TensorMap backward(TrainingRun& run, const TensorMap& grad_outputs, bool input_gradients = true) const;

  const Graph& graph() const { return graph_; }
  const ExecutorOptions& options() const { return options_; }

 private:
  const Graph& graph_;
  ExecutorOptions options_;
  detail::ExecutionPlan plan_;
};

}  // namespace nodeflow
