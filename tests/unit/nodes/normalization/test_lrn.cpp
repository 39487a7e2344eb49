// LRN-13: values and gradients against PyTorch 1.13's
// torch.nn.functional.local_response_norm (the same formula as ONNX's for an
// odd size), the even-size window ONNX defines (by hand: PyTorch's differs
// there), finite-difference gradients, float16 through float32 sums, and the
// refusals. The even-size window is also checked against onnxruntime in
// tests/onnx-classic (lrn_13_even_size).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/errors.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::error_of;
using testing::expect_near;
using testing::make_node;
using testing::pattern;
using testing::run_backward;
using testing::run_forward;

Attributes lrn(std::int64_t size, double alpha, double beta, double bias) {
  return {{"size", size}, {"alpha", alpha}, {"beta", beta}, {"bias", bias}};
}

// Made with /usr/bin/python3 (torch 1.13), float64:
//   x = ((arange(30) * 7) % 11 - 5) * 0.4, shape [2, 5, 3]; w = ((arange(30) * 5) % 7 - 3) * 0.25
//   y = F.local_response_norm(x, size=3, alpha=0.3, beta=0.75, k=2.0); (y * w).sum().backward()
const std::vector<double> kTorchY = {
    -0.923977662583, 0.461894175453,  -0.441662661477, 0.865296572079,  0.230947087726, -0.610169813689,
    0.739182130067,  0.0,             -0.739182130067, 0.610169813689,  -0.230947087726, -0.865296572079,
    0.441662661477,  -0.461894175453, 0.923977662583,  0.236424291092,  -0.622332977288, 0.829777303051,
    0.0,             -0.739182130067, 0.610169813689,  -0.230947087726, -0.865296572079, 0.439277440062,
    -0.439277440062, 0.865296572079,  0.230947087726,  -0.662493992215, 0.769040000584,  0.0};
const std::vector<double> kTorchDx = {
    -0.314715436048,  0.265367086378,   -0.00742901558875, -0.228300809099,  0.421367402847,   0.0922157621928,
    -0.0656799766632, -0.440675073565,  0.133490729192,    0.0028784357365,  -0.282021924435,  0.146930940405,
    0.132018730333,   -0.131018059383,  -0.208535392027,   0.292012145248,   -0.0118797128046, -0.202958510873,
    0.440675073565,   0.0656799766632,  -0.0848585389377,  -0.422103833033,  0.217760630483,   0.00409804797731,
    -0.243703210063,  0.368398549148,   0.142676446023,    -0.106741150999,  -0.359335246666,  0.295530363866};

TEST(Lrn, ForwardAndBackwardMatchPyTorch) {
  const Tensor x = pattern({2, 5, 3}, 7, 11, 5, 2.5);
  const Tensor w = pattern({2, 5, 3}, 5, 7, 3, 4.0);
  auto node = make_node("LRN", lrn(3, 0.3, 0.75, 2.0));
  const auto fwd = run_forward(*node, {x});
  EXPECT_EQ(fwd.outputs[0].dtype(), DType::Float64);
  EXPECT_EQ(fwd.outputs[0].shape(), x.shape());
  expect_near(as_doubles(fwd.outputs[0]), kTorchY, 1e-11);
  std::vector<Tensor> grads = {Tensor(DType::Float64, x.shape())};
  run_backward(*node, {x}, fwd, {w}, grads);
  expect_near(as_doubles(grads[0]), kTorchDx, 1e-11);
}

TEST(Lrn, DefaultsAreOnnxs) {
  // alpha 1e-4, beta 0.75, bias 1: one channel, x = 10: 10 / (1 + 1e-4 * 100)^0.75.
  auto node = make_node("LRN", {{"size", std::int64_t{1}}});
  const auto y = run_forward(*node, {testing::f64({1, 1, 1}, {10.0})}).outputs[0];
  expect_near(as_doubles(y), {10.0 / std::pow(1.01, 0.75)}, 1e-14);
}

