#pragma once
// The convolution kernels of Conv and ConvTranspose: im2col over a chunk of
// images plus one matrix product per (chunk, group), and their adjoints.
// ConvTranspose is the adjoint of a Conv, so both ops run these two functions
// with the roles of the tensors exchanged (docs/operators.md, "Gradient
// conventions": ConvTranspose).
//
// Layouts are Conv's, for the geometry g: x is N x C x D1..Dn (g.axes[].in),
// w is M x C/group x k1..kn, y is N x M x O1..On (g.axes[].out).
//
// Threads: the batch is cut into chunks of images whose size depends on the
// geometry alone (never on `threads`); the chunks are shared out over up to
// `threads` threads, or, with fewer chunks than threads, each product is
// split instead (matrix_product). y and dx are the same for every thread
// count; dw is summed per thread and the partial sums added in thread order,
// so it is reproducible for a given thread count.
#include <cstdint>

#include "nodes/conv/conv_geometry.hpp"

namespace nodeflow {

/// y = conv(x, w) (+ b per output channel, b may be null); y is written fully.
/// Work buffers are refused over max_bytes (check_tensor_bytes).
template <typename T>
void conv_forward(const ConvGeometry& g, const T* x, const T* w, const T* b, T* y, std::uint64_t max_bytes,
                  int threads);

/// Adds the gradients of conv(x, w, b) for the output gradient dy into dx,
/// dw, db (each may be null: not wanted; x is read only for dw).
template <typename T>
void conv_backward(const ConvGeometry& g, const T* x, const T* w, const T* dy, T* dx, T* dw, T* db,
                   std::uint64_t max_bytes, int threads);

/// y[n, c, :] += b[c] over `batch` images of `channels` planes of `plane` elements.
template <typename T>
void add_channel_bias(const T* b, std::int64_t batch, std::int64_t channels, std::int64_t plane, T* y);

/// db[c] += the sum of dy[n, c, :]: the gradient of add_channel_bias.
template <typename T>
void add_channel_sums(const T* dy, std::int64_t batch, std::int64_t channels, std::int64_t plane, T* db);

}  // namespace nodeflow
