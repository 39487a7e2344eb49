// BatchNormalization refuses a running variance below 0 (issue 17, item 12):
// with epsilon 0 it made every output of the channel NaN. Refused at load when
// input_var is a constant initializer, else when it arrives at run time, in
// inference and in training mode alike, naming the node, the channel and the
// value.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/errors.hpp"
#include "core/executor.hpp"
#include "core/graph_builder.hpp"
#include "support/error_of.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::as_doubles;
using testing::error_of;
using testing::f64;

const Tensor kX = testing::pattern({2, 2, 1, 2}, 3, 7, 3, 2.0);

// x [2, 2, 1, 2]; scale, B, mean as trainable or constant initializers; the
// variance a constant initializer (`var` given) or a graph input (`var` empty).
GraphBuilder bn_graph(const Tensor& var) {
  GraphBuilder b("bn");
  b.add_input("x", DType::Float64, {kDynamicDim, 2, 1, 2});
  b.add_initializer("scale", f64({2}, {1.0, 1.0}), true);
  b.add_initializer("B", f64({2}, {0.0, 0.0}), true);
  b.add_initializer("mean", f64({2}, {0.0, 0.0}));
  if (var.empty())
    b.add_input("var", DType::Float64, {2});
  else
    b.add_initializer("var", var);
  return b;
}

const std::string kNegative =
    "nodes[0] (norm): input 4 (input_var): channel 1 holds -0.5; a variance cannot be below 0 "
    "(the channel's outputs would be NaN)";

TEST(LayerBatchNormalizationVariance, ConstantNegativeVarianceIsRefusedAtLoad) {
  GraphBuilder b = bn_graph(f64({2}, {1.0, -0.5}));
  EXPECT_EQ(error_of<InvalidAttribute>([&] {
              b.add_node("BatchNormalization", "norm", {"x", "scale", "B", "mean", "var"},
                         {{"epsilon", 0.0}});
            }),
            kNegative);
  // The same document through Graph's constructor (the JSON reader's path).
  GraphDef def = bn_graph(f64({2}, {1.0, -0.5})).def();
  NodeDef n;
  n.op_type = "BatchNormalization";
  n.name = "norm";
  n.inputs = {"x", "scale", "B", "mean", "var"};
  n.attributes["epsilon"] = 0.0;
  def.nodes.push_back(n);
  def.outputs = {"norm"};
  EXPECT_EQ(error_of<InvalidAttribute>([&] { Graph g(def); }), kNegative);
}

TEST(LayerBatchNormalizationVariance, NegativeVarianceFedAtRunTimeIsRefusedInBothModes) {
  GraphBuilder b = bn_graph(Tensor{});
  b.add_node("BatchNormalization", "norm", {"x", "scale", "B", "mean", "var"}, {{"epsilon", 0.0}});
  b.add_output("norm");
  const Graph g = b.build();
  const Executor ex(g);
  const TensorMap bad{{"x", kX}, {"var", f64({2}, {1.0, -0.5})}};
  EXPECT_EQ(error_of<InvalidAttribute>([&] { ex.run(bad); }), kNegative);
  EXPECT_EQ(error_of<InvalidAttribute>([&] { ex.forward(bad); }), kNegative);
  // float16 variance (a node alone: the graph's dtypes are float64) and -inf.
  auto node = testing::make_node("BatchNormalization", {});
  for (const double v : {-1e-3, -std::numeric_limits<double>::infinity()}) {
    std::vector<Tensor> in{kX.cast(DType::Float16), f64({2}, {1, 1}), f64({2}, {0, 0}), f64({2}, {0, 0}),
                           f64({2}, {v, 1.0}).cast(DType::Float16)};
    EXPECT_NE(error_of<InvalidAttribute>([&] { testing::run_forward(*node, in, 1, false); }).find("channel 0 holds -"),
              std::string::npos)
        << v;
  }
  // 0 and -0 are variances; NaN passes through as IEEE arithmetic says.
  const TensorMap zero{{"x", kX}, {"var", f64({2}, {0.0, -0.0})}};
  EXPECT_NO_THROW(ex.run(zero));
  const TensorMap nan{{"x", kX}, {"var", f64({2}, {1.0, std::numeric_limits<double>::quiet_NaN()})}};
  const std::vector<double> y = as_doubles(ex.run(nan).at("norm"));
  EXPECT_FALSE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[2]));
}

TEST(LayerBatchNormalizationVariance, TrainableVarianceIsCheckedAtRunTime) {
  // Not a constant, so the load cannot read it; the run can.
  GraphBuilder b("bn");
  b.add_input("x", DType::Float64, {2, 2, 1, 2});
  b.add_initializer("scale", f64({2}, {1.0, 1.0}), true);
  b.add_initializer("B", f64({2}, {0.0, 0.0}), true);
  b.add_initializer("mean", f64({2}, {0.0, 0.0}));
  b.add_initializer("var", f64({2}, {1.0, -0.5}), true);
  b.add_node("BatchNormalization", "norm", {"x", "scale", "B", "mean", "var"});
  b.add_output("norm");
  const Graph g = b.build();
  EXPECT_EQ(error_of<InvalidAttribute>([&] { Executor(g).run({{"x", kX}}); }), kNegative);
}

}  // namespace
}  // namespace nodeflow
