// ConvTranspose (ONNX ConvTranspose-22): values against a naive scatter loop
// over a seeded sweep of every attribute (1-D, 2-D, 3-D), the output size and
// pads of output_shape and auto_pad, gradients for X, W and B by finite
// differences, the X gradient as a Conv of dY with W (the exact adjoint),
// shape inference and the load-time refusals.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"
#include "nodes/common/window_axis.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"
#include "unit/nodes/conv/conv_test_sweeps.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::case_inputs;
using testing::error_of;
using testing::make_node;
using testing::run_backward;
using testing::run_forward;

using Ints = std::vector<std::int64_t>;

struct TransposeCase {
  Shape x, w;  // X [N, C, D...], W [C, M/group, k...]
  Ints strides, dilations, pads, output_padding, output_shape;
  std::int64_t group = 1;
  std::string auto_pad = "NOTSET";
  bool bias = true;

  std::size_t rank() const { return x.size() - 2; }
  std::int64_t at(const Ints& v, std::size_t a, std::int64_t fallback) const { return v.empty() ? fallback : v[a]; }
  std::int64_t out_channels() const { return w[1] * group; }
  std::int64_t bias_length() const { return out_channels(); }

  Attributes attributes() const {
    Attributes a{{"group", group}, {"auto_pad", auto_pad}};
    if (!strides.empty()) a["strides"] = strides;
    if (!dilations.empty()) a["dilations"] = dilations;
    if (!pads.empty()) a["pads"] = pads;
    if (!output_padding.empty()) a["output_padding"] = output_padding;
    if (!output_shape.empty()) a["output_shape"] = output_shape;
    return a;
  }
  std::string describe() const {
    return "x " + to_string(x) + " w " + to_string(w) + " strides " + to_string(strides) + " dilations " +
           to_string(dilations) + " pads " + to_string(pads) + " output_padding " + to_string(output_padding) +
           " output_shape " + to_string(output_shape) + " group " + std::to_string(group) + " auto_pad " +
           auto_pad + (bias ? " bias" : "");
  }

  // ONNX ConvTranspose-22's text, axis by axis: the begin pad and the output size.
  std::pair<std::int64_t, std::int64_t> pad_begin_and_size(std::size_t a) const {
    const std::int64_t s = at(strides, a, 1), d = at(dilations, a, 1), k = w[2 + a], in = x[2 + a];
    const std::int64_t full = s * (in - 1) + at(output_padding, a, 0) + (k - 1) * d + 1;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (!output_shape.empty() || same) {
      const std::int64_t size = output_shape.empty() ? in * s : output_shape[a];
      const std::int64_t total = full - size;
      return {auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2, size};
    }
    if (auto_pad == "VALID") return {0, full};
    return {at(pads, a, 0), full - at(pads, a, 0) - at(pads, rank() + a, 0)};
  }
  Shape y_shape() const {
    Shape y{x[0], out_channels()};
    for (std::size_t a = 0; a < rank(); ++a) y.push_back(pad_begin_and_size(a).second);
    return y;
  }
};

// Every input element scattered through every kernel tap onto Y.
Tensor naive_conv_transpose(const TransposeCase& c, const Tensor& x, const Tensor& w, const Tensor* b) {
  const Shape ys = c.y_shape();
  Tensor y(DType::Float64, ys);
  const auto xs = row_major_strides(c.x), wst = row_major_strides(c.w), yst = row_major_strides(ys);
  const std::int64_t channels = c.x[1], cg = channels / c.group, mg = c.w[1];
  std::int64_t in_plane = 1, taps = 1;
  for (std::size_t a = 0; a < c.rank(); ++a) {
    in_plane *= c.x[2 + a];
    taps *= c.w[2 + a];
  }
  double* yp = y.data<double>();
  for (std::int64_t n = 0; n < c.x[0]; ++n) {
    for (std::int64_t m = 0; m < c.out_channels(); ++m)
      for (std::int64_t q = 0; q < yst[0] / c.out_channels(); ++q)
        yp[n * yst[0] + m * yst[1] + q] = b ? b->data<double>()[m] : 0.0;
    for (std::int64_t ci = 0; ci < channels; ++ci)
      for (std::int64_t p = 0; p < in_plane; ++p)
        for (std::int64_t ml = 0; ml < mg; ++ml)
          for (std::int64_t t = 0; t < taps; ++t) {
            std::int64_t x_off = n * xs[0] + ci * xs[1], w_off = ci * wst[0] + ml * wst[1];
            const std::int64_t m = (ci / cg) * mg + ml;
            std::int64_t y_off = n * yst[0] + m * yst[1];
            bool inside = true;
            for (std::int64_t rp = p, rt = t, a = static_cast<std::int64_t>(c.rank()) - 1; a >= 0; --a) {
              const std::size_t ua = static_cast<std::size_t>(a);
              const std::int64_t i = rp % c.x[2 + ua], k = rt % c.w[2 + ua];
              rp /= c.x[2 + ua];
              rt /= c.w[2 + ua];
              const std::int64_t o =
                  i * c.at(c.strides, ua, 1) - c.pad_begin_and_size(ua).first + k * c.at(c.dilations, ua, 1);
              inside = inside && o >= 0 && o < ys[2 + ua];
              x_off += i * xs[2 + ua];
              w_off += k * wst[2 + ua];
              y_off += o * yst[2 + ua];
            }
            if (inside) yp[y_off] += x.data<double>()[x_off] * w.data<double>()[w_off];
          }
  }
  return y;
}

