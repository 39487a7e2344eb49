#include "training/optimizer.hpp"

#include <cmath>
#include <cstdio>

#include "core/parallel.hpp"

namespace nodeflow::training {
namespace {

void require(bool ok, const std::string& field, double value, const std::string& rule) {
  if (ok) return;
  char got[32];
  std::snprintf(got, sizeof got, "%g", value);
  throw InvalidAttribute("optimizer." + field + ": expected " + rule + ", got " + got);
}

DType state_dtype(DType param) {
  return param == DType::Float16 || param == DType::BFloat16 ? DType::Float32 : param;
}

// Applies `rule(i, w, g, m, v) -> new w` element by element in double.
// Elements are independent: the threads take ranges of them (below 2^14
// elements one thread; a parallel region costs microseconds).
template <typename Rule>
void for_each_element(Tensor& out, const Tensor& value, const Tensor& grad, Tensor& m, Tensor* v, int threads,
                      Rule&& rule) {
  visit_float_dtype(value.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using S = accumulator_t<T>;
    const T* w = value.data<T>();
    // A float64 gradient (the trainer's accumulated, unscaled or clipped one)
    // is read as it is, without a rounding to the parameter's dtype first.
    const bool wide = grad.dtype() == DType::Float64;
    const T* g = wide ? nullptr : grad.data<T>();
    const double* g64 = wide ? grad.data<double>() : nullptr;
    T* o = out.data<T>();
    S* pm = m.data<S>();
    S* pv = v != nullptr ? v->data<S>() : nullptr;
    const std::int64_t n = value.numel();
    parallel_ranges(n < (std::int64_t{1} << 14) ? 1 : threads, n, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        double mi = static_cast<double>(pm[i]);
        double vi = pv != nullptr ? static_cast<double>(pv[i]) : 0.0;
        o[i] = static_cast<T>(rule(static_cast<double>(w[i]), wide ? g64[i] : static_cast<double>(g[i]), mi, vi));
        pm[i] = static_cast<S>(mi);
        if (pv != nullptr) pv[i] = static_cast<S>(vi);
      }
    });
  });
}

}  // namespace

bool parse_optimizer_kind(std::string_view name, OptimizerKind& out) {
  if (name == "sgd")
    out = OptimizerKind::SGD;
  else if (name == "adam")
    out = OptimizerKind::Adam;
  else if (name == "adamw")
    out = OptimizerKind::AdamW;
  else
    return false;
  return true;
}

std::string_view optimizer_kind_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::SGD:
      return "sgd";
    case OptimizerKind::Adam:
      return "adam";
    case OptimizerKind::AdamW:
      return "adamw";
  }
  return "sgd";
}

void validate(const OptimizerSettings& s) {
  require(std::isfinite(s.lr) && s.lr >= 0, "lr", s.lr, "a finite number >= 0");
  require(std::isfinite(s.momentum) && s.momentum >= 0, "momentum", s.momentum,
          "a finite number >= 0");
  require(std::isfinite(s.weight_decay) && s.weight_decay >= 0, "weight_decay", s.weight_decay,
          "a finite number >= 0");
  require(std::isfinite(s.eps) && s.eps >= 0, "eps", s.eps, "a finite number >= 0");
  require(s.beta1 >= 0 && s.beta1 < 1, "beta1", s.beta1, "a number in [0, 1)");
  require(s.beta2 >= 0 && s.beta2 < 1, "beta2", s.beta2, "a number in [0, 1)");
  if (s.nesterov && (s.kind != OptimizerKind::SGD || s.momentum <= 0))
    throw InvalidAttribute("optimizer.nesterov: needs the sgd optimizer with momentum > 0");
  if (s.kind != OptimizerKind::SGD && s.momentum != 0)
    throw InvalidAttribute(
        "optimizer.momentum: only the sgd optimizer has momentum (adam uses beta1)");
}

Optimizer::Optimizer(OptimizerSettings settings) : settings_(settings) { validate(settings_); }

