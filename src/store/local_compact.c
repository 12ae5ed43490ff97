/*
 * local_compact.c — compaction of the local store at finalize: every segment holding superseded
 * rows is rewritten in place without them (atomically, one segment at a time), so that each id
 * is stored in exactly one segment row.  Split out of local.c along its "compaction" section;
 * the design note is local.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "local_internal.h"

/* ------------------------------------------------------------- compaction */

/* The rows of `keep` from decoded leaves into column batches for the writer. */
typedef struct ls_col_buf {
  vf_buf bytes;   /* STRING bytes / float values */
  int64_t *offs;  /* kept rows + 1 */
  uint8_t *valid; /* kept rows */
  int64_t *i64;
  size_t cap;
} ls_col_buf;

static vf_status cb_reserve(ls_col_buf *c, size_t n, vf_error *err) {
  if (n + 1 <= c->cap) return VF_OK;
  size_t cap = n + 1;
  int64_t *o = vf_realloc(c->offs, cap * sizeof *o);
  if (o) c->offs = o;
  uint8_t *v = vf_realloc(c->valid, cap);
  if (v) c->valid = v;
  int64_t *x = vf_realloc(c->i64, cap * sizeof *x);
  if (x) c->i64 = x;
  if (!o || !v || !x) return vf_error_set(err, VF_ENOMEM, "compaction: out of memory");
  c->cap = cap;
  return VF_OK;
}

/* flat optional/required column (STRING or INT64) */
static vf_status cb_flat(const pqt_file *f, const pqt_leaf_data *d, const uint8_t *keep,
                         int64_t nrows, ls_col_buf *c, pqt_wbatch *wb, vf_error *err) {
  vf_status st = cb_reserve(c, (size_t)nrows, err);
  if (st != VF_OK) return st;
  if (d->rep || d->nlevels != nrows)
    return vf_error_set(err, VF_ECORRUPT, "%s: a flat column has %lld levels for %lld rows",
                        pqt_name(f), (long long)d->nlevels, (long long)nrows);
  vf_buf_reset(&c->bytes);
  int64_t vi = 0, o = 0;
  c->offs[0] = 0;
  for (int64_t r = 0; r < nrows; r++) {
    bool present = !d->def || d->def[r] != 0;
    if (present && vi >= d->nvalues)
      return vf_error_set(err, VF_ECORRUPT, "%s: fewer values than levels", pqt_name(f));
    if (keep[r]) {
      c->valid[o] = present;
      if (d->type == PQT_BYTE_ARRAY) {
        if (present &&
            (st = vf_buf_append(&c->bytes, d->values.data + d->offsets[vi],
                                (size_t)(d->offsets[vi + 1] - d->offsets[vi]), err)) != VF_OK)
          return st;
        c->offs[o + 1] = (int64_t)c->bytes.len;
      } else {
        int64_t x = 0;
        if (present) memcpy(&x, d->values.data + vi * 8, 8);
        c->i64[o] = x;
      }
      o++;
    }
    if (present) vi++;
  }
  memset(wb, 0, sizeof *wb);
  wb->valid = c->valid;
  if (d->type == PQT_BYTE_ARRAY) {
    wb->bytes = c->bytes.data;
    wb->offsets = c->offs;
  } else {
    wb->values = c->i64;
  }
  return VF_OK;
}

