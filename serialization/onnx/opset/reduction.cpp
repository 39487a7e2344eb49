// Opset history of the reductions, ArgMax and the losses (docs/onnx.md,
// "Opset history"): Reduce* take `axes` as an attribute before 18
// (ReduceSum before 13) and as an input after.
#include "serialization/onnx/detail/opset_common.hpp"

namespace nodeflow::onnx_import::detail {
namespace {

/// The versions of a Reduce op: axes an attribute at `attribute_versions`,
/// an input with noop_with_empty_axes at `input_versions`.
OpHistory reduce(const std::string& op, std::vector<int> attribute_versions, std::vector<int> input_versions) {
  const std::vector<AttrInfo> old_form = {ints_attr("axes"), int_attr("keepdims")};
  const std::vector<AttrInfo> new_form = {int_attr("keepdims"), int_attr("noop_with_empty_axes")};
  OpHistory h{op, {}, {}};
  for (int since : attribute_versions) h.versions.push_back(version(since, old_form, 1, 1, {ToInput{"axes", 1}}));
  for (int since : input_versions) h.versions.push_back(version(since, new_form, 2, 1));
  return h;
}

}  // namespace

std::vector<OpHistory> reduction_history() {
  const std::vector<AttrInfo> argmax = {int_attr("axis"), int_attr("keepdims")};
  const std::vector<AttrInfo> loss = {int_attr("ignore_index"), string_attr("reduction")};
  return {
      reduce("ReduceSum", {1, 11}, {13}),
      reduce("ReduceMean", {1, 11, 13}, {18}),
      reduce("ReduceProd", {1, 11, 13}, {18}),
      reduce("ReduceL2", {1, 11, 13}, {18}),
      reduce("ReduceLogSumExp", {1, 11, 13}, {18}),
      reduce("ReduceSumSquare", {1, 11, 13}, {18}),
      reduce("ReduceMax", {1, 11, 12, 13}, {18, 20}),
      reduce("ReduceMin", {1, 11, 12, 13}, {18, 20}),
      {"ArgMax",
       {version(1, argmax, 1, 1), version(11, argmax, 1, 1),
        version(12, with(argmax, {int_attr("select_last_index")}), 1, 1),
        version(13, with(argmax, {int_attr("select_last_index")}), 1, 1)},
       {}},
      {"NegativeLogLikelihoodLoss",
       {version(12, loss, 3, 1), version(13, loss, 3, 1), version(22, loss, 3, 1)},
       {{DType::BFloat16, 22, 0}, {DType::BFloat16, 22, 2}}},
      {"SoftmaxCrossEntropyLoss", {version(12, loss, 3, 2), version(13, loss, 3, 2)}, {}},
  };
}

}  // namespace nodeflow::onnx_import::detail
