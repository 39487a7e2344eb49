// Conv (ONNX Conv-22; its output-size rule is test_window_axis.cpp's): values
// against a naive numpy loop,
// a seeded sweep against a naive N-D oracle, shape inference, errors, and
// gradients for X, W and B by finite differences over every attribute.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "core/errors.hpp"
#include "nodes/conv/conv_geometry.hpp"
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
using testing::pattern;
using testing::run_backward;
using testing::run_forward;

using Ints = std::vector<std::int64_t>;

// numpy reference (naive loop over n, m, oh, ow, c, kh, kw on a zero-padded X):
//   X = ((arange(120)*37) % 23 - 11) / 8 reshaped (1,4,5,6)
//   W = ((arange(72)*13) % 17 - 8) / 16 reshaped (6,2,3,2); B = (arange(6) - 2) / 4
//   group 2, dilations (2,1), strides (1,2), pads (1,0,2,1)
//   Y[n,m,oh,ow] = B[m] + sum W[m,c,kh,kw] * Xp[n, g*2+c, oh + 2*kh, 2*ow + kw], g = m // 3
const std::vector<double> kNumpyConvY = {
    -1.4765625, 1.0390625, -0.21875,    -0.890625,  -0.6484375, 0.671875,   -0.046875,  -2.0,
    -0.1796875, 0.0234375, 0.046875,    -0.6484375, -1.0390625, -0.53125,   -0.203125,  1.15625,
    -0.140625,  -0.359375, -0.2734375,  -0.515625,  0.5,        0.4375,     -0.34375,   -1.84375,
    0.59375,    -0.2421875, -0.71875,   -0.1171875, 0.1015625,  1.3984375,  1.2265625,  -0.359375,
    -0.1484375, -0.4765625, 0.9921875,  -1.3125,    0.734375,   -0.1875,    0.8671875,  -1.5546875,
    0.8984375,  1.5546875, -0.7265625,  -0.1875,    -0.7265625, 1.7890625,  1.609375,   -0.7265625,
    0.0546875,  1.2578125, 1.3828125,   0.2265625,  1.015625,   0.0078125,  1.6484375,  1.2578125,
    -0.2109375, 0.296875,  -0.8125,     1.4921875,  0.0390625,  0.9765625,  0.8359375,  1.34375,
    1.796875,   0.453125,  0.703125,    0.046875,   1.3671875,  0.53125,    -0.84375,   0.65625};

Attributes numpy_case_attributes() {
  return {{"group", std::int64_t{2}}, {"dilations", Ints{2, 1}}, {"strides", Ints{1, 2}}, {"pads", Ints{1, 0, 2, 1}}};
}

std::vector<Tensor> numpy_case_inputs(DType dtype) {
  return {pattern({1, 4, 5, 6}, 37, 23, 11, 8.0, dtype), pattern({6, 2, 3, 2}, 13, 17, 8, 16.0, dtype),
          pattern({6}, 1, 100, 2, 4.0, dtype)};
}

TEST(LayerConv, GroupedDilatedStridedPaddedMatchesNumpyLoop) {
  auto node = make_node("Conv", numpy_case_attributes());
  for (DType dtype : {DType::Float64, DType::Float32}) {
    const Tensor y = run_forward(*node, numpy_case_inputs(dtype), 1, false).outputs[0];
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_EQ(y.shape(), (Shape{1, 6, 4, 3}));
    // Dyadic inputs: every partial sum is exact in float32 and float64.
    EXPECT_EQ(as_doubles(y), kNumpyConvY) << dtype_name(dtype);
  }
  // float16 and bfloat16 compute in float32 and round once at the end.
  for (DType dtype : {DType::Float16, DType::BFloat16}) {
    const Tensor y = run_forward(*node, numpy_case_inputs(dtype), 1, false).outputs[0];
    EXPECT_EQ(y.dtype(), dtype);
    const std::vector<double> got = as_doubles(y);
    for (std::size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], kNumpyConvY[i], dtype == DType::Float16 ? 2e-3 : 1.6e-2) << dtype_name(dtype) << " " << i;
  }
}

