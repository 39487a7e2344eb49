/* Helpers of the C API tests (C99): checks that report the file, line and the
 * library's last error, the LeNet-5 batch they feed, and .npy files. */
#ifndef NODEFLOW_CAPI_SUPPORT_H
#define NODEFLOW_CAPI_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "nodeflow.h"

/* Failed checks so far; main returns nonzero when there is one. */
extern int capi_failures;

void capi_fail(const char* file, int line, const char* what);

/* CHECK(condition); OK(call): the call returns NF_OK, else its error text. */
#define CHECK(cond)                                    \
  do {                                                 \
    if (!(cond)) capi_fail(__FILE__, __LINE__, #cond); \
  } while (0)
#define OK(call)                                                   \
  do {                                                             \
    nf_status ok_status_ = (call);                                 \
    if (ok_status_ != NF_OK) capi_fail(__FILE__, __LINE__, #call); \
  } while (0)

/* The call returns `status` and the last error text contains `text`. */
#define EXPECT_ERROR(call, status, text) \
  capi_expect_error((call), (status), (text), __FILE__, __LINE__, #call)
void capi_expect_error(nf_status got, nf_status status, const char* text, const char* file,
                       int line, const char* call);

/* The LeNet-5 batch of the tests: `batch` 1x28x28 images with values from a
 * fixed formula, and labels i % 10. */
enum { CAPI_IMAGE_VALUES = 28 * 28 };
void capi_fill_batch(float* images, int64_t* labels, int64_t batch, unsigned variant);

/* Writes a little-endian .npy file of dtype descr ("<f4", "<i8"). Returns 0 on success. */
int capi_write_npy(const char* path, const char* descr, int32_t rank, const int64_t* dims,
                   const void* data, size_t bytes);
/* Reads the data of a .npy file into (data, capacity); returns its byte
 * count, or (size_t)-1 when it cannot be read or does not fit. */
size_t capi_read_npy(const char* path, void* data, size_t capacity);

#endif
