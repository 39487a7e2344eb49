#include "training/parameters.hpp"

#include <algorithm>
#include <cmath>

namespace nodeflow::training {
namespace {

// Input slots that hold a weight (rather than a bias) for each op that has one.
bool is_weight_slot(const std::string& op_type, std::size_t input) {
  if (op_type == "Conv" || op_type == "ConvTranspose") return input == 1;
  if (op_type == "Gemm" || op_type == "MatMul") return input <= 1;
  return false;
}

}  // namespace

std::set<std::string> parameters_reached(const Graph& graph, const std::string& output) {
  const auto& outs = graph.def().outputs;
  if (std::find(outs.begin(), outs.end(), output) == outs.end())
    throw InvalidGraph("'" + output + "' is not a graph output");
  // Walk the steps backwards: a node passes gradient on when it trains and one
  // of its float outputs carries gradient.
  std::set<std::string> carries{output};
  std::set<std::string> reached;
  const auto& steps = graph.steps();
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if (!it->node->config().training) continue;
    const bool active =
        std::any_of(it->outputs.begin(), it->outputs.end(), [&](const std::string& t) {
          return carries.count(t) > 0 && is_float(graph.info(t).dtype);
        });
    if (!active) continue;
    for (const std::string& t : it->inputs) {
      if (t.empty() || !is_float(graph.info(t).dtype)) continue;
      carries.insert(t);
      const Initializer* init = graph.initializer(t);
      if (init != nullptr && init->trainable) reached.insert(t);
    }
  }
  return reached;
}

std::set<std::string> weight_parameters(const Graph& graph) {
  std::set<std::string> weights;
  for (const Graph::Step& step : graph.steps())
    for (std::size_t k = 0; k < step.inputs.size(); ++k) {
      const Initializer* init = graph.initializer(step.inputs[k]);
      if (init != nullptr && init->trainable && is_weight_slot(step.node->op_type(), k))
        weights.insert(init->name);
    }
  return weights;
}

std::map<std::string, double> weight_decay_plan(const Graph& graph, double weight_decay,
                                                const std::map<std::string, double>& overrides) {
  const std::set<std::string> weights = weight_parameters(graph);
  std::map<std::string, double> plan;
  for (const Initializer& init : graph.def().initializers)
    if (init.trainable) plan[init.name] = weights.count(init.name) ? weight_decay : 0.0;
  for (const auto& [name, value] : overrides) {
    auto it = plan.find(name);
    if (it == plan.end())
      throw InvalidAttribute("weight_decay_overrides." + name +
                             ": no trainable initializer has this name");
    if (!(std::isfinite(value) && value >= 0))
      throw InvalidAttribute("weight_decay_overrides." + name +
                             ": expected a finite number >= 0, got " + std::to_string(value));
    it->second = value;
  }
  return plan;
}

}  // namespace nodeflow::training
