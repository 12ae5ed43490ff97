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
 *                                          (built at finalize; see "IVF index" below)
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
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qdrant_internal.h"
#include "vforge/format.h"
#include "vforge/index.h"
#include "vforge/io.h"
#include "vforge/ivf.h"
#include "vforge/store.h"

#define LS_DEFAULT_PATH "./vforge-data"
#define LS_DEFAULT_SEGMENT_ROWS ((int64_t)1 << 20)
#define LS_DEFAULT_RG_BYTES ((int64_t)32 << 20)
#define LS_MAX_JSON ((size_t)1 << 20)
#define LS_FIXED_COLS 2 /* id, id_num; then vectors; then payload */

/* ------------------------------------------------------------- id table */

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

/* params.index of the collection's config (see "IVF index" below) */
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
  /* filtered search (see "Filters" below) */
  flt_docs *pdocs;     /* every segment row's payload, parsed: row (seg, r) is pbase[seg] + r */
  int64_t *pbase;      /* nsegs + 1 */
  uint64_t pdocs_gen;  /* view generation the payloads were loaded for */
  bool pdocs_valid;
  int64_t *ix_pos;     /* index row -> payload row (-1: not a current point) */
  uint64_t ix_pos_rows;
  bool ix_pos_valid;   /* for the open index and the view it was checked against */
} local_store;

static uint64_t ls_hash(uint64_t a, uint64_t b, uint8_t u) {
  uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + u);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return h;
}

static int hexv(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static void ls_key_of(const corpus_id *id, uint64_t *a, uint64_t *b) {
  if (!id->is_uuid) {
    *a = id->num;
    *b = 0;
    return;
  }
  uint64_t w[2] = {0, 0};
  int nib = 0;
  for (int i = 0; i < 36; i++) {
    int v = hexv(id->uuid[i]);
    if (v < 0) continue;
    w[nib / 16] = (w[nib / 16] << 4) | (uint64_t)v;
    nib++;
  }
  *a = w[0];
  *b = w[1];
}

static void ls_id_of(const ls_entry *e, corpus_id *id) {
  memset(id, 0, sizeof *id);
  if (!e->is_uuid) {
    id->num = e->a;
    return;
  }
  static const char hx[] = "0123456789abcdef";
  int nib = 0;
  for (int i = 0; i < 36; i++) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      id->uuid[i] = '-';
      continue;
    }
    uint64_t w = nib < 16 ? e->a : e->b;
    id->uuid[i] = hx[(w >> (4 * (15 - nib % 16))) & 15];
    nib++;
  }
  id->uuid[36] = 0;
  id->is_uuid = true;
}

static int ls_entry_cmp(const void *user, int64_t x, int64_t y) {
  const ls_entry *t = user;
  const ls_entry *a = &t[x], *b = &t[y];
  if (a->is_uuid != b->is_uuid) return a->is_uuid ? 1 : -1;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  if (a->b != b->b) return a->b < b->b ? -1 : 1;
  return 0;
}

static vf_status ls_tab_grow(ls_view *v, vf_error *err) {
  size_t ncap = v->cap ? v->cap * 2 : 1024;
  ls_entry *t = vf_mallocarray(ncap, sizeof *t);
  if (!t)
    return vf_error_set(err, VF_ENOMEM,
                        "local store: out of memory for the id table (%zu ids; every id of a "
                        "collection must fit in memory)",
                        v->count);
  for (size_t i = 0; i < ncap; i++)
    t[i].seg = -1;
  for (size_t i = 0; i < v->cap; i++) {
    if (v->tab[i].seg < 0) continue;
    size_t h = ls_hash(v->tab[i].a, v->tab[i].b, v->tab[i].is_uuid) & (ncap - 1);
    while (t[h].seg >= 0)
      h = (h + 1) & (ncap - 1);
    t[h] = v->tab[i];
  }
  free(v->tab);
  v->tab = t;
  v->cap = ncap;
  return VF_OK;
}

/* record (seg,row) as the newest occurrence of the id */
static vf_status ls_tab_put(ls_view *v, const corpus_id *id, int32_t seg, int64_t row,
                            vf_error *err) {
  if ((v->count + 1) * 2 > v->cap) {
    vf_status st = ls_tab_grow(v, err);
    if (st != VF_OK) return st;
  }
  uint64_t a, b;
  ls_key_of(id, &a, &b);
  uint8_t u = id->is_uuid ? 1 : 0;
  size_t h = ls_hash(a, b, u) & (v->cap - 1);
  while (v->tab[h].seg >= 0) {
    ls_entry *e = &v->tab[h];
    if (e->a == a && e->b == b && e->is_uuid == u) {
      e->seg = seg;
      e->row = row;
      return VF_OK;
    }
    h = (h + 1) & (v->cap - 1);
  }
  v->tab[h] = (ls_entry){a, b, row, seg, u};
  v->count++;
  return VF_OK;
}

static void ls_view_free(ls_view *v) {
  for (int i = 0; i < v->nsegs; i++) {
    free(v->segs[i].name);
    free(v->segs[i].slot);
  }
  free(v->segs);
  free(v->tab);
  memset(v, 0, sizeof *v);
}

/* ------------------------------------------------------------- paths, files */

static char *path_join(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *p = vf_malloc(la + lb + 2);
  if (!p) return NULL;
  memcpy(p, a, la);
  p[la] = '/';
  memcpy(p + la + 1, b, lb + 1);
  return p;
}


static bool is_segment_name(const char *n) {
  size_t l = strlen(n);
  return l > 12 && strncmp(n, "seg-", 4) == 0 && strcmp(n + l - 8, ".parquet") == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the committed segments, sorted by name (= sequence order) */
static vf_status ls_list(local_store *s, char ***out, int *n, vf_error *err) {
  *out = NULL;
  *n = 0;
  DIR *d = opendir(s->dir);
  if (!d)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO,
                        "collection '%s': cannot open %s: %s", s->base.collection, s->dir,
                        VF_STRERROR(errno));
  char **names = NULL;
  int cnt = 0, cap = 0;
  vf_status st = VF_OK;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!is_segment_name(de->d_name)) continue;
    if (cnt == cap) {
      int nc = cap ? cap * 2 : 16;
      char **t = vf_realloc(names, (size_t)nc * sizeof *t);
      if (!t) {
        st = vf_error_set(err, VF_ENOMEM, "out of memory");
        break;
      }
      names = t;
      cap = nc;
    }
    if (!(names[cnt] = vf_strdup(de->d_name))) {
      st = vf_error_set(err, VF_ENOMEM, "out of memory");
      break;
    }
    cnt++;
  }
  closedir(d);
  if (st != VF_OK) {
    for (int i = 0; i < cnt; i++)
      free(names[i]);
    free(names);
    return st;
  }
  if (cnt) qsort(names, (size_t)cnt, sizeof *names, cmp_str);
  *out = names;
  *n = cnt;
  return VF_OK;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++)
    free(names[i]);
  free(names);
}

static vf_status read_small_file(const char *path, char **out, size_t *len, vf_error *err) {
  *out = NULL;
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "%s: %s", path,
                        VF_STRERROR(errno));
  vf_buf b;
  vf_buf_init(&b, LS_MAX_JSON);
  vf_status st = VF_OK;
  char tmp[4096];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0)
    if ((st = vf_buf_append(&b, tmp, n, err)) != VF_OK) break;
  if (st == VF_OK && ferror(fp)) st = vf_error_set(err, VF_EIO, "%s: read error", path);
  fclose(fp);
  if (st == VF_OK) st = vf_buf_append(&b, "", 1, err);
  if (st != VF_OK) {
    vf_buf_free(&b);
    return vf_error_prefix(err, "%s: ", path);
  }
  *out = (char *)vf_buf_take(&b, len);
  *len -= 1;
  return VF_OK;
}

/* ---------------------------------------------------------- collection.json */

static const char *kind_text(corpus_vec_kind k) {
  return k == CORPUS_VEC_SPARSE ? "sparse" : k == CORPUS_VEC_MULTI ? "multivector" : "dense";
}

/* one line per vector (collection.json stays readable by hand) */
static vf_status ls_vector_line(const store_vector_spec *v, vf_buf *b, vf_error *err) {
  vf_status st = vf_buf_printf(b, err, "    {\"name\": ");
  if (st == VF_OK) st = vf_json_string(b, v->name, strlen(v->name), err);
  if (st == VF_OK)
    st = vf_buf_printf(b, err, ", \"type\": \"%s\", \"dim\": %d, \"distance\": \"%s\"}",
                       kind_text(v->kind), (int)v->dim, idx_metric_name(v->distance));
  return st;
}

