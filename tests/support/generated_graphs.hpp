#pragma once
// Generated pooling graphs of any size, for round-trip tests and benchmarks.
// Built with GraphBuilder, so their construction also exercises it.
#include <cstddef>
#include <cstdint>

#include "core/executor.hpp"
#include "core/graph.hpp"

namespace nodeflow::testing {

/// MaxPool 2x2 / stride 2 over a float32 1x1x4x4 input "x", output "y": the
/// command-line tests' smallest graph.
inline constexpr const char* kPoolGraph = R"({"format": "nodeflow.graph", "version": 1, "name": "cli_pool",
  "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 1, 4, 4]}],
  "outputs": ["y"],
  "nodes": [{"op_type": "MaxPool", "name": "pool", "inputs": ["x"],
             "specified_outputs_name": ["y"],
             "attributes": {"kernel_shape": [2, 2], "strides": [2, 2]}}]})";

enum class Topology {
  Chain,   ///< node i reads node i-1's output; the last output is the graph output
  FanOut,  ///< every node reads the graph input; every output is a graph output
};

/// `nodes` pooling nodes (AveragePool, MaxPool, LpPool in turn; kernel 3x3,
/// stride 1, pads 1, so every tensor keeps the shape of the input x, float32
/// [1, 1, 8, 8]). Every node costs the same to load, validate and run.
GraphDef pooling_graph(Topology topology, std::size_t nodes);

/// A graph of `nodes` nodes drawing on every feature the document has: every
/// pooling op, float32 and float64 inputs with a dynamic batch, trainable and
/// constant initializers (subnormals, -0.0, NaN and infinities among their
/// values, sizes on both sides of the writer's inline limit), specified and
/// default output names, MaxPool Indices into MaxUnpool, string/int/float
/// attributes, training=false and lda_coeff. Wiring is a random DAG (chains and
/// fan-outs) fixed by `seed`.
GraphDef mixed_pooling_graph(std::size_t nodes, std::uint32_t seed);

/// Feeds for either kind of graph above: deterministic values, batch 2 for
/// dynamic dimensions.
TensorMap generated_feeds(const GraphDef& def);

}  // namespace nodeflow::testing
