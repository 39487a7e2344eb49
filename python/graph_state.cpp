#include "python/graph_state.hpp"

namespace nodeflow::python::detail {

void refuse_reentry(const GraphState& state) {
  if (state.writer.load() == std::this_thread::get_id())
    throw RunError("graph '" + state.graph.name() +
                   "' is being trained by this thread: a Trainer's callback may not run, read or "
                   "change the graph it trains (copy what it needs from the progress it is given)");
}

}  // namespace nodeflow::python::detail
