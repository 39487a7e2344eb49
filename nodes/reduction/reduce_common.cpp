#include "nodes/reduction/reduce_common.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "nodes/common/layer_common.hpp"

namespace nodeflow {

std::vector<DType> reduce_dtypes(bool small_ints) {
  std::vector<DType> dtypes = float_dtypes();
  if (small_ints) {
    dtypes.push_back(DType::Int8);
    dtypes.push_back(DType::UInt8);
  }
  dtypes.push_back(DType::Int64);
  return dtypes;
}

void check_reduce_dtype(const std::string& op, DType dtype, const std::vector<DType>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), dtype) != allowed.end()) return;
  std::vector<std::string> names;
  for (DType d : allowed) names.emplace_back(dtype_name(d));
  throw UnsupportedDType(op + " does not take dtype " + std::string(dtype_name(dtype)) +
                         " (input 0 (data); allowed: " + join(names) + ")");
}

AttrSpec keepdims_spec(std::string doc) {
  AttrSpec s = flag_spec("keepdims", std::move(doc));
  s.default_value = AttrValue{std::int64_t{1}};
  return s;
}

}  // namespace nodeflow
