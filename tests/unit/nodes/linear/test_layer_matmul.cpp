// MatMul (ONNX MatMul-13): a seeded sweep of batch-broadcast patterns and 1-D
// operands against a naive loop and by finite differences (each gradient
// summed over the batch axes its operand was broadcast along), the += contract
// with lda_coeff, float16/bfloat16 accumulating in float32, int64 forward.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::error_of;
using testing::make_node;
using testing::run_forward;

// Operand shapes with random batch ranks (0..2 each), broadcast 1s and 1-D
// operands; m, k, n in 1..3.
std::vector<std::pair<Shape, Shape>> broadcast_sweep() {
  std::mt19937_64 rng(23);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  std::vector<std::pair<Shape, Shape>> cases;
  for (int i = 0; i < 24; ++i) {
    const std::int64_t m = pick(1, 3), k = pick(1, 3), n = pick(1, 3);
    const std::size_t rank = static_cast<std::size_t>(pick(0, 3));
    Shape batch;
    for (std::size_t r = 0; r < rank; ++r) batch.push_back(pick(2, 3));
    auto operand = [&](std::int64_t rows, std::int64_t cols, bool vector) {
      if (vector) return Shape{cols};
      Shape s(batch.begin() + pick(0, static_cast<std::int64_t>(rank)), batch.end());  // a suffix
      for (std::int64_t& d : s)
        if (pick(0, 2) == 0) d = 1;  // broadcast along this axis
      s.push_back(rows);
      s.push_back(cols);
      return s;
    };
    const int vectors = static_cast<int>(pick(0, 5));  // 1: A 1-D, 2: B 1-D, 3: both
    Shape a = operand(m, k, vectors == 1 || vectors == 3);
    Shape b = operand(k, n, vectors == 2 || vectors == 3);
    if (b.size() == 1) b = {k};
    cases.push_back({a, b});
  }
  return cases;
}

// numpy.matmul by definition: promote, broadcast the batch, sum over k.
std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, Shape& y_shape) {
  Shape as = a.shape(), bs = b.shape();
  const bool av = as.size() == 1, bv = bs.size() == 1;
  if (av) as.insert(as.begin(), 1);
  if (bv) bs.push_back(1);
  const std::int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const Shape batch = broadcast_shapes(ab, bb);
  const auto sa = broadcast_strides(ab, batch), sb = broadcast_strides(bb, batch);
  std::vector<double> y;
  for_each_broadcast(batch, sa, sb, [&](std::int64_t, std::int64_t ia, std::int64_t ib) {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::int64_t p = 0; p < k; ++p)
          sum += a.data<double>()[(ia * m + i) * k + p] * b.data<double>()[(ib * k + p) * n + j];
        y.push_back(sum);
      }
  });
  y_shape = batch;
  if (!av) y_shape.push_back(m);
  if (!bv) y_shape.push_back(n);
  return y;
}

TEST(LayerMatMulSweep, AgreesWithNaiveLoopOverBroadcastPatterns) {
  std::mt19937_64 rng(5);
  auto node = make_node("MatMul", {});
  for (const auto& [as, bs] : broadcast_sweep()) {
    const Tensor a = testing::random_uniform(as, rng), b = testing::random_uniform(bs, rng);
    Shape want_shape;
    const std::vector<double> want = naive_matmul(a, b, want_shape);
    const Tensor y = run_forward(*node, {a, b}, 1, false).outputs[0];
    ASSERT_EQ(y.shape(), want_shape) << to_string(as) << " @ " << to_string(bs);
    testing::expect_near(as_doubles(y), want, 1e-12);
  }
}

TEST(LayerMatMulSweep, GradientsMatchFiniteDifferencesOverBroadcastPatterns) {
  std::mt19937_64 rng(9);
  for (const auto& [as, bs] : broadcast_sweep())
    for (double lda : {1.0, 0.5}) {
      auto node = make_node("MatMul", {}, true, lda);
      const testing::GradCheckResult r =
          testing::check_gradient(*node, {testing::random_uniform(as, rng), testing::random_uniform(bs, rng)});
      EXPECT_TRUE(r.ok) << to_string(as) << " @ " << to_string(bs) << " lda " << lda << "\n" << r.failures;
    }
}

