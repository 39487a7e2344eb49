#pragma once
// Registration of the shape and data-movement ops (ONNX semantics, opset
// 22). Each op registers its schema and factory from its own .cpp;
// register_builtin_ops (nodes/builtin_ops.cpp) calls them all.
namespace nodeflow {

class OpRegistry;

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
