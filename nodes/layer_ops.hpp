#pragma once
// Registration of the layer ops a network needs besides pooling (ONNX
// semantics, latest opset): Conv-22, Gemm-13, MatMul-13, Relu-14,
// Sigmoid-13, Tanh-13, Flatten-21, Reshape-21, Dropout-22,
// BatchNormalization-15, Softmax-13, LogSoftmax-13,
// SoftmaxCrossEntropyLoss-13, NegativeLogLikelihoodLoss-22.
//
// Every op registers its schema and factory from its own .cpp, next to its
// node class; register_builtin_ops (nodes/builtin_ops.cpp) calls them all.
//
// Shared conventions (the schema docs give the details per op):
//  - dtypes: float32, float64, float16, bfloat16 (the last two computed in
//    float32); labels and shapes are int64. Any other dtype is
//    UnsupportedDType naming the op, the input and the dtype.
//  - Training mode is a training-mode run (Executor::forward) of a node whose
//    `training` is true, i.e. ForwardContext::saved != nullptr. Dropout and
//    BatchNormalization act differently in it; the others only save what
//    backward needs.
//  - backward adds (+=) into every wanted input gradient, scaled by
//    BackwardContext::scale_for(k) (lda_coeff, except for trainable
//    initializers); an empty output gradient counts as zero.
namespace nodeflow {

class OpRegistry;

/// Conv-22: X [N, C, D1..Dn] (n >= 1), W [M, C/group, k1..kn], optional B [M]
/// -> Y [N, M, O1..On]; attributes auto_pad, dilations, group, kernel_shape
/// (default: W's), pads, strides. Gradients for X, W, B. ShapeMismatch for
/// channel/group/kernel mismatches or an empty output axis.
void register_conv(OpRegistry& registry);
/// Gemm-13: A [M, K] (or [K, M] with transA), B [K, N] (or [N, K] with transB),
/// optional C broadcastable to [M, N] -> Y = alpha*A'B' + beta*C. Gradients for A, B, C.
void register_gemm(OpRegistry& registry);
/// MatMul-13: numpy.matmul (batch dims broadcast; 1-D operands promoted and
/// squeezed). Gradients summed over broadcast batch dims.
void register_matmul(OpRegistry& registry);
/// Relu-14 (derivative 0 at 0; NaN passes through), Sigmoid-13 (no overflow for
/// large |x|), Tanh-13: element-wise, Y has X's shape.
void register_relu(OpRegistry& registry);
void register_sigmoid(OpRegistry& registry);
void register_tanh(OpRegistry& registry);
/// Flatten-21 (axis in [-r, r], default 1) and Reshape-21 (int64 shape input,
/// usually an initializer; 0 copies, one -1, allowzero): the output shares the
/// input's buffer; any dtype. ShapeMismatch for impossible shapes.
void register_flatten(OpRegistry& registry);
void register_reshape(OpRegistry& registry);
/// Dropout-22: inputs data, ratio (optional scalar; or the `ratio` attribute;
/// default 0.5), training_mode (optional uint8 scalar: when given it decides,
/// as ONNX says; absent, the run decides). Outputs output and optional uint8
/// mask. Training mode: mask from ForwardContext::seed, kept elements scaled
/// by 1/(1-ratio), mask reused by backward; else identity.
void register_dropout(OpRegistry& registry);
/// BatchNormalization-15: X [N, C, ...], scale, B, input_mean, input_var [C];
/// epsilon (1e-5), momentum (0.9, ONNX convention). Training mode: batch mean
/// and biased variance; new running stats pushed to ForwardContext::updates as
/// inputs 3 and 4 (and optional outputs running_mean, running_var); RunError for
/// a single value per channel. Inference: running stats. training_mode (0/1,
/// optional) fixes the mode as ONNX defines it. Gradients X, scale, B.
void register_batch_normalization(OpRegistry& registry);
/// Softmax-13 / LogSoftmax-13 along `axis` (default -1), max subtracted first.
void register_softmax(OpRegistry& registry);
void register_log_softmax(OpRegistry& registry);
/// SoftmaxCrossEntropyLoss-13: scores [N, C] or [N, C, d1..dk], int64 labels
/// [N, d1..dk], optional weights [C]; ignore_index; reduction none/sum/mean
/// (mean divides by the weight sum of the counted samples); outputs the loss
/// and optional log_prob. RunError for a label outside [0, C) that is not
/// ignored. Gradients for scores and weights.
void register_softmax_cross_entropy_loss(OpRegistry& registry);
/// NegativeLogLikelihoodLoss-22: the same on log-probabilities `input`
/// (inputs input, target, weight; output loss).
void register_negative_log_likelihood_loss(OpRegistry& registry);

}  // namespace nodeflow
