// docs/pooling.md "Attributes" and "Output size": attribute parsing and every
// shape error (the output-size rule itself: test_window_axis.cpp).
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "nodes/pooling/pool_geometry.hpp"
#include "support/error_of.hpp"
#include "support/gradcheck.hpp"

namespace nodeflow {
namespace {

using ints = std::vector<std::int64_t>;

// The axis resolved as a pooling node resolves it.
WindowAxis pooled(const WindowAxis& a, std::int64_t in, AutoPad auto_pad, bool ceil_mode) {
  return resolve_window_axis(a, in, {auto_pad, ceil_mode, "pooling"});
}

// Runs f, expects an exception of type E whose message is exactly `message`.
template <typename E, typename F>
void expect_error(F&& f, const std::string& message) {
  EXPECT_EQ(testing::error_of<E>(f), message);
}

TEST(PoolOutputSize, OutputBelowOneIsReportedWithAxisAndSizes) {
  expect_error<ShapeMismatch>(
      [] { check_axis(pooled({.kernel = 7}, 5, AutoPad::NotSet, false), 3); },
      "axis 3: kernel extent 7 is larger than the padded input 5+0+0 (output size would be -1)");
  expect_error<ShapeMismatch>(
      [] {
        check_axis(pooled({.kernel = 3, .stride = 2, .dilation = 2}, 4, AutoPad::NotSet, false), 2);
      },
      "axis 2: kernel extent 5 is larger than the padded input 4+0+0 (output size would be 0)");
  expect_error<ShapeMismatch>(
      [] { check_axis(pooled({.kernel = 2, .stride = 2}, 1, AutoPad::NotSet, false), 2); },
      "axis 2: kernel extent 2 is larger than the padded input 1+0+0 (output size would be 0)");
}

TEST(PoolOutputSize, AWindowWithNoInputElementIsAnError) {
  // Height 1, pads 1+1, dilation 2, k 3, ceil: one window sampling rows -1, 1, 3.
  const WindowAxis a =
      pooled({.kernel = 3, .stride = 6, .dilation = 2, .pad_begin = 1, .pad_end = 1}, 1,
             AutoPad::NotSet, true);
  EXPECT_EQ(a.out, 1);
  expect_error<ShapeMismatch>([&] { check_axis(a, 2); },
                              "axis 2: window 0 holds no input element (input 1, kernel 3, "
                              "dilation 2, stride 6, pads 1+1)");
  // A later begin-pad window can miss too: in 2, k 2, d 3, s 1, pads 2+1 ->
  // 2 windows; taps of window 0 at -2, 1 (holds 1); window 1 at -1, 2: none.
  const WindowAxis b =
      pooled({.kernel = 2, .dilation = 3, .pad_begin = 2, .pad_end = 1}, 2, AutoPad::NotSet, false);
  EXPECT_EQ(b.out, 2);
  expect_error<ShapeMismatch>([&] { check_axis(b, 4); },
                              "axis 4: window 1 holds no input element (input 2, kernel 2, "
                              "dilation 3, stride 1, pads 2+1)");
  // Windows that hold an input element pass.
  EXPECT_NO_THROW(check_axis(
      pooled({.kernel = 3, .stride = 2, .pad_begin = 1, .pad_end = 1}, 4, AutoPad::NotSet, true),
      2));
}

TEST(PoolOutputSize, AGlobalWindowOverAnEmptyAxisIsAnErrorOfShapeInference) {
  // Found at shape inference (pool_geometry, what `check` runs), not first
  // when the node runs; the axis is named.
  for (PoolKind kind : {PoolKind::GlobalAverage, PoolKind::GlobalMax}) {
    const PoolAttributes a = checked_pool_attributes(kind, {});
    expect_error<ShapeMismatch>([&] { pool_geometry(a, {1, 1, 0, 3}); },
                                "axis 2: the global window holds no input element (the axis is empty)");
    expect_error<ShapeMismatch>([&] { pool_geometry(a, {2, 3, 4, 0}); },
                                "axis 3: the global window holds no input element (the axis is empty)");
    EXPECT_EQ(pool_geometry(a, {1, 1, kDynamicDim, 3}).output_shape(), (Shape{1, 1, 1, 1}));
  }
}

TEST(PoolAttributesParse, DefaultsAndValues) {
  const PoolAttributes a =
      checked_pool_attributes(PoolKind::Average, {{"kernel_shape", ints{3, 2}},
                                                {"pads", ints{1, 0, 2, 1}},
                                                {"count_include_pad", std::int64_t{1}}});
  ASSERT_EQ(a.axes.size(), 2u);
  EXPECT_EQ(a.axes[0].kernel, 3);
  EXPECT_EQ(a.axes[0].stride, 1);
  EXPECT_EQ(a.axes[0].dilation, 1);
  EXPECT_EQ(a.axes[0].pad_begin, 1);
  EXPECT_EQ(a.axes[0].pad_end, 2);
  EXPECT_EQ(a.axes[1].pad_begin, 0);
  EXPECT_EQ(a.axes[1].pad_end, 1);
  EXPECT_EQ(a.auto_pad, AutoPad::NotSet);
  EXPECT_FALSE(a.ceil_mode);
  EXPECT_TRUE(a.count_include_pad);
  EXPECT_EQ(checked_pool_attributes(PoolKind::Lp, {{"kernel_shape", ints{2}}}).p, 2);
  EXPECT_EQ(checked_pool_attributes(PoolKind::Max,
                                  {{"kernel_shape", ints{2}}, {"storage_order", std::int64_t{1}}})
                .storage_order,
            StorageOrder::ColumnMajor);
  EXPECT_TRUE(checked_pool_attributes(PoolKind::GlobalMax, {}).axes.empty());
}

TEST(PoolAttributesParse, ListLengthsMustMatchTheSpatialRank) {
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Max, {{"kernel_shape", ints{2, 2}}, {"pads", ints{1, 1}}});
      },
      "attributes.pads: expected 4 values (begin and end per spatial axis), got [1, 1]");
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Max, {{"kernel_shape", ints{2, 2}}, {"strides", ints{2}}});
      },
      "attributes.strides: expected 2 values (one per spatial axis), got [2]");
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Lp, {{"kernel_shape", ints{2}}, {"dilations", ints{1, 1}}});
      },
      "attributes.dilations: expected 1 value (one per spatial axis), got [1, 1]");
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Max, {{"kernel_shape", ints{}}});
      },
      "attributes.kernel_shape: expected at least one value (one per "
      "spatial axis), got []");
}

