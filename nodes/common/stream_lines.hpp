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

/// Overwritten gradients at least this large are written with non-temporal
/// stores: half the last-level cache this machine reports (sysconf), 16 MiB
/// where it reports none. A smaller tensor is likely read again soon, and
/// from that cache faster than from memory: on a VM that reports 508 MiB,
/// streaming a 51 MB gradient took 1.7-2x as long as plain stores (README,
/// "The ops beyond pooling"). glibc's memcpy likewise derives its
/// non-temporal threshold from the reported shared cache.
std::size_t stream_bytes();
/// Replaces stream_bytes() for this process (0: the machine's figure again),
/// so tests can run the streamed paths on small tensors.
void set_stream_bytes(std::size_t bytes);
/// Scattered writes, a transposed copy's tiles writing one cache line into
/// each of 16 long output rows, or LayerNormalization's backward writing
/// one into each of 4 rows in turn, stream from this size whatever the
/// cache: there a plain store's read for ownership is not prefetched, and
/// streaming halved Transpose's [N, HW, C] -> [N, C, HW] copy of 51 MB on
/// the VM where it slowed the sequential writes (README, "The ops beyond
/// pooling").
inline constexpr std::size_t kScatteredStreamBytes = std::size_t{16} << 20;
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
