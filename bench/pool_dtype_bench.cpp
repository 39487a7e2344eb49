// pool_dtype_bench: the pooling nodes in every dtype they accept against the
// reference kernels (nodes/pooling/reference/pool_kernels.hpp), which issue 6 keeps as the
// oracle: the fast kernels must not be slower than them for float64, float16,
// bfloat16, int8 and uint8 (float32 is here too, for scale). One thread: the
// reference kernels run on one.
//
// Cases: pool_bench's P1-P7 with a batch of 2 (the reference kernels take up
// to a second per call on the full ones), and LpPool p=2 and p=3 on P1's
// geometry (p > 2 runs pow, which only the portable kernels have). Benchmarks
// are named DTYPE/CASE/DIRECTION/IMPL/threads:1 with DIRECTION fwd, train
// (training-mode forward) or bwd (the float dtypes only: int8 and uint8 are
// not differentiable) and IMPL nodeflow or reference, e.g.
// float16/P3/bwd/reference/threads:1. A table after the runs gives both times
// and their ratio per row, flagging nodeflow more than 5% slower (kNoise).
// Before a case is timed, its results from both kernels are compared (MaxPool
// bitwise, sums within the dtype's rounding); a difference ends the program.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "bench/fastest_runs.hpp"
#include "bench/heap_tuning_flag.hpp"
#include "bench/pool_cases.hpp"
#include "core/graph.hpp"
#include "core/registry.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"

namespace {

using nodeflow::DType;
using nodeflow::Tensor;
using nodeflow::bench::PoolCase;

const char* kDirections[] = {"fwd", "train", "bwd"};
const char* kImpls[] = {"nodeflow", "reference"};
// Rows that run the reference kernels on purpose (float64 sums over disjoint
// windows with one thread: nodes/pooling/fast/pool_fast.cpp) time the same code twice,
// which on this shared machine differs by up to a few percent.
constexpr double kNoise = 1.05;
const DType kDTypes[] = {DType::Float32, DType::Float64, DType::Float16,
                         DType::BFloat16, DType::Int8,    DType::UInt8};

const std::vector<PoolCase>& cases() {
  static const std::vector<PoolCase> all = [] {
    std::vector<PoolCase> c = nodeflow::bench::pool_cases();
    for (PoolCase& one : c) one.shape[0] = 2;
    const PoolCase p1 = c.front();  // a copy: push_back below reallocates
    for (std::int64_t p : {2, 3}) {
      PoolCase lp = p1;
      lp.name = p == 2 ? "L2" : "L3";
      lp.summary = p == 2 ? "LpPool p=2 k3 s2 p1" : "LpPool p=3 k3 s2 p1";
      lp.kind = nodeflow::PoolKind::Lp;
      lp.attrs["p"] = p;
      c.push_back(lp);
    }
    return c;
  }();
  return all;
}

bool runs(const PoolCase& c, DType t, const std::string& dir) {
  const bool integer = t == DType::Int8 || t == DType::UInt8;
  if (integer) return c.kind == nodeflow::PoolKind::Max && dir == "fwd";
  return true;
}

/// Makes the reference kernels (or the fast ones) run for one scope.
class ImplScope {
 public:
  explicit ImplScope(nodeflow::PoolImpl impl) : before_(nodeflow::pool_impl()) {
    nodeflow::set_pool_impl(impl);
  }
  ~ImplScope() { nodeflow::set_pool_impl(before_); }
  ImplScope(const ImplScope&) = delete;
  ImplScope& operator=(const ImplScope&) = delete;

