#include "nodes/builtin_ops.hpp"

#include "core/registry.hpp"
#include "nodes/layer_ops.hpp"
#include "nodes/pooling/pool_ops.hpp"
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
  register_conv(registry);
  register_gemm(registry);
  register_matmul(registry);
  register_add(registry);
  register_relu(registry);
  register_sigmoid(registry);
  register_tanh(registry);
  register_flatten(registry);
  register_reshape(registry);
  register_dropout(registry);
  register_batch_normalization(registry);
  register_softmax(registry);
  register_log_softmax(registry);
  register_softmax_cross_entropy_loss(registry);
  register_negative_log_likelihood_loss(registry);
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
