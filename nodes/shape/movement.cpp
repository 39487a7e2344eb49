#include "nodes/shape/movement.hpp"

#include "core/attributes.hpp"
#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"

namespace nodeflow {

void relabel_gradient(const BackwardContext& ctx) {
  if (ctx.grad_outputs[0].empty() || ctx.grad_inputs[0].empty()) return;
  accumulate_gradient(ctx.grad_inputs[0], ctx.grad_outputs[0], ctx.scale_for(0));
}

std::vector<std::int64_t> int64_values(const std::string& op, std::size_t k, const std::string& name,
                                       const Tensor& t) {
  check_int64_input(op, k, name, t.dtype());
  if (t.rank() != 1)
    throw ShapeMismatch("input " + std::to_string(k) + " (" + name + ") has shape " + to_string(t.shape()) +
                        "; " + op + " needs a 1-D int64 tensor");
  const auto v = t.values<std::int64_t>();
  return {v.begin(), v.end()};
}

std::vector<bool> axis_mask(const std::vector<std::int64_t>& axes, std::size_t rank, std::size_t k,
                            const std::string& name) {
  const auto r = static_cast<std::int64_t>(rank);
  auto where = [&] { return "input " + std::to_string(k) + " (" + name + ") " + to_string(AttrValue{axes}); };
  std::vector<bool> mask(rank, false);
  for (const std::int64_t a : axes) {
    if (a < -r || a >= r)
      throw ShapeMismatch(where() + ": axis " + std::to_string(a) + " is outside [" + std::to_string(-r) + ", " +
                          std::to_string(r - 1) + "] (rank " + std::to_string(rank) + ")");
    const auto axis = static_cast<std::size_t>(a < 0 ? a + r : a);
    if (mask[axis]) throw ShapeMismatch(where() + ": axis " + std::to_string(axis) + " is given twice");
    mask[axis] = true;
  }
  return mask;
}

}  // namespace nodeflow