Tensor Optimizer::update(const std::string& name, const Tensor& value, const Tensor& grad,
                         double lr, double weight_decay, int threads) {
  if (!is_float(value.dtype()) || (grad.dtype() != value.dtype() && grad.dtype() != DType::Float64))
    throw UnsupportedDType("parameter '" + name +
                           "': the optimizer needs a float parameter and a gradient "
                           "of the same dtype (or float64), got " +
                           std::string(dtype_name(value.dtype())) + " and " +
                           std::string(dtype_name(grad.dtype())));
  if (grad.shape() != value.shape())
    throw ShapeMismatch("parameter '" + name + "': gradient shape " + to_string(grad.shape()) +
                        " differs from the parameter's " + to_string(value.shape()));
  const bool adam = settings_.kind != OptimizerKind::SGD;
  ParameterState& st = state_[name];
  if (st.t == 0) {
    st.m = Tensor(state_dtype(value.dtype()), value.shape());
    if (adam) st.v = Tensor(state_dtype(value.dtype()), value.shape());
  } else if (st.m.shape() != value.shape() || st.m.dtype() != state_dtype(value.dtype())) {
    throw ShapeMismatch("parameter '" + name + "' changed dtype or shape between optimizer steps");
  }
  const bool first = st.t == 0;
  ++st.t;

  Tensor out = Tensor::uninitialized(value.dtype(), value.shape());  // written whole
  const double mu = settings_.momentum;
  if (!adam) {
    const bool nesterov = settings_.nesterov;
    for_each_element(out, value, grad, st.m, nullptr, threads, [&](double w, double g, double& v, double&) {
      const double gd = g + weight_decay * w;
      if (mu == 0) return w - lr * gd;
      v = first ? gd : mu * v + gd;
      return w - lr * (nesterov ? gd + mu * v : v);
    });
    return out;
  }
  const double b1 = settings_.beta1, b2 = settings_.beta2, eps = settings_.eps;
  const double t = static_cast<double>(st.t);
  const double bias1 = 1.0 - std::pow(b1, t), bias2 = 1.0 - std::pow(b2, t);
  const bool decoupled = settings_.kind == OptimizerKind::AdamW;
  for_each_element(out, value, grad, st.m, &st.v, threads, [&](double w, double g, double& m, double& v) {
    if (decoupled)
      w *= 1.0 - lr * weight_decay;
    else
      g += weight_decay * w;
    m = b1 * m + (1.0 - b1) * g;
    v = b2 * v + (1.0 - b2) * g * g;
    return w - lr * (m / bias1) / (std::sqrt(v / bias2) + eps);
  });
  return out;
}

void Optimizer::restore_state(std::map<std::string, ParameterState> state) {
  const bool adam = settings_.kind != OptimizerKind::SGD;
  for (const auto& [name, st] : state) {
    const std::string where = "optimizer state of '" + name + "': ";
    if (st.t < 1) throw InvalidAttribute(where + "step count " + std::to_string(st.t) + " < 1");
    const DType d = st.m.dtype();
    if (st.m.empty() || !(d == DType::Float32 || d == DType::Float64))
      throw InvalidAttribute(where + "the first moment must be a float32 or float64 tensor");
    if (adam != !st.v.empty())
      throw InvalidAttribute(where + (adam ? "adam and adamw need a second moment"
                                           : "sgd keeps no second moment"));
    if (adam && (st.v.dtype() != d || st.v.shape() != st.m.shape()))
      throw InvalidAttribute(where + "the second moment's dtype or shape differs from the first's");
  }
  state_ = std::move(state);
}

std::int64_t Optimizer::steps(const std::string& name) const {
  auto it = state_.find(name);
  return it == state_.end() ? 0 : it->second.t;
}

Tensor Optimizer::first_moment(const std::string& name) const {
  auto it = state_.find(name);
  return it == state_.end() ? Tensor{} : it->second.m.clone();
}

Tensor Optimizer::second_moment(const std::string& name) const {
  auto it = state_.find(name);
  return it == state_.end() || it->second.v.empty() ? Tensor{} : it->second.v.clone();
}

}  // namespace nodeflow::training
