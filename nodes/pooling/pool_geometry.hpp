#pragma once
// The one pooling-attributes type and the geometry derived from it, shared by
// every pooling node (AveragePool, MaxPool, LpPool, GlobalAveragePool,
// GlobalMaxPool, GlobalLpPool, MaxUnpool), their backward passes and their
// schemas. Semantics: ONNX AveragePool/MaxPool/LpPool-22 (attributes,
// defaults and the output shape, ceil_mode's last-window rule included).
//
// Axis numbers in messages are tensor axes: the first spatial axis is axis 2.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/attributes.hpp"
#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"
#include "nodes/common/window_axis.hpp"

namespace nodeflow {

/// The pooling ops; decides which attributes an op takes and which dtypes.
enum class PoolKind { Average, Max, Lp, GlobalAverage, GlobalMax, Unpool, GlobalLp };

/// ONNX op_type of a kind: "AveragePool", "MaxPool", ...
const char* pool_op_type(PoolKind kind);

/// The Global ops: one window over all spatial axes, no window attributes.
inline bool is_global(PoolKind kind) {
  return kind == PoolKind::GlobalAverage || kind == PoolKind::GlobalMax || kind == PoolKind::GlobalLp;
}

/// Largest kernel_shape, strides, dilations or pads value accepted (int32 range):
/// keeps every size computation inside int64.
inline constexpr std::int64_t kMaxPoolAttribute = 2147483647;

/// Layout of the spatial part of MaxPool's Indices (batch and channel
/// offsets are always row-major).
enum class StorageOrder { RowMajor, ColumnMajor };

/// The pooling attributes of one node, parsed and checked once.
struct PoolAttributes {
  PoolKind kind = PoolKind::Max;
  /// One entry per spatial axis with kernel, stride, dilation and explicit pads.
  /// Empty for the Global ops, whose window is the whole input.
  std::vector<WindowAxis> axes;
  AutoPad auto_pad = AutoPad::NotSet;
  bool ceil_mode = false;
  bool count_include_pad = false;
  StorageOrder storage_order = StorageOrder::RowMajor;
  std::int64_t p = 2;

  bool global() const { return is_global(kind); }
};

/// The attribute declarations of a kind (ONNX names, kinds, defaults, ranges,
/// list lengths tied to kernel_shape, the int32 limit, since_version), sorted
/// by name so "known: ..." lists read alphabetically.
std::vector<AttrSpec> pool_attribute_specs(PoolKind kind);

/// The rules the specs cannot state (the schema's check_attributes): pads
/// only with auto_pad NOTSET, every pad < the kernel extent of its axis.
/// Sees attributes the specs accepted, defaults filled.
/// Throws InvalidAttribute("attributes.pads: ...").
void check_pool_attributes(PoolKind kind, const Attributes& attrs);

/// Reads attributes that checked_attributes returned for the kind's schema
/// (a node's NodeConfig): no check of its own, no default of its own.
PoolAttributes parse_pool_attributes(PoolKind kind, const Attributes& attrs);

/// For attributes from outside a graph (tests, benchmarks): the schema's
/// checks and defaults (checked_attributes with pool_attribute_specs and
/// check_pool_attributes), then parse_pool_attributes. Throws
/// InvalidAttribute("attributes.<name>: ...") as loading a graph would.
PoolAttributes checked_pool_attributes(PoolKind kind, const Attributes& given);

/// Throws ShapeMismatch naming `tensor_axis` when the resolved axis has
/// out < 1 or a window that holds no input element (docs/pooling.md "Output
/// size": kernel extent larger than the padded input, or a window that falls
/// in the pads only).
void check_axis(const WindowAxis& axis, std::size_t tensor_axis);

/// Resolved geometry of one pooling over an input shape N x C x D1...Dn.
struct PoolGeometry {
  std::int64_t batch = 0;
  std::int64_t channels = 0;
  /// Resolved: in, out and pads known; out is kDynamicDim where `in` is
  /// (shape inference before the sizes are known), 1 for the Global ops.
  std::vector<WindowAxis> axes;

  std::int64_t planes() const { return batch * channels; }
  std::int64_t input_plane() const;   ///< elements of one N,C plane of the input
  std::int64_t output_plane() const;  ///< elements of one N,C plane of the output
  Shape input_shape() const;
  Shape output_shape() const;  ///< N x C x O1..On; dynamic where the input is
};

/// Geometry of a pooling node over `input_shape`: N and C pass through; each
/// spatial axis is resolved (resolve_window_axis, or one window over the whole
/// axis for the Global ops) and checked (check_axis). A dynamic spatial
/// dimension gives a dynamic output dimension; the kernels need a static shape.
/// Throws ShapeMismatch for a wrong rank, out < 1, a window with no input
/// element, an empty axis under a Global op, or sizes that overflow int64.
PoolGeometry pool_geometry(const PoolAttributes& attrs, const Shape& input_shape);

/// Dtypes a kind accepts: float32, float64, float16, bfloat16, plus int8 and
/// uint8 for MaxPool, GlobalMaxPool and MaxUnpool.
std::span<const DType> pool_dtypes(PoolKind kind);

/// Throws UnsupportedDType("<Op> does not take dtype <d> (input <i>; allowed: ...)").
void check_pool_dtype(PoolKind kind, DType dtype, std::size_t input_index);

/// Throws ShapeMismatch unless `shape` has rank >= 3 and, for the ops with
/// kernel_shape, exactly 2 + spatial rank:
/// "input 0 has rank 2 (shape [2, 3]); MaxPool needs rank >= 3 (N x C x D1 ...)".
void check_pool_rank(const PoolAttributes& attrs, const Shape& shape, std::size_t input_index);

}  // namespace nodeflow
