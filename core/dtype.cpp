#include "core/dtype.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

#include "core/errors.hpp"

namespace nodeflow {
namespace {
constexpr std::array<std::pair<DType, std::string_view>, 8> kNames{{
    {DType::Float32, "float32"}, {DType::Float64, "float64"}, {DType::Float16, "float16"},
    {DType::BFloat16, "bfloat16"}, {DType::Int8, "int8"}, {DType::UInt8, "uint8"},
    {DType::Int64, "int64"}, {DType::Int32, "int32"},
}};
}  // namespace

std::string_view dtype_name(DType t) {
  for (const auto& [d, n] : kNames)
    if (d == t) return n;
  return "unknown";
}

bool parse_dtype(std::string_view name, DType& out) {
  for (const auto& [d, n] : kNames)
    if (n == name) {
      out = d;
      return true;
    }
  return false;
}

std::size_t dtype_size(DType t) {
  return visit_dtype(t, [](auto v) { return sizeof(v); });
}

bool is_graph_dtype(DType t) {
  return std::find(std::begin(kGraphDTypes), std::end(kGraphDTypes), t) != std::end(kGraphDTypes);
}

void require_graph_dtype(DType t, const std::string& where) {
  if (!is_graph_dtype(t))
    throw UnsupportedDType(where + ".dtype: " + std::string(dtype_name(t)) + " is not a graph dtype");
}

bool is_float(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

}  // namespace nodeflow
