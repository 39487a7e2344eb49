#include "core/executor.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

#include "core/accumulate.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"

namespace nodeflow {
namespace {

// A zeroed gradient buffer (zero_fill, on the executor's threads).
Tensor zeroed(DType dtype, const Shape& shape, int threads) {
  Tensor t = Tensor::uninitialized(dtype, shape);
  zero_fill(t, threads);
  return t;
}

/// The dtype a gradient sum of a tensor of `dtype` is kept in: float32 for
/// float16 and bfloat16, whose rounding would otherwise add up over the
/// consumers of a tensor (docs/operators.md, "Choices where ONNX is silent").
DType sum_dtype(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 ? DType::Float32 : dtype;
}

std::string step_path(const Graph& g, const Graph::Step& s) {
  return "nodes[" + std::to_string(s.def_index) + "] (" + g.def().nodes[s.def_index].name + ")";
}

// Refuses output k of `step` of `info` (a static shape) over `limit` bytes, before it exists.
void check_output_bytes(const Graph& g, const Graph::Step& step, std::size_t k,
                        const TensorInfo& info, std::uint64_t limit) {
  check_tensor_bytes(step_path(g, step) + ": output '" + step.outputs[k] + "'", info.shape, info.dtype,
                     limit);
}

// Shape inference for the run's actual inputs, so that an output too large for
// the limit is refused before the node allocates it. Every input's value is
// known now, so every one is a constant to infer (Reshape's shape, MaxUnpool's
// output_shape, whatever their source).
class RunTimeInference {
 public:
  void check(const Graph& g, const Graph::Step& step, const std::vector<Tensor>& in,
             std::uint64_t limit) {
    infos_.clear();
    ctx_.inputs.clear();
    ctx_.constants.clear();
    ctx_.num_outputs = step.outputs.size();
    for (const Tensor& t : in)
      infos_.push_back(t.empty() ? TensorInfo{} : TensorInfo{t.dtype(), t.shape()});
    for (std::size_t k = 0; k < in.size(); ++k) {
      ctx_.inputs.push_back(in[k].empty() ? nullptr : &infos_[k]);
      ctx_.constants.push_back(in[k].empty() ? nullptr : &in[k]);
    }
    const std::vector<TensorInfo> out =
        detail::infer_node(*step.node, ctx_, step.inputs, [&] { return step_path(g, step); });
    // Graph's constructor checked the output count. A shape that inference
    // cannot tell even now (data-dependent) is checked once the node has
    // made it (Workspace::store).
    for (std::size_t k = 0; k < step.outputs.size() && k < out.size(); ++k)
      if (is_static(out[k].shape)) check_output_bytes(g, step, k, out[k], limit);
  }

 private:
  std::vector<TensorInfo> infos_;
  InferContext ctx_;
};

// A run-time input must have the declared dtype and fit the declared shape
// (dynamic dimensions are free).
void check_feeds(const Graph& g, const TensorMap& feeds) {
  std::set<std::string> declared;
  for (const GraphInput& in : g.def().inputs) {
    declared.insert(in.name);
    auto it = feeds.find(in.name);
    if (it == feeds.end() || it->second.empty())
      throw InvalidGraph("graph input '" + in.name + "' is missing");
    const Tensor& t = it->second;
    if (t.dtype() != in.info.dtype)
      throw UnsupportedDType("graph input '" + in.name + "': expected dtype " +
                             std::string(dtype_name(in.info.dtype)) + ", got " +
                             std::string(dtype_name(t.dtype())));
    bool fits = t.rank() == in.info.shape.size();
    for (std::size_t a = 0; fits && a < t.rank(); ++a)
      fits = in.info.shape[a] == kDynamicDim || in.info.shape[a] == t.shape()[a];
    if (!fits)
      throw ShapeMismatch("graph input '" + in.name + "': expected shape " +
                          to_string(in.info.shape) + ", got " + to_string(t.shape()));
  }
  for (const auto& [name, t] : feeds)
    if (!declared.count(name)) throw InvalidGraph("'" + name + "' is not a graph input");
}

// Tensors of one pass by slot, each freed once its last reader has run.
class Workspace {
 public:
  Workspace(const Graph& g, const TensorMap& feeds, const std::vector<std::size_t>& reads,
            std::uint64_t max_tensor_bytes)
      : graph_(g), values_(g.tensor_count()), remaining_(reads), max_tensor_bytes_(max_tensor_bytes) {
    const auto& inputs = g.def().inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) values_[i] = feeds.find(inputs[i].name)->second;
    for (std::size_t i = 0; i < g.def().initializers.size(); ++i)
      values_[inputs.size() + i] = g.def().initializers[i].value;
  }

