#include "nodes/shape/movement.hpp"

#include "nodes/common/layer_common.hpp"

namespace nodeflow {

void relabel_gradient(const BackwardContext& ctx) {
  if (ctx.grad_outputs[0].empty() || ctx.grad_inputs[0].empty()) return;
  accumulate_gradient(ctx.grad_inputs[0], ctx.grad_outputs[0], ctx.scale_for(0));
}

}  // namespace nodeflow