// The oracle: direct N-D loops over outputs, input channels and kernel taps.
struct ConvCase {
  Shape x, w;
  Ints strides, dilations, pads;
  std::int64_t group = 1;
  std::string auto_pad = "NOTSET";
  bool bias = true;

  std::int64_t bias_length() const { return w[0]; }
  Attributes attributes() const {
    Attributes a{{"group", group}, {"auto_pad", auto_pad}};
    if (!strides.empty()) a["strides"] = strides;
    if (!dilations.empty()) a["dilations"] = dilations;
    if (!pads.empty()) a["pads"] = pads;
    return a;
  }
  std::string describe() const {
    return "x " + to_string(x) + " w " + to_string(w) + " strides " + to_string(strides) + " dilations " +
           to_string(dilations) + " pads " + to_string(pads) + " group " + std::to_string(group) + " auto_pad " +
           auto_pad + (bias ? " bias" : "");
  }
};

Tensor naive_conv(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor* b) {
  ConvAttributes attrs = parse_conv_attributes(
      checked_attributes("Conv", conv_attribute_specs(), c.attributes(), check_conv_attributes));
  const ConvGeometry g = conv_geometry(attrs, x.shape(), w.shape());
  Tensor y(DType::Float64, g.output_shape());
  const std::size_t rank = g.axes.size();
  const auto xs = row_major_strides(x.shape());
  const auto ws = row_major_strides(w.shape());
  const std::int64_t cg = g.in_channels / g.group;
  const std::int64_t mg = g.out_channels / g.group;
  const std::int64_t out_plane = g.output_plane();
  const std::int64_t taps = g.kernel_size();
  double* yp = y.data<double>();
  for (std::int64_t n = 0; n < g.batch; ++n)
    for (std::int64_t m = 0; m < g.out_channels; ++m)
      for (std::int64_t p = 0; p < out_plane; ++p) {
        Ints o(rank);
        for (std::int64_t r = p, a = static_cast<std::int64_t>(rank) - 1; a >= 0; --a) {
          o[a] = r % g.axes[a].out;
          r /= g.axes[a].out;
        }
        double sum = b ? b->data<double>()[m] : 0.0;
        for (std::int64_t ci = 0; ci < cg; ++ci)
          for (std::int64_t t = 0; t < taps; ++t) {
            std::int64_t x_off = n * xs[0] + ((m / mg) * cg + ci) * xs[1];
            std::int64_t w_off = m * ws[0] + ci * ws[1];
            bool inside = true;
            for (std::int64_t r = t, a = static_cast<std::int64_t>(rank) - 1; a >= 0; --a) {
              const std::int64_t k = r % g.axes[a].kernel;
              r /= g.axes[a].kernel;
              const std::int64_t pos = o[a] * g.axes[a].stride - g.axes[a].pad_begin + k * g.axes[a].dilation;
              inside = inside && pos >= 0 && pos < g.axes[a].in;
              x_off += pos * xs[2 + a];
              w_off += k * ws[2 + a];
            }
            if (inside) sum += x.data<double>()[x_off] * w.data<double>()[w_off];
          }
        yp[(n * g.out_channels + m) * out_plane + p] = sum;
      }
  return y;
}