static vf_status ls_spec_json(const store *s, vf_buf *b, vf_error *err) {
  vf_status st = vf_buf_printf(b, err, "{\"format\": \"vforge-local\", \"version\": 1,\n");
  if (st == VF_OK) st = vf_buf_printf(b, err, " \"collection\": ");
  if (st == VF_OK) st = vf_json_string(b, s->collection, strlen(s->collection), err);
  if (st == VF_OK) st = vf_buf_printf(b, err, ",\n \"vectors\": [\n");
  for (int i = 0; st == VF_OK && i < s->nvectors; i++) {
    st = ls_vector_line(&s->vectors[i], b, err);
    if (st == VF_OK) st = vf_buf_printf(b, err, "%s\n", i + 1 < s->nvectors ? "," : "");
  }
  if (st == VF_OK) st = vf_buf_printf(b, err, " ]}\n");
  return st;
}

/* One vector of the spec as text for messages: "dense, dim 8, cosine". */
static void ls_vector_text(corpus_vec_kind kind, int dim, const char *distance, char *out,
                           size_t cap) {
  snprintf(out, cap, "%s, dim %d, %s", kind_text(kind), dim, distance);
}

/* Compare the stored spec (collection.json's text) with this handle's.  A file that is not the
 * JSON vforge writes is corrupt (VF_ECORRUPT, naming it), never "a different schema"; a
 * different schema names the first vector that differs and both of its definitions. */
static vf_status ls_compare_spec(local_store *s, const char *path, const char *have,
                                 size_t len, vf_error *err) {
  /* the corpus record after "vectors" (ls_set_record) is read past: only format and vectors
   * are compared */
  const char *c = s->base.collection;
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  vf_status st = vf_json_parse(have, len, path, &doc, err);
  const vf_json_val *fmt = st == VF_OK ? vf_json_get(&doc, "format") : NULL;
  const vf_json_val *vecs = st == VF_OK ? vf_json_get(&doc, "vectors") : NULL;
  const char *bad = NULL;
  if (st == VF_OK && (!fmt || fmt->t != VF_JSON_STR || strcmp(fmt->str, "vforge-local") != 0))
    bad = "no \"format\": \"vforge-local\"";
  else if (st == VF_OK && (!vecs || vecs->t != VF_JSON_ARR))
    bad = "no \"vectors\" list";
  for (size_t i = 0; st == VF_OK && !bad && i < vecs->n; i++) {
    const vf_json_val *n = vf_json_get(&vecs->items[i], "name"), *t = vf_json_get(&vecs->items[i], "type");
    const vf_json_val *d = vf_json_get(&vecs->items[i], "dim"), *m = vf_json_get(&vecs->items[i], "distance");
    if (!n || n->t != VF_JSON_STR || !t || t->t != VF_JSON_STR || !d || d->t != VF_JSON_NUM || !m ||
        m->t != VF_JSON_STR || d->num != (double)(int)d->num)
      bad = "a vector entry without name, type, dim and distance";
  }
  if (st == VF_ECORRUPT || bad) {
    char why[VF_ERROR_MSG_MAX];
    snprintf(why, sizeof why, "%s", bad ? bad : err->msg);
    st = vf_error_set(err, VF_ECORRUPT,
                      "collection '%s': %s is corrupt (%s); it is not a schema vforge wrote: "
                      "remove the collection directory %s, or set vectorstore.params.recreate: "
                      "true to replace it",
                      c, path, why, s->dir);
  }
  /* vector by vector, in order: the first that differs */
  for (size_t i = 0; st == VF_OK && i < vecs->n && i < (size_t)s->base.nvectors; i++) {
    const store_vector_spec *w = &s->base.vectors[i];
    const vf_json_val *e = &vecs->items[i];
    const char *sn = vf_json_get(e, "name")->str, *stype = vf_json_get(e, "type")->str;
    const char *sdist = vf_json_get(e, "distance")->str;
    int sdim = (int)vf_json_get(e, "dim")->num;
    if (strcmp(sn, w->name) == 0 && strcmp(stype, kind_text(w->kind)) == 0 &&
        sdim == (int)w->dim && strcmp(sdist, idx_metric_name(w->distance)) == 0)
      continue;
    char want[128];
    ls_vector_text(w->kind, (int)w->dim, idx_metric_name(w->distance), want, sizeof want);
    if (strcmp(sn, w->name) != 0)
      st = vf_error_set(err, VF_ECONFIG,
                        "collection '%s' exists in %s with a different vector schema: vector %zu "
                        "is '%.100s' there but '%.100s' (%s) in the config (set "
                        "vectorstore.params.recreate: true to replace it)",
                        c, s->dir, i + 1, sn, w->name, want);
    else
      st = vf_error_set(err, VF_ECONFIG,
                        "collection '%s' exists in %s with a different vector schema: vector "
                        "'%.100s' is %.40s, dim %d, %.40s there but %s in the config (set "
                        "vectorstore.params.recreate: true to replace it)",
                        c, s->dir, w->name, stype, sdim, sdist, want);
  }
  if (st == VF_OK && vecs->n != (size_t)s->base.nvectors) {
    size_t k = vecs->n < (size_t)s->base.nvectors ? vecs->n : (size_t)s->base.nvectors;
    bool more = vecs->n > (size_t)s->base.nvectors;
    const char *extra = more ? vf_json_get(&vecs->items[k], "name")->str : s->base.vectors[k].name;
    st = vf_error_set(err, VF_ECONFIG,
                      "collection '%s' exists in %s with a different vector schema: %zu vectors "
                      "there, %d in the config; vector '%.100s' is only in the %s (set "
                      "vectorstore.params.recreate: true to replace it)",
                      c, s->dir, vecs->n, s->base.nvectors, extra, more ? "collection" : "config");
  }
  vf_json_free(&doc);
  return st;
}

/* The end of the vectors spec in a collection.json text (just past "\n ]"), or 0 when absent;
 * what follows is the corpus record (ls_set_record), not part of the spec. */
static size_t ls_spec_end(const char *text) {
  const char *e = strstr(text, "\n ]");
  return e ? (size_t)(e - text) + 3 : 0;
}

static vf_status ls_verify(local_store *s, vf_error *err) {
  if (s->verified) return VF_OK;
  char *have = NULL;
  size_t len = 0;
  vf_status st = read_small_file(s->json_path, &have, &len, err);
  if (st == VF_ENOTFOUND)
    return vf_error_set(err, VF_ENOTFOUND,
                        "collection '%s' does not exist in %s (create it first: load prepare / "
                        "ensure_collection)",
                        s->base.collection, s->dir);
  if (st != VF_OK) return st;
  st = ls_compare_spec(s, s->json_path, have, len, err);
  free(have);
  if (st == VF_OK) s->verified = true;
  return st;
}

/* LOCK_EX on .lock without waiting: no other handle may have a segment open.  `what` names
 * the operation for the error.  *fd receives the lock's descriptor (close it to release). */
static vf_status ls_lock_exclusive(local_store *s, const char *what, int *fd, vf_error *err) {
  *fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (*fd < 0) return vf_error_set(err, VF_EIO, "%s: %s", s->lock_path, VF_STRERROR(errno));
  if (flock(*fd, LOCK_EX | LOCK_NB) == 0) return VF_OK;
  vf_status st = errno == EWOULDBLOCK
                     ? vf_error_set(err, VF_EUSAGE,
                                    "collection '%s': another writer is still loading into %s; "
                                    "%s runs only when every load has finished",
                                    s->base.collection, s->dir, what)
                     : vf_error_set(err, VF_EIO, "%s: flock: %s", s->lock_path, VF_STRERROR(errno));
  close(*fd);
  *fd = -1;
  return st;
}

static vf_status ls_remove_collection(local_store *s, vf_error *err) {
  int lock_fd;
  vf_status st = ls_lock_exclusive(s, "recreate", &lock_fd, err);
  if (st != VF_OK) return st;
  DIR *d = opendir(s->dir);
  if (!d) {
    int e = errno;
    close(lock_fd);
    return e == ENOENT ? VF_OK : vf_error_set(err, VF_EIO, "%s: %s", s->dir, VF_STRERROR(e));
  }
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    const char *n = de->d_name;
    if (!(is_segment_name(n) || strstr(n, ".parquet.tmp.") || strcmp(n, "collection.json") == 0 ||
          strncmp(n, "collection.json.tmp.", 20) == 0 || strcmp(n, ".seq") == 0 ||
          strncmp(n, "index-", 6) == 0))
      continue;
    char *p = path_join(s->dir, n);
    if (!p) {
      st = vf_error_set(err, VF_ENOMEM, "out of memory");
      break;
    }
    if (unlink(p) != 0 && errno != ENOENT)
      st = vf_error_set(err, VF_EIO, "%s: cannot remove: %s", p, VF_STRERROR(errno));
    free(p);
    if (st != VF_OK) break;
  }
  closedir(d);
  close(lock_fd);
  return st;
}

