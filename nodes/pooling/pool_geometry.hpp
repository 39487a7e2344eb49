#pragma once
// The one pooling-attributes type and the geometry derived from it, shared by
// every pooling node (AveragePool, MaxPool, LpPool, GlobalAveragePool,
// GlobalMaxPool, MaxUnpool), their backward passes and their schemas.
// Semantics: ONNX AveragePool/MaxPool/LpPool-22 (attributes, defaults and
// the output shape, ceil_mode's last-window rule included).
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
enum class PoolKind { Average, Max, Lp, GlobalAverage, GlobalMax, Unpool };

/// ONNX op_type of a kind: "AveragePool", "MaxPool", ...
const char* pool_op_type(PoolKind kind);

/// Largest kernel_shape, strides, dilations or pads value accepted (int32 range):
/// keeps every size computation inside int64.
inline constexpr std::int64_t kMaxPoolAttribute = 2147483647;

/// Layout of the spatial part of MaxPool's Indices (batch and channel
/// offsets are always row-major).
enum class StorageOrder { RowMajor, ColumnMajor };

/// One spatial axis of a pooling window (window_axis.hpp).
using PoolAxis = WindowAxis;

/// The pooling attributes of one node, parsed and checked once.
struct PoolAttributes {
  PoolKind kind = PoolKind::Max;
  /// One entry per spatial axis with kernel, stride, dilation and explicit pads.
  /// Empty for the Global ops, whose window is the whole input.
  std::vector<PoolAxis> axes;
  AutoPad auto_pad = AutoPad::NotSet;
  bool ceil_mode = false;
  bool count_include_pad = false;
  StorageOrder storage_order = StorageOrder::RowMajor;
  std::int64_t p = 2;

  bool global() const { return kind == PoolKind::GlobalAverage || kind == PoolKind::GlobalMax; }
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

/// The one output-size rule (pooling.md "Output shape"). `axis` carries kernel,
/// stride, dilation and explicit pads; returns it with `input` = in, the pads
/// auto_pad implies and `output`:
///  - NOTSET/VALID, floor: out = floor((in + pb + pe - ext) / s) + 1;
///  - NOTSET/VALID, ceil_mode: out = ceil((in + pb + pe - ext) / s) + 1, then
///    out -= 1 if the last window would start at or past in + pb;
///  - SAME_UPPER/SAME_LOWER: out = ceil(in / s) (ceil_mode has no effect).
/// `output` may come out < 1; check_axis() reports that.
PoolAxis pooled_axis(PoolAxis axis, std::int64_t in, AutoPad auto_pad, bool ceil_mode);

/// Throws ShapeMismatch naming `tensor_axis` when the resolved axis has
/// output < 1 or a window that holds no input element.
void check_axis(const PoolAxis& axis, std::size_t tensor_axis);

/// Resolved geometry of one pooling over a static input shape N x C x D1...Dn.
struct PoolGeometry {
  std::int64_t batch = 0;
  std::int64_t channels = 0;
  std::vector<PoolAxis> axes;  ///< resolved: input, output and pads known

  std::int64_t planes() const { return batch * channels; }
  std::int64_t input_plane() const;   ///< elements of one N,C plane of the input
  std::int64_t output_plane() const;  ///< elements of one N,C plane of the output
  Shape input_shape() const;
  Shape output_shape() const;
};

/// Geometry of a pooling node over `input_shape` (static). Throws ShapeMismatch
/// for a wrong rank, output < 1 or a window with no input element.
PoolGeometry pool_geometry(const PoolAttributes& attrs, const Shape& input_shape);

/// Output shape of a pooling node for a possibly dynamic input shape: N and C
/// pass through, a dynamic spatial dimension gives a dynamic output dimension;
/// the static ones are checked as in pool_geometry().
Shape pooled_shape(const PoolAttributes& attrs, const Shape& input_shape);

/// MaxUnpool's default output size along one axis, the inverse of the MaxPool
/// formula: (in-1)*s + k - pb - pe.
std::int64_t unpooled_size(const PoolAxis& axis, std::int64_t in);

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