 private:
  nodeflow::PoolImpl before_;
};

struct Prepared {
  std::unique_ptr<nodeflow::Node> node;
  Tensor x, dy, dx;
  std::vector<Tensor> saved;  // from one training-mode forward (fast kernels)
};

void fill(Tensor& t, unsigned seed) {
  std::mt19937 rng(seed);
  nodeflow::visit_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T>) {
      std::uniform_int_distribution<std::int64_t> d(std::numeric_limits<T>::min(),
                                           std::numeric_limits<T>::max());
      for (T& v : t.values<T>()) v = static_cast<T>(d(rng));
    } else {
      std::uniform_real_distribution<float> d(-1.0f, 1.0f);
      for (T& v : t.values<T>()) v = static_cast<T>(d(rng));
    }
  });
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out;
  nodeflow::visit_dtype(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    for (const T& v : t.values<T>()) out.push_back(static_cast<double>(v));
  });
  return out;
}

struct Results {
  Tensor y, dx;
};

Results run_once(Prepared& p, DType t, nodeflow::PoolImpl impl) {
  const ImplScope scope(impl);
  const std::vector<Tensor> in{p.x};
  std::vector<Tensor> out(1), saved;
  p.node->forward(nodeflow::ForwardContext{in, out, &saved, 0, nullptr, 1});
  Results r{out[0], {}};
  if (!nodeflow::is_float(t)) return r;
  const std::vector<nodeflow::TensorInfo> infos{{t, p.x.shape()}};
  const std::vector<Tensor> dys{p.dy};
  std::vector<Tensor> dxs{Tensor(t, p.x.shape())};
  p.node->backward(nodeflow::BackwardContext{infos, saved, dys, dxs, 1.0, {}, 1});
  r.dx = dxs[0];
  return r;
}

// The sums' tolerance: a few roundings of the dtype, relative to magnitudes above 1.
double tolerance(DType t, bool is_max) {
  if (is_max) return 0.0;
  switch (t) {
    case DType::Float64:
      return 1e-12;
    case DType::Float16:
      return 4e-3;
    case DType::BFloat16:
      return 3e-2;
    default:
      return 1e-5;
  }
}

bool same(const char* what, const std::string& label, const Tensor& ours, const Tensor& theirs,
          double allowed) {
  const auto a = as_doubles(ours), b = as_doubles(theirs);
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1.0, std::abs(b[i])));
  }
  if (a.size() == b.size() && worst <= allowed) return true;
  std::fprintf(stderr, "pool_dtype_bench: %s %s: fast and reference kernels differ by up to %g (allowed %g)\n",
               label.c_str(), what, worst, allowed);
  return false;
}

Prepared& prepared(std::size_t case_index, DType t) {
  static std::map<std::tuple<std::size_t, DType>, std::unique_ptr<Prepared>> all;
  auto& slot = all[{case_index, t}];
  if (slot) return *slot;
  slot = std::make_unique<Prepared>();
  Prepared& p = *slot;
  const PoolCase& c = cases()[case_index];
  const char* op = nodeflow::pool_op_type(c.kind);
  p.node = nodeflow::create_node(*nodeflow::OpRegistry::global().find(op),
                                 nodeflow::NodeConfig{op, c.name, c.attrs, true, 1.0});
  const auto g = nodeflow::pool_geometry(nodeflow::checked_pool_attributes(c.kind, c.attrs), c.shape);
  p.x = Tensor(t, g.input_shape());
  p.dy = Tensor(t, g.output_shape());
  fill(p.x, 1);
  fill(p.dy, 2);
  const std::string label = std::string(nodeflow::dtype_name(t)) + "/" + c.name;
  const bool is_max = c.kind == nodeflow::PoolKind::Max;
  const Results fast = run_once(p, t, nodeflow::pool_impl());
  const Results reference = run_once(p, t, nodeflow::PoolImpl::Reference);
  if (!same("forward", label, fast.y, reference.y, tolerance(t, is_max)) ||
      (nodeflow::is_float(t) &&
       !same("backward", label, fast.dx, reference.dx, tolerance(t, false))))
    std::exit(1);
  if (nodeflow::is_float(t)) {
    p.dx = Tensor(t, g.input_shape());
    std::vector<Tensor> out(1);
    const std::vector<Tensor> in{p.x};
    p.node->forward(nodeflow::ForwardContext{in, out, &p.saved, 0, nullptr, 1});
  }
  return p;
}

