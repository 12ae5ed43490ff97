/*
 * Corpus drivers: `scan` (decode everything, bounded memory, parallel over row groups) and
 * `cat` (rows as JSON lines, optionally with the point id).
 *
 * Why row groups are the unit of work: a row group is the smallest piece of a parquet file whose
 * column chunks can be fetched and decoded independently, and its size is fixed by the writer, so
 * holding one row group of the selected columns per worker bounds memory whatever the corpus
 * size.  Determinism: scan's checksum is summed per (file, row group) into its own slot and the
 * slots are added in order at the end, so the figure is the same for any thread count.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vforge/corpus.h"
#include "vforge/format.h"
#include "vforge/pool.h"

/* ------------------------------------------------------------- column selection */

typedef struct col_sel {
  int *tops;    /* node indices */
  int ntops;
  int *leaves;  /* every leaf under the tops, in schema order */
  int nleaves;
} col_sel;

static void col_sel_free(col_sel *s) {
  free(s->tops);
  free(s->leaves);
  memset(s, 0, sizeof *s);
}

/* Append a top (and its leaves) unless already selected. */
static vf_status col_sel_add(col_sel *s, const pqt_schema *sc, int top, vf_error *err) {
  for (int i = 0; i < s->ntops; i++)
    if (s->tops[i] == top) return VF_OK;
  const pqt_node *n = &sc->nodes[top];
  int *t = vf_realloc(s->tops, sizeof(int) * (size_t)(s->ntops + 1));
  if (!t) return vf_error_set(err, VF_ENOMEM, "out of memory selecting columns");
  s->tops = t;
  s->tops[s->ntops++] = top;
  int *l = vf_realloc(s->leaves, sizeof(int) * (size_t)(s->nleaves + n->nleaves + 1));
  if (!l) return vf_error_set(err, VF_ENOMEM, "out of memory selecting columns");
  s->leaves = l;
  for (int i = 0; i < n->nleaves; i++) s->leaves[s->nleaves++] = n->first_leaf + i;
  return VF_OK;
}

/* Resolve column names (NULL = all top-level fields) for one file. */
static vf_status col_sel_resolve(const pqt_file *f, const char *const *names, int nnames,
                                 col_sel *out, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  memset(out, 0, sizeof *out);
  vf_status st = VF_OK;
  if (!names || nnames == 0) {
    for (int i = 0; i < sc->ntop; i++) VF_TRY(col_sel_add(out, sc, sc->top[i], err));
  } else {
    for (int i = 0; i < nnames; i++) {
      int top = pqt_find_top(f, names[i]);
      if (top < 0) VF_FAIL(corpus_missing_column(f, names[i], err));
      VF_TRY(col_sel_add(out, sc, top, err));
    }
  }
out:
  if (st != VF_OK) col_sel_free(out);
  return st;
}

/* Sum of the floating-point values of one leaf over a row group as written, fed slice by slice:
 * 4 accumulators, value i of the row group into a[i % 4] while a whole group of 4 remains, the
 * last n % 4 into a[0] — the same additions in the same order however the row group is sliced,
 * so the checksum does not depend on slicing (or --threads). */
typedef struct leaf_sum {
  double a[4];
  double pend[3]; /* values of an unfinished group of 4, waiting for the next slice */
  int npend;
} leaf_sum;

static void leaf_sum_push(leaf_sum *s, double x) {
  if (s->npend < 3) {
    s->pend[s->npend++] = x;
    return;
  }
  s->a[0] += s->pend[0];
  s->a[1] += s->pend[1];
  s->a[2] += s->pend[2];
  s->a[3] += x;
  s->npend = 0;
}

/* the values may sit at any byte offset of a decoded page (pqt_leaf_data.view): loaded by memcpy,
 * which compiles to the same unaligned loads without the misaligned access */
