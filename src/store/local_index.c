/*
 * local_index.c — the local store's IVF index: params.index, building one index (and its
 * manifest) per dense vector at finalize, loading it while it covers the current segments, and
 * searching through it.  Split out of local.c along its "IVF index" section; the design note
 * ("Search with an index") is local.c's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "local_internal.h"

/* ------------------------------------------------------------- IVF index */

/* The local store's IVF index (one per dense vector, built at finalize after compaction):
 *   index-<j>-<name>.ivf    the index file (ivf.h; written atomically by the builder)
 *   index-<j>-<name>.json   its manifest: the segments (name, size) it covers and the nprobe
 *                           searches use; written after the index, so an index without a
 *                           manifest is never used.
 * A search uses the index only while the collection holds exactly the manifest's segments;
 * after any later flush or compaction it falls back to the exact scan until the next finalize. */

#define LS_INDEX_MIN_ROWS 10000 /* default: smaller collections are searched exactly */

vf_status ls_index_params_parse(local_store *s, const char *params_json, vf_error *err) {
  ls_index_params *ip = &s->ixp;
  memset(ip, 0, sizeof *ip);
  ip->type = IVF_SQ8;
  ip->min_rows = LS_INDEX_MIN_ROWS;
  if (!params_json || !*params_json) return VF_OK;
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  vf_status st = vf_json_parse(params_json, strlen(params_json), "vectorstore.params", &doc, err);
  if (st == VF_ECORRUPT) err->code = st = VF_ECONFIG;
  VF_TRY(st);
  const vf_json_val *ix = vf_json_get(&doc, "index");
  if (ix && ix->t != VF_JSON_OBJ)
    VF_FAIL(vf_error_set(err, VF_ECONFIG, "vectorstore.params.index must be a mapping"));
  static const char *const keys[] = {"type", "nlist", "nprobe", "pq_m", "rabitq_bits",
                                     "rerank", "min_rows", "seed", "pq_nbits", "iterations",
                                     "train_per_centroid", NULL};
  for (size_t i = 0; ix && i < ix->n; i++) {
    const char *k = ix->keys[i];
    const vf_json_val *v = &ix->items[i];
    int w = -1;
    for (int q = 0; keys[q]; q++)
      if (strcmp(k, keys[q]) == 0) w = q;
    if (w < 0) {
      VF_FAIL(vf_error_set(err, VF_ECONFIG, "vectorstore.params.index: unknown key '%s' (type, "
                           "nlist, nprobe, pq_m, pq_nbits, rabitq_bits, rerank, min_rows, seed, "
                           "iterations, train_per_centroid)", k));
    } else if (w == 0) {
      if (v->t != VF_JSON_STR || (strcmp(v->str, "none") != 0 && !ivf_code_parse(v->str, &ip->type)))
        VF_FAIL(vf_error_set(err, VF_ECONFIG, "vectorstore.params.index.type: expected flat, sq8, "
                             "pq, rabitq or none"));
      else
        ip->none = strcmp(v->str, "none") == 0;
    } else {
      if (v->t != VF_JSON_NUM || v->num < 0 || v->num != (double)(uint64_t)v->num ||
          (w != 6 && w != 7 && v->num > 4294967295.0))
        VF_FAIL(vf_error_set(err, VF_ECONFIG, "vectorstore.params.index.%s: expected a "
                             "non-negative integer", k));
      else if (w == 1) ip->nlist = (uint32_t)v->num;
      else if (w == 2) ip->nprobe = (uint32_t)v->num;
      else if (w == 3) ip->pq_m = (uint32_t)v->num;
      else if (w == 4) ip->rabitq_bits = (uint32_t)v->num;
      else if (w == 5) ip->rerank = (uint32_t)v->num;
      else if (w == 6) ip->min_rows = (uint64_t)v->num;
      else if (w == 7) ip->seed = (uint64_t)v->num;
      else if (w == 9 && v->num > 1000000)
        VF_FAIL(vf_error_set(err, VF_ECONFIG,
                             "vectorstore.params.index.iterations: at most 1000000"));
      else if (w == 9) ip->iterations = (uint32_t)v->num;
      else if (w == 10) ip->train_per_centroid = (uint32_t)v->num;
      else if (v->num != 4 && v->num != 8)
        VF_FAIL(vf_error_set(err, VF_ECONFIG,
                             "vectorstore.params.index.pq_nbits: expected 4 or 8"));
      else ip->pq_nbits = (uint32_t)v->num;
    }
  }
  if (ip->pq_nbits && ip->type != IVF_PQ && !ip->none)
    VF_FAIL(vf_error_set(err, VF_ECONFIG, "vectorstore.params.index.pq_nbits needs type: pq"));
out:
  vf_json_free(&doc);
  return st;
}