void run(benchmark::State& state, std::size_t case_index, DType t, const std::string& dir,
         nodeflow::PoolImpl impl) {
  Prepared& p = prepared(case_index, t);
  const ImplScope scope(impl);
  const std::vector<Tensor> in{p.x};
  std::vector<Tensor> out(1);
  const std::vector<nodeflow::TensorInfo> infos{{t, p.x.shape()}};
  const std::vector<Tensor> dys{p.dy};
  std::vector<Tensor> dxs{p.dx};
  for (auto _ : state) {
    if (dir == "bwd") {
      p.node->backward(nodeflow::BackwardContext{infos, p.saved, dys, dxs, 1.0, {}, 1});
    } else {
      std::vector<Tensor> saved;
      p.node->forward(nodeflow::ForwardContext{in, out, dir == "train" ? &saved : nullptr, 0,
                                               nullptr, 1});
      benchmark::DoNotOptimize(out[0].raw());
    }
  }
}

std::string name_of(DType t, const PoolCase& c, const char* dir, const char* impl) {
  return std::string(nodeflow::dtype_name(t)) + "/" + c.name + "/" + dir + "/" + impl +
         "/threads:1";
}

void print_table(const nodeflow::bench::FastestRuns& times) {
  std::printf("\nPooling nodes against the reference kernels, 1 thread: fastest repetition's "
              "real time per call (ms)\n");
  std::printf("%-8s %-4s %-5s %10s %10s %8s\n", "dtype", "case", "dir", "nodeflow", "reference",
              "nf/ref");
  int rows = 0, slower = 0;
  double worst = 0;
  for (DType t : kDTypes)
    for (const PoolCase& c : cases())
      for (const char* dir : kDirections) {
        const double nf = times.ms(name_of(t, c, dir, "nodeflow"));
        const double ref = times.ms(name_of(t, c, dir, "reference"));
        if (nf <= 0 || ref <= 0) continue;
        ++rows;
        const bool behind = nf > ref * kNoise;
        slower += behind;
        worst = std::max(worst, nf / ref);
        std::printf("%-8s %-4s %-5s %10.3f %10.3f %8.3f%s\n",
                    std::string(nodeflow::dtype_name(t)).c_str(), c.name, dir, nf, ref, nf / ref,
                    behind ? "  slower than the reference" : "");
      }
  std::printf("%d rows; %d slower than the reference by more than %.0f%%; largest "
              "nodeflow/reference ratio %.3f\n",
              rows, slower, (kNoise - 1) * 100, worst);
}

}  // namespace

int main(int argc, char** argv) {
  argc = nodeflow::bench::apply_heap_tuning_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (DType t : kDTypes)
    for (std::size_t i = 0; i < cases().size(); ++i)
      for (const char* dir : kDirections) {
        if (!runs(cases()[i], t, dir)) continue;
        for (const char* impl : kImpls) {
          const auto which = std::string(impl) == "reference" ? nodeflow::PoolImpl::Reference
                                                              : nodeflow::pool_impl();
          const std::string d = dir;
          benchmark::RegisterBenchmark(name_of(t, cases()[i], dir, impl).c_str(),
                                       [i, t, d, which](benchmark::State& state) {
                                         run(state, i, t, d, which);
                                       })
              ->Unit(benchmark::kMillisecond)
              ->ComputeStatistics("min", nodeflow::bench::fastest);
        }
      }
  nodeflow::bench::FastestRuns reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nnodeflow kernels: %s (the other dtypes: portable)\n",
              nodeflow::pool_impl_name(nodeflow::pool_impl()));
  for (const PoolCase& c : cases())
    std::printf("%s %s, %s\n", c.name, c.summary, nodeflow::to_string(c.shape).c_str());
  print_table(reporter);
  benchmark::Shutdown();
  return 0;
}
