// Opset history of the normalizations and Dropout, whose old versions carry a
// mode of their own (is_test, spatial): docs/onnx.md, "Opset history". Before
// opset 14 the library takes the mode from the run (docs/graph-format.md,
// "training and lda_coeff"), so a node the model puts in training mode is
// refused, as ONNX's own version converter refuses is_test = 0. From opset 14,
// BatchNormalization's training_mode (and Dropout's training_mode input, from
// 12) is kept and read as ONNX defines it.
#include "serialization/onnx/detail/opset_common.hpp"

namespace nodeflow::onnx_import::detail {
namespace {

const std::vector<DTypeSince> kBf16At22 = {{DType::BFloat16, 22}};

/// is_test (opsets 1-6): absent or nonzero is read as the node of opset 7
/// (ONNX's converter reads it so); 0, training mode, is refused.
Custom is_test() {
  return {[](Upgrade& up) {
            const AttrValue* v = up.attribute("is_test");
            if (v != nullptr && std::get<std::int64_t>(*v) == 0)
              up.refuse_attribute("attribute 'is_test' = 0 (training mode) is not supported: the library takes "
                                  "the mode from the run");
            up.node().attributes.erase("is_test");
          },
          "is_test: absent or 1 passes, 0 refused"};
}

OpHistory batch_normalization() {
  const std::vector<AttrInfo> base = {float_attr("epsilon"), float_attr("momentum")};
  const auto v7 = with(base, {int_attr("spatial")});
  const auto v6 = with(v7, {int_attr("is_test")});
  const Only spatial{"spatial", std::int64_t{1},
                     "statistics per activation ([C, D1, ...]) have no form in the library's "
                     "BatchNormalization (opset 9 dropped them)"};
  const Custom outputs = no_outputs_from(
      1, "mean, var, saved_mean, saved_var",
      "before opset 14 they make a training-mode node (the library takes the mode from the run)");
  // Kept as given. ONNX's default 0 is not made explicit: it is the mode of
  // an inference runtime, and a model that does not say leaves the mode to
  // the run here, so that an imported network still trains its statistics.
  const Custom training_mode{[](Upgrade&) {},
                             "training_mode: kept as given; absent, the run decides (not ONNX's 0)"};
  return {"BatchNormalization",
          {version(1, with(v6, {kConsumedInputs}), 5, 5, {kDropConsumedInputs, is_test(), spatial, outputs}),
           version(6, v6, 5, 5, {is_test(), spatial, outputs}), version(7, v7, 5, 5, {spatial, outputs}),
           version(9, base, 5, 5, {outputs}),
           version(14, with(base, {int_attr("training_mode")}), 5, 3, {training_mode}),
           version(15, with(base, {int_attr("training_mode")}), 5, 3, {training_mode})},
          {}};
}

OpHistory dropout() {
  const std::vector<AttrInfo> ratio = {float_attr("ratio")};
  const auto v6 = with(ratio, {int_attr("is_test")});
  // The mask had the data's dtype before 10, a bool from 10 (the library's is
  // uint8 0/1): one that nothing reads (Caffe2's exports in ONNX's model zoo,
  // AlexNet's `_fc6_mask`) is dropped, one that is read refused.
  const Custom mask{[](Upgrade& up) {
                      if (up.node().outputs.size() < 2) return;
                      if (up.output_read(1))
                        up.refuse("output 1 (mask) is not supported: before opset 10 the mask has the data's "
                                  "dtype (a mask nothing reads is dropped)");
                      up.node().outputs.resize(1);
                    },
                    "a mask output nothing reads is dropped, a read one refused"};
  const ToInput to_input{"ratio", 1};
  const std::vector<AttrInfo> seed = {int_attr("seed")};
  return {"Dropout",
          {version(1, with(v6, {kConsumedInputs}), 1, 2, {kDropConsumedInputs, is_test(), mask, to_input}),
           version(6, v6, 1, 2, {is_test(), mask, to_input}), version(7, ratio, 1, 2, {mask, to_input}),
           version(10, ratio, 1, 2, {to_input}), version(12, seed, 3, 2), version(13, seed, 3, 2),
           version(22, seed, 3, 2)},
          {{DType::BFloat16, 22, 1}}};
}

}  // namespace

std::vector<OpHistory> normalization_history() {
  const std::vector<AttrInfo> eps = {float_attr("epsilon")};
  return {
      batch_normalization(),
      dropout(),
      {"InstanceNormalization",
       {version(1, with(eps, {kConsumedInputs}), 3, 1, {kDropConsumedInputs}), version(6, eps, 3, 1),
        version(22, eps, 3, 1)},
       kBf16At22},
      {"LayerNormalization",
       {version(17, {int_attr("axis"), float_attr("epsilon"), int_attr("stash_type")}, 3, 3)},
       {}},
      {"GroupNormalization",
       {refused_version(18, {float_attr("epsilon"), int_attr("num_groups")}, 3, 1,
                        "its scale and bias are per group ([num_groups]); from opset 21 (the library's) "
                        "per channel ([C])"),
        version(21, {float_attr("epsilon"), int_attr("num_groups"), int_attr("stash_type")}, 3, 1)},
       {}},
      // LRN-13 only added bfloat16 (which came at 13, before the writer's 19).
      {"LRN",
       {version(1, {float_attr("alpha"), float_attr("beta"), float_attr("bias"), int_attr("size")}, 1, 1),
        version(13, {float_attr("alpha"), float_attr("beta"), float_attr("bias"), int_attr("size")}, 1, 1)},
       {}},
  };
}

}  // namespace nodeflow::onnx_import::detail
