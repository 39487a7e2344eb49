#pragma once
// The oracle of the reduction tests: the reduced slices gathered by plain
// index arithmetic over the whole shape (no plan, no merged axes), and each
// op computed on them in float64.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/attributes.hpp"
#include "core/node.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"
#include "support/gradcheck.hpp"

namespace nodeflow::testing {

/// For each output (row-major over the kept axes), its input elements'
/// flat indices, in row-major order.
inline std::vector<std::vector<std::int64_t>> reduced_slices(const Shape& shape, const std::vector<bool>& reduced) {
  std::int64_t outputs = 1;
  for (std::size_t a = 0; a < shape.size(); ++a)
    if (!reduced[a]) outputs *= shape[a];
  std::vector<std::vector<std::int64_t>> slices(static_cast<std::size_t>(outputs));
  const std::int64_t count = element_count(shape);
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t rest = i, out = 0, place = 1;
    for (std::size_t a = shape.size(); a-- > 0;) {
      const std::int64_t index = rest % shape[a];
      rest /= shape[a];
      if (!reduced[a]) {
        out += index * place;
        place *= shape[a];
      }
    }
    slices[static_cast<std::size_t>(out)].push_back(i);
  }
  return slices;
}

/// The ONNX op applied to one slice's values, in float64.
inline double reference_reduce(const std::string& op, const std::vector<double>& v) {
  const double inf = std::numeric_limits<double>::infinity();
  double r = 0;
  if (op == "ReduceSum" || op == "ReduceMean") {
    for (double e : v) r += e;
    if (op == "ReduceMean") r /= static_cast<double>(v.size());
  } else if (op == "ReduceSumSquare" || op == "ReduceL2") {
    for (double e : v) r += e * e;
    if (op == "ReduceL2") r = std::sqrt(r);
  } else if (op == "ReduceProd") {
    r = 1;
    for (double e : v) r *= e;
  } else if (op == "ReduceMax") {
    r = -inf;
    for (double e : v) r = std::max(r, e);
  } else if (op == "ReduceMin") {
    r = inf;
    for (double e : v) r = std::min(r, e);
  } else if (op == "ReduceLogSumExp") {
    double m = -inf;
    for (double e : v) m = std::max(m, e);
    for (double e : v) r += std::exp(e - m);
    r = m + std::log(r);
  }
  return r;
}

inline const std::vector<std::string>& reduce_ops() {
  static const std::vector<std::string> ops{"ReduceSum", "ReduceMean",      "ReduceProd",
                                            "ReduceMax", "ReduceMin",       "ReduceL2",
                                            "ReduceSumSquare", "ReduceLogSumExp"};
  return ops;
}

/// A seeded sweep case: a shape of rank 0..4 and a set of its axes.
struct ReduceCase {
  Shape shape;
  std::vector<std::int64_t> axes;  ///< as given (some negative); empty: every axis
  std::vector<bool> reduced;
  bool keepdims = true;
};

inline std::vector<ReduceCase> reduce_sweep(std::uint64_t seed, int count, std::int64_t max_dim = 4) {
  std::mt19937_64 rng(seed);
  std::vector<ReduceCase> cases;
  for (int c = 0; c < count; ++c) {
    ReduceCase rc;
    const auto rank = static_cast<std::size_t>(rng() % 5);
    for (std::size_t a = 0; a < rank; ++a) rc.shape.push_back(1 + static_cast<std::int64_t>(rng() % max_dim));
    rc.reduced.assign(rank, false);
    for (std::size_t a = 0; a < rank; ++a)
      if (rng() % 2) {
        rc.reduced[a] = true;
        const auto r = static_cast<std::int64_t>(rank);
        rc.axes.push_back(rng() % 2 ? static_cast<std::int64_t>(a) : static_cast<std::int64_t>(a) - r);
      }
    if (rc.axes.empty()) rc.reduced.assign(rank, true);
    std::shuffle(rc.axes.begin(), rc.axes.end(), rng);
    rc.keepdims = rng() % 2;
    cases.push_back(rc);
  }
  return cases;
}

/// The node's inputs for a case: x and, when the case names axes, the axes tensor.
inline std::vector<Tensor> reduce_inputs(const Tensor& x, const ReduceCase& rc) {
  if (rc.axes.empty()) return {x};
  return {x, Tensor::from<std::int64_t>({static_cast<std::int64_t>(rc.axes.size())}, rc.axes)};
}

inline std::string describe(const ReduceCase& rc) {
  return "shape " + to_string(rc.shape) + ", axes " + to_string(AttrValue{rc.axes}) +
         ", keepdims " + std::to_string(rc.keepdims);
}

/// The output of one inference-mode forward of a lone `op` node on `threads` threads.
inline Tensor run_reduction(const std::string& op, const std::vector<Tensor>& inputs, const Attributes& attrs = {},
                            int threads = 1) {
  auto node = make_node(op, attrs);
  std::vector<Tensor> outputs(1);
  ForwardContext ctx;
  ctx.inputs = inputs;
  ctx.outputs = outputs;
  ctx.threads = threads;
  node->forward(ctx);
  return outputs[0];
}

/// An int64 tensor's values.
inline std::vector<std::int64_t> int64_values(const Tensor& t) {
  const auto v = t.values<std::int64_t>();
  return {v.begin(), v.end()};
}

}  // namespace nodeflow::testing