TEST(PoolAttributesParse, PadsOnlyWithAutoPadNotSet) {
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Max, {{"kernel_shape", ints{2, 2}},
                                              {"pads", ints{0, 0, 0, 0}},
                                              {"auto_pad", std::string("SAME_UPPER")}});
      },
      "attributes.pads: not allowed together with auto_pad 'SAME_UPPER' (pads need auto_pad "
      "NOTSET)");
  EXPECT_NO_THROW(checked_pool_attributes(
      PoolKind::Max,
      {{"kernel_shape", ints{2}}, {"pads", ints{1, 1}}, {"auto_pad", std::string("NOTSET")}}));
}

TEST(PoolAttributesParse, APadMustBeSmallerThanTheKernelExtent) {
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Max,
                              {{"kernel_shape", ints{3, 3}}, {"pads", ints{0, 3, 0, 0}}});
      },
      "attributes.pads: pad 3 at the begin of axis 3 is >= the kernel extent 3 (a window could "
      "hold "
      "no input element)");
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Average, {{"kernel_shape", ints{2}}, {"pads", ints{0, 2}}});
      },
      "attributes.pads: pad 2 at the end of axis 2 is >= the kernel extent 2 (a window could hold "
      "no "
      "input element)");
  // The extent counts dilations: k 2, d 3 -> extent 4, so pad 3 is fine.
  EXPECT_NO_THROW(checked_pool_attributes(
      PoolKind::Max, {{"kernel_shape", ints{2}}, {"dilations", ints{3}}, {"pads", ints{3, 3}}}));
}

TEST(PoolAttributesParse, KindAndRangeErrorsComeFromTheSpecs) {
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Average, {{"kernel_shape", ints{2, 0}}});
      },
      "attributes.kernel_shape: expected a list of positive integers, got [2, 0]");
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Average,
                              {{"kernel_shape", ints{2, 2}}, {"strides", ints{1, 0}}});
      },
      "attributes.strides: expected a list of positive integers, got [1, 0]");
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Max,
                              {{"kernel_shape", ints{2, 2}}, {"pads", ints{0, 0, -1, 0}}});
      },
      "attributes.pads: expected a list of non-negative integers, got [0, 0, -1, 0]");
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Max,
                              {{"kernel_shape", ints{2}}, {"ceil_mode", std::int64_t{2}}});
      },
      "attributes.ceil_mode: expected an integer 0 or 1, got 2");
  try {
    checked_pool_attributes(PoolKind::Lp, {{"kernel_shape", ints{2}}, {"p", std::int64_t{0}}});
    ADD_FAILURE() << "p = 0 accepted";
  } catch (const InvalidAttribute& e) {
    EXPECT_EQ(std::string(e.what()).rfind("attributes.p: expected", 0), 0u) << e.what();
  }
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Max,
                              {{"kernel_shape", ints{2}}, {"auto_pad", std::string("SAME")}});
      },
      "attributes.auto_pad: expected one of NOTSET, SAME_UPPER, SAME_LOWER, VALID, got \"SAME\"");
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(PoolKind::Max, {{"kernel_shape", ints{2}}, {"padding", ints{1}}});
      },
      "attributes.padding: unknown attribute 'padding' for MaxPool (known: auto_pad, ceil_mode, "
      "dilations, kernel_shape, pads, storage_order, strides)");
  // Attributes of one pooling op are unknown to another.
  EXPECT_THROW(checked_pool_attributes(PoolKind::Max, {{"kernel_shape", ints{2}},
                                                     {"count_include_pad", std::int64_t{1}}}),
               InvalidAttribute);
  EXPECT_THROW(checked_pool_attributes(PoolKind::GlobalAverage, {{"kernel_shape", ints{2}}}),
               InvalidAttribute);
  expect_error<InvalidAttribute>(
      [] { checked_pool_attributes(PoolKind::Max, {}); },
      "attributes.kernel_shape: required attribute 'kernel_shape' of MaxPool "
      "is missing");
}

TEST(PoolAttributesParse, ValuesBeyondInt32AreRefused) {
  expect_error<InvalidAttribute>(
      [] {
        checked_pool_attributes(
            PoolKind::Max, {{"kernel_shape", ints{2}}, {"strides", ints{std::int64_t{1} << 40}}});
      },
      "attributes.strides: value 1099511627776 is too large (at most 2147483647)");
}