// backward adds scale_for(k) times the gradient into what the buffers hold.
TEST(LayerMatMulSweep, BackwardAddsIntoPrefilledBuffers) {
  std::mt19937_64 rng(2);
  auto node = make_node("MatMul", {}, true, 0.5);
  const std::vector<Tensor> in{testing::random_uniform({2, 1, 3, 2}, rng), testing::random_uniform({3, 2, 4}, rng)};
  const testing::ForwardResult f = run_forward(*node, in, 1, true);
  const Tensor dy = testing::random_uniform(f.outputs[0].shape(), rng);
  std::vector<Tensor> fresh{Tensor(DType::Float64, in[0].shape()), Tensor(DType::Float64, in[1].shape())};
  testing::run_backward(*node, in, f, {dy}, fresh);
  std::vector<Tensor> filled{testing::random_uniform(in[0].shape(), rng), testing::random_uniform(in[1].shape(), rng)};
  const std::vector<double> before[2] = {as_doubles(filled[0]), as_doubles(filled[1])};
  testing::run_backward(*node, in, f, {dy}, filled);
  for (std::size_t k = 0; k < 2; ++k) {
    std::vector<double> want = before[k];
    const std::vector<double> g = as_doubles(fresh[k]);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += g[i];
    testing::expect_near(as_doubles(filled[k]), want, 1e-12);
  }
}

// A float16 accumulator stops at 2048 when adding ones (2049 is not a
// float16); float32 accumulation gives 3000, which float16 holds exactly.
TEST(LayerMatMulSweep, HalfPrecisionAccumulatesInFloat32) {
  auto node = make_node("MatMul", {});
  for (DType dtype : {DType::Float16, DType::BFloat16}) {
    Tensor a(DType::Float64, {1, 1, 3000});
    Tensor b(DType::Float64, {2, 3000, 1});
    for (double& v : a.values<double>()) v = 1.0;
    for (double& v : b.values<double>()) v = 1.0;
    const Tensor y = run_forward(*node, {as_dtype(a, dtype), as_dtype(b, dtype)}, 1, false).outputs[0];
    EXPECT_EQ(y.dtype(), dtype);
    EXPECT_EQ(y.shape(), (Shape{2, 1, 1}));
    // bfloat16 rounds 3000 to 2992 or 3008 (8 bits of mantissa): one rounding.
    const double want = dtype == DType::Float16 ? 3000.0 : 3008.0;
    EXPECT_EQ(as_doubles(y), (std::vector<double>{want, want})) << dtype_name(dtype);
  }
}

TEST(LayerMatMulSweep, Int64ForwardWrapsAround) {
  auto node = make_node("MatMul", {});
  const Tensor a = testing::i64({2, 1, 2}, {1, 2, -3, 4});
  const Tensor b = testing::i64({2, 3}, {5, 6, 7, -1, 0, 1});
  const Tensor y = run_forward(*node, {a, b}, 1, false).outputs[0];
  EXPECT_EQ(y.dtype(), DType::Int64);
  EXPECT_EQ(y.shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(std::vector<std::int64_t>(y.data<std::int64_t>(), y.data<std::int64_t>() + 6),
            (std::vector<std::int64_t>{3, 6, 9, -19, -18, -17}));
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const Tensor w = run_forward(*node, {testing::i64({1, 2}, {big, 1}), testing::i64({2}, {2, 2})}, 1, false).outputs[0];
  EXPECT_EQ(w.data<std::int64_t>()[0], 0);  // 2*max + 2 wraps to 0
  EXPECT_EQ(error_of<UnsupportedDType>([&] { testing::infer(*node, {{DType::Int8, {2, 2}}, {DType::Int8, {2, 2}}}); }),
            "MatMul does not take dtype int8 (input 0 (A); allowed: float32, float64, float16, bfloat16)");
  EXPECT_EQ(error_of<UnsupportedDType>([&] { testing::infer(*node, {{DType::Int64, {2, 2}}, {DType::Float32, {2, 2}}}); }),
            "input 1 (B) has dtype float32 but input 0 (A) has int64; MatMul needs one dtype");
}

}  // namespace
}  // namespace nodeflow
