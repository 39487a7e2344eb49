// InstanceNormalization (ONNX InstanceNormalization-22): input N x C x D1..Dn
// (rank >= 2), scale and B [C] of input's dtype. Each (n, c) plane is
// normalised by its own mean and biased variance, in the compute dtype
// (float64 for float64, float32 otherwise: ONNX gives this op no stash_type),
// then scaled and shifted by channel c's scale and B. Gradients for input,
// scale and B, with the statistics as functions of the input.
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/normalization/channel_normalization.hpp"
#include "nodes/normalization/normalization_node.hpp"
#include "nodes/normalization/normalization_ops.hpp"

namespace nodeflow {

void register_instance_normalization(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "InstanceNormalization";
  s.definition = "ONNX InstanceNormalization-22";
  s.doc = "Normalizes each sample's channel over its spatial axes (epsilon), * scale + B";
  s.inputs = {{"input", float_dtypes(), "N x C x D1..Dn"},
              {"scale", float_dtypes(), "[C], input's dtype"},
              {"B", float_dtypes(), "[C] bias, input's dtype"}};
  s.min_inputs = 3;
  s.outputs = {{"output", float_dtypes(), "input's shape and dtype"}};
  s.attributes = {epsilon_spec()};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return make_channel_normalization(std::move(c), ChannelNormalization::Instance);
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow
