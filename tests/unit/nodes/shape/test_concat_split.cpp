// Concat (ONNX Concat-13) and Split (Split-18): output shapes with dynamic
// dimensions, values against slices computed by hand over a seeded sweep
// (one and two threads, every way of giving Split's lengths), load-time
// refusals naming the node and input, and gradients (Split's with absent
// output gradients).
#include <gtest/gtest.h>

#include <random>

#include "core/errors.hpp"
#include "core/graph_builder.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"
#include "support/graph_parts.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using testing::error_of;
using testing::i64;
using testing::make_node;

Attributes axis_attr(std::int64_t axis) { return {{"axis", axis}}; }

std::vector<Tensor> run(const Node& node, const std::vector<Tensor>& inputs, std::size_t outputs, int threads) {
  std::vector<Tensor> out(outputs);
  ForwardContext ctx;
  ctx.inputs = inputs;
  ctx.outputs = out;
  ctx.threads = threads;
  node.forward(ctx);
  return out;
}

std::vector<double> values(const Tensor& t) { return testing::as_doubles(t.cast(DType::Float64)); }

// Element (o, j, i) of values viewed as [outer, n, inner].
double at(const std::vector<double>& v, std::int64_t o, std::int64_t j, std::int64_t i, std::int64_t n,
          std::int64_t inner) {
  return v[static_cast<std::size_t>((o * n + j) * inner + i)];
}

TEST(Concat, InfersShapesAndRefusesMismatches) {
  auto node = make_node("Concat", axis_attr(-1));
  EXPECT_EQ(testing::infer(*node, {{DType::Int8, {2, 3, 1}}, {DType::Int8, {kDynamicDim, 3, 4}}})[0].shape,
            (Shape{2, 3, 5}));
  EXPECT_EQ(testing::infer(*node, {{DType::Float32, {2, kDynamicDim}}, {DType::Float32, {2, 4}}})[0].shape,
            (Shape{2, kDynamicDim}));
  auto load = [](Shape a, Shape b, std::int64_t axis, DType db = DType::Float32) {
    GraphBuilder g;
    g.add_input("a", DType::Float32, std::move(a)).add_input("b", db, std::move(b));
    g.add_node("Concat", "cat1", {"a", "b"}, axis_attr(axis));
  };
  EXPECT_EQ(error_of<InvalidAttribute>([&] { load({2, 3}, {2, 3}, 2); }),
            "nodes[0] (cat1).attributes.axis: expected an integer in [-2, 1] for input rank 2, got 2");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { load({2, 3}, {2, 3, 1}, 0); }),
            "nodes[0] (cat1): input 1 has rank 3, input 0 rank 2; Concat needs one rank "
            "(inputs: 'a' float32 [2, 3], 'b' float32 [2, 3, 1])");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { load({2, 3}, {3, 3}, 1); }),
            "nodes[0] (cat1): input 1 has shape [3, 3], input 0 [2, 3]: Concat needs equal dimensions "
            "except along axis 1 (inputs: 'a' float32 [2, 3], 'b' float32 [3, 3])");
  EXPECT_EQ(error_of<UnsupportedDType>([&] { load({2, 3}, {2, 3}, 0, DType::Int64); }),
            "nodes[0] (cat1): input 1 has dtype int64, input 0 float32; Concat needs one dtype "
            "(inputs: 'a' float32 [2, 3], 'b' int64 [2, 3])");
}

TEST(ConcatSplit, SplitUndoesConcatOverASweep) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 24; ++trial) {
    const std::size_t rank = 1 + rng() % 4;
    Shape base(rank);
    for (auto& d : base) d = 1 + static_cast<std::int64_t>(rng() % 5);
    if (trial % 6 == 0) base[0] = 300;  // past the parallel threshold
    const auto axis = static_cast<std::int64_t>(rng() % rank);
    const std::size_t pieces = 1 + rng() % 4;
    std::vector<std::int64_t> sizes;
    std::vector<Tensor> inputs;
    for (std::size_t p = 0; p < pieces; ++p) {
      Shape s = base;
      s[static_cast<std::size_t>(axis)] = static_cast<std::int64_t>(rng() % 4);  // 0 allowed
      sizes.push_back(s[static_cast<std::size_t>(axis)]);
      inputs.push_back(testing::random_uniform(s, rng, 100.0).cast(trial % 2 ? DType::Float32 : DType::Int64));
    }
    const DType dtype = inputs[0].dtype();
    std::int64_t outer = 1, inner = 1, total = 0;
    for (std::size_t a = 0; a < rank; ++a) {
      if (static_cast<std::int64_t>(a) < axis) outer *= base[a];
      if (static_cast<std::int64_t>(a) > axis) inner *= base[a];
    }
    for (const std::int64_t n : sizes) total += n;
    for (const int threads : {1, 2}) {
      const Tensor y = run(*make_node("Concat", axis_attr(axis - static_cast<std::int64_t>(rank) * (trial % 2))),
                           inputs, 1, threads)[0];
      ASSERT_EQ(y.dtype(), dtype);
      ASSERT_EQ(y.shape()[static_cast<std::size_t>(axis)], total);
      // Element by element: piece p's (o, j, i) is y's (o, offset_p + j, i).
      const std::vector<double> yv = values(y);
      std::int64_t offset = 0;
      for (std::size_t p = 0; p < pieces; ++p) {
        const std::vector<double> xv = values(inputs[p]);
        for (std::int64_t o = 0; o < outer; o += 7)
          for (std::int64_t j = 0; j < sizes[p]; ++j)
            for (std::int64_t i = 0; i < inner; ++i)
              ASSERT_EQ(at(yv, o, offset + j, i, total, inner), at(xv, o, j, i, sizes[p], inner));
        offset += sizes[p];
      }
      const Tensor sizes_t = Tensor::from<std::int64_t>({static_cast<std::int64_t>(pieces)}, sizes);
      const std::vector<Tensor> back = run(*make_node("Split", axis_attr(axis)), {y, sizes_t}, pieces, threads);
      for (std::size_t p = 0; p < pieces; ++p) {
        ASSERT_EQ(back[p].shape(), inputs[p].shape());
        EXPECT_EQ(values(back[p]), values(inputs[p]));
      }
    }
  }
}

TEST(Split, LengthsFromNumOutputsOrEqualParts) {
  auto lengths = [](Attributes attrs, std::int64_t n, std::size_t outputs) {
    const Tensor x(DType::UInt8, {2, n});
    std::vector<std::int64_t> got;
    for (const Tensor& t : run(*make_node("Split", attrs), {x}, outputs, 1)) got.push_back(t.shape()[1]);
    return got;
  };
  EXPECT_EQ(lengths({{"axis", std::int64_t{1}}, {"num_outputs", std::int64_t{3}}}, 7, 3),
            (std::vector<std::int64_t>{3, 3, 1}));
  EXPECT_EQ(lengths({{"axis", std::int64_t{-1}}, {"num_outputs", std::int64_t{4}}}, 6, 4),
            (std::vector<std::int64_t>{2, 2, 2, 0}));
  EXPECT_EQ(lengths({{"axis", std::int64_t{1}}}, 6, 3), (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(error_of<InvalidAttribute>([&] { lengths({{"axis", std::int64_t{1}}, {"num_outputs", std::int64_t{4}}}, 5, 4); }),
            "attributes.num_outputs: 4 chunks of 2 do not fit an axis of length 5");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { lengths({{"axis", std::int64_t{1}}}, 7, 3); }),
            "axis 1 of length 7 does not split into 3 equal parts (give the input split or num_outputs)");
  EXPECT_EQ(error_of<InvalidAttribute>([&] { lengths({{"axis", std::int64_t{1}}, {"num_outputs", std::int64_t{2}}}, 6, 3); }),
            "attributes.num_outputs: 2, but the node has 3 outputs");
}

TEST(Split, DefaultOutputNamesAndRefusals) {
  GraphBuilder g;
  g.add_input("x", DType::Float32, {7, kDynamicDim});
  EXPECT_EQ(g.add_node("Split", "sp", {"x"}, {{"num_outputs", std::int64_t{3}}}),
            (std::vector<std::string>{"sp", "sp:1", "sp:2"}));
  auto load = [](std::vector<std::int64_t> split, std::size_t outputs, Attributes attrs = {{"axis", std::int64_t{1}}}) {
    GraphBuilder b;
    b.add_input("x", DType::Float32, {2, 6});
    b.add_initializer("split_sizes", Tensor::from<std::int64_t>({static_cast<std::int64_t>(split.size())}, split));
    std::vector<std::string> names;
    for (std::size_t k = 0; k < outputs; ++k) {
      std::string name = "s";  // not "s" + to_string: GCC 12 warns wrongly (-Wrestrict) on that
      name += std::to_string(k);
      names.push_back(name);
    }
    NodeDef n = testing::node_def("Split", "sp1", {"x", "split_sizes"}, std::move(attrs));
    n.specified_outputs_name = names;
    b.add_node(std::move(n));
  };
  EXPECT_EQ(error_of<ShapeMismatch>([&] { load({2, 3}, 2); }),
            "nodes[0] (sp1): input 1 (split): split sizes [2, 3] must be >= 0 and add up to 6 (axis 1)"
            " (inputs: 'x' float32 [2, 6], 'split_sizes' int64 [2])");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { load({7, -1}, 2); }),
            "nodes[0] (sp1): input 1 (split): split sizes [7, -1] must be >= 0 and add up to 6 (axis 1)"
            " (inputs: 'x' float32 [2, 6], 'split_sizes' int64 [2])");
  EXPECT_EQ(error_of<ShapeMismatch>([&] { load({2, 4}, 3); }),
            "nodes[0] (sp1): input 1 (split): [2, 4] has 2 sizes for 3 outputs"
            " (inputs: 'x' float32 [2, 6], 'split_sizes' int64 [2])");
  EXPECT_EQ(error_of<InvalidAttribute>([&] { load({2, 4}, 2, {{"axis", std::int64_t{1}}, {"num_outputs", std::int64_t{2}}}); }),
            "nodes[0] (sp1).attributes.num_outputs: Split takes either the input split or num_outputs, not both");
}

TEST(ConcatSplit, Gradients) {
  std::mt19937_64 rng(5);
  for (const double lda : {1.0, 0.5}) {
    auto cat = make_node("Concat", axis_attr(1), true, lda);
    testing::GradCheckResult r = testing::check_gradient(
        *cat, {testing::random_uniform({2, 1, 3}, rng), testing::random_uniform({2, 4, 3}, rng),
               testing::random_uniform({2, 0, 3}, rng)});
    EXPECT_TRUE(r.ok) << r.failures;
    auto split = make_node("Split", axis_attr(-1), true, lda);
    testing::GradCheckOptions options;
    options.num_outputs = 3;
    r = testing::check_gradient(*split, {testing::random_uniform({2, 6}, rng), i64({3}, {1, 3, 2})}, options);
    EXPECT_TRUE(r.ok) << r.failures;
    auto chunks = make_node("Split", {{"num_outputs", std::int64_t{2}}}, true, lda);
    options.num_outputs = 2;
    r = testing::check_gradient(*chunks, {testing::random_uniform({5, 2}, rng)}, options);
    EXPECT_TRUE(r.ok) << r.failures;
  }
}

TEST(Split, AbsentOutputGradientsCountAsZero) {
  auto node = make_node("Split", axis_attr(1), true, 0.5);
  const std::vector<Tensor> inputs{testing::f64({1, 4}, {1, 2, 3, 4}), i64({3}, {1, 2, 1})};
  const testing::ForwardResult fwd = testing::run_forward(*node, inputs, 3);
  std::vector<Tensor> dy{Tensor{}, testing::f64({1, 2}, {10, 20}), Tensor{}};
  std::vector<Tensor> dx{testing::f64({1, 4}, {1, 1, 1, 1}), Tensor{}};
  testing::run_backward(*node, inputs, fwd, dy, dx);
  EXPECT_EQ(testing::as_doubles(dx[0]), (std::vector<double>{1, 6, 11, 1}));
}

}  // namespace
}  // namespace nodeflow