std::vector<TransposeCase> sweep() {
  std::vector<TransposeCase> cases = {
      {{2, 3, 5}, {3, 2, 3}, {2}, {}, {1, 0}, {1}, {}},                          // 1-D, stride, pads, output_padding
      {{1, 2, 5}, {2, 3, 3}, {2}, {}, {}, {1}, {9}},                              // output_shape (case of the corpus)
      {{1, 2, 5}, {2, 3, 3}, {2}, {}, {}, {}, {}, 1, "SAME_UPPER"},
      {{1, 2, 4}, {2, 1, 4}, {3}, {}, {}, {}, {}, 1, "SAME_LOWER", false},        // total pad 1 at the begin
      {{1, 2, 4, 3}, {2, 3, 2, 3}, {}, {}, {}, {}, {}},                           // 2-D defaults
      {{2, 4, 3, 3}, {4, 1, 2, 2}, {2, 2}, {2, 1}, {}, {1, 0}, {}, 2},            // group, dilation, output_padding
      {{1, 4, 3, 4}, {4, 1, 3, 3}, {2, 1}, {1, 2}, {}, {}, {}, 4, "SAME_UPPER"},  // depthwise, SAME_UPPER
      {{2, 3, 4, 5}, {3, 2, 3, 3}, {2, 1}, {}, {1, 0, 0, 1}, {}, {}},             // asymmetric pads
      {{1, 2, 3, 4}, {2, 2, 3, 2}, {2, 3}, {1, 1}, {}, {1, 2}, {6, 11}, 1, "NOTSET", false},  // output_shape 2-D
      {{1, 2, 3, 3}, {2, 2, 2, 2}, {2, 2}, {}, {}, {}, {}, 1, "VALID"},
      {{1, 2, 3, 2, 3}, {2, 1, 2, 2, 3}, {1, 2, 1}, {2, 1, 1}, {0, 1, 1, 1, 0, 2}, {1, 1, 0}, {}, 2},  // 3-D
      {{1, 3, 3, 3}, {3, 2, 1, 1}, {}, {}, {}, {}, {}, 1, "NOTSET", false},       // 1x1: no im2col
      {{1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1}, {}, {1, 1, 1, 1}, {}, {}},             // pads crop the border
  };
  // Seeded random 2-D cases over group, strides, dilations, pads and output_padding.
  std::mt19937_64 rng(19);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  for (int i = 0; i < 8; ++i) {
    TransposeCase c;
    c.group = pick(1, 2);
    c.x = {pick(1, 2), c.group * pick(1, 2), pick(1, 4), pick(1, 4)};
    c.w = {c.x[1], pick(1, 2), pick(1, 3), pick(1, 3)};
    c.strides = {pick(1, 3), pick(1, 3)};
    c.dilations = {pick(1, 2), pick(1, 2)};
    c.output_padding = {pick(0, std::max(c.strides[0], c.dilations[0]) - 1),
                        pick(0, std::max(c.strides[1], c.dilations[1]) - 1)};
    c.pads = {pick(0, 1), pick(0, 1), pick(0, 1), pick(0, 1)};
    c.bias = i % 2 == 0;
    const Shape y = c.y_shape();
    if (y[2] < 1 || y[3] < 1) continue;
    cases.push_back(c);
  }
  return cases;
}

TEST(LayerConvTranspose, AgreesWithNaiveScatterOverAttributeSweep) {
  testing::expect_agrees_with_oracle("ConvTranspose", sweep(), naive_conv_transpose);
}

TEST(LayerConvTranspose, GradientsForXWAndBMatchFiniteDifferences) {
  testing::expect_gradients_match("ConvTranspose", sweep());
}

