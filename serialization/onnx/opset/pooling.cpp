// Opset history of the pooling ops (docs/onnx.md, "Opset history").
#include "serialization/onnx/detail/opset_common.hpp"

namespace nodeflow::onnx_import::detail {
namespace {

/// The attributes every windowed pooling version has.
std::vector<AttrInfo> window() {
  return {string_attr("auto_pad"), ints_attr("kernel_shape"), ints_attr("pads"), ints_attr("strides")};
}

/// MaxUnpool's: the window without auto_pad.
std::vector<AttrInfo> window_without_auto_pad() {
  return {ints_attr("kernel_shape"), ints_attr("pads"), ints_attr("strides")};
}

const char* kIntegralP = "p must be an integer (LpPool from opset 2 and the library take an INT p)";

OpVersion pool(int since, std::vector<AttrInfo> attrs, std::size_t outputs = 1,
               std::vector<Step> steps = {}) {
  return {since, std::move(attrs), 1, outputs, std::move(steps), {}};
}

}  // namespace

std::vector<OpHistory> pooling_history() {
  const std::vector<DTypeSince> bf16_22 = {{DType::BFloat16, 22}};
  const auto avg7 = with(window(), {int_attr("count_include_pad")});
  const auto avg10 = with(avg7, {int_attr("ceil_mode")});
  const auto max8 = with(window(), {int_attr("storage_order")});
  const auto max10 = with(max8, {int_attr("ceil_mode"), ints_attr("dilations")});
  const auto lp2 = with(window(), {int_attr("p")});
  const auto lp18 = with(lp2, {int_attr("ceil_mode"), ints_attr("dilations")});
  // The opset-11 versions of the windowed ops word SAME_UPPER/SAME_LOWER as
  // output = ceil(input / stride), what earlier versions meant by "the output
  // size matches the input" (and what their implementations did): no step.
  return {
      {"AveragePool",
       {pool(1, window()), pool(7, avg7), pool(10, avg10), pool(11, avg10),
        pool(19, with(avg10, {ints_attr("dilations")})), pool(22, with(avg10, {ints_attr("dilations")}))},
       bf16_22},
      {"MaxPool",
       {pool(1, window()), pool(8, max8, 2), pool(10, max10, 2), pool(11, max10, 2), pool(12, max10, 2),
        pool(22, max10, 2)},
       bf16_22},
      {"LpPool",
       {pool(1, with(window(), {float_attr("p")}), 1, {float_to_int("p", kIntegralP)}), pool(2, lp2),
        pool(11, lp2), pool(18, lp18), pool(22, lp18)},
       bf16_22},
      {"GlobalAveragePool", {pool(1, {}), pool(22, {})}, bf16_22},
      {"GlobalMaxPool", {pool(1, {}), pool(22, {})}, bf16_22},
      {"GlobalLpPool",
       {pool(1, {float_attr("p")}, 1, {float_to_int("p", kIntegralP)}), pool(2, {int_attr("p")}),
        pool(22, {int_attr("p")})},
       bf16_22},
      {"MaxUnpool",
       {{9, window_without_auto_pad(), 3, 1, {}, {}},
        {11, window_without_auto_pad(), 3, 1, {}, {}},
        {22, window_without_auto_pad(), 3, 1, {}, {}}},
       bf16_22},
      {"MaxRoiPool",
       {{1, {ints_attr("pooled_shape"), float_attr("spatial_scale")}, 2, 1, {}, {}},
        {22, {ints_attr("pooled_shape"), float_attr("spatial_scale")}, 2, 1, {}, {}}},
       bf16_22},
  };
}

}  // namespace nodeflow::onnx_import::detail
