// libFuzzer target: the ONNX reader (and, for what it accepts, the writer).
// See tests/support/fuzz_properties.hpp for what is checked.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "support/fuzz_properties.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nodeflow::testing::check_onnx_model(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
