// nf_session_* and nf_run_*: inference, training-mode forward and backward.
#include <string>

#include "capi/api_guard.hpp"
#include "capi/handles.hpp"
#include "capi/tensor_io.hpp"

using namespace nodeflow;
using namespace nodeflow::capi;

namespace {

nf_run& run_of(nf_run* run) { return *require(run, "run"); }
const nf_run& run_of(const nf_run* run) { return *require(run, "run"); }

// "'x' is not a graph input (the graph's inputs: image, label)"
void require_input(const Graph& g, const std::string& name) {
  std::string names;
  for (const GraphInput& in : g.def().inputs) {
    if (in.name == name) return;
    names += (names.empty() ? "" : ", ") + in.name;
  }
  throw InvalidGraph("'" + printable(name, 200) +
                     "' is not a graph input (the graph's inputs: " + names + ")");
}

void set_input(nf_run* run, const char* name, std::int64_t dtype, int32_t rank, const int64_t* dims,
               const void* data, size_t size, Ownership ownership) {
  nf_run& r = run_of(run);
  const std::string n = name_arg(name, "name");
  require_input(*r.state->graph, n);
  r.feeds.insert_or_assign(n, tensor_from_host("input '" + printable(n, 200) + "'", dtype, rank,
                                               dims, data, size, ownership));
  // A pending forward keeps the inputs it read for backward, which may be the
  // bytes of the host's previous array: it ends here (nodeflow.h).
  r.training.reset();
}

// Outputs never refer to a host's array: one that shares an input's buffer (the
// input itself, a Reshape or Identity of it) is copied, so that the host may
// free or reuse its array once it has set another (nodeflow.h).
TensorMap owned_outputs(const nf_run& r, TensorMap outputs) {
  for (auto& entry : outputs)
    for (const auto& feed : r.feeds)
      if (entry.second.shares_buffer(feed.second)) {
        entry.second = entry.second.clone();
        break;
      }
  return outputs;
}

// The tensor `name` of `results` (the outputs or the gradients), or InvalidArgument.
const Tensor& result_of(const TensorMap& results, const char* name, const char* kind) {
  const std::string n = name_arg(name, "name");
  const auto it = results.find(n);
  if (it == results.end())
    throw ApiError(NF_ERR_INVALID_ARGUMENT, std::string("the run has no ") + kind + " '" +
                                                printable(n, 200) + "'" +
                                                (results.empty() ? " (nothing was run yet)" : ""));
  return it->second;
}

void result_info(const TensorMap& results, const char* name, const char* kind, nf_dtype* dtype,
                 int32_t* rank, int64_t* dims, size_t dims_capacity, size_t* size) {
  const Tensor& t = result_of(results, name, kind);
  if (size) *size = t.nbytes();
  describe(std::string(kind) + " '" + printable(name, 200) + "'", t.dtype(), t.shape(), dtype, rank,
           dims, dims_capacity);
}

void copy_result(const TensorMap& results, const char* name, const char* kind, void* data,
                 size_t capacity, size_t* size) {
  const Tensor& t = result_of(results, name, kind);
  copy_bytes_out(std::string(kind) + " '" + printable(name, 200) + "'",
                 {reinterpret_cast<const char*>(t.raw()), t.nbytes()}, data, capacity, size);
}

}  // namespace

extern "C" {

NF_API nf_status nf_session_create(const nf_graph* graph, int32_t threads, nf_session** session) {
  return guard([&] {
    require(session, "session");
    std::shared_ptr<const Graph> g = require(graph, "graph")->graph;
    ExecutorOptions options;
    options.threads = threads;
    *session = new nf_session{std::make_shared<const SessionState>(std::move(g), options)};
  });
}

NF_API void nf_session_release(nf_session* session) { delete session; }

NF_API nf_status nf_run_create(const nf_session* session, nf_run** run) {
  return guard([&] {
    require(run, "run");
    *run = new nf_run{require(session, "session")->state, {}, {}, {}, {}, {}};
  });
}

NF_API void nf_run_release(nf_run* run) { delete run; }

NF_API nf_status nf_run_set_input(nf_run* run, const char* name, nf_dtype dtype, int32_t rank,
                                  const int64_t* dims, const void* data, size_t size) {
  return guard(
      [&] { set_input(run, name, raw_code(dtype), rank, dims, data, size, Ownership::Borrow); });
}

NF_API nf_status nf_run_set_input_copy(nf_run* run, const char* name, nf_dtype dtype, int32_t rank,
                                       const int64_t* dims, const void* data, size_t size) {
  return guard(
      [&] { set_input(run, name, raw_code(dtype), rank, dims, data, size, Ownership::Copy); });
}

NF_API nf_status nf_run_infer(nf_run* run) {
  return guard([&] {
    nf_run& r = run_of(run);
    TensorMap outputs = owned_outputs(r, r.state->executor.run(r.feeds));
    r.training.reset();
    r.outputs = std::move(outputs);
  });
}

NF_API nf_status nf_run_forward(nf_run* run, uint64_t seed) {
  return guard([&] {
    nf_run& r = run_of(run);
    TrainingRun training = r.state->executor.forward(r.feeds, seed);
    r.outputs = owned_outputs(r, training.outputs());
    r.training = std::move(training);
  });
}

NF_API nf_status nf_run_set_output_grad(nf_run* run, const char* name, nf_dtype dtype, int32_t rank,
                                        const int64_t* dims, const void* data, size_t size) {
  return guard([&] {
    nf_run& r = run_of(run);
    const std::string n = name_arg(name, "name");
    r.seeds.insert_or_assign(
        n, tensor_from_host("gradient of output '" + printable(n, 200) + "'", raw_code(dtype), rank,
                            dims, data, size, Ownership::Copy));
  });
}

NF_API nf_status nf_run_backward(nf_run* run) {
  return guard([&] {
    nf_run& r = run_of(run);
    if (!r.training)
      throw RunError(
          "backward needs a training-mode forward first (nf_run_forward), once per "
          "forward");
    // A refused seed leaves the forward for another try, as long as backward
    // has not started to consume it.
    try {
      TensorMap gradients = r.state->executor.backward(*r.training, r.seeds);
      r.gradients = std::move(gradients);
    } catch (...) {
      if (r.training->consumed()) r.training.reset();
      throw;
    }
    r.training.reset();
    r.seeds.clear();
  });
}

NF_API nf_status nf_run_output_info(const nf_run* run, const char* name, nf_dtype* dtype,
                                    int32_t* rank, int64_t* dims, size_t dims_capacity,
                                    size_t* size) {
  return guard([&] {
    result_info(run_of(run).outputs, name, "output", dtype, rank, dims, dims_capacity, size);
  });
}

NF_API nf_status nf_run_get_output(const nf_run* run, const char* name, void* data, size_t capacity,
                                   size_t* size) {
  return guard([&] { copy_result(run_of(run).outputs, name, "output", data, capacity, size); });
}

NF_API nf_status nf_run_gradient_info(const nf_run* run, const char* name, nf_dtype* dtype,
                                      int32_t* rank, int64_t* dims, size_t dims_capacity,
                                      size_t* size) {
  return guard([&] {
    result_info(run_of(run).gradients, name, "gradient", dtype, rank, dims, dims_capacity, size);
  });
}

NF_API nf_status nf_run_get_gradient(const nf_run* run, const char* name, void* data,
                                     size_t capacity, size_t* size) {
  return guard([&] { copy_result(run_of(run).gradients, name, "gradient", data, capacity, size); });
}

}  // extern "C"
