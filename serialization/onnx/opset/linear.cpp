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

/// Gemm before 7: `broadcast` 1 broadcasts C to Y's shape [M, N], which opset
/// 7's unidirectional broadcasting reads the same, so it goes. Without it (or 0)
/// C is [M, N]: a C of another known shape is refused, as Add-6 refuses unequal
/// shapes without broadcast, rather than broadcast by opset 7's rule.
Custom gemm_broadcast() {
  return {[](Upgrade& up) {
            const AttrValue* b = up.attribute("broadcast");
            const bool broadcast = b != nullptr && std::get<std::int64_t>(*b) != 0;
            up.node().attributes.erase("broadcast");
            if (broadcast) return;
            const std::optional<KnownTensor> a = up.known_input(0);
            const std::optional<KnownTensor> w = up.known_input(1);
            const std::optional<KnownTensor> c = up.known_input(2);
            if (!a || !w || !c || a->info.shape.size() != 2 || w->info.shape.size() != 2) return;
            const auto flag = [&](const char* name) {
              const AttrValue* v = up.attribute(name);
              return v != nullptr && std::get<std::int64_t>(*v) != 0;
            };
            const std::int64_t m = a->info.shape[flag("transA") ? 1 : 0];
            const std::int64_t n = w->info.shape[flag("transB") ? 0 : 1];
            const Shape& sc = c->info.shape;
            bool fits = sc.size() == 2;
            if (fits) fits = (sc[0] < 0 || m < 0 || sc[0] == m) && (sc[1] < 0 || n < 0 || sc[1] == n);
            if (!fits)
              up.refuse_attribute("C " + to_string(sc) + " is not Y's shape [" + (m < 0 ? "?" : std::to_string(m)) +
                                  ", " + (n < 0 ? "?" : std::to_string(n)) +
                                  "], and without broadcast = 1 this opset wants it so (legacy broadcasting)");
          },
          "broadcast: 1 dropped; 0 or absent wants C of Y's shape [M, N] (another known shape refused)"};
}

}  // namespace

std::vector<OpHistory> linear_history() {
  const std::vector<AttrInfo> conv = {string_attr("auto_pad"), ints_attr("dilations"), int_attr("group"),
                                      ints_attr("kernel_shape"), ints_attr("pads"), ints_attr("strides")};
  const auto transposed = with(conv, {ints_attr("output_padding"), ints_attr("output_shape")});
  const std::vector<AttrInfo> gemm = {float_attr("alpha"), float_attr("beta"), int_attr("transA"),
                                      int_attr("transB")};
  const Custom broadcast = gemm_broadcast();
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