// The X gradient is the Conv of dY with W (same strides, dilations, group and
// the pads ConvTranspose resolved), which is what makes the op Conv's adjoint.
TEST(LayerConvTranspose, XGradientIsConvOfOutputGradient) {
  std::mt19937_64 rng(5);
  for (const TransposeCase& c : sweep()) {
    // With output_padding >= stride (admitted by a larger dilation) that Conv
    // has more outputs than X has elements.
    bool wider = false;
    for (std::size_t a = 0; a < c.rank(); ++a) wider = wider || c.at(c.output_padding, a, 0) >= c.at(c.strides, a, 1);
    if (wider) continue;
    auto node = make_node("ConvTranspose", c.attributes());
    const std::vector<Tensor> in = case_inputs(c, rng);
    const testing::ForwardResult f = run_forward(*node, in, 1, true);
    const Tensor dy = testing::random_uniform(f.outputs[0].shape(), rng);
    std::vector<Tensor> grads(in.size());
    grads[0] = Tensor(DType::Float64, c.x);
    testing::run_backward(*node, in, f, {dy}, grads);
    Ints pads(2 * c.rank());
    for (std::size_t a = 0; a < c.rank(); ++a) {
      const auto [begin, size] = c.pad_begin_and_size(a);
      pads[a] = begin;
      const std::int64_t full = c.at(c.strides, a, 1) * (c.x[2 + a] - 1) + c.at(c.output_padding, a, 0) +
                                (c.w[2 + a] - 1) * c.at(c.dilations, a, 1) + 1;
      pads[c.rank() + a] = full - size - begin;
    }
    Attributes conv{{"group", c.group}, {"pads", pads}};
    if (!c.strides.empty()) conv["strides"] = c.strides;
    if (!c.dilations.empty()) conv["dilations"] = c.dilations;
    auto conv_node = make_node("Conv", conv);
    const Tensor want = run_forward(*conv_node, {dy, in[1]}, 1, false).outputs[0];
    ASSERT_EQ(want.shape(), c.x) << c.describe();
    testing::expect_near(as_doubles(grads[0]), as_doubles(want), 1e-12);
  }
}

// Split across threads by image: the same Y and dX, dW summed per part.
TEST(LayerConvTranspose, ThreadsSplitTheBatch) {
  std::mt19937_64 rng(13);
  const TransposeCase c{{5, 4, 3, 4}, {4, 3, 3, 2}, {2, 1}, {1, 2}, {1, 0, 0, 1}, {1, 0}, {}, 2};
  auto node = make_node("ConvTranspose", c.attributes());
  const std::vector<Tensor> in = case_inputs(c, rng);
  const Tensor dy = testing::random_uniform(c.y_shape(), rng);
  std::vector<std::vector<double>> results[2];
  for (int threads : {1, 3}) {
    const testing::RunSettings settings{.threads = threads};
    const testing::ForwardResult fwd = run_forward(*node, in, 1, true, settings);
    std::vector<Tensor> grads{Tensor(DType::Float64, c.x), Tensor(DType::Float64, c.w),
                              Tensor(DType::Float64, {c.out_channels()})};
    run_backward(*node, in, fwd, {dy}, grads, settings);
    auto& r = results[threads == 1 ? 0 : 1];
    r.push_back(as_doubles(fwd.outputs[0]));
    for (const Tensor& g : grads) r.push_back(as_doubles(g));
  }
  EXPECT_EQ(results[1][0], results[0][0]);  // Y
  EXPECT_EQ(results[1][1], results[0][1]);  // dX
  testing::expect_near(results[1][2], results[0][2], 1e-12);  // dW
  EXPECT_EQ(results[1][3], results[0][3]);  // dB
}

TEST(LayerConvTranspose, HalfPrecisionComputesInFloat32) {
  std::mt19937_64 rng(3);
  const TransposeCase c{{1, 4, 3, 3}, {4, 1, 2, 2}, {2, 2}, {2, 1}, {}, {1, 0}, {}, 2};
  const std::vector<Tensor> in = case_inputs(c, rng);
  auto node = make_node("ConvTranspose", c.attributes());
  const std::vector<double> want = as_doubles(run_forward(*node, in, 1, false).outputs[0]);
  for (DType dtype : {DType::Float32, DType::Float16, DType::BFloat16}) {
    std::vector<Tensor> cast;
    for (const Tensor& t : in) cast.push_back(as_dtype(t, dtype));
    const Tensor y = run_forward(*node, cast, 1, false).outputs[0];
    EXPECT_EQ(y.dtype(), dtype);
    testing::expect_near(as_doubles(y), want,
                         dtype == DType::Float32 ? 1e-5 : dtype == DType::Float16 ? 1e-2 : 6e-2);
  }
}

