#pragma once
// Writing a gradient that no one reads before it has left the caches: an
// input gradient of a large tensor, overwritten (BackwardContext::
// overwrite_inputs, docs/architecture.md "Gradient buffers"). A plain store
// first reads each line it writes (a read for ownership), so writing n bytes
// moves 2n; non-temporal stores move n. They are weakly ordered: each call
// ends with a store fence, so they are visible before anything the thread
// stores afterwards (the end of a parallel range, which another thread waits on).
#include <cstddef>
#include <cstdint>

namespace nodeflow::stream_lines {

/// Tensors at least this large are written with non-temporal stores (and
/// Transpose's large outputs): half the last-level cache of the machines this
/// project is measured on; a smaller one is likely read again soon, from cache.
inline constexpr std::size_t kStreamBytes = std::size_t{16} << 20;
/// The shortest run worth one call: each call ends with a store fence, which
/// waits for its lines to reach memory.
inline constexpr std::int64_t kMinStreamElements = 1024;

/// dst[i] = k * src[i] for i < n (k = 1 copies: 1 * x is x).
void write_scaled(float* dst, const float* src, float k, std::int64_t n);
void write_scaled(double* dst, const double* src, double k, std::int64_t n);

/// dst[i] = v for i < n.
void write_fill(float* dst, float v, std::int64_t n);
void write_fill(double* dst, double v, std::int64_t n);

}  // namespace nodeflow::stream_lines
