#pragma once
// Every header the kernel pieces (pool_kernels.hpp and the files it lists)
// use from outside them. An instruction-set file includes this before its
// target switch: what these headers define is compiled for every CPU, and
// only the kernels themselves for that instruction set.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "nodes/pooling/fast/pool_fast_plan.hpp"
#include "nodes/pooling/fast/pool_fast_simd.hpp"
