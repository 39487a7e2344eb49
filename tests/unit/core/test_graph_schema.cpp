// The schema as the one source of attributes: defaults are filled once, into
// the node's NodeConfig and not into the GraphDef; every op's reads need no
// fallback of their own; validation runs once per node per load; Graph and
// GraphBuilder build from the registry they are given.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/errors.hpp"
#include "core/graph.hpp"
#include "core/graph_builder.hpp"
#include "core/registry.hpp"
#include "nodes/builtin_ops.hpp"

namespace nodeflow {
namespace {

using Ints = std::vector<std::int64_t>;

// A value every spec accepts: the smallest in range, one entry per list (or
// min_length entries: MaxRoiPool's pooled_shape needs two).
AttrValue some_value(const AttrSpec& s) {
  const std::int64_t i = !s.allowed_ints.empty() ? s.allowed_ints[0] : s.min.value_or(1);
  switch (s.kind) {
    case AttrKind::Int: return i;
    case AttrKind::Float: return s.min_float ? s.min_float->value : 0.5;
    case AttrKind::String: return s.allowed.empty() ? std::string("x") : s.allowed[0];
    case AttrKind::Ints: return Ints(std::max<std::size_t>(s.min_length, 1), i);
    case AttrKind::Floats: return std::vector<double>{0.5};
    case AttrKind::Strings: return std::vector<std::string>{"x"};
  }
  return i;
}

// The built-in ops alone (other tests add theirs to the global registry).
const OpRegistry& builtin() {
  static const OpRegistry r = [] {
    OpRegistry ops;
    register_builtin_ops(ops);
    return ops;
  }();
  return r;
}

Attributes required_only(const OpSchema& s) {
  Attributes a;
  for (const AttrSpec& spec : s.attributes)
    if (spec.required) a[spec.name] = some_value(spec);
  return a;
}

TEST(GraphSchema, EveryInputAndOutputNamesItsDtypes) {
  const OpRegistry& r = builtin();
  for (const std::string& op : r.names()) {
    const OpSchema& s = *r.find(op);
    ASSERT_FALSE(s.inputs.empty()) << op;
    ASSERT_FALSE(s.outputs.empty()) << op;
    EXPECT_LE(s.min_inputs, s.inputs.size()) << op;
    EXPECT_LE(s.min_outputs, s.outputs.size()) << op;
    for (const auto* list : {&s.inputs, &s.outputs})
      for (const TensorSpec& t : *list) {
        EXPECT_FALSE(t.name.empty()) << op;
        EXPECT_FALSE(t.doc.empty()) << op << " " << t.name;
        EXPECT_FALSE(t.dtypes.empty()) << op << " " << t.name;
        for (DType d : t.dtypes) EXPECT_TRUE(is_graph_dtype(d)) << op << " " << t.name;
      }
  }
  const OpSchema& max = *r.find("MaxPool");
  EXPECT_EQ(max.outputs[1].dtypes, std::vector<DType>{DType::Int64});
  EXPECT_EQ(r.find("Reshape")->inputs[1].dtypes, std::vector<DType>{DType::Int64});
}

TEST(GraphSchema, EveryAttributeHasADocAndAnOpset) {
  const OpRegistry& r = builtin();
  for (const std::string& op : r.names())
    for (const AttrSpec& a : r.find(op)->attributes) {
      EXPECT_FALSE(a.doc.empty()) << op << "." << a.name;
      EXPECT_GE(a.since_version, 1) << op << "." << a.name;
      EXPECT_FALSE(a.default_value && a.required) << op << "." << a.name;
    }
  auto since = [&](const std::string& op, const std::string& name) {
    for (const AttrSpec& a : r.find(op)->attributes)
      if (a.name == name) return a.since_version;
    return 0;
  };
  EXPECT_EQ(since("AveragePool", "dilations"), 19);
  EXPECT_EQ(since("MaxPool", "dilations"), 10);
  EXPECT_EQ(since("LpPool", "ceil_mode"), 18);
  EXPECT_EQ(since("Reshape", "allowzero"), 14);
  EXPECT_EQ(since("Conv", "kernel_shape"), 1);
}

// Each op builds from its required attributes alone (create_node fills the
// defaults), and its factory, given the same attributes unfilled, refuses
// them: no node restates a default.
TEST(GraphSchema, NodesReadCheckedAttributesWithNoFallbackOfTheirOwn) {
  const OpRegistry& r = builtin();
  for (const std::string& op : r.names()) {
    const OpSchema& s = *r.find(op);
    const Attributes given = required_only(s);
    EXPECT_NO_THROW(create_node(s, NodeConfig{op, "n", given})) << op;
    const bool has_default = std::any_of(s.attributes.begin(), s.attributes.end(),
                                         [](const AttrSpec& a) { return a.default_value.has_value(); });
    if (has_default) {
      EXPECT_THROW(s.create(NodeConfig{op, "n", given}), InvalidAttribute) << op;
    } else {
      EXPECT_NO_THROW(s.create(NodeConfig{op, "n", given})) << op;
    }
  }
}

GraphDef pool_graph() {
  GraphDef d;
  d.inputs.push_back({"x", {DType::Float32, {1, 1, 4, 4}}});
  NodeDef n;
  n.op_type = "MaxPool";
  n.name = "p";
  n.inputs = {"x"};
  n.attributes["kernel_shape"] = Ints{2, 2};
  d.nodes.push_back(n);
  d.outputs = {"p"};
  return d;
}

TEST(GraphSchema, DefaultsAreFilledIntoTheNodeNotIntoTheDocument) {
  const Graph g(pool_graph());
  // The GraphDef stays as given: the writer writes what the user wrote.
  EXPECT_EQ(g.def().nodes[0].attributes.size(), 1u);
  const Attributes& filled = g.steps()[0].node->config().attributes;
  EXPECT_EQ(std::get<std::string>(filled.at("auto_pad")), "NOTSET");
  EXPECT_EQ(std::get<std::int64_t>(filled.at("ceil_mode")), 0);
  EXPECT_EQ(std::get<std::int64_t>(filled.at("storage_order")), 0);
  // Optional attributes without a default stay absent.
  EXPECT_EQ(filled.count("strides"), 0u);
  EXPECT_EQ(filled.count("pads"), 0u);
}

// An op whose attribute check counts its calls, in a registry of its own.
struct CountingRegistry {
  int checks = 0;
  OpRegistry registry;
  CountingRegistry() {
    OpSchema s;
    s.op_type = "Same";
    s.definition = "test op";
    s.inputs = {{"X", {DType::Float32}, "any"}};
    s.outputs = {{"Y", {DType::Float32}, "X"}};
    s.attributes = {flag_spec("flag", "a flag")};
    s.check_attributes = [this](const Attributes&) { ++checks; };
    s.create = [](NodeConfig c) -> std::unique_ptr<Node> {
      struct SameNode final : Node {
        using Node::Node;
        std::vector<TensorInfo> infer(const InferContext& ctx) const override {
          return {*ctx.inputs[0]};
        }
        void forward(const ForwardContext& ctx) const override { ctx.outputs[0] = ctx.inputs[0]; }
      };
      attr_int(c.attributes, "flag");  // filled before the factory runs
      return std::make_unique<SameNode>(std::move(c));
    };
    registry.add(std::move(s));
  }
};

GraphDef same_graph(int nodes) {
  GraphDef d;
  d.inputs.push_back({"x", {DType::Float32, {2}}});
  std::string last = "x";
  for (int i = 0; i < nodes; ++i) {
    NodeDef n;
    n.op_type = "Same";
    n.name = "n" + std::to_string(i);
    n.inputs = {last};
    d.nodes.push_back(n);
    last = n.name;
  }
  d.outputs = {last};
  return d;
}

TEST(GraphSchema, GraphValidatesEachNodeOnceFromTheRegistryItIsGiven) {
  CountingRegistry c;
  const Graph g(same_graph(3), c.registry);
  EXPECT_EQ(c.checks, 3);
  EXPECT_EQ(g.steps().size(), 3u);
  // The global registry does not know the op.
  try {
    Graph bad(same_graph(1));
    ADD_FAILURE() << "built";
  } catch (const InvalidGraph& e) {
    EXPECT_EQ(std::string(e.what()).rfind("nodes[0] (n0).op_type: unknown op_type 'Same' (known: ", 0), 0u)
        << e.what();
  }
  const OpRegistry empty;
  try {
    Graph bad(same_graph(1), empty);
    ADD_FAILURE() << "built";
  } catch (const InvalidGraph& e) {
    EXPECT_STREQ(e.what(), "nodes[0] (n0).op_type: unknown op_type 'Same' (known: none)");
  }
}

TEST(GraphSchema, GraphBuilderChecksEachAdditionOnceAndBuildsFromItsRegistry) {
  CountingRegistry c;
  GraphBuilder b("g", c.registry);
  b.add_input("x", DType::Float32, {2});
  b.add_node("Same", "a", {"x"});
  EXPECT_EQ(c.checks, 1);
  b.add_node("Same", "b", {"a"}, {{"flag", std::int64_t{1}}});
  EXPECT_EQ(c.checks, 2);
  b.add_output("b");
  // build() validates the description again, as Graph's constructor does.
  const Graph g = b.build();
  EXPECT_EQ(c.checks, 4);
  EXPECT_EQ(std::get<std::int64_t>(g.steps()[0].node->config().attributes.at("flag")), 0);
  EXPECT_EQ(b.def().nodes[0].attributes.size(), 0u);
}

}  // namespace
}  // namespace nodeflow