/* index-<j>-<name with [A-Za-z0-9_.-] kept, others '_'>.<ext> */
static char *ls_index_path(const local_store *s, int j, const char *ext) {
  const char *n = s->base.vectors[j].name;
  size_t l = strlen(n);
  char *name = vf_malloc(l + 40);
  if (!name) return NULL;
  int o = snprintf(name, 32, "index-%d-", j);
  for (size_t i = 0; i < l; i++) {
    char c = n[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    name[o++] = ok ? c : '_';
  }
  snprintf(name + o, 8, ".%s", ext);
  char *p = ls_path_join(s->dir, name);
  free(name);
  return p;
}

static vf_status ls_unlink_quiet(const char *p, vf_error *err) {
  if (p && unlink(p) != 0 && errno != ENOENT)
    return vf_error_set(err, VF_EIO, "%s: cannot remove: %s", p, VF_STRERROR(errno));
  return VF_OK;
}

/* Stream the winning rows of vector j of every segment of the view into the builder. */
static vf_status ls_index_feed(local_store *s, int j, ivf_builder *b, uint64_t *added,
                               vf_error *err) {
  const store_vector_spec *sp = &s->base.vectors[j];
  const ls_view *v = &s->view;
  size_t d = (size_t)sp->dim;
  pqt_leaf_data ld[2];
  pqt_leaf_data_init(&ld[0]);
  pqt_leaf_data_init(&ld[1]);
  pqt_dense dn;
  memset(&dn, 0, sizeof dn);
  float *keep = NULL;
  const char **ids = NULL;
  size_t *lens = NULL, cap = 0;
  vf_status st = VF_OK;
  pqt_file *f = NULL; /* the segment being read */
  char stage[96];
  snprintf(stage, sizeof stage, "index of '%.60s': read vectors", sp->name);
  vf_stage pg;
  vf_stage_begin(&pg, s->progress ? s->progress : "index build", stage, NULL, v->count);
  for (int si = 0; si < v->nsegs; si++) {
    const ls_seg *sg = &v->segs[si];
    int top = -1, leaves[2] = {-1, -1};
    VF_TRY(ls_open_for_search(s, sg, sp->name, &f, &top, &leaves[1], err));
    if ((leaves[0] = ls_leaf_of(f, "id")) < 0)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: segment without an 'id' string column",
                           pqt_name(f)));
    const pqt_file_meta *m = pqt_meta(f);
    int64_t row = 0;
    for (int g = 0; g < m->nrow_groups; g++) {
      int32_t gd = sp->dim;
      VF_TRY(pqt_read_leaves(f, g, leaves, 2, ld, err));
      VF_TRY(pqt_dense_from_leaf(f, top, &ld[1], row, &gd, &dn, err));
      size_t n = (size_t)dn.rows;
      if (row + dn.rows > sg->nrows || ld[0].type != PQT_BYTE_ARRAY || ld[0].nvalues != dn.rows)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d: the id and '%s' columns disagree",
                             pqt_name(f), g, sp->name));
      if (n > cap) {
        free(keep);
        free(ids);
        free(lens);
        keep = vf_mallocarray(n, d * sizeof *keep);
        ids = vf_mallocarray(n, sizeof *ids);
        lens = vf_mallocarray(n, sizeof *lens);
        cap = keep && ids && lens ? n : 0;
        if (!cap) VF_FAIL(vf_error_set(err, VF_ENOMEM, "index build: out of memory for %zu rows", n));
      }
      size_t m2 = 0;
      bool all = true; /* every row of the group is kept: add the decoded rows without a copy */
      for (size_t r = 0; r < n && all; r++)
        all = sg->slot[row + (int64_t)r] >= 0 && !(dn.null_rows && dn.null_rows[r]);
      for (size_t r = 0; r < n; r++) {
        if (sg->slot[row + (int64_t)r] < 0 || (dn.null_rows && dn.null_rows[r])) continue;
        if (!all) memcpy(keep + m2 * d, dn.data + r * d, d * sizeof *keep);
        ids[m2] = (const char *)ld[0].values.data + ld[0].offsets[r];
        lens[m2] = (size_t)(ld[0].offsets[r + 1] - ld[0].offsets[r]);
        m2++;
      }
      if (m2) st = ivf_builder_add(b, all ? dn.data : keep, m2, ids, lens, err);
      if (st != VF_OK && st != VF_ECANCELED)
        vf_error_prefix(err, "%s: row group %d: ", pqt_name(f), g);
      *added += m2;
      row += dn.rows;
      vf_stage_update(&pg, *added, NULL);
      VF_TRY(st);
    }
    pqt_close(f);
    f = NULL;
  }
