#pragma once
// What happens to the gradients between backward and the optimizer
// (docs/training-config.md, "Gradient clipping, accumulation and loss
// scaling"): clipping by value and by global norm (PyTorch's
// torch.nn.utils.clip_grad_value_ and clip_grad_norm_), and dynamic loss
// scaling (torch.cuda.amp.GradScaler's rule). The trainer keeps the gradients
// of one optimizer step as float64 tensors, by parameter name, while it
// accumulates, unscales and clips them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/tensor.hpp"

namespace nodeflow::training {

/// Float64 gradients by parameter name.
using GradientMap = std::map<std::string, Tensor>;

struct ClipSettings {
  std::optional<double> value;     ///< clip_grad_value_'s clip_value (> 0)
  std::optional<double> max_norm;  ///< clip_grad_norm_'s max_norm (> 0)
  /// clip_grad_norm_'s norm_type: p >= 1, or infinity for the max norm.
  double norm_type = 2.0;
};

/// Throws InvalidAttribute naming the key ("gradient_clipping.max_norm: ...").
void validate(const ClipSettings& settings);

/// Every element clamped into [-value, value] (NaN stays NaN).
void clip_by_value(GradientMap& grads, double value);

/// The p-norm of all gradients together (max |g| for p = infinity); when
/// max_norm / (norm + 1e-6) < 1 every gradient is multiplied by that
/// coefficient, as clip_grad_norm_ does. Returns the norm before clipping.
double clip_by_norm(GradientMap& grads, double max_norm, double norm_type);

/// False when any gradient holds an infinity or NaN.
bool all_finite(const GradientMap& grads);

struct LossScaleSettings {
  bool enabled = false;
  double init_scale = 65536.0;         ///< GradScaler's init_scale (2^16)
  double growth_factor = 2.0;          ///< > 1
  double backoff_factor = 0.5;         ///< in (0, 1)
  std::int64_t growth_interval = 2000; ///< >= 1 steps without inf/NaN before growing
};

/// Throws InvalidAttribute naming the key ("loss_scaling.growth_factor: ...").
void validate(const LossScaleSettings& settings);

/// Dynamic loss scaling: backward is seeded with `scale()` instead of 1 and
/// the gradients are divided by it before the optimizer. A step whose
/// gradients hold an inf or NaN is skipped and the scale multiplied by
/// backoff_factor; after growth_interval steps in a row without one, the
/// scale is multiplied by growth_factor (GradScaler.update).
class LossScaler {
 public:
  explicit LossScaler(const LossScaleSettings& settings = {})
      : settings_(settings), scale_(settings.init_scale) {}
  double scale() const { return scale_; }
  /// Steps in a row without inf/NaN since the last change of the scale.
  std::int64_t good_steps() const { return good_steps_; }
  /// The step's verdict: found_non_finite means it was skipped.
  void update(bool found_non_finite);
  /// A checkpoint's values (scale finite and > 0, good_steps >= 0, else
  /// InvalidAttribute).
  void restore(double scale, std::int64_t good_steps);

 private:
  LossScaleSettings settings_;
  double scale_;
  std::int64_t good_steps_ = 0;
};

}  // namespace nodeflow::training
