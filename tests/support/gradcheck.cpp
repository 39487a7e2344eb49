#include "support/gradcheck.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "core/errors.hpp"
#include "core/graph.hpp"

namespace nodeflow::testing {
namespace {

Tensor random_like(const Tensor& t, std::mt19937_64& rng) {
  Tensor r(DType::Float64, t.shape());
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (double& v : r.values<double>()) v = dist(rng);
  return r;
}

// sum_k sum(w_k * y_k) over the float64 outputs.
double weighted_sum(const std::vector<Tensor>& outputs, const std::vector<Tensor>& weights) {
  double total = 0;
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (weights[k].empty()) continue;
    const auto y = outputs[k].values<double>();
    const auto w = weights[k].values<double>();
    for (std::size_t i = 0; i < y.size(); ++i) total += w[i] * y[i];
  }
  return total;
}

}  // namespace

std::unique_ptr<Node> make_node(const std::string& op_type, const Attributes& attributes,
                                bool training, double lda_coeff) {
  const OpSchema* schema = OpRegistry::global().find(op_type);
  if (!schema) throw InvalidGraph("unknown op_type '" + op_type + "'");
  return create_node(*schema,
                     NodeConfig{op_type, op_type + "_under_test", attributes, training, lda_coeff});
}

ForwardResult run_forward(const Node& node, const std::vector<Tensor>& inputs,
                          std::size_t num_outputs, bool training, const RunSettings& settings) {
  ForwardResult r;
  r.outputs.resize(num_outputs);
  ForwardContext ctx;
  ctx.inputs = inputs;
  ctx.outputs = r.outputs;
  ctx.saved = training ? &r.saved : nullptr;
  ctx.threads = settings.threads;
  ctx.max_tensor_bytes = settings.max_tensor_bytes;
  node.forward(ctx);
  return r;
}

void run_backward(const Node& node, const std::vector<Tensor>& inputs, const ForwardResult& forward,
                  const std::vector<Tensor>& grad_outputs, std::vector<Tensor>& grad_inputs,
                  const RunSettings& settings) {
  std::vector<TensorInfo> infos;
  for (const Tensor& t : inputs) infos.push_back({t.dtype(), t.shape()});
  BackwardContext ctx;
  ctx.inputs = infos;
  ctx.saved = forward.saved;
  ctx.grad_outputs = grad_outputs;
  ctx.grad_inputs = grad_inputs;
  ctx.scale = node.config().lda_coeff;
  ctx.threads = settings.threads;
  ctx.max_tensor_bytes = settings.max_tensor_bytes;
  ctx.overwrite_inputs = settings.overwrite;
  node.backward(ctx);
}

GradCheckResult check_gradient(const Node& node, const std::vector<Tensor>& inputs,
                               const GradCheckOptions& options) {
  std::mt19937_64 rng(options.seed);
  const ForwardResult base = run_forward(node, inputs, options.num_outputs, true);
  std::vector<Tensor> weights(base.outputs.size());
  for (std::size_t k = 0; k < base.outputs.size(); ++k)
    if (base.outputs[k].dtype() == DType::Float64) weights[k] = random_like(base.outputs[k], rng);

  std::vector<Tensor> grads(inputs.size()), prefill(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype() == DType::Float64 && !inputs[i].empty()) {
      prefill[i] = random_like(inputs[i], rng);
      grads[i] = prefill[i].clone();
    }
  run_backward(node, inputs, base, weights, grads);
  // The same gradients written into NaN-filled buffers the node overwrites.
  std::vector<Tensor> written(inputs.size());
  if (node.overwrites_gradients()) {
    RunSettings overwrite;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      overwrite.overwrite.push_back(!grads[i].empty());
      if (grads[i].empty()) continue;
      written[i] = Tensor(DType::Float64, inputs[i].shape());
      for (double& v : written[i].values<double>()) v = std::numeric_limits<double>::quiet_NaN();
    }
    run_backward(node, inputs, base, weights, written, overwrite);
  }

  GradCheckResult result;
  std::ostringstream failures;
  failures.precision(10);
  int reported = 0;
  const double h = options.step;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (grads[i].empty()) continue;
    Tensor x = inputs[i].clone();
    std::vector<Tensor> perturbed = inputs;
    perturbed[i] = x;
    auto xv = x.values<double>();
    for (std::size_t e = 0; e < xv.size(); ++e) {
      const double saved = xv[e];
      xv[e] = saved + h;
      const double up =
          weighted_sum(run_forward(node, perturbed, options.num_outputs, options.training).outputs, weights);
      xv[e] = saved - h;
      const double down =
          weighted_sum(run_forward(node, perturbed, options.num_outputs, options.training).outputs, weights);
      xv[e] = saved;
      const double numeric = node.config().lda_coeff * (up - down) / (2 * h);
      const double added = grads[i].values<double>()[e] - prefill[i].values<double>()[e];
      for (const bool overwritten : {false, true}) {
        if (overwritten && written[i].empty()) continue;
        const double analytic = overwritten ? written[i].values<double>()[e] : added;
        const double error = std::abs(analytic - numeric);
        result.max_error = std::max(result.max_error, error);
        if (!(error <= options.atol + options.rtol * std::abs(numeric))) {
          result.ok = false;
          if (reported++ < 8)
            failures << "input " << i << " element " << e << ": backward " << analytic
                     << (overwritten ? " (into an overwritten buffer)" : "") << ", finite differences " << numeric
                     << "\n";
        }
      }
    }
  }
  result.failures = failures.str();
  return result;
}

}  // namespace nodeflow::testing
