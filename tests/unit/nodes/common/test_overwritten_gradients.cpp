// The nodes that overwrite a tensor's first gradient (Node::overwrites_gradients,
// docs/architecture.md "Gradient buffers"): for every path of their backward
// (broadcast inputs, every reduced axis, a scaled gradient, the
// normalizations' statistics outputs seeded alone, float64, sizes from which
// the gradients stream past the caches, 1 and 2 threads), the gradients
// written into NaN-filled buffers they are told to overwrite equal the ones
// added into zeroed buffers (== : an element left unwritten stays NaN).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "nodes/common/stream_lines.hpp"
#include "support/gradcheck.hpp"

namespace nodeflow {
namespace {

Tensor pattern(DType dtype, const Shape& shape, int salt) {
  Tensor t(dtype, shape);
  const auto value = [&](std::size_t i) { return static_cast<double>((i * 7 + static_cast<std::size_t>(salt)) % 23) / 8 - 1.3; };
  if (dtype == DType::Float64) {
    auto v = t.values<double>();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = value(i);
  } else {
    auto v = t.values<float>();
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(value(i));
  }
  return t;
}

Tensor axes(std::vector<std::int64_t> a) {
  const auto n = static_cast<std::int64_t>(a.size());
  return Tensor::from<std::int64_t>({n}, a);
}

struct Case {
  std::string name;
  std::string op;
  Attributes attributes;
  std::vector<Tensor> inputs;
  std::size_t num_outputs = 1;
  std::vector<bool> seeded = {true};  ///< which outputs get a gradient
  double lda_coeff = 1.0;
};

std::vector<Case> cases() {
  const DType f32 = DType::Float32;
  const Shape small{3, 5, 7};
  const Shape large{4, 1024, 1100};  // 18 MB float32: streamed (StreamedFrom16MiB)
  const Attributes keep{{"keepdims", std::int64_t{1}}};
  std::vector<Case> all = {
      {"Add", "Add", {}, {pattern(f32, small, 1), pattern(f32, small, 2)}},
      {"Add broadcast", "Add", {}, {pattern(f32, small, 1), pattern(f32, {5, 1}, 2)}},
      {"Add scaled", "Add", {}, {pattern(f32, small, 1), pattern(f32, small, 2)}, 1, {true}, 0.5},
      {"Sub", "Sub", {}, {pattern(f32, small, 1), pattern(f32, small, 2)}},
      {"Sum", "Sum", {}, {pattern(f32, small, 1), pattern(f32, small, 2), pattern(f32, {7}, 3)}},
      {"Mean", "Mean", {}, {pattern(f32, small, 1), pattern(f32, small, 2)}},
      {"ReduceSum last", "ReduceSum", keep, {pattern(f32, small, 1), axes({2})}},
      {"ReduceSum middle", "ReduceSum", keep, {pattern(f32, small, 1), axes({1})}},
      {"ReduceSum first and last", "ReduceSum", {{"keepdims", std::int64_t{0}}}, {pattern(f32, small, 1), axes({0, 2})}},
      {"ReduceSum all, split lines", "ReduceSum", keep, {pattern(f32, {70000}, 1), axes({0})}},
      {"ReduceMean middle", "ReduceMean", keep, {pattern(f32, small, 1), axes({1})}},
      {"Transpose", "Transpose", {{"perm", AttrValue{std::vector<std::int64_t>{2, 0, 1}}}}, {pattern(f32, small, 1)}},
      {"Transpose scaled", "Transpose", {{"perm", AttrValue{std::vector<std::int64_t>{2, 0, 1}}}},
       {pattern(f32, small, 1)}, 1, {true}, 0.25},
      {"Mul", "Mul", {}, {pattern(f32, small, 1), pattern(f32, small, 2)}},
      {"Mul broadcast", "Mul", {}, {pattern(f32, small, 1), pattern(f32, {5, 1}, 2)}},
      {"Mul scaled", "Mul", {}, {pattern(f32, small, 1), pattern(f32, small, 2)}, 1, {true}, 0.5},
      {"Mul float64", "Mul", {}, {pattern(DType::Float64, small, 1), pattern(DType::Float64, {7}, 2)}},
      {"Concat", "Concat", {{"axis", std::int64_t{1}}},
       {pattern(f32, small, 1), pattern(f32, {3, 2, 7}, 2), pattern(f32, {3, 0, 7}, 3)}},
      {"Concat scaled", "Concat", {{"axis", std::int64_t{-1}}}, {pattern(f32, small, 1), pattern(f32, {3, 5, 4}, 2)},
       1, {true}, 0.25},
      {"Concat float64", "Concat", {{"axis", std::int64_t{0}}},
       {pattern(DType::Float64, small, 1), pattern(DType::Float64, small, 2)}},
      {"LayerNormalization", "LayerNormalization", {}, {pattern(f32, {4, 6, 40}, 1), pattern(f32, {40}, 2),
       pattern(f32, {40}, 3)}, 3, {true, true, true}},
      {"LayerNormalization, Mean alone", "LayerNormalization", {}, {pattern(f32, {4, 6, 40}, 1),
       pattern(f32, {40}, 2), pattern(f32, {40}, 3)}, 3, {false, true, false}},
      {"LayerNormalization, blocks of rows", "LayerNormalization", {}, {pattern(f32, {4, 16, 40}, 1),
       pattern(f32, {40}, 2), pattern(f32, {40}, 3)}},
      {"LayerNormalization over two axes", "LayerNormalization", {{"axis", std::int64_t{1}}},
       {pattern(f32, {4, 6, 40}, 1), pattern(f32, {6, 40}, 2)}},
      {"GroupNormalization", "GroupNormalization", {{"num_groups", std::int64_t{2}}},
       {pattern(f32, {2, 4, 3, 3}, 1), pattern(f32, {4}, 2), pattern(f32, {4}, 3)}},
      {"InstanceNormalization", "InstanceNormalization", {},
       {pattern(f32, {2, 3, 4, 4}, 1), pattern(f32, {3}, 2), pattern(f32, {3}, 3)}},
      {"Add float64", "Add", {}, {pattern(DType::Float64, small, 1), pattern(DType::Float64, small, 2)}},
      {"LayerNormalization float64", "LayerNormalization", {}, {pattern(DType::Float64, {4, 6, 40}, 1),
       pattern(DType::Float64, {40}, 2)}},
      // Streaming sizes.
      {"Add large", "Add", {}, {pattern(f32, large, 1), pattern(f32, large, 2)}, 1, {true}, 0.5},
      {"Add large broadcast", "Add", {}, {pattern(f32, large, 1), pattern(f32, {1024, 1}, 2)}},
      {"ReduceSum large middle", "ReduceSum", keep, {pattern(f32, large, 1), axes({1})}},
      {"ReduceMean large last", "ReduceMean", keep, {pattern(f32, large, 1), axes({2})}},
      {"LayerNormalization large", "LayerNormalization", {}, {pattern(f32, large, 1), pattern(f32, {1100}, 2),
       pattern(f32, {1100}, 3)}},
      {"Mul large", "Mul", {}, {pattern(f32, large, 1), pattern(f32, large, 2)}},
      {"Mul large broadcast", "Mul", {}, {pattern(f32, {1024, 1}, 1), pattern(f32, large, 2)}, 1, {true}, 0.5},
      {"Concat large", "Concat", {{"axis", std::int64_t{1}}}, {pattern(f32, large, 1), pattern(f32, large, 2)}},
      {"Transpose large", "Transpose", {{"perm", AttrValue{std::vector<std::int64_t>{0, 2, 1}}}},
       {pattern(f32, large, 1)}},
      {"Add large float64", "Add", {}, {pattern(DType::Float64, {2, 1024, 1100}, 1),
       pattern(DType::Float64, {2, 1024, 1100}, 2)}},
  };
  return all;
}

bool is_float(const Tensor& t) { return t.dtype() == DType::Float32 || t.dtype() == DType::Float64; }

std::vector<double> doubles(const Tensor& t) {
  if (t.dtype() == DType::Float64) {
    const auto v = t.values<double>();
    return {v.begin(), v.end()};
  }
  const auto v = t.values<float>();
  return {v.begin(), v.end()};
}

// The streamed paths run from 16 MiB, whatever this machine's cache
// (stream_lines::stream_bytes would choose half of it).
struct StreamedFrom16MiB {
  StreamedFrom16MiB() { stream_lines::set_stream_bytes(std::size_t{16} << 20); }
  ~StreamedFrom16MiB() { stream_lines::set_stream_bytes(0); }
  StreamedFrom16MiB(const StreamedFrom16MiB&) = delete;
  StreamedFrom16MiB& operator=(const StreamedFrom16MiB&) = delete;
};

TEST(OverwrittenGradients, EqualTheGradientsAddedIntoZeros) {
  const StreamedFrom16MiB streamed;
  for (const Case& c : cases()) {
    const auto node = testing::make_node(c.op, c.attributes, true, c.lda_coeff);
    ASSERT_TRUE(node->overwrites_gradients()) << c.name;
    const testing::ForwardResult f = testing::run_forward(*node, c.inputs, c.num_outputs);
    std::vector<Tensor> dy;
    for (std::size_t k = 0; k < c.num_outputs; ++k)
      dy.push_back(c.seeded[k] ? pattern(f.outputs[k].dtype(), f.outputs[k].shape(), 5 + static_cast<int>(k))
                               : Tensor());
    // Every float input overwritten, then only the first (the others added into).
    for (const bool all : {true, false})
      for (const int threads : {1, 2}) {
        std::vector<Tensor> added, written;
        testing::RunSettings add_settings, overwrite_settings;
        add_settings.threads = overwrite_settings.threads = threads;
        for (std::size_t k = 0; k < c.inputs.size(); ++k) {
          const Tensor& in = c.inputs[k];
          const bool wanted = is_float(in), overwrite = wanted && (all || k == 0);
          added.push_back(wanted ? Tensor(in.dtype(), in.shape()) : Tensor());
          written.push_back(wanted ? Tensor(in.dtype(), in.shape()) : Tensor());
          if (overwrite && in.dtype() == DType::Float64)
            for (double& v : written.back().values<double>()) v = std::numeric_limits<double>::quiet_NaN();
          else if (overwrite)
            for (float& v : written.back().values<float>()) v = std::numeric_limits<float>::quiet_NaN();
          overwrite_settings.overwrite.push_back(overwrite);
        }
        testing::run_backward(*node, c.inputs, f, dy, added, add_settings);
        testing::run_backward(*node, c.inputs, f, dy, written, overwrite_settings);
        for (std::size_t k = 0; k < added.size(); ++k) {
          if (added[k].empty()) continue;
          const std::vector<double> a = doubles(added[k]), w = doubles(written[k]);
          for (std::size_t i = 0; i < a.size(); ++i)
            ASSERT_TRUE(a[i] == w[i]) << c.name << ", input " << k << " element " << i << ": added " << a[i]
                                      << ", overwritten " << w[i] << " (threads " << threads
                                      << (all ? ", every input overwritten)" : ", input 0 overwritten)");
        }
      }
  }
}

TEST(OverwrittenGradients, StreamFromHalfTheReportedCacheOr16MiB) {
  const std::size_t machine = stream_lines::stream_bytes();
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  EXPECT_EQ(machine, std::max(std::size_t{16} << 20, llc > 0 ? static_cast<std::size_t>(llc) / 2 : 0));
  stream_lines::set_stream_bytes(4096);
  EXPECT_EQ(stream_lines::stream_bytes(), 4096u);
  stream_lines::set_stream_bytes(0);
  EXPECT_EQ(stream_lines::stream_bytes(), machine);
}

}  // namespace
}  // namespace nodeflow
