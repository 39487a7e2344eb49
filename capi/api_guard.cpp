#include "capi/api_guard.hpp"

#include <new>

#include "core/errors.hpp"
#include "training/train_config.hpp"

namespace nodeflow::capi {
namespace {

struct LastError {
  nf_status status = NF_OK;
  std::string message;
  const char* fallback = nullptr;  // set when `message` could not take the text
};

LastError& last_error() noexcept {
  thread_local LastError error;
  return error;
}

}  // namespace

nf_status record(nf_status status, const char* message) noexcept {
  LastError& e = last_error();
  e.status = status;
  e.fallback = nullptr;
  try {
    e.message.assign(message);
  } catch (...) {
    e.message.clear();
    e.fallback = "out of memory while recording the error message";
  }
  return status;
}

nf_status record_current_exception() noexcept {
  try {
    throw;
  } catch (const ApiError& e) {
    return record(e.status(), e.what());
  } catch (const training::InvalidConfig& e) {
    return record(NF_ERR_INVALID_CONFIG, e.what());
  } catch (const InvalidGraph& e) {
    return record(NF_ERR_INVALID_GRAPH, e.what());
  } catch (const InvalidAttribute& e) {
    return record(NF_ERR_INVALID_ATTRIBUTE, e.what());
  } catch (const ShapeMismatch& e) {
    return record(NF_ERR_SHAPE_MISMATCH, e.what());
  } catch (const UnsupportedDType& e) {
    return record(NF_ERR_UNSUPPORTED_DTYPE, e.what());
  } catch (const IoError& e) {
    return record(NF_ERR_IO, e.what());
  } catch (const RunError& e) {
    return record(NF_ERR_RUN, e.what());
  } catch (const Error& e) {
    // The other library errors: a tensor that cannot be allocated, a bad
    // base64 payload, a borrowed buffer refused.
    return record(NF_ERR_RUN, e.what());
  } catch (const std::bad_alloc&) {
    return record(NF_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return record(NF_ERR_INTERNAL, e.what());
  } catch (...) {
    return record(NF_ERR_INTERNAL, "an unknown exception reached the C API");
  }
}

}  // namespace nodeflow::capi

using nodeflow::capi::last_error;
using nodeflow::capi::LastError;

extern "C" {

NF_API nf_status nf_last_error(nf_status* status, char* buffer, size_t capacity, size_t* length) {
  // Reads the last error without recording one: no guard, nothing that throws.
  const LastError& e = last_error();
  const char* text = e.fallback ? e.fallback : e.message.c_str();
  const size_t n = std::char_traits<char>::length(text);
  if (status) *status = e.status;
  if (length) *length = n;
  if (buffer == nullptr) return capacity == 0 ? NF_OK : NF_ERR_INVALID_ARGUMENT;
  if (capacity < n + 1) {
    if (capacity > 0) {
      std::char_traits<char>::copy(buffer, text, capacity - 1);
      buffer[capacity - 1] = '\0';
    }
    return NF_ERR_BUFFER_TOO_SMALL;
  }
  std::char_traits<char>::copy(buffer, text, n + 1);
  return NF_OK;
}

NF_API const char* nf_last_error_message(void) {
  const LastError& e = last_error();
  return e.fallback ? e.fallback : e.message.c_str();
}

}  // extern "C"
