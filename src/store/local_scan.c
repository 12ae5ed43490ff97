/*
 * local_scan.c — the local store's exact search: the per-handle cache of the searched dense
 * vector and the two scans over it (cached in memory, or streamed from the segments when the
 * vectors exceed the memory budget), bit-identical to each other.  Split out of local.c along its
 * "search" section; the design note ("Search (exact scan)") is local.c's.
 */
#include <stdlib.h>

#include "local_internal.h"

/* ------------------------------------------------------------------ search */

void ls_cache_free(ls_cache *c) {
  free(c->data);
  free(c->skip);
  free(c->groups);
  memset(c, 0, sizeof *c);
}

/* Rows per kernel call when the vectors are cached: about 256 KiB of floats, so a block stays
 * in cache while every query of the call is scored against it.  A multiple of 4: the AVX2
 * batch kernels score rows in fours from the start of each call, so splitting a row group at
 * multiples of 4 leaves every row's arithmetic exactly as one call over the whole group. */
static size_t ls_block_rows(size_t d) {
  size_t b = ((size_t)256 << 10) / (4 * (d ? d : 1));
  b &= ~(size_t)3;
  return b < 4 ? 4 : b;
}

/* The checks shared by both scans: the segment still has the rows the view counted. */
vf_status ls_open_for_search(local_store *s, const ls_seg *sg, const char *vec, pqt_file **f,
                             int *top, int *leaf, vf_error *err) {
  vf_status st = ls_open_segment_file(s, sg->name, f, err);
  if (st != VF_OK) return st;
  *top = pqt_find_top(*f, vec);
  *leaf = ls_leaf_of(*f, vec);
  if (*top < 0 || *leaf < 0)
    return vf_error_set(err, VF_ECORRUPT, "%s: segment without the vector column '%s'",
                        pqt_name(*f), vec);
  if (pqt_meta(*f)->num_rows != sg->nrows) {
    s->view.valid = false;
    return vf_error_set(err, VF_EIO,
                        "%s: the segment changed while searching (compacted by another "
                        "process?); search again",
                        pqt_name(*f));
  }
  return VF_OK;
}

/* The dense vectors of one vector column, segment by segment and row group by row group, as
 * both scans read them: next() leaves in it->dn the rows [it->row, it->row + it->dn.rows) of
 * segment it->si, checked against the segment's id count. */
typedef struct ls_vec_iter {
  local_store *s;
  const store_vector_spec *sp;
  int si, g;      /* the segment, and the next row group of it to read */
  int64_t row;    /* first row of the group in it->dn; its end, after it */
  int top, leaf;
  pqt_file *f;    /* the segment being read */
  pqt_leaf_data ld;
  pqt_dense dn;
} ls_vec_iter;

static void ls_vec_iter_init(ls_vec_iter *it, local_store *s, const store_vector_spec *sp) {
  memset(it, 0, sizeof *it);
  it->s = s;
  it->sp = sp;
  pqt_leaf_data_init(&it->ld);
}

static void ls_vec_iter_free(ls_vec_iter *it) {
  pqt_close(it->f);
  it->f = NULL;
  pqt_leaf_data_free(&it->ld);
  pqt_dense_free(&it->dn);
}

/* the next row group; *more is false once every segment is read */
static vf_status ls_vec_next(ls_vec_iter *it, bool *more, vf_error *err) {
  const ls_view *v = &it->s->view;
  vf_status st = VF_OK;
  *more = false;
  if (it->f) it->row += it->dn.rows;
  while (!it->f || it->g >= pqt_meta(it->f)->nrow_groups) { /* the next segment with a group */
    if (it->f) {
      pqt_close(it->f);
      it->f = NULL;
      it->si++;
    }
    if (it->si >= v->nsegs) return VF_OK;
    VF_TRY(ls_open_for_search(it->s, &v->segs[it->si], it->sp->name, &it->f, &it->top,
                              &it->leaf, err));
    it->g = 0;
    it->row = 0;
  }
  int32_t gd = it->sp->dim;
  VF_TRY(pqt_read_leaves(it->f, it->g, &it->leaf, 1, &it->ld, err));
  VF_TRY(pqt_dense_from_leaf(it->f, it->top, &it->ld, it->row, &gd, &it->dn, err));
  if (it->row + it->dn.rows > v->segs[it->si].nrows)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: more vector rows than ids", pqt_name(it->f)));
  it->g++;
  *more = true;
out:
  return st;
}

