#include "core/accumulate.hpp"

#include <type_traits>

namespace nodeflow {

void add_scaled(Tensor& dst, const Tensor& src, double scale) {
  visit_float_dtype(dst.dtype(), [&](auto dst_tag) {
    using D = decltype(dst_tag);
    visit_float_dtype(src.dtype(), [&](auto src_tag) {
      using S = decltype(src_tag);
      using A = std::conditional_t<std::is_same_v<D, double> || std::is_same_v<S, double>, double, float>;
      D* d = dst.data<D>();
      const S* s = src.data<S>();
      const auto k = static_cast<A>(scale);
      for (std::int64_t i = 0; i < dst.numel(); ++i)
        d[i] = static_cast<D>(static_cast<A>(d[i]) + k * static_cast<A>(s[i]));
    });
  });
}

}  // namespace nodeflow
