/*
 * local_filter.c — the local store's search entry points and filtered search: payloads parsed
 * once per view, a mask per filtered query, and the dispatch to the index or the exact scan.
 * Split out of local.c along its "filters" section; the design note is local.c's.
 */
#include <stdlib.h>

#include "local_internal.h"

/* ------------------------------------------------------------- filters */

/* Filtered search (store_search_filtered).  The payload column of every committed segment row
 * is read and parsed once per view (flt_docs: decoded once per segment, kept while the view is
 * current), so a filter costs no parsing per search.  Each query's filter becomes a mask over
 * those rows (flt_docs_select: the keyword and integer values of a must clause's match are
 * indexed on first use, so a selective match visits only its rows), then
 *  - exact scan: rows outside the mask are skipped like superseded rows;
 *  - IVF index: the mask is mapped to index rows and applied inside the list scan, with nprobe
 *    widened until k matching hits are found or every list was scanned (ivf.h).
 * Memory: the payload text of every point plus about 32 bytes per JSON value, and one byte per
 * point per query of a call (queries are processed in chunks of at most 64 MiB of masks). */

#define LS_MASK_BYTES ((size_t)64 << 20)

static vf_status ls_payload_load(local_store *s, vf_error *err) {
  if (s->pdocs_valid && s->pdocs_gen == s->view_gen) return VF_OK;
  const ls_view *v = &s->view;
  s->pdocs_valid = false;
  s->ix_pos_valid = false;
  vf_status st = VF_OK;
  if (!s->pdocs) st = flt_docs_create(&s->pdocs, err);
  if (st != VF_OK) return st;
  flt_docs_clear(s->pdocs);
  int64_t *nb = vf_realloc(s->pbase, ((size_t)v->nsegs + 1) * sizeof *nb);
  if (!nb) return vf_error_set(err, VF_ENOMEM, "search: out of memory");
  s->pbase = nb;
  s->pbase[0] = 0;
  pqt_leaf_data ld;
  pqt_leaf_data_init(&ld);
  int64_t *offs = NULL;
  size_t ocap = 0;
  pqt_file *f = NULL; /* the segment being read */
  for (int si = 0; si < v->nsegs; si++) {
    const ls_seg *sg = &v->segs[si];
    VF_TRY(ls_open_segment_file(s, sg->name, &f, err));
    int leaf = ls_leaf_of(f, "payload");
    const pqt_file_meta *m = pqt_meta(f);
    int64_t row = 0;
    for (int g = 0; g < m->nrow_groups; g++) {
      int64_t nr = m->row_groups[g].num_rows;
      if (nr < 0 || row + nr > sg->nrows)
        VF_FAIL(vf_error_set(err, VF_EIO, "%s: the segment changed while searching; search again",
                             pqt_name(f)));
      if ((size_t)nr + 1 > ocap) {
        int64_t *no = vf_realloc(offs, ((size_t)nr + 1) * sizeof *no);
        if (!no) VF_FAIL(vf_error_set(err, VF_ENOMEM, "search: out of memory"));
        offs = no;
        ocap = (size_t)nr + 1;
      }
      const char *text = "";
      memset(offs, 0, ((size_t)nr + 1) * sizeof *offs);
      if (leaf >= 0) { /* null payload (a point without one): an empty row */
        VF_TRY(pqt_read_leaves(f, g, &leaf, 1, &ld, err));
        if (ld.nlevels != nr)
          VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d: %lld payloads for %lld rows",
                               pqt_name(f), g, (long long)ld.nlevels, (long long)nr));
        int16_t maxd = pqt_schema_of(f)->leaves[leaf].max_def;
        int64_t vi = 0;
        offs[0] = ld.nvalues ? ld.offsets[0] : 0;
        for (int64_t r = 0; r < nr; r++) {
          bool has = !ld.def || ld.def[r] == maxd;
          offs[r + 1] = has ? ld.offsets[++vi] : offs[r];
        }
        text = (const char *)ld.values.data;
      }
      VF_TRY(flt_docs_add(s->pdocs, text, offs, (size_t)nr, pqt_name(f), err));
      row += nr;
    }
    pqt_close(f);
    f = NULL;
    if (row != sg->nrows)
      VF_FAIL(vf_error_set(err, VF_EIO, "%s: the segment changed while searching; search again",
                           sg->name));
    s->pbase[si + 1] = s->pbase[si] + row;
  }
  s->pdocs_gen = s->view_gen;
  s->pdocs_valid = true;
out:
  pqt_close(f);
  pqt_leaf_data_free(&ld);
  free(offs);
  if (st != VF_OK) return st;
  vf_log(VF_LOG_INFO, "collection '%s': payloads of %zu points parsed for filtering (%.1f MiB)",
         s->base.collection, flt_docs_rows(s->pdocs), (double)flt_docs_bytes(s->pdocs) / 1048576.0);
  return VF_OK;
}