TEST(Lrn, EvenSizeTakesTheLongerHalfAfterTheChannel) {
  // size 4: channel c sums [c - 1, c + 2] (ONNX: floor((size-1)/2) before,
  // ceil((size-1)/2) after). x = 1, 2, 3, 4, 5 on channels of a [1, 5] input.
  const Tensor x = testing::f64({1, 5}, {1, 2, 3, 4, 5});
  auto node = make_node("LRN", lrn(4, 4.0, 1.0, 0.0));  // y = x / sum
  const std::vector<double> sums = {1 + 4 + 9, 1 + 4 + 9 + 16, 4 + 9 + 16 + 25, 9 + 16 + 25, 16 + 25};
  std::vector<double> want;
  for (std::size_t c = 0; c < 5; ++c) want.push_back(static_cast<double>(c + 1) / sums[c]);
  expect_near(as_doubles(run_forward(*node, {x}).outputs[0]), want, 1e-15);
}

TEST(Lrn, GradientsByFiniteDifferences) {
  std::mt19937_64 rng(24);
  for (const std::int64_t size : {1, 2, 3, 4, 5, 9}) {
    auto node = make_node("LRN", lrn(size, 0.7, 0.6, 1.5), true, 0.5);
    const auto r = testing::check_gradient(*node, {testing::random_uniform({2, 4, 2, 3}, rng, 2.0)});
    EXPECT_TRUE(r.ok) << "size " << size << "\n" << r.failures;
  }
}

TEST(Lrn, Float16SumsInFloat32) {
  // 300^2 = 90000 is past float16's largest finite value (65504): the sum of
  // squares lives in float32, so y is 300 / (1 + 90000)^0.75, not 0.
  const Tensor x = testing::f64({1, 3, 1, 1}, {300, 300, 300}).cast(DType::Float16);
  auto node = make_node("LRN", lrn(3, 1.0, 0.75, 1.0));
  const auto fwd = run_forward(*node, {x});
  EXPECT_EQ(fwd.outputs[0].dtype(), DType::Float16);
  const double edge = 300.0 / std::pow(1.0 + 2.0 * 90000 / 3, 0.75);
  const double middle = 300.0 / std::pow(1.0 + 90000, 0.75);
  expect_near(as_doubles(fwd.outputs[0]), {edge, middle, edge}, 1e-3 * edge);
  // The gradient of a float16 input, against float64 on the same values.
  auto node64 = make_node("LRN", lrn(3, 1.0, 0.75, 1.0));
  const Tensor x64 = x.cast(DType::Float64);
  const Tensor dy = testing::f64({1, 3, 1, 1}, {1.0, -0.5, 0.25});
  std::vector<Tensor> g16 = {Tensor(DType::Float16, x.shape())};
  std::vector<Tensor> g64 = {Tensor(DType::Float64, x.shape())};
  run_backward(*node, {x}, fwd, {dy.cast(DType::Float16)}, g16);
  run_backward(*node64, {x64}, run_forward(*node64, {x64}), {dy}, g64);
  const std::vector<double> want = as_doubles(g64[0]);
  const std::vector<double> got = as_doubles(g16[0]);
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 2e-3 * std::abs(want[k]) + 1e-7);
}

TEST(Lrn, Refusals) {
  EXPECT_NE(error_of<InvalidAttribute>([&] { make_node("LRN", {}); }).find("size"), std::string::npos);
  EXPECT_NE(error_of<InvalidAttribute>([&] { make_node("LRN", {{"size", std::int64_t{0}}}); }).find("size"),
            std::string::npos);
  auto node = make_node("LRN", {{"size", std::int64_t{3}}});
  EXPECT_EQ(error_of<ShapeMismatch>([&] { testing::infer(*node, {{DType::Float32, {4}}}); }),
            "LRN needs input X of rank >= 2 (N x C x D1 x ... x Dk), got [4]");
  EXPECT_NE(error_of<UnsupportedDType>([&] { testing::infer(*node, {{DType::Int64, {1, 2, 3}}}); }).find("int64"),
            std::string::npos);
}

}  // namespace
}  // namespace nodeflow
