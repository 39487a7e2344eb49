// The ONNX opset history (serialization/onnx/opset_history.hpp): old forms of
// each op upgrade to the node nodeflow registers, what cannot be mapped is
// refused naming node, op, opset and attribute, and lowest_opset picks the
// opset the writer states.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "serialization/onnx/opset_history.hpp"
#include "support/error_of.hpp"

namespace nodeflow {
namespace {

using onnx_import::OnnxNode;

/// Collects the constants a node's upgrade adds.
struct Constants {
  std::map<std::string, Tensor> added;
  onnx_import::AddConstant adder() {
    return [this](const std::string& hint, Tensor value) {
      std::string name = hint + "#" + std::to_string(added.size());
      added.emplace(name, std::move(value));
      return name;
    };
  }
};

OnnxNode node(std::string op, Attributes attrs, std::vector<std::string> inputs = {"x"},
              std::vector<std::string> outputs = {"y"}) {
  return {std::move(op), "n1", std::move(inputs), std::move(outputs), std::move(attrs)};
}

OnnxNode upgraded(OnnxNode n, int opset, Constants& c) {
  onnx_import::upgrade_node(n, opset, c.adder());
  return n;
}

std::vector<std::int64_t> ints_of(const Tensor& t) {
  auto v = t.values<std::int64_t>();
  return {v.begin(), v.end()};
}

using Ints = std::vector<std::int64_t>;

TEST(OpsetHistory, ADropoutMaskNothingReadsIsDroppedBeforeOpset10) {
  // Caffe2's exports in ONNX's model zoo (AlexNet's `_fc6_mask`) give
  // Dropout-1..9 a mask output that no node reads.
  Constants c;
  for (const int opset : {1, 6, 7, 9}) {
    OnnxNode n = node("Dropout", {{"ratio", 0.5}}, {"x"}, {"y", "mask"});
    if (opset < 7) n.attributes["is_test"] = std::int64_t{1};
    const onnx_import::TensorRead nothing_reads_mask = [](const std::string& t) { return t != "mask"; };
    onnx_import::upgrade_node(n, opset, c.adder(), OpRegistry::global(), {}, nothing_reads_mask);
    EXPECT_EQ(n.outputs, std::vector<std::string>{"y"}) << opset;
  }
  OnnxNode read = node("Dropout", {{"ratio", 0.5}}, {"x"}, {"y", "mask"});
  const onnx_import::TensorRead everything = [](const std::string&) { return true; };
  EXPECT_NE(testing::error_of<InvalidGraph>([&] {
              onnx_import::upgrade_node(read, 9, c.adder(), OpRegistry::global(), {}, everything);
            }).find("output 1 (mask) is not supported"),
            std::string::npos);
}

TEST(OpsetHistory, PoolingAttributesOutsideTheirOpsetAreRefused) {
  Constants c;
  const Attributes k = {{"kernel_shape", Ints{2, 2}}};
  auto refused = [&](const std::string& op, const std::string& attr, AttrValue v, int opset) {
    Attributes a = k;
    a[attr] = std::move(v);
    return testing::error_of<InvalidAttribute>([&] { upgraded(node(op, a), opset, c); });
  };
  EXPECT_EQ(refused("AveragePool", "ceil_mode", std::int64_t{1}, 9),
            "node 'n1' (AveragePool, opset 9): attribute 'ceil_mode' exists from opset 10");
  EXPECT_EQ(refused("AveragePool", "count_include_pad", std::int64_t{1}, 6),
            "node 'n1' (AveragePool, opset 6): attribute 'count_include_pad' exists from opset 7");
  EXPECT_EQ(refused("AveragePool", "dilations", Ints{1, 1}, 18),
            "node 'n1' (AveragePool, opset 18): attribute 'dilations' exists from opset 19");
  EXPECT_EQ(refused("MaxPool", "storage_order", std::int64_t{0}, 7),
            "node 'n1' (MaxPool, opset 7): attribute 'storage_order' exists from opset 8");
  EXPECT_EQ(refused("MaxPool", "dilations", Ints{1, 1}, 9),
            "node 'n1' (MaxPool, opset 9): attribute 'dilations' exists from opset 10");
  EXPECT_EQ(refused("MaxPool", "ceil_mode", std::int64_t{1}, 8),
            "node 'n1' (MaxPool, opset 8): attribute 'ceil_mode' exists from opset 10");
  EXPECT_EQ(refused("LpPool", "ceil_mode", std::int64_t{1}, 17),
            "node 'n1' (LpPool, opset 17): attribute 'ceil_mode' exists from opset 18");
  EXPECT_EQ(refused("LpPool", "dilations", Ints{1, 1}, 11),
            "node 'n1' (LpPool, opset 11): attribute 'dilations' exists from opset 18");
  EXPECT_EQ(refused("AveragePool", "foo", std::int64_t{1}, 22),
            "node 'n1' (AveragePool, opset 22): unknown attribute 'foo' (known at opset 22: auto_pad, "
            "ceil_mode, count_include_pad, dilations, kernel_shape, pads, strides)");
  // The attribute exists at the opset, with another kind.
  EXPECT_EQ(refused("LpPool", "p", 2.0, 2),
            "node 'n1' (LpPool, opset 2): attribute 'p' must be INT at opset 2, got FLOAT");
  EXPECT_EQ(refused("LpPool", "p", std::int64_t{2}, 1),
            "node 'n1' (LpPool, opset 1): attribute 'p' must be FLOAT at opset 1, got INT");
}

TEST(OpsetHistory, PoolingNodesWithinTheirOpsetPassUnchanged) {
  Constants c;
  const Attributes a = {{"kernel_shape", Ints{3}}, {"ceil_mode", std::int64_t{1}},
                        {"count_include_pad", std::int64_t{1}}, {"pads", Ints{1, 1}}};
  for (int opset : {10, 11, 19, 22}) {
    SCOPED_TRACE(opset);
    OnnxNode n = upgraded(node("AveragePool", a), opset, c);
    EXPECT_EQ(n.attributes, a);
    EXPECT_EQ(n.inputs, std::vector<std::string>{"x"});
  }
  OnnxNode m = upgraded(node("MaxPool", {{"kernel_shape", Ints{2}}}, {"x"}, {"y", "i"}), 8, c);
  EXPECT_EQ(m.outputs, (std::vector<std::string>{"y", "i"}));
  EXPECT_TRUE(c.added.empty());
}

TEST(OpsetHistory, MaxPoolBeforeOpset8HasNoIndicesOutput) {
  Constants c;
  EXPECT_EQ(testing::error_of<InvalidGraph>(
                [&] { upgraded(node("MaxPool", {{"kernel_shape", Ints{2}}}, {"x"}, {"y", "i"}), 7, c); }),
            "node 'n1' (MaxPool, opset 7): has 2 outputs; MaxPool at opset 7 has at most 1");
  // An absent optional output ("") is not counted.
  EXPECT_NO_THROW(upgraded(node("MaxPool", {{"kernel_shape", Ints{2}}}, {"x"}, {"y", ""}), 7, c));
}

TEST(OpsetHistory, LpPool1TakesAFloatP) {
  Constants c;
  OnnxNode n = upgraded(node("LpPool", {{"kernel_shape", Ints{2}}, {"p", 3.0}}), 1, c);
  EXPECT_EQ(n.attributes.at("p"), AttrValue(std::int64_t{3}));
  OnnxNode g = upgraded(node("GlobalLpPool", {{"p", 1.0}}), 1, c);
  EXPECT_EQ(g.attributes.at("p"), AttrValue(std::int64_t{1}));
  EXPECT_EQ(testing::error_of<InvalidAttribute>([&] { upgraded(node("LpPool", {{"kernel_shape", Ints{2}}, {"p", 2.5}}), 1, c); }),
            "node 'n1' (LpPool, opset 1): attribute 'p' = 2.5 is not supported: p must be an integer "
            "(LpPool from opset 2 and the library take an INT p)");
  // Absent, LpPool-1's default p = 2.0 is the INT default 2.
  EXPECT_EQ(upgraded(node("LpPool", {{"kernel_shape", Ints{2}}}), 1, c).attributes.count("p"), 0u);
}

TEST(OpsetHistory, OpsThatDidNotExistOrThatTheLibraryLacksAreRefused) {
  Constants c;
  EXPECT_EQ(testing::error_of<InvalidGraph>([&] { upgraded(node("ConvInteger", {}), 10, c); }),
            "node 'n1' (ConvInteger, opset 10): op not supported");
  EXPECT_EQ(testing::error_of<InvalidGraph>([&] { upgraded(node("MaxUnpool", {{"kernel_shape", Ints{2}}}, {"x", "i"}), 8, c); }),
            "node 'n1' (MaxUnpool, opset 8): op not supported at opset 8 (MaxUnpool exists from opset 9)");
  EXPECT_EQ(testing::error_of<InvalidGraph>([&] { upgraded(node("Relu", {}), 23, c); }),
            "node 'n1' (Relu, opset 23): opset 23 is not read (the default-domain opsets read are 1 to 22)");
  EXPECT_EQ(testing::error_of<InvalidGraph>([&] { upgraded(node("Relu", {}), 0, c); }),
            "node 'n1' (Relu, opset 0): opset 0 is not read (the default-domain opsets read are 1 to 22)");
}

TEST(OpsetHistory, SqueezeAndUnsqueezeAxesMoveToAnInputBefore13) {
  for (const char* op : {"Squeeze", "Unsqueeze"}) {
    SCOPED_TRACE(op);
    for (int opset : {1, 11, 12}) {
      Constants c;
      OnnxNode n = upgraded(node(op, {{"axes", Ints{0, -1}}}), opset, c);
      EXPECT_TRUE(n.attributes.empty());
      ASSERT_EQ(n.inputs.size(), 2u);
      EXPECT_EQ(n.inputs[0], "x");
      ASSERT_EQ(c.added.count(n.inputs[1]), 1u);
      const Tensor& axes = c.added.at(n.inputs[1]);
      EXPECT_EQ(axes.dtype(), DType::Int64);
      EXPECT_EQ(axes.shape(), Shape{2});
      EXPECT_EQ(ints_of(axes), (Ints{0, -1}));
    }
    Constants c;
    EXPECT_EQ(testing::error_of<InvalidAttribute>([&] { upgraded(node(op, {{"axes", Ints{0}}}, {"x", "a"}), 13, c); }),
              std::string("node 'n1' (") + op + ", opset 13): attribute 'axes' was removed in opset 13");
    EXPECT_EQ(upgraded(node(op, {}, {"x", "a"}), 13, c).inputs, (std::vector<std::string>{"x", "a"}));
    EXPECT_EQ(testing::error_of<InvalidGraph>([&] { upgraded(node(op, {{"axes", Ints{0}}}, {"x", "a"}), 11, c); }),
              std::string("node 'n1' (") + op + ", opset 11): has 2 inputs; " + op +
                  " at opset 11 takes at most 1");
  }
  // Squeeze without axes squeezes every 1, as the opset-13 form without the input.
  Constants c;
  OnnxNode s = upgraded(node("Squeeze", {}), 11, c);
  EXPECT_EQ(s.inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(testing::error_of<InvalidAttribute>([&] { upgraded(node("Unsqueeze", {}), 11, c); }),
            "node 'n1' (Unsqueeze, opset 11): attribute 'axes' is required at opset 11");
}

TEST(OpsetHistory, LowestOpsetOfThePoolingOps) {
  auto lowest = [](std::string op, Attributes a, std::vector<DType> dtypes = {DType::Float32}) {
    NodeDef def;
    def.op_type = std::move(op);
    def.name = "n";
    def.inputs = {"x"};
    def.attributes = std::move(a);
    return onnx_import::lowest_opset(def, dtypes);
  };
  EXPECT_EQ(lowest("AveragePool", {{"kernel_shape", Ints{2}}, {"dilations", Ints{2}}}), 19);
  EXPECT_EQ(lowest("AveragePool", {{"kernel_shape", Ints{2}}}, {DType::BFloat16}), 22);
  EXPECT_EQ(lowest("MaxPool", {{"kernel_shape", Ints{2}}}), 19);
  EXPECT_EQ(lowest("GlobalLpPool", {{"p", std::int64_t{2}}}, {DType::BFloat16}), 22);
  EXPECT_EQ(lowest("Squeeze", {}), 19);
}

/// The attributes of the newest ONNX version that the registered op lacks, or
/// has beyond it, with the step that handles them.
const std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> kRegistryDiffers = {
    // The library also takes Dropout-10's ratio attribute; the importer moves it to input 1.
    {"Dropout", {{}, {"ratio"}}},
};

TEST(OpsetHistory, EveryRegisteredOpHasAHistoryEndingAtTheRegisteredVersion) {
  const OpRegistry& registry = OpRegistry::global();
  const std::vector<std::string> known = onnx_import::history_ops();
  std::size_t onnx_ops = 0;
  for (const std::string& op : registry.names()) {
    const OpSchema* schema = registry.find(op);
    if (schema->definition.rfind("ONNX ", 0) != 0) continue;  // the tests' own ops
    SCOPED_TRACE(op);
    ++onnx_ops;
    EXPECT_TRUE(std::find(known.begin(), known.end(), op) != known.end());
    const auto versions = onnx_import::op_versions(op);
    ASSERT_FALSE(versions.empty());
    for (std::size_t i = 1; i < versions.size(); ++i) EXPECT_LT(versions[i - 1].since, versions[i].since);
    // The registered definition "ONNX Op-N": N is the newest version up to opset 22.
    const int registered = std::stoi(schema->definition.substr(schema->definition.rfind('-') + 1));
    EXPECT_EQ(versions.back().since, registered);
    EXPECT_TRUE(versions.back().refused.empty());
    std::vector<std::string> only_table, only_registry;
    for (const auto& a : versions.back().attributes)
      if (find_spec(schema->attributes, a.name) == nullptr) only_table.push_back(a.name);
    for (const auto& spec : schema->attributes) {
      const auto& attrs = versions.back().attributes;
      if (std::none_of(attrs.begin(), attrs.end(), [&](const auto& a) { return a.name == spec.name; }))
        only_registry.push_back(spec.name);
      else
        EXPECT_EQ(std::find_if(attrs.begin(), attrs.end(), [&](const auto& a) { return a.name == spec.name; })->kind,
                  spec.kind)
            << spec.name;
    }
    // The schema's since_version (nodeflow ops --json) is the first opset
    // whose version of the op has the attribute, of its kind (LpPool-1's p
    // was a float).
    for (const auto& spec : schema->attributes)
      for (const auto& v : versions)
        if (std::any_of(v.attributes.begin(), v.attributes.end(),
                        [&](const auto& a) { return a.name == spec.name && a.kind == spec.kind; })) {
          EXPECT_EQ(spec.since_version, v.since) << spec.name;
          break;
        }
    auto it = kRegistryDiffers.find(op);
    EXPECT_EQ(only_table, it == kRegistryDiffers.end() ? std::vector<std::string>{} : it->second.first);
    EXPECT_EQ(only_registry, it == kRegistryDiffers.end() ? std::vector<std::string>{} : it->second.second);
    // An attribute the registry dates after the op's first version (ceil_mode
    // 10) is dated as the table's first version with it, of its kind
    // (LpPool's INT p: 2).
    for (const auto& spec : schema->attributes) {
      int first = 0;
      for (const auto& v : versions)
        for (const auto& a : v.attributes)
          if (a.name == spec.name && a.kind == spec.kind && first == 0) first = v.since;
      if (first != 0 && spec.since_version > versions.front().since) {
        EXPECT_EQ(spec.since_version, first) << spec.name;
      }
    }
  }
  EXPECT_EQ(onnx_ops, 77u);
  EXPECT_EQ(known.size(), onnx_ops);
}

TEST(OpsetHistory, AnOpOfTheRegistryWithoutAHistoryIsRefused) {
  OpRegistry registry;
  OpSchema mine = *OpRegistry::global().find("Relu");
  mine.op_type = "MyRelu";
  registry.add(mine);
  OnnxNode n = node("MyRelu", {});
  EXPECT_EQ(testing::error_of<InvalidGraph>([&] { onnx_import::upgrade_node(n, 13, {}, registry); }),
            "node 'n1' (MyRelu, opset 13): op not supported (no ONNX opset history for it)");
  // The registry given is the one asked: Relu is not in this one.
  OnnxNode r = node("Relu", {});
  EXPECT_EQ(testing::error_of<InvalidGraph>([&] { onnx_import::upgrade_node(r, 13, {}, registry); }),
            "node 'n1' (Relu, opset 13): op not supported");
}

// Per op boundary: an old-form node and the node it becomes. Constants the
// upgrade adds are shown as "<dtype><shape> <values>".
struct Known {
  Known(Shape s, DType d = DType::Float32, std::optional<Tensor> v = std::nullopt)
      : shape(std::move(s)), dtype(d), value(std::move(v)) {}
  Shape shape;
  DType dtype;
  std::optional<Tensor> value;
};

struct Boundary {
  std::string op;
  int opset;
  Attributes given;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Known> known;
  Attributes expected;
  std::vector<std::string> expected_inputs;
};

std::string render(const Tensor& t) {
  std::string out(dtype_name(t.dtype()));
  out += to_string(t.shape());
  const Tensor d = t.cast(DType::Float64);
  for (double v : d.values<double>()) {
    out += ' ';
    out += to_string(AttrValue(v));
  }
  return out;
}

onnx_import::TensorLookup lookup(const std::map<std::string, Known>& known) {
  return [&known](const std::string& name) -> std::optional<onnx_import::KnownTensor> {
    auto it = known.find(name);
    if (it == known.end()) return std::nullopt;
    return onnx_import::KnownTensor{{it->second.dtype, it->second.shape}, it->second.value.value_or(Tensor())};
  };
}

OnnxNode run(const Boundary& b, Constants& c) {
  OnnxNode n{b.op, "n1", b.inputs, b.outputs, b.given};
  onnx_import::upgrade_node(n, b.opset, c.adder(), OpRegistry::global(), lookup(b.known));
  return n;
}

std::vector<std::string> rendered_inputs(const OnnxNode& n, const Constants& c) {
  std::vector<std::string> out;
  for (const std::string& in : n.inputs) out.push_back(c.added.count(in) ? render(c.added.at(in)) : in);
  return out;
}

Tensor floats(Shape shape, std::initializer_list<float> v) { return Tensor::from<float>(std::move(shape), v); }
Tensor int64s(Shape shape, std::initializer_list<std::int64_t> v) {
  return Tensor::from<std::int64_t>(std::move(shape), v);
}

using I = std::int64_t;
using Strs = std::vector<std::string>;

TEST(OpsetHistory, EachBoundaryUpgradesAnOldNodeToTheRegisteredForm) {
  const double fmax = 3.4028234663852886e38;
  const std::vector<Boundary> cases = {
      {"Abs", 1, {{"consumed_inputs", Ints{0}}}, {"x"}, {"y"}, {}, {}, {"x"}},
      {"Relu", 5, {{"consumed_inputs", Ints{0}}}, {"x"}, {"y"}, {}, {}, {"x"}},
      {"Sum", 1, {{"consumed_inputs", Ints{0, 1}}}, {"a", "b"}, {"y"}, {}, {}, {"a", "b"}},
      // The legacy broadcast: equal shapes, B at A's end, B reshaped for an inner axis.
      {"Add", 6, {{"broadcast", I{0}}}, {"a", "b"}, {"y"}, {}, {}, {"a", "b"}},
      {"Mul", 6, {{"broadcast", I{1}}}, {"a", "b"}, {"y"}, {}, {}, {"a", "b"}},
      {"Sub", 6, {{"broadcast", I{1}}, {"axis", I{3}}}, {"a", "b"}, {"y"},
       {{"a", {{2, 3, 4, 5}}}, {"b", {{5}}}}, {}, {"a", "b"}},
      {"Add", 1, {{"broadcast", I{1}}, {"axis", I{1}}, {"consumed_inputs", Ints{0}}}, {"a", "b"}, {"y"},
       {{"a", {{2, 3, 4, 5}}}, {"b", {{3}, DType::Float32, floats({3}, {1, 2, 3})}}}, {},
       {"a", "float32[3, 1, 1] 1 2 3"}},
      {"Pow", 1, {{"broadcast", I{1}}}, {"a", "b"}, {"y"}, {}, {}, {"a", "b"}},
      {"Gemm", 6, {{"broadcast", I{1}}, {"transB", I{1}}}, {"a", "b", "c"}, {"y"}, {}, {{"transB", I{1}}},
       {"a", "b", "c"}},
      // B lined up as Caffe2 read it: leading and trailing 1s of B skipped ([3, 1] at axis 1, [1, 5] at
      // the end), numpy broadcasting reads them the same; Gemm-6 without broadcast with C of Y's shape,
      // transposes considered; Sum-6 of equal shapes; Flatten-9 with a non-negative axis.
      {"Add", 6, {{"broadcast", I{1}}, {"axis", I{1}}}, {"a", "b"}, {"y"},
       {{"a", {{2, 3, 4, 5}}}, {"b", {{3, 1}, DType::Float32, floats({3, 1}, {1, 2, 3})}}}, {},
       {"a", "float32[3, 1, 1] 1 2 3"}},
      {"Mul", 6, {{"broadcast", I{1}}}, {"a", "b"}, {"y"}, {{"a", {{2, 3, 4, 5}}}, {"b", {{1, 5}}}}, {},
       {"a", "b"}},
      {"Gemm", 6, {{"transA", I{1}}}, {"a", "b", "c"}, {"y"}, {{"a", {{4, 3}}}, {"b", {{4, 5}}}, {"c", {{3, 5}}}},
       {{"transA", I{1}}}, {"a", "b", "c"}},
      {"Sum", 6, {}, {"a", "b", "c"}, {"y"}, {{"a", {{2, 3}}}, {"b", {{2, 3}}}, {"c", {{2, 3}}}}, {},
       {"a", "b", "c"}},
      {"Flatten", 9, {{"axis", I{0}}}, {"x"}, {"y"}, {}, {{"axis", I{0}}}, {"x"}},
      {"Clip", 1, {{"min", 0.0}}, {"x"}, {"y"}, {}, {}, {"x", "float32[] 0"}},
      {"Clip", 6, {}, {"x"}, {"y"}, {}, {},
       {"x", "float32[] " + to_string(AttrValue(-fmax)), "float32[] " + to_string(AttrValue(fmax))}},
      {"Clip", 6, {{"min", 0.0}, {"max", 6.0}}, {"x"}, {"y"}, {{"x", {{2}, DType::Float16}}}, {},
       {"x", "float16[] 0", "float16[] 6"}},
      {"Concat", 1, {}, {"a", "b"}, {"y"}, {}, {{"axis", I{1}}}, {"a", "b"}},
      {"Concat", 4, {{"axis", I{0}}}, {"a", "b"}, {"y"}, {}, {{"axis", I{0}}}, {"a", "b"}},
      {"Selu", 1, {}, {"x"}, {"y"}, {},
       {{"alpha", static_cast<double>(1.6732f)}, {"gamma", static_cast<double>(1.0507f)}}, {"x"}},
      {"Selu", 6, {}, {"x"}, {"y"}, {}, {}, {"x"}},
      {"PRelu", 6, {}, {"x", "s"}, {"y"}, {{"s", {{1}}}}, {}, {"x", "s"}},
      {"PRelu", 1, {{"consumed_inputs", Ints{0}}}, {"x", "s"}, {"y"}, {{"x", {{2, 3}}}, {"s", {{3}}}}, {},
       {"x", "s"}},
      {"Softmax", 11, {}, {"x"}, {"y"}, {{"x", {{2, 5}}}}, {{"axis", I{1}}}, {"x"}},
      {"LogSoftmax", 1, {{"axis", I{1}}}, {"x"}, {"y"}, {{"x", {{2, 3, 1, 1}}}}, {{"axis", I{1}}}, {"x"}},
      {"Softmax", 1, {{"axis", I{-2}}}, {"x"}, {"y"}, {{"x", {{2, 1, 4}}}}, {{"axis", I{2}}}, {"x"}},
      {"Softmax", 13, {}, {"x"}, {"y"}, {}, {}, {"x"}},
      {"BatchNormalization", 6, {{"is_test", I{1}}, {"spatial", I{1}}, {"epsilon", 1e-3}},
       {"x", "s", "b", "m", "v"}, {"y"}, {}, {{"epsilon", 1e-3}}, {"x", "s", "b", "m", "v"}},
      {"BatchNormalization", 1, {{"consumed_inputs", Ints{0, 0}}}, {"x", "s", "b", "m", "v"}, {"y"}, {}, {},
       {"x", "s", "b", "m", "v"}},
      // training_mode is kept, read as ONNX defines it (docs/onnx.md).
      {"BatchNormalization", 15, {{"training_mode", I{0}}}, {"x", "s", "b", "m", "v"}, {"y"}, {},
       {{"training_mode", I{0}}}, {"x", "s", "b", "m", "v"}},
      {"BatchNormalization", 14, {{"training_mode", I{1}}}, {"x", "s", "b", "m", "v"}, {"y"}, {},
       {{"training_mode", I{1}}}, {"x", "s", "b", "m", "v"}},
      {"InstanceNormalization", 1, {{"consumed_inputs", Ints{0}}}, {"x", "s", "b"}, {"y"}, {}, {},
       {"x", "s", "b"}},
      {"Dropout", 6, {{"is_test", I{1}}, {"ratio", 0.25}}, {"x"}, {"y"}, {}, {}, {"x", "float32[] 0.25"}},
      {"Dropout", 10, {}, {"x"}, {"y", "mask"}, {}, {}, {"x"}},
      {"Cast", 1, {{"to", std::string("INT64")}}, {"x"}, {"y"}, {}, {{"to", I{7}}}, {"x"}},
      {"Cast", 6, {{"to", I{1}}}, {"x"}, {"y"}, {}, {{"to", I{1}}}, {"x"}},
      {"Reshape", 1, {{"shape", Ints{2, -1}}, {"consumed_inputs", Ints{0}}}, {"x"}, {"y"}, {}, {},
       {"x", "int64[2] 2 -1"}},
      {"Slice", 1, {{"starts", Ints{0}}, {"ends", Ints{2}}, {"axes", Ints{1}}}, {"x"}, {"y"}, {}, {},
       {"x", "int64[1] 0", "int64[1] 2", "int64[1] 1"}},
      {"Slice", 9, {{"starts", Ints{0}}, {"ends", Ints{2}}}, {"x"}, {"y"}, {}, {},
       {"x", "int64[1] 0", "int64[1] 2"}},
      {"Split", 2, {{"split", Ints{1, 2}}}, {"x"}, {"a", "b"}, {}, {}, {"x", "int64[2] 1 2"}},
      {"Split", 11, {{"axis", I{1}}}, {"x"}, {"a", "b", "c"}, {}, {{"axis", I{1}}, {"num_outputs", I{3}}}, {"x"}},
      {"Split", 13, {}, {"x"}, {"a", "b"}, {}, {{"num_outputs", I{2}}}, {"x"}},
      {"Split", 13, {}, {"x", "s"}, {"a", "b"}, {}, {}, {"x", "s"}},
      {"Split", 1, {{"axis", I{0}}}, {"x", "s"}, {"a", "b"}, {}, {{"axis", I{0}}}, {"x", "s"}},
      {"Split", 18, {{"num_outputs", I{2}}}, {"x"}, {"a", "b"}, {}, {{"num_outputs", I{2}}}, {"x"}},
      {"Pad", 1, {{"paddings", Ints{0, 1, 0, 1}}, {"mode", std::string("edge")}}, {"x"}, {"y"}, {},
       {{"mode", std::string("edge")}}, {"x", "int64[4] 0 1 0 1"}},
      {"Pad", 2, {{"pads", Ints{1, 1}}, {"value", 1.5}}, {"x"}, {"y"}, {{"x", {{3}, DType::Float64}}}, {},
       {"x", "int64[2] 1 1", "float64[] 1.5"}},
      {"Pad", 11, {}, {"x", "p"}, {"y"}, {}, {}, {"x", "p"}},
      {"Tile", 1, {}, {"x", "t", "a"}, {"y"},
       {{"x", {{2, 3}}}, {"t", {{}, DType::Int64, int64s({}, {4})}}, {"a", {{}, DType::Int64, int64s({}, {1})}}},
       {}, {"x", "int64[2] 1 4"}},
      {"ReduceMean", 13, {{"axes", Ints{1}}, {"keepdims", I{0}}}, {"x"}, {"y"}, {}, {{"keepdims", I{0}}},
       {"x", "int64[1] 1"}},
      {"ReduceSum", 11, {{"axes", Ints{-1}}}, {"x"}, {"y"}, {}, {}, {"x", "int64[1] -1"}},
      {"ReduceMax", 12, {}, {"x"}, {"y"}, {}, {}, {"x"}},
      {"ReduceL2", 18, {}, {"x", "a"}, {"y"}, {}, {}, {"x", "a"}},
      {"Resize", 10, {{"mode", std::string("linear")}}, {"x", "s"}, {"y"}, {}, 
       {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("asymmetric")}},
       {"x", "", "s"}},
      {"Resize", 10, {}, {"x", "s"}, {"y"}, {{"s", {{4}, DType::Float32, floats({4}, {1, 1, 2, 3})}}},
       {{"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string("floor")}},
       {"x", "", "s"}},
      {"Resize", 11, {{"mode", std::string("linear")}}, {"x", "r", "s"}, {"y"}, {}, {{"mode", std::string("linear")}},
       {"x", "r", "s"}},
      {"LpPool", 11, {{"kernel_shape", Ints{2}}, {"p", I{3}}}, {"x"}, {"y"}, {},
       {{"kernel_shape", Ints{2}}, {"p", I{3}}}, {"x"}},
      {"MaxUnpool", 9, {{"kernel_shape", Ints{2}}}, {"x", "i", "s"}, {"y"}, {}, {{"kernel_shape", Ints{2}}},
       {"x", "i", "s"}},
      {"Gelu", 20, {{"approximate", std::string("tanh")}}, {"x"}, {"y"}, {},
       {{"approximate", std::string("tanh")}}, {"x"}},
      {"GroupNormalization", 21, {{"num_groups", I{2}}}, {"x", "s", "b"}, {"y"}, {}, {{"num_groups", I{2}}},
       {"x", "s", "b"}},
  };
  for (const Boundary& b : cases) {
    SCOPED_TRACE(b.op + "-" + std::to_string(b.opset));
    Constants c;
    OnnxNode n = run(b, c);
    EXPECT_EQ(n.op_type, b.op);
    EXPECT_EQ(n.outputs, b.outputs);
    EXPECT_EQ(n.attributes, b.expected);
    EXPECT_EQ(rendered_inputs(n, c), b.expected_inputs);
    // The registered op takes what comes out: its attribute rules and its input count.
    const OpSchema* schema = OpRegistry::global().find(n.op_type);
    ASSERT_NE(schema, nullptr);
    EXPECT_NO_THROW(checked_attributes(n.op_type, schema->attributes, n.attributes, schema->check_attributes));
    EXPECT_LE(n.inputs.size(), schema->max_inputs());
  }
}

TEST(OpsetHistory, OldFormsWithoutAnExactLaterFormAreRefusedNamingNodeOpOpsetAndWhat) {
  struct HistoryRefusal {
    Boundary node;
    std::string message;
  };
  const std::vector<HistoryRefusal> cases = {
      {{"Add", 6, {{"broadcast", I{1}}, {"axis", I{1}}}, {"a", "b"}, {"y"}, {}, {}, {}},
       "node 'n1' (Add, opset 6): attribute 'axis': broadcast = 1 with axis = 1 lines B up at axis 1 of A (legacy "
       "broadcasting), numpy broadcasting at its end; read only when A's rank and B's shape are known"},
      {{"Div", 6, {{"broadcast", I{1}}, {"axis", I{1}}}, {"a", "b"}, {"y"}, {{"a", {{2, 3, 4}}}, {"b", {{3}}}}, {}, {}},
       "node 'n1' (Div, opset 6): attribute 'axis': broadcast = 1 with axis = 1 lines B up at axis 1 of A (legacy "
       "broadcasting), numpy broadcasting at its end; read only when B is an initializer"},
      {{"Add", 7, {{"broadcast", I{1}}}, {"a", "b"}, {"y"}, {}, {}, {}},
       "node 'n1' (Add, opset 7): attribute 'broadcast' was removed in opset 7"},
      // Legacy broadcasting that numpy broadcasting would read with another output shape, or not at all.
      {{"Add", 6, {{"broadcast", I{1}}}, {"a", "b"}, {"y"}, {{"a", {{3}}}, {"b", {{2, 3}}}}, {}, {}},
       "node 'n1' (Add, opset 6): attribute 'broadcast' = 1: B [2, 3] has more axes than A [3] (legacy "
       "broadcasting repeats B over A's axes: Y has A's shape)"},
      {{"Sub", 6, {{"broadcast", I{1}}}, {"a", "b"}, {"y"}, {{"a", {{2, 1, 4}}}, {"b", {{3, 4}}}}, {}, {}},
       "node 'n1' (Sub, opset 6): attribute 'broadcast' = 1 without 'axis': B [3, 4] does not line up with A [2, 1, "
       "4] at axis 1 (B's axis 0 is 3, A's axis 1 is 1; legacy broadcasting wants B's dimensions, less leading and "
       "trailing 1s, equal to A's)"},
      {{"Mul", 1, {{"broadcast", I{1}}, {"axis", I{1}}}, {"a", "b"}, {"y"},
        {{"a", {{2, 3, 4, 5}}}, {"b", {{4}, DType::Float32, floats({4}, {1, 2, 3, 4})}}}, {}, {}},
       "node 'n1' (Mul, opset 1): attribute 'axis' = 1: B [4] does not line up with A [2, 3, 4, 5] at axis 1 (B's "
       "axis 0 is 4, A's axis 1 is 3; legacy broadcasting wants B's dimensions, less leading and trailing 1s, equal "
       "to A's)"},
      {{"Gemm", 6, {{"broadcast", I{0}}}, {"a", "b", "c"}, {"y"}, {{"a", {{3, 4}}}, {"b", {{4, 5}}}, {"c", {{5}}}},
        {}, {}},
       "node 'n1' (Gemm, opset 6): C [5] is not Y's shape [3, 5], and without broadcast = 1 this opset wants it so "
       "(legacy broadcasting)"},
      {{"Gemm", 1, {{"transB", I{1}}}, {"a", "b", "c"}, {"y"}, {{"a", {{3, 4}}}, {"b", {{5, 4}}}, {"c", {{1, 5}}}},
        {}, {}},
       "node 'n1' (Gemm, opset 1): C [1, 5] is not Y's shape [3, 5], and without broadcast = 1 this opset wants it "
       "so (legacy broadcasting)"},
      {{"Max", 6, {}, {"a", "b"}, {"y"}, {{"a", {{2, 3}}}, {"b", {{3}}}}, {}, {}},
       "node 'n1' (Max, opset 6): input 1 is [3] where an earlier one is [2, 3]: before opset 8 the inputs have one "
       "shape (numpy broadcasting from 8)"},
      {{"Flatten", 9, {{"axis", I{-1}}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (Flatten, opset 9): attribute 'axis' = -1: negative axes exist from opset 11"},
      // The attributes that held what later became inputs, absent.
      {{"Reshape", 1, {}, {"x"}, {"y"}, {}, {}, {}}, "node 'n1' (Reshape, opset 1): attribute 'shape' is required at opset 1"},
      {{"Pad", 2, {{"mode", std::string("edge")}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (Pad, opset 2): attribute 'pads' is required at opset 2"},
      {{"Pad", 1, {}, {"x"}, {"y"}, {}, {}, {}}, "node 'n1' (Pad, opset 1): attribute 'paddings' is required at opset 1"},
      {{"Softmax", 12, {}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (Softmax, opset 12): Softmax before opset 13 normalizes over axes 1.. of the input flattened to "
       "2-D, from 13 over one axis: read only when the input's shape is known, and 'x' is not a graph input, an "
       "initializer or the output of a node listed before it"},
      {{"Softmax", 12, {}, {"x"}, {"y"}, {{"x", {{2, 3, 4}}}}, {}, {}},
       "node 'n1' (Softmax, opset 12): Softmax before opset 13 normalizes over axes 1.. of the input flattened to "
       "2-D, from 13 over one axis: the input's shape [2, 3, 4] has more than one axis from 1 on that is not 1 (or "
       "not known)"},
      {{"PRelu", 6, {}, {"x", "s"}, {"y"}, {{"s", {{3}}}}, {}, {}},
       "node 'n1' (PRelu, opset 6): PRelu before opset 7 applies a [C] slope per channel (axis 1), from 7 it "
       "broadcasts from the last axis: read only when the slope has one element, X's shape, or X is 2-D (shapes "
       "unknown or not so here)"},
      {{"BatchNormalization", 6, {{"is_test", I{0}}}, {"x", "s", "b", "m", "v"}, {"y"}, {}, {}, {}},
       "node 'n1' (BatchNormalization, opset 6): attribute 'is_test' = 0 (training mode) is not supported: the "
       "library takes the mode from the run"},
      {{"BatchNormalization", 7, {{"spatial", I{0}}}, {"x", "s", "b", "m", "v"}, {"y"}, {}, {}, {}},
       "node 'n1' (BatchNormalization, opset 7): attribute 'spatial' = 0 is not supported: statistics per "
       "activation ([C, D1, ...]) have no form in the library's BatchNormalization (opset 9 dropped them)"},
      {{"BatchNormalization", 9, {}, {"x", "s", "b", "m", "v"}, {"y", "mean"}, {}, {}, {}},
       "node 'n1' (BatchNormalization, opset 9): output 1 (mean, var, saved_mean, saved_var) is not supported: "
       "before opset 14 they make a training-mode node (the library takes the mode from the run)"},
      {{"Dropout", 7, {}, {"x"}, {"y", "mask"}, {}, {}, {}},
       "node 'n1' (Dropout, opset 7): output 1 (mask) is not supported: before opset 10 the mask has the data's "
       "dtype (a mask nothing reads is dropped)"},
      {{"Dropout", 12, {{"ratio", 0.5}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (Dropout, opset 12): attribute 'ratio' was removed in opset 12"},
      {{"Dropout", 10, {{"ratio", 0.5}}, {"x", "r"}, {"y"}, {}, {}, {}},
       "node 'n1' (Dropout, opset 10): has 2 inputs; Dropout at opset 10 takes at most 1"},
      {{"GroupNormalization", 18, {{"num_groups", I{2}}}, {"x", "s", "b"}, {"y"}, {}, {}, {}},
       "node 'n1' (GroupNormalization, opset 18): GroupNormalization-18 is not supported: its scale and bias are "
       "per group ([num_groups]); from opset 21 (the library's) per channel ([C])"},
      {{"ConvTranspose", 10, {{"auto_pad", std::string("SAME_UPPER")}}, {"x", "w"}, {"y"}, {}, {}, {}},
       "node 'n1' (ConvTranspose, opset 10): attribute 'auto_pad' = SAME_UPPER is not supported: before opset 11 "
       "ConvTranspose's definition puts the odd padding on the other side than from 11 on, and readers disagree"},
      {{"Cast", 1, {{"to", std::string("float")}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (Cast, opset 1): attribute 'to' = \"float\" is not a data type of Cast-1 (FLOAT, UINT8, INT8, "
       "UINT16, INT16, INT32, INT64, BOOL, FLOAT16, DOUBLE, UINT32, UINT64)"},
      {{"Cast", 6, {{"to", std::string("FLOAT")}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (Cast, opset 6): attribute 'to' must be INT at opset 6, got STRING"},
      {{"Slice", 1, {{"ends", Ints{2}}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (Slice, opset 1): attribute 'starts' is required at opset 1"},
      {{"Split", 1, {}, {"x"}, {"a", "b"}, {}, {}, {}},
       "node 'n1' (Split, opset 1): attribute 'axis' is required at opset 1"},
      {{"Split", 13, {{"split", Ints{1, 1}}}, {"x"}, {"a", "b"}, {}, {}, {}},
       "node 'n1' (Split, opset 13): attribute 'split' was removed in opset 13"},
      {{"Split", 17, {{"num_outputs", I{2}}}, {"x"}, {"a", "b"}, {}, {}, {}},
       "node 'n1' (Split, opset 17): attribute 'num_outputs' exists from opset 18"},
      {{"Pad", 2, {{"paddings", Ints{1, 1}}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (Pad, opset 2): attribute 'paddings' was removed in opset 2"},
      {{"Tile", 1, {}, {"x", "t", "a"}, {"y"}, {}, {}, {}},
       "node 'n1' (Tile, opset 1): Tile-1's inputs tiles and axis are read only when both are one-value "
       "initializers and the input's rank is known"},
      {{"Resize", 10, {}, {"x", "s"}, {"y"}, {{"s", {{4}, DType::Float32, floats({4}, {1, 1, 0.5f, 0.5f})}}}, {}, {}},
       "node 'n1' (Resize, opset 10): Resize-10's 'nearest' with a scale below 1 (0.5) has no defined rounding; "
       "not supported"},
      {{"Resize", 10, {}, {"x", "s"}, {"y"}, {}, {}, {}},
       "node 'n1' (Resize, opset 10): Resize-10's 'nearest' is read only with scales given as an initializer (its "
       "rounding is defined for scales >= 1)"},
      {{"Resize", 11, {{"coordinate_transformation_mode", std::string("tf_half_pixel_for_nn")}}, {"x", "r", "s"},
        {"y"}, {}, {}, {}},
       "node 'n1' (Resize, opset 11): attribute 'coordinate_transformation_mode' = \"tf_half_pixel_for_nn\" is not "
       "supported: opset 13 removed it and it has no later form"},
      {{"Resize", 17, {{"antialias", I{1}}}, {"x", "r", "s"}, {"y"}, {}, {}, {}},
       "node 'n1' (Resize, opset 17): attribute 'antialias' exists from opset 18"},
      {{"ReduceSum", 13, {{"axes", Ints{1}}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (ReduceSum, opset 13): attribute 'axes' was removed in opset 13"},
      {{"ReduceMean", 18, {{"axes", Ints{1}}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (ReduceMean, opset 18): attribute 'axes' was removed in opset 18"},
      {{"ReduceMean", 17, {{"noop_with_empty_axes", I{1}}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (ReduceMean, opset 17): attribute 'noop_with_empty_axes' exists from opset 18"},
      {{"ArgMax", 11, {{"select_last_index", I{1}}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (ArgMax, opset 11): attribute 'select_last_index' exists from opset 12"},
      {{"Reshape", 13, {{"allowzero", I{1}}}, {"x", "s"}, {"y"}, {}, {}, {}},
       "node 'n1' (Reshape, opset 13): attribute 'allowzero' exists from opset 14"},
      {{"Cast", 18, {{"to", I{1}}, {"saturate", I{0}}}, {"x"}, {"y"}, {}, {}, {}},
       "node 'n1' (Cast, opset 18): attribute 'saturate' exists from opset 19"},
      {{"LayerNormalization", 17, {{"foo", I{1}}}, {"x", "s"}, {"y"}, {}, {}, {}},
       "node 'n1' (LayerNormalization, opset 17): unknown attribute 'foo' (known at opset 17: axis, epsilon, "
       "stash_type)"},
      {{"Gemm", 10, {}, {"a", "b"}, {"y"}, {}, {}, {}},
       ""},
  };
  for (const HistoryRefusal& r : cases) {
    SCOPED_TRACE(r.node.op + "-" + std::to_string(r.node.opset));
    Constants c;
    if (r.message.empty()) {
      EXPECT_NO_THROW(run(r.node, c));  // Gemm before 11 wanted C; without it, it is still read
      continue;
    }
    std::string got;
    try {
      run(r.node, c);
    } catch (const Error& e) {
      got = e.what();
    }
    EXPECT_EQ(got, r.message);
  }
}

TEST(OpsetHistory, OpsThatCameLaterAreRefusedBeforeTheirFirstOpset) {
  Constants c;
  const std::vector<std::pair<std::string, int>> firsts = {
      {"Gelu", 20}, {"GroupNormalization", 18}, {"Mish", 18}, {"LayerNormalization", 17}, {"HardSwish", 14},
      {"Celu", 12}, {"NegativeLogLikelihoodLoss", 12}, {"SoftmaxCrossEntropyLoss", 12}, {"Resize", 10},
      {"MaxUnpool", 9}, {"Erf", 9}, {"Expand", 8}};
  for (const auto& [op, first] : firsts) {
    SCOPED_TRACE(op);
    const std::string at = std::to_string(first - 1);
    EXPECT_EQ(testing::error_of<InvalidGraph>([&] { upgraded(node(op, {}), first - 1, c); }),
              "node 'n1' (" + op + ", opset " + at + "): op not supported at opset " + at + " (" + op +
                  " exists from opset " + std::to_string(first) + ")");
  }
}

TEST(OpsetHistory, LowestOpsetPerOp) {
  auto lowest = [](std::string op, Attributes a, std::vector<std::string> inputs, std::vector<DType> dtypes) {
    NodeDef def;
    def.op_type = std::move(op);
    def.inputs = std::move(inputs);
    def.attributes = std::move(a);
    return onnx_import::lowest_opset(def, dtypes);
  };
  const DType f = DType::Float32, bf = DType::BFloat16, i = DType::Int64;
  EXPECT_EQ(lowest("Gelu", {}, {"x"}, {f}), 20);
  EXPECT_EQ(lowest("GroupNormalization", {{"num_groups", I{2}}}, {"x", "s", "b"}, {f, f, f}), 21);
  EXPECT_EQ(lowest("Conv", {}, {"x", "w"}, {bf, bf}), 22);
  EXPECT_EQ(lowest("Conv", {}, {"x", "w"}, {f, f}), 19);
  EXPECT_EQ(lowest("Dropout", {}, {"x", "r"}, {bf, f}), 19);   // Dropout-13's data takes bfloat16
  EXPECT_EQ(lowest("Dropout", {}, {"x", "r"}, {f, bf}), 22);   // its ratio only from 22
  EXPECT_EQ(lowest("NegativeLogLikelihoodLoss", {}, {"x", "t"}, {bf, i}), 22);
  EXPECT_EQ(lowest("MaxUnpool", {{"kernel_shape", Ints{2}}}, {"x", "i"}, {bf, i}), 22);
  EXPECT_EQ(lowest("MaxUnpool", {{"kernel_shape", Ints{2}}}, {"x", "i"}, {f, i}), 19);
  EXPECT_EQ(lowest("Split", {{"num_outputs", I{2}}}, {"x"}, {f}), 19);
  EXPECT_EQ(lowest("ReduceMax", {}, {"x", "a"}, {bf, i}), 19);
  EXPECT_EQ(lowest("Relu", {}, {"x"}, {bf}), 19);
  EXPECT_EQ(lowest("Mish", {}, {"x"}, {bf}), 22);
  EXPECT_EQ(lowest("Mish", {}, {"x"}, {f}), 19);
  EXPECT_EQ(lowest("LayerNormalization", {}, {"x", "s"}, {bf, bf}), 19);
  // An absent input's dtype is not looked at.
  EXPECT_EQ(lowest("Conv", {}, {"x", "w", ""}, {f, f, bf}), 19);
  // Every registered ONNX op is held by some opset from 19 to 22 in its plain form.
  for (const std::string& op : onnx_import::history_ops()) {
    SCOPED_TRACE(op);
    NodeDef def;
    def.op_type = op;
    const int o = onnx_import::lowest_opset(def, {});
    EXPECT_GE(o, onnx_import::kMinWrittenOpset);
    EXPECT_LE(o, onnx_import::kMaxOpset);
  }
}

}  // namespace
}  // namespace nodeflow

namespace nodeflow {
namespace {

TEST(OpsetHistory, EveryOpHasOnnxsTypeConstraintsForEachInputAndOutput) {
  for (const std::string& op : onnx_import::history_ops()) {
    SCOPED_TRACE(op);
    const auto types = onnx_import::onnx_type_constraints(op, onnx_import::kMaxOpset);
    ASSERT_TRUE(types.has_value());
    const onnx_import::VersionInfo last = onnx_import::op_versions(op).back();
    // One entry per input and output of the newest version; one for a variadic one.
    if (last.max_inputs != SIZE_MAX) {
      EXPECT_EQ(types->inputs.size(), last.max_inputs);
    }
    if (last.max_outputs != SIZE_MAX) {
      EXPECT_EQ(types->outputs.size(), last.max_outputs);
    }
    EXPECT_FALSE(types->inputs.empty());
    EXPECT_FALSE(types->outputs.empty());
  }
  // bfloat16 pooling is typed from opset 22 only.
  const auto at = [](int opset) { return onnx_import::onnx_type_constraints("AveragePool", opset)->inputs[0]; };
  EXPECT_EQ(at(21), (std::vector<DType>{DType::Float16, DType::Float32, DType::Float64}));
  EXPECT_EQ(at(22).back(), DType::BFloat16);
  EXPECT_FALSE(onnx_import::onnx_type_constraints("Gelu", 19).has_value());  // Gelu exists from 20
  EXPECT_FALSE(onnx_import::onnx_type_constraints("NoSuchOp", 22).has_value());
}

TEST(OpsetHistory, TypeProblemNamesEachInputAndOutputOutsideTheConstraint) {
  EXPECT_EQ(onnx_import::type_problem("Add", 19, {DType::Int64, DType::Int64}, {DType::Int64}), "");
  EXPECT_EQ(onnx_import::type_problem("Dropout", 19, {DType::Float32}, {DType::Float32, std::nullopt}), "");
  EXPECT_EQ(onnx_import::type_problem("Gemm", 19, {DType::Float32, DType::Int8, std::nullopt}, {DType::Float32}),
            "input 1 is int8, which ONNX's Gemm at opset 19 does not take (it takes float16, float32, float64, "
            "bfloat16, int64)");
  EXPECT_EQ(onnx_import::type_problem("Concat", 19, {DType::Float32, DType::Float32, DType::UInt8}, {}), "");
  EXPECT_EQ(onnx_import::type_problem("NoSuchOp", 19, {DType::Int8}, {}), "");
}

}  // namespace
}  // namespace nodeflow
