// ShapeCache, the per-node memo of resolved geometry: one value per key,
// errors not kept, eviction that leaves held values valid, and pooling and
// Conv nodes run by several threads at once over more shapes than the cache
// keeps (the executor's use; run it under TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "nodes/common/shape_cache.hpp"
#include "support/gradcheck.hpp"
#include "support/layer_fixtures.hpp"

namespace nodeflow {
namespace {

using Ints = std::vector<std::int64_t>;

TEST(ShapeCache, MakesEachValueOnceAndSharesIt) {
  ShapeCache<Shape, std::string> cache;
  int made = 0;
  auto make = [&](const Shape& s) {
    return [&made, s] {
      ++made;
      return to_string(s);
    };
  };
  const auto a = cache.get({1, 2}, make({1, 2}));
  const auto b = cache.get({1, 2}, make({1, 2}));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(*a, "[1, 2]");
  EXPECT_EQ(made, 1);
  EXPECT_EQ(*cache.get({2, 1}, make({2, 1})), "[2, 1]");
  EXPECT_EQ(made, 2);
}

TEST(ShapeCache, AnErrorIsNotKept) {
  ShapeCache<Shape, int> cache;
  int calls = 0;
  auto failing = [&]() -> int {
    ++calls;
    throw ShapeMismatch("no");
  };
  EXPECT_THROW(cache.get({3}, failing), ShapeMismatch);
  EXPECT_THROW(cache.get({3}, failing), ShapeMismatch);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(*cache.get({3}, [] { return 7; }), 7);
}

TEST(ShapeCache, AnEvictedValueStaysValidForItsHolder) {
  ShapeCache<Shape, std::string> cache;
  const auto first = cache.get({0}, [] { return std::string("first"); });
  for (std::int64_t i = 1; i <= 20; ++i) cache.get({i}, [i] { return std::to_string(i); });
  EXPECT_EQ(*first, "first");
  // Made again after eviction, as a new value.
  const auto again = cache.get({0}, [] { return std::string("again"); });
  EXPECT_EQ(*again, "again");
}

TEST(ShapeCache, ThreadsAgreeOnOneValuePerKey) {
  ShapeCache<Shape, std::int64_t> cache;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::int64_t i = 0; i < 2000; ++i) {
        const std::int64_t key = (i * 7 + t) % 11;  // more keys than the cache holds
        if (*cache.get({key}, [key] { return key * key; }) != key * key) ++wrong;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// Every thread runs the same nodes over a cycle of shapes; each result must be
// what a single-threaded run of a fresh node gives.
TEST(ShapeCache, PoolingAndConvNodesRunConcurrentlyOverManyShapes) {
  const auto max_pool = testing::make_node(
      "MaxPool",
      {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 1, 1}}});
  const auto average = testing::make_node(
      "AveragePool", {{"kernel_shape", Ints{2, 2}}, {"ceil_mode", std::int64_t{1}}});
  const auto conv = testing::make_node("Conv", {{"auto_pad", std::string("SAME_UPPER")}});
  const Tensor w = testing::pattern({2, 3, 3, 3}, 5, 7, 3, 4.0);
  std::vector<std::vector<Tensor>> inputs;
  std::vector<std::vector<std::vector<double>>> want;
  for (std::int64_t h = 3; h < 13; ++h) {  // 10 shapes: more than a cache keeps
    const Tensor x = testing::pattern({1, 3, h, 5}, 3, 11, 5, 8.0);
    inputs.push_back({x});
    std::vector<std::vector<double>> results;
    for (const char* op : {"MaxPool", "AveragePool"}) {
      const auto fresh =
          testing::make_node(op, op == std::string("MaxPool") ? max_pool->config().attributes
                                                              : average->config().attributes);
      results.push_back(
          testing::as_doubles(testing::run_forward(*fresh, {x}, 1, false).outputs[0]));
    }
    const auto fresh_conv = testing::make_node("Conv", conv->config().attributes);
    results.push_back(
        testing::as_doubles(testing::run_forward(*fresh_conv, {x, w}, 1, false).outputs[0]));
    want.push_back(results);
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < 60; ++i) {
        const std::size_t s = (i * 3 + static_cast<std::size_t>(t)) % inputs.size();
        const Tensor& x = inputs[s][0];
        if (testing::as_doubles(testing::run_forward(*max_pool, {x}, 1, false).outputs[0]) !=
            want[s][0])
          ++wrong;
        if (testing::as_doubles(testing::run_forward(*average, {x}, 1, true).outputs[0]) !=
            want[s][1])
          ++wrong;
        if (testing::as_doubles(testing::run_forward(*conv, {x, w}, 1, false).outputs[0]) !=
            want[s][2])
          ++wrong;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace nodeflow
