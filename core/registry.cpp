#include "core/registry.hpp"

#include <algorithm>
#include <limits>

#include "core/errors.hpp"

namespace nodeflow {

bool receives_gradient(const TensorSpec& spec) {
  return spec.differentiable && !spec.constant &&
         std::any_of(spec.dtypes.begin(), spec.dtypes.end(), is_float);
}

const TensorSpec& OpSchema::input(std::size_t k) const {
  return inputs.at(std::min(k, inputs.size() - 1));
}

std::size_t OpSchema::max_inputs() const {
  return !inputs.empty() && inputs.back().variadic ? std::numeric_limits<std::size_t>::max()
                                                   : inputs.size();
}

std::size_t OpSchema::max_outputs() const {
  return !outputs.empty() && outputs.back().variadic ? std::numeric_limits<std::size_t>::max()
                                                     : outputs.size();
}

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