/* the id of payload row `pos` (for has_id); false for a superseded row */
static bool ls_row_id(void *user, size_t pos, corpus_id *out) {
  local_store *s = user;
  const ls_view *v = &s->view;
  size_t lo = 0, hi = (size_t)v->nsegs; /* the segment: pbase[seg] <= pos < pbase[seg + 1] */
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if ((size_t)s->pbase[mid] <= pos) lo = mid;
    else hi = mid;
  }
  int64_t slot = v->segs[lo].slot[pos - (size_t)s->pbase[lo]];
  if (slot < 0) return false;
  ls_id_of(&v->tab[slot], out);
  return true;
}

/* the id table entry of id, or -1 */
/* index row -> payload row, for the open index (by id: the index keeps the ids it was built with) */
static vf_status ls_ix_map(local_store *s, vf_error *err) {
  if (s->ix_pos_valid) return VF_OK;
  ivf_info in;
  ivf_info_get(s->ix, &in);
  int64_t *pos = vf_realloc(s->ix_pos, (in.rows ? in.rows : 1) * sizeof *pos);
  if (!pos) return vf_error_set(err, VF_ENOMEM, "search: out of memory for %llu index rows", (unsigned long long)in.rows);
  s->ix_pos = pos;
  for (uint64_t r = 0; r < in.rows; r++) {
    size_t len = 0;
    const char *id = ivf_id(s->ix, (int64_t)r, &len);
    corpus_id cid;
    int64_t e = store_id_parse(id, len, &cid) ? ls_tab_find(&s->view, &cid) : -1;
    pos[r] = e < 0 ? -1 : s->pbase[s->view.tab[e].seg] + s->view.tab[e].row;
  }
  s->ix_pos_rows = in.rows;
  s->ix_pos_valid = true;
  return VF_OK;
}

/* masks[i] for queries [q0, q0 + qn): NULL when unfiltered, else a byte per payload row */
static vf_status ls_masks(local_store *s, const flt_filter *const *filters, size_t q0, size_t qn,
                          uint8_t *buf, uint8_t **masks) {
  size_t n = flt_docs_rows(s->pdocs);
  for (size_t i = 0; i < qn; i++) {
    const flt_filter *f = filters[q0 + i];
    masks[i] = NULL;
    if (!f || flt_is_empty(f)) continue;
    masks[i] = buf + i * n;
    flt_docs_select(s->pdocs, f, NULL, ls_row_id, s, masks[i]);
  }
  return VF_OK;
}

vf_status ls_search(store *base, const char *vector, const float *queries, size_t nq, int32_t dim,
                    size_t k, store_results *out, vf_error *err) {
  return ls_search_impl(base, vector, queries, nq, dim, k, NULL, out, err);
}

/* What a search of vector j reads first: the spec, the view, the index, and (with filters) the
 * payloads and their index rows. */
static vf_status ls_search_prepare(local_store *s, int j, bool filtered, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(ls_verify(s, err));
  VF_TRY(ls_view_build(s, err));
  VF_TRY(ls_index_load(s, j, err));
  if (filtered) VF_TRY(ls_payload_load(s, err));
  if (filtered && s->ix) VF_TRY(ls_ix_map(s, err));
out:
  return st;
}

