// Tensor buffers: 64-byte aligned whatever the size, zero-filled unless asked
// otherwise, shared by copies.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
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

TEST(TensorBuffer, ABorrowedBufferIsUsedInPlaceAndKeepsItsOwnerAlive) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4, 5, 6});
  const std::weak_ptr<std::vector<float>> watch = owner;
  float* data = owner->data();
  Tensor t = Tensor::borrow(DType::Float32, Shape{2, 3}, data, std::move(owner));
  EXPECT_EQ(t.data<float>(), data);
  EXPECT_EQ(t.values<float>()[5], 6.0f);
  const Tensor copy = t.reshaped(Shape{6});
  t = Tensor();
  EXPECT_FALSE(watch.expired()) << "a handle to the tensor still lives";
  EXPECT_EQ(copy.data<float>(), data);
  EXPECT_EQ(copy.values<float>()[0], 1.0f);
}

TEST(TensorBuffer, BorrowRefusesNullMisalignedAndOverflowingBuffers) {
  alignas(8) std::byte bytes[16] = {};
  EXPECT_TRUE(Tensor::can_borrow(DType::Float32, bytes + 4));
  EXPECT_FALSE(Tensor::can_borrow(DType::Float32, bytes + 2));
  EXPECT_FALSE(Tensor::can_borrow(DType::Float32, nullptr));
  EXPECT_THROW(Tensor::borrow(DType::Float32, Shape{1}, bytes + 2, nullptr), Error);
  EXPECT_THROW(Tensor::borrow(DType::Float32, Shape{1}, nullptr, nullptr), Error);
  EXPECT_THROW(Tensor::borrow(DType::Float64, Shape{std::int64_t{1} << 62, 4}, bytes, nullptr), ShapeMismatch);
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
