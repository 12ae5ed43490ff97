/*
 * local.c — the embedded `local` store: a directory of parquet segments per collection, no
 * server (issue 3 "Stores"; DESIGN.md module `store`).
 *
 * Layout of <path>/<collection>/:
 *   collection.json                        the vectors spec (written atomically), one vector per
 *                                          line so a mismatch can be reported line by line; after
 *                                          `load prepare` also "corpus" (the corpus record of
 *                                          store.h) and "load" ("in progress" | "finalized"),
 *                                          which the spec comparison ignores
 *   seg-<seq:20 digits>-<writer>.parquet   segments, written by pqt_writer (temp + rename: a
 *                                          segment is visible only once committed)
 *   .seq                                   the sequence counter (flock'ed while incremented)
 *   .lock                                  writers hold LOCK_SH while a segment is open;
 *                                          compaction takes LOCK_EX (non-blocking)
 *   index-<j>-<vector>.ivf / .json         the IVF index of dense vector j and its manifest
 *                                          (built at finalize; see "IVF index" in local_index.c)
 * Segment columns (readable by DuckDB, arrow, any parquet tool):
 *   id STRING        the canonical id text (decimal integer, or lowercase UUID 8-4-4-4-12)
 *   id_num INT64     the integer id when it fits in int64, else null (for SQL convenience;
 *                    `id` is authoritative)
 *   <vector> ...     dense: LIST<float> with a FixedSizeList ARROW:schema (PQT_W_VECTOR);
 *                    multivector: LIST<float> of count*dim floats; sparse: STRING holding
 *                    {"indices":[...],"values":[...]} (the writer has no integer lists)
 *   payload STRING   the point's payload JSON object (null when empty)
 *
 * Several writers at once: every handle writes its own segments, named with a global sequence
 * number (allocated under flock from .seq) and a writer id (hostname-pid-random), so processes
 * never collide.  Upsert semantics by id are resolved at read time: segments in sequence order,
 * rows in file order, the last occurrence of an id wins.  Reads build an id table (id -> the
 * winning segment row) — all ids of a collection must fit in memory (about 100 bytes per point:
 * a 32-byte hash entry at load <= 1/2 plus an 8-byte slot per stored row);
 * that is the stated limit of this store.  Finalize (enable_indexing)
 * compacts: every segment holding superseded rows is rewritten in place without them (each
 * rewrite is atomic; a crash half-way leaves a consistent store, since only losers are dropped),
 * after which each id is stored in exactly one segment row.  Compaction and the index build
 * report progress (stages "compact", "read ids", "read vectors", then the builder's) and poll
 * vf_cancelled(); an interrupted finalize leaves a consistent store (every rewrite is atomic)
 * that the next finalize completes.  Temporaries of killed writers on this host are swept when a
 * handle first touches the collection (ensure_collection; util.h "Temporary names").
 *
 * Memory while writing: pqt_writer buffers one row group (row_group_rows is derived from
 * `row_group_bytes`, 32 MiB by default) and flushes it; a segment rolls over after
 * `segment_rows`.
 *
 * Search (exact scan).  Each handle loads the searched dense vector of every committed segment
 * row into memory at its first search (rows x dim floats + a skip byte per row; the ids stay in
 * the id table) and keeps it while the view is current: every search lists the directory and
 * stats the segments (ls_view_current), and a changed set of segments — a flush by any handle or
 * process, a compaction — rebuilds the view and reloads the vectors.  The cached rows keep the
 * segments' order, row groups and the superseded / null rows (skipped, as newest-wins needs), and
 * each row group is scored in blocks of a multiple of 4 rows (the AVX2 kernels score rows in
 * fours), so scores and tie order are bit-identical to reading the segments.  Blocks of ~256 KiB
 * are scored for every query of the call while they are in the CPU cache.  When the vectors
 * would exceed vf_memory_budget() (or cannot be allocated) the handle logs it once and streams
 * the segments instead, one row group of one vector column at a time, on every search.
 *
 * Search with an index.  Finalize builds an IVF index per dense vector (vectorstore.params.index:
 * type flat|sq8|pq|rabitq|none (default sq8), nlist (default sqrt(N): ls_default_nlist), nprobe
 * (default max(16, nlist/16)), pq_m, pq_nbits (8 or 4), rabitq_bits, rerank, seed, iterations
 * (most k-means iterations, default 10), train_per_centroid (default 64), min_rows (default
 * 10000: smaller collections are not indexed)).  While the collection holds exactly the segments the index was
 * built over, searches go through it (approximate: recall depends on nprobe); otherwise they
 * scan exactly.  Ties in index answers are ordered by id text.  store_local_set_nprobe() changes
 * the lists probed per handle (bench --nprobe / --sweep nprobe=...); with it set, a search that
 * would scan exactly fails instead.
 *
 * Files (along the sections this file once had; local_internal.h holds what they share, and no
 * other module includes it): local.c the vtable, open / close, finalize and the corpus record;
 * local_ids.c the id table and the view of the segments; local_dir.c paths, the segment listing
 * and collection.json; local_write.c writing segments; local_scan.c the exact search;
 * local_index.c the IVF index; local_filter.c the search entry points and filters;
 * local_compact.c compaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "local_internal.h"
#include "qdrant_internal.h"

#define LS_DEFAULT_PATH "./vforge-data"
#define LS_DEFAULT_SEGMENT_ROWS ((int64_t)1 << 20)
#define LS_DEFAULT_RG_BYTES ((int64_t)32 << 20)

static vf_status ls_defer_indexing(store *base, vf_error *err) {
  (void)err;
  (void)base;
  return VF_OK; /* nothing is indexed while loading: the index is built at finalize */
}

