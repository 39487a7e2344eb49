// LeakyRelu, Elu, Selu, Celu, Gelu (none, tanh), HardSigmoid, HardSwish,
// Softplus, Softsign, Mish (ONNX opset 22): values and derivatives at the
// kinks against float64 Python (math module), the kink rules of
// docs/operators.md ("Gradient conventions"), finite differences over a
// seeded sweep, the += contract, dtypes, and finite results for large inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::make_node;
using testing::run_forward;

struct Case {
  std::string op;
  Attributes attrs;
  std::vector<double> y;      // f(x) at kX
  std::vector<double> slope;  // f'(x) at kX, the kink rules included
};

// Kinks: -3 and 3 (HardSwish), -2 and 2 (HardSigmoid alpha 0.25), 0 (the rectifiers).
const std::vector<double> kX{-4.0, -3.0, -2.5, -1.0, -0.25, 0.0, 0.5, 2.5, 3.0, 7.0};
const std::vector<double> kX2{-4.0, -3.0, -2.0, -1.0, -0.25, 0.0, 0.5, 2.0, 3.0, 7.0};

// python3: see each op's formula in nodes/activations/*.cpp; math.erf, math.expm1, math.log1p.
std::vector<Case> cases() {
  return {
    {"LeakyRelu", Attributes{{"alpha", 0.1}},
     {-0.4, -0.30000000000000004, -0.25, -0.1, -0.025, 0.0, 0.5, 2.5, 3.0, 7.0},
     {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0}},
    {"Elu", Attributes{{"alpha", 0.5}},
     {-0.4908421805556329, -0.475106465816068, -0.45895750068805063, -0.31606027941427883, -0.11059960846429756, 0.0, 0.5, 2.5, 3.0, 7.0},
     {0.00915781944436709, 0.024893534183931972, 0.0410424993119494, 0.18393972058572117, 0.38940039153570244, 0.5, 1.0, 1.0, 1.0, 1.0}},
    {"Selu", Attributes{},
     {-1.7258986335848918, -1.670568733989153, -1.6137857639177855, -1.1113307412864784, -0.38889019869375324, 0.0, 0.5253505110740662, 2.626752555370331, 3.152103066444397, 7.354907155036926},
     {0.032200712758138544, 0.08753061235387737, 0.14431358242524503, 0.6467686050565521, 1.3692091476492771, 1.7580993463430303, 1.0507010221481323, 1.0507010221481323, 1.0507010221481323, 1.0507010221481323}},
    {"Celu", Attributes{{"alpha", 2.0}},
     {-1.7293294335267746, -1.5537396797031404, -1.4269904062796197, -0.7869386805747332, -0.2350061948308092, 0.0, 0.5, 2.5, 3.0, 7.0},
     {0.1353352832366127, 0.22313016014842982, 0.2865047968601901, 0.6065306597126334, 0.8824969025845955, 1.0, 1.0, 1.0, 1.0, 1.0}},
    {"Gelu", Attributes{},
     {-0.00012668496733247991, -0.00404969409489031, -0.015524163314440398, -0.15865525393145707, -0.10032341857926907, 0.0, 0.34573123063700656, 2.4844758366855597, 2.99595030590511, 6.999999999991041},
     {-0.0005036496612264215, -0.011945647204183918, -0.03761108590814519, -0.08331547058768629, 0.30462664511636395, 0.5, 0.8674951246561629, 1.037611085908145, 1.011945647204184, 1.0000000000626632}},
    {"HardSigmoid", Attributes{{"alpha", 0.25}},
     {0, 0, 0, 0.25, 0.4375, 0.5, 0.625, 1, 1, 1},
     {0.0, 0.0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.0, 0.0}},
    {"HardSwish", Attributes{},
     {-0.0, -0.0, -0.2083333333333333, -0.33333333333333337, -0.11458333333333333, 0.0, 0.2916666666666667, 2.291666666666667, 3.0, 7.0},
     {0.0, -0.5, -0.33333333333333337, 0.16666666666666669, 0.4166666666666667, 0.5, 0.6666666666666666, 1.3333333333333335, 1.5, 1.0}},
    {"Softplus", Attributes{},
     {0.018149927917809738, 0.04858735157374206, 0.07888973429254963, 0.31326168751822286, 0.5759394198788436, 0.6931471805599453, 0.9740769841801067, 2.5788897342925496, 3.048587351573742, 7.000911466453775},
     {0.01798620996209156, 0.04742587317756678, 0.07585818002124355, 0.2689414213699951, 0.43782349911420193, 0.5, 0.6224593312018546, 0.9241418199787566, 0.9525741268224334, 0.9990889488055994}},
    {"Softsign", Attributes{},
     {-0.8, -0.75, -0.7142857142857143, -0.5, -0.2, 0.0, 0.3333333333333333, 0.7142857142857143, 0.75, 0.875},
     {0.04, 0.0625, 0.08163265306122448, 0.25, 0.64, 1.0, 0.4444444444444444, 0.08163265306122448, 0.0625, 0.015625}},
    {"Mish", Attributes{},
     {-0.07259174079202535, -0.1456474612756246, -0.19681620390653337, -0.30340146137410895, -0.129926963679141, 0.0, 0.3752452113048951, 2.471392304557881, 2.9865350049679575, 6.999988379809741},
     {-0.053773209793480325, -0.09339311453232084, -0.10974357275018566, 0.059216755877395, 0.43981560172180506, 0.6, 0.8864243753577272, 1.041129530131353, 1.0211069109294435, 1.0000215591608892}},
    {"Gelu", Attributes{{"approximate", std::string("tanh")}},
     {-7.024594819227126e-05, -0.0036373920817729943, -0.015084266089998577, -0.15880800939172324, -0.100324649298315, 0.0, 0.34571400982514394, 2.484915733910001, 2.996362607918227, 6.999999999999997},
     {-0.0003351231971221605, -0.011584166630969516, -0.03795157621266612, -0.08296408384578255, 0.30464590484893955, 0.5, 0.8673699035346424, 1.037951576212666, 1.0115841666309695, 1.0000000000000278}},

  };
}

