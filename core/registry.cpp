#include "core/registry.hpp"

#include "core/errors.hpp"

namespace nodeflow {

void OpRegistry::add(OpSchema schema) {
  std::string key = schema.op_type;
  if (!schemas_.emplace(key, std::move(schema)).second)
    throw InvalidGraph("op_type '" + key + "' is registered twice");
}

const OpSchema* OpRegistry::find(const std::string& op_type) const {
  auto it = schemas_.find(op_type);
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, schema] : schemas_) out.push_back(name);
  return out;
}

}  // namespace nodeflow
