#include "capi_support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int capi_failures = 0;

void capi_fail(const char* file, int line, const char* what) {
  ++capi_failures;
  fprintf(stderr, "%s:%d: check failed: %s\n  last error: %s\n", file, line, what,
          nf_last_error_message());
}

void capi_expect_error(nf_status got, nf_status status, const char* text, const char* file,
                       int line, const char* call) {
  const char* message = nf_last_error_message();
  if (got != status || strstr(message, text) == NULL) {
    ++capi_failures;
    fprintf(stderr,
            "%s:%d: %s\n  expected status %d and a message with \"%s\"\n"
            "  got status %d: %s\n",
            file, line, call, (int)status, text, (int)got, message);
  }
}

void capi_fill_batch(float* images, int64_t* labels, int64_t batch, unsigned variant) {
  int64_t i, k;
  for (i = 0; i < batch; ++i) {
    labels[i] = i % 10;
    for (k = 0; k < CAPI_IMAGE_VALUES; ++k)
      images[i * CAPI_IMAGE_VALUES + k] =
          (float)(0.5 + 0.5 * sin(0.01 * (double)(k * (i + 1 + (int64_t)variant)) + (double)i));
  }
}

int capi_write_npy(const char* path, const char* descr, int32_t rank, const int64_t* dims,
                   const void* data, size_t bytes) {
  char header[256], shape[160] = "";
  size_t used = 0, length;
  int32_t i;
  FILE* f;
  for (i = 0; i < rank; ++i)
    used += (size_t)sprintf(shape + used, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (rank == 1) strcpy(shape + used, ",");
  length = (size_t)sprintf(header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                           descr, shape);
  /* Magic, version 1.0, a 2-byte length; the header padded so that data starts at 64. */
  while ((10 + length + 1) % 64 != 0) header[length++] = ' ';
  header[length++] = '\n';
  f = fopen(path, "wb");
  if (!f) return -1;
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc((int)(length & 0xff), f);
  fputc((int)(length >> 8), f);
  fwrite(header, 1, length, f);
  if (bytes) fwrite(data, 1, bytes, f);
  return fclose(f) == 0 ? 0 : -1;
}

size_t capi_read_npy(const char* path, void* data, size_t capacity) {
  unsigned char prefix[10];
  size_t header, bytes;
  FILE* f = fopen(path, "rb");
  if (!f) return (size_t)-1;
  if (fread(prefix, 1, 10, f) != 10 || memcmp(prefix, "\x93NUMPY\x01\x00", 8) != 0 ||
      fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return (size_t)-1;
  }
  header = (size_t)prefix[8] | (size_t)prefix[9] << 8;
  bytes = (size_t)ftell(f) - 10 - header;
  if (bytes > capacity || fseek(f, (long)(10 + header), SEEK_SET) != 0 ||
      fread(data, 1, bytes, f) != bytes) {
    fclose(f);
    return (size_t)-1;
  }
  fclose(f);
  return bytes;
}
