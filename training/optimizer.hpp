#pragma once
// Optimizers with PyTorch's update formulas (docs/training-config.md, "Optimizers (PyTorch's formulas)"):
// torch.optim.SGD (dampening 0), torch.optim.Adam (amsgrad off) and
// torch.optim.AdamW. State is kept per parameter name, and only a parameter
// that is updated changes its state (a parameter without a gradient in a step
// is simply not passed to update()).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/tensor.hpp"

namespace nodeflow::training {

enum class OptimizerKind { SGD, Adam, AdamW };

/// "sgd", "adam", "adamw"; false for another name.
bool parse_optimizer_kind(std::string_view name, OptimizerKind& out);
std::string_view optimizer_kind_name(OptimizerKind kind);

struct OptimizerSettings {
  OptimizerKind kind = OptimizerKind::SGD;
  double lr = 0.01;       ///< base learning rate (the schedule's lr0)
  double momentum = 0.0;  ///< SGD
  bool nesterov = false;  ///< SGD; needs momentum > 0
  double beta1 = 0.9;     ///< Adam, AdamW
  double beta2 = 0.999;   ///< Adam, AdamW
  double eps = 1e-8;      ///< Adam, AdamW
  /// Coefficient for weights (see weight_decay_plan); L2 added to the gradient
  /// for SGD and Adam, decoupled (w *= 1 - lr * wd) for AdamW.
  double weight_decay = 0.0;
};

/// Throws InvalidAttribute naming the field for values PyTorch refuses
/// (lr < 0, momentum < 0, betas outside [0, 1), eps < 0, weight_decay < 0,
/// nesterov without momentum) and for non-finite values.
void validate(const OptimizerSettings& settings);

/// One optimizer over any number of named parameters.
///
/// With g the gradient, w the parameter and wd its weight decay:
///  - SGD:   g' = g + wd*w; v = momentum*v + g' (v = g' at the first step);
///           d = nesterov ? g' + momentum*v : v (v when momentum = 0: d = g');
///           w -= lr*d.
///  - Adam:  g' = g + wd*w; m = b1*m + (1-b1)*g'; v = b2*v + (1-b2)*g'^2;
///           w -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps),
///           t counting this parameter's own steps from 1.
///  - AdamW: w *= 1 - lr*wd first, then Adam with g' = g.
/// Element arithmetic is in double, rounded once to the parameter's dtype;
/// state is kept in the parameter's dtype (float32 for float16 and bfloat16).
class Optimizer {
 public:
  explicit Optimizer(OptimizerSettings settings);

  /// The parameter after one step. `value` and `grad` must be float tensors of
  /// one dtype (or a float64 `grad`, read without rounding) and one shape (UnsupportedDType / ShapeMismatch naming `name`), and
  /// the same dtype and shape as at the parameter's previous steps. `threads`
  /// share the elements (the same values for any count).
  Tensor update(const std::string& name, const Tensor& value, const Tensor& grad, double lr,
                double weight_decay, int threads = 1);

  /// Steps taken by parameter `name` (0 before its first update).
  std::int64_t steps(const std::string& name) const;
  /// Momentum buffer (SGD) or first moment (Adam); empty before the first step.
  Tensor first_moment(const std::string& name) const;
  /// Second moment (Adam, AdamW); empty otherwise.
  Tensor second_moment(const std::string& name) const;
  const OptimizerSettings& settings() const { return settings_; }

  /// What the optimizer keeps for one parameter: the momentum buffer (SGD;
  /// kept even without momentum) or first moment m, the
  /// second moment v (Adam, AdamW; empty for SGD), in the state dtype, and
  /// the parameter's step count t.
  struct ParameterState {
    Tensor m, v;
    std::int64_t t = 0;
  };
  /// Every parameter's state, by name (a checkpoint saves it).
  const std::map<std::string, ParameterState>& state() const { return state_; }
  /// Replaces the whole state (a resumed run; training/checkpoint.hpp). Throws
  /// InvalidAttribute naming the parameter when a state does not fit this
  /// optimizer: t < 1, m missing or not of the state dtype of a float
  /// parameter, v present for SGD or missing (or of another dtype or shape
  /// than m) for Adam and AdamW. Nothing changes on a throw.
  void restore_state(std::map<std::string, ParameterState> state);

 private:
  OptimizerSettings settings_;
  std::map<std::string, ParameterState> state_;
};

}  // namespace nodeflow::training
