#pragma once
// Initialisation rules: an initializer in the graph document may carry
// `"init": {"rule": ..., "seed": ...}` instead of `data`, so that an untrained
// network is a short, hand-editable file. The rules and their fan definitions
// follow PyTorch's torch.nn.init (kaiming_* with a = 0, i.e. the ReLU gain
// sqrt(2), and xavier_* with gain 1).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/tensor.hpp"

namespace nodeflow {

enum class InitKind {
  Zeros,          ///< 0
  Ones,           ///< 1
  Constant,       ///< `value`
  Uniform,        ///< U(low, high)
  Normal,         ///< N(mean, std^2)
  HeNormal,       ///< N(0, 2 / fan)              (kaiming_normal_, fan = fan_in by default)
  HeUniform,      ///< U(-b, b), b = sqrt(6 / fan) (kaiming_uniform_)
  GlorotNormal,   ///< N(0, 2 / (fan_in + fan_out))  (xavier_normal_)
  GlorotUniform,  ///< U(-b, b), b = sqrt(6 / (fan_in + fan_out)) (xavier_uniform_)
};

/// Which fan the He rules use (PyTorch's `mode`).
enum class FanMode { FanIn, FanOut };

struct InitRule {
  InitKind kind = InitKind::Zeros;
  std::uint64_t seed = 0;         ///< random rules only: the same seed gives the same tensor
  double value = 0.0;             ///< Constant
  /// Constant: the value itself when it was written as an integer within
  /// int64; a double holds integers exactly only up to 2^53.
  std::optional<std::int64_t> integer_value;
  double low = 0.0, high = 1.0;   ///< Uniform
  double mean = 0.0, std = 1.0;   ///< Normal
  FanMode mode = FanMode::FanIn;  ///< He rules
};

/// "zeros", "ones", "constant", "uniform", "normal", "he_normal", "he_uniform",
/// "glorot_normal", "glorot_uniform". Returns false for another name.
bool parse_init_kind(std::string_view name, InitKind& out);
std::string_view init_kind_name(InitKind kind);
/// Every accepted rule name, comma-separated (for messages).
std::string init_kind_names();
/// True for the rules that draw random numbers (they need a seed).
bool is_random(InitKind kind);

/// Fans as PyTorch's _calculate_fan_in_and_fan_out: for shape [out, in, k...],
/// fan_in = in * prod(k), fan_out = out * prod(k). So a Gemm weight follows the
/// rule as intended when stored [out, in] (transB = 1, like torch.nn.Linear).
/// Throws ShapeMismatch for rank < 2.
struct Fans {
  std::int64_t fan_in = 0, fan_out = 0;
};
Fans compute_fans(const Shape& shape);

/// A tensor of `dtype` and static `shape` filled by `rule`. Random values are
/// drawn in double from Rng(rule.seed) in row-major order and rounded to the
/// dtype. Throws UnsupportedDType for a random rule on an integer dtype,
/// ShapeMismatch for a fan-based rule on a tensor of rank < 2 or with a zero fan,
/// InvalidAttribute for a non-finite or out-of-range parameter (std < 0, low > high).
Tensor make_initialized(const InitRule& rule, DType dtype, const Shape& shape);

}  // namespace nodeflow
