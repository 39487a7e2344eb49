#pragma once
// Registration of the data-movement family (ONNX opset 22): ops that move,
// copy or relabel elements without arithmetic, so each takes every graph
// dtype. Gradients flow to float inputs only and are the exact inverse
// movement (docs/operators.md, "Gradient conventions"); shape-like inputs
// (axes, split, pads, ...) are constant int64 initializers and get none.
// Flatten and Reshape are declared in nodes/layer_ops.hpp.
//
// Each op registers its schema and factory from its own .cpp, next to its
// node class; register_builtin_ops (nodes/builtin_ops.cpp) calls them all.
namespace nodeflow {

class OpRegistry;

/// Transpose-21: data (any dtype, rank r) -> dimension k is data's
/// dimension perm[k]; perm defaults to the reversed axes. InvalidAttribute
/// for a perm that is not a permutation of 0..r-1.
void register_transpose(OpRegistry& registry);
/// Concat-13: one or more inputs (one dtype and rank, equal dimensions
/// except along axis) joined along axis, in [-r, r-1] (required).
/// InvalidAttribute for the axis, ShapeMismatch or UnsupportedDType naming
/// the input that does not fit. Gradient: each input's slice.
void register_concat(OpRegistry& registry);
/// Split-18: input (any dtype) cut along axis (default 0) into the node's
/// outputs: lengths from split (1-D int64 initializer, >= 0, adding up to the
/// axis length), or num_outputs chunks of ceil(n / num_outputs) (the last
/// smaller; without specified_outputs_name the outputs are name, name:1,
/// ...), or equal parts. Gradient: the output gradients joined, absent ones zero.
void register_split(OpRegistry& registry);
/// Squeeze-21: data (any dtype), optional axes (1-D int64 initializer in
/// [-r, r-1], no repeats; absent: every axis of length 1) -> those axes
/// removed; ShapeMismatch for an axis whose length is not 1.
void register_squeeze(OpRegistry& registry);
/// Unsqueeze-21: data (any dtype), axes (1-D int64 initializer in
/// [-r', r'-1] for the output rank r' = r + len(axes), no repeats) -> new
/// axes of length 1 there.
void register_unsqueeze(OpRegistry& registry);
/// Cast-21: input (any dtype) -> dtype `to` (ONNX codes 1, 2, 3, 7, 10, 11,
/// 16). float -> integer truncates, saturates out of range, NaN -> 0;
/// integer -> integer wraps; -> float rounds to nearest even. Gradient
/// between float dtypes only: the output gradient cast back.
void register_cast(OpRegistry& registry);
/// Slice-13: data (any dtype), starts, ends, optional axes and steps (1-D
/// int64 initializers, one value per sliced axis) -> data's rank, each sliced
/// axis ceil((end - start) / step) long after ONNX's clamping. ShapeMismatch
/// for a step 0, repeated or out-of-range axes, lists of different lengths.
/// Gradient: the output gradient back at the positions taken, 0 elsewhere.
void register_slice(OpRegistry& registry);
/// Pad-21: data (any dtype), pads (1-D int64 initializer: begins then ends,
/// one pair per padded axis; negative values crop), optional constant_value
/// (scalar of data's dtype, default 0; receives no gradient) and axes (1-D
/// int64 initializer; default all); mode constant, reflect, edge or wrap.
/// ShapeMismatch for a negative output size or a border to copy from an
/// empty axis. Gradient: copied border elements add into their sources.
void register_pad(OpRegistry& registry);
/// Expand-13: input (any dtype), shape (1-D int64 initializer) -> the numpy
/// broadcast of input's shape and shape (a 1 in shape keeps input's
/// dimension). ShapeMismatch when they do not broadcast or shape holds a
/// negative value. Gradient: the sum over the copies.
void register_expand(OpRegistry& registry);
/// Tile-13: input (any dtype), repeats (1-D int64 initializer, one
/// non-negative value per axis) -> each dimension times its repeat.
/// Gradient: the sum over the copies.
void register_tile(OpRegistry& registry);
/// Gather-13: data (any dtype, rank r >= 1), int64 indices (any shape, values
/// in [-d, d - 1] for the axis length d); axis in [-r, r-1] (default 0) ->
/// data.shape[:axis] + indices.shape + data.shape[axis+1:]. An index out of
/// range is ShapeMismatch at load when indices is an initializer, RunError at
/// run time otherwise. Gradient: scatter-add into data; indices get none.
void register_gather(OpRegistry& registry);

}  // namespace nodeflow
