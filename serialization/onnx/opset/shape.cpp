// Opset history of the shape and data-movement ops (docs/onnx.md, "Opset
// history"): Squeeze/Unsqueeze axes (input from 13), Reshape shape (5), Slice
// starts/ends/axes (10), Split split (13) and num_outputs (18), Pad pads and
// value (11), Tile-1's tiles/axis (6), Cast-1's type names.
#include <array>
#include <utility>

#include "serialization/onnx/detail/opset_common.hpp"

namespace nodeflow::onnx_import::detail {
namespace {

/// Split before 18 splits into as many equal parts as the node has outputs when
/// no `split` is given; from 18 that needs num_outputs, made explicit here.
Custom outputs_as_num_outputs() {
  return {[](Upgrade& up) {
            if (!up.input(1).empty() || up.attribute("num_outputs") != nullptr) return;
            up.node().attributes["num_outputs"] = static_cast<std::int64_t>(up.node().outputs.size());
          },
          "no split: num_outputs = the node's output count"};
}

/// Tile-1: input, tiles (a scalar count), axis (a scalar): read when both are
/// initializers and the input's rank is known, as Tile-6's repeats.
Custom tiles_and_axis() {
  return {[](Upgrade& up) {
            const std::optional<std::vector<std::int64_t>> tiles = known_ints(up, 1);
            const std::optional<std::vector<std::int64_t>> axis = known_ints(up, 2);
            const std::optional<std::size_t> rank = known_rank(up, 0);
            if (!tiles || !axis || !rank || tiles->size() != 1 || axis->size() != 1)
              up.refuse("Tile-1's inputs tiles and axis are read only when both are one-value initializers and "
                        "the input's rank is known");
            const auto r = static_cast<std::int64_t>(*rank);
            const std::int64_t a = axis->front();
            if (a < 0 || a >= r)
              up.refuse("Tile-1's axis " + std::to_string(a) + " is outside the input's rank " + std::to_string(r));
            std::vector<std::int64_t> repeats(static_cast<std::size_t>(r), 1);
            repeats[static_cast<std::size_t>(a)] = tiles->front();
            up.node().inputs.resize(1);
            up.set_input(1, up.constant("repeats", Tensor::from<std::int64_t>({r}, repeats)));
          },
          "tiles/axis initializers become repeats"};
}

/// Flatten before 11 takes `axis` in [0, rank]; negative axes came at 11 (ONNX's
/// shape inference and onnxruntime refuse them before).
Custom non_negative_axis() {
  return {[](Upgrade& up) {
            const AttrValue* v = up.attribute("axis");
            if (v != nullptr && std::get<std::int64_t>(*v) < 0)
              up.refuse_attribute("attribute 'axis' = " + to_string(*v) + ": negative axes exist from opset 11");
          },
          "a negative axis refused"};
}

/// Cast-1's `to` names a TensorProto data type; from 6 it is the enum value.
Custom type_name_to_enum() {
  return {[](Upgrade& up) {
            const AttrValue* v = up.attribute("to");
            if (v == nullptr) return;
            static const std::array<std::pair<const char*, std::int64_t>, 12> kTypes = {{
                {"FLOAT", 1}, {"UINT8", 2}, {"INT8", 3}, {"UINT16", 4}, {"INT16", 5}, {"INT32", 6},
                {"INT64", 7}, {"BOOL", 9}, {"FLOAT16", 10}, {"DOUBLE", 11}, {"UINT32", 12}, {"UINT64", 13},
            }};
            const std::string& name = std::get<std::string>(*v);
            for (const auto& [type, value] : kTypes)
              if (name == type) {
                up.node().attributes["to"] = value;
                return;
              }
            up.refuse_attribute("attribute 'to' = " + to_string(*v) +
                                " is not a data type of Cast-1 (FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, "
                                "BOOL, FLOAT16, DOUBLE, UINT32, UINT64)");
          },
          "the type name becomes the TensorProto enum value"};
}

/// Resize-10: X, scales; asymmetric coordinates. 'linear' is opset 11's
/// asymmetric linear; 'nearest' is Upsample's (each input value repeated),
/// opset 11's asymmetric floor, for scales >= 1; below 1 its rounding is
/// undefined (implementations differ), so such scales, or unknown ones, are refused.
Custom resize_10() {
  return {[](Upgrade& up) {
            const AttrValue* m = up.attribute("mode");
            const std::string mode = m != nullptr ? std::get<std::string>(*m) : "nearest";
            if (mode == "nearest") {
              const std::optional<KnownTensor> scales = up.known_input(1);
              if (!scales || scales->value.empty())
                up.refuse("Resize-10's 'nearest' is read only with scales given as an initializer (its rounding "
                          "is defined for scales >= 1)");
              const Tensor s = scales->value.cast(DType::Float64);
              for (double x : s.values<double>())
                if (!(x >= 1))
                  up.refuse("Resize-10's 'nearest' with a scale below 1 (" + to_string(AttrValue(x)) +
                            ") has no defined rounding; not supported");
              up.node().attributes["nearest_mode"] = std::string("floor");
            }
            up.node().attributes["coordinate_transformation_mode"] = std::string("asymmetric");
          },
          "asymmetric coordinates; 'nearest' rounds down (floor), for scales >= 1"};
}

/// Resize-11's tf_half_pixel_for_nn, gone from 13 on, has no later form.
Custom resize_11() {
  return {[](Upgrade& up) {
            const AttrValue* v = up.attribute("coordinate_transformation_mode");
            if (v != nullptr && std::get<std::string>(*v) == "tf_half_pixel_for_nn")
              up.refuse_attribute("attribute 'coordinate_transformation_mode' = \"tf_half_pixel_for_nn\" is not "
                                  "supported: opset 13 removed it and it has no later form");
          },
          "tf_half_pixel_for_nn refused"};
}

}  // namespace

std::vector<OpHistory> shape_history() {
  const std::vector<AttrInfo> axes = {ints_attr("axes")};
  const std::vector<AttrInfo> axis = {int_attr("axis")};
  const std::vector<AttrInfo> pad2_attrs = {string_attr("mode"), ints_attr("pads"), float_attr("value")};
  const std::vector<Step> pad_moves = {ToInput{"pads", 1}, ToInput{"value", 2}};
  // The pads are required (the node has no other source of them before 11).
  std::vector<Step> pad1 = {required("paddings"), rename("paddings", "pads")};
  pad1.insert(pad1.end(), pad_moves.begin(), pad_moves.end());
  std::vector<Step> pad2 = {required("pads")};
  pad2.insert(pad2.end(), pad_moves.begin(), pad_moves.end());
  const std::vector<AttrInfo> resize11 = {string_attr("coordinate_transformation_mode"), float_attr("cubic_coeff_a"),
                                          int_attr("exclude_outside"),  float_attr("extrapolation_value"),
                                          string_attr("mode"),          string_attr("nearest_mode")};
  const auto resize18 = with(resize11, {int_attr("antialias"), ints_attr("axes"),
                                        string_attr("keep_aspect_ratio_policy")});
  return {
      {"Squeeze",
       {version(1, axes, 1, 1, {ToInput{"axes", 1}}), version(11, axes, 1, 1, {ToInput{"axes", 1}}),
        version(13, {}, 2, 1), version(21, {}, 2, 1)},
       {}},
      {"Unsqueeze",
       {version(1, axes, 1, 1, {required("axes"), ToInput{"axes", 1}}),
        version(11, axes, 1, 1, {required("axes"), ToInput{"axes", 1}}), version(13, {}, 2, 1),
        version(21, {}, 2, 1)},
       {}},
      {"Reshape",
       {version(1, {kConsumedInputs, ints_attr("shape")}, 1, 1, {kDropConsumedInputs, required("shape"), ToInput{"shape", 1}}),
        version(5, {}, 2, 1), version(13, {}, 2, 1), version(14, {int_attr("allowzero")}, 2, 1),
        version(19, {int_attr("allowzero")}, 2, 1), version(21, {int_attr("allowzero")}, 2, 1)},
       {}},
      {"Flatten",
       {version(1, axis, 1, 1, {non_negative_axis()}), version(9, axis, 1, 1, {non_negative_axis()}),
        version(11, axis, 1, 1), version(13, axis, 1, 1),
        version(21, axis, 1, 1)},
       {}},
      {"Transpose",
       {version(1, {ints_attr("perm")}, 1, 1), version(13, {ints_attr("perm")}, 1, 1),
        version(21, {ints_attr("perm")}, 1, 1)},
       {}},
      {"Concat",
       {version(1, axis, kVariadic, 1, {OldDefault{"axis", std::int64_t{1}}}), version(4, axis, kVariadic, 1),
        version(11, axis, kVariadic, 1), version(13, axis, kVariadic, 1)},
       {}},
      {"Split",
       {version(1, {int_attr("axis"), ints_attr("split")}, 2, kVariadic,
                {required("axis"), ToInput{"split", 1}, outputs_as_num_outputs()}),
        version(2, {int_attr("axis"), ints_attr("split")}, 1, kVariadic,
                {ToInput{"split", 1}, outputs_as_num_outputs()}),
        version(11, {int_attr("axis"), ints_attr("split")}, 1, kVariadic,
                {ToInput{"split", 1}, outputs_as_num_outputs()}),
        version(13, axis, 2, kVariadic, {outputs_as_num_outputs()}),
        version(18, {int_attr("axis"), int_attr("num_outputs")}, 2, kVariadic)},
       {}},
      {"Slice",
       {version(1, {ints_attr("axes"), ints_attr("ends"), ints_attr("starts")}, 1, 1,
                {required("starts"), required("ends"), ToInput{"starts", 1}, ToInput{"ends", 2},
                 ToInput{"axes", 3}}),
        version(10, {}, 5, 1), version(11, {}, 5, 1), version(13, {}, 5, 1)},
       {}},
      {"Pad",
       {version(1, {string_attr("mode"), ints_attr("paddings"), float_attr("value")}, 1, 1, pad1),
        version(2, pad2_attrs, 1, 1, pad2), version(11, {string_attr("mode")}, 3, 1),
        version(13, {string_attr("mode")}, 3, 1), version(18, {string_attr("mode")}, 4, 1),
        version(19, {string_attr("mode")}, 4, 1), version(21, {string_attr("mode")}, 4, 1)},
       {}},
      {"Tile", {version(1, {}, 3, 1, {tiles_and_axis()}), version(6, {}, 2, 1), version(13, {}, 2, 1)}, {}},
      {"Expand", {version(8, {}, 2, 1), version(13, {}, 2, 1)}, {}},
      {"Gather", {version(1, axis, 2, 1), version(11, axis, 2, 1), version(13, axis, 2, 1)}, {}},
      {"Identity",
       {version(1, {}, 1, 1), version(13, {}, 1, 1), version(14, {}, 1, 1), version(16, {}, 1, 1),
        version(19, {}, 1, 1), version(21, {}, 1, 1)},
       {}},
      {"Cast",
       {version(1, {string_attr("to")}, 1, 1, {type_name_to_enum()}), version(6, {int_attr("to")}, 1, 1),
        version(9, {int_attr("to")}, 1, 1), version(13, {int_attr("to")}, 1, 1),
        version(19, {int_attr("saturate"), int_attr("to")}, 1, 1),
        version(21, {int_attr("saturate"), int_attr("to")}, 1, 1)},
       {}},
      {"Resize",
       {version(10, {string_attr("mode")}, 2, 1, {resize_10(), MoveInput{1, 2}}),
        version(11, resize11, 4, 1, {resize_11()}), version(13, resize11, 4, 1),
        version(18, resize18, 4, 1), version(19, resize18, 4, 1)},
       {}},
  };
}

}  // namespace nodeflow::onnx_import::detail
