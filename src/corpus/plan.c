/*
 * plan.c — the corpus plan's seed (include/vforge/corpus.h "the corpus plan"): the one place that
 * decides which files a command skips (those with no rows) and which file a vector's dimension
 * is taken from (the first with rows).
 *
 * Why one place: a 0-row parquet file is normal output of partitioned writers (Spark writes one
 * per empty partition, DuckDB's PARTITION_BY and per-thread writes too), and before this each
 * command met it differently — `load` took the dimension from the first file and refused an
 * empty one, scan and brute-force read it as nothing.  Every command now reports its files'
 * rows here, so the rule and its log lines are the same everywhere.
 *
 * Footers parsed once: while a plan is alive, every parquet file a command opens through
 * corpus_open_parquet() keeps its parsed footer (pqt_footer, format.h) in the plans' footer
 * cache, keyed by URI and size, and every later reader of that file opens over it
 * (pqt_open_footer) without reading or parsing the footer again.  Before this, planning and each
 * work unit's reader fetched the tail of every file anew (a request per open remotely; the
 * 64-slot byte cache in httpsrc.c hid that only up to 64 files).  The cache holds at most
 * PLAN_FOOTER_CACHE_MAX bytes of parsed metadata; past that the least recently used footer is
 * dropped and read again on demand (correct, just slower).  It is emptied when the last live
 * plan is freed, so a file rewritten between two commands of one process is read afresh.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vforge/corpus.h"
#include "vforge/format.h"

#define PLAN_EMPTY_LOGGED 5 /* empty files named at info level; the rest at debug */
/* parsed footers kept at most (their heap, pqt_footer_bytes): 64 MiB holds the footers of
 * ~100k typical files (a few hundred bytes to a few KiB each) */
#define PLAN_FOOTER_CACHE_MAX ((size_t)64 << 20)
#define PLAN_FOOTER_BUCKETS 4096

/* ------------------------------------------------------------ the footer cache */

typedef struct plan_footer {
  char *uri;
  uint64_t size;
  pqt_footer *ft;
  size_t bytes;
  int refs;     /* readers opening over it now */
  bool dropped; /* out of the cache; the last reader frees it */
  struct plan_footer *hnext;       /* bucket chain */
  struct plan_footer *prev, *next; /* recency: head most recent */
} plan_footer;

static struct {
  pthread_mutex_t mu;
  int plans; /* live plans: footers are kept while one is */
  plan_footer *bucket[PLAN_FOOTER_BUCKETS];
  plan_footer *head, *tail;
  size_t bytes, max;
  corpus_footer_stats stats;
} g_pf = {.mu = PTHREAD_MUTEX_INITIALIZER, .max = PLAN_FOOTER_CACHE_MAX};

static size_t pf_hash(const char *uri, uint64_t size) {
  uint64_t h = 1469598103934665603ull ^ size;
  for (const unsigned char *c = (const unsigned char *)uri; *c; c++)
    h = (h ^ *c) * 1099511628211ull;
  return (size_t)(h % PLAN_FOOTER_BUCKETS);
}

static void pf_free(plan_footer *e) {
  pqt_footer_free(e->ft);
  free(e->uri);
  free(e);
}

/* Out of the hash and the recency list; freed now unless a reader holds it.  Under mu. */
static void pf_drop(plan_footer *e) {
  plan_footer **pp = &g_pf.bucket[pf_hash(e->uri, e->size)];
  while (*pp != e)
    pp = &(*pp)->hnext;
  *pp = e->hnext;
  if (e->prev) e->prev->next = e->next;
  else g_pf.head = e->next;
  if (e->next) e->next->prev = e->prev;
  else g_pf.tail = e->prev;
  g_pf.bytes -= e->bytes;
  e->dropped = true;
  if (e->refs == 0) pf_free(e);
}

static plan_footer *pf_get(const char *uri, uint64_t size) {
  pthread_mutex_lock(&g_pf.mu);
  g_pf.stats.opened++;
  plan_footer *e = g_pf.bucket[pf_hash(uri, size)];
  while (e && (e->size != size || strcmp(e->uri, uri) != 0))
    e = e->hnext;
  if (e) {
    e->refs++;
    g_pf.stats.hits++;
    if (e != g_pf.head) { /* most recent first */
      e->prev->next = e->next;
      if (e->next) e->next->prev = e->prev;
      else g_pf.tail = e->prev;
      e->prev = NULL;
      e->next = g_pf.head;
      g_pf.head->prev = e;
      g_pf.head = e;
    }
  }
  pthread_mutex_unlock(&g_pf.mu);
  return e;
}