TEST(PoolShape, InfersStaticAndDynamicShapes) {
  const PoolAttributes a = checked_pool_attributes(
      PoolKind::Max,
      {{"kernel_shape", ints{3, 3}}, {"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}});
  EXPECT_EQ(pool_geometry(a, {2, 3, 7, 8}).output_shape(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(pool_geometry(a, {kDynamicDim, 3, kDynamicDim, 8}).output_shape(),
            (Shape{kDynamicDim, 3, kDynamicDim, 4}));
  const PoolAttributes global = checked_pool_attributes(PoolKind::GlobalAverage, {});
  EXPECT_EQ(pool_geometry(global, {2, 3, 7, 8, 9}).output_shape(), (Shape{2, 3, 1, 1, 1}));
  EXPECT_EQ(pool_geometry(global, {2, 3, kDynamicDim}).output_shape(), (Shape{2, 3, 1}));
  const PoolGeometry g = pool_geometry(a, {2, 3, 7, 8});
  EXPECT_EQ(g.planes(), 6);
  EXPECT_EQ(g.input_plane(), 56);
  EXPECT_EQ(g.output_plane(), 16);
  EXPECT_EQ(g.output_shape(), (Shape{2, 3, 4, 4}));
}

TEST(PoolShape, RankErrorsNameTheInput) {
  const PoolAttributes a = checked_pool_attributes(PoolKind::Max, {{"kernel_shape", ints{2, 2}}});
  expect_error<ShapeMismatch>(
      [&] {
        pool_geometry(a, {2, 3});
      },
      "input 0 has rank 2 (shape [2, 3]); MaxPool needs rank >= 3 (N x C x D1 ...)");
  expect_error<ShapeMismatch>(
      [&] {
        pool_geometry(a, {2, 3, 4});
      },
      "input 0 has rank 3 (shape [2, 3, 4]); MaxPool with 2-D kernel_shape "
      "needs rank 4 (N x C x D1 ...)");
  const PoolAttributes global = checked_pool_attributes(PoolKind::GlobalMax, {});
  EXPECT_THROW(pool_geometry(global, {2, 3}), ShapeMismatch);
}

TEST(PoolShape, DtypeRule) {
  expect_error<UnsupportedDType>([] { check_pool_dtype(PoolKind::Average, DType::Int8, 0); },
                                 "AveragePool does not take dtype int8 (input 0; allowed: float32, "
                                 "float64, float16, bfloat16)");
  EXPECT_THROW(check_pool_dtype(PoolKind::Lp, DType::UInt8, 0), UnsupportedDType);
  EXPECT_THROW(check_pool_dtype(PoolKind::GlobalAverage, DType::Int8, 0), UnsupportedDType);
  EXPECT_THROW(check_pool_dtype(PoolKind::Max, DType::Int64, 0), UnsupportedDType);
  for (PoolKind k : {PoolKind::Max, PoolKind::GlobalMax, PoolKind::Unpool}) {
    EXPECT_NO_THROW(check_pool_dtype(k, DType::Int8, 0));
    EXPECT_NO_THROW(check_pool_dtype(k, DType::UInt8, 0));
  }
  for (PoolKind k : {PoolKind::Average, PoolKind::Max, PoolKind::Lp, PoolKind::GlobalAverage,
                     PoolKind::GlobalMax, PoolKind::Unpool})
    for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16})
      EXPECT_NO_THROW(check_pool_dtype(k, d, 0));
}

TEST(PoolShape, NodeInferReportsTheSameErrors) {
  auto node = testing::make_node("AveragePool", {{"kernel_shape", ints{3, 7}}});
  TensorInfo x{DType::Float32, {1, 1, 4, 5}};
  InferContext ctx;
  ctx.inputs = {&x};
  ctx.constants = {nullptr};
  expect_error<ShapeMismatch>(
      [&] { node->infer(ctx); },
      "axis 3: kernel extent 7 is larger than the padded input 5+0+0 (output "
      "size would be -1)");
  TensorInfo bytes{DType::Int8, {1, 1, 6, 6}};
  ctx.inputs = {&bytes};
  EXPECT_THROW(node->infer(ctx), UnsupportedDType);
  auto max = testing::make_node("MaxPool", {{"kernel_shape", ints{2, 2}}});
  ctx.num_outputs = 2;
  const auto out = max->infer(ctx);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].dtype, DType::Int8);
  EXPECT_EQ(out[0].shape, (Shape{1, 1, 5, 5}));
  EXPECT_EQ(out[1].dtype, DType::Int64);
  EXPECT_EQ(out[1].shape, (Shape{1, 1, 5, 5}));
  ctx.num_outputs = 1;
  EXPECT_EQ(max->infer(ctx).size(), 1u);
}

}  // namespace
}  // namespace nodeflow