  void gather_inputs(const Graph::Step& step, std::vector<Tensor>& in) const {
    in.clear();
    for (std::size_t s : step.input_slots) in.push_back(s == Graph::kAbsent ? Tensor{} : values_[s]);
  }

  void store(const Graph::Step& step, std::vector<Tensor>& outputs) {
    for (std::size_t k = 0; k < step.outputs.size(); ++k) {
      const std::size_t slot = step.output_slots[k];
      const TensorInfo& want = graph_.tensor_info(slot);
      const Tensor& got = outputs[k];
      bool ok = !got.empty() && got.dtype() == want.dtype && got.rank() == want.shape.size();
      for (std::size_t a = 0; ok && a < got.rank(); ++a)
        ok = want.shape[a] == kDynamicDim || want.shape[a] == got.shape()[a];
      if (!ok)
        throw RunError(step_path(graph_, step) + ": output '" + step.outputs[k] + "' has dtype " +
                       std::string(dtype_name(got.dtype())) + " and shape " +
                       to_string(got.shape()) + ", inferred " + std::string(dtype_name(want.dtype)) +
                       " " + to_string(want.shape));
      // Too late to spare the memory, but the limit holds for every tensor a
      // run keeps, including one whose size no inference could tell in advance.
      check_output_bytes(graph_, step, k, TensorInfo{got.dtype(), got.shape()}, max_tensor_bytes_);
      if (remaining_[slot] > 0) values_[slot] = std::move(outputs[k]);  // else nobody reads it
    }
  }

  // Drops the step's inputs that no later node reads (graph outputs stay).
  void release_inputs(const Graph::Step& step) {
    for (std::size_t s : step.input_slots)
      if (s != Graph::kAbsent && --remaining_[s] == 0) values_[s] = Tensor{};
  }

  // Hands the graph outputs over (the workspace is done). `by_name` lists their
  // positions sorted by name, so the map is filled in order, each insertion at
  // its end; a name listed twice keeps its first, whole value.
  TensorMap take_outputs(const std::vector<std::size_t>& by_name) {
    TensorMap out;
    const auto& names = graph_.def().outputs;
    for (std::size_t k : by_name) {
      const std::size_t slot = graph_.output_slots()[k];
      if (out.empty() || out.rbegin()->first != names[k])
        out.emplace_hint(out.end(), names[k], std::move(values_[slot]));
    }
    return out;
  }

 private:
  const Graph& graph_;
  std::vector<Tensor> values_;
  std::vector<std::size_t> remaining_;  ///< readers still to run; graph outputs one more
  std::uint64_t max_tensor_bytes_;
};

// One forward pass; `run` non-null in training mode.
// splitmix64: decorrelates the per-node seeds derived from one run seed.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

TensorMap forward_pass(const Graph& g, const detail::ExecutionPlan& plan, const TensorMap& feeds,
                       TrainingRun* run, std::vector<std::vector<Tensor>>* saved,
                       std::vector<std::vector<TensorInfo>>* input_infos, std::uint64_t seed,
                       TensorMap* updates, const ExecutorOptions& options) {
  check_feeds(g, feeds);
  Workspace ws(g, feeds, plan.reads, options.max_tensor_bytes);
  RunTimeInference inference;
  std::vector<Tensor> in;
  std::vector<Tensor> out;
  for (std::size_t s = 0; s < g.steps().size(); ++s) {
    const Graph::Step& step = g.steps()[s];
    ws.gather_inputs(step, in);
    if (plan.infer_at_run[s]) inference.check(g, step, in, options.max_tensor_bytes);
    out.assign(step.outputs.size(), Tensor{});
    const bool keep = run != nullptr && step.node->config().training;
    std::vector<std::pair<std::size_t, Tensor>> node_updates;
    ForwardContext ctx{in, out, keep ? &(*saved)[s] : nullptr, mix(seed ^ mix(s)),
                       keep ? &node_updates : nullptr, options.threads, options.max_tensor_bytes};
    with_lazy_context([&] { return step_path(g, step); }, [&] { step.node->forward(ctx); });
    for (auto& [k, value] : node_updates) {
      const Initializer* init =
          k < step.input_slots.size() ? g.initializer_at(step.input_slots[k]) : nullptr;
      if (init == nullptr || init->trainable)
        throw RunError(step_path(g, step) + ": input " + std::to_string(k) +
                       " is not a non-trainable initializer and cannot be updated");
      (*updates)[init->name] = std::move(value);
    }
    if (input_infos)
      for (const Tensor& t : in)
        (*input_infos)[s].push_back(t.empty() ? TensorInfo{} : TensorInfo{t.dtype(), t.shape()});
    ws.store(step, out);
    in.clear();  // before the release, so the inputs' buffers go now
    ws.release_inputs(step);
  }
  return ws.take_outputs(plan.outputs_by_name);
}

}  // namespace