std::vector<ConvCase> gradient_cases() {
  return {
      {{2, 3, 7}, {4, 3, 3}, {2}, {1}, {1, 0}},                            // 1-D, stride, pads
      {{1, 2, 5, 4}, {3, 2, 2, 3}, {}, {}, {}},                            // 2-D defaults
      {{2, 4, 5, 6}, {6, 2, 3, 2}, {1, 2}, {2, 1}, {1, 0, 2, 1}, 2},       // groups, dilations, pads
      {{1, 4, 6, 5}, {4, 1, 3, 3}, {2, 1}, {1, 2}, {}, 4, "SAME_UPPER"},   // depthwise, SAME_UPPER
      {{1, 2, 6, 5}, {2, 2, 2, 3}, {2, 2}, {}, {}, 1, "SAME_LOWER", false},
      {{2, 2, 7, 5}, {3, 2, 3, 2}, {2, 1}, {1, 1}, {}, 1, "VALID"},
      {{1, 2, 4, 3, 5}, {2, 1, 2, 2, 3}, {1, 2, 1}, {2, 1, 1}, {0, 1, 1, 1, 0, 2}, 2},  // 3-D
      {{1, 3, 4, 4}, {2, 3, 1, 1}, {}, {}, {}, 1, "NOTSET", false},        // 1x1: no im2col
      {{1, 1, 3, 3}, {1, 1, 2, 2}, {}, {}, {3, 3, 3, 3}},                  // pads wider than the kernel
  };
}

TEST(LayerConv, AgreesWithNaiveOracleOverAttributeSweep) {
  testing::expect_agrees_with_oracle("Conv", gradient_cases(), naive_conv);
}

TEST(LayerConv, GradientsForXWAndBMatchFiniteDifferences) {
  testing::expect_gradients_match("Conv", gradient_cases());
}

// The batch is cut into chunks of images (as many as fit a work buffer of
// max_tensor_bytes, capped) shared out over the threads. For one chunk size
// Y, dX and dB are the same bit for bit whatever the thread count, dW (summed
// per thread) to rounding; other chunk sizes round differently, and all agree
// with the naive oracle.
TEST(LayerConv, ChunksAndThreadsGiveTheSameValues) {
  std::mt19937_64 rng(17);
  const std::vector<ConvCase> cases = {
      {{7, 4, 6, 5}, {6, 2, 3, 2}, {1, 2}, {2, 1}, {1, 0, 2, 1}, 2},  // groups, dilations, pads
      {{5, 3, 9}, {4, 3, 3}, {2}, {1}, {1, 0}},                        // 1-D
      {{6, 3, 4, 4}, {2, 3, 1, 1}, {}, {}, {}},                        // 1x1: x is its own columns
  };
  for (const ConvCase& c : cases) {
    auto node = make_node("Conv", c.attributes(), true);
    const std::vector<Tensor> in = case_inputs(c, rng);
    const Tensor want = naive_conv(c, in[0], in[1], c.bias ? &in[2] : nullptr);
    const Tensor dy = testing::random_uniform(want.shape(), rng);
    // One image's columns or output rows, in bytes: max(R, M/group) * P * 8.
    std::int64_t kernel = 1, plane = 1;
    for (std::size_t a = 2; a < c.w.size(); ++a) kernel *= c.w[a];
    for (std::size_t a = 2; a < want.shape().size(); ++a) plane *= want.shape()[a];
    const std::int64_t group = c.x[1] / c.w[1];
    const std::uint64_t image = static_cast<std::uint64_t>(std::max(c.w[1] * kernel, c.w[0] / group) * plane * 8);
    std::vector<std::vector<double>> reference;  // the first chunk size's, one thread
    for (const std::uint64_t limit : {kDefaultMaxTensorBytes, image, 2 * image, 3 * image}) {
      std::vector<std::vector<double>> first;
      for (const int threads : {1, 2, 3}) {
        const std::string at = c.describe() + " limit " + std::to_string(limit) + " threads " + std::to_string(threads);
        const testing::RunSettings settings{threads, limit};
        const testing::ForwardResult fwd = run_forward(*node, in, 1, true, settings);
        std::vector<Tensor> grads{Tensor(DType::Float64, c.x), Tensor(DType::Float64, c.w),
                                  Tensor(DType::Float64, {c.bias_length()})};
        run_backward(*node, in, fwd, {dy}, grads, settings);
        std::vector<std::vector<double>> got{as_doubles(fwd.outputs[0])};
        for (const Tensor& g : grads) got.push_back(as_doubles(g));
        if (first.empty()) {
          first = got;
          testing::expect_near(got[0], as_doubles(want), 1e-12);
          if (!reference.empty())
            for (std::size_t k = 1; k < got.size(); ++k) testing::expect_near(got[k], reference[k], 1e-12);
          else
            reference = got;
          continue;
        }
        EXPECT_EQ(got[0], first[0]) << at;  // Y
        EXPECT_EQ(got[1], first[1]) << at;  // dX
        testing::expect_near(got[2], first[2], 1e-12);  // dW
        EXPECT_EQ(got[3], first[3]) << at;  // dB
      }
    }
  }
}