static vf_status ls_enable_indexing(store *base, vf_error *err) {
  local_store *s = (local_store *)base;
  s->progress = "finalize";
  vf_status st = VF_OK;
  VF_TRY(ls_compact(s, err));
  VF_TRY(ls_build_indexes(s, err));
out:
  s->progress = NULL;
  return st;
}

static vf_status ls_wait_indexed(store *base, double timeout_s, vf_error *err) {
  (void)base;
  (void)timeout_s;
  (void)err;
  return VF_OK; /* exact scan needs no index: always ready */
}

static void ls_close(store *base) {
  local_store *s = (local_store *)base;
  if (!s) return;
  pqt_writer_abort(s->w); /* unflushed points are abandoned */
  if (s->lock_fd >= 0) close(s->lock_fd);
  ls_view_free(&s->view);
  ls_cache_free(&s->cache);
  ivf_close(s->ix);
  flt_docs_free(s->pdocs);
  free(s->pbase);
  free(s->ix_pos);
  store_head_free(base);
  free(s->dir);
  free(s->json_path);
  free(s->lock_path);
  free(s->seq_path);
  for (int i = 0; s->cols && i < s->ncols; i++)
    free((char *)s->cols[i].name);
  free(s->cols);
  free(s->map);
  free(s->wb);
  vf_buf_free(&s->idtext);
  vf_buf_free(&s->sparse);
  free(s->idstrs);
  free(s->idnum);
  free(s->offs);
  free(s->idvalid);
  free(s->valid);
  free(s->pvalid);
  free(s);
}

/* ------------------------------------------------- the corpus record (store.h) */

/* collection.json: the spec as ls_spec_json() wrote it, then ",\n \"corpus\": {...},\n
 * \"load\": \"in progress\"|\"finalized\"}" (written atomically, so a reader sees one or the
 * other) */
static vf_status ls_set_record(store *base, const store_record *r, vf_error *err) {
  local_store *s = (local_store *)base;
  char *have = NULL;
  size_t len = 0;
  vf_status st = VF_OK;
  vf_buf b;
  vf_buf_init(&b, LS_MAX_JSON);
  VF_TRY(ls_verify(s, err));
  VF_TRY(ls_read_small_file(s->json_path, &have, &len, err));
  size_t e = ls_spec_end(have);
  if (!e)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: no vectors list to record the corpus after",
                         s->json_path));
  VF_TRY(vf_buf_append(&b, have, e, err));
  VF_TRY(vf_json_raw(&b, ",\n \"corpus\": ", err));
  VF_TRY(store_record_json(&b, r, err));
  VF_TRY(vf_buf_printf(&b, err, ",\n \"load\": \"%s\"}\n",
                       r->load_finished ? "finalized" : "in progress"));
  VF_TRY(vf_atomic_write_file(s->json_path, b.data, b.len, err));
