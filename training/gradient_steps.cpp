#include "training/gradient_steps.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "core/number_text.hpp"

namespace nodeflow::training {
namespace {

void require(bool ok, const std::string& key, double value, const std::string& rule) {
  if (!ok) throw InvalidAttribute(key + ": expected " + rule + ", got " + number_text(value));
}

}  // namespace

void validate(const ClipSettings& s) {
  if (s.value) require(std::isfinite(*s.value) && *s.value > 0, "gradient_clipping.value", *s.value,
                       "a finite number > 0");
  if (s.max_norm)
    require(std::isfinite(*s.max_norm) && *s.max_norm > 0, "gradient_clipping.max_norm",
            *s.max_norm, "a finite number > 0");
  require(s.norm_type >= 1.0 && !std::isnan(s.norm_type), "gradient_clipping.norm_type",
          s.norm_type, "a number >= 1 or \"inf\"");
}

void clip_by_value(GradientMap& grads, double value) {
  for (auto& [name, g] : grads)
    for (double& x : g.values<double>())
      if (!std::isnan(x)) x = std::clamp(x, -value, value);
}

double clip_by_norm(GradientMap& grads, double max_norm, double norm_type) {
  // clip_grad_norm_: the norm of the per-parameter norms, which for a p-norm
  // is the p-norm of all elements together.
  double norm = 0.0;
  if (std::isinf(norm_type)) {
    for (const auto& [name, g] : grads)
      for (const double x : g.values<double>()) norm = std::isnan(x) ? x : std::max(norm, std::abs(x));
  } else {
    double sum = 0.0;
    for (const auto& [name, g] : grads)
      for (const double x : g.values<double>())
        sum += norm_type == 2.0 ? x * x : std::pow(std::abs(x), norm_type);
    norm = norm_type == 2.0 ? std::sqrt(sum) : std::pow(sum, 1.0 / norm_type);
  }
  const double coef = max_norm / (norm + 1e-6);
  if (coef < 1.0 || std::isnan(coef))
    for (auto& [name, g] : grads)
      for (double& x : g.values<double>()) x *= coef;
  return norm;
}

bool all_finite(const GradientMap& grads) {
  for (const auto& [name, g] : grads)
    for (const double x : g.values<double>())
      if (!std::isfinite(x)) return false;
  return true;
}

void validate(const LossScaleSettings& s) {
  require(std::isfinite(s.init_scale) && s.init_scale > 0, "loss_scaling.init_scale",
          s.init_scale, "a finite number > 0");
  require(std::isfinite(s.growth_factor) && s.growth_factor > 1, "loss_scaling.growth_factor",
          s.growth_factor, "a finite number > 1");
  require(s.backoff_factor > 0 && s.backoff_factor < 1, "loss_scaling.backoff_factor",
          s.backoff_factor, "a number in (0, 1)");
  if (s.growth_interval < 1)
    throw InvalidAttribute("loss_scaling.growth_interval: expected an integer >= 1, got " +
                           std::to_string(s.growth_interval));
}

void LossScaler::update(bool found_non_finite) {
  if (found_non_finite) {
    scale_ *= settings_.backoff_factor;
    good_steps_ = 0;
    return;
  }
  if (++good_steps_ == settings_.growth_interval) {
    // GradScaler keeps the old scale when the grown one would overflow.
    const double grown = scale_ * settings_.growth_factor;
    if (std::isfinite(grown)) scale_ = grown;
    good_steps_ = 0;
  }
}

void LossScaler::restore(double scale, std::int64_t good_steps) {
  if (!(std::isfinite(scale) && scale > 0))
    throw InvalidAttribute("loss_scaling.scale: expected a finite number > 0, got " + number_text(scale));
  if (good_steps < 0)
    throw InvalidAttribute("loss_scaling.good_steps: expected an integer >= 0, got " +
                           std::to_string(good_steps));
  scale_ = scale;
  good_steps_ = good_steps;
}

}  // namespace nodeflow::training
