/*
 * libFuzzer harness for the big-ann binary vector reader (src/format/fbin.c).
 * The input is a whole .fbin/.u8bin/.i8bin/.ibin file in memory (the first byte picks the element
 * type, the rest is the file): fbin_open() must either refuse it with VF_ECORRUPT /
 * VF_EUNSUPPORTED (or VF_ENOMEM) and a message naming the file, or open it so that every row
 * reads back; never crash, hang or allocate from the header's claim alone.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vforge/vecfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  static const vec_dtype types[4] = {VEC_F32, VEC_U8, VEC_I8, VEC_I32};
  vec_dtype t = types[data[0] & 3];
  io_source *src = NULL;
  vf_error err;
  vf_error_clear(&err);
  if (io_open_memory(data + 1, size - 1, "fuzz.fbin", &src, &err) != VF_OK) return 0;
  vec_file *f = NULL;
  vf_status st = fbin_open(src, t, &f, &err);
  if (st != VF_OK) {
    if (st != VF_ECORRUPT && st != VF_EUNSUPPORTED && st != VF_ENOMEM) abort();
    if (!strstr(err.msg, "fuzz.fbin")) abort();
    return 0;
  }
  uint64_t rows = vec_rows(f), dim = vec_dim(f);
  if (rows * dim * vec_dtype_size(t) + 8 != size - 1) abort();
  /* rows > 0 bounds dim by the input size; an empty file may claim any dimension */
  float *buf = rows ? malloc((size_t)dim * sizeof(float) + 1) : NULL;
  for (uint64_t r = 0; buf && r < rows && r < 64; r++)
    if (vec_read_rows(f, r, 1, buf, &err) != VF_OK) abort();
  free(buf);
  vec_close(f);
  return 0;
}
