// Tensor buffers: 64-byte aligned whatever the size, zero-filled unless asked
// otherwise, shared by copies.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/tensor.hpp"

namespace nodeflow {
namespace {

TEST(ShapeText, OnlyTheRunTimeDimensionReadsAsAQuestionMark) {
  // An error about a negative dimension must show it (MaxUnpool's
  // output_shape [1, 2, -5, 7] read [1, 2, ?, 7]).
  EXPECT_EQ(to_string(Shape{1, 2, -5, kDynamicDim}), "[1, 2, -5, ?]");
  EXPECT_EQ(to_string(Shape{}), "[]");
}

TEST(TensorBuffer, EveryBufferStartsOnA64ByteBoundary) {
  std::vector<Tensor> live;  // kept alive so that later buffers land elsewhere
  for (std::int64_t n = 0; n < 300; ++n) {
    live.emplace_back(DType::UInt8, Shape{n});
    live.push_back(Tensor::uninitialized(DType::Float64, Shape{n % 7, 3}));
  }
  for (const Tensor& t : live)
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.raw()) % 64, 0u) << to_string(t.shape());
}

TEST(TensorBuffer, ZeroFilledAndSharedByCopies) {
  // Dirty the heap first, so that zeros cannot come from fresh pages by luck.
  for (int i = 0; i < 50; ++i) {
    Tensor junk = Tensor::uninitialized(DType::Float32, {37});
    for (float& v : junk.values<float>()) v = 1.5f;
  }
  Tensor t(DType::Float32, {37});
  for (float v : t.values<float>()) EXPECT_EQ(v, 0.0f);
  Tensor copy = t;
  copy.data<float>()[36] = 2.0f;
  EXPECT_TRUE(copy.shares_buffer(t));
  EXPECT_EQ(t.data<float>()[36], 2.0f);
  EXPECT_FALSE(t.clone().shares_buffer(t));
}

}  // namespace
}  // namespace nodeflow