out:
  pqt_close(f);
  free(keep);
  free(ids);
  free(lens);
  pqt_leaf_data_free(&ld[0]);
  pqt_leaf_data_free(&ld[1]);
  pqt_dense_free(&dn);
  return st;
}

/* The store's index defaults (issue 17, docs/DESIGN.md "Extensions"): nlist = sqrt(N) rather
 * than the 4*sqrt(N) of `index build`, and k-means on 64 rows per list for at most 10 iterations
 * (FAISS's default), stopping sooner once <= 1 % of them change list — finalize's k-means costs
 * about 2 * nlist^2 * 64 * dim flops per iteration, the assignment 2 * N * nlist * dim, so both
 * grow as N * sqrt(N) at most, and the default nprobe max(16, nlist/16) scans a larger share of
 * the lists (>= 16/sqrt(N)) for the recall an embedded store is expected to give (held-out
 * Fashion-MNIST, nlist 245, nprobe 16: recall@10 0.9939 with these, 0.9943 with 128 / 20). */
#define LS_TRAIN_PER_CENTROID 64
#define LS_KMEANS_ITERS 10
static uint32_t ls_default_nlist(uint64_t n) {
  double v = floor(sqrt((double)n) + 0.5);
  return v < 1 ? 1 : v > (double)(1u << 20) ? 1u << 20 : (uint32_t)v;
}

/* Build the index of dense vector j over the current view (n points) into path, then its
 * manifest into mpath. */
static vf_status ls_build_index(local_store *s, int j, uint64_t n, const char *path,
                                const char *mpath, vf_error *err) {
  const ls_index_params *ip = &s->ixp;
  const store_vector_spec *sp = &s->base.vectors[j];
  vf_status st = VF_OK;
  ivf_builder *b = NULL;
  vf_buf mj;
  VF_BUF_INIT(&mj, VF_BUF_MAX_JSON_DOC); /* the index manifest */
  ivf_params p;
  memset(&p, 0, sizeof p);
  p.type = ip->type;
  p.metric = sp->distance;
  p.dim = sp->dim;
  p.nlist = ip->nlist ? ip->nlist : ls_default_nlist(n);
  p.pq_m = ip->pq_m;
  p.pq_nbits = ip->pq_nbits;
  p.rabitq_bits = ip->rabitq_bits;
  p.rerank = ip->rerank;
  p.seed = ip->seed;
  p.kmeans_iters = ip->iterations ? (int)ip->iterations : LS_KMEANS_ITERS;
  p.train_per_centroid = ip->train_per_centroid ? ip->train_per_centroid : LS_TRAIN_PER_CENTROID;
  if (p.type != IVF_PQ) { /* only PQ codebooks train on more than k-means' rows */
    uint64_t want = (uint64_t)p.nlist * p.train_per_centroid, budget = vf_memory_budget();
    if (!budget || want <= budget / 4 / ((uint64_t)sp->dim * 4)) p.max_train = want;
  }
  p.progress = s->progress;
  p.spill_plain = true; /* the segments are uncompressed: so is the spill (a copy of them) */
  /* the segments' order (and which rows share one) follows the loader's workers: the
   * sample is chosen by point id so the same points give the same index */
  p.sample_by_id = true;
  uint64_t added = 0;
  double t0 = vf_now();
  ivf_build_report rep;
  memset(&rep, 0, sizeof rep);
  VF_TRY(ivf_builder_open(&p, path, n, &b, err));
  VF_TRY(ls_index_feed(s, j, b, &added, err));
  st = ivf_builder_finish(b, &rep, err);
  b = NULL;
  VF_TRY(st);
  uint32_t nprobe = ip->nprobe ? ip->nprobe : ivf_default_nprobe(rep.nlist);
  if (nprobe > rep.nlist) nprobe = rep.nlist;
  VF_TRY(vf_buf_printf(&mj, err, "{\"vector\":%d,\"type\":\"%s\",\"nlist\":%u,\"nprobe\":%u,"
                       "\"rows\":%llu,\"segments\":[", j, ivf_code_name(rep.type), rep.nlist,
                       nprobe, (unsigned long long)rep.rows));
  for (int i = 0; i < s->view.nsegs; i++) {
    VF_TRY(vf_buf_printf(&mj, err, "%s{\"name\":", i ? "," : ""));
    VF_TRY(vf_json_string(&mj, s->view.segs[i].name, strlen(s->view.segs[i].name), err));
    VF_TRY(vf_buf_printf(&mj, err, ",\"size\":%llu}", (unsigned long long)s->view.segs[i].size));
  }
  VF_TRY(vf_json_raw(&mj, "]}\n", err));
  VF_TRY(vf_atomic_write_file(mpath, mj.data, mj.len, err));
  vf_log(VF_LOG_INFO, "collection '%s': built the %s IVF index of '%s' (%llu points, nlist %u, "
         "searches scan %u lists) in %.1f s (read %.1f s, k-means %.1f s: %d iterations on "
         "%llu rows, assign + encode %.1f s, write %.1f s)", s->base.collection,
         ivf_code_name(rep.type), sp->name, (unsigned long long)added, rep.nlist, nprobe,
         vf_now() - t0, rep.seconds_read, rep.seconds_train, rep.kmeans_iterations,
         (unsigned long long)rep.kmeans_rows, rep.seconds_assign, rep.seconds_write);
out:
  ivf_builder_abort(b);
  vf_buf_free(&mj);
  if (st != VF_OK && st != VF_ECANCELED)
    vf_error_prefix(err, "collection '%s': index of '%s': ", s->base.collection, sp->name);
  return st;
}

