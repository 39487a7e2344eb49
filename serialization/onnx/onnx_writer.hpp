#pragma once
// The pieces of the ONNX writer (serialization/onnx.hpp, write_onnx) that are
// decided per node, tested on their own.
#include <string>
#include <vector>

#include "core/graph.hpp"

namespace nodeflow::onnx_io {

/// Why onnxruntime 1.30 (CPU) or ONNX's type constraints cannot take the node
/// at `opset` with these input dtypes and ranks ("" when nothing is known
/// against it): pooling and convolution over more than 3 spatial axes
/// (onnxruntime runs 1 to 3), and the pooling ops' element types (int8 and
/// uint8 only for MaxPool; bfloat16 from opset 22).
std::string portability_problem(const NodeDef& def, const std::vector<TensorInfo>& inputs,
                                int opset);

}  // namespace nodeflow::onnx_io
