#pragma once
// Element types of nodeflow tensors and a compile-time dispatch over them.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace nodeflow {

/// Element type of a tensor. Names follow ONNX / numpy ("float32", "int8", ...).
/// Int32 is internal (MaxPool's training state): graphs and .npy files do
/// not take it (kGraphDTypes).
enum class DType : std::uint8_t { Float32, Float64, Float16, BFloat16, Int8, UInt8, Int64, Int32 };

using half = Eigen::half;          ///< IEEE binary16
using bfloat16 = Eigen::bfloat16;  ///< brain float (8-bit exponent, 7-bit mantissa)

/// "float32", "float64", "float16", "bfloat16", "int8", "uint8", "int64", "int32".
std::string_view dtype_name(DType t);
/// Inverse of dtype_name. Returns false for an unknown name.
bool parse_dtype(std::string_view name, DType& out);
/// Bytes per element.
std::size_t dtype_size(DType t);
/// True for the floating-point dtypes (the differentiable ones).
bool is_float(DType t);

/// The dtypes of graph documents, graph inputs and initializers and .npy
/// files (docs/graph-format.md), in its order: all but the internal Int32.
inline constexpr DType kGraphDTypes[] = {DType::Float32, DType::Float64, DType::Float16,
                                         DType::BFloat16, DType::Int8,    DType::UInt8,
                                         DType::Int64};
/// True for the kGraphDTypes.
bool is_graph_dtype(DType t);
/// Throws UnsupportedDType "<where>.dtype: <dtype> is not a graph dtype"
/// unless is_graph_dtype(t): a graph holding one could be saved but not read.
void require_graph_dtype(DType t, const std::string& where);

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<half> { static constexpr DType value = DType::Float16; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct dtype_of<std::int8_t> { static constexpr DType value = DType::Int8; };
template <> struct dtype_of<std::uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::Int32; };
template <typename T> inline constexpr DType dtype_of_v = dtype_of<T>::value;

/// True for int64 and int32, which the pooling kernels do not take (docs/pooling.md,
/// dtypes; MaxPool's indices are kept in them).
template <typename T>
inline constexpr bool is_index_type_v =
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t>;

/// Type used to accumulate sums of T: float16 and bfloat16 accumulate in float32
/// (docs/pooling.md, "Values"); every other type in itself.
template <typename T> struct accumulator { using type = T; };
template <> struct accumulator<half> { using type = float; };
template <> struct accumulator<bfloat16> { using type = float; };
template <typename T> using accumulator_t = typename accumulator<T>::type;

/// Calls f(T{}) with the C++ element type of `t`. Every dtype is covered, so a
/// caller restricts the set itself (see nodes' dtype checks) before dispatching.
template <typename F> decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(half{});
    case DType::BFloat16: return f(bfloat16{});
    case DType::Int8: return f(std::int8_t{});
    case DType::UInt8: return f(std::uint8_t{});
    case DType::Int64: return f(std::int64_t{});
    case DType::Int32: return f(std::int32_t{});
  }
  return f(float{});  // unreachable: the enum is closed
}

/// Calls f(T{}) for the float dtypes only; other dtypes must have been refused before.
template <typename F> decltype(auto) visit_float_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Float64: return f(double{});
    case DType::Float16: return f(half{});
    case DType::BFloat16: return f(bfloat16{});
    default: return f(float{});
  }
}

}  // namespace nodeflow
