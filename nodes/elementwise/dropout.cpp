// Dropout (ONNX Dropout-22) with the toolkit's training mode.
//
// Training mode (a training-mode run of a node whose `training` is true, i.e.
// ForwardContext::saved != nullptr): each element is kept with probability
// 1 - ratio and scaled by 1 / (1 - ratio) (inverted dropout); the mask comes
// from std::mt19937_64 seeded with ForwardContext::seed (a fresh seed per node
// and run, so the mask changes every step; the optional ONNX `seed` attribute
// is mixed in and picks another stream, it does not freeze the mask). The mask
// drawn in forward is saved and used by backward. Otherwise (inference, or
// ratio 0) Dropout is the identity.
//
// ratio: input 1 (ONNX-12 and later; may be an initializer or a run-time
// scalar) or the attribute `ratio` (ONNX-10 and earlier), not both; default
// 0.5; must lie in [0, 1).
// training_mode: input 2 (ONNX-12 and later), a scalar of nodeflow's bool,
// uint8 (0 false, else true). When given, it decides as ONNX defines it: true
// drops (with the run's seed) in any run, an inference run too; false is the
// identity, a training run too. When absent, the run decides, as above
// (ONNX's default false is an inference run's mode). A node that keeps no
// state (inference runs, `training` false) passes no gradient, whatever it drew.
// The optional mask output is uint8 0/1 (nodeflow has no bool dtype); all
// ones when nothing is dropped.
#include <algorithm>
#include <random>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/layer_ops.hpp"

namespace nodeflow {
namespace {

constexpr double kDefaultRatio = 0.5;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double scalar_value(const Tensor& t) {
  double v = 0;
  visit_float_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    v = static_cast<double>(t.data<T>()[0]);
  });
  return v;
}

class DropoutNode final : public Node {
 public:
  explicit DropoutNode(NodeConfig c) : Node(std::move(c)) {
    const Attributes& a = config().attributes;
    if (const auto ratio = optional_float(a, "ratio")) {
      ratio_ = *ratio;
      ratio_attribute_ = true;
    }
    if (const auto seed = optional_int(a, "seed")) seed_mix_ = splitmix64(static_cast<std::uint64_t>(*seed));
  }

  std::vector<TensorInfo> infer(const InferContext& ctx) const override {
    const TensorInfo& data = *ctx.inputs[0];
    check_float_input("Dropout", 0, "data", data.dtype);
    if (ctx.inputs.size() > 1 && ctx.inputs[1]) {
      if (ratio_attribute_)
        throw InvalidAttribute("attributes.ratio: ratio is given both as attribute and as input 1; give one");
      const TensorInfo& r = *ctx.inputs[1];
      check_float_input("Dropout", 1, "ratio", r.dtype);
      if (!(r.shape.empty() || (r.shape.size() == 1 && (r.shape[0] == 1 || r.shape[0] == kDynamicDim))))
        throw ShapeMismatch("input 1 (ratio) has shape " + to_string(r.shape) + "; Dropout needs a scalar");
      if (const Tensor* value = ctx.constants[1]) check_ratio(scalar_value(*value), "input 1 (ratio)");
    }
    if (ctx.inputs.size() > 2 && ctx.inputs[2]) {
      const TensorInfo& m = *ctx.inputs[2];
      if (m.dtype != DType::UInt8)
        throw UnsupportedDType("input 2 (training_mode) is " + std::string(dtype_name(m.dtype)) +
                               "; Dropout needs a uint8 (nodeflow's bool) scalar");
      if (!(m.shape.empty() || (m.shape.size() == 1 && (m.shape[0] == 1 || m.shape[0] == kDynamicDim))))
        throw ShapeMismatch("input 2 (training_mode) has shape " + to_string(m.shape) + "; Dropout needs a scalar");
    }
    return {data, TensorInfo{DType::UInt8, data.shape}};
  }

