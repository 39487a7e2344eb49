#include "support/npy_compare.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <type_traits>

namespace nodeflow::testing {
namespace {

constexpr int kReportedElements = 5;

std::string multi_index(const Shape& shape, std::int64_t flat) {
  std::string out;
  for (auto axis = static_cast<std::ptrdiff_t>(shape.size()) - 1; axis >= 0; --axis) {
    const std::int64_t dim = shape[static_cast<std::size_t>(axis)];
    out = std::to_string(dim == 0 ? 0 : flat % dim) + (out.empty() ? "" : ", ") + out;
    flat = dim == 0 ? 0 : flat / dim;
  }
  return "[" + out + "]";
}

// Whether got matches want under the tolerance, in the comparison type C.
template <typename C>
bool close(C got, C want, C rtol, C atol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

template <typename T>
std::string element_mismatches(const Tensor& got, const Tensor& want, Tolerance tol) {
  // The README fixes the arithmetic: float32 for every float type but float64.
  using C = std::conditional_t<std::is_same_v<T, double>, double,
                               std::conditional_t<std::is_integral_v<T>, std::int64_t, float>>;
  const T* g = got.data<T>();
  const T* w = want.data<T>();
  std::ostringstream report;
  report.precision(std::is_same_v<C, double> ? 17 : 9);
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const C gv = static_cast<C>(g[i]);
    const C wv = static_cast<C>(w[i]);
    bool ok;
    if constexpr (std::is_integral_v<C>)
      ok = gv == wv;
    else
      ok = close<C>(gv, wv, static_cast<C>(tol.rtol), static_cast<C>(tol.atol));
    if (ok) continue;
    if (bad++ < kReportedElements) {
      report << "\n  at " << multi_index(got.shape(), i) << ": got " << gv << ", want " << wv;
      if constexpr (!std::is_integral_v<C>)
        report << " (allowed difference "
               << static_cast<C>(tol.atol) + static_cast<C>(tol.rtol) * std::fabs(wv) << ")";
    }
  }
  if (bad == 0) return {};
  return std::to_string(bad) + " of " + std::to_string(got.numel()) + " elements differ" +
         (std::is_integral_v<C> ? " (integers compare exactly)" : "") + report.str();
}

}  // namespace

std::string tensor_mismatch(const Tensor& got, const Tensor& want, Tolerance tolerance) {
  std::string problems;
  if (got.dtype() != want.dtype())
    problems += "dtype " + std::string(dtype_name(got.dtype())) + ", want " +
                std::string(dtype_name(want.dtype())) + "\n";
  if (got.shape() != want.shape())
    problems += "shape " + to_string(got.shape()) + ", want " + to_string(want.shape()) + "\n";
  if (!problems.empty()) return problems;
  return visit_dtype(got.dtype(), [&](auto tag) {
    return element_mismatches<decltype(tag)>(got, want, tolerance);
  });
}

}  // namespace nodeflow::testing