static void pf_release(plan_footer *e) {
  pthread_mutex_lock(&g_pf.mu);
  bool last = --e->refs == 0 && e->dropped;
  pthread_mutex_unlock(&g_pf.mu);
  if (last) pf_free(e);
}

/* Keep f's footer (opened from `uri`) while a plan is alive and it fits under the cap. */
static void pf_keep(const char *uri, const pqt_file *f) {
  pthread_mutex_lock(&g_pf.mu);
  bool live = g_pf.plans > 0;
  pthread_mutex_unlock(&g_pf.mu);
  if (!live) return;
  vf_error ignored = {0};
  plan_footer *e = vf_calloc(1, sizeof *e);
  if (!e || !(e->uri = vf_strdup(uri)) || pqt_footer_of(f, &e->ft, &ignored) != VF_OK) {
    if (e) pf_free(e); /* not kept: later readers read the footer again */
    return;
  }
  e->size = pqt_footer_size(e->ft);
  e->bytes = pqt_footer_bytes(e->ft) + sizeof *e + strlen(uri) + 1;
  pthread_mutex_lock(&g_pf.mu);
  size_t b = pf_hash(uri, e->size);
  plan_footer *dup = g_pf.bucket[b];
  while (dup && (dup->size != e->size || strcmp(dup->uri, uri) != 0))
    dup = dup->hnext;
  bool keep = g_pf.plans > 0 && !dup && e->bytes <= g_pf.max;
  if (keep) {
    e->hnext = g_pf.bucket[b];
    g_pf.bucket[b] = e;
    e->next = g_pf.head;
    if (g_pf.head) g_pf.head->prev = e;
    else g_pf.tail = e;
    g_pf.head = e;
    g_pf.bytes += e->bytes;
    g_pf.stats.parsed++;
    while (g_pf.bytes > g_pf.max) {
      g_pf.stats.dropped++;
      pf_drop(g_pf.tail);
    }
    if (g_pf.bytes > g_pf.stats.max_bytes) g_pf.stats.max_bytes = g_pf.bytes;
  }
  pthread_mutex_unlock(&g_pf.mu);
  if (!keep) pf_free(e);
}

/* corpus_open_parquet(): see corpus.h. */
vf_status corpus_open_parquet(const corpus_file *file, const pqt_open_opts *opts, pqt_file **out,
                              vf_error *err) {
  *out = NULL;
  io_source *src = NULL;
  vf_status st = corpus_open(file, &src, err);
  if (st != VF_OK) return st;
  plan_footer *e = pf_get(file->uri, src->size); /* counts `opened` */
  if (e) {
    st = pqt_open_footer(src, e->ft, opts, out, err); /* takes src, also on failure */
    pf_release(e);
    return st;
  }
  st = pqt_open(src, opts, out, err); /* takes src, also on failure */
  if (st != VF_OK) return st;
  pf_keep(file->uri, *out);
  return VF_OK;
}

/* corpus_footer_cache_stats(): see corpus.h. */
corpus_footer_stats corpus_footer_cache_stats(void) {
  pthread_mutex_lock(&g_pf.mu);
  corpus_footer_stats s = g_pf.stats;
  s.bytes = g_pf.bytes;
  pthread_mutex_unlock(&g_pf.mu);
  return s;
}

/* corpus_footer_cache_set_max(): see corpus.h. */
void corpus_footer_cache_set_max(size_t max) {
  pthread_mutex_lock(&g_pf.mu);
  g_pf.max = max ? max : PLAN_FOOTER_CACHE_MAX;
  while (g_pf.bytes > g_pf.max)
    pf_drop(g_pf.tail);
  pthread_mutex_unlock(&g_pf.mu);
}

/* ------------------------------------------------------------ rows and skipped files */

