/*
 * local_internal.h — what the files of the `local` store (src/store/local*.c) share: the handle
 * (local_store), the id table and view, the search cache, the index parameters, and the functions
 * one file calls in another.  Private to the local store: only src/store/local*.c include it (the
 * design note is local.c's).
 */
#ifndef VFORGE_LOCAL_INTERNAL_H
#define VFORGE_LOCAL_INTERNAL_H

#include "store/internal.h"
#include "vforge/format.h"
#include "vforge/index.h"
#include "vforge/io.h"
#include "vforge/ivf.h"

#define LS_MAX_JSON ((size_t)1 << 20)
#define LS_FIXED_COLS 2 /* id, id_num; then vectors; then payload */

typedef struct ls_entry {
  uint64_t a, b; /* integer: (num, 0); uuid: the 16 bytes big-endian as two words */
  int64_t row;   /* row inside the winning segment */
  int32_t seg;   /* winning segment, -1 = empty slot */
  uint8_t is_uuid;
} ls_entry;

typedef struct ls_seg {
  char *name;
  uint64_t ino, size;
  int64_t mtime_ns;
  int64_t nrows;
  int64_t *slot; /* per row: the entry index when this row is its id's winner, else -1 */
} ls_seg;

typedef struct ls_view {
  ls_seg *segs;
  int nsegs;
  ls_entry *tab;
  size_t cap, count;
  uint64_t total_rows;
  bool valid;
} ls_view;

/* The searched dense vector of every committed segment row, loaded once per view (see
 * "Search" in the design note).  Rows keep their segment and row-group order, superseded and
 * null rows included (skipped by `skip`), so each row group is scored as one kernel call
 * exactly as the streaming scan does: identical scores, identical tie order. */
typedef struct ls_group {
  size_t pos;  /* first cache row */
  size_t n;    /* rows */
  int32_t seg; /* segment of the view (keys: view.segs[seg].slot + row) */
  int64_t row; /* first row inside the segment */
} ls_group;

typedef struct ls_cache {
  bool valid;
  int vec;      /* index of the cached vector in the collection spec */
  uint64_t gen; /* view generation it was loaded for */
  float *data;  /* rows x dim, unit-normalised for cosine */
  uint8_t *skip; /* per row: superseded or null */
  size_t rows;
  ls_group *groups;
  size_t ngroups, gcap;
} ls_cache;

/* params.index of the collection's config (see "IVF index" in local_index.c) */
typedef struct ls_index_params {
  bool none;          /* type: none */
  ivf_code type;      /* default sq8 */
  uint32_t nlist, nprobe, pq_m, rabitq_bits, rerank; /* 0: the IVF defaults / nlist-derived nprobe */
  uint32_t pq_nbits;  /* 0: 8 */
  uint64_t min_rows;  /* fewer points: no index (default 10000) */
  uint64_t seed;
  uint32_t iterations;         /* most k-means iterations; 0: the IVF default */
  uint32_t train_per_centroid; /* k-means rows per list; 0: the IVF default */
} ls_index_params;

typedef struct local_store {
  store base;
  char *dir, *json_path, *lock_path, *seq_path;
  char writer_id[128];
  int64_t segment_rows, rg_bytes;
  bool verified; /* collection.json matched this handle's spec */
  bool swept;    /* the collection directory was swept of dead writers' temporaries */
  bool recreate_pending;
  /* the open segment */
  pqt_writer *w;
  int64_t w_rows;
  int lock_fd;
  pqt_wcolumn *cols;
  int ncols;
  int *map;
  /* scratch for building column batches, reused */
  pqt_wbatch *wb;
  vf_buf idtext, sparse;
  const char **idstrs;
  int64_t *idnum, *offs;
  uint8_t *idvalid, *valid, *pvalid;
  size_t scratch_rows, offs_cap, valid_cap;
  ls_view view;
  uint64_t view_gen; /* incremented whenever the view is rebuilt */
  ls_cache cache;
  bool stream_logged; /* the "searching by streaming scan" notice was logged */
  ls_index_params ixp;
  const char *progress; /* while finalizing: the phase of progress events (else silent) */
  ivf_index *ix;      /* the open index of vector ix_vec (NULL: none usable, exact scan) */
  int ix_vec;
  uint64_t ix_gen;    /* view generation the manifest was checked against */
  bool ix_valid, ix_logged;
  uint32_t ix_nprobe;
  uint32_t req_nprobe; /* store_local_set_nprobe(): lists probed instead of ix_nprobe (0: unset) */
  /* filtered search (see "Filters" in local_filter.c) */
  flt_docs *pdocs;     /* every segment row's payload, parsed: row (seg, r) is pbase[seg] + r */
  int64_t *pbase;      /* nsegs + 1 */
  uint64_t pdocs_gen;  /* view generation the payloads were loaded for */
  bool pdocs_valid;
  int64_t *ix_pos;     /* index row -> payload row (-1: not a current point) */
  uint64_t ix_pos_rows;
  bool ix_pos_valid;   /* for the open index and the view it was checked against */
} local_store;

