#include "training/lr_schedule.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "core/errors.hpp"
#include "core/number_text.hpp"

namespace nodeflow::training {

bool parse_schedule_kind(std::string_view name, ScheduleKind& out) {
  if (name == "constant")
    out = ScheduleKind::Constant;
  else if (name == "step")
    out = ScheduleKind::Step;
  else if (name == "multistep")
    out = ScheduleKind::MultiStep;
  else if (name == "cosine")
    out = ScheduleKind::Cosine;
  else if (name == "exponential")
    out = ScheduleKind::Exponential;
  else
    return false;
  return true;
}

std::string_view schedule_kind_name(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::Constant:
      return "constant";
    case ScheduleKind::Step:
      return "step";
    case ScheduleKind::MultiStep:
      return "multistep";
    case ScheduleKind::Cosine:
      return "cosine";
    case ScheduleKind::Exponential:
      return "exponential";
  }
  return "constant";
}

void validate(const ScheduleSettings& s) {
  if (s.kind == ScheduleKind::Step && s.step_size < 1)
    throw InvalidAttribute("schedule.step_size: expected an integer >= 1, got " +
                           std::to_string(s.step_size));
  if ((s.kind == ScheduleKind::Step || s.kind == ScheduleKind::MultiStep ||
       s.kind == ScheduleKind::Exponential) &&
      !(std::isfinite(s.gamma) && s.gamma > 0))
    throw InvalidAttribute("schedule.gamma: expected a finite number > 0, got " + number_text(s.gamma));
  if (s.kind == ScheduleKind::MultiStep) {
    for (std::size_t i = 0; i < s.milestones.size(); ++i)
      if (s.milestones[i] < 1 || (i > 0 && s.milestones[i] <= s.milestones[i - 1]))
        throw InvalidAttribute("schedule.milestones[" + std::to_string(i) +
                               "]: expected strictly increasing epochs >= 1, got " +
                               std::to_string(s.milestones[i]));
  }
  if (s.kind == ScheduleKind::Cosine) {
    if (s.t_max < 1)
      throw InvalidAttribute("schedule.t_max: expected an integer >= 1, got " +
                             std::to_string(s.t_max));
    if (!(std::isfinite(s.lr_min) && s.lr_min >= 0))
      throw InvalidAttribute("schedule.lr_min: expected a finite number >= 0, got " +
                             number_text(s.lr_min));
  }
}

double learning_rate(const ScheduleSettings& s, double lr0, std::int64_t epoch) {
  switch (s.kind) {
    case ScheduleKind::Constant:
      return lr0;
    case ScheduleKind::Step:
      return lr0 * std::pow(s.gamma, static_cast<double>(epoch / s.step_size));
    case ScheduleKind::MultiStep: {
      std::int64_t passed = 0;
      for (std::int64_t m : s.milestones) passed += m <= epoch ? 1 : 0;
      return lr0 * std::pow(s.gamma, static_cast<double>(passed));
    }
    case ScheduleKind::Cosine:
      return s.lr_min + (lr0 - s.lr_min) *
                            (1.0 + std::cos(std::numbers::pi * static_cast<double>(epoch) /
                                            static_cast<double>(s.t_max))) /
                            2.0;
    case ScheduleKind::Exponential:
      return lr0 * std::pow(s.gamma, static_cast<double>(epoch));
  }
  return lr0;
}

}  // namespace nodeflow::training