const std::vector<Tensor>& TrainingRun::saved(const std::string& node_name) const {
  if (graph_ == nullptr) throw RunError("this TrainingRun holds no training-mode forward");
  for (std::size_t s = 0; s < graph_->steps().size(); ++s)
    if (graph_->steps()[s].node->name() == node_name) return saved_[s];
  throw RunError("node '" + node_name + "' is not in the graph");
}

Executor::Executor(const Graph& graph, ExecutorOptions options)
    : graph_(graph), options_(options) {
  if (options_.threads < 1)
    throw InvalidAttribute("ExecutorOptions.threads must be >= 1, got " +
                           std::to_string(options_.threads));
  plan_.reads.assign(graph.tensor_count(), 0);
  for (const Graph::Step& step : graph.steps())
    for (std::size_t s : step.input_slots)
      if (s != Graph::kAbsent) ++plan_.reads[s];
  for (std::size_t s : graph.output_slots()) ++plan_.reads[s];
  const auto& names = graph.def().outputs;
  plan_.outputs_by_name.resize(names.size());
  std::iota(plan_.outputs_by_name.begin(), plan_.outputs_by_name.end(), std::size_t{0});
  std::stable_sort(plan_.outputs_by_name.begin(), plan_.outputs_by_name.end(),
                   [&](std::size_t a, std::size_t b) { return names[a] < names[b]; });
  // Outputs whose shape the graph fixes are refused now rather than after the
  // nodes before them have run; the others wait for the run's shapes.
  plan_.infer_at_run.assign(graph.steps().size(), 0);
  for (std::size_t s = 0; s < graph.steps().size(); ++s) {
    const Graph::Step& step = graph.steps()[s];
    for (std::size_t k = 0; k < step.outputs.size(); ++k) {
      const TensorInfo& info = graph.tensor_info(step.output_slots[k]);
      if (is_static(info.shape))
        check_output_bytes(graph, step, k, info, options_.max_tensor_bytes);
      else
        plan_.infer_at_run[s] = 1;
    }
  }
}

TensorMap Executor::run(const TensorMap& feeds, std::uint64_t seed) const {
  return forward_pass(graph_, plan_, feeds, nullptr, nullptr, nullptr, seed, nullptr, options_);
}

TrainingRun Executor::forward(const TensorMap& feeds, std::uint64_t seed) const {
  TrainingRun r;
  r.graph_ = &graph_;
  r.saved_.resize(graph_.steps().size());
  r.input_infos_.resize(graph_.steps().size());
  r.outputs_ =
      forward_pass(graph_, plan_, feeds, &r, &r.saved_, &r.input_infos_, seed, &r.updates_, options_);
  r.feeds_ = feeds;
  return r;
}