/* corpus_plan_init(): see corpus.h. */
vf_status corpus_plan_init(corpus_plan *p, const corpus_files *files, vf_error *err) {
  memset(p, 0, sizeof *p);
  p->files = files;
  p->schema_file = files->n;
  p->rows = vf_mallocarray(files->n + 1, sizeof *p->rows);
  p->row_groups = vf_mallocarray(files->n + 1, sizeof *p->row_groups);
  p->rg_rows = vf_calloc(files->n + 1, sizeof *p->rg_rows);
  if (!p->rows || !p->row_groups || !p->rg_rows) {
    free(p->rows);
    free(p->row_groups);
    free(p->rg_rows);
    memset(p, 0, sizeof *p);
    return vf_error_set(err, VF_ENOMEM, "out of memory planning %zu files", files->n);
  }
  for (size_t i = 0; i <= files->n; i++) {
    p->rows[i] = CORPUS_PLAN_UNMEASURED;
    p->row_groups[i] = -1;
  }
  pthread_mutex_lock(&g_pf.mu);
  g_pf.plans++;
  g_pf.stats.plans++;
  pthread_mutex_unlock(&g_pf.mu);
  p->live = true;
  return VF_OK;
}

/* corpus_plan_free(): see corpus.h. */
void corpus_plan_free(corpus_plan *p) {
  if (!p) return;
  if (p->live) {
    pthread_mutex_lock(&g_pf.mu);
    if (--g_pf.plans == 0) /* the last plan: nothing keeps footers any more */
      while (g_pf.tail)
        pf_drop(g_pf.tail);
    pthread_mutex_unlock(&g_pf.mu);
  }
  for (size_t i = 0; p->rg_rows && p->files && i < p->files->n; i++)
    free(p->rg_rows[i]);
  free(p->rg_rows);
  free(p->row_groups);
  for (int i = 0; i < p->ncolumns; i++)
    free(p->columns[i]);
  free(p->columns);
  free(p->dense_columns);
  free(p->rows);
  memset(p, 0, sizeof *p);
}

/* corpus_plan_note_rows(): see corpus.h. */
bool corpus_plan_note_rows(corpus_plan *p, size_t i, uint64_t rows) {
  if (i >= p->files->n) return false;
  if (p->rows[i] == CORPUS_PLAN_UNMEASURED) {
    p->rows[i] = rows;
    p->measured++;
    p->total_rows += rows;
    if (rows == 0) {
      p->empty++;
      const char *key = p->files->files[i].key ? p->files->files[i].key : p->files->files[i].uri;
      if (p->empty <= PLAN_EMPTY_LOGGED)
        vf_log(VF_LOG_INFO, "%s: the file has no rows; reading skips it%s", key,
               p->empty == PLAN_EMPTY_LOGGED ? " (further empty files are skipped silently; "
                                                "the summary counts them)"
                                             : "");
      else
        vf_log(VF_LOG_DEBUG, "%s: the file has no rows; reading skips it", key);
    }
  }
  return p->rows[i] == 0;
}

/* corpus_plan_skips(): see corpus.h. */
bool corpus_plan_skips(const corpus_plan *p, size_t i) {
  return i < p->files->n && p->rows[i] == 0;
}

/* corpus_file_rows(): see corpus.h. */
vf_status corpus_file_rows(const corpus_file *f, uint64_t *rows, vf_error *err) {
  *rows = 0;
  if (f->dataset) {
    *rows = corpus_dataset_part_rows(f);
    return VF_OK;
  }
  pqt_file *pf = NULL;
  vf_status st = corpus_open_parquet(f, NULL, &pf, err);
  if (st != VF_OK) return st;
  int64_t n = pqt_meta(pf)->num_rows;
  pqt_close(pf);
  if (n < 0) return vf_error_set(err, VF_ECORRUPT, "%s: negative row count %" PRId64, f->uri, n);
  *rows = (uint64_t)n;
  return VF_OK;
}

/* corpus_plan_written_row_groups(): see internal.h. */
vf_status corpus_plan_written_row_groups(const pqt_file *f, int *n, uint64_t **each, vf_error *err) {
  const pqt_file_meta *m = pqt_meta(f);
  int w = pqt_written_row_groups(f);
  *n = -1;
  *each = vf_calloc((size_t)(w > 0 ? w : 0) + 1, sizeof **each);
  if (!*each) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (int g = 0; g < m->nrow_groups; g++) {
    int k = pqt_written_row_group(f, g, NULL, NULL);
    if (k >= 0 && k < w && m->row_groups[g].num_rows > 0) (*each)[k] += (uint64_t)m->row_groups[g].num_rows;
  }
  *n = w;
  return VF_OK;
}

/* File i's rows (once, through corpus_plan_note_rows) and row groups: one footer read, which the
 * cache keeps for the readers that follow. */
