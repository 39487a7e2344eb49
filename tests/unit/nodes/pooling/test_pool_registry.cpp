// The pooling ops' schemas in the registry: names, definitions, inputs,
// outputs and attribute declarations (pooling.md "Attributes and defaults").
#include <gtest/gtest.h>

#include <algorithm>

#include "core/errors.hpp"
#include "core/graph.hpp"
#include "support/gradcheck.hpp"

namespace nodeflow {
namespace {

using strings = std::vector<std::string>;

strings attribute_names(const OpSchema& s) {
  strings names;
  for (const auto& a : s.attributes) names.push_back(a.name);
  return names;
}

strings tensor_names(const std::vector<TensorSpec>& specs) {
  strings names;
  for (const auto& t : specs) names.push_back(t.name);
  return names;
}

const OpSchema& schema(const std::string& op) {
  const OpSchema* s = OpRegistry::global().find(op);
  if (!s) throw InvalidGraph(op + " is not registered");
  return *s;
}

TEST(PoolRegistry, EveryPoolingOpIsRegisteredWithItsSource) {
  for (const char* op :
       {"AveragePool", "MaxPool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "MaxUnpool"}) {
    const OpSchema& s = schema(op);
    EXPECT_EQ(s.op_type, op);
    EXPECT_EQ(s.definition, std::string("ONNX ") + op + "-22");
    EXPECT_TRUE(static_cast<bool>(s.create)) << op;
    const strings names = attribute_names(s);
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end())) << op;
  }
}

TEST(PoolRegistry, InputsOutputsAndAttributes) {
  EXPECT_EQ(attribute_names(schema("AveragePool")),
            (strings{"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
                     "pads", "strides"}));
  EXPECT_EQ(attribute_names(schema("MaxPool")),
            (strings{"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order",
                     "strides"}));
  EXPECT_EQ(attribute_names(schema("LpPool")), (strings{"auto_pad", "ceil_mode", "dilations",
                                                        "kernel_shape", "p", "pads", "strides"}));
  EXPECT_EQ(attribute_names(schema("MaxUnpool")), (strings{"kernel_shape", "pads", "strides"}));
  EXPECT_TRUE(schema("GlobalAveragePool").attributes.empty());
  EXPECT_TRUE(schema("GlobalMaxPool").attributes.empty());

  const OpSchema& max = schema("MaxPool");
  EXPECT_EQ(tensor_names(max.outputs), (strings{"Y", "Indices"}));
  EXPECT_EQ(max.min_outputs, 1u);
  const OpSchema& unpool = schema("MaxUnpool");
  EXPECT_EQ(tensor_names(unpool.inputs), (strings{"X", "I", "output_shape"}));
  EXPECT_EQ(unpool.min_inputs, 2u);
  EXPECT_EQ(tensor_names(schema("GlobalMaxPool").outputs), (strings{"Y"}));

  const auto& specs = schema("AveragePool").attributes;
  const auto kernel = std::find_if(specs.begin(), specs.end(),
                                   [](const AttrSpec& a) { return a.name == "kernel_shape"; });
  ASSERT_NE(kernel, specs.end());
  EXPECT_TRUE(kernel->required);
  EXPECT_EQ(kernel->min, 1);
  const auto auto_pad = std::find_if(specs.begin(), specs.end(),
                                     [](const AttrSpec& a) { return a.name == "auto_pad"; });
  ASSERT_NE(auto_pad, specs.end());
  EXPECT_EQ(auto_pad->allowed, (strings{"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}));
  EXPECT_EQ(std::get<std::string>(*auto_pad->default_value), "NOTSET");
}

// create_node is the one way a node is built: it checks the attributes and
// fills their defaults before the factory reads them.
TEST(PoolRegistry, FactoriesValidateTheirAttributes) {
  const OpSchema& s = schema("MaxPool");
  NodeConfig bad{"MaxPool",
                 "p",
                 {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                  {"pads", std::vector<std::int64_t>{1, 1}}}};
  EXPECT_THROW(create_node(s, bad), InvalidAttribute);
  NodeConfig good{"MaxPool", "p", {{"kernel_shape", std::vector<std::int64_t>{2, 2}}}};
  EXPECT_EQ(create_node(s, good)->name(), "p");
}

}  // namespace
}  // namespace nodeflow