// The window-axis rule on its own: sizes, pads and their split.
TEST(LayerConvTranspose, TransposedAxisResolvesSizesAndPads) {
  WindowAxis axis;
  axis.kernel = 3;
  axis.stride = 2;
  axis.pad_begin = 1;
  axis.pad_end = 0;
  auto resolve = [&](std::int64_t x, std::int64_t padding, std::int64_t size, AutoPad auto_pad) {
    const WindowAxis r = resolve_transposed_axis(axis, x, padding, size, {auto_pad, false, "convolution"});
    return std::vector<std::int64_t>{r.in, r.out, r.pad_begin, r.pad_end};
  };
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(resolve(5, 1, kDynamicDim, AutoPad::NotSet), (V{11, 5, 1, 0}));  // 2*4 + 1 + 3 - 1
  EXPECT_EQ(resolve(5, 0, kDynamicDim, AutoPad::Valid), (V{11, 5, 0, 0}));
  EXPECT_EQ(resolve(5, 1, 9, AutoPad::NotSet), (V{9, 5, 2, 1}));  // P = 3: the odd one at the begin
  EXPECT_EQ(resolve(5, 1, 9, AutoPad::SameUpper), (V{9, 5, 1, 2}));
  EXPECT_EQ(resolve(5, 0, kDynamicDim, AutoPad::SameUpper), (V{10, 5, 0, 1}));  // out = 5 * 2, P = 1
  EXPECT_EQ(resolve(5, 0, kDynamicDim, AutoPad::SameLower), (V{10, 5, 1, 0}));
  EXPECT_EQ(resolve(kDynamicDim, 0, kDynamicDim, AutoPad::NotSet)[0], kDynamicDim);
  EXPECT_EQ(resolve(kDynamicDim, 0, 7, AutoPad::NotSet)[0], 7);
}

TEST(LayerConvTranspose, InfersShapesWithDynamicDimensions) {
  auto node = make_node("ConvTranspose", {{"strides", Ints{2, 2}}, {"group", std::int64_t{2}}});
  auto out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 4, 3, 5}}, {DType::Float32, {4, 3, 2, 3}},
                                    {DType::Float32, {6}}});
  EXPECT_EQ(out[0].dtype, DType::Float32);
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 6, 6, 11}));
  out = testing::infer(*node, {{DType::Float64, {2, 4, kDynamicDim, 5}}, {DType::Float64, {4, 3, 2, 3}}});
  EXPECT_EQ(out[0].shape, (Shape{2, 6, kDynamicDim, 11}));
  // output_shape gives the size even where X's is unknown.
  auto sized = make_node("ConvTranspose", {{"strides", Ints{2}}, {"output_shape", Ints{10}}});
  out = testing::infer(*sized, {{DType::Float32, {1, 2, kDynamicDim}}, {DType::Float32, {2, 3, 3}}});
  EXPECT_EQ(out[0].shape, (Shape{1, 3, 10}));
}

