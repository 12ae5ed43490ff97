/*
 * libFuzzer harness for the IDX reader, plain and gzipped (src/format/idx.c), and the shared
 * row reader (src/format/vecfile.c).
 *
 * The input is a whole IDX file in memory (a gzip stream when it starts with 1f 8b).
 * idx_open() must either refuse it with VF_ECORRUPT / VF_EUNSUPPORTED (or VF_ENOMEM) and a
 * message, or describe a layout that is exactly the (decompressed) data: for a plain file
 * data_offset + rows * dim * itemsize == size.  The inflate limit is lowered to 64 MiB so a
 * header claiming more is refused instead of exhausting the fuzzer's memory.  Opened files are
 * read completely (capped at 1M elements) as float32 and, for integer types, as int64; a range
 * past the last row must be VF_EUSAGE.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  io_source *src = NULL;
  vf_error err = {0};
  if (io_open_memory(data, size, "fuzz-idx3-ubyte", &src, &err) != VF_OK) return 0;
  bool gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  vec_open_opts opts = {.max_inflate = (uint64_t)64 << 20};
  vec_file *f = NULL;
  vf_status st = idx_open(src, &opts, &f, &err);
  contract(st == VF_OK || st == VF_ECORRUPT || st == VF_EUNSUPPORTED || st == VF_ENOMEM);
  contract((st == VF_OK) == (f != NULL));
  if (st) contract(err.msg[0] != '\0');
  if (!f) return 0;

  const vec_layout *l = vec_layout_of(f);
  uint64_t rows = vec_rows(f), dim = vec_dim(f);
  contract(strcmp(vec_format(f), "idx") == 0 && l->big_endian && dim >= 1);
  contract(l->data_offset == 4 + 4 * (uint64_t)l->ndim && l->shape[0] == rows);
  if (!gz) contract(l->data_offset + rows * dim * vec_dtype_size(l->dtype) == size);
  static float fbuf[BUF_ELEMS];
  static int64_t ibuf[BUF_ELEMS];
  uint64_t per = BUF_ELEMS / dim, budget = MAX_ELEMS, r = 0;
  for (unsigned step = 1; per && r < rows && budget >= dim; step = step % 5 + 1) {
    uint64_t n = per < step ? per : step;
    if (n > rows - r) n = rows - r;
    contract(vec_read_rows(f, r, n, fbuf, &err) == VF_OK);
    vf_status is = vec_read_rows_i64(f, r, n, ibuf, &err);
    contract(is == (vec_dtype_is_int(l->dtype) ? VF_OK : VF_EUNSUPPORTED));
    r += n;
    budget -= n * dim > budget ? budget : n * dim;
  }
  contract(vec_read_rows(f, rows, 1, fbuf, &err) == VF_EUSAGE && err.msg[0]);
  vec_close(f);
  return 0;
}