vf_status ls_search_impl(store *base, const char *vector, const float *queries, size_t nq,
                         int32_t dim, size_t k, const flt_filter *const *filters,
                         store_results *out, vf_error *err) {
  local_store *s = (local_store *)base;
  int j = -1;
  for (int i = 0; i < base->nvectors; i++)
    if (vector ? strcmp(base->vectors[i].name, vector) == 0
               : base->vectors[i].kind == CORPUS_VEC_DENSE) {
      j = i;
      break;
    }
  if (j < 0)
    return vf_error_set(err, VF_EUSAGE, "search: collection '%s' has no %s vector%s%s",
                        base->collection, vector ? "" : "dense", vector ? " named " : "",
                        vector ? vector : "");
  const store_vector_spec *sp = &base->vectors[j];
  if (sp->kind != CORPUS_VEC_DENSE)
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "search: vector '%s' is %s; the local store searches dense vectors only",
                        sp->name, ls_kind_text(sp->kind));
  if (dim != sp->dim)
    return vf_error_set(err, VF_EUSAGE, "search: queries have dimension %d, vector '%s' has %d",
                        (int)dim, sp->name, (int)sp->dim);
  vf_status st = ls_search_prepare(s, j, filters != NULL, err);
  if (st != VF_OK) return st;
  if (!s->ix && s->req_nprobe) /* an nprobe figure must never come from an exact scan */
    return vf_error_set(err, VF_EUSAGE,
                        "search: nprobe %u asked for, but collection '%s' has no usable IVF index "
                        "of '%s' (none was built: fewer points than params.index.min_rows, or "
                        "type none; or it predates the current segments: run load finalize)",
                        s->req_nprobe, base->collection, sp->name);
  bool cached = false;
  if (!s->ix && (st = ls_cache_load(s, j, &cached, err)) != VF_OK) return st;
  ls_view *v = &s->view;
  size_t d = (size_t)dim;
  float *q = NULL;
  idx_topk *heaps = NULL;
  size_t nheaps = 0;
  idx_hit *sorted = NULL;
  /* filters: masks over the payload rows (and index rows), chunk by chunk of queries */
  size_t prow = filters ? flt_docs_rows(s->pdocs) : 0;
  size_t per = prow + (s->ix ? (size_t)s->ix_pos_rows : 0);
  size_t chunk = filters ? (per ? LS_MASK_BYTES / per : nq) : nq;
  if (chunk < 1) chunk = 1;
  if (chunk > nq) chunk = nq ? nq : 1;
  uint8_t *mbuf = NULL, *abuf = NULL, **masks = NULL, **allow = NULL;
  if (!(out->hits = vf_calloc(nq ? nq * k : 1, sizeof *out->hits)) ||
      !(out->counts = vf_calloc(nq ? nq : 1, sizeof *out->counts)) ||
      (filters && (!(mbuf = vf_malloc(chunk * (prow ? prow : 1))) ||
                   !(masks = vf_calloc(chunk, sizeof *masks)) ||
                   !(allow = vf_calloc(chunk, sizeof *allow)) ||
                   (s->ix && !(abuf = vf_malloc(chunk * (s->ix_pos_rows ? s->ix_pos_rows : 1))))))) {
    st = vf_error_set(err, VF_ENOMEM, "search: out of memory (%zu queries, k = %zu)", nq, k);
    goto out;
  }
  out->nq = nq;
  out->k = k;
  if (s->ix) {
    for (size_t q0 = 0; q0 < nq; q0 += chunk) {
      size_t qn = nq - q0 < chunk ? nq - q0 : chunk;
      if (filters) {
        ls_masks(s, filters, q0, qn, mbuf, masks);
        for (size_t i = 0; i < qn; i++) {
          allow[i] = NULL;
          if (!masks[i]) continue;
          allow[i] = abuf + i * s->ix_pos_rows;
          for (uint64_t r = 0; r < s->ix_pos_rows; r++)
            allow[i][r] = s->ix_pos[r] >= 0 && masks[i][s->ix_pos[r]];
        }
      }
      VF_TRY(ls_index_search(s, queries, q0, qn, dim, k,
                             filters ? (const uint8_t *const *)allow : NULL, out, err));
    }
    goto out;
  }
  if (!(q = vf_mallocarray(nq ? nq : 1, d * sizeof *q)) ||
      !(heaps = vf_calloc(nq ? nq : 1, sizeof *heaps)) ||
      !(sorted = vf_mallocarray(k, sizeof *sorted))) {
    st = vf_error_set(err, VF_ENOMEM, "search: out of memory (%zu queries, k = %zu)", nq, k);
    goto out;
  }
  memcpy(q, queries, nq * d * sizeof *q);
  if (sp->distance == CORPUS_COSINE) idx_normalize_rows(q, nq, d);
  for (; nheaps < nq; nheaps++)
    VF_TRY(idx_topk_init(&heaps[nheaps], k, ls_entry_cmp, v->tab, err));
  for (size_t q0 = 0; q0 < nq; q0 += chunk) {
    size_t qn = nq - q0 < chunk ? nq - q0 : chunk;
    if (filters) ls_masks(s, filters, q0, qn, mbuf, masks);
    const uint8_t *const *qm = filters ? (const uint8_t *const *)masks : NULL;
    VF_TRY(cached ? ls_scan_cached(s, sp, q + q0 * d, qn, heaps + q0, qm, err)
                  : ls_scan_stream(s, sp, q + q0 * d, qn, heaps + q0, qm, err));
  }
  for (size_t qi = 0; qi < nq; qi++) {
    size_t m = idx_topk_sorted(&heaps[qi], sorted);
    out->counts[qi] = m;
    for (size_t i = 0; i < m; i++) {
      store_hit *h = &out->hits[qi * k + i];
      h->score = sorted[i].score;
      ls_id_of(&v->tab[sorted[i].key], &h->id);
    }
  }
out:
  for (size_t i = 0; i < nheaps; i++)
    idx_topk_free(&heaps[i]);
  free(heaps);
  free(q);
  free(sorted);
  free(mbuf);
  free(abuf);
  free(masks);
  free(allow);
  if (st != VF_OK) store_results_free(out);
  return st;
}
