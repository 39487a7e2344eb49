// pool_bench: nodeflow's pooling nodes against oneDNN's NCHW pooling and a
// memory-bandwidth probe that moves the same bytes (issue 6), float32, for 1
// and 2 threads. Benchmarks are named CASE/DIRECTION/IMPL/threads:T with
// DIRECTION fwd (inference), train (training-mode forward: MaxPool also
// writes its argmax, int32 offsets within each plane) or bwd, and IMPL nodeflow, onednn or bound. After
// the runs a table gives, per case, direction and thread count, the times
// (the fastest repetition when --benchmark_repetitions > 1: on a shared VM
// other tenants only ever slow a run down, and all three IMPLs of a row are
// measured the same way) and the ratios to oneDNN and to the bound.
//
// The table and the console's "Time" column are wall-clock time ("real_time"
// in --benchmark_out JSON). The benchmarks do not call UseRealTime(), which
// would append "/real_time" to the names; the iteration count then follows
// the main thread's CPU time, which is busy for the whole call in every case
// (it is one of the OpenMP team).
// Before the first timing of a case, its fwd, train and bwd results are
// compared with oneDNN's on the same data; a difference ends the program.
// Like `nodeflow train`, the benchmark keeps freed buffers in the heap
// (keep_freed_buffers_in_heap); --no_heap_tuning measures glibc's default.
//
// What each IMPL times:
//  - nodeflow: Node::forward / Node::backward of the registered node, as the
//    executor calls them: forward allocates its outputs; backward adds into
//    a gradient buffer allocated once (the executor's contract is +=).
//  - onednn: execute() of a oneDNN 2.6 pooling_v2 primitive on preallocated
//    NCHW memory (forward_inference, forward_training with its workspace,
//    backward with that workspace).
//  - bound: every thread reads its share of each array the case must read and
//    writes its share of each array it must write, with the widest vector
//    loads and plain stores: fwd reads X and writes Y; train also writes the
//    saved state, as many bytes as the node saves (MaxPool: its argmax, 4
//    bytes per output; AveragePool saves nothing); bwd reads dY (and the
//    saved state) and reads and writes dX.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "bench/bandwidth_probe.hpp"
#include "bench/fastest_runs.hpp"
#include "bench/heap_tuning_flag.hpp"
#include "bench/pool_cases.hpp"
#include "core/graph.hpp"
#include "core/registry.hpp"
#include "nodes/pooling/fast/pool_fast.hpp"
#include "nodes/pooling/pool_geometry.hpp"

namespace {

using nodeflow::Attributes;
using nodeflow::DType;
using nodeflow::Shape;
using nodeflow::Tensor;

using nodeflow::bench::PoolCase;
using nodeflow::bench::Probe;
using nodeflow::bench::Traffic;
using nodeflow::bench::allocate;
using nodeflow::bench::make_probe;
using nodeflow::bench::run_probe;
using nodeflow::bench::Buffer;
const std::vector<PoolCase>& cases() { return nodeflow::bench::pool_cases(); }

const char* kDirections[] = {"fwd", "train", "bwd"};
const char* kImpls[] = {"nodeflow", "onednn", "bound"};
const int kThreads[] = {1, 2};

// ---- One prepared case: the node, its data, oneDNN's primitives, probes.

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

struct Prepared {
  const PoolCase* def = nullptr;
  std::unique_ptr<nodeflow::Node> node;
  nodeflow::PoolGeometry geometry;
  Tensor x, dy, dx;
  std::vector<Tensor> saved;  // from one training-mode forward
  bool is_max = false;

  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::memory src, dst, diff_dst, diff_src, workspace;
  dnnl::pooling_v2_forward inference, training;
  dnnl::pooling_v2_backward backward;
  std::string onednn_impl[3];

