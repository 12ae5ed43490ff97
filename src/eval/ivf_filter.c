/*
 * Filtered `index search` (issue 19): an IVF index file holds vectors and point ids but no
 * payload, so the payload comes from the corpus the index was built from.  Every corpus row's
 * payload (only the keys the filters read) is parsed once into flt_docs, each index row is
 * matched to its corpus row by point id, and a query's filter then becomes an allow mask over
 * the index rows that ivf_search() applies inside its list scan (widening nprobe, ivf.h).
 * An index row whose id is not in the corpus is never allowed (the index and the corpus differ:
 * the count is reported).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "eval/bf_internal.h"
#include "vforge/ivf.h"
#include "vforge/store.h"

static uint64_t id_hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

/* ev_ivf_filter_open(): see bf_internal.h. */
vf_status ev_ivf_filter_open(ev_ivf_filter *x, const ivf_index *ix, const corpus_files *files,
                             const corpus_record_spec *records, const ev_filters *flt, vf_error *err) {
  memset(x, 0, sizeof *x);
  x->flt = flt;
  ivf_info in;
  ivf_info_get(ix, &in);
  x->rows = in.rows;
  corpus_payload_source *psrc = NULL;
  int npsrc = 0;
  /* every corpus row: its payload (a docs row) and its id text (for the index's ids) */
  vf_buf ids;
  VF_BUF_INIT(&ids, VF_BUF_MAX_ROWS_HELD);
  corpus_batch bt;
  memset(&bt, 0, sizeof bt);
  corpus_records *rr = NULL;
  int64_t *slot = NULL;
  vf_status st = VF_OK;
  VF_TRY(ev_filters_payload(flt, records, &psrc, &npsrc, err));
  VF_TRY(flt_docs_create(&x->docs, err));
  corpus_record_spec spec = {.payload = psrc, .npayload = npsrc, .id = records ? records->id : NULL};
  uint64_t base = 0;
  for (size_t fi = 0; fi < files->n; fi++) {
    VF_TRY(corpus_records_open(&files->files[fi], &spec, base, &rr, err));
    int nrg = corpus_records_row_groups(rr);
    for (int rg = 0; rg < nrg; rg++) {
      VF_TRY(corpus_records_read(rr, rg, corpus_records_row_group_first(rr, rg), &bt, NULL, err));
      VF_TRY(flt_docs_add(x->docs, (const char *)bt.payload.data, bt.payload_offsets,
                          bt.n, files->files[fi].key, err));
      for (size_t i = 0; i < bt.n; i++) {
        char t[37];
        store_id_format(&bt.ids[i], t);
        char fixed[37] = {0};
        memcpy(fixed, t, strlen(t));
        VF_TRY(vf_buf_append(&ids, fixed, 37, err));
      }
    }
    base += corpus_records_rows(rr);
    corpus_records_close(rr);
    rr = NULL;
  }
  corpus_batch_free(&bt); /* not held while the id map is built */
  free(psrc);
  psrc = NULL;
  /* id text -> docs row (open addressing), then index row -> docs row */
  size_t n = flt_docs_rows(x->docs), cap = 16;
  while (cap < 2 * n + 2) cap <<= 1;
  slot = vf_mallocarray(cap, sizeof *slot);
  if (!slot || !(x->pos = vf_mallocarray(x->rows ? x->rows : 1, sizeof *x->pos)))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "index search: out of memory for %zu ids", n));
  const char *idt = (const char *)ids.data;
  for (size_t i = 0; i < cap; i++) slot[i] = -1;
  for (size_t r = 0; r < n; r++) {
    const char *s = idt + r * 37;
    size_t h = id_hash(s, strlen(s)) & (cap - 1);
    while (slot[h] >= 0 && strcmp(idt + (size_t)slot[h] * 37, s) != 0) h = (h + 1) & (cap - 1);
    slot[h] = (int64_t)r; /* a repeated id: the last row wins, as in a store */
  }
  for (uint64_t r = 0; r < x->rows; r++) {
    size_t len = 0;
    const char *id = ivf_id(ix, (int64_t)r, &len);
    size_t h = id_hash(id, len) & (cap - 1);
    x->pos[r] = -1;
    while (slot[h] >= 0) {
      const char *s = idt + (size_t)slot[h] * 37;
      if (strlen(s) == len && memcmp(s, id, len) == 0) {
        x->pos[r] = slot[h];
        break;
      }
      h = (h + 1) & (cap - 1);
    }
    x->unmatched += x->pos[r] < 0;
  }
  size_t il;
  x->ids = (char *)vf_buf_take(&ids, &il); /* kept for has_id */
  if (!(x->mask = vf_malloc(n ? n : 1))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
out:
  corpus_records_close(rr);
  corpus_batch_free(&bt);
  free(psrc);
  free(slot);
  vf_buf_free(&ids);
  if (st != VF_OK) ev_ivf_filter_close(x);
  return st;
}

static bool row_id(void *user, size_t row, corpus_id *out) {
  const ev_ivf_filter *x = user;
  if (!x->ids) return false;
  ev_filter_id(x->ids + row * 37, out);
  return true;
}

/* ev_ivf_filter_allow(): see bf_internal.h. */
bool ev_ivf_filter_allow(ev_ivf_filter *x, size_t q, uint8_t *allow) {
  const flt_filter *f = x->flt->per_query ? x->flt->per_query[q] : NULL;
  if (!f) return false;
  flt_docs_select(x->docs, f, NULL, row_id, x, x->mask);
  for (uint64_t r = 0; r < x->rows; r++) allow[r] = x->pos[r] >= 0 && x->mask[x->pos[r]];
  return true;
}

void ev_ivf_filter_close(ev_ivf_filter *x) {
  flt_docs_free(x->docs);
  free(x->pos);
  free(x->mask);
  free(x->ids);
  memset(x, 0, sizeof *x);
}