/* Build (or drop) the index of every dense vector over the current view. */
vf_status ls_build_indexes(local_store *s, vf_error *err) {
  const ls_index_params *ip = &s->ixp;
  vf_status st = VF_OK;
  char *path = NULL, *mpath = NULL;
  VF_TRY(ls_view_build(s, err));
  uint64_t n = s->view.count;
  for (int j = 0; j < s->base.nvectors; j++) {
    const store_vector_spec *sp = &s->base.vectors[j];
    if (sp->kind != CORPUS_VEC_DENSE) continue;
    path = ls_index_path(s, j, "ivf");
    mpath = ls_index_path(s, j, "json");
    if (!path || !mpath) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    /* the old manifest goes first: no search may pair it with a half-replaced index */
    VF_TRY(ls_unlink_quiet(mpath, err));
    VF_TRY(ls_unlink_quiet(path, err));
    const char *why = ip->none                         ? "params.index.type is none"
                      : n < ip->min_rows               ? "fewer points than params.index.min_rows"
                      : sp->distance == CORPUS_MANHATTAN ? "IVF indexes do not support manhattan"
                                                         : NULL;
    if (why)
      vf_log(VF_LOG_INFO, "collection '%s': no index for '%s' (%s; %llu points): searches scan "
             "exactly", s->base.collection, sp->name, why, (unsigned long long)n);
    else
      VF_TRY(ls_build_index(s, j, n, path, mpath, err));
    free(path);
    free(mpath);
    path = mpath = NULL;
  }
out:
  free(path);
  free(mpath);
  s->ix_valid = false; /* searches look at the manifests again */
  return st;
}