TEST(LayerConvTranspose, RefusesInconsistentShapesAttributesAndDtypes) {
  auto grouped = make_node("ConvTranspose", {{"group", std::int64_t{2}}});
  auto infer = [](const Node& n, Shape x, Shape w, DType dt = DType::Float32) {
    return [&n, x, w, dt] { testing::infer(n, {{dt, x}, {dt, w}}); };
  };
  EXPECT_EQ(error_of<InvalidAttribute>(infer(*grouped, {1, 3, 4, 4}, {3, 1, 3, 3})),
            "attributes.group: group 2 does not divide the 3 input channels (X [1, 3, 4, 4], W [3, 1, 3, 3])");
  EXPECT_EQ(error_of<ShapeMismatch>(infer(*grouped, {1, 4, 4, 4}, {2, 1, 3, 3})),
            "input 1 (W) has shape [2, 1, 3, 3] but X [1, 4, 4, 4] has 4 channels; ConvTranspose needs W's axis 0 = C");
  EXPECT_EQ(error_of<ShapeMismatch>(infer(*grouped, {1, 4, 5}, {4, 2, 3, 3})),
            "input 1 (W) has shape [4, 2, 3, 3] but X has shape [1, 4, 5]; W needs X's rank (C x M/group x k1 ...)");
  EXPECT_EQ(error_of<UnsupportedDType>(infer(*grouped, {1, 4, 5, 5}, {4, 2, 3, 3}, DType::Int64)),
            "ConvTranspose does not take dtype int64 (input 0 (X); allowed: float32, float64, float16, bfloat16)");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*grouped, {{DType::Float32, {1, 4, 5, 5}}, {DType::Float32, {4, 2, 3, 3}},
                                        {DType::Float32, {2}}});
            }),
            "input 2 (B) has shape [2]; ConvTranspose needs [M] = [4] (W's axis 1 times group)");
  EXPECT_EQ(error_of<InvalidAttribute>([] {
              make_node("ConvTranspose", {{"strides", Ints{2, 3}}, {"output_padding", Ints{1, 3}}});
            }),
            "attributes.output_padding: [1, 3] has 3 on axis 3, not smaller than the stride 3 or the dilation 1");
  EXPECT_EQ(error_of<InvalidAttribute>([] { make_node("ConvTranspose", {{"output_padding", Ints{1}}}); }),
            "attributes.output_padding: [1] has 1 on axis 2, not smaller than the stride 1 or the dilation 1");
  // A dilation larger than output_padding admits it (ONNX, PyTorch).
  EXPECT_NO_THROW(make_node("ConvTranspose", {{"dilations", Ints{2}}, {"output_padding", Ints{1}}}));
  EXPECT_EQ(error_of<InvalidAttribute>([] {
              make_node("ConvTranspose", {{"strides", Ints{2, 2}}, {"output_shape", Ints{9}}});
            }),
            "attributes.output_shape: has 1 spatial axes but strides has 2");
  auto k = make_node("ConvTranspose", {{"kernel_shape", Ints{3, 2}}});
  EXPECT_EQ(error_of<ShapeMismatch>(infer(*k, {1, 2, 5, 5}, {2, 4, 3, 3})),
            "attributes.kernel_shape: [3, 2] does not match the kernel of W [2, 4, 3, 3] (axis 3)");
  auto shaped = make_node("ConvTranspose", {{"output_shape", Ints{8}}});
  EXPECT_EQ(error_of<InvalidAttribute>(infer(*shaped, {1, 2, 5, 5}, {2, 4, 3, 3})),
            "attributes.output_shape: expected 2 values for 2 spatial axes of X [1, 2, 5, 5], got 1");
  // More output positions than the input reaches would need a negative padding.
  EXPECT_EQ(error_of<InvalidAttribute>(infer(*shaped, {1, 2, 5}, {2, 4, 3})),
            "attributes.output_shape: axis 2: output size 8 is larger than the 7 positions the input reaches "
            "(stride * (input - 1) + output_padding + kernel extent = 1 * 4 + 0 + 3): the padding would be negative");
  auto same = make_node("ConvTranspose", {{"strides", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}});
  EXPECT_EQ(error_of<InvalidAttribute>(infer(*same, {1, 2, 5}, {2, 4, 1})),
            "attributes.auto_pad: axis 2: output size 10 is larger than the 9 positions the input reaches "
            "(stride * (input - 1) + output_padding + kernel extent = 2 * 4 + 0 + 1): the padding would be negative");
  auto padded = make_node("ConvTranspose", {{"pads", Ints{2, 2}}});
  EXPECT_EQ(error_of<ShapeMismatch>(infer(*padded, {1, 2, 2}, {2, 4, 2})),
            "axis 2: output size -1 < 1 (input 2, stride 1, kernel extent 2, pads 2 + 2)");
  EXPECT_EQ(error_of<ShapeMismatch>(infer(*padded, {1, 2, 1}, {2, 4, 2})),
            "axis 2: output size -2 < 1 (input 1, stride 1, kernel extent 2, pads 2 + 2)");
  EXPECT_EQ(error_of<ShapeMismatch>(infer(*padded, {1, 2, 0}, {2, 4, 2})),
            "axis 2: input 0 (X) [1, 2, 0] is empty along it");
  // Sizes beyond int64 are refused, not wrapped around.
  auto strided = make_node("ConvTranspose", {{"strides", Ints{std::numeric_limits<std::int32_t>::max()}}});
  EXPECT_EQ(error_of<ShapeMismatch>(infer(*strided, {1, 2, std::numeric_limits<std::int64_t>::max() / 4}, {2, 4, 2})),
            "convolution size overflows int64");
  EXPECT_EQ(error_of<ShapeMismatch>(infer(*grouped, {1, 2, 3}, {2, std::numeric_limits<std::int64_t>::max() / 2 + 1, 2})),
            "convolution size overflows int64");
}

}  // namespace
}  // namespace nodeflow
