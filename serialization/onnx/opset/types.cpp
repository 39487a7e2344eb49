// ONNX's type constraints of every op nodeflow registers, at opset 22, among
// nodeflow's dtypes (docs/onnx.md, "Warnings"): what the writer checks each
// node's input and output dtypes against. DTypeSince in the op's history says
// which of them came after opset 19 (bfloat16 at 22). tests/onnx-schema
// checks the table against libonnx 1.12's schemas at opset 17.
#include "serialization/onnx/detail/opset_table.hpp"

namespace nodeflow::onnx_import::detail {
namespace {

using DTypes = std::vector<DType>;
constexpr DType F32 = DType::Float32, F64 = DType::Float64, F16 = DType::Float16, BF16 = DType::BFloat16,
                I8 = DType::Int8, U8 = DType::UInt8, I64 = DType::Int64;

const DTypes kFloat = {F16, F32, F64, BF16};            // tensor(float types)
const DTypes kFloatNoBf16 = {F16, F32, F64};            // Resize's roi
const DTypes kAny = {F16, F32, F64, BF16, I8, U8, I64};  // every graph dtype
const DTypes kSigned = {F16, F32, F64, BF16, I8, I64};  // Relu, Neg: no unsigned types
const DTypes kFloatInt64 = {F16, F32, F64, BF16, I64};  // Gemm, MatMul, most Reduce*: no 8-bit types
const DTypes kInt64 = {I64};
const DTypes kBool = {};  // ONNX's bool, which nodeflow has not (Dropout's mask and training_mode)

OnnxTypes unary(const DTypes& t) { return {{t}, {t}}; }

}  // namespace

const std::map<std::string, OnnxTypes>& onnx_types_table() {
  static const std::map<std::string, OnnxTypes> table = {
      // pooling
      {"AveragePool", unary(kFloat)},
      {"MaxPool", {{{F16, F32, F64, BF16, I8, U8}}, {{F16, F32, F64, BF16, I8, U8}, kInt64}}},
      {"LpPool", unary(kFloat)},
      {"GlobalAveragePool", unary(kFloat)},
      {"GlobalMaxPool", unary(kFloat)},
      {"GlobalLpPool", unary(kFloat)},
      {"MaxUnpool", {{kFloat, kInt64, kInt64}, {kFloat}}},
      {"MaxRoiPool", {{kFloat, kFloat}, {kFloat}}},
      // linear
      {"Conv", {{kFloat, kFloat, kFloat}, {kFloat}}},
      {"ConvTranspose", {{kFloat, kFloat, kFloat}, {kFloat}}},
      {"Gemm", {{kFloatInt64, kFloatInt64, kFloatInt64}, {kFloatInt64}}},
      {"MatMul", {{kFloatInt64, kFloatInt64}, {kFloatInt64}}},
      // elementwise
      {"Add", {{kAny, kAny}, {kAny}}},
      {"Sub", {{kAny, kAny}, {kAny}}},
      {"Mul", {{kAny, kAny}, {kAny}}},
      {"Div", {{kAny, kAny}, {kAny}}},
      {"Pow", {{kFloatInt64, kAny}, {kFloatInt64}}},
      {"Sum", unary(kFloat)},
      {"Mean", unary(kFloat)},
      {"Max", unary(kAny)},
      {"Min", unary(kAny)},
      {"Abs", unary(kAny)},
      {"Neg", unary(kSigned)},
      {"Exp", unary(kFloat)},
      {"Log", unary(kFloat)},
      {"Reciprocal", unary(kFloat)},
      {"Sqrt", unary(kFloat)},
      {"Erf", unary(kAny)},
      {"Clip", {{kAny, kAny, kAny}, {kAny}}},
      // activations
      {"Relu", unary(kSigned)},
      {"Sigmoid", unary(kFloat)},
      {"Tanh", unary(kFloat)},
      {"Elu", unary(kFloat)},
      {"LeakyRelu", unary(kFloat)},
      {"HardSigmoid", unary(kFloat)},
      {"Selu", unary(kFloat)},
      {"PRelu", {{kFloatInt64, kFloatInt64}, {kFloatInt64}}},
      {"Celu", unary({F32})},
      {"HardSwish", unary(kFloat)},
      {"Softplus", unary(kFloat)},
      {"Softsign", unary(kFloat)},
      {"Mish", unary(kFloat)},
      {"Gelu", unary(kFloat)},
      {"Softmax", unary(kFloat)},
      {"LogSoftmax", unary(kFloat)},
      // normalization, Dropout
      {"BatchNormalization", {{kFloat, kFloat, kFloat, kFloat, kFloat}, {kFloat, kFloat, kFloat}}},
      {"InstanceNormalization", {{kFloat, kFloat, kFloat}, {kFloat}}},
      {"LayerNormalization", {{kFloat, kFloat, kFloat}, {kFloat, {F32, BF16}, {F32, BF16}}}},
      {"GroupNormalization", {{kFloat, kFloat, kFloat}, {kFloat}}},
      {"LRN", unary(kFloat)},
      {"Dropout", {{kFloat, kFloat, kBool}, {kFloat, kBool}}},
      // shape
      {"Reshape", {{kAny, kInt64}, {kAny}}},
      {"Flatten", unary(kAny)},
      {"Transpose", unary(kAny)},
      {"Squeeze", {{kAny, kInt64}, {kAny}}},
      {"Unsqueeze", {{kAny, kInt64}, {kAny}}},
      {"Concat", unary(kAny)},
      {"Split", {{kAny, kInt64}, {kAny}}},
      {"Slice", {{kAny, kInt64, kInt64, kInt64, kInt64}, {kAny}}},
      {"Pad", {{kAny, kInt64, kAny, kInt64}, {kAny}}},
      {"Tile", {{kAny, kInt64}, {kAny}}},
      {"Expand", {{kAny, kInt64}, {kAny}}},
      {"Gather", {{kAny, kInt64}, {kAny}}},
      {"Identity", unary(kAny)},
      {"Cast", unary(kAny)},
      {"Resize", {{kAny, kFloatNoBf16, {F32}, kInt64}, {kAny}}},
      // reduction, losses
      {"ReduceSum", {{kFloatInt64, kInt64}, {kFloatInt64}}},
      {"ReduceMean", {{kFloatInt64, kInt64}, {kFloatInt64}}},
      {"ReduceProd", {{kFloatInt64, kInt64}, {kFloatInt64}}},
      {"ReduceL2", {{kFloatInt64, kInt64}, {kFloatInt64}}},
      {"ReduceLogSumExp", {{kFloatInt64, kInt64}, {kFloatInt64}}},
      {"ReduceSumSquare", {{kFloatInt64, kInt64}, {kFloatInt64}}},
      {"ReduceMax", {{kAny, kInt64}, {kAny}}},
      {"ReduceMin", {{kAny, kInt64}, {kAny}}},
      {"ArgMax", {{kAny}, {kInt64}}},
      {"NegativeLogLikelihoodLoss", {{kFloat, kInt64, kFloat}, {kFloat}}},
      {"SoftmaxCrossEntropyLoss", {{kFloat, kInt64, kFloat}, {kFloat, kFloat}}},
  };
  return table;
}

}  // namespace nodeflow::onnx_import::detail
