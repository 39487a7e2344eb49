#pragma once
// Registration of the convolution ops added after nodes/layer_ops.hpp's
// (ONNX semantics, latest opset; Conv itself is declared there). The shared
// conventions of layer_ops.hpp hold (dtypes, training mode, += gradients).
namespace nodeflow {

class OpRegistry;

/// ConvTranspose-22: X [N, C, D1..Dn] (n >= 1), W [C, M/group, k1..kn],
/// optional B [M] -> Y [N, M, O1..On], O = stride*(D-1) + output_padding +
/// dilation*(k-1) + 1 - pad_begin - pad_end, or output_shape (the pads then
/// follow from it), or D*stride with auto_pad SAME_UPPER/SAME_LOWER; float32,
/// float64, float16, bfloat16. The exact adjoint of the Conv of Y's shape with
/// W: gradients for X (a Conv of dY with W), W and B. Refused at load:
/// group not dividing C, output_padding not smaller than the stride or the
/// dilation, kernel_shape not W's, output_shape of the wrong length or larger
/// than the positions the input reaches (negative padding).
void register_conv_transpose(OpRegistry& registry);

}  // namespace nodeflow
