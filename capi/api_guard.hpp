#pragma once
// The one boundary every nf_* function crosses: guard() runs the body, turns
// whatever it throws into an nf_status and records the status and the message
// as this thread's last error (docs/c-api.md, "Errors").
#include <string>

#include "capi/nodeflow.h"

namespace nodeflow::capi {

/// An error the C layer itself raises (a NULL pointer, a buffer too small),
/// with the status it maps to.
class ApiError : public std::exception {
 public:
  ApiError(nf_status status, std::string message) : status_(status), message_(std::move(message)) {}
  nf_status status() const noexcept { return status_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  nf_status status_;
  std::string message_;
};

/// Records `status` and `message` as this thread's last error; returns status.
/// Never throws (a message that cannot be copied is replaced by a fixed one).
nf_status record(nf_status status, const char* message) noexcept;

/// Maps the exception being handled to its status and records it. Only to be
/// called inside a catch block.
nf_status record_current_exception() noexcept;

/// Runs body(); NF_OK (recorded, with an empty message) when it returns,
/// else the status of what it threw. Every nf_* function goes through it.
template <typename F> nf_status guard(F&& body) noexcept {
  try {
    body();
    return record(NF_OK, "");
  } catch (...) {
    return record_current_exception();
  }
}

/// `pointer`, or ApiError NF_ERR_INVALID_ARGUMENT "<what> is NULL".
template <typename T> T* require(T* pointer, const char* what) {
  if (pointer == nullptr) throw ApiError(NF_ERR_INVALID_ARGUMENT, std::string(what) + " is NULL");
  return pointer;
}

}  // namespace nodeflow::capi
