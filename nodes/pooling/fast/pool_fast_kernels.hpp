#pragma once
// The fast pooling kernels, PoolKernels<B> (kernels/pool_kernels.hpp), with
// every piece: what an instruction-set file (pool_fast_<isa>.cpp) includes
// after its target switch and its lane backend (pool_fast_simd_<isa>.hpp),
// having included kernels/dependencies.hpp before the switch.
//
// Forward: per work item (one N x C plane, one chunk of outputs along axis 0)
// the last axis is reduced straight from the input, then axes n-2 .. 1 from
// scratch rows, and axis 0 into the output. MaxPool keeps an int32 plane
// offset beside each value when the argmax is wanted.
// Where the outer axes' windows are disjoint and the last axis is read in
// stride-2 pairs (2x2 and 2x2x2 windows with stride 2), a fused forward
// reduces each window's input rows straight from x instead (fused_item).
// Backward: MaxPool scatters dY into a per-plane sum that is added to dX in
// one pass (the reference's order, so the result is bitwise the same), or on
// the fused geometry updates each dX row from its window row's dY and argmax;
// AveragePool spreads dY / divisor back from axis 0 to the last axis, whose
// spread is fused with the update of dX, or on the fused geometry adds each
// window's shares straight to its dX rows.
#include "nodes/pooling/fast/kernels/pool_kernels.hpp"
#include "nodes/pooling/fast/kernels/row_input.hpp"
#include "nodes/pooling/fast/kernels/row_reduce.hpp"
#include "nodes/pooling/fast/kernels/outer_axes.hpp"
#include "nodes/pooling/fast/kernels/forward_fused.hpp"
#include "nodes/pooling/fast/kernels/forward_whole_plane.hpp"
#include "nodes/pooling/fast/kernels/forward.hpp"
#include "nodes/pooling/fast/kernels/backward_spread.hpp"
#include "nodes/pooling/fast/kernels/backward_average.hpp"
#include "nodes/pooling/fast/kernels/backward_max.hpp"