// The slopes of one forward and backward with dy = 1 into a zero buffer.
std::vector<double> slopes(const Node& node, const Tensor& x) {
  const testing::ForwardResult f = run_forward(node, {x}, 1, true);
  std::vector<Tensor> dx{Tensor(x.dtype(), x.shape())};
  Tensor ones(DType::Float64, x.shape());
  for (double& v : ones.values<double>()) v = 1;
  testing::run_backward(node, {x}, f, {ones.cast(x.dtype())}, dx);
  return as_doubles(dx[0]);
}

TEST(Activations, ValuesAndKinkSlopesMatchPython) {
  for (const Case& c : cases()) {
    // HardSigmoid with alpha 0.25 has its kinks at -2 and 2.
    const std::vector<double>& xs = c.op == "HardSigmoid" ? kX2 : kX;
    // Celu takes float32 only.
    const bool f32 = c.op == "Celu";
    const Tensor x =
        Tensor::from<double>({2, 5}, std::span<const double>(xs)).cast(f32 ? DType::Float32 : DType::Float64);
    const double tol = f32 ? 1e-6 : 1e-14;
    auto node = make_node(c.op, c.attrs);
    testing::expect_near(as_doubles(run_forward(*node, {x}, 1, false).outputs[0]), c.y, tol);
    testing::expect_near(slopes(*node, x), c.slope, tol);
  }
}