/* ensure_collection: create, verify, or recreate (see store.h) */
static vf_status ls_ensure_collection(store *base, vf_error *err) {
  local_store *s = (local_store *)base;
  if (s->w)
    return vf_error_set(err, VF_EUSAGE,
                        "collection '%s': ensure_collection while this handle has unflushed "
                        "points",
                        base->collection);
  struct stat jb;
  if (base->must_exist && stat(s->json_path, &jb) != 0) /* nothing is created, not even the dir */
    return vf_error_set(err, VF_ENOTFOUND,
                        "collection '%s' does not exist in %s (run `vforge load prepare` and "
                        "`load load` first)",
                        base->collection, s->dir);
  vf_status st = vf_mkdir_p(s->dir, 0777, err);
  if (st != VF_OK) return st;
  if (!s->swept) { /* segments, manifests, index spills that killed writers on this host left */
    s->swept = true;
    if ((st = vf_temp_sweep(s->dir, NULL, NULL, err)) != VF_OK) return st;
  }
  s->verified = false;
  s->view.valid = false;
  /* recreate is one-shot: a handle drops the old collection at most once */
  bool recreate = s->recreate_pending;
  s->recreate_pending = false;
  if (recreate && (st = ls_remove_collection(s, err)) != VF_OK) return st;
  struct stat sb;
  if (stat(s->json_path, &sb) == 0) return ls_verify(s, err);
  vf_buf b;
  vf_buf_init(&b, LS_MAX_JSON);
  st = ls_spec_json(base, &b, err);
  if (st == VF_OK) st = vf_atomic_write_file(s->json_path, b.data, b.len, err);
  vf_buf_free(&b);
  if (st == VF_OK) s->verified = true;
  return st;
}

/* ------------------------------------------------------------------ writing */

static vf_status ls_next_seq(local_store *s, uint64_t *seq, vf_error *err) {
  int fd = open(s->seq_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return vf_error_set(err, VF_EIO, "%s: %s", s->seq_path, VF_STRERROR(errno));
  vf_status st = VF_OK;
  if (flock(fd, LOCK_EX) != 0) {
    st = vf_error_set(err, VF_EIO, "%s: flock: %s", s->seq_path, VF_STRERROR(errno));
    goto out;
  }
  char buf[32];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n < 0) {
    st = vf_error_set(err, VF_EIO, "%s: read: %s", s->seq_path, VF_STRERROR(errno));
    goto out;
  }
  uint64_t v = 0;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
    v = v * 10 + (uint64_t)(buf[i] - '0');
  v++;
  int len = snprintf(buf, sizeof buf, "%020llu\n", (unsigned long long)v);
  if (pwrite(fd, buf, (size_t)len, 0) != len || fdatasync(fd) != 0) {
    st = vf_error_set(err, VF_EIO, "%s: write: %s", s->seq_path, VF_STRERROR(errno));
    goto out;
  }
  *seq = v;
out:
  close(fd); /* releases the lock */
  return st;
}

static int64_t ls_row_group_rows(const local_store *s) {
  int64_t row = 64 + 256; /* id, id_num, a typical payload */
  for (int j = 0; j < s->base.nvectors; j++)
    row += s->base.vectors[j].kind == CORPUS_VEC_SPARSE ? 512 : (int64_t)s->base.vectors[j].dim * 4;
  int64_t r = s->rg_bytes / row;
  if (r < 8) r = 8;
  if (r > 65536) r = 65536;
  return r;
}

static vf_status ls_open_writer_at(local_store *s, const char *path, pqt_writer **w,
                                   vf_error *err) {
  pqt_writer_opts o;
  memset(&o, 0, sizeof o);
  o.codec = PQT_UNCOMPRESSED;
  o.row_group_rows = ls_row_group_rows(s);
  vf_status st = pqt_writer_open(path, s->cols, s->ncols, &o, w, err);
  if (st == VF_OK) st = pqt_writer_add_kv(*w, "vforge.store", "local", err);
  if (st == VF_OK) st = pqt_writer_add_kv(*w, "vforge.collection", s->base.collection, err);
  if (st != VF_OK && *w) {
    pqt_writer_abort(*w);
    *w = NULL;
  }
  return st;
}

static vf_status ls_open_segment(local_store *s, vf_error *err) {
  vf_status st = ls_verify(s, err);
  if (st != VF_OK) return st;
  s->lock_fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (s->lock_fd < 0) return vf_error_set(err, VF_EIO, "%s: %s", s->lock_path, VF_STRERROR(errno));
  if (flock(s->lock_fd, LOCK_SH) != 0) {
    st = vf_error_set(err, VF_EIO, "%s: flock: %s", s->lock_path, VF_STRERROR(errno));
    goto fail;
  }
  uint64_t seq = 0;
  if ((st = ls_next_seq(s, &seq, err)) != VF_OK) goto fail;
  char name[256];
  snprintf(name, sizeof name, "seg-%020llu-%s.parquet", (unsigned long long)seq, s->writer_id);
  char *path = path_join(s->dir, name);
  if (!path) {
    st = vf_error_set(err, VF_ENOMEM, "out of memory");
    goto fail;
  }
  st = ls_open_writer_at(s, path, &s->w, err);
  free(path);
  if (st != VF_OK) goto fail;
  s->w_rows = 0;
  return VF_OK;
fail:
  close(s->lock_fd);
  s->lock_fd = -1;
  return st;
}

static vf_status ls_commit_segment(local_store *s, vf_error *err) {
  if (!s->w) return VF_OK;
  vf_status st = pqt_writer_close(s->w, err);
  s->w = NULL;
  s->w_rows = 0;
  if (s->lock_fd >= 0) close(s->lock_fd);
  s->lock_fd = -1;
  s->view.valid = false;
  return st;
}

static vf_status ls_scratch(local_store *s, size_t n, vf_error *err) {
  if (n <= s->scratch_rows) return VF_OK;
  size_t c = n < 256 ? 256 : n;
  const char **a = vf_realloc(s->idstrs, c * sizeof *a);
  if (a) s->idstrs = a;
  int64_t *b = vf_realloc(s->idnum, c * sizeof *b);
  if (b) s->idnum = b;
  uint8_t *v1 = vf_realloc(s->idvalid, c);
  if (v1) s->idvalid = v1;
  uint8_t *v2 = vf_realloc(s->pvalid, c);
  if (v2) s->pvalid = v2;
  if (!a || !b || !v1 || !v2) return vf_error_set(err, VF_ENOMEM, "local store: out of memory");
  s->scratch_rows = c;
  return VF_OK;
}

/* room for `n` int64 offsets / validity bytes per vector column, laid out per column */
static vf_status ls_scratch_cols(local_store *s, size_t n, vf_error *err) {
  size_t need = (n + 1) * (size_t)(s->base.nvectors + 1);
  if (need > s->offs_cap) {
    int64_t *o = vf_realloc(s->offs, need * sizeof *o);
    if (!o) return vf_error_set(err, VF_ENOMEM, "local store: out of memory");
    s->offs = o;
    s->offs_cap = need;
  }
  if (need > s->valid_cap) {
    uint8_t *v = vf_realloc(s->valid, need);
    if (!v) return vf_error_set(err, VF_ENOMEM, "local store: out of memory");
    s->valid = v;
    s->valid_cap = need;
  }
  return VF_OK;
}

static const float ls_zero_float = 0.0f;