// With W and B marked as the node's parameters, lda_coeff scales dX only.
TEST(LayerConv, LdaCoeffLeavesParameterGradientsUnscaled) {
  std::mt19937_64 rng(3);
  const ConvCase c{{1, 2, 4, 4}, {2, 2, 3, 3}, {}, {}, {1, 1, 1, 1}};
  const std::vector<Tensor> in = case_inputs(c, rng);
  std::vector<std::vector<double>> grads[2];
  for (int run = 0; run < 2; ++run) {
    auto node = make_node("Conv", c.attributes(), true, run == 0 ? 1.0 : 0.25);
    const testing::ForwardResult f = run_forward(*node, in, 1, true);
    std::vector<Tensor> dx{Tensor(DType::Float64, c.x), Tensor(DType::Float64, c.w), Tensor(DType::Float64, {2})};
    std::vector<TensorInfo> infos;
    for (const Tensor& t : in) infos.push_back({t.dtype(), t.shape()});
    const std::vector<Tensor> dy{pattern(f.outputs[0].shape(), 5, 7, 3, 2.0)};
    const std::vector<std::uint8_t> parameters{0, 1, 1};
    BackwardContext ctx{infos, f.saved, dy, dx, node->config().lda_coeff, parameters};
    node->backward(ctx);
    for (const Tensor& t : dx) grads[run].push_back(as_doubles(t));
  }
  for (std::size_t i = 0; i < grads[0][0].size(); ++i) EXPECT_DOUBLE_EQ(grads[1][0][i], 0.25 * grads[0][0][i]);
  EXPECT_EQ(grads[1][1], grads[0][1]);
  EXPECT_EQ(grads[1][2], grads[0][2]);
}

TEST(LayerConv, InfersShapesWithDynamicDimensions) {
  auto node = make_node("Conv", numpy_case_attributes());
  auto out = testing::infer(*node, {{DType::Float32, {kDynamicDim, 4, 5, 6}}, {DType::Float32, {6, 2, 3, 2}},
                                    {DType::Float32, {6}}});
  EXPECT_EQ(out[0].dtype, DType::Float32);
  EXPECT_EQ(out[0].shape, (Shape{kDynamicDim, 6, 4, 3}));
  out = testing::infer(*node, {{DType::Float64, {2, 4, kDynamicDim, 6}}, {DType::Float64, {6, 2, 3, 2}}});
  EXPECT_EQ(out[0].shape, (Shape{2, 6, kDynamicDim, 3}));
  // kernel_shape may stand in for a dynamic kernel of W.
  auto sized = make_node("Conv", {{"kernel_shape", Ints{3, 3}}, {"auto_pad", std::string("SAME_UPPER")}});
  out = testing::infer(*sized, {{DType::Float32, {1, 2, 9, 8}}, {DType::Float32, {5, 2, kDynamicDim, 3}}});
  EXPECT_EQ(out[0].shape, (Shape{1, 5, 9, 8}));
}