/* LIST<float> column (dense vector or multivector): levels -> per-row offsets/validity */
static vf_status cb_list(const pqt_file *f, const pqt_leaf_data *d, int16_t max_def,
                         const uint8_t *keep, int64_t nrows, int32_t fixed_dim, ls_col_buf *c,
                         pqt_wbatch *wb, vf_error *err) {
  vf_status st = cb_reserve(c, (size_t)nrows, err);
  if (st != VF_OK) return st;
  if (!d->rep || d->type != PQT_FLOAT)
    return vf_error_set(err, VF_ECORRUPT, "%s: a vector column is not a list of floats",
                        pqt_name(f));
  vf_buf_reset(&c->bytes);
  c->offs[0] = 0;
  int64_t vi = 0, r = -1, o = 0, cnt = 0;
  bool valid = false;
  for (int64_t i = 0; i <= d->nlevels; i++) {
    bool start = i == d->nlevels || d->rep[i] == 0;
    if (start && r >= 0) { /* close row r */
      if (keep[r]) {
        if (fixed_dim > 0) {
          if (valid && cnt != fixed_dim)
            return vf_error_set(err, VF_ECORRUPT, "%s: row %lld has %lld floats, expected %d",
                                pqt_name(f), (long long)r, (long long)cnt, (int)fixed_dim);
          if (!valid) {
            float z[64] = {0};
            for (int32_t e = 0; e < fixed_dim; e += 64)
              if ((st = vf_buf_append(&c->bytes, z,
                                      (size_t)(fixed_dim - e < 64 ? fixed_dim - e : 64) * 4,
                                      err)) != VF_OK)
                return st;
          }
        }
        c->valid[o] = valid;
        c->offs[o + 1] = (int64_t)(c->bytes.len / 4);
        o++;
      }
    }
    if (i == d->nlevels) break;
    uint8_t def = d->def ? d->def[i] : (uint8_t)max_def;
    if (start) {
      r++;
      if (r >= nrows)
        return vf_error_set(err, VF_ECORRUPT, "%s: more list rows than rows", pqt_name(f));
      cnt = 0;
      valid = def >= max_def - 2; /* optional list: def 0 = null; required: never null */
    }
    if (def == max_def) {
      if (vi >= d->nvalues)
        return vf_error_set(err, VF_ECORRUPT, "%s: fewer values than levels", pqt_name(f));
      if (keep[r] && (st = vf_buf_append(&c->bytes, d->values.data + vi * 4, 4, err)) != VF_OK)
        return st;
      vi++;
      cnt++;
    } else if (def == max_def - 1) {
      return vf_error_set(err, VF_ECORRUPT, "%s: row %lld: null element inside a vector",
                          pqt_name(f), (long long)r);
    }
  }
  if (r + 1 != nrows)
    return vf_error_set(err, VF_ECORRUPT, "%s: %lld list rows for %lld rows", pqt_name(f),
                        (long long)(r + 1), (long long)nrows);
  memset(wb, 0, sizeof *wb);
  wb->values = c->bytes.len ? (const void *)c->bytes.data : (const void *)&ls_zero_float;
  wb->offsets = fixed_dim > 0 ? NULL : c->offs;
  wb->valid = c->valid;
  return VF_OK;
}

