#pragma once
// The one node class of InstanceNormalization and GroupNormalization: X
// [N, C, D1..Dn] (rank >= 2), scale and bias [C], each (n, group) normalised
// on its own and channel c scaled and shifted by scale[c] and bias[c].
// InstanceNormalization is the case of one channel per group, its statistics
// in the compute dtype (float64 stays float64; ONNX gives it no stash_type);
// GroupNormalization has num_groups groups of consecutive channels and float32
// statistics (stash_type 1).
#include <memory>

#include "core/node.hpp"

namespace nodeflow {

enum class ChannelNormalization { Instance, Group };

std::unique_ptr<Node> make_channel_normalization(NodeConfig config, ChannelNormalization kind);

}  // namespace nodeflow