TEST(LayerConv, RefusesInconsistentShapesAttributesAndDtypes) {
  auto node = make_node("Conv", {{"group", std::int64_t{2}}});
  auto infer = [&](Shape x, Shape w, DType dt = DType::Float32) {
    return [&node, x, w, dt] { testing::infer(*node, {{dt, x}, {dt, w}}); };
  };
  EXPECT_EQ(error_of<ShapeMismatch>(infer({1, 4, 5, 5}, {3, 2, 3, 3})),
            "input 1 (W) has 3 output channels (axis 0 of [3, 2, 3, 3]), not divisible by group 2");
  EXPECT_EQ(error_of<ShapeMismatch>(infer({1, 6, 5, 5}, {4, 2, 3, 3})),
            "input 0 (X) has 6 channels but W [4, 2, 3, 3] with group 2 needs 4 (W axis 1 times group)");
  EXPECT_EQ(error_of<ShapeMismatch>(infer({1, 4, 5}, {4, 2, 3, 3})),
            "input 1 (W) has shape [4, 2, 3, 3] but X has shape [1, 4, 5]; W needs X's rank (M x C/group x k1 ...)");
  EXPECT_EQ(error_of<ShapeMismatch>(infer({1, 4, 2, 5}, {4, 2, 3, 3})),
            "axis 2: kernel extent 3 (kernel 3, dilation 1) is larger than the padded input 2 (input 2, pads 0 + 0)");
  // An output size of -1 is refused like any other < 1 (it is not a dynamic dimension).
  EXPECT_EQ(error_of<ShapeMismatch>(infer({1, 4, 3, 5}, {4, 2, 5, 3})),
            "axis 2: kernel extent 5 (kernel 5, dilation 1) is larger than the padded input 3 (input 3, pads 0 + 0)");
  EXPECT_EQ(error_of<UnsupportedDType>(infer({1, 4, 5, 5}, {4, 2, 3, 3}, DType::Int8)),
            "Conv does not take dtype int8 (input 0 (X); allowed: float32, float64, float16, bfloat16)");
  EXPECT_EQ(error_of<UnsupportedDType>([&] {
              testing::infer(*node, {{DType::Float32, {1, 4, 5, 5}}, {DType::Float64, {4, 2, 3, 3}}});
            }),
            "input 1 (W) has dtype float64 but input 0 (X) has float32; Conv needs one dtype");
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*node, {{DType::Float32, {1, 4, 5, 5}}, {DType::Float32, {4, 2, 3, 3}},
                                     {DType::Float32, {2}}});
            }),
            "input 2 (B) has shape [2]; Conv needs [M] = [4] (W's axis 0)");
  EXPECT_EQ(error_of<InvalidAttribute>([] {
              make_node("Conv", {{"pads", Ints{1, 1, 1, 1}}, {"auto_pad", std::string("VALID")}});
            }),
            "attributes.pads: pads [1, 1, 1, 1] cannot be combined with auto_pad VALID (use auto_pad NOTSET)");
  EXPECT_EQ(error_of<InvalidAttribute>([] { make_node("Conv", {{"strides", Ints{1, 1}}, {"dilations", Ints{1}}}); }),
            "attributes.dilations: has 1 spatial axes but strides has 2");
  // Sizes beyond int64 are refused, not wrapped around (before the shared
  // window module, Conv's padded input overflowed here).
  auto padded = make_node("Conv", {{"pads", Ints{4, 0, 4, 0}}});
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              const std::int64_t huge = std::numeric_limits<std::int64_t>::max() - 3;
              testing::infer(*padded, {{DType::Float32, {1, 2, huge, 5}}, {DType::Float32, {4, 2, 3, 3}}});
            }),
            "convolution size overflows int64");
  auto k = make_node("Conv", {{"kernel_shape", Ints{3, 2}}});
  EXPECT_EQ(error_of<ShapeMismatch>([&] {
              testing::infer(*k, {{DType::Float32, {1, 2, 5, 5}}, {DType::Float32, {4, 2, 3, 3}}});
            }),
            "attributes.kernel_shape: [3, 2] does not match the kernel of W [4, 2, 3, 3] (axis 3)");
  EXPECT_EQ(error_of<InvalidAttribute>([&] {
              testing::infer(*k, {{DType::Float32, {1, 2, 5, 5, 5}}, {DType::Float32, {4, 2, 3, 2, 1}}});
            }),
            "attributes.kernel_shape: expected 3 values for 3 spatial axes of X [1, 2, 5, 5, 5], got 2");
}

}  // namespace
}  // namespace nodeflow
