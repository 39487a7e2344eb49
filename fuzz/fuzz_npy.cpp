// libFuzzer target: the .npy reader (and, for what it accepts, the encoder).
// See tests/support/fuzz_properties.hpp for what is checked.
#include <cstddef>
#include <cstdint>
#include <span>

#include "support/fuzz_properties.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nodeflow::testing::check_npy_bytes(std::as_bytes(std::span(data, size)));
  return 0;
}
