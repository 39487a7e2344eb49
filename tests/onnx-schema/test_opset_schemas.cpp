// The opset history's table (serialization/onnx/opset_history.hpp) against
// ONNX's own operator schemas (libonnx-dev 1.12, which knows every version up
// to opset 17): for every registered op and every opset 1 ... 17, the version in
// effect (its since_version), its attribute names and kinds, its largest input
// and output counts, and every ONNX default that differs from the registered
// op's being made explicit. The library itself does not link libonnx.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <climits>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "core/registry.hpp"
#include "serialization/onnx/opset_history.hpp"

namespace nodeflow {
namespace {

using onnx_import::VersionInfo;

constexpr int kLibOnnxMaxOpset = 17;

std::string onnx_kind(onnx::AttributeProto::AttributeType t) {
  switch (t) {
    case onnx::AttributeProto::INT: return "INT";
    case onnx::AttributeProto::FLOAT: return "FLOAT";
    case onnx::AttributeProto::STRING: return "STRING";
    case onnx::AttributeProto::INTS: return "INTS";
    case onnx::AttributeProto::FLOATS: return "FLOATS";
    case onnx::AttributeProto::STRINGS: return "STRINGS";
    default: return "type " + std::to_string(static_cast<int>(t));
  }
}

std::size_t count(int onnx_max) {
  return onnx_max == INT_MAX ? SIZE_MAX : static_cast<std::size_t>(onnx_max);
}

const VersionInfo* version_at(const std::vector<VersionInfo>& versions, int opset) {
  const VersionInfo* found = nullptr;
  for (const VersionInfo& v : versions)
    if (v.since <= opset) found = &v;
  return found;
}

/// An ONNX attribute default as an AttrValue; nullopt without one.
std::optional<AttrValue> onnx_default(const onnx::OpSchema::Attribute& a) {
  const onnx::AttributeProto& d = a.default_value;
  switch (a.type) {
    case onnx::AttributeProto::INT:
      if (d.has_i()) return AttrValue(static_cast<std::int64_t>(d.i()));
      break;
    case onnx::AttributeProto::FLOAT:
      if (d.has_f()) return AttrValue(static_cast<double>(d.f()));
      break;
    case onnx::AttributeProto::STRING:
      if (d.has_s()) return AttrValue(d.s());
      break;
    default: break;
  }
  return std::nullopt;
}

/// Defaults compare as ONNX stores them: floats as float32.
bool same_default(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a))
    return static_cast<float>(*x) == static_cast<float>(std::get<double>(b));
  return a == b;
}

/// The registered ops of ONNX (not the tests' own).
std::vector<std::string> onnx_ops() {
  std::vector<std::string> ops;
  for (const std::string& op : OpRegistry::global().names())
    if (OpRegistry::global().find(op)->definition.rfind("ONNX ", 0) == 0) ops.push_back(op);
  return ops;
}