/* rows [r0, r1) of the batch into the open segment */
static vf_status ls_write_rows(local_store *s, const corpus_batch *b, size_t r0, size_t r1,
                               vf_error *err) {
  size_t n = r1 - r0;
  vf_status st = ls_scratch(s, n, err);
  if (st == VF_OK) st = ls_scratch_cols(s, n, err);
  if (st == VF_OK) st = vf_buf_reserve(&s->idtext, n * 37, err);
  if (st != VF_OK) return st;
  vf_buf_reset(&s->idtext);
  vf_buf_reset(&s->sparse);
  pqt_wbatch *wb = s->wb;
  memset(wb, 0, (size_t)s->ncols * sizeof *wb);
  char *text = (char *)s->idtext.data;
  for (size_t i = 0; i < n; i++) {
    const corpus_id *id = &b->ids[r0 + i];
    char *t = text + i * 37;
    if (id->is_uuid) {
      corpus_id norm;
      if (!store_id_parse(id->uuid, strnlen(id->uuid, 37), &norm) || !norm.is_uuid)
        return vf_error_set(err, VF_EUSAGE, "%s: row %zu: point id '%.36s' is not a UUID",
                            b->file_key ? b->file_key : "batch", r0 + i, id->uuid);
      memcpy(t, norm.uuid, 37);
      s->idvalid[i] = 0;
      s->idnum[i] = 0;
    } else {
      store_id_format(id, t);
      s->idvalid[i] = id->num <= (uint64_t)INT64_MAX;
      s->idnum[i] = s->idvalid[i] ? (int64_t)id->num : 0;
    }
    s->idstrs[i] = t;
  }
  wb[0].strs = s->idstrs;
  wb[1].values = s->idnum;
  wb[1].valid = s->idvalid;
  for (int j = 0; j < s->base.nvectors; j++) {
    const store_vector_spec *sp = &s->base.vectors[j];
    pqt_wbatch *c = &wb[LS_FIXED_COLS + j];
    uint8_t *valid = s->valid + (size_t)j * (n + 1);
    int64_t *offs = s->offs + (size_t)j * (n + 1);
    int bi = s->map[j];
    const corpus_vec_batch *v = bi >= 0 ? &b->vectors[bi] : NULL;
    for (size_t i = 0; i < n; i++)
      valid[i] = v && !(v->null_rows && v->null_rows[r0 + i]);
    c->valid = valid;
    switch (sp->kind) {
    case CORPUS_VEC_DENSE:
      c->values = v ? (const void *)(v->dense + r0 * (size_t)sp->dim) : &ls_zero_float;
      break;
    case CORPUS_VEC_MULTI:
      c->values = v && v->multi ? (const void *)v->multi : &ls_zero_float;
      for (size_t i = 0; i <= n; i++)
        offs[i] = v ? v->offsets[r0 + i] * sp->dim : 0;
      c->offsets = offs;
      break;
    case CORPUS_VEC_SPARSE: {
      offs[0] = (int64_t)s->sparse.len;
      for (size_t i = 0; i < n; i++) {
        if (valid[i]) {
          size_t r = r0 + i;
          st = vf_json_raw(&s->sparse, "{\"indices\":[", err);
          for (int64_t e = v->offsets[r]; st == VF_OK && e < v->offsets[r + 1]; e++) {
            if (e > v->offsets[r]) st = vf_json_raw(&s->sparse, ",", err);
            if (st == VF_OK) st = vf_json_u64(&s->sparse, v->indices[e], err);
          }
          if (st == VF_OK) st = vf_json_raw(&s->sparse, "],\"values\":[", err);
          for (int64_t e = v->offsets[r]; st == VF_OK && e < v->offsets[r + 1]; e++) {
            if (e > v->offsets[r]) st = vf_json_raw(&s->sparse, ",", err);
            if (st == VF_OK) st = vf_json_f32(&s->sparse, v->values[e], err);
          }
          if (st == VF_OK) st = vf_json_raw(&s->sparse, "]}", err);
          if (st != VF_OK) return st;
        }
        offs[i + 1] = (int64_t)s->sparse.len;
      }
      c->offsets = offs;
      break;
    }
    }
  }
  /* sparse texts were appended while growing the buffer: point at the final data */
  for (int j = 0; j < s->base.nvectors; j++)
    if (s->base.vectors[j].kind == CORPUS_VEC_SPARSE) wb[LS_FIXED_COLS + j].bytes = s->sparse.data;
  pqt_wbatch *pc = &wb[LS_FIXED_COLS + s->base.nvectors];
  int64_t *poffs = s->offs + (size_t)s->base.nvectors * (n + 1);
  for (size_t i = 0; i <= n; i++)
    poffs[i] = b->payload_offsets ? b->payload_offsets[r0 + i] : 0;
  for (size_t i = 0; i < n; i++)
    s->pvalid[i] = poffs[i + 1] > poffs[i];
  pc->bytes = b->payload.data;
  pc->offsets = poffs;
  pc->valid = s->pvalid;
  st = pqt_writer_write(s->w, wb, (int64_t)n, err);
  if (st == VF_OK) s->w_rows += (int64_t)n;
  return st;
}

static vf_status ls_upsert(store *base, const corpus_batch *b, vf_error *err) {
  local_store *s = (local_store *)base;
  vf_status st = store_check_batch(base, b, s->map, err);
  if (st != VF_OK) return st;
  size_t done = 0;
  while (done < b->n) {
    if (!s->w && (st = ls_open_segment(s, err)) != VF_OK) return st;
    int64_t room = s->segment_rows - s->w_rows;
    size_t take = b->n - done;
    if ((uint64_t)room < take) take = (size_t)room;
    if ((st = ls_write_rows(s, b, done, done + take, err)) != VF_OK) return st;
    done += take;
    if (s->w_rows >= s->segment_rows && (st = ls_commit_segment(s, err)) != VF_OK) return st;
  }
  return VF_OK;
}

static vf_status ls_flush(store *base, vf_error *err) {
  return ls_commit_segment((local_store *)base, err);
}

/* ---------------------------------------------------------------- reading */

static vf_status ls_open_segment_file(local_store *s, const char *name, pqt_file **f,
                                      vf_error *err) {
  char *p = path_join(s->dir, name);
  if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
  io_source *src = NULL;
  vf_status st = io_open_local(p, &src, err);
  free(p);
  if (st == VF_OK) st = pqt_open(src, NULL, f, err);
  return st;
}

/* leaf index of a top-level column, checking it is a single leaf */
static int ls_leaf_of(const pqt_file *f, const char *name) {
  int top = pqt_find_top(f, name);
  if (top < 0) return -1;
  const pqt_node *nd = &pqt_schema_of(f)->nodes[top];
  return nd->nleaves == 1 ? nd->first_leaf : -1;
}

static vf_status ls_id_at(const pqt_file *f, const pqt_leaf_data *d, int64_t row, int64_t first,
                          corpus_id *id, vf_error *err) {
  if (d->type != PQT_BYTE_ARRAY || d->nvalues != d->nrows || row >= d->nvalues)
    return vf_error_set(err, VF_ECORRUPT, "%s: column 'id' is not a required string column",
                        pqt_name(f));
  const char *p = (const char *)d->values.data + d->offsets[row];
  size_t len = (size_t)(d->offsets[row + 1] - d->offsets[row]);
  if (!store_id_parse(p, len, id))
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: row %lld: id '%.*s' is neither an integer nor a UUID", pqt_name(f),
                        (long long)(first + row), (int)(len > 64 ? 64 : len), p);
  return VF_OK;
}