out:
  vf_buf_free(&b);
  free(have);
  return st;
}

static vf_status ls_get_record(store *base, store_record *out, bool *found, vf_error *err) {
  local_store *s = (local_store *)base;
  char *have = NULL;
  size_t len = 0;
  vf_status st = VF_OK;
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  VF_TRY(ls_verify(s, err));
  VF_TRY(ls_read_small_file(s->json_path, &have, &len, err));
  VF_TRY(vf_json_parse(have, len, s->json_path, &doc, err));
  const vf_json_val *c = vf_json_get(&doc, "corpus"), *l = vf_json_get(&doc, "load");
  *found = c && store_record_from_json(c, out);
  out->load_finished = !(l && l->t == VF_JSON_STR && strcmp(l->str, "finalized") != 0);
out:
  vf_json_free(&doc);
  free(have);
  return st;
}

static vf_status ls_contains(store *base, const corpus_id *ids, size_t n, bool *found,
                             vf_error *err) {
  local_store *s = (local_store *)base;
  vf_status st = ls_verify(s, err);
  if (st != VF_OK) return st;
  st = ls_view_build(s, err);
  if (st != VF_OK) return st;
  const ls_view *v = &s->view;
  for (size_t i = 0; i < n && v->cap; i++) {
    uint64_t a, b;
    ls_key_of(&ids[i], &a, &b);
    uint8_t u = ids[i].is_uuid ? 1 : 0;
    for (size_t h = ls_hash(a, b, u) & (v->cap - 1); v->tab[h].seg >= 0; h = (h + 1) & (v->cap - 1))
      if (v->tab[h].a == a && v->tab[h].b == b && v->tab[h].is_uuid == u) {
        found[i] = true;
        break;
      }
  }
  return st;
}

static const store_vtable local_vt = {
    .type = "local",
    .ensure_collection = ls_ensure_collection,
    .defer_indexing = ls_defer_indexing,
    .enable_indexing = ls_enable_indexing,
    .wait_indexed = ls_wait_indexed,
    .upsert = ls_upsert,
    .flush = ls_flush,
    .count = ls_count,
    .search = ls_search,
    .close = ls_close,
    .search_filtered = ls_search_impl,
    .set_record = ls_set_record,
    .get_record = ls_get_record,
    .contains = ls_contains,
};

static void ls_writer_id(char *out, size_t cap) {
  char host[64];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "host");
  host[sizeof host - 1] = 0;
  for (char *p = host; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '.'))
      *p = '_';
  uint32_t r = 0;
  if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
    r = (uint32_t)((uint64_t)(vf_now() * 1e9) ^ (uint64_t)(uintptr_t)out);
  snprintf(out, cap, "%s-%ld-%08x", host, (long)getpid(), r);
}

