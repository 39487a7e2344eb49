#include "serialization/onnx/opset/common.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace nodeflow::onnx_import::detail {

Custom required(const std::string& attribute) {
  return {[attribute](Upgrade& up) {
            if (up.attribute(attribute) == nullptr)
              up.refuse_attribute("attribute '" + attribute + "' is required at opset " +
                                  std::to_string(up.opset()));
          },
          "'" + attribute + "' is required"};
}

Custom float_to_int(const std::string& attribute, const std::string& why) {
  return {[attribute, why](Upgrade& up) {
            const AttrValue* v = up.attribute(attribute);
            if (v == nullptr) return;
            const double f = std::get<double>(*v);
            // Integral and inside int64 (2^63 is the first double past it).
            if (!(std::floor(f) == f && std::fabs(f) < 9.2233720368547758e18))
              up.refuse_attribute("attribute '" + attribute + "' = " + to_string(*v) +
                                  " is not supported: " + why);
            up.node().attributes[attribute] = static_cast<std::int64_t>(f);
          },
          "an integral FLOAT '" + attribute + "' becomes an INT"};
}

}  // namespace nodeflow::onnx_import::detail
