#include "nodes/builtin_ops.hpp"

#include "core/registry.hpp"
#include "nodes/elementwise/elementwise_ops.hpp"
#include "nodes/activations/activations_ops.hpp"
#include "nodes/conv/conv_ops.hpp"
#include "nodes/layer_ops.hpp"
#include "nodes/normalization/normalization_ops.hpp"
#include "nodes/pooling/pool_ops.hpp"
#include "nodes/shape/shape_ops.hpp"
#include "nodes/shape/resize_ops.hpp"
#include "nodes/reduction/reduction_ops.hpp"

namespace nodeflow {

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    register_builtin_ops(*r);
    return r;
  }();
  return *registry;
}

void register_builtin_ops(OpRegistry& registry) {
  register_average_pool(registry);
  register_max_pool(registry);
  register_lp_pool(registry);
  register_global_average_pool(registry);
  register_global_max_pool(registry);
  register_max_unpool(registry);
  register_global_lp_pool(registry);
  register_max_roi_pool(registry);
  register_conv(registry);
  register_conv_transpose(registry);
  register_gemm(registry);
  register_matmul(registry);
  register_add(registry);
  register_relu(registry);
  register_sigmoid(registry);
  register_tanh(registry);
  register_leaky_relu(registry);
  register_elu(registry);
  register_selu(registry);
  register_celu(registry);
  register_gelu(registry);
  register_hard_sigmoid(registry);
  register_hard_swish(registry);
  register_softplus(registry);
  register_softsign(registry);
  register_mish(registry);
  register_clip(registry);
  register_flatten(registry);
  register_reshape(registry);
  register_dropout(registry);
  register_batch_normalization(registry);
  register_softmax(registry);
  register_log_softmax(registry);
  register_softmax_cross_entropy_loss(registry);
  register_negative_log_likelihood_loss(registry);
  register_sub(registry);
  register_mul(registry);
  register_div(registry);
  register_pow(registry);
  register_max(registry);
  register_min(registry);
  register_sum(registry);
  register_mean(registry);
  register_prelu(registry);
  register_neg(registry);
  register_abs(registry);
  register_exp(registry);
  register_log(registry);
  register_sqrt(registry);
  register_reciprocal(registry);
  register_erf(registry);
  register_identity(registry);
  register_slice(registry);
  register_pad(registry);
  register_expand(registry);
  register_tile(registry);
  register_gather(registry);
  register_layer_normalization(registry);
  register_instance_normalization(registry);
  register_group_normalization(registry);
  register_lrn(registry);
  register_resize(registry);
  register_transpose(registry);
  register_concat(registry);
  register_split(registry);
  register_squeeze(registry);
  register_unsqueeze(registry);
  register_cast(registry);
  register_reduce_sum(registry);
  register_reduce_mean(registry);
  register_reduce_prod(registry);
  register_reduce_max(registry);
  register_reduce_min(registry);
  register_reduce_l2(registry);
  register_reduce_sum_square(registry);
  register_reduce_log_sum_exp(registry);
  register_argmax(registry);
}

}  // namespace nodeflow
