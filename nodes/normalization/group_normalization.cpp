// GroupNormalization (ONNX GroupNormalization-21): X N x C x D1..Dn (rank >=
// 2), its C channels split into num_groups groups of C / num_groups
// consecutive channels; each (n, group) is normalised by its own mean and
// biased variance, computed in float32 (stash_type 1), then channel c is
// scaled and shifted by scale[c] and bias[c] ([C], X's dtype; opset 18 had
// them per group). Gradients for X, scale and bias, with the statistics as
// functions of X. C not divisible by num_groups is a ShapeMismatch.
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/normalization/channel_normalization.hpp"
#include "nodes/normalization/normalization_node.hpp"
#include "nodes/normalization/normalization_ops.hpp"

namespace nodeflow {

void register_group_normalization(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "GroupNormalization";
  s.definition = "ONNX GroupNormalization-21";
  s.doc = "Normalizes each group of num_groups channel groups over its channels and spatial axes, * scale + bias";
  s.inputs = {{"X", float_dtypes(), "N x C x D1..Dn"},
              {"scale", float_dtypes(), "[C], X's dtype"},
              {"bias", float_dtypes(), "[C], X's dtype"}};
  s.min_inputs = 3;
  s.outputs = {{"Y", float_dtypes(), "X's shape and dtype"}};
  AttrSpec groups;
  groups.name = "num_groups";
  groups.kind = AttrKind::Int;
  groups.required = true;
  groups.min = 1;
  groups.doc = "number of groups of consecutive channels; divides C";
  groups.since_version = 18;  // GroupNormalization came in opset 18
  AttrSpec epsilon = epsilon_spec();
  epsilon.since_version = 18;
  s.attributes = {epsilon, groups, stash_type_spec(21)};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return make_channel_normalization(std::move(c), ChannelNormalization::Group);
  };
  registry.add(std::move(s));
}

}  // namespace nodeflow
