/* libFuzzer harness for the parquet reader's row-group slicing (page-by-page streaming of row
 * groups larger than the memory budget, src/format/pqt_reader.c): the input is a whole parquet
 * file, opened twice from memory — as written and sliced into slices of a few KiB
 * (pqt_open_opts.slice_bytes, taken from the input's last byte; the one before it turns the
 * page read-ahead thread on, pqt_open_opts.read_ahead, and lets the slices leave their values
 * in the kept page, pqt_leaf_data.allow_view, as scan does) — and every leaf of every row
 * group is decoded both ways.  Differential: when the whole row group decodes, the slices must
 * decode too and their levels, values and offsets, concatenated, must equal it byte for byte.
 * A memory budget keeps input-driven allocations inside libFuzzer's RSS limit. */
#include <stdlib.h>
#include <string.h>

#include "vforge/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the concatenation of slices, for comparison */
typedef struct acc {
  vf_buf def, rep, val;
  int64_t *off;
  int64_t noff, nlevels, nvalues, nrows;
} acc;

static void acc_reset(acc *a) {
  vf_buf_reset(&a->def);
  vf_buf_reset(&a->rep);
  vf_buf_reset(&a->val);
  a->noff = a->nlevels = a->nvalues = a->nrows = 0;
}

static bool acc_add(acc *a, const pqt_leaf_data *d, int16_t max_def) {
  vf_error err;
  for (int64_t i = 0; i < d->nlevels; i++) {
    uint8_t v = d->def ? d->def[i] : (uint8_t)max_def;
    if (vf_buf_append(&a->def, &v, 1, &err) != VF_OK) return false;
  }
  if (d->rep && vf_buf_append(&a->rep, d->rep, (size_t)d->nlevels, &err) != VF_OK) return false;
  if (vf_buf_append(&a->val, pqt_leaf_values(d), (size_t)pqt_leaf_values_len(d), &err) != VF_OK)
    return false;
  if (d->width == 0) { /* BYTE_ARRAY: lengths, rebased */
    int64_t *no = realloc(a->off, sizeof *no * (size_t)(a->noff + d->nvalues + 1));
    if (!no) return false;
    a->off = no;
    for (int64_t i = 0; i < d->nvalues; i++)
      a->off[a->noff++] = d->offsets[i + 1] - d->offsets[i];
  }
  a->nlevels += d->nlevels;
  a->nvalues += d->nvalues;
  a->nrows += d->nrows;
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  vf_set_memory_budget((uint64_t)256 << 20);
  vf_error err;
  io_source *s1, *s2;
  pqt_file *whole = NULL, *sliced = NULL;
  pqt_open_opts ow = {.verify_crc = true, .whole_row_groups = true};
  pqt_open_opts os = {.verify_crc = true,
                      .slice_bytes = 256u + 64u * data[size - 1],
                      .read_ahead = data[size - 2] & 1};
  if (io_open_memory(data, size, "fuzz.parquet", &s1, &err) != VF_OK) return 0;
  if (pqt_open(s1, &ow, &whole, &err) != VF_OK) return 0;
  if (io_open_memory(data, size, "fuzz.parquet", &s2, &err) != VF_OK ||
      pqt_open(s2, &os, &sliced, &err) != VF_OK) {
    pqt_close(whole);
    return 0; /* opening differs only by slicing, which can only run out of memory */
  }
  const pqt_schema *sc = pqt_schema_of(whole);
  const pqt_file_meta *mw = pqt_meta(whole), *ms = pqt_meta(sliced);
  pqt_leaf_data a, b;
  pqt_leaf_data_init(&a);
  pqt_leaf_data_init(&b);
  b.allow_view = (data[size - 2] & 2) != 0;
  acc x;
  memset(&x, 0, sizeof x);
  vf_buf_init(&x.def, 0);
  vf_buf_init(&x.rep, 0);
  vf_buf_init(&x.val, 0);
  int sg = 0; /* first slice of row group g */
  for (int g = 0; g < mw->nrow_groups && g < 16; g++) {
    int64_t rows = mw->row_groups[g].num_rows, seen = 0;
    int s_end = sg;
    while (s_end < ms->nrow_groups && seen < rows) seen += ms->row_groups[s_end++].num_rows;
    if (seen != rows) abort(); /* slices must partition the row group exactly */
    for (int l = 0; l < sc->nleaves && l < 16; l++) {
      bool ok_whole = pqt_read_leaves(whole, g, &l, 1, &a, &err) == VF_OK;
      acc_reset(&x);
      bool ok_sliced = true;
      for (int s = sg; s < s_end && ok_sliced && s - sg < 4096; s++) {
        ok_sliced = pqt_read_leaves(sliced, s, &l, 1, &b, &err) == VF_OK;
        if (ok_sliced && !acc_add(&x, &b, sc->leaves[l].max_def)) goto done; /* out of memory */
      }
      if (!ok_whole || s_end - sg > 4096) continue;
      if (!ok_sliced) {
        if (err.code == VF_ENOMEM) continue; /* a slice may hit the budget differently */
        abort();                             /* the whole row group decoded, a slice did not */
      }
      if (x.nlevels != a.nlevels || x.nvalues != a.nvalues || x.nrows != a.nrows) abort();
      for (int64_t i = 0; i < a.nlevels; i++)
        if (x.def.data[i] != (a.def ? a.def[i] : (uint8_t)sc->leaves[l].max_def)) abort();
      if (a.rep && memcmp(x.rep.data, a.rep, (size_t)a.nlevels) != 0) abort();
      if (x.val.len != a.values.len || (a.values.len && memcmp(x.val.data, a.values.data, a.values.len)))
        abort();
      if (a.width == 0)
        for (int64_t i = 0; i < a.nvalues; i++)
          if (x.off[i] != a.offsets[i + 1] - a.offsets[i]) abort();
    }
    sg = s_end;
  }
done:
  pqt_leaf_data_free(&a);
  pqt_leaf_data_free(&b);
  vf_buf_free(&x.def);
  vf_buf_free(&x.rep);
  vf_buf_free(&x.val);
  free(x.off);
  pqt_close(whole);
  pqt_close(sliced);
  return 0;
}
