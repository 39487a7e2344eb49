// Optimizer steps and learning-rate schedules against PyTorch's formulas.
// No PyTorch is available here: every expected number below comes from
// tests/reference/optimizer_reference.py, which implements PyTorch's documented
// update rules (torch.optim.SGD / Adam / AdamW pseudo-code, StepLR, MultiStepLR
// and CosineAnnealingLR closed forms) with numpy in float32.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "training/lr_schedule.hpp"
#include "training/optimizer.hpp"

namespace nodeflow::training {
namespace {

using Values = std::vector<float>;

Tensor f32(const Values& v) {
  return Tensor::from<float>({static_cast<std::int64_t>(v.size())}, v);
}

const Values kW0{0.5f, -1.25f, 2.0f, 0.0f};
const std::vector<Values> kGrads{
    {0.1f, -0.2f, 0.3f, -0.4f}, {-0.05f, 0.15f, 0.25f, 0.5f}, {0.2f, 0.0f, -0.1f, 0.05f}};

// Runs the three reference steps (or those in `steps`) on one parameter "w".
Tensor run(Optimizer& opt, double lr, double weight_decay, std::vector<int> steps = {0, 1, 2}) {
  Tensor w = f32(kW0);
  for (int k : steps)
    w = opt.update("w", w, f32(kGrads[static_cast<std::size_t>(k)]), lr, weight_decay);
  return w;
}

// float32 numpy versus one double rounding per step: a few ulps apart.
void expect_close(const Tensor& got, const Values& want) {
  ASSERT_EQ(got.numel(), static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.data<float>()[i], want[i], 2e-6 + 2e-6 * std::abs(want[i])) << "element " << i;
}

OptimizerSettings sgd(double momentum = 0, bool nesterov = false) {
  OptimizerSettings s;
  s.momentum = momentum;
  s.nesterov = nesterov;
  return s;
}

OptimizerSettings adam(OptimizerKind kind = OptimizerKind::Adam) {
  OptimizerSettings s;
  s.kind = kind;
  return s;
}

TEST(OptimizerSgd, PlainStepsMatchPyTorch) {
  Optimizer opt(sgd());
  expect_close(run(opt, 0.1, 0.0), {0.4749999940395355f, -1.2450000047683716f, 1.9550000429153442f,
                                    -0.014999998733401299f});
  EXPECT_EQ(opt.steps("w"), 3);
}

TEST(OptimizerSgd, MomentumStepsAndBufferMatchPyTorch) {
  Optimizer opt(sgd(0.9));
  expect_close(run(opt, 0.1, 0.0), {0.46239998936653137f, -1.2243000268936157f, 1.8811999559402466f,
                                    0.008399998769164085f});
  expect_close(opt.first_moment("w"), {0.23600000143051147f, -0.02699998766183853f,
                                       0.36799997091293335f, 0.17600001394748688f});
}

TEST(OptimizerSgd, WeightDecayAndNesterovMatchPyTorch) {
  Optimizer momentum(sgd(0.9));
  expect_close(run(momentum, 0.1, 0.01), {0.4596303701400757f, -1.2173545360565186f,
                                          1.8701286315917969f, 0.008298037573695183f});
  Optimizer nesterov(sgd(0.9, true));
  expect_close(run(nesterov, 0.1, 0.01), {0.4372273087501526f, -1.2119778394699097f,
                                          1.8324089050292969f, -0.007671153172850609f});
}

TEST(OptimizerAdam, StepsAndMomentsMatchPyTorch) {
  Optimizer opt(adam());
  expect_close(run(opt, 0.01, 0.0), {0.4807555079460144f, -1.238416314125061f, 1.9742522239685059f,
                                     0.0066209170036017895f});
  expect_close(opt.first_moment("w"), {0.023600000888109207f, -0.0027000003028661013f,
                                       0.036799997091293335f, 0.01759999804198742f});
  const Tensor v = opt.second_moment("w");
  const Values want_v{5.2477513236226514e-05f, 6.239755020942539e-05f, 0.00016225760919041932f,
                      0.00041193017386831343f};
  for (std::size_t i = 0; i < want_v.size(); ++i)
    EXPECT_NEAR(v.data<float>()[i], want_v[i], 1e-6 * want_v[i]);
}

TEST(OptimizerAdam, L2WeightDecayDiffersFromDecoupledAdamW) {
  Optimizer l2(adam());
  expect_close(run(l2, 0.01, 0.1), {0.4752235412597656f, -1.2272523641586304f, 1.9715031385421753f,
                                    0.006596332881599665f});
  Optimizer decoupled(adam(OptimizerKind::AdamW));
  expect_close(run(decoupled, 0.01, 0.1), {0.47927966713905334f, -1.2346910238265991f,
                                           1.9682881832122803f, 0.006602555047720671f});
}

TEST(OptimizerAdam, BiasCorrectionCountsOnlyTheParametersOwnSteps) {
  // Steps 0 and 2 only: the second update uses t = 2, not the global step 3.
  Optimizer opt(adam());
  expect_close(run(opt, 0.01, 0.0, {0, 2}), {0.4803481996059418f, -1.2332993745803833f,
                                             1.9859977960586548f, 0.01572534628212452f});
  EXPECT_EQ(opt.steps("w"), 2);
  EXPECT_EQ(opt.steps("never"), 0);
  EXPECT_TRUE(opt.first_moment("never").empty());
}

TEST(OptimizerAdam, CustomBetasAndEps) {
  OptimizerSettings s = adam();
  s.beta1 = 0.8;
  s.beta2 = 0.99;
  s.eps = 1e-3;
  Optimizer opt(s);
  expect_close(run(opt, 0.05, 0.0), {0.4057301878929138f, -1.1975536346435547f, 1.8753670454025269f,
                                     0.028149913996458054f});
}

TEST(Optimizer, KeepsStatePerParameterName) {
  Optimizer opt(sgd(0.9));
  Tensor a = f32(kW0), b = f32(kW0);
  for (const Values& g : kGrads) a = opt.update("a", a, f32(g), 0.1, 0.0);
  b = opt.update("b", b, f32(kGrads[0]), 0.1, 0.0);  // b's buffer starts fresh
  EXPECT_EQ(opt.steps("a"), 3);
  EXPECT_EQ(opt.steps("b"), 1);
  expect_close(b, {0.49f, -1.23f, 1.97f, 0.04f});
}

// A parameter large enough to be shared out (2^16 elements): every thread
// count gives the same values and state, step after step, and the elements
// each step changes agree with the small reference steps above.
TEST(Optimizer, ThreadCountsGiveTheSameValues) {
  const std::int64_t n = std::int64_t{1} << 16;
  auto tiled = [&](const Values& v) {
    Values out(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = v[i % v.size()];
    return Tensor::from<float>({n}, out);
  };
  for (const OptimizerSettings& settings : {sgd(0.9, true), adam(), adam(OptimizerKind::AdamW)}) {
    std::vector<Tensor> results, moments;
    for (const int threads : {1, 2, 3}) {
      Optimizer opt(settings);
      Tensor w = tiled(kW0);
      for (const Values& g : kGrads) w = opt.update("w", w, tiled(g), 0.1, 0.01, threads);
      results.push_back(w);
      moments.push_back(opt.first_moment("w"));
    }
    for (std::size_t k = 1; k < results.size(); ++k) {
      EXPECT_TRUE(std::ranges::equal(results[k].values<float>(), results[0].values<float>())) << "run " << k;
      EXPECT_TRUE(std::ranges::equal(moments[k].values<float>(), moments[0].values<float>())) << "run " << k;
    }
    Optimizer small(settings);
    const Tensor want = [&] {
      Tensor w = f32(kW0);
      for (const Values& g : kGrads) w = small.update("w", w, f32(g), 0.1, 0.01);
      return w;
    }();
    for (std::int64_t i = 0; i < n; ++i)
      ASSERT_EQ(results[1].values<float>()[static_cast<std::size_t>(i)],
                want.values<float>()[static_cast<std::size_t>(i % 4)])
          << "element " << i;
  }
}

TEST(Optimizer, RefusesMismatchedTensorsAndBadSettings) {
  Optimizer opt(sgd());
  EXPECT_THROW(opt.update("w", f32(kW0), f32({1, 2}), 0.1, 0.0), ShapeMismatch);
  EXPECT_THROW(opt.update("w", f32(kW0), Tensor(DType::Float16, {4}), 0.1, 0.0), UnsupportedDType);
  EXPECT_THROW(opt.update("i", Tensor(DType::Int64, {4}), Tensor(DType::Int64, {4}), 0.1, 0.0),
               UnsupportedDType);
  OptimizerSettings bad = sgd(0.0, true);
  try {
    Optimizer o(bad);
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_STREQ(e.what(), "optimizer.nesterov: needs the sgd optimizer with momentum > 0");
  }
  bad = adam();
  bad.beta2 = 1.0;
  EXPECT_THROW(Optimizer{bad}, InvalidAttribute);
  bad = sgd(-0.5);
  EXPECT_THROW(Optimizer{bad}, InvalidAttribute);
}

TEST(Optimizer, Float64ParametersStepInTheirOwnDtype) {
  Optimizer opt(sgd());
  Tensor w = Tensor::from<double>({2}, {1.0, -2.0});
  w = opt.update("w", w, Tensor::from<double>({2}, {0.5, 0.25}), 0.1, 0.0);
  EXPECT_EQ(w.dtype(), DType::Float64);
  EXPECT_DOUBLE_EQ(w.data<double>()[0], 0.95);
  EXPECT_DOUBLE_EQ(w.data<double>()[1], -2.025);
}

TEST(LrSchedule, StepMultiStepAndCosineMatchPyTorchClosedForms) {
  ScheduleSettings step;
  step.kind = ScheduleKind::Step;
  step.step_size = 3;
  step.gamma = 0.5;
  const std::vector<double> want_step{0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025};
  for (std::size_t e = 0; e < want_step.size(); ++e)
    EXPECT_DOUBLE_EQ(learning_rate(step, 0.1, static_cast<std::int64_t>(e)), want_step[e])
        << "epoch " << e;

  ScheduleSettings multi;
  multi.kind = ScheduleKind::MultiStep;
  multi.milestones = {2, 5};
  const std::vector<double> want_multi{0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001};
  for (std::size_t e = 0; e < want_multi.size(); ++e)
    EXPECT_NEAR(learning_rate(multi, 0.1, static_cast<std::int64_t>(e)), want_multi[e], 1e-15)
        << "epoch " << e;

  ScheduleSettings cosine;
  cosine.kind = ScheduleKind::Cosine;
  cosine.t_max = 10;
  cosine.lr_min = 0.001;
  const std::vector<double> want_cos{0.1,
                                     0.09757729755661011,
                                     0.0905463412215599,
                                     0.07959536998847742,
                                     0.0657963412215599,
                                     0.0505,
                                     0.03520365877844011,
                                     0.021404630011522586,
                                     0.010453658778440109,
                                     0.0034227024433899004,
                                     0.001};
  for (std::size_t e = 0; e < want_cos.size(); ++e)
    EXPECT_NEAR(learning_rate(cosine, 0.1, static_cast<std::int64_t>(e)), want_cos[e], 1e-15)
        << "epoch " << e;

  EXPECT_EQ(learning_rate(ScheduleSettings{}, 0.3, 7), 0.3);
}

TEST(LrSchedule, RefusesOutOfRangeSettings) {
  ScheduleSettings s;
  s.kind = ScheduleKind::Step;
  s.step_size = 0;
  EXPECT_THROW(validate(s), InvalidAttribute);
  s.kind = ScheduleKind::MultiStep;
  s.milestones = {3, 3};
  try {
    validate(s);
    FAIL();
  } catch (const InvalidAttribute& e) {
    EXPECT_STREQ(e.what(),
                 "schedule.milestones[1]: expected strictly increasing epochs >= 1, got 3");
  }
  s.kind = ScheduleKind::Cosine;
  s.t_max = 0;
  EXPECT_THROW(validate(s), InvalidAttribute);
}

}  // namespace
}  // namespace nodeflow::training