/* Rewrite one segment in place without its superseded rows. */
static vf_status ls_rewrite_segment(local_store *s, ls_seg *sg, vf_error *err) {
  pqt_file *f = NULL;
  pqt_writer *w = NULL;
  char *path = ls_path_join(s->dir, sg->name);
  int nc = s->ncols;
  int *leaves = vf_calloc((size_t)nc, sizeof *leaves);
  pqt_leaf_data *ld = vf_calloc((size_t)nc, sizeof *ld);
  ls_col_buf *cb = vf_calloc((size_t)nc, sizeof *cb);
  uint8_t *keep = NULL;
  vf_status st = VF_OK;
  if (!path || !leaves || !ld || !cb) {
    st = vf_error_set(err, VF_ENOMEM, "compaction: out of memory");
    goto out;
  }
  for (int i = 0; i < nc; i++) {
    pqt_leaf_data_init(&ld[i]);
    VF_BUF_INIT(&cb[i].bytes, VF_BUF_MAX_BATCH); /* a segment row group's column bytes */
  }
  if ((st = ls_open_segment_file(s, sg->name, &f, err)) != VF_OK) goto out;
  for (int i = 0; i < nc; i++)
    if ((leaves[i] = ls_leaf_of(f, s->cols[i].name)) < 0) {
      st = vf_error_set(err, VF_ECORRUPT, "%s: segment without column '%s'", pqt_name(f),
                        s->cols[i].name);
      goto out;
    }
  if ((st = ls_open_writer_at(s, path, &w, err)) != VF_OK) goto out;
  const pqt_file_meta *m = pqt_meta(f);
  const pqt_schema *sc = pqt_schema_of(f);
  int64_t row = 0;
  for (int g = 0; g < m->nrow_groups; g++) {
    int64_t nrows = m->row_groups[g].num_rows;
    if (nrows < 0 || row + nrows > sg->nrows) {
      st = vf_error_set(err, VF_ECORRUPT, "%s: row group %d: row count changed", pqt_name(f), g);
      goto out;
    }
    if ((st = vf_check_cancel(err)) != VF_OK) goto out;
    if ((st = pqt_read_leaves(f, g, leaves, nc, ld, err)) != VF_OK) goto out;
    uint8_t *k2 = vf_realloc(keep, nrows ? (size_t)nrows : 1);
    if (!k2) {
      st = vf_error_set(err, VF_ENOMEM, "compaction: out of memory");
      goto out;
    }
    keep = k2;
    int64_t kept = 0;
    for (int64_t r = 0; r < nrows; r++)
      kept += keep[r] = sg->slot[row + r] >= 0;
    for (int i = 0; i < nc; i++) {
      const pqt_wcolumn *col = &s->cols[i];
      if (col->type == PQT_W_VECTOR || col->type == PQT_W_LIST_FLOAT)
        st = cb_list(f, &ld[i], sc->leaves[leaves[i]].max_def, keep, nrows,
                     col->type == PQT_W_VECTOR ? col->dim : 0, &cb[i], &s->wb[i], err);
      else
        st = cb_flat(f, &ld[i], keep, nrows, &cb[i], &s->wb[i], err);
      if (st != VF_OK) goto out;
    }
    if (kept && (st = pqt_writer_write(w, s->wb, kept, err)) != VF_OK) goto out;
    row += nrows;
  }
  pqt_close(f);
  f = NULL;
  st = pqt_writer_close(w, err);
  w = NULL;
out:
  pqt_close(f);
  pqt_writer_abort(w);
  for (int i = 0; ld && cb && i < nc; i++) {
    pqt_leaf_data_free(&ld[i]);
    vf_buf_free(&cb[i].bytes);
    free(cb[i].offs);
    free(cb[i].valid);
    free(cb[i].i64);
  }
  free(ld);
  free(cb);
  free(leaves);
  free(keep);
  free(path);
  return st;
}

/* Compaction: each id kept once (its newest row).  Needs every other writer to be done. */
vf_status ls_compact(local_store *s, vf_error *err) {
  vf_status st = ls_commit_segment(s, err);
  if (st != VF_OK) return st;
  if ((st = ls_verify(s, err)) != VF_OK) return st;
  int fd;
  if ((st = ls_lock_exclusive(s, "finalize (compaction)", &fd, err)) != VF_OK) return st;
  s->view.valid = false;
  bool compacting = false; /* segments change: the view is read again afterwards */
  VF_TRY(ls_view_build(s, err));
  if (s->view.total_rows != s->view.count) {
    compacting = true;
    uint64_t before = s->view.total_rows;
    vf_stage pg;
    vf_stage_begin(&pg, s->progress, "compact", "segments", (uint64_t)s->view.nsegs);
    for (int i = 0; i < s->view.nsegs; i++) {
      if (s->progress)
        vf_stage_update(&pg, (uint64_t)i, "%llu rows to %llu points", (unsigned long long)before,
                        (unsigned long long)s->view.count);
      VF_TRY(vf_check_cancel(err));
      ls_seg *sg = &s->view.segs[i];
      int64_t winners = 0;
      for (int64_t r = 0; r < sg->nrows; r++)
        winners += sg->slot[r] >= 0;
      if (winners == sg->nrows) continue;
      if (winners == 0) {
        char *p = ls_path_join(s->dir, sg->name);
        if (!p) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
        if (unlink(p) != 0)
          st = vf_error_set(err, VF_EIO, "%s: cannot remove: %s", p, VF_STRERROR(errno));
        free(p);
        VF_TRY(st);
      } else {
        VF_TRY(ls_rewrite_segment(s, sg, err));
      }
    }
    if (s->progress)
      vf_stage_update(&pg, (uint64_t)s->view.nsegs, "%llu rows to %llu points",
                      (unsigned long long)before, (unsigned long long)s->view.count);
    vf_log(VF_LOG_INFO, "collection '%s': compacted %llu rows to %llu points", s->base.collection,
           (unsigned long long)before, (unsigned long long)s->view.count);
  }
out:
  if (compacting) s->view.valid = false;
  close(fd);
  return st;
}