/* Load vector j of every segment of the current view into the cache.  *use is false (and the
 * cache empty) when it would exceed the memory budget or cannot be allocated: the caller then
 * streams the segments instead. */
vf_status ls_cache_load(local_store *s, int j, bool *use, vf_error *err) {
  ls_cache *c = &s->cache;
  *use = true;
  const store_vector_spec *sp = &s->base.vectors[j];
  const ls_view *v = &s->view;
  size_t d = (size_t)sp->dim;
  uint64_t rows = v->total_rows;
  double need = (double)rows * ((double)d * sizeof(float) + 1.0);
  uint64_t budget = vf_memory_budget(); /* checked every search: it may be lowered */
  bool over = budget && need > (double)budget;
  if (!over && c->valid && c->vec == j && c->gen == s->view_gen) return VF_OK;
  ls_cache_free(c);
  if (over ||
      !(c->data = vf_mallocarray(rows ? (size_t)rows : 1, d * sizeof *c->data)) ||
      !(c->skip = vf_malloc(rows ? (size_t)rows : 1))) {
    ls_cache_free(c);
    *use = false;
    if (!s->stream_logged)
      vf_log(VF_LOG_WARN,
             "collection '%s': the vectors of '%s' (%llu rows x %d floats, %.1f MiB) %s: "
             "every search reads the segments again",
             s->base.collection, sp->name, (unsigned long long)rows, (int)sp->dim,
             need / 1048576.0,
             over ? "exceed the memory budget" : "do not fit in memory");
    s->stream_logged = true;
    return VF_OK;
  }
  vf_status st = VF_OK;
  ls_vec_iter it;
  ls_vec_iter_init(&it, s, sp);
  size_t pos = 0;
  for (bool more = true;;) {
    VF_TRY(ls_vec_next(&it, &more, err));
    if (!more) break;
    const pqt_dense *dn = &it.dn;
    size_t n = (size_t)dn->rows;
    if (c->ngroups == c->gcap) {
      size_t ncap = c->gcap ? c->gcap * 2 : 64;
      ls_group *t = vf_realloc(c->groups, ncap * sizeof *t);
      if (!t) VF_FAIL(vf_error_set(err, VF_ENOMEM, "search: out of memory"));
      c->groups = t;
      c->gcap = ncap;
    }
    c->groups[c->ngroups++] = (ls_group){pos, n, it.si, it.row};
    float *dst = c->data + pos * d;
    if (n) memcpy(dst, dn->data, n * d * sizeof *dst);
    if (sp->distance == CORPUS_COSINE) idx_normalize_rows(dst, n, d);
    const int64_t *slots = v->segs[it.si].slot + it.row;
    for (size_t r = 0; r < n; r++)
      c->skip[pos + r] = slots[r] < 0 || (dn->null_rows && dn->null_rows[r]);
    pos += n;
  }
  c->rows = pos;
  c->vec = j;
  c->gen = s->view_gen;
  c->valid = true;
out:
  ls_vec_iter_free(&it);
  if (st != VF_OK) ls_cache_free(c);
  return st;
}

/* Score every cached row group, block by block; each block is scored for all nq queries
 * while it is in the CPU cache. */
/* skip rows [0, n) for query qi: `skip` (superseded, null) or not matching its filter mask
 * (qm[qi] over payload rows, the block's first row being payload row p0) */
