/*
 * libFuzzer harness for the .npy reader and the shared row reader (src/format/vecfile.c).
 *
 * The input is a whole .npy file in memory: npy_open() must either refuse it with
 * VF_ECORRUPT / VF_EUNSUPPORTED (or VF_ENOMEM) and a message, or describe a layout that is
 * exactly the file: data_offset + rows * dim * itemsize == size.  Opened files are then read
 * completely (capped at 1M elements, in uneven row chunks), as float32 and, for integer
 * dtypes, as int64; a range past the last row must be VF_EUSAGE.
 *
 * Built by `make fuzz-build` (tests/fuzz/CMakeLists.txt links libvforge), run by `make fuzz-smoke`.
 */
#include <stdlib.h>

#include "vforge/vecfile.h"

#define MAX_ELEMS ((uint64_t)1 << 20)
#define BUF_ELEMS 4096

static void contract(bool ok) {
  if (!ok) abort(); /* the reader broke its contract: report it as a crash */
}

static void check_status(vf_status st, const vf_error *err) {
  contract(st == VF_OK || st == VF_ECORRUPT || st == VF_EUNSUPPORTED || st == VF_ENOMEM);
  if (st) contract(err->msg[0] != '\0');
}

static void read_all(vec_file *f, bool exact_size, uint64_t size) {
  const vec_layout *l = vec_layout_of(f);
  uint64_t rows = vec_rows(f), dim = vec_dim(f);
  contract(dim >= 1 && l->ndim >= 1 && l->shape[0] == rows);
  if (exact_size) contract(l->data_offset + rows * dim * vec_dtype_size(l->dtype) == size);
  static float fbuf[BUF_ELEMS];
  static int64_t ibuf[BUF_ELEMS];
  vf_error err = {0};
  uint64_t per = BUF_ELEMS / dim; /* rows per read; 0 when one row does not fit */
  uint64_t budget = MAX_ELEMS, r = 0;
  for (unsigned step = 1; per && r < rows && budget >= dim; step = step % 7 + 1) {
    uint64_t n = per < step ? per : step;
    if (n > rows - r) n = rows - r;
    contract(vec_read_rows(f, r, n, fbuf, &err) == VF_OK);
    if (vec_dtype_is_int(l->dtype))
      contract(vec_read_rows_i64(f, r, n, ibuf, &err) == VF_OK);
    else
      contract(vec_read_rows_i64(f, r, n, ibuf, &err) == VF_EUNSUPPORTED);
    r += n;
    budget -= n * dim > budget ? budget : n * dim;
  }
  contract(vec_read_rows(f, rows, 1, fbuf, &err) == VF_EUSAGE && err.msg[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  io_source *src = NULL;
  vf_error err = {0};
  if (io_open_memory(data, size, "fuzz.npy", &src, &err) != VF_OK) return 0;
  vec_file *f = NULL;
  vf_status st = npy_open(src, &f, &err);
  check_status(st, &err);
  contract((st == VF_OK) == (f != NULL));
  if (f) {
    contract(strcmp(vec_format(f), "npy") == 0);
    read_all(f, true, size);
    vec_close(f);
  }
  return 0;
}
