#include "core/accumulate.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/parallel.hpp"

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

void zero_fill(Tensor& t, int threads) {
  std::byte* p = t.raw();
  const auto bytes = static_cast<std::int64_t>(t.nbytes());
  constexpr std::int64_t kLine = 64, kParallelBytes = std::int64_t{1} << 16;
  parallel_ranges(bytes < kParallelBytes ? 1 : threads, (bytes + kLine - 1) / kLine,
                  [&](std::int64_t b, std::int64_t e) {
                    std::memset(p + b * kLine, 0, static_cast<std::size_t>(std::min(bytes, e * kLine) - b * kLine));
                  });
}

}  // namespace nodeflow
