// Opset history of Conv, ConvTranspose, Gemm and MatMul (docs/onnx.md,
// "Opset history").
#include "serialization/onnx/detail/opset_common.hpp"

namespace nodeflow::onnx_import::detail {
namespace {

const std::vector<DTypeSince> kBf16At22 = {{DType::BFloat16, 22}};

/// ConvTranspose before 11 states SAME_UPPER/SAME_LOWER the other way round
/// ("if auto_pad != SAME_UPPER: pads[start] = total / 2"), which implementations
/// did not all follow: an odd total padding has no one reading, so both are refused.
Custom same_padding_before_11() {
  return {[](Upgrade& up) {
            const AttrValue* v = up.attribute("auto_pad");
            if (v == nullptr) return;
            const std::string& mode = std::get<std::string>(*v);
            if (mode == "SAME_UPPER" || mode == "SAME_LOWER")
              up.refuse_attribute("attribute 'auto_pad' = " + mode +
                                  " is not supported: before opset 11 ConvTranspose's definition puts the odd "
                                  "padding on the other side than from 11 on, and readers disagree");
          },
          "auto_pad SAME_UPPER/SAME_LOWER refused"};
}

}  // namespace

std::vector<OpHistory> linear_history() {
  const std::vector<AttrInfo> conv = {string_attr("auto_pad"), ints_attr("dilations"), int_attr("group"),
                                      ints_attr("kernel_shape"), ints_attr("pads"), ints_attr("strides")};
  const auto transposed = with(conv, {ints_attr("output_padding"), ints_attr("output_shape")});
  const std::vector<AttrInfo> gemm = {float_attr("alpha"), float_attr("beta"), int_attr("transA"),
                                      int_attr("transB")};
  // Gemm before 7: `broadcast` 0 wants C of Y's shape, 1 broadcasts C; opset
  // 7's unidirectional broadcasting reads both the same, so it goes.
  const Drop broadcast{"broadcast"};
  return {
      {"Conv", {version(1, conv, 3, 1), version(11, conv, 3, 1), version(22, conv, 3, 1)}, kBf16At22},
      {"ConvTranspose",
       {version(1, transposed, 3, 1, {same_padding_before_11()}), version(11, transposed, 3, 1),
        version(22, transposed, 3, 1)},
       kBf16At22},
      {"Gemm",
       {version(1, with(gemm, {int_attr("broadcast")}), 3, 1, {broadcast}),
        version(6, with(gemm, {int_attr("broadcast")}), 3, 1, {broadcast}), version(7, gemm, 3, 1),
        version(9, gemm, 3, 1), version(11, gemm, 3, 1), version(13, gemm, 3, 1)},
       {}},
      {"MatMul", {version(1, {}, 2, 1), version(9, {}, 2, 1), version(13, {}, 2, 1)}, {}},
  };
}

}  // namespace nodeflow::onnx_import::detail
