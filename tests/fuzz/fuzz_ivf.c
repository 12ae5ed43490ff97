/*
 * libFuzzer harness for the IVF index reader (src/index/ivf_file.c) and search
 * (src/index/ivf_search.c).
 *
 * The input is a whole index file.  Its trailing checksum would stop nearly every mutation at
 * the first check, so when the first reserved header byte (offset 176) is zero, as written, the
 * harness also patches the header's file_bytes and recomputes the checksum, which lets mutations
 * reach the section, directory, row and id checks and the search.  ivf_open() must either refuse
 * the file with VF_ECORRUPT (or VF_ENOMEM) and a message naming it, or describe a file that
 * ivf_info, ivf_id and a tiny search (every list probed, re-rank on) handle without a fault.
 * Seeds: one file per code type (tests/fuzz/corpus/fuzz_ivf); 4-bit PQ (version 2, pq_nbits at
 * offset 32) with stored vectors and, with an odd pq_m, without (the float-ADC re-rank).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "index/ivf_internal.h"

static void contract(bool ok) {
  if (!ok) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > ((size_t)1 << 22)) return 0;
  char path[64];
  snprintf(path, sizeof path, "/tmp/fuzz-ivf.%ld.ivf", (long)getpid());
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  if (size >= IVF_HEADER_BYTES + 8 && buf[176] == 0) {
    uint64_t fb = size;
    memcpy(buf + 56, &fb, 8);
    ivf_hash h;
    ivf_hash_init(&h);
    ivf_hash_update(&h, buf, size - 8);
    uint64_t c = ivf_hash_final(&h);
    memcpy(buf + size - 8, &c, 8);
  }
  FILE *f = fopen(path, "wb");
  if (!f) {
    free(buf);
    return 0;
  }
  size_t w = fwrite(buf, 1, size, f);
  fclose(f);
  free(buf);
  if (w != size) {
    unlink(path);
    return 0;
  }
  ivf_index *ix = NULL;
  vf_error err = {0};
  vf_status st = ivf_open(path, &ix, &err);
  contract(st == VF_OK || st == VF_ECORRUPT || st == VF_ENOMEM);
  contract((st == VF_OK) == (ix != NULL));
  if (st) contract(strstr(err.msg, path) != NULL);
  if (ix) {
    ivf_info in;
    ivf_info_get(ix, &in);
    contract(in.rows == ix->h.rows && in.file_bytes == size);
    size_t len;
    for (int64_t r = 0; r < (int64_t)in.rows && r < 64; r++)
      (void)ivf_id(ix, r, &len);
    contract(ivf_id(ix, (int64_t)in.rows, &len) != NULL && len == 0);
    if (in.dim <= 4096 && in.nlist <= 4096) {
      float *q = calloc((size_t)in.dim * 2, sizeof(float));
      idx_hit hits[2 * 5];
      size_t counts[2];
      if (q) {
        for (int32_t i = 0; i < in.dim; i++)
          q[i] = (float)(i % 7) - 3.0f, q[in.dim + i] = 0.5f;
        ivf_search_opts so = {.nprobe = in.nlist, .threads = 1, .rerank = 2};
        vf_status ss = ivf_search(ix, q, 2, in.dim, 5, &so, hits, counts, &err);
        contract(ss == VF_OK || ss == VF_ENOMEM);
        if (ss == VF_OK)
          for (int qi = 0; qi < 2; qi++) {
            contract(counts[qi] <= 5 && counts[qi] <= in.rows);
            for (size_t i = 0; i < counts[qi]; i++)
              contract(hits[qi * 5 + i].key >= 0 && (uint64_t)hits[qi * 5 + i].key < in.rows);
          }
        contract(ivf_search(ix, q, 1, in.dim + 1, 5, &so, hits, counts, &err) == VF_EUSAGE);
        free(q);
      }
    }
    ivf_close(ix);
  }
  unlink(path);
  return 0;
}
