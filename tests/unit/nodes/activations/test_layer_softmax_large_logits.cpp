// LogSoftmax, Softmax and SoftmaxCrossEntropyLoss on equal logits far from 0
// (issue 17, item 11; docs/graph-format.md, "Operators": logits of 1e8 give finite, correct
// losses). Two equal logits v have, for any v, the exact answers
//   log_softmax = [-log 2, -log 2], softmax = [0.5, 0.5],
//   cross entropy with label 1 = log 2, its gradient softmax - onehot = [0.5, -0.5],
// and log 2 = 0.6931471805599453 (Python's math.log(2), float64). Computing
// x - (max + log(sum)) rounds log 2 away against a large max: [0, 0] at 1e8 in
// float32, a relative error of 3e-4 at 3e4.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::i64;
using testing::make_node;
using testing::run_backward;
using testing::run_forward;

constexpr double kLog2 = 0.6931471805599453;

struct LogitCase {
  DType dtype;
  double logit;
  double tolerance;  ///< half a unit in the last place of the dtype near log 2, and a bit
};

// float16/bfloat16 compute in float32 and round the result to their own dtype;
// 6e4 (near float16's largest) gives -0.6914 on main, 1.7e-3 off.
const std::vector<LogitCase> kCases{
    {DType::Float32, 1e8, 1e-7},  {DType::Float32, 3e4, 1e-7},   {DType::Float64, 1e17, 1e-15},
    {DType::Float64, 3e12, 1e-15}, {DType::Float16, 6e4, 3e-4},   {DType::BFloat16, 1e8, 2.5e-3},
    {DType::BFloat16, 3e4, 2.5e-3}};

std::string label(const LogitCase& c) {
  std::ostringstream text;
  text << dtype_name(c.dtype) << " logits " << c.logit;
  return text.str();
}

Tensor logits(const LogitCase& c, Shape shape = {1, 2}) {
  const Tensor t = Tensor::from<double>(shape, {c.logit, c.logit});
  return t.cast(c.dtype);
}

void expect_all_near(const Tensor& t, const std::vector<double>& want, const LogitCase& c, const char* what) {
  const std::vector<double> got = as_doubles(t);
  ASSERT_EQ(got.size(), want.size()) << what << ", " << label(c);
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], c.tolerance) << what << "[" << i << "], " << label(c);
}

TEST(LayerSoftmaxLargeLogits, LogSoftmaxForwardAndBackward) {
  for (const LogitCase& c : kCases) {
    auto node = make_node("LogSoftmax", {});
    const std::vector<Tensor> in{logits(c, {2})};
    const testing::ForwardResult f = run_forward(*node, in, 1, true);
    expect_all_near(f.outputs[0], {-kLog2, -kLog2}, c, "log_softmax");
    // dx = dy - softmax * sum(dy): dy = [1, 0] gives [0.5, -0.5].
    std::vector<Tensor> grads{Tensor(c.dtype, {2})};
    run_backward(*node, in, f, {Tensor::from<double>({2}, {1.0, 0.0}).cast(c.dtype)}, grads);
    expect_all_near(grads[0], {0.5, -0.5}, c, "d log_softmax");
  }
}

TEST(LayerSoftmaxLargeLogits, SoftmaxForwardAndBackward) {
  for (const LogitCase& c : kCases) {
    auto node = make_node("Softmax", {});
    const std::vector<Tensor> in{logits(c, {2})};
    const testing::ForwardResult f = run_forward(*node, in, 1, true);
    expect_all_near(f.outputs[0], {0.5, 0.5}, c, "softmax");
    // dx = y * (dy - sum(dy * y)): dy = [1, 0] gives [0.25, -0.25].
    std::vector<Tensor> grads{Tensor(c.dtype, {2})};
    run_backward(*node, in, f, {Tensor::from<double>({2}, {1.0, 0.0}).cast(c.dtype)}, grads);
    expect_all_near(grads[0], {0.25, -0.25}, c, "d softmax");
  }
}

TEST(LayerSoftmaxLargeLogits, SoftmaxCrossEntropyLossForwardAndBackward) {
  for (const char* reduction : {"mean", "sum", "none"})
    for (const LogitCase& c : kCases) {
      auto node = make_node("SoftmaxCrossEntropyLoss", {{"reduction", std::string(reduction)}});
      const std::vector<Tensor> in{logits(c), i64({1}, {1})};
      const testing::ForwardResult f = run_forward(*node, in, 2, true);
      expect_all_near(f.outputs[0], {kLog2}, c, reduction);
      expect_all_near(f.outputs[1], {-kLog2, -kLog2}, c, "log_prob");
      const Tensor seed = Tensor::from<double>(f.outputs[0].shape(), {1.0}).cast(c.dtype);
      std::vector<Tensor> grads{Tensor(c.dtype, {1, 2}), Tensor{}};
      run_backward(*node, in, f, {seed}, grads);
      expect_all_near(grads[0], {0.5, -0.5}, c, "d loss");
    }
}

}  // namespace
}  // namespace nodeflow
