#include "support/generated_graphs.hpp"

#include <bit>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/graph_builder.hpp"

namespace nodeflow::testing {
namespace {

using Ints = std::vector<std::int64_t>;

Attributes same_size_window() {
  return {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 1}}, {"pads", Ints{1, 1, 1, 1}}};
}

template <typename T>
Tensor random_tensor(Shape shape, std::mt19937& rng, bool specials) {
  Tensor t(dtype_of_v<T>, std::move(shape));
  std::uniform_real_distribution<T> value(-2, 2);
  for (T& v : t.values<T>()) v = value(rng);
  auto values = t.values<T>();
  if (values.size() >= 4) {
    values[0] = -T(0);
    values[1] = std::numeric_limits<T>::denorm_min();
    values[2] = std::numeric_limits<T>::min() / T(3);  // a subnormal with many bits set
  }
  if (specials && values.size() >= 6) {
    values[3] = std::numeric_limits<T>::quiet_NaN();
    values[4] = -std::numeric_limits<T>::infinity();
    values[5] = std::numeric_limits<T>::max();
  }
  return t;
}

}  // namespace

GraphDef pooling_graph(Topology topology, std::size_t nodes) {
  GraphBuilder b(topology == Topology::Chain ? "pooling_chain" : "pooling_fanout");
  b.add_input("x", DType::Float32, {1, 1, 8, 8});
  static const char* const kOps[] = {"AveragePool", "MaxPool", "LpPool"};
  std::string previous = "x";
  for (std::size_t i = 0; i < nodes; ++i) {
    NodeDef n;
    n.op_type = kOps[i % 3];
    n.name = "pool" + std::to_string(i);
    n.inputs = {topology == Topology::Chain ? previous : "x"};
    n.attributes = same_size_window();
    n.specified_outputs_name = std::vector<std::string>{n.name};  // MaxPool: no Indices
    previous = b.add_node(std::move(n)).front();
    if (topology == Topology::FanOut) b.add_output(previous);
  }
  if (topology == Topology::Chain) b.add_output(previous);
  return b.def();
}

GraphDef mixed_pooling_graph(std::size_t nodes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  GraphBuilder b("mixed \"pooling\" graph \xc3\xa9");
  b.add_input("x", DType::Float32, {kDynamicDim, 2, 6, 6});
  b.add_input("x64", DType::Float64, {kDynamicDim, 1, 5, 5});
  b.add_initializer("w_small", random_tensor<float>({1, 2, 6, 6}, rng, false), true);
  b.add_initializer("w_nan", random_tensor<float>({1, 2, 6, 6}, rng, true));
  b.add_initializer("w_tiny", random_tensor<float>({1, 2, 2, 2}, rng, false), true);
  b.add_initializer("w64_small", random_tensor<double>({1, 1, 2, 2}, rng, false), true);
  b.add_initializer("w64_special", random_tensor<double>({1, 1, 5, 5}, rng, true));
  b.add_initializer("shape_i64", Tensor::from<std::int64_t>({4}, {1, 2, 6, 6}));

  // Tensors of the two shapes that every same-size node keeps.
  std::vector<std::string> f32 = {"x"};
  std::vector<std::string> f64 = {"x64"};
  std::vector<std::string> leaves;
  auto recent = [&](const std::vector<std::string>& v) {
    return v[v.size() - 1 - pick(std::min<std::size_t>(v.size(), 6))];
  };

  for (std::size_t i = 0; b.def().nodes.size() < nodes; ++i) {
    NodeDef n;
    n.name = "n" + std::to_string(i);
    n.training = pick(5) != 0;
    static const double kLda[] = {1.0, 0.5, 0.25, 3.0};
    n.lda_coeff = kLda[pick(4)];
    const bool wide = pick(4) == 0;
    std::vector<std::string>& family = wide ? f64 : f32;
    n.inputs = {recent(family)};
    n.attributes = same_size_window();
    switch (pick(8)) {
      case 0:
        n.op_type = "AveragePool";
        n.attributes["count_include_pad"] = std::int64_t{1};
        break;
      case 1:
        n.op_type = "AveragePool";
        n.attributes = {{"kernel_shape", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}};
        break;
      case 2:
        n.op_type = "LpPool";
        n.attributes["p"] = std::int64_t{3};
        break;
      case 3:
        n.op_type = "MaxPool";
        n.attributes["dilations"] = Ints{1, 1};
        break;
      case 4: {
        // MaxPool with Indices, then MaxUnpool back to the same shape; on the
        // batch-1 weight, with the constant output_shape input too.
        const bool constant_shape = !wide && pick(3) == 0;
        if (constant_shape) n.inputs = {"w_small"};
        n.op_type = "MaxPool";
        n.specified_outputs_name = std::vector<std::string>{n.name + "/y", n.name + "/indices"};
        const auto outs = b.add_node(n);
        NodeDef u;
        u.op_type = "MaxUnpool";
        u.name = n.name + "_unpool";
        u.inputs = {outs[0], outs[1]};
        u.attributes = same_size_window();
        u.lda_coeff = 0.5;
        if (constant_shape) {
          u.inputs.push_back("shape_i64");
          leaves.push_back(b.add_node(std::move(u)).front());
        } else {
          family.push_back(b.add_node(std::move(u)).front());
        }
        continue;
      }
      case 5:
        n.op_type = pick(2) ? "GlobalAveragePool" : "GlobalMaxPool";
        n.attributes.clear();
        leaves.push_back(b.add_node(std::move(n)).front());
        continue;
      case 6:
        // Pooling a weight: trainable and constant initializers as inputs.
        n.op_type = "AveragePool";
        static const char* const kWeights[] = {"w_small", "w_nan", "w_tiny"};
        n.inputs = {wide ? (pick(2) ? "w64_special" : "w64_small") : kWeights[pick(3)]};
        leaves.push_back(b.add_node(std::move(n)).front());
        continue;
      default:
        n.op_type = "MaxPool";
        n.attributes["storage_order"] = static_cast<std::int64_t>(pick(2));
        break;
    }
    family.push_back(b.add_node(std::move(n)).front());
  }
  b.add_output(f32.back());
  b.add_output(f64.back());
  for (std::size_t i = 0; i < leaves.size(); i += 7) b.add_output(leaves[i]);
  return b.def();
}

TensorMap generated_feeds(const GraphDef& def) {
  TensorMap feeds;
  for (const auto& in : def.inputs) {
    Shape shape = in.info.shape;
    for (auto& d : shape)
      if (d == kDynamicDim) d = 2;
    Tensor t(in.info.dtype, shape);
    visit_float_dtype(in.info.dtype, [&](auto tag) {
      using T = decltype(tag);
      auto values = t.values<T>();
      // Distinct values (no ties for MaxPool to break differently).
      for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = static_cast<T>(static_cast<float>((i * 7919) % 1009) / 64.0f - 7.0f);
    });
    feeds.emplace(in.name, std::move(t));
  }
  return feeds;
}

}  // namespace nodeflow::testing