static vf_status measure_one(corpus_plan *p, size_t i, vf_error *err) {
  if (p->rows[i] != CORPUS_PLAN_UNMEASURED && p->row_groups[i] >= 0) return VF_OK;
  const corpus_file *f = &p->files->files[i];
  vf_status st = VF_OK;
  pqt_file *pf = NULL;
  uint64_t rows = 0;
  if (f->dataset) {
    rows = corpus_dataset_part_rows(f);
    VF_TRY(corpus_dataset_part_row_groups(f, &p->row_groups[i], &p->rg_rows[i], err));
  } else {
    VF_TRY(corpus_open_parquet(f, NULL, &pf, err));
    int64_t n = pqt_meta(pf)->num_rows;
    if (n < 0) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: negative row count %" PRId64, f->uri, n));
    rows = (uint64_t)n;
    VF_TRY(corpus_plan_written_row_groups(pf, &p->row_groups[i], &p->rg_rows[i], err));
  }
  corpus_plan_note_rows(p, i, rows);
  pthread_mutex_lock(&g_pf.mu);
  g_pf.stats.files_measured++;
  pthread_mutex_unlock(&g_pf.mu);
out:
  pqt_close(pf);
  return st;
}

/* The vector source (by the first file) and the schema of the first file with rows. */
static vf_status plan_schema(corpus_plan *p, vf_error *err) {
  if (p->files->n == 0 || p->schema_file < p->files->n) return VF_OK;
  p->source = p->files->files[0].dataset ? corpus_dataset_part_source(&p->files->files[0])
                                         : CORPUS_PLAN_PARQUET;
  size_t i = 0;
  while (i < p->files->n && p->rows[i] == 0)
    i++;
  if (i == p->files->n) return VF_OK; /* every file empty: no schema */
  const corpus_file *f = &p->files->files[i];
  if (f->dataset) {
    p->schema_file = i; /* a part's parquet payload columns are read by the record reader */
    return VF_OK;
  }
  pqt_file *pf = NULL;
  vf_status st = corpus_open_parquet(f, NULL, &pf, err); /* the kept footer: nothing read */
  if (st != VF_OK) return st;
  const pqt_schema *sc = pqt_schema_of(pf);
  p->columns = vf_calloc((size_t)sc->ntop + 1, sizeof *p->columns);
  p->dense_columns = vf_calloc((size_t)sc->ntop + 1, sizeof *p->dense_columns);
  if (!p->columns || !p->dense_columns) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (int c = 0; c < sc->ntop; c++) {
    const char *name = sc->nodes[sc->top[c]].name;
    if (!(p->columns[c] = vf_strdup(name ? name : "")))
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    p->dense_columns[c] = pqt_is_dense_vector(pf, sc->top[c]);
    p->ncolumns++;
  }
  p->schema_file = i;
out:
  pqt_close(pf);
  return st;
}

/* corpus_plan_measure(): see corpus.h. */
vf_status corpus_plan_measure(corpus_plan *p, vf_error *err) {
  for (size_t i = 0; i < p->files->n; i++) {
    vf_status st = measure_one(p, i, err);
    if (st != VF_OK) return st;
  }
  return plan_schema(p, err);
}

/* corpus_plan_build(): see corpus.h. */
vf_status corpus_plan_build(corpus_plan *p, const corpus_files *files, vf_error *err) {
  vf_status st = corpus_plan_init(p, files, err);
  if (st != VF_OK) return st;
  VF_TRY(corpus_plan_measure(p, err));
out:
  if (st != VF_OK) corpus_plan_free(p);
  return st;
}

/* corpus_plan_measure_file(): see corpus.h. */
vf_status corpus_plan_measure_file(corpus_plan *p, size_t i, vf_error *err) {
  if (i >= p->files->n)
    return vf_error_set(err, VF_EINTERNAL, "corpus plan: file %zu of %zu", i, p->files->n);
  return measure_one(p, i, err);
}

/* corpus_plan_probe_dim(): see corpus.h. */
vf_status corpus_plan_probe_dim(corpus_plan *p, const corpus_vec_source *src, int32_t *dim,
                                vf_error *err) {
  *dim = 0;
  for (size_t i = 0; i < p->files->n; i++) {
    vf_status st = measure_one(p, i, err);
    if (st != VF_OK) return st;
    if (p->rows[i] == 0) continue;
    return corpus_records_probe_dim(&p->files->files[i], src, dim, err);
  }
  return vf_error_set(err, VF_ECORRUPT, "vector '%s': every file of the corpus (%zu) is empty: no "
                      "row to take its dimension from", src->name, p->files->n);
}