TEST(Activations, GradientsMatchFiniteDifferencesOverASeededSweep) {
  std::mt19937_64 rng(19);
  const std::vector<Shape> shapes{{7}, {2, 3, 4}, {1, 1, 2, 3, 2}};
  std::vector<Case> all = cases();
  all.push_back({"LeakyRelu", {}, {}, {}});
  all.push_back({"Selu", {{"alpha", 1.5}, {"gamma", 2.0}}, {}, {}});
  all.push_back({"HardSigmoid", {{"alpha", 0.4}, {"beta", 0.3}}, {}, {}});
  for (const Case& c : all)
    for (std::size_t s = 0; s < shapes.size() && c.op != "Celu"; ++s) {
      // Away from the kinks: a central difference straddling one is not a derivative.
      Tensor x = testing::random_uniform(shapes[s], rng, 5.0);
      for (double& v : x.values<double>())
        for (double kink : {-3.0, 0.0, 3.0, -2.5, 2.5, -0.75, 1.75})
          if (std::abs(v - kink) < 1e-3) v += 2e-3;
      const double lda = s == 1 ? -0.5 : 1.0;
      auto node = make_node(c.op, c.attrs, true, lda);
      const testing::GradCheckResult r = testing::check_gradient(*node, {x}, {.seed = s + 1});
      EXPECT_TRUE(r.ok) << c.op << " shape " << to_string(shapes[s]) << "\n" << r.failures;
    }
}

// Celu is float32 only, which the float64 checker cannot drive: central
// differences in float32 with a step of 1e-2 (truncation error about 2e-5).
TEST(Activations, CeluGradientMatchesFloat32FiniteDifferences) {
  std::mt19937_64 rng(12);
  for (double alpha : {1.0, 2.0, 0.5}) {
    auto node = make_node("Celu", {{"alpha", alpha}});
    const Tensor x = testing::random_uniform({64}, rng, 4.0).cast(DType::Float32);
    const auto d = slopes(*node, x);
    const auto xs = as_doubles(x);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (std::abs(xs[i]) < 2e-2) continue;  // the kink
      const double h = 1e-2;
      const Tensor around = testing::f64({2}, {xs[i] - h, xs[i] + h}).cast(DType::Float32);
      const auto y = as_doubles(run_forward(*node, {around}, 1, false).outputs[0]);
      EXPECT_NEAR(d[i], (y[1] - y[0]) / (2 * h), 1e-3 + 1e-3 * std::abs(d[i])) << "x " << xs[i];
    }
  }
}

TEST(Activations, GradientAddsIntoThePrefilledBuffer) {
  auto node = make_node("LeakyRelu", {{"alpha", 0.125}}, true, 2.0);
  const std::vector<Tensor> x{testing::f64({3}, {-1.0, 0.0, 2.0})};
  const testing::ForwardResult f = run_forward(*node, x, 1, true);
  std::vector<Tensor> dx{testing::f64({3}, {10.0, 20.0, 30.0})};
  testing::run_backward(*node, x, f, {testing::f64({3}, {1.0, 1.0, 1.0})}, dx);
  EXPECT_EQ(as_doubles(dx[0]), (std::vector<double>{10.25, 20.25, 32.0}));
}

TEST(Activations, LargeInputsGiveFiniteResults) {
  const std::vector<double> big{-1e30, -800.0, -90.0, 90.0, 800.0, 1e30};
  for (DType dt : {DType::Float64, DType::Float32}) {
    const Tensor x = testing::f64({6}, {-1e30, -800.0, -90.0, 90.0, 800.0, 1e30}).cast(dt);
    for (const char* op : {"Softplus", "Mish", "Gelu", "Softsign", "HardSwish"}) {
      for (const Attributes& a : {Attributes{}, Attributes{{"approximate", std::string("tanh")}}}) {
        if (!a.empty() && std::string(op) != "Gelu") continue;
        auto node = make_node(op, a);
        const auto y = as_doubles(run_forward(*node, {x}, 1, false).outputs[0]);
        const auto d = slopes(*node, x);
        for (std::size_t i = 0; i < big.size(); ++i) {
          EXPECT_TRUE(std::isfinite(y[i])) << op << " y at " << big[i];
          EXPECT_TRUE(std::isfinite(d[i])) << op << " slope at " << big[i];
        }
        // Far right every one of them is (about) the identity, of slope 1 (Softsign: 1, 0).
        if (std::string(op) != "Softsign") {
          EXPECT_NEAR(y[4], 800.0, 1e-9) << op;
          EXPECT_NEAR(d[4], 1.0, 1e-12) << op;
        }
      }
    }
  }
}