TensorMap Executor::backward(TrainingRun& run, const TensorMap& grad_outputs, bool input_gradients) const {
  if (run.graph_ == nullptr)
    throw RunError("backward needs a training-mode forward first (Executor::forward)");
  if (run.graph_ != &graph_) throw RunError("backward: the TrainingRun belongs to another graph");
  if (run.consumed_)
    throw RunError("backward was already run on this TrainingRun (its state is released)");
  const Graph& g = graph_;

  // Which tensors a gradient must reach: float graph inputs and trainable
  // initializers, and every output of a training node that reads one of them.
  std::set<std::string> wanted;
  TensorMap grads;
  for (const GraphInput& in : g.def().inputs)
    if (input_gradients && is_float(in.info.dtype)) {
      wanted.insert(in.name);
      const Tensor& x = run.feeds_.at(in.name);
      grads[in.name] = zeroed(x.dtype(), x.shape(), options_.threads);
    }
  for (const Initializer& init : g.def().initializers)
    if (init.trainable) {
      wanted.insert(init.name);
      grads[init.name] = zeroed(init.value.dtype(), init.value.shape(), options_.threads);
    }
  const TensorMap leaves = grads;
  for (const auto& step : g.steps()) {
    if (!step.node->config().training) continue;
    bool reads_wanted = false;
    for (const auto& t : step.inputs) reads_wanted = reads_wanted || wanted.count(t) > 0;
    if (reads_wanted)
      for (const auto& out : step.outputs)
        if (is_float(g.info(out).dtype)) wanted.insert(out);
  }

  // Seeds: graph outputs only, of their dtype and run-time shape.
  for (const auto& entry : grad_outputs) {
    // Named references, not a structured binding: clang before 16 (a fuzz
    // build's compiler) cannot capture bindings in the lambda below.
    const std::string& name = entry.first;
    const Tensor& seed = entry.second;
    const auto& outs = g.def().outputs;
    if (std::find(outs.begin(), outs.end(), name) == outs.end())
      throw InvalidGraph("gradient given for '" + name + "', which is not a graph output");
    const Tensor& y = run.outputs_.at(name);
    if (!is_float(y.dtype()))
      throw UnsupportedDType("gradient given for output '" + name + "' of dtype " +
                             std::string(dtype_name(y.dtype())) + " (not differentiable)");
    // The classes and wording of a wrong feed (check_feeds).
    if (seed.dtype() != y.dtype())
      throw UnsupportedDType("gradient for output '" + name + "': expected dtype " +
                             std::string(dtype_name(y.dtype())) + ", got " +
                             std::string(dtype_name(seed.dtype())));
    if (seed.shape() != y.shape())
      throw ShapeMismatch("gradient for output '" + name + "': expected shape " +
                          to_string(y.shape()) + ", got " + to_string(seed.shape()));
    if (!wanted.count(name)) continue;  // reaches no input: nothing to propagate
    auto it = grads.find(name);
    if (it == grads.end()) {
      grads[name] = Tensor(sum_dtype(seed.dtype()), seed.shape());
      add_scaled(grads[name], seed, 1.0);
    } else {  // an output that is also a graph input or initializer
      Tensor sum = it->second.clone();
      add_scaled(sum, seed, 1.0);
      it->second = sum;
    }
  }

  run.consumed_ = true;
  for (std::size_t s = g.steps().size(); s-- > 0;) {
    const Graph::Step& step = g.steps()[s];
    std::vector<Tensor> saved = std::move(run.saved_[s]);
    run.saved_[s].clear();
    if (!step.node->config().training) continue;  // stop-gradient
    const bool float32_gradients = step.node->takes_float32_gradients();
    std::vector<Tensor> dy;
    bool any = false;
    for (const auto& out : step.outputs) {
      auto it = grads.find(out);
      Tensor grad = it == grads.end() ? Tensor{} : it->second;
      if (!grad.empty() && !float32_gradients && grad.dtype() != g.info(out).dtype)
        grad = grad.cast(g.info(out).dtype);
      dy.push_back(grad);
      any = any || it != grads.end();
      if (it != grads.end() && !leaves.count(out)) grads.erase(it);  // consumed
    }
    if (!any) continue;
    const auto& infos = run.input_infos_[s];
    std::vector<Tensor> dx(step.inputs.size());
    // (input, buffer) pairs of a node that takes gradients in its tensors'
    // dtypes only: it adds into a zeroed buffer of that dtype, added to the
    // float32 sum afterwards.
    std::vector<std::pair<std::size_t, Tensor>> narrowed;
    // A tensor whose gradient has no buffer yet (no later reader has
    // written one) and which this node reads in one input slot only gets an
    // uninitialised buffer that the node overwrites, if it can
    // (BackwardContext::overwrite_inputs); every other buffer is added into.
    std::vector<std::uint8_t> overwrite(step.inputs.size(), 0);
    bool needed = false;
    for (std::size_t k = 0; k < step.inputs.size(); ++k) {
      const std::string& t = step.inputs[k];
      if (t.empty() || !wanted.count(t)) continue;
      auto it = grads.find(t);
      if (it == grads.end()) {
        const DType dtype = sum_dtype(infos[k].dtype);
        const bool fresh = step.node->overwrites_gradients() &&
                           std::count(step.inputs.begin(), step.inputs.end(), t) == 1 &&
                           (float32_gradients || dtype == infos[k].dtype);
        it = grads.emplace(t, fresh ? Tensor::uninitialized(dtype, infos[k].shape)
                                    : zeroed(dtype, infos[k].shape, options_.threads))
                 .first;
        overwrite[k] = fresh;
      }
      dx[k] = it->second;  // shares the buffer: backward adds into it (or overwrites it)
      if (!float32_gradients && dx[k].dtype() != infos[k].dtype) {
        dx[k] = Tensor(infos[k].dtype, infos[k].shape);
        narrowed.emplace_back(k, it->second);
      }
      needed = true;
    }
    if (!needed) continue;
    std::vector<std::uint8_t> parameters;
    for (const auto& t : step.inputs) {
      const Initializer* init = g.initializer(t);
      parameters.push_back(init != nullptr && init->trainable);
    }
    BackwardContext ctx{infos, saved, dy, dx, step.node->config().lda_coeff, parameters,
                        options_.threads, options_.max_tensor_bytes, overwrite};
    with_lazy_context([&] { return step_path(g, step); }, [&] { step.node->backward(ctx); });
    for (auto& [k, sum] : narrowed) add_scaled(sum, dx[k], 1.0);
  }
  run.input_infos_.clear();

  TensorMap result;
  for (const auto& [name, t] : leaves) result[name] = grads.at(name);
  return result;
}

}  // namespace nodeflow
