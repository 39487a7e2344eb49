// `nodeflow ops --json` (serialization/op_schema_json.hpp, docs/ops-json.md):
// every registered op with every input, output and attribute its schema
// declares, and the node keys.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/registry.hpp"
#include "serialization/op_schema_json.hpp"

namespace nodeflow {
namespace {

using nlohmann::json;

std::set<std::string> names_in(const json& list) {
  std::set<std::string> names;
  for (const auto& item : list) names.insert(item.at("name").get<std::string>());
  return names;
}

TEST(OpSchemaJson, EveryRegisteredOpWithEveryInputOutputAndAttribute) {
  const OpRegistry& registry = OpRegistry::global();
  const json doc = json::parse(op_schemas_json(registry));
  EXPECT_EQ(doc.at("format"), "nodeflow.ops");
  EXPECT_EQ(doc.at("version"), 1);
  std::set<std::string> listed;
  for (const auto& op : doc.at("ops")) {
    const std::string op_type = op.at("op_type");
    SCOPED_TRACE(op_type);
    listed.insert(op_type);
    const OpSchema* s = registry.find(op_type);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(op.at("definition"), s->definition);
    // A palette's tooltip: one line, non-empty, short.
    EXPECT_EQ(op.at("doc"), s->doc);
    EXPECT_FALSE(s->doc.empty());
    EXPECT_EQ(s->doc.find('\n'), std::string::npos);
    EXPECT_LE(s->doc.size(), 120u);
    ASSERT_EQ(op.at("inputs").size(), s->inputs.size());
    for (std::size_t k = 0; k < s->inputs.size(); ++k) {
      const json& in = op.at("inputs")[k];
      EXPECT_EQ(in.at("name"), s->inputs[k].name);
      EXPECT_EQ(in.at("optional"), k >= s->min_inputs);
      EXPECT_EQ(in.at("constant"), s->inputs[k].constant);
      EXPECT_EQ(in.at("variadic"), s->inputs[k].variadic);
      EXPECT_EQ(in.at("differentiable"), receives_gradient(s->inputs[k]));
      EXPECT_EQ(in.at("dtypes").size(), s->inputs[k].dtypes.size());
    }
    ASSERT_EQ(op.at("outputs").size(), s->outputs.size());
    for (std::size_t k = 0; k < s->outputs.size(); ++k)
      EXPECT_EQ(op.at("outputs")[k].at("name"), s->outputs[k].name);
    std::set<std::string> declared;
    for (const auto& spec : s->attributes) declared.insert(spec.name);
    EXPECT_EQ(names_in(op.at("attributes")), declared);
    EXPECT_EQ(op.at("attributes").size(), s->attributes.size());
    for (const auto& a : op.at("attributes")) {
      const AttrSpec* spec = find_spec(s->attributes, a.at("name"));
      ASSERT_NE(spec, nullptr);
      EXPECT_EQ(a.at("rule"), describe(*spec));
      EXPECT_EQ(a.at("default").is_null(), !spec->default_value.has_value()) << spec->name;
      EXPECT_EQ(a.at("since_version"), spec->since_version);
    }
  }
  const auto names = registry.names();
  EXPECT_EQ(listed, std::set<std::string>(names.begin(), names.end()));
  EXPECT_EQ(names_in(doc.at("node_keys")),
            (std::set<std::string>{"training", "lda_coeff", "specified_outputs_name"}));
}

TEST(OpSchemaJson, MaxPoolInDetail) {
  const json doc = json::parse(op_schemas_json());
  json maxpool;
  for (const auto& op : doc.at("ops"))
    if (op.at("op_type") == "MaxPool") maxpool = op;
  ASSERT_FALSE(maxpool.is_null());
  EXPECT_EQ(maxpool.at("domain"), "");
  EXPECT_EQ(maxpool.at("version"), 22);
  EXPECT_EQ(maxpool.at("doc"),
            "Max over each window of kernel_shape (strides, pads, dilations, ceil_mode); optional argmax "
            "Indices");
  EXPECT_EQ(maxpool.at("differentiable"), true);
  EXPECT_EQ(maxpool.at("outputs")[1].at("name"), "Indices");
  EXPECT_EQ(maxpool.at("outputs")[1].at("optional"), true);
  EXPECT_EQ(maxpool.at("outputs")[1].at("dtypes"), json::array({"int64"}));
  for (const auto& a : maxpool.at("attributes")) {
    if (a.at("name") == "auto_pad") {
      EXPECT_EQ(a.at("kind"), "STRING");
      EXPECT_EQ(a.at("default"), "NOTSET");
      EXPECT_TRUE(a.at("allowed").is_array());
    }
    if (a.at("name") == "strides") {
      EXPECT_EQ(a.at("kind"), "INTS");
      EXPECT_EQ(a.at("length").at("of"), "kernel_shape");
    }
    if (a.at("name") == "kernel_shape") {
      EXPECT_EQ(a.at("required"), true);
    }
  }
}

TEST(OpSchemaJson, VersionComesFromTheDefinition) {
  OpSchema s;
  s.op_type = "Conv";
  s.definition = "ONNX Conv-22";
  EXPECT_EQ(op_version(s).domain, "");
  EXPECT_EQ(op_version(s).version, 22);
  for (const char* other : {"test op", "ONNX Conv-", "ONNX Conv-2x", "ONNX Gemm-13"}) {
    s.definition = other;
    EXPECT_EQ(op_version(s).domain, "nodeflow") << other;
    EXPECT_EQ(op_version(s).version, 0) << other;
  }
}

}  // namespace
}  // namespace nodeflow
