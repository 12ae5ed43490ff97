/* libFuzzer harness: the input is a whole parquet file.  Open it from memory, decode every leaf
 * of every row group, render every row as JSON and assemble dense vectors for every top-level
 * column that looks like one.  Any crash, leak, hang or sanitizer report is a bug; errors are
 * the expected outcome for most inputs.  A memory budget keeps input-driven allocations (RLE
 * runs, decompression bombs) inside libFuzzer's RSS limit: they must fail with VF_ENOMEM.
 * Build: clang -fsanitize=fuzzer,address,undefined with the util, io and format sources. */
#include <stdlib.h>

#include "vforge/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vf_set_memory_budget((uint64_t)256 << 20);
  vf_error err;
  io_source *src;
  pqt_file *f;
  if (io_open_memory(data, size, "fuzz.parquet", &src, &err) != VF_OK) return 0;
  if (pqt_open(src, NULL, &f, &err) != VF_OK) return 0;
  const pqt_schema *s = pqt_schema_of(f);
  const pqt_file_meta *m = pqt_meta(f);
  int nl = s->nleaves;
  int *ids = calloc((size_t)nl + 1, sizeof(int));
  pqt_leaf_data *ld = calloc((size_t)nl + 1, sizeof *ld);
  pqt_rows *rows = NULL;
  vf_buf out;
  vf_buf_init(&out, (size_t)64 << 20);
  pqt_dense dense = {0};
  if (!ids || !ld) goto done;
  for (int i = 0; i < nl; i++) {
    ids[i] = i;
    pqt_leaf_data_init(&ld[i]);
  }
  if (pqt_rows_create(f, s->top, s->ntop, &rows, &err) != VF_OK) goto done;
  int64_t first_row = 0;
  for (int g = 0; g < m->nrow_groups && g < 64; g++) {
    int64_t n = m->row_groups[g].num_rows;
    first_row += n;
    if (pqt_read_leaves(f, g, ids, nl, ld, &err) != VF_OK) continue;
    if (pqt_rows_bind(rows, ld, ids, nl, n, &err) == VF_OK) {
      for (int64_t r = 0; r < n && r < 100000; r++) {
        vf_buf_reset(&out);
        if (pqt_rows_next(rows, &out, &err) != VF_OK) break;
      }
    }
    for (int t = 0; t < s->ntop; t++) {
      const pqt_node *tn = &s->nodes[s->top[t]];
      if (tn->nleaves != 1) continue;
      int32_t dim = 0;
      pqt_dense_from_leaf(f, s->top[t], &ld[tn->first_leaf], first_row - n, &dim, &dense, &err);
    }
    pqt_offset_index oi;
    pqt_column_index ci;
    for (int l = 0; l < nl && l < 8; l++)
      if (pqt_read_page_index(f, g, l, &oi, &ci, &err) == VF_OK) {
        pqt_offset_index_free(&oi);
        pqt_column_index_free(&ci);
      }
  }
done:
  pqt_rows_free(rows);
  for (int i = 0; ld && i < nl; i++)
    pqt_leaf_data_free(&ld[i]);
  free(ld);
  free(ids);
  vf_buf_free(&out);
  pqt_dense_free(&dense);
  pqt_close(f);
  return 0;
}
