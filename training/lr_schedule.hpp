#pragma once
// Learning-rate schedules as functions of the 0-based epoch index e
// (docs/training-config.md, "Learning-rate schedules"); the first epoch always trains with lr0.
#include <cstdint>
#include <string_view>
#include <vector>

namespace nodeflow::training {

enum class ScheduleKind {
  Constant,   ///< lr0
  Step,       ///< lr0 * gamma^floor(e / step_size)
  MultiStep,  ///< lr0 * gamma^(number of milestones <= e)
  Cosine,     ///< lr_min + (lr0 - lr_min) * (1 + cos(pi * e / t_max)) / 2
  Exponential,  ///< lr0 * gamma^e (PyTorch's ExponentialLR)
};

/// "constant", "step", "multistep", "cosine", "exponential"; false for another name.
bool parse_schedule_kind(std::string_view name, ScheduleKind& out);
std::string_view schedule_kind_name(ScheduleKind kind);

struct ScheduleSettings {
  ScheduleKind kind = ScheduleKind::Constant;
  std::int64_t step_size = 1;            ///< Step: epochs per decay (>= 1)
  std::vector<std::int64_t> milestones;  ///< MultiStep: epochs (>= 1, increasing)
  double gamma = 0.1;                    ///< Step, MultiStep, Exponential: decay factor (> 0)
  double lr_min = 0.0;                   ///< Cosine: the floor (PyTorch's eta_min)
  std::int64_t t_max = 0;  ///< Cosine: period E (>= 1; the config defaults it to epochs)
};

/// Throws InvalidAttribute naming the field ("schedule.step_size: ...") when a
/// value is outside the range documented above.
void validate(const ScheduleSettings& settings);

/// The learning rate of epoch `epoch` (0-based) for base rate `lr0`. Epochs past
/// t_max keep following the cosine formula (as PyTorch's closed form does).
double learning_rate(const ScheduleSettings& settings, double lr0, std::int64_t epoch);

}  // namespace nodeflow::training