static bool ls_view_current(local_store *s, char **names, int n) {
  ls_view *v = &s->view;
  if (!v->valid || v->nsegs != n) return false;
  for (int i = 0; i < n; i++) {
    if (strcmp(v->segs[i].name, names[i]) != 0) return false;
    char *p = path_join(s->dir, names[i]);
    struct stat sb;
    bool same = p && stat(p, &sb) == 0 && (uint64_t)sb.st_ino == v->segs[i].ino &&
                (uint64_t)sb.st_size == v->segs[i].size &&
                (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec == v->segs[i].mtime_ns;
    free(p);
    if (!same) return false;
  }
  return true;
}

/* Build (or reuse) the id table over every committed segment. */
static vf_status ls_view_build_once(local_store *s, vf_error *err) {
  char **names = NULL;
  int n = 0;
  vf_status st = ls_list(s, &names, &n, err);
  if (st != VF_OK) return st;
  if (ls_view_current(s, names, n)) {
    free_names(names, n);
    return VF_OK;
  }
  ls_view_free(&s->view);
  ls_view *v = &s->view;
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  if (n && !(v->segs = vf_calloc((size_t)n, sizeof *v->segs))) {
    st = vf_error_set(err, VF_ENOMEM, "out of memory");
    goto out;
  }
  vf_stage pg;
  vf_stage_begin(&pg, s->progress, "read ids", "segments", (uint64_t)n);
  for (int i = 0; i < n; i++) {
    if (s->progress) vf_stage_update(&pg, (uint64_t)i, NULL);
    if (s->progress && (st = vf_check_cancel(err)) != VF_OK) goto out;
    ls_seg *sg = &v->segs[i];
    sg->name = names[i];
    names[i] = NULL;
    v->nsegs = i + 1;
    char *p = path_join(s->dir, sg->name);
    struct stat sb;
    if (p && stat(p, &sb) == 0) {
      sg->ino = (uint64_t)sb.st_ino;
      sg->size = (uint64_t)sb.st_size;
      sg->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    }
    free(p);
    pqt_file *f = NULL;
    if ((st = ls_open_segment_file(s, sg->name, &f, err)) != VF_OK) goto out;
    int leaf = ls_leaf_of(f, "id");
    if (leaf < 0) {
      st = vf_error_set(err, VF_ECORRUPT, "%s: segment without an 'id' string column", pqt_name(f));
      pqt_close(f);
      goto out;
    }
    const pqt_file_meta *m = pqt_meta(f);
    int64_t row = 0;
    for (int g = 0; g < m->nrow_groups && st == VF_OK; g++) {
      if ((st = pqt_read_leaves(f, g, &leaf, 1, &d, err)) != VF_OK) break;
      for (int64_t r = 0; r < d.nrows && st == VF_OK; r++) {
        corpus_id id;
        if ((st = ls_id_at(f, &d, r, row, &id, err)) == VF_OK)
          st = ls_tab_put(v, &id, i, row + r, err);
      }
      row += d.nrows;
    }
    pqt_close(f);
    if (st != VF_OK) goto out;
    sg->nrows = row;
    v->total_rows += (uint64_t)row;
    if (row > 0 && !(sg->slot = vf_mallocarray((size_t)row, sizeof *sg->slot))) {
      st = vf_error_set(err, VF_ENOMEM, "out of memory for %lld rows", (long long)row);
      goto out;
    }
    for (int64_t r = 0; r < row; r++)
      sg->slot[r] = -1;
  }
  for (size_t e = 0; e < v->cap; e++)
    if (v->tab[e].seg >= 0) v->segs[v->tab[e].seg].slot[v->tab[e].row] = (int64_t)e;
  v->valid = true;
  s->view_gen++;
out:
  pqt_leaf_data_free(&d);
  free_names(names, n);
  if (st != VF_OK) ls_view_free(v);
  return st;
}

/* A segment listed but gone when opened was removed by a concurrent compaction: list again. */
static vf_status ls_view_build(local_store *s, vf_error *err) {
  vf_status st = VF_ENOTFOUND;
  for (int attempt = 0; attempt < 3 && st == VF_ENOTFOUND; attempt++)
    st = ls_view_build_once(s, err);
  return st;
}

static vf_status ls_count(store *base, bool exact, uint64_t *out, vf_error *err) {
  (void)exact;
  local_store *s = (local_store *)base;
  vf_status st = ls_verify(s, err);
  if (st == VF_OK) st = ls_view_build(s, err);
  if (st == VF_OK) *out = s->view.count;
  return st;
}

/* ------------------------------------------------------------------ search */

static void ls_cache_free(ls_cache *c) {
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
static vf_status ls_open_for_search(local_store *s, const ls_seg *sg, const char *vec,
                                    pqt_file **f, int *top, int *leaf, vf_error *err) {
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

/* Load vector j of every segment of the current view into the cache.  *use is false (and the
 * cache empty) when it would exceed the memory budget or cannot be allocated: the caller then
 * streams the segments instead. */
static vf_status ls_cache_load(local_store *s, int j, bool *use, vf_error *err) {
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
  pqt_leaf_data ld;
  pqt_leaf_data_init(&ld);
  pqt_dense dn;
  memset(&dn, 0, sizeof dn);
  size_t pos = 0;
  for (int si = 0; si < v->nsegs && st == VF_OK; si++) {
    const ls_seg *sg = &v->segs[si];
    pqt_file *f = NULL;
    int top = -1, leaf = -1;
    st = ls_open_for_search(s, sg, sp->name, &f, &top, &leaf, err);
    const pqt_file_meta *m = st == VF_OK ? pqt_meta(f) : NULL;
    int64_t row = 0;
    for (int g = 0; st == VF_OK && g < m->nrow_groups; g++) {
      int32_t gd = sp->dim;
      if ((st = pqt_read_leaves(f, g, &leaf, 1, &ld, err)) != VF_OK) break;
      if ((st = pqt_dense_from_leaf(f, top, &ld, row, &gd, &dn, err)) != VF_OK) break;
      size_t n = (size_t)dn.rows;
      if (row + dn.rows > sg->nrows) {
        st = vf_error_set(err, VF_ECORRUPT, "%s: more vector rows than ids", pqt_name(f));
        break;
      }
      if (c->ngroups == c->gcap) {
        size_t ncap = c->gcap ? c->gcap * 2 : 64;
        ls_group *t = vf_realloc(c->groups, ncap * sizeof *t);
        if (!t) {
          st = vf_error_set(err, VF_ENOMEM, "search: out of memory");
          break;
        }
        c->groups = t;
        c->gcap = ncap;
      }
      c->groups[c->ngroups++] = (ls_group){pos, n, si, row};
      float *dst = c->data + pos * d;
      if (n) memcpy(dst, dn.data, n * d * sizeof *dst);
      if (sp->distance == CORPUS_COSINE) idx_normalize_rows(dst, n, d);
      const int64_t *slots = sg->slot + row;
      for (size_t r = 0; r < n; r++)
        c->skip[pos + r] = slots[r] < 0 || (dn.null_rows && dn.null_rows[r]);
      pos += n;
      row += dn.rows;
    }
    pqt_close(f);
  }
  pqt_leaf_data_free(&ld);
  pqt_dense_free(&dn);
  if (st != VF_OK) {
    ls_cache_free(c);
    return st;
  }
  c->rows = pos;
  c->vec = j;
  c->gen = s->view_gen;
  c->valid = true;
  return VF_OK;
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

static vf_status ls_scan_cached(local_store *s, const store_vector_spec *sp, const float *q,
                                size_t nq, idx_topk *heaps, const uint8_t *const *qm,
                                vf_error *err) {
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
static vf_status ls_scan_stream(local_store *s, const store_vector_spec *sp, const float *q,
                                size_t nq, idx_topk *heaps, const uint8_t *const *qm,
                                vf_error *err) {
  uint8_t *qs = NULL;
  const ls_view *v = &s->view;
  size_t d = (size_t)sp->dim;
  float *scores = NULL;
  uint8_t *skip = NULL;
  pqt_leaf_data ld;
  pqt_leaf_data_init(&ld);
  pqt_dense dn;
  memset(&dn, 0, sizeof dn);
  vf_status st = VF_OK;
  for (int si = 0; si < v->nsegs && st == VF_OK; si++) {
    const ls_seg *sg = &v->segs[si];
    pqt_file *f = NULL;
    int top = -1, leaf = -1;
    st = ls_open_for_search(s, sg, sp->name, &f, &top, &leaf, err);
    const pqt_file_meta *m = st == VF_OK ? pqt_meta(f) : NULL;
    int64_t row = 0;
    for (int g = 0; st == VF_OK && g < m->nrow_groups; g++) {
      int32_t gd = sp->dim;
      if ((st = pqt_read_leaves(f, g, &leaf, 1, &ld, err)) != VF_OK) break;
      if ((st = pqt_dense_from_leaf(f, top, &ld, row, &gd, &dn, err)) != VF_OK) break;
      size_t rows = (size_t)dn.rows;
      if (row + dn.rows > sg->nrows) {
        st = vf_error_set(err, VF_ECORRUPT, "%s: more vector rows than ids", pqt_name(f));
        break;
      }
      float *sc = vf_realloc(scores, (rows ? rows : 1) * sizeof *sc);
      uint8_t *sk = vf_realloc(skip, rows ? rows : 1);
      uint8_t *qq = qm ? vf_realloc(qs, rows ? rows : 1) : NULL;
      if (sc) scores = sc;
      if (sk) skip = sk;
      if (qq) qs = qq;
      if (!sc || !sk || (qm && !qq)) {
        st = vf_error_set(err, VF_ENOMEM, "search: out of memory");
        break;
      }
      const int64_t *slots = sg->slot + row;
      for (size_t r = 0; r < rows; r++)
        skip[r] = slots[r] < 0 || (dn.null_rows && dn.null_rows[r]);
      if (sp->distance == CORPUS_COSINE) idx_normalize_rows(dn.data, rows, d);
      int64_t p0 = qm ? s->pbase[si] + row : 0;
      for (size_t qi = 0; qi < nq; qi++) {
        idx_scores(sp->distance, q + qi * d, dn.data, rows, d, scores);
        idx_topk_push_batch(&heaps[qi], scores, rows, slots, 0, ls_qskip(qm, qi, skip, rows, p0, qs));
      }
      row += dn.rows;
    }
    pqt_close(f);
  }
  free(scores);
  free(skip);
  free(qs);
  pqt_leaf_data_free(&ld);
  pqt_dense_free(&dn);
  return st;
}

/* ------------------------------------------------------------- IVF index */

/* The local store's IVF index (one per dense vector, built at finalize after compaction):
 *   index-<j>-<name>.ivf    the index file (ivf.h; written atomically by the builder)
 *   index-<j>-<name>.json   its manifest: the segments (name, size) it covers and the nprobe
 *                           searches use; written after the index, so an index without a
 *                           manifest is never used.
 * A search uses the index only while the collection holds exactly the manifest's segments;
 * after any later flush or compaction it falls back to the exact scan until the next finalize. */

#define LS_INDEX_MIN_ROWS 10000 /* default: smaller collections are searched exactly */

static vf_status ls_index_params_parse(local_store *s, const char *params_json, vf_error *err) {
  ls_index_params *ip = &s->ixp;
  memset(ip, 0, sizeof *ip);
  ip->type = IVF_SQ8;
  ip->min_rows = LS_INDEX_MIN_ROWS;
  if (!params_json || !*params_json) return VF_OK;
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  vf_status st = vf_json_parse(params_json, strlen(params_json), "vectorstore.params", &doc, err);
  if (st == VF_ECORRUPT) err->code = st = VF_ECONFIG;
  const vf_json_val *ix = st == VF_OK ? vf_json_get(&doc, "index") : NULL;
  if (ix && ix->t != VF_JSON_OBJ)
    st = vf_error_set(err, VF_ECONFIG, "vectorstore.params.index must be a mapping");
  static const char *const keys[] = {"type", "nlist", "nprobe", "pq_m", "rabitq_bits",
                                     "rerank", "min_rows", "seed", "pq_nbits", "iterations",
                                     "train_per_centroid", NULL};
  for (size_t i = 0; st == VF_OK && ix && i < ix->n; i++) {
    const char *k = ix->keys[i];
    const vf_json_val *v = &ix->items[i];
    int w = -1;
    for (int q = 0; keys[q]; q++)
      if (strcmp(k, keys[q]) == 0) w = q;
    if (w < 0) {
      st = vf_error_set(err, VF_ECONFIG, "vectorstore.params.index: unknown key '%s' (type, nlist, "
                        "nprobe, pq_m, pq_nbits, rabitq_bits, rerank, min_rows, seed, iterations, "
                        "train_per_centroid)", k);
    } else if (w == 0) {
      if (v->t != VF_JSON_STR || (strcmp(v->str, "none") != 0 && !ivf_code_parse(v->str, &ip->type)))
        st = vf_error_set(err, VF_ECONFIG, "vectorstore.params.index.type: expected flat, sq8, pq, "
                          "rabitq or none");
      else
        ip->none = strcmp(v->str, "none") == 0;
    } else {
      if (v->t != VF_JSON_NUM || v->num < 0 || v->num != (double)(uint64_t)v->num ||
          (w != 6 && w != 7 && v->num > 4294967295.0))
        st = vf_error_set(err, VF_ECONFIG, "vectorstore.params.index.%s: expected a non-negative "
                          "integer", k);
      else if (w == 1) ip->nlist = (uint32_t)v->num;
      else if (w == 2) ip->nprobe = (uint32_t)v->num;
      else if (w == 3) ip->pq_m = (uint32_t)v->num;
      else if (w == 4) ip->rabitq_bits = (uint32_t)v->num;
      else if (w == 5) ip->rerank = (uint32_t)v->num;
      else if (w == 6) ip->min_rows = (uint64_t)v->num;
      else if (w == 7) ip->seed = (uint64_t)v->num;
      else if (w == 9 && v->num > 1000000)
        st = vf_error_set(err, VF_ECONFIG, "vectorstore.params.index.iterations: at most 1000000");
      else if (w == 9) ip->iterations = (uint32_t)v->num;
      else if (w == 10) ip->train_per_centroid = (uint32_t)v->num;
      else if (v->num != 4 && v->num != 8)
        st = vf_error_set(err, VF_ECONFIG, "vectorstore.params.index.pq_nbits: expected 4 or 8");
      else ip->pq_nbits = (uint32_t)v->num;
    }
  }
  if (st == VF_OK && ip->pq_nbits && ip->type != IVF_PQ && !ip->none)
    st = vf_error_set(err, VF_ECONFIG, "vectorstore.params.index.pq_nbits needs type: pq");
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
  char *p = path_join(s->dir, name);
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
  char stage[96];
  snprintf(stage, sizeof stage, "index of '%.60s': read vectors", sp->name);
  vf_stage pg;
  vf_stage_begin(&pg, s->progress ? s->progress : "index build", stage, NULL, v->count);
  for (int si = 0; si < v->nsegs && st == VF_OK; si++) {
    const ls_seg *sg = &v->segs[si];
    pqt_file *f = NULL;
    int top = -1, leaves[2] = {-1, -1};
    st = ls_open_for_search(s, sg, sp->name, &f, &top, &leaves[1], err);
    if (st == VF_OK && (leaves[0] = ls_leaf_of(f, "id")) < 0)
      st = vf_error_set(err, VF_ECORRUPT, "%s: segment without an 'id' string column", pqt_name(f));
    const pqt_file_meta *m = st == VF_OK ? pqt_meta(f) : NULL;
    int64_t row = 0;
    for (int g = 0; st == VF_OK && g < m->nrow_groups; g++) {
      int32_t gd = sp->dim;
      if ((st = pqt_read_leaves(f, g, leaves, 2, ld, err)) != VF_OK) break;
      if ((st = pqt_dense_from_leaf(f, top, &ld[1], row, &gd, &dn, err)) != VF_OK) break;
      size_t n = (size_t)dn.rows;
      if (row + dn.rows > sg->nrows || ld[0].type != PQT_BYTE_ARRAY || ld[0].nvalues != dn.rows) {
        st = vf_error_set(err, VF_ECORRUPT, "%s: row group %d: the id and '%s' columns disagree",
                          pqt_name(f), g, sp->name);
        break;
      }
      if (n > cap) {
        free(keep);
        free(ids);
        free(lens);
        keep = vf_mallocarray(n, d * sizeof *keep);
        ids = vf_mallocarray(n, sizeof *ids);
        lens = vf_mallocarray(n, sizeof *lens);
        cap = keep && ids && lens ? n : 0;
        if (!cap) {
          st = vf_error_set(err, VF_ENOMEM, "index build: out of memory for %zu rows", n);
          break;
        }
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
    }
    pqt_close(f);
  }
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

/* Build (or drop) the index of every dense vector over the current view. */
static vf_status ls_build_indexes(local_store *s, vf_error *err) {
  const ls_index_params *ip = &s->ixp;
  vf_status st = ls_view_build(s, err);
  uint64_t n = s->view.count;
  for (int j = 0; st == VF_OK && j < s->base.nvectors; j++) {
    const store_vector_spec *sp = &s->base.vectors[j];
    if (sp->kind != CORPUS_VEC_DENSE) continue;
    char *path = ls_index_path(s, j, "ivf"), *mpath = ls_index_path(s, j, "json");
    if (!path || !mpath) st = vf_error_set(err, VF_ENOMEM, "out of memory");
    /* the old manifest goes first: no search may pair it with a half-replaced index */
    if (st == VF_OK) st = ls_unlink_quiet(mpath, err);
    if (st == VF_OK) st = ls_unlink_quiet(path, err);
    const char *why = ip->none                         ? "params.index.type is none"
                      : n < ip->min_rows               ? "fewer points than params.index.min_rows"
                      : sp->distance == CORPUS_MANHATTAN ? "IVF indexes do not support manhattan"
                                                         : NULL;
    if (st == VF_OK && why) {
      vf_log(VF_LOG_INFO, "collection '%s': no index for '%s' (%s; %llu points): searches scan "
             "exactly", s->base.collection, sp->name, why, (unsigned long long)n);
    } else if (st == VF_OK) {
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
      ivf_builder *b = NULL;
      uint64_t added = 0;
      double t0 = vf_now();
      st = ivf_builder_open(&p, path, n, &b, err);
      if (st == VF_OK) st = ls_index_feed(s, j, b, &added, err);
      ivf_build_report rep;
      memset(&rep, 0, sizeof rep);
      if (st == VF_OK) {
        st = ivf_builder_finish(b, &rep, err);
        b = NULL;
      }
      ivf_builder_abort(b);
      uint32_t nprobe = ip->nprobe ? ip->nprobe : ivf_default_nprobe(rep.nlist);
      if (nprobe > rep.nlist) nprobe = rep.nlist;
      vf_buf mj;
      vf_buf_init(&mj, 0);
      if (st == VF_OK)
        st = vf_buf_printf(&mj, err, "{\"vector\":%d,\"type\":\"%s\",\"nlist\":%u,\"nprobe\":%u,"
                           "\"rows\":%llu,\"segments\":[", j, ivf_code_name(rep.type), rep.nlist,
                           nprobe, (unsigned long long)rep.rows);
      for (int i = 0; st == VF_OK && i < s->view.nsegs; i++) {
        st = vf_buf_printf(&mj, err, "%s{\"name\":", i ? "," : "");
        if (st == VF_OK) st = vf_json_string(&mj, s->view.segs[i].name, strlen(s->view.segs[i].name), err);
        if (st == VF_OK) st = vf_buf_printf(&mj, err, ",\"size\":%llu}", (unsigned long long)s->view.segs[i].size);
      }
      if (st == VF_OK) st = vf_json_raw(&mj, "]}\n", err);
      if (st == VF_OK) st = vf_atomic_write_file(mpath, mj.data, mj.len, err);
      vf_buf_free(&mj);
      if (st == VF_OK)
        vf_log(VF_LOG_INFO, "collection '%s': built the %s IVF index of '%s' (%llu points, nlist %u, "
               "searches scan %u lists) in %.1f s (read %.1f s, k-means %.1f s: %d iterations on "
               "%llu rows, assign + encode %.1f s, write %.1f s)", s->base.collection,
               ivf_code_name(rep.type), sp->name, (unsigned long long)added, rep.nlist, nprobe,
               vf_now() - t0, rep.seconds_read, rep.seconds_train, rep.kmeans_iterations,
               (unsigned long long)rep.kmeans_rows, rep.seconds_assign, rep.seconds_write);
      else if (st != VF_ECANCELED)
        vf_error_prefix(err, "collection '%s': index of '%s': ", s->base.collection, sp->name);
    }
    free(path);
    free(mpath);
  }
  s->ix_valid = false; /* searches look at the manifests again */
  return st;
}

/* Open the index of vector j when its manifest matches the view (else *ix stays NULL). */
static vf_status ls_index_load(local_store *s, int j, vf_error *err) {
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
  vf_status st = !mpath || !path ? vf_error_set(err, VF_ENOMEM, "out of memory")
                                 : read_small_file(mpath, &text, &len, err);
  if (st == VF_ENOTFOUND) {
    st = VF_OK; /* no index: exact scan */
    goto out;
  }
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  if (st == VF_OK) st = vf_json_parse(text, len, mpath, &doc, err);
  const vf_json_val *segs = st == VF_OK ? vf_json_get(&doc, "segments") : NULL;
  const vf_json_val *np = st == VF_OK ? vf_json_get(&doc, "nprobe") : NULL;
  bool same = segs && segs->t == VF_JSON_ARR && np && np->t == VF_JSON_NUM && np->num >= 1 &&
              segs->n == (size_t)s->view.nsegs;
  for (int i = 0; same && i < s->view.nsegs; i++) {
    const vf_json_val *nm = vf_json_get(&segs->items[i], "name"), *sz = vf_json_get(&segs->items[i], "size");
    same = nm && nm->t == VF_JSON_STR && strcmp(nm->str, s->view.segs[i].name) == 0 && sz &&
           sz->t == VF_JSON_NUM && sz->num == (double)s->view.segs[i].size;
  }
  if (st == VF_OK && !same) {
    vf_log(VF_LOG_INFO, "collection '%s': the index of '%s' predates the current segments: "
           "searching exactly until the next finalize", s->base.collection, s->base.vectors[j].name);
  } else if (st == VF_OK) {
    s->ix_nprobe = s->ixp.nprobe ? s->ixp.nprobe : (uint32_t)np->num;
    st = ivf_open(path, &s->ix, err);
    ivf_info in;
    if (st == VF_OK) {
      ivf_info_get(s->ix, &in);
      if (in.dim != s->base.vectors[j].dim || in.metric != s->base.vectors[j].distance) {
        st = vf_error_set(err, VF_ECORRUPT, "%s: dimension %d / metric %s differ from vector '%s'",
                          path, (int)in.dim, idx_metric_name(in.metric), s->base.vectors[j].name);
        ivf_close(s->ix);
        s->ix = NULL;
      }
    }
    if (st == VF_OK && !s->ix_logged) {
      vf_log(VF_LOG_INFO, "collection '%s': searching '%s' with its %s IVF index (%llu points, "
             "nlist %u, nprobe %u%s)", s->base.collection, s->base.vectors[j].name,
             ivf_code_name(in.type), (unsigned long long)in.rows, in.nlist,
             s->req_nprobe ? s->req_nprobe : s->ix_nprobe, s->req_nprobe ? " as asked for" : "");
      s->ix_logged = true;
    }
  }
  vf_json_free(&doc);
out:
  if (st != VF_OK) s->ix_valid = false;
  free(text);
  free(mpath);
  free(path);
  return st;
}

/* Search vector j through the open index: queries [q0, q0 + nq) of `out` (allocated by the
 * caller), allow[q] the filter's index rows of query q0 + q (allow NULL: none). */
static vf_status ls_index_search(local_store *s, const float *queries, size_t q0, size_t nq,
                                 int32_t dim, size_t k, const uint8_t *const *allow,
                                 store_results *out, vf_error *err) {
  idx_hit *hits = vf_mallocarray(nq ? nq * k : 1, sizeof *hits);
  size_t *counts = vf_calloc(nq ? nq : 1, sizeof *counts);
  vf_status st = VF_OK;
  if (!hits || !counts)
    st = vf_error_set(err, VF_ENOMEM, "search: out of memory (%zu queries, k = %zu)", nq, k);
  ivf_search_opts so = {.nprobe = s->req_nprobe ? s->req_nprobe : s->ix_nprobe, .threads = 0,
                        .rerank = 0, .allow = allow};
  if (st == VF_OK) st = ivf_search(s->ix, queries + q0 * (size_t)dim, nq, dim, k, &so, hits, counts, err);
  for (size_t q = 0; st == VF_OK && q < nq; q++) {
    out->counts[q0 + q] = counts[q];
    for (size_t i = 0; i < counts[q] && st == VF_OK; i++) {
      size_t len = 0;
      const char *id = ivf_id(s->ix, hits[q * k + i].key, &len);
      store_hit *h = &out->hits[(q0 + q) * k + i];
      h->score = hits[q * k + i].score;
      if (!store_id_parse(id, len, &h->id))
        st = vf_error_set(err, VF_ECORRUPT, "collection '%s': index row %lld has the id '%.*s', "
                          "neither an integer nor a UUID", s->base.collection,
                          (long long)hits[q * k + i].key, (int)(len > 64 ? 64 : len), id);
    }
  }
  free(hits);
  free(counts);
  return st;
}

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
  for (int si = 0; si < v->nsegs && st == VF_OK; si++) {
    const ls_seg *sg = &v->segs[si];
    pqt_file *f = NULL;
    st = ls_open_segment_file(s, sg->name, &f, err);
    int leaf = st == VF_OK ? ls_leaf_of(f, "payload") : -1;
    const pqt_file_meta *m = st == VF_OK ? pqt_meta(f) : NULL;
    int64_t row = 0;
    for (int g = 0; st == VF_OK && g < m->nrow_groups; g++) {
      int64_t nr = m->row_groups[g].num_rows;
      if (nr < 0 || row + nr > sg->nrows) {
        st = vf_error_set(err, VF_EIO, "%s: the segment changed while searching; search again", pqt_name(f));
        break;
      }
      if ((size_t)nr + 1 > ocap) {
        int64_t *no = vf_realloc(offs, ((size_t)nr + 1) * sizeof *no);
        if (!no) {
          st = vf_error_set(err, VF_ENOMEM, "search: out of memory");
          break;
        }
        offs = no;
        ocap = (size_t)nr + 1;
      }
      const char *text = "";
      memset(offs, 0, ((size_t)nr + 1) * sizeof *offs);
      if (leaf >= 0) { /* null payload (a point without one): an empty row */
        if ((st = pqt_read_leaves(f, g, &leaf, 1, &ld, err)) != VF_OK) break;
        if (ld.nlevels != nr) {
          st = vf_error_set(err, VF_ECORRUPT, "%s: row group %d: %lld payloads for %lld rows",
                            pqt_name(f), g, (long long)ld.nlevels, (long long)nr);
          break;
        }
        int16_t maxd = pqt_schema_of(f)->leaves[leaf].max_def;
        int64_t vi = 0;
        offs[0] = ld.nvalues ? ld.offsets[0] : 0;
        for (int64_t r = 0; r < nr; r++) {
          bool has = !ld.def || ld.def[r] == maxd;
          offs[r + 1] = has ? ld.offsets[++vi] : offs[r];
        }
        text = (const char *)ld.values.data;
      }
      st = flt_docs_add(s->pdocs, text, offs, (size_t)nr, pqt_name(f), err);
      row += nr;
    }
    pqt_close(f);
    if (st == VF_OK && row != sg->nrows)
      st = vf_error_set(err, VF_EIO, "%s: the segment changed while searching; search again", sg->name);
    s->pbase[si + 1] = s->pbase[si] + row;
  }
  pqt_leaf_data_free(&ld);
  free(offs);
  if (st != VF_OK) return st;
  s->pdocs_gen = s->view_gen;
  s->pdocs_valid = true;
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
static int64_t ls_tab_find(const ls_view *v, const corpus_id *id) {
  if (!v->cap) return -1;
  uint64_t a, b;
  ls_key_of(id, &a, &b);
  uint8_t u = id->is_uuid ? 1 : 0;
  size_t h = ls_hash(a, b, u) & (v->cap - 1);
  while (v->tab[h].seg >= 0) {
    const ls_entry *e = &v->tab[h];
    if (e->a == a && e->b == b && e->is_uuid == u) return (int64_t)h;
    h = (h + 1) & (v->cap - 1);
  }
  return -1;
}

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

static vf_status ls_search_impl(store *base, const char *vector, const float *queries, size_t nq,
                                int32_t dim, size_t k, const flt_filter *const *filters,
                                store_results *out, vf_error *err);

static vf_status ls_search(store *base, const char *vector, const float *queries, size_t nq,
                           int32_t dim, size_t k, store_results *out, vf_error *err) {
  return ls_search_impl(base, vector, queries, nq, dim, k, NULL, out, err);
}

static vf_status ls_search_impl(store *base, const char *vector, const float *queries, size_t nq,
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
                        sp->name, kind_text(sp->kind));
  if (dim != sp->dim)
    return vf_error_set(err, VF_EUSAGE, "search: queries have dimension %d, vector '%s' has %d",
                        (int)dim, sp->name, (int)sp->dim);
  vf_status st = ls_verify(s, err);
  if (st == VF_OK) st = ls_view_build(s, err);
  if (st == VF_OK) st = ls_index_load(s, j, err);
  if (st == VF_OK && filters) st = ls_payload_load(s, err);
  if (st == VF_OK && filters && s->ix) st = ls_ix_map(s, err);
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
    for (size_t q0 = 0; st == VF_OK && q0 < nq; q0 += chunk) {
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
      st = ls_index_search(s, queries, q0, qn, dim, k, filters ? (const uint8_t *const *)allow : NULL, out, err);
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
    if ((st = idx_topk_init(&heaps[nheaps], k, ls_entry_cmp, v->tab, err)) != VF_OK) goto out;
  for (size_t q0 = 0; st == VF_OK && q0 < nq; q0 += chunk) {
    size_t qn = nq - q0 < chunk ? nq - q0 : chunk;
    if (filters) ls_masks(s, filters, q0, qn, mbuf, masks);
    const uint8_t *const *qm = filters ? (const uint8_t *const *)masks : NULL;
    st = cached ? ls_scan_cached(s, sp, q + q0 * d, qn, heaps + q0, qm, err)
                : ls_scan_stream(s, sp, q + q0 * d, qn, heaps + q0, qm, err);
  }
  if (st != VF_OK) goto out;
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
  char *path = path_join(s->dir, sg->name);
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
    vf_buf_init(&cb[i].bytes, 0);
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
static vf_status ls_compact(local_store *s, vf_error *err) {
  vf_status st = ls_commit_segment(s, err);
  if (st != VF_OK) return st;
  if ((st = ls_verify(s, err)) != VF_OK) return st;
  int fd;
  if ((st = ls_lock_exclusive(s, "finalize (compaction)", &fd, err)) != VF_OK) return st;
  s->view.valid = false;
  if ((st = ls_view_build(s, err)) == VF_OK && s->view.total_rows != s->view.count) {
    uint64_t before = s->view.total_rows;
    vf_stage pg;
    vf_stage_begin(&pg, s->progress, "compact", "segments", (uint64_t)s->view.nsegs);
    for (int i = 0; i < s->view.nsegs && st == VF_OK; i++) {
      if (s->progress)
        vf_stage_update(&pg, (uint64_t)i, "%llu rows to %llu points", (unsigned long long)before,
                        (unsigned long long)s->view.count);
      if ((st = vf_check_cancel(err)) != VF_OK) break;
      ls_seg *sg = &s->view.segs[i];
      int64_t winners = 0;
      for (int64_t r = 0; r < sg->nrows; r++)
        winners += sg->slot[r] >= 0;
      if (winners == sg->nrows) continue;
      if (winners == 0) {
        char *p = path_join(s->dir, sg->name);
        if (!p)
          st = vf_error_set(err, VF_ENOMEM, "out of memory");
        else if (unlink(p) != 0)
          st = vf_error_set(err, VF_EIO, "%s: cannot remove: %s", p, VF_STRERROR(errno));
        free(p);
      } else {
        st = ls_rewrite_segment(s, sg, err);
      }
    }
    if (st == VF_OK && s->progress)
      vf_stage_update(&pg, (uint64_t)s->view.nsegs, "%llu rows to %llu points",
                      (unsigned long long)before, (unsigned long long)s->view.count);
    if (st == VF_OK)
      vf_log(VF_LOG_INFO, "collection '%s': compacted %llu rows to %llu points", s->base.collection,
             (unsigned long long)before, (unsigned long long)s->view.count);
    s->view.valid = false;
  }
  close(fd);
  return st;
}

static vf_status ls_defer_indexing(store *base, vf_error *err) {
  (void)err;
  (void)base;
  return VF_OK; /* nothing is indexed while loading: the index is built at finalize */
}

static vf_status ls_enable_indexing(store *base, vf_error *err) {
  local_store *s = (local_store *)base;
  s->progress = "finalize";
  vf_status st = ls_compact(s, err);
  if (st == VF_OK) st = ls_build_indexes(s, err);
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
  vf_status st = ls_verify(s, err);
  if (st == VF_OK) st = read_small_file(s->json_path, &have, &len, err);
  size_t e = st == VF_OK ? ls_spec_end(have) : 0;
  if (st == VF_OK && !e)
    st = vf_error_set(err, VF_ECORRUPT, "%s: no vectors list to record the corpus after",
                      s->json_path);
  vf_buf b;
  vf_buf_init(&b, LS_MAX_JSON);
  if (st == VF_OK) st = vf_buf_append(&b, have, e, err);
  if (st == VF_OK) st = vf_json_raw(&b, ",\n \"corpus\": ", err);
  if (st == VF_OK) st = store_record_json(&b, r, err);
  if (st == VF_OK)
    st = vf_buf_printf(&b, err, ",\n \"load\": \"%s\"}\n",
                       r->load_finished ? "finalized" : "in progress");
  if (st == VF_OK) st = vf_atomic_write_file(s->json_path, b.data, b.len, err);
  vf_buf_free(&b);
  free(have);
  return st;
}

static vf_status ls_get_record(store *base, store_record *out, bool *found, vf_error *err) {
  local_store *s = (local_store *)base;
  char *have = NULL;
  size_t len = 0;
  vf_status st = ls_verify(s, err);
  if (st == VF_OK) st = read_small_file(s->json_path, &have, &len, err);
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  if (st == VF_OK) st = vf_json_parse(have, len, s->json_path, &doc, err);
  if (st == VF_OK) {
    const vf_json_val *c = vf_json_get(&doc, "corpus"), *l = vf_json_get(&doc, "load");
    *found = c && store_record_from_json(c, out);
    out->load_finished = !(l && l->t == VF_JSON_STR && strcmp(l->str, "finalized") != 0);
  }
  vf_json_free(&doc);
  free(have);
  return st;
}

static vf_status ls_contains(store *base, const corpus_id *ids, size_t n, bool *found,
                             vf_error *err) {
  local_store *s = (local_store *)base;
  vf_status st = ls_verify(s, err);
  if (st == VF_OK) st = ls_view_build(s, err);
  const ls_view *v = &s->view;
  for (size_t i = 0; st == VF_OK && i < n && v->cap; i++) {
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
  vf_buf_init(&s->idtext, 0);
  vf_buf_init(&s->sparse, 0);
  vf_status st = store_head_init(&s->base, &local_vt, cfg, err);
  if (st != VF_OK) goto fail;
  for (int j = 0; j < s->base.nvectors; j++) {
    const char *n = s->base.vectors[j].name;
    if (strcmp(n, "id") == 0 || strcmp(n, "id_num") == 0 || strcmp(n, "payload") == 0) {
      st = vf_error_set(err, VF_ECONFIG,
                        "vectors.%s: the local store reserves the column names id, id_num and "
                        "payload; rename the vector",
                        n);
      goto fail;
    }
  }
  if (cfg->segment_rows < 0 || cfg->row_group_bytes < 0) {
    st = vf_error_set(err, VF_ECONFIG, "local store: negative segment_rows or row_group_bytes");
    goto fail;
  }
  s->segment_rows = cfg->segment_rows ? cfg->segment_rows : LS_DEFAULT_SEGMENT_ROWS;
  s->rg_bytes = cfg->row_group_bytes ? cfg->row_group_bytes : LS_DEFAULT_RG_BYTES;
  s->recreate_pending = cfg->recreate;
  if ((st = ls_index_params_parse(s, cfg->params_json, err)) != VF_OK) goto fail;
  const char *root = cfg->path && *cfg->path ? cfg->path : LS_DEFAULT_PATH;
  if (!(s->dir = path_join(root, s->base.collection)) ||
      !(s->json_path = path_join(s->dir, "collection.json")) ||
      !(s->lock_path = path_join(s->dir, ".lock")) || !(s->seq_path = path_join(s->dir, ".seq")))
    goto nomem;
  s->ncols = LS_FIXED_COLS + s->base.nvectors + 1;
  if (!(s->cols = vf_calloc((size_t)s->ncols, sizeof *s->cols)) ||
      !(s->wb = vf_calloc((size_t)s->ncols, sizeof *s->wb)) ||
      !(s->map = vf_calloc((size_t)s->base.nvectors, sizeof *s->map)))
    goto nomem;
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
    if (!s->cols[i].name) goto nomem;
  ls_writer_id(s->writer_id, sizeof s->writer_id);
  *out = &s->base;
  return VF_OK;
nomem:
  st = vf_error_set(err, VF_ENOMEM, "local store: out of memory");
fail:
  ls_close(&s->base);
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
  if (st == VF_OK) vf_log(VF_LOG_INFO, "local store: dropped collection '%s' (%s)", base->collection, s->dir);
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