/* Open the index of vector j when its manifest matches the view (else *ix stays NULL). */
vf_status ls_index_load(local_store *s, int j, vf_error *err) {
  if (s->ix_valid && s->ix_vec == j && s->ix_gen == s->view_gen) return VF_OK;
  ivf_close(s->ix);
  s->ix = NULL;
  s->ix_valid = true;
  s->ix_pos_valid = false;
  s->ix_vec = j;
  s->ix_gen = s->view_gen;
  char *mpath = ls_index_path(s, j, "json"), *path = ls_index_path(s, j, "ivf");
  char *text = NULL;
  size_t len = 0;
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  vf_status st = !mpath || !path ? vf_error_set(err, VF_ENOMEM, "out of memory")
                                 : ls_read_small_file(mpath, &text, &len, err);
  if (st == VF_ENOTFOUND) {
    st = VF_OK; /* no index: exact scan */
    goto out;
  }
  VF_TRY(st);
  VF_TRY(vf_json_parse(text, len, mpath, &doc, err));
  const vf_json_val *segs = vf_json_get(&doc, "segments");
  const vf_json_val *np = vf_json_get(&doc, "nprobe");
  bool same = segs && segs->t == VF_JSON_ARR && np && np->t == VF_JSON_NUM && np->num >= 1 &&
              segs->n == (size_t)s->view.nsegs;
  for (int i = 0; same && i < s->view.nsegs; i++) {
    const vf_json_val *nm = vf_json_get(&segs->items[i], "name"), *sz = vf_json_get(&segs->items[i], "size");
    same = nm && nm->t == VF_JSON_STR && strcmp(nm->str, s->view.segs[i].name) == 0 && sz &&
           sz->t == VF_JSON_NUM && sz->num == (double)s->view.segs[i].size;
  }
  if (!same) {
    vf_log(VF_LOG_INFO, "collection '%s': the index of '%s' predates the current segments: "
           "searching exactly until the next finalize", s->base.collection, s->base.vectors[j].name);
  } else {
    s->ix_nprobe = s->ixp.nprobe ? s->ixp.nprobe : (uint32_t)np->num;
    VF_TRY(ivf_open(path, &s->ix, err));
    ivf_info in;
    ivf_info_get(s->ix, &in);
    if (in.dim != s->base.vectors[j].dim || in.metric != s->base.vectors[j].distance) {
      st = vf_error_set(err, VF_ECORRUPT, "%s: dimension %d / metric %s differ from vector '%s'",
                        path, (int)in.dim, idx_metric_name(in.metric), s->base.vectors[j].name);
      ivf_close(s->ix);
      s->ix = NULL;
      goto out;
    }
    if (!s->ix_logged) {
      vf_log(VF_LOG_INFO, "collection '%s': searching '%s' with its %s IVF index (%llu points, "
             "nlist %u, nprobe %u%s)", s->base.collection, s->base.vectors[j].name,
             ivf_code_name(in.type), (unsigned long long)in.rows, in.nlist,
             s->req_nprobe ? s->req_nprobe : s->ix_nprobe, s->req_nprobe ? " as asked for" : "");
      s->ix_logged = true;
    }
  }
out:
  vf_json_free(&doc);
  if (st != VF_OK) s->ix_valid = false;
  free(text);
  free(mpath);
  free(path);
  return st;
}

/* Search vector j through the open index: queries [q0, q0 + nq) of `out` (allocated by the
 * caller), allow[q] the filter's index rows of query q0 + q (allow NULL: none). */
vf_status ls_index_search(local_store *s, const float *queries, size_t q0, size_t nq, int32_t dim,
                          size_t k, const uint8_t *const *allow, store_results *out,
                          vf_error *err) {
  idx_hit *hits = vf_mallocarray(nq ? nq * k : 1, sizeof *hits);
  size_t *counts = vf_calloc(nq ? nq : 1, sizeof *counts);
  vf_status st = VF_OK;
  if (!hits || !counts)
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "search: out of memory (%zu queries, k = %zu)", nq, k));
  ivf_search_opts so = {.nprobe = s->req_nprobe ? s->req_nprobe : s->ix_nprobe, .threads = 0,
                        .rerank = 0, .allow = allow};
  VF_TRY(ivf_search(s->ix, queries + q0 * (size_t)dim, nq, dim, k, &so, hits, counts, err));
  for (size_t q = 0; q < nq; q++) {
    out->counts[q0 + q] = counts[q];
    for (size_t i = 0; i < counts[q]; i++) {
      size_t len = 0;
      const char *id = ivf_id(s->ix, hits[q * k + i].key, &len);
      store_hit *h = &out->hits[(q0 + q) * k + i];
      h->score = hits[q * k + i].score;
      if (!store_id_parse(id, len, &h->id))
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "collection '%s': index row %lld has the id "
                             "'%.*s', neither an integer nor a UUID", s->base.collection,
                             (long long)hits[q * k + i].key, (int)(len > 64 ? 64 : len), id));
    }
  }
out:
  free(hits);
  free(counts);
  return st;
}