  void forward(const ForwardContext& ctx) const override {
    const Tensor& x = ctx.inputs[0];
    double ratio = ratio_;
    if (ctx.inputs.size() > 1 && !ctx.inputs[1].empty()) {
      if (ctx.inputs[1].numel() != 1)
        throw ShapeMismatch("input 1 (ratio) has shape " + to_string(ctx.inputs[1].shape()) +
                            "; Dropout needs a scalar");
      ratio = scalar_value(ctx.inputs[1]);
      check_ratio(ratio, "input 1 (ratio)");
    }
    const bool want_mask = ctx.outputs.size() > 1;
    bool drop = ctx.saved != nullptr;  // the run decides, unless training_mode says
    if (ctx.inputs.size() > 2 && !ctx.inputs[2].empty()) {
      if (ctx.inputs[2].numel() != 1)
        throw ShapeMismatch("input 2 (training_mode) has shape " + to_string(ctx.inputs[2].shape()) +
                            "; Dropout needs a scalar");
      drop = ctx.inputs[2].data<std::uint8_t>()[0] != 0;
    }
    if (!drop || ratio == 0.0) {  // identity; backward passes the gradient as is
      ctx.outputs[0] = x;
      if (want_mask) {
        Tensor ones(DType::UInt8, x.shape());
        std::fill_n(ones.data<std::uint8_t>(), ones.numel(), std::uint8_t{1});
        ctx.outputs[1] = ones;
      }
      return;
    }
    Tensor mask(DType::UInt8, x.shape());
    std::uint8_t* m = mask.data<std::uint8_t>();
    std::mt19937_64 gen(ctx.seed ^ seed_mix_);
    for (std::int64_t i = 0; i < mask.numel(); ++i) {
      // 53 random bits as a uniform double in [0, 1): the same stream on every platform.
      const double u = static_cast<double>(gen() >> 11) * 0x1.0p-53;
      m[i] = u >= ratio ? 1 : 0;
    }
    const double scale = 1.0 / (1.0 - ratio);
    Tensor y(x.dtype(), x.shape());
    apply_mask(x, mask, scale, y);
    ctx.outputs[0] = y;
    if (want_mask) ctx.outputs[1] = mask;
    if (ctx.saved) ctx.saved->insert(ctx.saved->end(), {mask, Tensor::from<double>({}, {scale})});
  }

  void backward(const BackwardContext& ctx) const override {
    const Tensor& dy = ctx.grad_outputs[0];
    Tensor& dx = ctx.grad_inputs[0];
    if (dy.empty() || dx.empty()) return;
    check_output_gradient("Dropout", 0, dy, ctx.inputs[0].shape);
    if (ctx.saved.empty()) {  // forward was the identity
      accumulate_gradient(dx, dy, ctx.scale_for(0));
      return;
    }
    require_saved("Dropout", ctx.saved.size(), 2);
    Tensor masked(dy.dtype(), dy.shape());
    apply_mask(dy, ctx.saved[0], ctx.saved[1].data<double>()[0], masked);
    accumulate_gradient(dx, masked, ctx.scale_for(0));
  }

 private:
  static void check_ratio(double r, const std::string& where) {
    if (!(r >= 0.0 && r < 1.0))
      throw InvalidAttribute(where + ": expected a ratio in [0, 1), got " + to_string(AttrValue{r}));
  }

  // out = in * mask * scale.
  static void apply_mask(const Tensor& in, const Tensor& mask, double scale, Tensor& out) {
    visit_float_dtype(in.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using A = accumulator_t<T>;
      const T* ip = in.data<T>();
      const std::uint8_t* m = mask.data<std::uint8_t>();
      T* op = out.data<T>();
      const auto k = static_cast<A>(scale);
      for (std::int64_t i = 0; i < in.numel(); ++i) op[i] = m[i] ? static_cast<T>(static_cast<A>(ip[i]) * k) : T(0);
    });
  }

  double ratio_ = kDefaultRatio;
  bool ratio_attribute_ = false;
  std::uint64_t seed_mix_ = 0;
};

}  // namespace

void register_dropout(OpRegistry& registry) {
  OpSchema s;
  s.op_type = "Dropout";
  s.definition = "ONNX Dropout-22";
  s.doc = "In training, zeroes each element with probability ratio and scales the rest by 1/(1-ratio); optional mask";
  s.inputs = {{"data", float_dtypes(), "any shape"},
              {"ratio", float_dtypes(), "scalar drop probability in [0, 1); default 0.5"},
              {"training_mode", {DType::UInt8},
               "scalar bool (uint8): true drops in any run, false never; absent: the run decides"}};
  s.min_inputs = 1;
  s.outputs = {{"output", float_dtypes(), "data's shape and dtype"},
               {"mask", {DType::UInt8}, "data's shape, 1 where kept (ONNX: bool)"}};
  // The attribute form of ratio (ONNX Dropout-1 to -10) is taken next to the
  // input (Dropout-12 and later); without a default_value, so that "given
  // twice" can be told from "not given".
  AttrSpec ratio;
  ratio.name = "ratio";
  ratio.kind = AttrKind::Float;
  ratio.min_float = FloatBound{0.0, false};
  ratio.max_float = FloatBound{1.0, true};
  ratio.doc = "drop probability in [0, 1) (ONNX-10 attribute form; default 0.5; or give input 1)";
  AttrSpec seed;
  seed.name = "seed";
  seed.kind = AttrKind::Int;
  seed.since_version = 12;
  seed.doc = "mixed into the per-run seed: selects another random stream";
  s.attributes = {ratio, seed};
  s.create = [](NodeConfig c) -> std::unique_ptr<Node> { return std::make_unique<DropoutNode>(std::move(c)); };
  registry.add(std::move(s));
}

}  // namespace nodeflow
