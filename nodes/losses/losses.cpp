// SoftmaxCrossEntropyLoss (ONNX SoftmaxCrossEntropyLoss-13) and
// NegativeLogLikelihoodLoss (ONNX NegativeLogLikelihoodLoss-22). The cross
// entropy is the log-likelihood loss of log_softmax(scores, axis 1), computed
// with the maximum subtracted, so logits of 1e8 give finite losses.
//
// With samples j (over N and d1..dk), labels y_j, per-sample weights
// w_j = weights[y_j] (1 without weights, 0 where y_j == ignore_index) and
// loss terms l_j = -w_j * logp[j, y_j]:
//   reduction none: l (shape N x d1..dk);  sum: sum_j l_j;
//   mean: sum_j l_j / sum_j w_j (the number of counted samples without
//   weights; NaN when every sample is ignored, as in ONNX and PyTorch).
#include <optional>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/layer_ops.hpp"
#include "nodes/activations/softmax_kernels.hpp"

namespace nodeflow {
namespace {

enum class Reduction { None, Sum, Mean };

// Scores / log-probabilities as N x C x D (D = d1 * ... * dk).
struct LossView {
  std::int64_t n = 0, c = 0, d = 1;
};

struct LossNames {
  const char* op;
  const char* input;   // scores / input
  const char* labels;  // labels / target
  const char* weights;
};

constexpr LossNames kSoftmaxNames{"SoftmaxCrossEntropyLoss", "scores", "labels", "weights"};
constexpr LossNames kNllNames{"NegativeLogLikelihoodLoss", "input", "target", "weight"};

std::string dim(std::int64_t d) { return d == kDynamicDim ? "?" : std::to_string(d); }

// Checks the shapes of the three inputs and returns the output shape for `reduction`.
Shape loss_shape(const LossNames& names, const Shape& x, const Shape& labels, const Shape* weights,
                 Reduction reduction) {
  if (x.size() < 2)
    throw ShapeMismatch(std::string("input 0 (") + names.input + ") has shape " + to_string(x) + "; " +
                        names.op + " needs N x C or N x C x d1 ... dk");
  Shape want{x[0]};
  want.insert(want.end(), x.begin() + 2, x.end());
  bool ok = labels.size() == want.size();
  for (std::size_t a = 0; ok && a < want.size(); ++a)
    ok = labels[a] == want[a] || labels[a] == kDynamicDim || want[a] == kDynamicDim;
  if (!ok)
    throw ShapeMismatch(std::string("input 1 (") + names.labels + ") has shape " + to_string(labels) +
                        "; it needs the shape of input 0 " + to_string(x) + " without axis 1: " +
                        to_string(want));
  if (weights && (weights->size() != 1 ||
                  ((*weights)[0] != x[1] && (*weights)[0] != kDynamicDim && x[1] != kDynamicDim)))
    throw ShapeMismatch(std::string("input 2 (") + names.weights + ") has shape " + to_string(*weights) +
                        "; it needs [C] = [" + dim(x[1]) + "]");
  if (reduction != Reduction::None) return {};
  for (std::size_t a = 0; a < want.size(); ++a)
    if (want[a] == kDynamicDim) want[a] = labels[a];
  return want;
}

LossView loss_view(const Shape& x) {
  return {x[0], x[1], dims_product(x, 2, x.size())};
}

// Per-sample weights w_j; throws RunError for a label outside [0, C) that is not ignore_index.
template <typename T>
std::vector<T> sample_weights(const LossNames& names, LossView v, const std::int64_t* labels, const T* weights,
                              std::optional<std::int64_t> ignore_index) {
  std::vector<T> w(static_cast<std::size_t>(v.n * v.d));
  for (std::size_t j = 0; j < w.size(); ++j) {
    const std::int64_t y = labels[j];
    if (ignore_index && y == *ignore_index) continue;
    if (y < 0 || y >= v.c)
      throw RunError(std::string("input 1 (") + names.labels + "): label " + std::to_string(y) +
                     " at flat index " + std::to_string(j) + " is outside [0, " + std::to_string(v.c) +
                     ")" + (ignore_index ? " and is not ignore_index " + std::to_string(*ignore_index) : ""));
    w[j] = weights ? weights[y] : T(1);
  }
  return w;
}

// Flat index of logp[j, y_j] for sample j = (n, d).
inline std::int64_t picked(LossView v, std::int64_t j, std::int64_t label) {
  const std::int64_t n = j / v.d;
  return (n * v.c + label) * v.d + (j % v.d);
}

template <bool Softmax> class LossNode final : public Node {
 public:
  static constexpr const LossNames& kNames = Softmax ? kSoftmaxNames : kNllNames;

  explicit LossNode(NodeConfig c) : Node(std::move(c)) {
    const std::string& r = attr_string(config().attributes, "reduction");
    reduction_ = r == "none" ? Reduction::None : r == "sum" ? Reduction::Sum : Reduction::Mean;
    ignore_index_ = optional_int(config().attributes, "ignore_index");
  }

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& x = *ctx.inputs[0];
    check_float_input(kNames.op, 0, kNames.input, x.dtype);
    check_int64_input(kNames.op, 1, kNames.labels, ctx.inputs[1]->dtype);
    const TensorInfo* w = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
    if (w) check_same_dtype(kNames.op, 2, kNames.weights, w->dtype, kNames.input, x.dtype);
    const Shape y = loss_shape(kNames, x.shape, ctx.inputs[1]->shape, w ? &w->shape : nullptr, reduction_);
    std::vector<TensorInfo> out{TensorInfo{x.dtype, y}};
    if constexpr (Softmax) out.push_back(x);  // log_prob
    return out;
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor x = to_compute(ctx.inputs[0]);
    const Tensor& labels = ctx.inputs[1];
    const Tensor weights = ctx.inputs.size() > 2 ? to_compute(ctx.inputs[2]) : Tensor{};
    check_int64_input(kNames.op, 1, kNames.labels, labels.dtype());
    const Shape y_shape = loss_shape(kNames, x.shape(), labels.shape(),
                                     weights.empty() ? nullptr : &weights.shape(), reduction_);
    const LossView v = loss_view(x.shape());
    Tensor logp = x;
    Tensor y(x.dtype(), y_shape);
    visit_compute_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (Softmax) {
        logp = Tensor(x.dtype(), x.shape());
        log_softmax_forward<T>({v.n, v.c, v.d}, x.data<T>(), logp.data<T>());
      }
      const std::int64_t* lp = labels.data<std::int64_t>();
      const std::vector<T> w =
          sample_weights<T>(kNames, v, lp, weights.empty() ? nullptr : weights.data<T>(), ignore_index_);
      const T* pp = logp.data<T>();
      T* yp = y.data<T>();
      T sum = 0;
      T weight_sum = 0;
      for (std::int64_t j = 0; j < v.n * v.d; ++j) {
        const T wj = w[static_cast<std::size_t>(j)];
        const T l = wj == T(0) ? T(0) : -wj * pp[picked(v, j, lp[j])];
        if (reduction_ == Reduction::None) yp[j] = l;
        sum += l;
        weight_sum += wj;
      }
      if (reduction_ == Reduction::Sum) yp[0] = sum;
      if (reduction_ == Reduction::Mean) yp[0] = sum / weight_sum;
    });
    const DType dtype = ctx.inputs[0].dtype();
    ctx.outputs[0] = as_dtype(y, dtype);
    if constexpr (Softmax)
      if (ctx.outputs.size() > 1) ctx.outputs[1] = as_dtype(logp, dtype);
    if (ctx.saved) ctx.saved->insert(ctx.saved->end(), {logp, labels, weights, y});
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor dy = to_compute(ctx.grad_outputs[0]);
    const Tensor dlogp_out =
        Softmax && ctx.grad_outputs.size() > 1 ? to_compute(ctx.grad_outputs[1]) : Tensor{};
    if (dy.empty() && dlogp_out.empty()) return;
    require_saved(kNames.op, ctx.saved.size(), 4);
    const Tensor& logp = ctx.saved[0];
    const Tensor& labels = ctx.saved[1];
    const Tensor& weights = ctx.saved[2];
    const Tensor& y = ctx.saved[3];
    check_output_gradient(kNames.op, 0, dy, y.shape());
    check_output_gradient(kNames.op, 1, dlogp_out, logp.shape());
    const LossView v = loss_view(logp.shape());
    const bool want_x = !ctx.grad_inputs[0].empty();
    const bool want_w = ctx.grad_inputs.size() > 2 && !ctx.grad_inputs[2].empty();
    Tensor dlogp(logp.dtype(), logp.shape());
    Tensor dw = want_w ? Tensor(logp.dtype(), {v.c}) : Tensor{};
    visit_compute_dtype(logp.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const std::int64_t* lp = labels.data<std::int64_t>();
      const std::vector<T> w =
          sample_weights<T>(kNames, v, lp, weights.empty() ? nullptr : weights.data<T>(), ignore_index_);
      const T* pp = logp.data<T>();
      T* gp = dlogp.data<T>();
      if (!dy.empty()) {
        T weight_sum = 0;
        for (const T wj : w) weight_sum += wj;
        const T* g = dy.data<T>();
        // Mean: d(sum/W)/dw_c also moves the denominator, hence the "- L".
        const T mean_loss = reduction_ == Reduction::Mean ? y.data<T>()[0] : T(0);
        for (std::int64_t j = 0; j < v.n * v.d; ++j) {
          const T wj = w[static_cast<std::size_t>(j)];
          if (wj == T(0) && !want_w) continue;
          if (ignore_index_ && lp[j] == *ignore_index_) continue;
          const T c = reduction_ == Reduction::None ? g[j]
                      : reduction_ == Reduction::Sum ? g[0]
                                                     : g[0] / weight_sum;
          const std::int64_t e = picked(v, j, lp[j]);
          gp[e] -= c * wj;
          if (want_w) dw.data<T>()[lp[j]] += c * (-pp[e] - mean_loss);
        }
      }
      if (!dlogp_out.empty()) {
        const T* g = dlogp_out.data<T>();
        for (std::int64_t i = 0; i < dlogp.numel(); ++i) gp[i] += g[i];
      }
      if constexpr (Softmax) {
        if (want_x) {
          Tensor dx(logp.dtype(), logp.shape());
          log_softmax_backward<T>({v.n, v.c, v.d}, pp, gp, dx.data<T>());
          dlogp = dx;
        }
      }
    });
    if (want_x) accumulate_gradient(ctx.grad_inputs[0], dlogp, ctx.scale_for(0));
    if (want_w) accumulate_gradient(ctx.grad_inputs[2], dw, ctx.scale_for(2));
  }

 private:
  Reduction reduction_ = Reduction::Mean;
  std::optional<std::int64_t> ignore_index_;
};