  std::map<std::string, Probe> probes;  // per direction
  std::map<std::string, Traffic> traffic;
};

dnnl::memory::dims dims_of(const Shape& s) { return dnnl::memory::dims(s.begin(), s.end()); }

void fill(std::span<float> v, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (float& f : v) f = d(rng);
}

void build_onednn(Prepared& p) {
  using dnnl::memory;
  const auto& g = p.geometry;
  const std::size_t rank = g.axes.size();
  const auto tag = rank == 2 ? memory::format_tag::nchw : memory::format_tag::ncdhw;
  const memory::desc src_md(dims_of(g.input_shape()), memory::data_type::f32, tag);
  const memory::desc dst_md(dims_of(g.output_shape()), memory::data_type::f32, tag);
  memory::dims strides, kernel, dilation, pad_l, pad_r;
  for (const auto& a : g.axes) {
    strides.push_back(a.stride);
    kernel.push_back(a.kernel);
    dilation.push_back(a.dilation - 1);  // oneDNN counts the holes
    pad_l.push_back(a.pad_begin);
    // ceil_mode is padding on the right as far as the last window reaches.
    pad_r.push_back(a.position(a.out - 1, a.kernel - 1) + 1 - a.in);
  }
  const auto alg = p.is_max ? dnnl::algorithm::pooling_max
                            : (p.def->attrs.count("count_include_pad") &&
                                       std::get<std::int64_t>(p.def->attrs.at("count_include_pad"))
                                   ? dnnl::algorithm::pooling_avg_include_padding
                                   : dnnl::algorithm::pooling_avg_exclude_padding);
  using fwd = dnnl::pooling_v2_forward;
  using bwd = dnnl::pooling_v2_backward;
  const fwd::primitive_desc infer_pd(
      fwd::desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md, strides, kernel,
                dilation, pad_l, pad_r),
      p.engine);
  const fwd::primitive_desc train_pd(
      fwd::desc(dnnl::prop_kind::forward_training, alg, src_md, dst_md, strides, kernel, dilation,
                pad_l, pad_r),
      p.engine);
  const bwd::primitive_desc back_pd(
      bwd::desc(alg, src_md, dst_md, strides, kernel, dilation, pad_l, pad_r), p.engine,
      train_pd);
  p.inference = fwd(infer_pd);
  p.training = fwd(train_pd);
  p.backward = bwd(back_pd);
  p.onednn_impl[0] = infer_pd.impl_info_str();
  p.onednn_impl[1] = train_pd.impl_info_str();
  p.onednn_impl[2] = back_pd.impl_info_str();
  p.src = memory(src_md, p.engine);
  p.dst = memory(dst_md, p.engine);
  p.diff_dst = memory(dst_md, p.engine);
  p.diff_src = memory(src_md, p.engine);
  p.workspace = memory(train_pd.workspace_desc(), p.engine);
  std::memcpy(p.src.get_data_handle(), p.x.raw(), p.x.nbytes());
  std::memcpy(p.diff_dst.get_data_handle(), p.dy.raw(), p.dy.nbytes());
  p.training.execute(p.stream, {{DNNL_ARG_SRC, p.src},
                                {DNNL_ARG_DST, p.dst},
                                {DNNL_ARG_WORKSPACE, p.workspace}});
  p.stream.wait();
}

std::map<std::size_t, std::unique_ptr<Prepared>>& prepared_cases() {
  static std::map<std::size_t, std::unique_ptr<Prepared>> all;
  return all;
}

// Compares `ours` with oneDNN's `theirs` up to `tolerance`, relative to
// magnitudes above 1.
bool same_values(const char* what, const Prepared& p, std::span<const float> ours,
                 const dnnl::memory& theirs_memory, double tolerance) {
  const auto* theirs = static_cast<const float*>(theirs_memory.get_data_handle());
  double worst = 0;
  for (std::size_t i = 0; i < ours.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(ours[i]) - theirs[i]) /
                                std::max(1.0, std::abs(static_cast<double>(theirs[i]))));
  if (worst <= tolerance) return true;
  std::fprintf(stderr, "pool_bench: %s %s: nodeflow and oneDNN differ by up to %g (allowed %g)\n",
               p.def->name, what, worst, tolerance);
  return false;
}

