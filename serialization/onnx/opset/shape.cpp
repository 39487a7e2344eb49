// Opset history of the shape ops (docs/onnx.md, "Opset history").
#include "serialization/onnx/opset/common.hpp"

namespace nodeflow::onnx_import::detail {

std::vector<OpHistory> shape_history() {
  // Squeeze/Unsqueeze: `axes` an attribute before 13, an input from 13 on.
  const std::vector<AttrInfo> axes = {ints_attr("axes")};
  return {
      {"Squeeze",
       {{1, axes, 1, 1, {ToInput{"axes", 1}}, {}},
        {11, axes, 1, 1, {ToInput{"axes", 1}}, {}},
        {13, {}, 2, 1, {}, {}},
        {21, {}, 2, 1, {}, {}}},
       {}},
      {"Unsqueeze",
       {{1, axes, 1, 1, {required("axes"), ToInput{"axes", 1}}, {}},
        {11, axes, 1, 1, {required("axes"), ToInput{"axes", 1}}, {}},
        {13, {}, 2, 1, {}, {}},
        {21, {}, 2, 1, {}, {}}},
       {}},
  };
}

}  // namespace nodeflow::onnx_import::detail
