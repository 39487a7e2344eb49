#pragma once
// The node interface: shape inference, forward and backward, and the per-node
// settings every node carries (training, lda_coeff, output names).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/attributes.hpp"
#include "core/tensor.hpp"

namespace nodeflow {

/// What a node is built from: its op, name, validated attributes and the
/// toolkit's training settings (docs/graph-format.md).
struct NodeConfig {
  std::string op_type;
  std::string name;
  Attributes attributes;
  bool training = true;    ///< keep state for backward and pass gradients on
  double lda_coeff = 1.0;  ///< finite factor on the gradient sent to the inputs
};

/// The default of ExecutorOptions::max_tensor_bytes: 4 GiB. Large enough for
/// the activations of the networks people train on one machine (VGG-16's
/// largest, float32 [256, 64, 224, 224] at batch 256, is 3.3 GB), small enough
/// that a graph asking for an absurd tensor (a Conv padded by 100000 on an 8x8
/// image wants 160 GB) is refused with a message instead of exhausting memory.
inline constexpr std::uint64_t kDefaultMaxTensorBytes = std::uint64_t{4} << 30;

/// The one check of ExecutorOptions::max_tensor_bytes, made before the memory
/// is allocated: by the executor for every node output, by a node for a work
/// buffer or saved state not bounded by its inputs and outputs (Conv's im2col
/// columns, MaxPool's saved argmax). `shape` may hold dimensions whose product
/// overflows int64 (it is then over any limit); a dimension 0 takes nothing.
/// Throws RunError "<what> of shape [100, 4004001] and dtype float32 would take
/// 1601600400 bytes, over the limit of 40000000 bytes per tensor
/// (ExecutorOptions::max_tensor_bytes; on the command line --max-tensor-bytes)";
/// `what` names the tensor ("output 'y'", "im2col buffer"), and the executor
/// prefixes the node ("nodes[0] (conv): ").
void check_tensor_bytes(const std::string& what, const Shape& shape, DType dtype, std::uint64_t limit);

/// Arguments of Node::infer. `inputs[i]` is nullptr for an absent optional input;
/// `constants[i]` is the input's value where it is known, else nullptr: at load,
/// the value of a non-trainable initializer; in the executor's run-time
/// inference (output sizes checked before the node runs,
/// ExecutorOptions::max_tensor_bytes), every present input's value. A value
/// that infer checks (a ratio, a variance) is thus checked in both.
struct InferContext {
  std::vector<const TensorInfo*> inputs;
  std::vector<const Tensor*> constants;
  std::size_t num_outputs = 1;  ///< outputs the graph asks for (a prefix of the op's)
};

/// Arguments of Node::forward. Absent optional inputs are empty tensors.
struct ForwardContext {
  std::span<const Tensor> inputs;
  std::span<Tensor> outputs;    ///< outputs.size() outputs are wanted; the node assigns them
  /// Non-null exactly when the node runs in training mode (a training-mode
  /// forward and the node's `training` is true): append what backward needs.
  std::vector<Tensor>* saved = nullptr;
  /// Seed for this node in this run (Dropout masks); distinct per node and run.
  std::uint64_t seed = 0;
  /// Training mode only: new values for non-trainable initializer inputs,
  /// as (input index, tensor) (BatchNormalization's running statistics). The
  /// caller of the run decides whether to apply them (Graph::set_initializer).
  std::vector<std::pair<std::size_t, Tensor>>* updates = nullptr;
  /// Threads the node's kernels may use (ExecutorOptions::threads); >= 1.
  int threads = 1;
  /// ExecutorOptions::max_tensor_bytes: a work buffer or saved state the node
  /// allocates beyond its inputs' and outputs' sizes passes check_tensor_bytes first.
  std::uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;
};

/// Arguments of Node::backward.
struct BackwardContext {
  std::span<const TensorInfo> inputs;     ///< dtype and shape of each forward input
  std::span<const Tensor> saved;          ///< what forward appended
  std::span<const Tensor> grad_outputs;   ///< empty tensor: zero gradient for that output
  std::span<Tensor> grad_inputs;          ///< empty tensor: not wanted; else add (+=) into it (or overwrite it)
  /// lda_coeff: the factor on the gradient sent to the previous layers.
  double scale = 1.0;
  /// Non-zero for inputs that are trainable initializers (the node's own
  /// parameters): lda_coeff does not scale their gradients (docs/graph-format.md,
  /// "training and lda_coeff").
  std::span<const std::uint8_t> parameter_inputs;
  /// Threads the node's kernels may use (ExecutorOptions::threads); >= 1.
  int threads = 1;
  /// ExecutorOptions::max_tensor_bytes, as in ForwardContext.
  std::uint64_t max_tensor_bytes = kDefaultMaxTensorBytes;

  /// Non-zero for the gradient buffers that backward must overwrite: to a
  /// node whose overwrites_gradients() is true, the executor hands the
  /// gradient buffer of an input tensor uninitialised when no other node has
  /// written that gradient yet and the node reads the tensor in that one
  /// input slot; backward then writes every element (=) instead of adding
  /// into it, which saves zeroing the buffer and reading it back
  /// (docs/architecture.md, "Gradient buffers").
  std::span<const std::uint8_t> overwrite_inputs = {};

  /// The factor to apply to the gradient of input k.
  double scale_for(std::size_t k) const {
    return k < parameter_inputs.size() && parameter_inputs[k] ? 1.0 : scale;
  }
  /// True when grad_inputs[k] is to be overwritten (overwrite_inputs).
  bool overwrites(std::size_t k) const { return k < overwrite_inputs.size() && overwrite_inputs[k]; }
  /// For the paths of an overwriting node that add rather than assign: zeroes
  /// grad_inputs[k] (on `threads` threads) when it is to be overwritten, so
  /// that adding into it gives the gradient.
  void zero_if_overwritten(std::size_t k) const;
};

/// A node instance. Nodes are immutable after construction: all per-run state
/// lives in the executor's run objects (ForwardContext::saved), so one graph can
/// be run by several threads at once.
class Node {
 public:
  explicit Node(NodeConfig config) : config_(std::move(config)) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const NodeConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  const std::string& op_type() const { return config_.op_type; }

  /// Output dtypes and shapes (dynamic dims stay kDynamicDim). Throws ShapeMismatch,
  /// UnsupportedDType or InvalidAttribute with messages relative to the node
  /// (the graph prefixes "nodes[i] (name)").
  virtual std::vector<TensorInfo> infer(const InferContext& ctx) const = 0;
  virtual void forward(const ForwardContext& ctx) const = 0;
  /// Gradient with respect to the float inputs; the default refuses.
  virtual void backward(const BackwardContext& ctx) const;
  /// True when backward takes output gradients and input-gradient buffers of
  /// any float dtype, whatever the tensors' own: the executor then hands it
  /// the float32 sums it keeps for float16/bfloat16 tensors as they are,
  /// instead of rounding them to the tensor's dtype (Cast; docs/operators.md,
  /// "Gradient conventions").
  virtual bool takes_float32_gradients() const { return false; }
  /// True when backward honours BackwardContext::overwrite_inputs; the
  /// executor zeroes every gradient buffer of the others.
  virtual bool overwrites_gradients() const { return false; }

 private:
  NodeConfig config_;
};

}  // namespace nodeflow