// Every direction of ours against oneDNN's on the same data, once, before
// anything is timed: a wrong oneDNN setup (or a wrong kernel of ours) would
// make the comparison meaningless, so a difference ends the program.
void check_same_results(Prepared& p) {
  using dnnl::memory;
  const std::vector<Tensor> in{p.x};
  std::vector<Tensor> inferred(1), trained(1), saved;
  p.node->forward(nodeflow::ForwardContext{in, inferred, nullptr, 0, nullptr, 2});
  p.node->forward(nodeflow::ForwardContext{in, trained, &saved, 0, nullptr, 2});
  const std::vector<nodeflow::TensorInfo> infos{{DType::Float32, p.x.shape()}};
  const std::vector<Tensor> dys{p.dy};
  std::vector<Tensor> dxs{Tensor(DType::Float32, p.x.shape())};
  std::fill(dxs[0].values<float>().begin(), dxs[0].values<float>().end(), 0.0f);
  p.node->backward(nodeflow::BackwardContext{infos, saved, dys, dxs, 1.0, {}, 2});

  const memory inferred_dst(p.dst.get_desc(), p.engine);
  p.inference.execute(p.stream, {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_DST, inferred_dst}});
  p.training.execute(p.stream, {{DNNL_ARG_SRC, p.src},
                                {DNNL_ARG_DST, p.dst},
                                {DNNL_ARG_WORKSPACE, p.workspace}});
  p.backward.execute(p.stream, {{DNNL_ARG_DIFF_DST, p.diff_dst},
                                {DNNL_ARG_DIFF_SRC, p.diff_src},
                                {DNNL_ARG_WORKSPACE, p.workspace}});
  p.stream.wait();
  // MaxPool values must match bitwise (same winners). Sums may differ in the
  // last bits: averages add in another order, and where MaxPool windows
  // overlap, an input element collects several dy in another order.
  const double values = p.is_max ? 0.0 : 1e-5, gradients = p.is_max ? 1e-6 : 1e-5;
  const bool ok = same_values("fwd", p, inferred[0].values<float>(), inferred_dst, values) &&
                  same_values("train", p, trained[0].values<float>(), p.dst, values) &&
                  same_values("bwd", p, dxs[0].values<float>(), p.diff_src, gradients);
  if (!ok) std::exit(1);
}

Prepared& prepared(std::size_t index) {
  auto& slot = prepared_cases()[index];
  if (slot) return *slot;
  slot = std::make_unique<Prepared>();
  Prepared& p = *slot;
  p.def = &cases()[index];
  p.is_max = p.def->kind == nodeflow::PoolKind::Max;
  const char* op = nodeflow::pool_op_type(p.def->kind);
  const auto* schema = nodeflow::OpRegistry::global().find(op);
  p.node = nodeflow::create_node(*schema, nodeflow::NodeConfig{op, p.def->name, p.def->attrs, true, 1.0});
  p.geometry = nodeflow::pool_geometry(nodeflow::checked_pool_attributes(p.def->kind, p.def->attrs),
                                       p.def->shape);
  p.x = Tensor(DType::Float32, p.geometry.input_shape());
  p.dy = Tensor(DType::Float32, p.geometry.output_shape());
  p.dx = Tensor(DType::Float32, p.geometry.input_shape());
  fill(p.x.values<float>(), 1);
  fill(p.dy.values<float>(), 2);
  std::vector<Tensor> in{p.x}, out(1);
  p.node->forward(nodeflow::ForwardContext{in, out, &p.saved, 0, nullptr, 1});
  build_onednn(p);
  check_same_results(p);

  const auto n_in = static_cast<std::size_t>(numel(p.geometry.input_shape()));
  const auto n_out = static_cast<std::size_t>(numel(p.geometry.output_shape()));
  // The saved state in floats' worth of bytes (the probe moves floats).
  std::size_t n_state = 0;
  for (const Tensor& t : p.saved) n_state += t.nbytes() / sizeof(float);
  p.traffic["fwd"] = {{n_in}, {n_out}, {}};
  p.traffic["train"] = n_state ? Traffic{{n_in}, {n_out, n_state}, {}} : p.traffic["fwd"];
  p.traffic["bwd"] = n_state ? Traffic{{n_state, n_out}, {}, {n_in}} : Traffic{{n_out}, {}, {n_in}};
  for (const char* d : kDirections) p.probes[d] = make_probe(p.traffic[d]);
  return p;
}

// ---- The benchmarks.

void run_nodeflow(benchmark::State& state, Prepared& p, const std::string& dir, int threads) {
  std::vector<Tensor> in{p.x}, out(1);
  const std::vector<nodeflow::TensorInfo> infos{{DType::Float32, p.x.shape()}};
  std::vector<Tensor> dys{p.dy}, dxs{p.dx};
  for (auto _ : state) {
    if (dir == "bwd") {
      p.node->backward(nodeflow::BackwardContext{infos, p.saved, dys, dxs, 1.0, {}, threads});
    } else {
      std::vector<Tensor> saved;
      p.node->forward(nodeflow::ForwardContext{in, out, dir == "train" ? &saved : nullptr, 0,
                                               nullptr, threads});
      benchmark::DoNotOptimize(out[0].raw());
    }
  }
}