TEST(Activations, HalfAndBfloat16ComputeInFloat32) {
  const Tensor x = testing::f64({4}, {-2.0, -0.5, 0.5, 2.0});
  for (const char* op : {"LeakyRelu", "Elu", "Selu", "Gelu", "HardSigmoid", "HardSwish", "Softplus",
                         "Softsign", "Mish"}) {
    auto node = make_node(op, {});
    const auto want = as_doubles(run_forward(*node, {x}, 1, false).outputs[0]);
    for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32}) {
      const testing::ForwardResult f = run_forward(*node, {x.cast(dt)}, 1, false);
      ASSERT_EQ(f.outputs[0].dtype(), dt);
      const double tol = dt == DType::Float16 ? 2e-3 : dt == DType::BFloat16 ? 1.6e-2 : 1e-7;
      testing::expect_near(as_doubles(f.outputs[0]), want, tol);
    }
  }
}

TEST(Activations, ShapeInferenceKeepsShapeAndDtype) {
  for (const Case& c : cases()) {
    auto node = make_node(c.op, c.attrs);
    const TensorInfo in{c.op == "Celu" ? DType::Float32 : DType::BFloat16, {kDynamicDim, 3, 5}};
    const auto out = testing::infer(*node, {in});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].dtype, in.dtype);
    EXPECT_EQ(out[0].shape, in.shape);
  }
}

TEST(Activations, DtypesOutsideOnnxsConstraintsAreRefused) {
  EXPECT_EQ(testing::error_of<UnsupportedDType>(
                [] { testing::infer(*make_node("Celu", {}), {{DType::Float64, {2, 3}}}); }),
            "Celu does not take dtype float64 (input 0 (X); allowed: float32)");
  EXPECT_EQ(testing::error_of<UnsupportedDType>([] {
              run_forward(*make_node("Celu", {}), {testing::f64({1}, {1.0})}, 1, false);
            }),
            "Celu does not take dtype float64 (input 0 (X); allowed: float32)");
  EXPECT_EQ(testing::error_of<UnsupportedDType>(
                [] { testing::infer(*make_node("Softsign", {}), {{DType::Int64, {2}}}); }),
            "Softsign does not take dtype int64 (input 0 (input); allowed: float32, float64, float16, "
            "bfloat16)");
  const OpSchema* celu = OpRegistry::global().find("Celu");
  ASSERT_NE(celu, nullptr);
  EXPECT_EQ(celu->inputs[0].dtypes, std::vector<DType>{DType::Float32});
}

TEST(Activations, AttributesAreCheckedAtLoad) {
  EXPECT_EQ(testing::error_of<InvalidAttribute>([] { make_node("Celu", {{"alpha", 0.0}}); }),
            "attributes.alpha: expected a number other than 0, got 0");
  EXPECT_NE(testing::error_of<InvalidAttribute>(
                [] { make_node("Gelu", {{"approximate", std::string("erf")}}); })
                .find("attributes.approximate"),
            std::string::npos);
  EXPECT_THROW(make_node("HardSwish", {{"alpha", 0.2}}), InvalidAttribute);
  const OpSchema* selu = OpRegistry::global().find("Selu");
  ASSERT_NE(selu, nullptr);
  ASSERT_EQ(selu->attributes.size(), 2u);
  EXPECT_EQ(std::get<double>(*selu->attributes[0].default_value), 1.67326319217681884765625);
}

TEST(Activations, LargeTensorsSplitOverThreadsGiveTheSameResult) {
  std::mt19937_64 rng(5);
  const Tensor x = testing::random_uniform({4, 64, 1024}, rng, 4.0).cast(DType::Float32);
  for (const char* op : {"Mish", "HardSwish"}) {
    auto node = make_node(op, {});
    std::vector<Tensor> y(1);
    std::vector<Tensor> saved;
    std::vector<Tensor> inputs{x};
    ForwardContext one{inputs, y, nullptr};
    node->forward(one);
    const Tensor y1 = y[0];
    ForwardContext two{inputs, y, nullptr};
    two.threads = 2;
    node->forward(two);
    EXPECT_EQ(as_doubles(y1), as_doubles(y[0])) << op;
  }
}

}  // namespace
}  // namespace nodeflow