TEST(OpsetSchemas, TheTableAgreesWithOnnxForEveryOpAndOpsetUpTo17) {
  std::size_t checked = 0, versions_checked = 0;
  std::set<std::pair<std::string, int>> distinct;
  for (const std::string& op : onnx_ops()) {
    SCOPED_TRACE(op);
    const std::vector<VersionInfo> versions = onnx_import::op_versions(op);
    for (int opset = 1; opset <= kLibOnnxMaxOpset; ++opset) {
      SCOPED_TRACE("opset " + std::to_string(opset));
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, opset, "");
      const VersionInfo* mine = version_at(versions, opset);
      ++checked;
      if (schema == nullptr) {
        EXPECT_EQ(mine, nullptr) << "the table has " << op << "-" << mine->since << ", ONNX none";
        continue;
      }
      ASSERT_NE(mine, nullptr) << "ONNX has " << op << "-" << schema->since_version() << ", the table none";
      EXPECT_EQ(mine->since, schema->since_version());
      if (mine->since != schema->since_version()) continue;
      if (distinct.insert({op, mine->since}).second) ++versions_checked;
      std::map<std::string, std::string> theirs, ours;
      for (const auto& [name, a] : schema->attributes()) theirs[name] = onnx_kind(a.type);
      for (const auto& a : mine->attributes) ours[a.name] = onnx_import::onnx_attribute_type(a.kind);
      EXPECT_EQ(ours, theirs);
      EXPECT_EQ(mine->max_inputs, count(schema->max_input()));
      EXPECT_EQ(mine->max_outputs, count(schema->max_output()));
      // Every ONNX default the registered op does not share is made explicit,
      // unless the attribute becomes an input or another step decides it.
      const OpSchema* registered = OpRegistry::global().find(op);
      for (const auto& [name, a] : schema->attributes()) {
        const std::optional<AttrValue> d = onnx_default(a);
        if (!d) continue;
        const AttrSpec* spec = find_spec(registered->attributes, name);
        const bool moved = std::any_of(mine->moved_to_inputs.begin(), mine->moved_to_inputs.end(),
                                       [&](const auto& m) { return m.first == name; });
        const auto old = std::find_if(mine->old_defaults.begin(), mine->old_defaults.end(),
                                      [&](const auto& o) { return o.first == name; });
        if (old != mine->old_defaults.end()) {
          EXPECT_TRUE(same_default(old->second, *d)) << name << ": the table's old default " << to_string(old->second)
                                                    << ", ONNX's " << to_string(*d);
          continue;
        }
        if (spec == nullptr || moved) continue;
        if (spec->kind != static_cast<AttrKind>(d->index())) continue;  // a kind change has its own step
        const bool agrees = spec->default_value && same_default(*spec->default_value, *d);
        const bool decided = !mine->notes.empty();  // Softmax-1's axis: set by the coerced-2D step
        EXPECT_TRUE(agrees || decided) << name << ": ONNX default " << to_string(*d) << ", the registry's "
                                       << (spec->default_value ? to_string(*spec->default_value) : "none");
      }
    }
  }
  std::cout << "checked " << onnx_ops().size() << " ops x opsets 1.." << kLibOnnxMaxOpset << " = " << checked
            << " (op, opset) pairs, " << versions_checked << " distinct ONNX versions\n";
  EXPECT_EQ(onnx_ops().size(), 77u);
}

/// The nodeflow dtypes among an ONNX formal parameter's types, sorted.
std::set<DType> graph_dtypes_of(const onnx::OpSchema::FormalParameter& p) {
  static const std::map<std::string, DType> kNames = {
      {"tensor(float)", DType::Float32}, {"tensor(double)", DType::Float64}, {"tensor(float16)", DType::Float16},
      {"tensor(bfloat16)", DType::BFloat16}, {"tensor(int8)", DType::Int8}, {"tensor(uint8)", DType::UInt8},
      {"tensor(int64)", DType::Int64}};
  std::set<DType> out;
  for (const auto* type : p.GetTypes())
    if (const auto it = kNames.find(*type); it != kNames.end()) out.insert(it->second);
  return out;
}

TEST(OpsetSchemas, TheTypeConstraintsAgreeWithOnnxAtOpset17) {
  // The writer's table holds opset 22's constraints; at 17 without what came
  // later (bfloat16 at 22), they must be libonnx's for every op it knows then.
  std::size_t checked = 0;
  for (const std::string& op : onnx_ops()) {
    SCOPED_TRACE(op);
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, kLibOnnxMaxOpset, "");
    const auto mine = onnx_import::onnx_type_constraints(op, kLibOnnxMaxOpset);
    if (schema == nullptr) {
      EXPECT_FALSE(mine.has_value());
      continue;
    }
    ASSERT_TRUE(mine.has_value());
    const auto compare = [&](const char* what, const std::vector<onnx::OpSchema::FormalParameter>& theirs,
                             const std::vector<std::vector<DType>>& ours) {
      ASSERT_FALSE(ours.empty());
      for (std::size_t k = 0; k < theirs.size(); ++k) {
        const std::vector<DType>& o = ours[std::min(k, ours.size() - 1)];
        EXPECT_EQ(std::set<DType>(o.begin(), o.end()), graph_dtypes_of(theirs[k])) << what << " " << k;
        ++checked;
      }
    };
    compare("input", schema->inputs(), mine->inputs);
    compare("output", schema->outputs(), mine->outputs);
  }
  std::cout << "checked the type constraints of " << checked << " inputs and outputs\n";
}

}  // namespace
}  // namespace nodeflow