void run_onednn(benchmark::State& state, Prepared& p, const std::string& dir, int threads) {
  omp_set_num_threads(threads);
  for (auto _ : state) {
    if (dir == "fwd")
      p.inference.execute(p.stream, {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_DST, p.dst}});
    else if (dir == "train")
      p.training.execute(p.stream, {{DNNL_ARG_SRC, p.src},
                                    {DNNL_ARG_DST, p.dst},
                                    {DNNL_ARG_WORKSPACE, p.workspace}});
    else
      p.backward.execute(p.stream, {{DNNL_ARG_DIFF_DST, p.diff_dst},
                                    {DNNL_ARG_DIFF_SRC, p.diff_src},
                                    {DNNL_ARG_WORKSPACE, p.workspace}});
    p.stream.wait();
  }
}

void run_bound(benchmark::State& state, Prepared& p, const std::string& dir, int threads) {
  const Probe& probe = p.probes.at(dir);
  for (auto _ : state) run_probe(probe, threads);
}

// ---- The table.

class TableReporter : public nodeflow::bench::FastestRuns {
 public:
  void print_table() const {
    std::printf("\nPooling, float32, NCHW: fastest repetition's real time per call (ms)\n");
    std::printf("%-4s %-5s %2s %10s %10s %10s %9s %9s  %s\n", "case", "dir", "T", "nodeflow",
                "oneDNN", "bound", "nf/oneDNN", "nf/bound", "target");
    for (const PoolCase& c : cases())
      for (const char* dir : kDirections)
        for (int t : kThreads) {
          const double nf = get(c.name, dir, "nodeflow", t);
          const double dn = get(c.name, dir, "onednn", t);
          const double bd = get(c.name, dir, "bound", t);
          if (nf <= 0) continue;
          // Targets: 2 threads: nf <= oneDNN and nf/bound <= 1.5 (fwd) or 2.0;
          // 1 thread: the same within 25%.
          const double slack = t == 1 ? 1.25 : 1.0;
          const double limit = (std::string(dir) == "fwd" ? 1.5 : 2.0) * slack;
          const bool vs_onednn = dn <= 0 || nf <= dn * slack;
          const bool vs_bound = bd <= 0 || nf / bd <= limit;
          std::printf("%-4s %-5s %2d %10.3f %10.3f %10.3f %9.2f %9.2f  %s%s\n", c.name, dir, t, nf,
                      dn, bd, dn > 0 ? nf / dn : 0.0, bd > 0 ? nf / bd : 0.0,
                      vs_onednn ? "" : "slower than oneDNN ", vs_bound ? "" : "above bound limit");
        }
  }

 private:
  double get(const std::string& c, const std::string& dir, const std::string& impl, int t) const {
    return ms(c + "/" + dir + "/" + impl + "/threads:" + std::to_string(t));
  }
};

}  // namespace

int main(int argc, char** argv) {
  argc = nodeflow::bench::apply_heap_tuning_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (std::size_t i = 0; i < cases().size(); ++i)
    for (const char* dir : kDirections)
      for (const char* impl : kImpls)
        for (int t : kThreads) {
          const std::string name = std::string(cases()[i].name) + "/" + dir + "/" + impl +
                                   "/threads:" + std::to_string(t);
          const std::string d = dir, which = impl;
          benchmark::RegisterBenchmark(name.c_str(),
                                       [i, d, which, t](benchmark::State& state) {
                                         Prepared& p = prepared(i);
                                         if (which == "nodeflow")
                                           run_nodeflow(state, p, d, t);
                                         else if (which == "onednn")
                                           run_onednn(state, p, d, t);
                                         else
                                           run_bound(state, p, d, t);
                                       })
              ->Unit(benchmark::kMillisecond)
              ->ComputeStatistics("min", nodeflow::bench::fastest);
        }
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nnodeflow kernels: %s; oneDNN %d.%d.%d\n",
              nodeflow::pool_impl_name(nodeflow::pool_impl()), dnnl_version()->major,
              dnnl_version()->minor, dnnl_version()->patch);
  for (const auto& [i, p] : prepared_cases())
    std::printf("%s %s, %s; oneDNN fwd/train/bwd: %s / %s / %s\n", p->def->name,
                p->def->summary, nodeflow::to_string(p->def->shape).c_str(),
                p->onednn_impl[0].c_str(), p->onednn_impl[1].c_str(), p->onednn_impl[2].c_str());
  reporter.print_table();
  benchmark::Shutdown();
  return 0;
}