template <bool Softmax> void register_loss(OpRegistry& registry) {
  const LossNames& names = LossNode<Softmax>::kNames;
  OpSchema s;
  s.op_type = names.op;
  s.definition = Softmax ? "ONNX SoftmaxCrossEntropyLoss-13" : "ONNX NegativeLogLikelihoodLoss-22";
  s.doc = Softmax ? "-log_softmax(scores) at labels (weights, ignore_index), reduced by reduction; optional log_prob"
                  : "-input[n, target[n], ...] * weight (ignore_index), reduced by reduction (none, sum, mean)";
  s.inputs = {{names.input, float_dtypes(),
               Softmax ? "N x C x d1..dk scores (logits)" : "N x C x d1..dk log-probabilities"},
              {names.labels, int64_dtypes(), "N x d1..dk class indices in [0, C)"},
              {names.weights, float_dtypes(), "optional [C] class weights; input 0's dtype"}};
  s.min_inputs = 2;
  const TensorSpec loss{Softmax ? "output" : "loss", float_dtypes(),
                        "N x d1..dk with reduction none, else a scalar"};
  if constexpr (Softmax)
    s.outputs = {loss, {"log_prob", float_dtypes(), "log_softmax(scores, axis 1), scores' shape"}};
  else
    s.outputs = {loss};
  AttrSpec ignore;
  ignore.name = "ignore_index";
  ignore.kind = AttrKind::Int;
  ignore.since_version = 12;  // both ops came in opset 12
  ignore.doc = "label value that contributes nothing (not counted by mean); absent: none";
  AttrSpec reduction;
  reduction.name = "reduction";
  reduction.kind = AttrKind::String;
  reduction.default_value = AttrValue{std::string("mean")};
  reduction.allowed = {"none", "sum", "mean"};
  reduction.since_version = 12;
  reduction.doc = "none: per-sample losses; sum; mean: sum divided by the counted samples' weight sum";
  s.attributes = {ignore, reduction};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
    return std::make_unique<LossNode<Softmax>>(std::move(c));
  };
  registry.add(std::move(s));
}

}  // namespace

void register_softmax_cross_entropy_loss(OpRegistry& registry) { register_loss<true>(registry); }
void register_negative_log_likelihood_loss(OpRegistry& registry) { register_loss<false>(registry); }

}  // namespace nodeflow