static const uint8_t *ls_qskip(const uint8_t *const *qm, size_t qi, const uint8_t *skip, size_t n,
                               int64_t p0, uint8_t *buf) {
  if (!qm || !qm[qi]) return skip;
  const uint8_t *m = qm[qi] + p0;
  for (size_t r = 0; r < n; r++) buf[r] = skip[r] || !m[r];
  return buf;
}

vf_status ls_scan_cached(local_store *s, const store_vector_spec *sp, const float *q, size_t nq,
                         idx_topk *heaps, const uint8_t *const *qm, vf_error *err) {
  const ls_cache *c = &s->cache;
  size_t d = (size_t)sp->dim, blk = ls_block_rows(d);
  float *scores = vf_mallocarray(blk, sizeof *scores);
  uint8_t *qs = qm ? vf_malloc(blk) : NULL;
  if (!scores || (qm && !qs)) {
    free(scores);
    return vf_error_set(err, VF_ENOMEM, "search: out of memory");
  }
  for (size_t g = 0; g < c->ngroups; g++) {
    const ls_group *gr = &c->groups[g];
    const int64_t *slots = s->view.segs[gr->seg].slot + gr->row;
    for (size_t b0 = 0; b0 < gr->n; b0 += blk) {
      size_t n = gr->n - b0 < blk ? gr->n - b0 : blk;
      const float *rows = c->data + (gr->pos + b0) * d;
      const uint8_t *skip = c->skip + gr->pos + b0;
      int64_t p0 = qm ? s->pbase[gr->seg] + gr->row + (int64_t)b0 : 0;
      for (size_t qi = 0; qi < nq; qi++) {
        idx_scores(sp->distance, q + qi * d, rows, n, d, scores);
        idx_topk_push_batch(&heaps[qi], scores, n, slots + b0, 0, ls_qskip(qm, qi, skip, n, p0, qs));
      }
    }
  }
  free(scores);
  free(qs);
  return VF_OK;
}

/* Read and score every segment row group (the memory-budget fallback). */
vf_status ls_scan_stream(local_store *s, const store_vector_spec *sp, const float *q, size_t nq,
                         idx_topk *heaps, const uint8_t *const *qm, vf_error *err) {
  uint8_t *qs = NULL;
  size_t d = (size_t)sp->dim;
  float *scores = NULL;
  uint8_t *skip = NULL;
  vf_status st = VF_OK;
  ls_vec_iter it;
  ls_vec_iter_init(&it, s, sp);
  for (bool more = true;;) {
    VF_TRY(ls_vec_next(&it, &more, err));
    if (!more) break;
    pqt_dense *dn = &it.dn;
    size_t rows = (size_t)dn->rows;
    float *sc = vf_realloc(scores, (rows ? rows : 1) * sizeof *sc);
    uint8_t *sk = vf_realloc(skip, rows ? rows : 1);
    uint8_t *qq = qm ? vf_realloc(qs, rows ? rows : 1) : NULL;
    if (sc) scores = sc;
    if (sk) skip = sk;
    if (qq) qs = qq;
    if (!sc || !sk || (qm && !qq)) VF_FAIL(vf_error_set(err, VF_ENOMEM, "search: out of memory"));
    const int64_t *slots = s->view.segs[it.si].slot + it.row;
    for (size_t r = 0; r < rows; r++)
      skip[r] = slots[r] < 0 || (dn->null_rows && dn->null_rows[r]);
    if (sp->distance == CORPUS_COSINE) idx_normalize_rows(dn->data, rows, d);
    int64_t p0 = qm ? s->pbase[it.si] + it.row : 0;
    for (size_t qi = 0; qi < nq; qi++) {
      idx_scores(sp->distance, q + qi * d, dn->data, rows, d, scores);
      idx_topk_push_batch(&heaps[qi], scores, rows, slots, 0, ls_qskip(qm, qi, skip, rows, p0, qs));
    }
  }
out:
  ls_vec_iter_free(&it);
  free(scores);
  free(skip);
  free(qs);
  return st;
}
