#pragma once
// What a nodeflow.Graph object holds: the graph and the lock that lets many
// Python threads run it at once while a weight change or training waits for
// them (Graph::set_initializer is not safe during a run).
#include <pybind11/pybind11.h>

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>

#include "core/graph.hpp"

namespace nodeflow::python {

namespace py = pybind11;

struct GraphState {
  explicit GraphState(Graph g) : graph(std::move(g)) {}
  Graph graph;
  std::shared_mutex mutex;  ///< shared: runs and reads; exclusive: weight changes, training
  /// The thread holding `mutex` exclusively: a trainer's callback that uses the
  /// graph it trains would otherwise wait for itself forever.
  std::atomic<std::thread::id> writer{};
};

namespace detail {
/// Throws RunError when this thread is training the graph (in a Trainer callback).
void refuse_reentry(const GraphState& state);
}  // namespace detail

/// f() with the GIL released and `state` locked for reading. The lock is taken
/// only once the GIL is released: a thread waiting for it never holds the GIL,
/// which a run may need to drop a borrowed array.
template <typename F>
decltype(auto) reading(GraphState& state, F&& f) {
  detail::refuse_reentry(state);
  py::gil_scoped_release release;
  std::shared_lock lock(state.mutex);
  return f();
}

/// f() with the GIL released and `state` locked for writing (as reading()).
template <typename F>
decltype(auto) writing(GraphState& state, F&& f) {
  detail::refuse_reentry(state);
  py::gil_scoped_release release;
  std::unique_lock lock(state.mutex);
  state.writer = std::this_thread::get_id();
  struct Done {
    GraphState& s;
    ~Done() { s.writer = std::thread::id(); }
  } done{state};
  return f();
}

}  // namespace nodeflow::python