static inline double leaf_load_float(const uint8_t *v, size_t i) {
  float x;
  memcpy(&x, v + i * sizeof x, sizeof x);
  return x;
}
static inline double leaf_load_double(const uint8_t *v, size_t i) {
  double x;
  memcpy(&x, v + i * sizeof x, sizeof x);
  return x;
}
#define LEAF_SUM_LOOP(T)                                                                       \
  do {                                                                                         \
    const uint8_t *v = pqt_leaf_values(d);                                                     \
    while (s->npend > 0 && i < n) leaf_sum_push(s, leaf_load_##T(v, i++));                     \
    for (; i + 4 <= n; i += 4) {                                                               \
      s->a[0] += leaf_load_##T(v, i);                                                          \
      s->a[1] += leaf_load_##T(v, i + 1);                                                      \
      s->a[2] += leaf_load_##T(v, i + 2);                                                      \
      s->a[3] += leaf_load_##T(v, i + 3);                                                      \
    }                                                                                          \
    for (; i < n; i++) leaf_sum_push(s, leaf_load_##T(v, i));                                  \
  } while (0)

static void leaf_sum_add(leaf_sum *s, const pqt_file *f, const pqt_leaf_data *d) {
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_leaf *leaf = &sc->leaves[d->leaf];
  const pqt_schema_elem *e = &pqt_meta(f)->schema[sc->nodes[leaf->node].elem];
  size_t n = (size_t)d->nvalues;
  size_t i = 0;
  if (d->type == PQT_FLOAT) {
    LEAF_SUM_LOOP(float);
  } else if (d->type == PQT_DOUBLE) {
    LEAF_SUM_LOOP(double);
  } else if (d->type == PQT_FIXED_LEN_BYTE_ARRAY && d->width == 2 && e->logical == PQT_LT_FLOAT16) {
    const uint8_t *v = pqt_leaf_values(d);
    for (; i < n; i++) s->a[0] += pqt_half_to_float((uint16_t)(v[2 * i] | (v[2 * i + 1] << 8)));
  }
}

static double leaf_sum_end(leaf_sum *s) {
  for (int k = 0; k < s->npend; k++) s->a[0] += s->pend[k];
  double r = (s->a[0] + s->a[1]) + (s->a[2] + s->a[3]);
  memset(s, 0, sizeof *s);
  return r;
}

/* ------------------------------------------------------------------------ scan */

/* One row group as written: listed row groups (slices) [rg, rg + nrg) of pqt_meta(). */
typedef struct scan_unit {
  uint32_t file;
  int32_t rg, nrg;
} scan_unit;

typedef struct scan_col_dim {
  char *name;
  _Atomic int32_t dim;
} scan_col_dim;

typedef struct scan_shared {
  const corpus_files *files;
  const char *const *columns;
  int ncolumns;
  scan_unit *units;
  size_t nunits;
  double *sums;      /* per unit */
  uint64_t *bytes;   /* per unit */
  uint64_t *vectors; /* per unit */
  _Atomic size_t next;
  _Atomic int failed;
  pthread_mutex_t lock;
  vf_error err; /* first error, under lock */
  vf_status st;
  uint64_t bytes_read;
  int read_ahead; /* pqt_open_opts.read_ahead: threads beyond one per row group read pages ahead */
  double t0;
  uint64_t rows_done, units_done;
  double last_progress;
} scan_shared;

static void scan_fail(scan_shared *s, vf_status st, const vf_error *e) {
  pthread_mutex_lock(&s->lock);
  if (!atomic_load(&s->failed)) { /* the first failure wins (failed is set only here) */
    s->st = st;
    s->err = *e;
  }
  atomic_store(&s->failed, 1);
  pthread_mutex_unlock(&s->lock);
}

/* one worker of the scan: row groups from the shared counter until none is left */
static void scan_worker(void *arg, size_t slot, int w) {
  (void)slot;
  (void)w;
  scan_shared *s = arg;
  vf_error err;
  vf_error_clear(&err);
  pqt_file *f = NULL;
  uint32_t fidx = UINT32_MAX;
  col_sel sel = {0};
  pqt_leaf_data *data = NULL;
  leaf_sum *lsum = NULL; /* per selected leaf */
  int ndata = 0;
  pqt_dense dense = {.check_only = true};
  int32_t *dims = NULL; /* per selected top: dimension seen in this file */
  vf_status st = VF_OK;

  for (;;) {
    if (atomic_load(&s->failed)) break;
    VF_TRY(vf_check_cancel(&err));
    size_t u = atomic_fetch_add(&s->next, 1);
    if (u >= s->nunits) break;
    const scan_unit *unit = &s->units[u];
    if (unit->file != fidx) {
      if (f) {
        pthread_mutex_lock(&s->lock);
        s->bytes_read += pqt_source(f)->bytes_read;
        pthread_mutex_unlock(&s->lock);
      }
      pqt_close(f);
      f = NULL;
      col_sel_free(&sel);
      pqt_open_opts oo = {.verify_crc = pqt_verify_crc_default(), .read_ahead = s->read_ahead};
      VF_TRY(corpus_open_parquet(&s->files->files[unit->file], s->read_ahead ? &oo : NULL, &f, &err));
      VF_TRY(col_sel_resolve(f, s->columns, s->ncolumns, &sel, &err));
      fidx = unit->file;
      if (sel.nleaves > ndata) {
        pqt_leaf_data *nd = vf_realloc(data, sizeof *data * (size_t)sel.nleaves);
        if (!nd) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
        data = nd;
        for (int i = ndata; i < sel.nleaves; i++) {
          pqt_leaf_data_init(&data[i]);
          data[i].allow_view = true; /* summed and checked before the next read: no copy */
        }
        ndata = sel.nleaves;
        free(lsum);
        lsum = vf_calloc((size_t)ndata, sizeof *lsum);
        if (!lsum) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
      }
      free(dims);
      dims = vf_calloc((size_t)sel.ntops + 1, sizeof *dims);
      if (!dims) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
    }
    double sum = 0;
    uint64_t bytes = 0, vecs = 0, rows = 0;
    int64_t first_row = 0;
    for (int g = 0; g < unit->rg; g++) first_row += pqt_meta(f)->row_groups[g].num_rows;
    for (int i = 0; i < sel.nleaves; i++) memset(&lsum[i], 0, sizeof lsum[i]);
    /* the row group's slices in order, one at a time (a few pages and one slice in memory) */
    for (int k = 0; k < unit->nrg; k++) {
      int rg = unit->rg + k;
      if (k > 0) VF_TRY(vf_check_cancel(&err));
      VF_TRY(pqt_read_leaves(f, rg, sel.leaves, sel.nleaves, data, &err));
      for (int i = 0; i < sel.nleaves; i++) {
        leaf_sum_add(&lsum[i], f, &data[i]);
        bytes += data[i].uncompressed_bytes;
      }
      for (int t = 0, li = 0; t < sel.ntops; t++) {
        const pqt_node *n = &pqt_schema_of(f)->nodes[sel.tops[t]];
        if (pqt_is_dense_vector(f, sel.tops[t])) {
          VF_TRY(pqt_dense_from_leaf(f, sel.tops[t], &data[li], first_row, &dims[t], &dense, &err));
          vecs += (uint64_t)dense.rows;
        }
        li += n->nleaves;
      }
      first_row += pqt_meta(f)->row_groups[rg].num_rows;
      rows += (uint64_t)pqt_meta(f)->row_groups[rg].num_rows;
    }
    for (int i = 0; i < sel.nleaves; i++) sum += leaf_sum_end(&lsum[i]);
    s->sums[u] = sum;
    s->bytes[u] = bytes;
    s->vectors[u] = vecs;
    pthread_mutex_lock(&s->lock);
    s->rows_done += rows;
    s->units_done++;
    double now = vf_now();
    if (now - s->last_progress >= 0.2) {
      s->last_progress = now;
      vf_progress p = {.phase = "scan",
                       .rows_done = s->rows_done,
                       .files_done = unit->file,
                       .files_total = s->files->n,
                       .elapsed_s = now - s->t0,
                       .fraction = (double)s->units_done / (double)(s->nunits ? s->nunits : 1)};
      vf_progress_emit(&p);
    }
    pthread_mutex_unlock(&s->lock);
  }
out:
  if (st != VF_OK) scan_fail(s, st, &err);
  if (f) {
    pthread_mutex_lock(&s->lock);
    s->bytes_read += pqt_source(f)->bytes_read;
    pthread_mutex_unlock(&s->lock);
  }
  pqt_close(f);
  col_sel_free(&sel);
  for (int i = 0; i < ndata; i++) pqt_leaf_data_free(&data[i]);
  free(data);
  free(lsum);
  free(dims);
  pqt_dense_free(&dense);
}

vf_status corpus_scan(const corpus_files *files, const char *const *columns, int ncolumns,
                      int threads, corpus_scan_result *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  scan_shared s;
  memset(&s, 0, sizeof s);
  s.files = files;
  s.columns = columns;
  s.ncolumns = ncolumns;
  s.t0 = vf_now();
  pthread_mutex_init(&s.lock, NULL);
  vf_error_clear(&s.err);
  vf_status st = VF_OK;

  /* Plan: open each footer once to count row groups; the workers re-open each file to read
   * over the footer the plan keeps, so the plan lives until they are done (freed at out:;
   * freeing it here emptied the footer cache and every worker fetched its footer again). */
  size_t cap = 0;
  uint64_t max_unit_mem = 0;
  char max_where[1024] = "";
  corpus_plan plan = {0};
  pqt_file *f = NULL; /* the file being planned */
  VF_TRY(corpus_plan_init(&plan, files, err));
  for (size_t i = 0; i < files->n; i++) {
    VF_TRY(corpus_open_parquet(&files->files[i], NULL, &f, err));
    const pqt_file_meta *m = pqt_meta(f);
    if (corpus_plan_note_rows(&plan, i, m->num_rows > 0 ? (uint64_t)m->num_rows : 0)) {
      out->bytes_read += pqt_source(f)->bytes_read;
      out->row_groups += (uint64_t)pqt_written_row_groups(f); /* as written (0-row groups are not read) */
      pqt_close(f);
      f = NULL;
      continue;
    }
    out->bytes_read += pqt_source(f)->bytes_read;
    out->rows += (uint64_t)m->num_rows;
    out->row_groups += (uint64_t)pqt_written_row_groups(f); /* as written, not as sliced */
    col_sel sel;
    VF_TRY(col_sel_resolve(f, columns, ncolumns, &sel, err)); /* fail early on a missing column */
    /* memory one worker needs for the largest row group: fetched chunks + decoded values */
    for (int g = 0; g < m->nrow_groups; g++) {
      uint64_t need = 0, most = 0;
      int most_leaf = -1;
      for (int l = 0; l < sel.nleaves; l++) {
        const pqt_column_meta *cm = &m->row_groups[g].columns[sel.leaves[l]].meta;
        uint64_t one =
            (uint64_t)cm->total_compressed_size + 2 * (uint64_t)cm->total_uncompressed_size;
        need += one;
        if (one >= most) most = one, most_leaf = sel.leaves[l];
      }
      if (need > max_unit_mem) { /* remembered for the message naming it */
        max_unit_mem = need;
        snprintf(max_where, sizeof max_where, "%s: row group %d (largest column %s, about %" PRIu64
                 " bytes)", files->files[i].uri, g,
                 most_leaf >= 0 ? pqt_schema_of(f)->leaves[most_leaf].path : "?", most);
      }
    }
    col_sel_free(&sel);
    if (s.nunits + (size_t)m->nrow_groups > cap) {
      cap = (s.nunits + (size_t)m->nrow_groups) * 2 + 16;
      scan_unit *nu = vf_realloc(s.units, cap * sizeof *nu);
      if (!nu) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory planning the scan"));
      s.units = nu;
    }
    for (int g = 0; g < m->nrow_groups;) { /* slices of one row group: a unit */
      int w = pqt_written_row_group(f, g, NULL, NULL), e = g + 1;
      while (e < m->nrow_groups && pqt_written_row_group(f, e, NULL, NULL) == w) e++;
      uint64_t rows = 0;
      for (int k = g; k < e; k++) rows += (uint64_t)m->row_groups[k].num_rows;
      if (rows > 0) {
        s.units[s.nunits].file = (uint32_t)i;
        s.units[s.nunits].rg = g;
        s.units[s.nunits].nrg = e - g;
        s.nunits++;
      }
      g = e;
    }
    pqt_close(f);
    f = NULL;
  }
  out->empty_files = plan.empty;
  out->files = files->n;
  s.sums = vf_calloc(s.nunits + 1, sizeof *s.sums);
  s.bytes = vf_calloc(s.nunits + 1, sizeof *s.bytes);
  s.vectors = vf_calloc(s.nunits + 1, sizeof *s.vectors);
  if (!s.sums || !s.bytes || !s.vectors) {
    st = vf_error_set(err, VF_ENOMEM, "out of memory planning the scan");
    goto out;
  }
  if (threads <= 0) threads = vf_threads();
  /* fewer row groups than threads (one large row group, as DuckDB, pyarrow and Spark write
   * them): each worker's file reads and decompresses pages ahead on a thread of its own, so the
   * idle cores share the row group's work (pqt_prefetch.c; the decoding stays in order) */
  if ((size_t)threads > s.nunits && s.nunits > 0) s.read_ahead = threads / (int)s.nunits;
  if ((size_t)threads > s.nunits) threads = (int)(s.nunits ? s.nunits : 1);
  /* --memory-budget: fewer workers when one row group each would not fit */
  uint64_t budget = vf_memory_budget();
  if (budget && max_unit_mem > budget) {
    st = vf_error_set(err, VF_ENOMEM,
                      "%s: the selected columns of this row group need about %llu bytes to decode, "
                      "more than the memory budget of %llu bytes (select fewer columns with "
                      "--columns or raise --memory-budget)",
                      max_where, (unsigned long long)max_unit_mem, (unsigned long long)budget);
    goto out;
  }
  if (budget && max_unit_mem && (uint64_t)threads * max_unit_mem > budget) {
    int fit = (int)(budget / max_unit_mem);
    vf_log(VF_LOG_INFO, "memory budget %llu bytes: %d worker(s) instead of %d",
           (unsigned long long)budget, fit, threads);
    threads = fit;
  }
  /* `threads` workers on the process pool (vforge/pool.h), sharing the row groups through
   * s.next: one that starts late (its core busy) finds fewer left */
  if ((st = vf_pool_for((size_t)threads, threads, scan_worker, &s, err)) != VF_OK) goto out;
  if (s.st != VF_OK) {
    if (err) *err = s.err;
    st = s.st;
    goto out;
  }
  for (size_t u = 0; u < s.nunits; u++) {
    out->checksum += s.sums[u];
    out->bytes += s.bytes[u];
    out->vectors += s.vectors[u];
  }
  out->bytes_read += s.bytes_read;
out:
  if (plan.live) out->empty_files = plan.empty; /* also when planning failed */
  corpus_plan_free(&plan);
  pqt_close(f);
  out->seconds = vf_now() - s.t0;
  free(s.units);
  free(s.sums);
  free(s.bytes);
  free(s.vectors);
  pthread_mutex_destroy(&s.lock);
  return st;
}

/* ------------------------------------------------------------------------- cat */

vf_status corpus_cat(const corpus_files *files, const corpus_cat_opts *opts, corpus_write_fn write,
                     void *user, vf_error *err) {
  vf_status st = VF_OK;
  vf_buf line;
  /* rows as JSON lines, written out once past 1 MiB: that much plus one row (< VF_BUF_MAX_RECORD) */
  VF_BUF_INIT(&line, VF_BUF_MAX_BATCH);
  uint64_t to_skip = opts->offset;
  uint64_t remaining = opts->limit ? opts->limit : UINT64_MAX;
  uint64_t global_row = 0;
  pqt_file *f = NULL;
  pqt_rows *rows = NULL;
  col_sel sel = {0};
  pqt_leaf_data *data = NULL;
  int *leaf_ids = NULL;
  int ndata = 0, nids = 0;
  corpus_idcols idc = {0};
  int nidc = 0;

  corpus_plan plan = {0};
  VF_TRY(corpus_plan_init(&plan, files, err));
  for (size_t fi = 0; fi < files->n && remaining > 0; fi++) {
    VF_TRY(corpus_open_parquet(&files->files[fi], NULL, &f, err));
    const pqt_file_meta *m = pqt_meta(f);
    if (corpus_plan_note_rows(&plan, fi, m->num_rows > 0 ? (uint64_t)m->num_rows : 0) ||
        to_skip >= (uint64_t)m->num_rows) {
      to_skip -= (uint64_t)m->num_rows;
      global_row += (uint64_t)m->num_rows;
      pqt_close(f);
      f = NULL;
      continue;
    }
    VF_TRY(col_sel_resolve(f, opts->columns, opts->ncolumns, &sel, err));
    if (opts->with_id) {
      VF_TRY(corpus_idcols_resolve(f, opts->with_id, &idc, err));
      nidc = idc.ncols;
    }
    VF_TRY(pqt_rows_create(f, sel.tops, sel.ntops, &rows, err));
    pqt_rows_set_binary_as_string(rows, opts->binary_as_string);
    /* leaves to decode: the selection plus id columns not already in it */
    nids = sel.nleaves;
    leaf_ids = vf_mallocarray((size_t)(sel.nleaves + nidc + 1), sizeof(int));
    if (!leaf_ids) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    memcpy(leaf_ids, sel.leaves, sizeof(int) * (size_t)sel.nleaves);
    for (int i = 0; i < nidc; i++) {
      bool have = false;
      for (int k = 0; k < nids; k++) have |= leaf_ids[k] == idc.cols[i].leaf;
      if (!have) leaf_ids[nids++] = idc.cols[i].leaf;
    }
    if (nids > ndata) {
      pqt_leaf_data *nd = vf_realloc(data, sizeof *data * (size_t)nids);
      if (!nd) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
      data = nd;
      for (int i = ndata; i < nids; i++) pqt_leaf_data_init(&data[i]);
      ndata = nids;
    }
    const char *key = files->files[fi].key;
    uint64_t file_row = 0;
    for (int g = 0; g < m->nrow_groups && remaining > 0; g++) {
      uint64_t rg_rows = (uint64_t)m->row_groups[g].num_rows;
      if (to_skip >= rg_rows) {
        to_skip -= rg_rows;
        file_row += rg_rows;
        continue;
      }
      VF_TRY(vf_check_cancel(err));
      VF_TRY(pqt_read_leaves(f, g, leaf_ids, nids, data, err));
      VF_TRY(pqt_rows_bind(rows, data, leaf_ids, sel.nleaves, (int64_t)rg_rows, err));
      pqt_rows_set_first_row(rows, (int64_t)file_row);
      if (nidc) VF_TRY(corpus_idcols_bind(&idc, data, leaf_ids, nids, err));
      if (to_skip) VF_TRY(pqt_rows_skip(rows, (int64_t)to_skip, err));
      uint64_t r = to_skip;
      to_skip = 0;
      for (; r < rg_rows && remaining > 0; r++, remaining--) {
        VF_TRY(vf_buf_append(&line, "{", 1, err));
        if (opts->with_id) {
          corpus_id id;
          idc.row = (int64_t)r;
          corpus_row_ctx rc = {.file_key = key,
                               .file_key_len = strlen(key),
                               .file_row = file_row + r,
                               .global_row = global_row + file_row + r,
                               .get_column = corpus_idcols_get,
                               .user = &idc};
          st = corpus_idexpr_eval(opts->with_id, &rc, &id, err);
          if (st != VF_OK) {
            vf_error_prefix(err, "%s: row %llu: ", pqt_name(f), (unsigned long long)(file_row + r));
            goto out;
          }
          VF_TRY(vf_json_raw(&line, "\"__id__\":", err));
          VF_TRY(id.is_uuid ? vf_json_string(&line, id.uuid, 36, err) : vf_json_u64(&line, id.num, err));
          if (sel.ntops) VF_TRY(vf_json_raw(&line, ",", err));
        }
        VF_TRY(pqt_rows_next(rows, &line, err));
        VF_TRY(vf_json_raw(&line, "}\n", err));
        if (line.len >= (1u << 20)) {
          VF_TRY(write(user, line.data, line.len, err));
          vf_buf_reset(&line);
        }
      }
      file_row += rg_rows;
    }
    global_row += (uint64_t)m->num_rows;
    pqt_rows_free(rows);
    rows = NULL;
    col_sel_free(&sel);
    corpus_idcols_free(&idc);
    nidc = 0;
    free(leaf_ids);
    leaf_ids = NULL;
    pqt_close(f);
    f = NULL;
  }
  if (line.len) VF_TRY(write(user, line.data, line.len, err));
out:
  pqt_rows_free(rows);
  col_sel_free(&sel);
  corpus_idcols_free(&idc);
  free(leaf_ids);
  pqt_close(f);
  for (int i = 0; i < ndata; i++) pqt_leaf_data_free(&data[i]);
  free(data);
  vf_buf_free(&line);
  corpus_plan_free(&plan);
  return st;
}
