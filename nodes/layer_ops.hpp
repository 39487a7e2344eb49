#pragma once
// Registration of the layer ops a network needs besides pooling (ONNX
// semantics, latest opset): Conv-22, Gemm-13, MatMul-13, Add-14, Relu-14,
// Sigmoid-13, Tanh-13, Flatten-25, Reshape-25, Dropout-22,
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

void register_conv(OpRegistry& registry);
void register_gemm(OpRegistry& registry);
void register_matmul(OpRegistry& registry);
void register_add(OpRegistry& registry);
void register_relu(OpRegistry& registry);
void register_sigmoid(OpRegistry& registry);
void register_tanh(OpRegistry& registry);
void register_flatten(OpRegistry& registry);
void register_reshape(OpRegistry& registry);
void register_dropout(OpRegistry& registry);
void register_batch_normalization(OpRegistry& registry);
void register_softmax(OpRegistry& registry);
void register_log_softmax(OpRegistry& registry);
void register_softmax_cross_entropy_loss(OpRegistry& registry);
void register_negative_log_likelihood_loss(OpRegistry& registry);

}  // namespace nodeflow
