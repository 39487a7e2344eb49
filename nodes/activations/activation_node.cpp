#include "nodes/activations/activation_node.hpp"

#include <algorithm>

#include "core/parallel.hpp"

namespace nodeflow {

void activation_ranges(int threads, std::int64_t n,
                       const std::function<void(std::int64_t, std::int64_t)>& body) {
  // A parallel region costs microseconds: below this many elements per
  // thread one thread streams the tensor faster than a team does.
  constexpr std::int64_t kGrain = std::int64_t{1} << 15;
  const std::int64_t team = std::clamp<std::int64_t>(n / kGrain, 1, std::max(1, threads));
  parallel_ranges(static_cast<int>(team), n, body);
}

void check_activation_dtype(const std::string& op, const std::string& input_name, DType dtype,
                            bool float32_only) {
  if (!float32_only) {
    check_float_input(op, 0, input_name, dtype);
    return;
  }
  if (dtype != DType::Float32)
    throw UnsupportedDType(op + " does not take dtype " + std::string(dtype_name(dtype)) +
                           " (input 0 (" + input_name + "); allowed: float32)");
}

}  // namespace nodeflow