/* store_local_open(): see store.h. */
vf_status store_local_open(const store_config *cfg, store **out, vf_error *err) {
  *out = NULL;
  local_store *s = vf_calloc(1, sizeof *s);
  if (!s) return vf_error_set(err, VF_ENOMEM, "local store: out of memory");
  s->lock_fd = -1;
  VF_BUF_INIT(&s->idtext, VF_BUF_MAX_BATCH); /* one upsert batch's ids, as text */
  VF_BUF_INIT(&s->sparse, VF_BUF_MAX_BATCH); /* one upsert batch's sparse vectors, as JSON */
  vf_status st = VF_OK;
  VF_TRY(store_head_init(&s->base, &local_vt, cfg, err));
  for (int j = 0; j < s->base.nvectors; j++) {
    const char *n = s->base.vectors[j].name;
    if (strcmp(n, "id") == 0 || strcmp(n, "id_num") == 0 || strcmp(n, "payload") == 0)
      VF_FAIL(vf_error_set(err, VF_ECONFIG,
                           "vectors.%s: the local store reserves the column names id, id_num and "
                           "payload; rename the vector",
                           n));
  }
  if (cfg->segment_rows < 0 || cfg->row_group_bytes < 0)
    VF_FAIL(vf_error_set(err, VF_ECONFIG,
                         "local store: negative segment_rows or row_group_bytes"));
  s->segment_rows = cfg->segment_rows ? cfg->segment_rows : LS_DEFAULT_SEGMENT_ROWS;
  s->rg_bytes = cfg->row_group_bytes ? cfg->row_group_bytes : LS_DEFAULT_RG_BYTES;
  s->recreate_pending = cfg->recreate;
  VF_TRY(ls_index_params_parse(s, cfg->params_json, err));
  const char *root = cfg->path && *cfg->path ? cfg->path : LS_DEFAULT_PATH;
  if (!(s->dir = ls_path_join(root, s->base.collection)) ||
      !(s->json_path = ls_path_join(s->dir, "collection.json")) ||
      !(s->lock_path = ls_path_join(s->dir, ".lock")) ||
      !(s->seq_path = ls_path_join(s->dir, ".seq")))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "local store: out of memory"));
  s->ncols = LS_FIXED_COLS + s->base.nvectors + 1;
  if (!(s->cols = vf_calloc((size_t)s->ncols, sizeof *s->cols)) ||
      !(s->wb = vf_calloc((size_t)s->ncols, sizeof *s->wb)) ||
      !(s->map = vf_calloc((size_t)s->base.nvectors, sizeof *s->map)))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "local store: out of memory"));
  s->cols[0] = (pqt_wcolumn){vf_strdup("id"), PQT_W_STRING, false, 0};
  s->cols[1] = (pqt_wcolumn){vf_strdup("id_num"), PQT_W_INT64, true, 0};
  for (int j = 0; j < s->base.nvectors; j++) {
    const store_vector_spec *v = &s->base.vectors[j];
    pqt_wtype t = v->kind == CORPUS_VEC_DENSE   ? PQT_W_VECTOR
                  : v->kind == CORPUS_VEC_MULTI ? PQT_W_LIST_FLOAT
                                                : PQT_W_STRING;
    s->cols[LS_FIXED_COLS + j] =
        (pqt_wcolumn){vf_strdup(v->name), t, true, v->kind == CORPUS_VEC_DENSE ? v->dim : 0};
  }
  s->cols[s->ncols - 1] = (pqt_wcolumn){vf_strdup("payload"), PQT_W_STRING, true, 0};
  for (int i = 0; i < s->ncols; i++)
    if (!s->cols[i].name) VF_FAIL(vf_error_set(err, VF_ENOMEM, "local store: out of memory"));
  ls_writer_id(s->writer_id, sizeof s->writer_id);
  *out = &s->base;
out:
  if (st != VF_OK) ls_close(&s->base);
  return st;
}

/* store_local_describe(): see store.h (issue 18, `vforge load delete`). */
vf_status store_local_describe(store *base, store_collection_info *out, vf_error *err) {
  local_store *s = (local_store *)base;
  memset(out, 0, sizeof *out);
  snprintf(out->where, sizeof out->where, "%s", s->dir);
  struct stat sb;
  if (stat(s->json_path, &sb) != 0) return VF_OK;
  out->exists = true;
  /* an admin handle (load delete) does not know the vectors' dimensions: the collection is
   * counted whatever its spec, which is not compared (ls_verify would refuse the handle's dim 1) */
  s->verified = true;
  return store_count(base, true, &out->points, err);
}

/* store_local_drop(): see store.h: the collection's segments, index files and collection.json. */
vf_status store_local_drop(store *base, vf_error *err) {
  local_store *s = (local_store *)base;
  vf_status st = ls_remove_collection(s, err);
  if (st != VF_OK) return st;
  vf_log(VF_LOG_INFO, "local store: dropped collection '%s' (%s)", base->collection, s->dir);
  return st;
}

/* store_local_set_nprobe(): see store.h. */
vf_status store_local_set_nprobe(store *s, uint32_t nprobe, vf_error *err) {
  if (!s || s->vt != &local_vt)
    return vf_error_set(err, VF_EUSAGE, "nprobe: the store is not a local store (it is %s)",
                        s ? s->vt->type : "absent");
  ((local_store *)s)->req_nprobe = nprobe;
  return VF_OK;
}
