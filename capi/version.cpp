// nf_version: the ABI version and the library's version.
#include "capi/api_guard.hpp"
#include "capi/tensor_io.hpp"

extern "C" {

NF_API nf_status nf_version(uint32_t* abi_version, char* buffer, size_t capacity, size_t* length) {
  return nodeflow::capi::guard([&] {
    if (abi_version) *abi_version = NF_ABI_VERSION;
    nodeflow::capi::copy_string_out("the version", NODEFLOW_VERSION, buffer, capacity, length);
  });
}

}  // extern "C"
