#include "support/layer_fixtures.hpp"

#include <cmath>
#include <random>
#include <sstream>

namespace nodeflow::testing {

Tensor pattern(Shape shape, std::int64_t mul, std::int64_t mod, std::int64_t off, double div, DType dtype) {
  Tensor t(DType::Float64, std::move(shape));
  auto v = t.values<double>();
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>((static_cast<std::int64_t>(i) * mul) % mod - off) / div;
  return dtype == DType::Float64 ? t : t.cast(dtype);
}

Tensor f64(Shape shape, std::initializer_list<double> values) {
  return Tensor::from<double>(std::move(shape), values);
}

Tensor i64(Shape shape, std::initializer_list<std::int64_t> values) {
  return Tensor::from<std::int64_t>(std::move(shape), values);
}

std::vector<double> as_doubles(const Tensor& t) {
  const Tensor d = t.cast(DType::Float64);
  const auto v = d.values<double>();
  return {v.begin(), v.end()};
}

std::vector<TensorInfo> infer(const Node& node, const std::vector<TensorInfo>& inputs,
                              const std::vector<const Tensor*>& constants, std::size_t num_outputs) {
  InferContext ctx;
  for (const TensorInfo& info : inputs) ctx.inputs.push_back(&info);
  ctx.constants = constants;
  ctx.constants.resize(inputs.size(), nullptr);
  ctx.num_outputs = num_outputs;
  return node.infer(ctx);
}

namespace {

double weighted_sum(const std::vector<Tensor>& outputs, const std::vector<std::vector<double>>& weights) {
  double total = 0;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (weights[k].empty()) continue;
    const auto y = outputs[k].values<double>();
    for (std::size_t i = 0; i < y.size(); ++i) total += weights[k][i] * y[i];
  }
  return total;
}

}  // namespace

GradCheckResult check_gradient_training(const Node& node, const std::vector<Tensor>& inputs,
                                        const GradCheckOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  const ForwardResult base = run_forward(node, inputs, options.num_outputs, true);
  std::vector<std::vector<double>> weights(base.outputs.size());
  std::vector<Tensor> grad_outputs(base.outputs.size());
  for (std::size_t k = 0; k < base.outputs.size(); ++k)
    if (base.outputs[k].dtype() == DType::Float64) {
      grad_outputs[k] = Tensor(DType::Float64, base.outputs[k].shape());
      for (double& w : grad_outputs[k].values<double>()) w = dist(rng);
      const auto w = grad_outputs[k].values<double>();
      weights[k].assign(w.begin(), w.end());
    }
  std::vector<Tensor> grads(inputs.size());
  std::vector<Tensor> prefill(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].empty() && inputs[i].dtype() == DType::Float64) {
      prefill[i] = Tensor(DType::Float64, inputs[i].shape());
      for (double& v : prefill[i].values<double>()) v = dist(rng);
      grads[i] = prefill[i].clone();
    }
  run_backward(node, inputs, base, grad_outputs, grads);

  GradCheckResult result;
  std::ostringstream failures;
  failures.precision(10);
  int reported = 0;
  const double h = options.step;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (grads[i].empty()) continue;
    std::vector<Tensor> perturbed = inputs;
    perturbed[i] = inputs[i].clone();
    auto xv = perturbed[i].values<double>();
    for (std::size_t e = 0; e < xv.size(); ++e) {
      const double x0 = xv[e];
      xv[e] = x0 + h;
      const double up = weighted_sum(run_forward(node, perturbed, options.num_outputs, true).outputs, weights);
      xv[e] = x0 - h;
      const double down = weighted_sum(run_forward(node, perturbed, options.num_outputs, true).outputs, weights);
      xv[e] = x0;
      const double numeric = node.config().lda_coeff * (up - down) / (2 * h);
      const double analytic = grads[i].values<double>()[e] - prefill[i].values<double>()[e];
      const double error = std::abs(analytic - numeric);
      result.max_error = std::max(result.max_error, error);
      if (!(error <= options.atol + options.rtol * std::abs(numeric))) {
        result.ok = false;
        if (reported++ < 8)
          failures << "input " << i << " element " << e << ": backward " << analytic << ", finite differences "
                   << numeric << "\n";
      }
    }
  }
  result.failures = failures.str();
  return result;
}

}  // namespace nodeflow::testing