/* --------------------------------------------------- the id table and the view (local_ids.c) */

uint64_t ls_hash(uint64_t a, uint64_t b, uint8_t u);
void ls_key_of(const corpus_id *id, uint64_t *a, uint64_t *b);
void ls_id_of(const ls_entry *e, corpus_id *id);
int ls_entry_cmp(const void *user, int64_t x, int64_t y);
void ls_view_free(ls_view *v);
int64_t ls_tab_find(const ls_view *v, const corpus_id *id);
vf_status ls_open_segment_file(local_store *s, const char *name, pqt_file **f, vf_error *err);
int ls_leaf_of(const pqt_file *f, const char *name);
vf_status ls_view_build(local_store *s, vf_error *err);
vf_status ls_count(store *base, bool exact, uint64_t *out, vf_error *err);

/* ---------------------------------------------------- the collection directory (local_dir.c) */

char *ls_path_join(const char *a, const char *b);
vf_status ls_list(local_store *s, char ***out, int *n, vf_error *err);
void ls_free_names(char **names, int n);
vf_status ls_read_small_file(const char *path, char **out, size_t *len, vf_error *err);
const char *ls_kind_text(corpus_vec_kind k);
size_t ls_spec_end(const char *text);
vf_status ls_verify(local_store *s, vf_error *err);
vf_status ls_lock_exclusive(local_store *s, const char *what, int *fd, vf_error *err);
vf_status ls_remove_collection(local_store *s, vf_error *err);
vf_status ls_ensure_collection(store *base, vf_error *err);

/* ------------------------------------------------------------------- writing (local_write.c) */

vf_status ls_open_writer_at(local_store *s, const char *path, pqt_writer **w, vf_error *err);
vf_status ls_commit_segment(local_store *s, vf_error *err);
vf_status ls_upsert(store *base, const corpus_batch *b, vf_error *err);
vf_status ls_flush(store *base, vf_error *err);
/* the value an empty float column batch points at (local_compact.c too) */
extern const float ls_zero_float;

/* --------------------------------------------------------------- exact search (local_scan.c) */

void ls_cache_free(ls_cache *c);
vf_status ls_open_for_search(local_store *s, const ls_seg *sg, const char *vec, pqt_file **f,
                             int *top, int *leaf, vf_error *err);
vf_status ls_cache_load(local_store *s, int j, bool *use, vf_error *err);
vf_status ls_scan_cached(local_store *s, const store_vector_spec *sp, const float *q, size_t nq,
                         idx_topk *heaps, const uint8_t *const *qm, vf_error *err);
vf_status ls_scan_stream(local_store *s, const store_vector_spec *sp, const float *q, size_t nq,
                         idx_topk *heaps, const uint8_t *const *qm, vf_error *err);

/* ----------------------------------------------------------------- IVF index (local_index.c) */

vf_status ls_index_params_parse(local_store *s, const char *params_json, vf_error *err);
vf_status ls_build_indexes(local_store *s, vf_error *err);
vf_status ls_index_load(local_store *s, int j, vf_error *err);
vf_status ls_index_search(local_store *s, const float *queries, size_t q0, size_t nq, int32_t dim,
                          size_t k, const uint8_t *const *allow, store_results *out,
                          vf_error *err);

/* ------------------------------------------------------- search and filters (local_filter.c) */

vf_status ls_search(store *base, const char *vector, const float *queries, size_t nq, int32_t dim,
                    size_t k, store_results *out, vf_error *err);
vf_status ls_search_impl(store *base, const char *vector, const float *queries, size_t nq,
                         int32_t dim, size_t k, const flt_filter *const *filters,
                         store_results *out, vf_error *err);

/* -------------------------------------------------------------- compaction (local_compact.c) */

vf_status ls_compact(local_store *s, vf_error *err);

#endif
