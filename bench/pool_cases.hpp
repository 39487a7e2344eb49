#pragma once
// The pooling cases of issue 6 (README "Performance"), shared by pool_bench
// (float32 against oneDNN and a bandwidth bound) and pool_dtype_bench (every
// dtype against the reference kernels).
#include <cstdint>
#include <vector>

#include "core/attributes.hpp"
#include "core/shape.hpp"
#include "nodes/pooling/pool_geometry.hpp"

namespace nodeflow::bench {

struct PoolCase {
  const char* name;
  const char* summary;  ///< the op and its attributes
  PoolKind kind;
  Attributes attrs;
  Shape shape;  ///< NCHW (NCDHW for P5)
};

inline const std::vector<PoolCase>& pool_cases() {
  using ints = std::vector<std::int64_t>;
  static const std::vector<PoolCase> all = {
      {"P1", "MaxPool k3 s2 p1", PoolKind::Max,
       {{"kernel_shape", ints{3, 3}}, {"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}},
       {16, 64, 112, 112}},
      {"P2", "MaxPool k2 s2", PoolKind::Max,
       {{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}},
       {16, 128, 56, 56}},
      {"P3", "AveragePool k3 s1 p1 (count_include_pad=0)", PoolKind::Average,
       {{"kernel_shape", ints{3, 3}}, {"pads", ints{1, 1, 1, 1}},
        {"count_include_pad", std::int64_t{0}}},
       {16, 192, 28, 28}},
      {"P4", "GlobalAveragePool", PoolKind::GlobalAverage, {}, {16, 2048, 7, 7}},
      {"P5", "MaxPool 3D k2 s2", PoolKind::Max,
       {{"kernel_shape", ints{2, 2, 2}}, {"strides", ints{2, 2, 2}}},
       {4, 32, 16, 56, 56}},
      {"P6", "AveragePool k2 s2 ceil_mode", PoolKind::Average,
       {{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}, {"ceil_mode", std::int64_t{1}}},
       {16, 64, 55, 55}},
      {"P7", "MaxPool k3 s1 d2 p2", PoolKind::Max,
       {{"kernel_shape", ints{3, 3}}, {"dilations", ints{2, 2}}, {"pads", ints{2, 2, 2, 2}}},
       {8, 64, 56, 56}},
  };
  return all;
}

}  // namespace nodeflow::bench
