#pragma once
// What the Conv and ConvTranspose tests share: the random inputs of a case
// and the two sweeps over a list of cases, the forward against a naive
// oracle and the gradients of X, W and B by finite differences.
//
// A case type has `x` and `w` (the shapes of X and W), `bias` (whether B is
// given), bias_length() (B's length, M), attributes() (the node's) and
// describe() (the whole parameter set, printed with a failure).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow::testing {

/// X, W and (when c.bias) B, uniform in [-1, 1] from `rng`.
template <typename Case> std::vector<Tensor> case_inputs(const Case& c, std::mt19937_64& rng) {
  std::vector<Tensor> in{random_uniform(c.x, rng), random_uniform(c.w, rng)};
  if (c.bias) in.push_back(random_uniform({c.bias_length()}, rng));
  return in;
}

/// `op`'s float64 forward of every case agrees to 1e-12 with
/// oracle(c, x, w, b), b null without a bias (inputs seeded with 7).
template <typename Case, typename Oracle>
void expect_agrees_with_oracle(const std::string& op, const std::vector<Case>& cases, Oracle&& oracle) {
  std::mt19937_64 rng(7);
  for (const Case& c : cases) {
    auto node = make_node(op, c.attributes());
    const std::vector<Tensor> in = case_inputs(c, rng);
    const Tensor y = run_forward(*node, in, 1, false).outputs[0];
    const Tensor want = oracle(c, in[0], in[1], c.bias ? &in[2] : nullptr);
    ASSERT_EQ(y.shape(), want.shape()) << c.describe();
    for (std::int64_t i = 0; i < y.numel(); ++i)
      ASSERT_NEAR(y.data<double>()[i], want.data<double>()[i], 1e-12) << c.describe() << " element " << i;
  }
}

/// The gradients of every input of `op` pass the finite-difference check for
/// every case, with lda_coeff 1 and 0.5 (inputs seeded with 11).
template <typename Case> void expect_gradients_match(const std::string& op, const std::vector<Case>& cases) {
  std::mt19937_64 rng(11);
  for (const Case& c : cases)
    for (double lda : {1.0, 0.5}) {
      auto node = make_node(op, c.attributes(), true, lda);
      const GradCheckResult r = check_gradient(*node, case_inputs(c, rng));
      EXPECT_TRUE(r.ok) << c.describe() << " lda " << lda << "\n" << r.failures;
    }
}

}  // namespace nodeflow::testing
