/*
 * corpus_read_vectors(): a corpus's dense vectors as one row-major float32 matrix (the Python
 * front end's read_vectors, which numpy views without a copy).
 *
 * Why a path of its own for parquet corpora: the matrix is the output, so the decoder writes
 * into it.  The row counts come from the footers, the dimension from the first row group (or
 * slice), which is decoded into a buffer that is then grown in place to the whole matrix
 * (realloc of a large block remaps its pages, it does not copy them; huge pages asked for).
 * Every other row group of a list<float> column is read with the matrix slice as the leaf's
 * value buffer (pqt_read_leaves appends into it and cannot grow it: format.h), so its floats
 * are copied once, from the decompressed page into place — the scan's work plus that one copy
 * (bench/python).  Other element types, nulls or a ragged row group are decoded again the
 * general way (pqt_dense_from_leaf converting into the slice), which also names the bad row.
 * Work is spread over `threads` workers by row group as written: the slices of one large row
 * group (pqt_meta lists them) go to one worker in order, so each page is decompressed once —
 * slices of one page dealt to several workers made each of them decompress the whole page — and
 * when there are fewer such row groups than threads, the files are opened with page read-ahead
 * (pqt_open_opts.read_ahead) so the spare threads decompress the next pages.  The first slice,
 * decoded first for the dimension, keeps its file open for the worker that takes its row group.
 * Configs, component datasets and vector files go through the record reader, one batch after
 * another, into a matrix reserved a file at a time from the reader's row counts.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vforge/config.h"
#include "vforge/format.h"
#include "vforge/pool.h"

typedef struct rv_unit {
  size_t file;
  int rg;
  uint64_t row0;  /* global row of the group's first row */
  uint64_t first; /* physical row in the file */
  uint64_t rows;
  int wrg;        /* the row group as written (pqt_written_row_group) */
} rv_unit;

/* the units of one written row group of one file: [u0, u1) */
typedef struct rv_job {
  size_t u0, u1;
} rv_job;

typedef struct rv_shared {
  const corpus_files *files;
  const char *column; /* the column name (every file) */
  rv_unit *units;
  size_t nunits;
  rv_job *jobs;
  size_t njobs;
  pqt_file *f0; /* job 0's file, positioned after unit 0 (decoded for the dimension) */
  int top0;
  int read_ahead;
  float *out;
  int32_t dim;
  _Atomic size_t next;
  _Atomic int failed;
  pthread_mutex_t lock;
  vf_status st;
  vf_error err;
} rv_shared;

static vf_status open_pqt(const corpus_file *file, int read_ahead, pqt_file **f, vf_error *err) {
  pqt_open_opts oo = {.verify_crc = pqt_verify_crc_default(), .read_ahead = read_ahead};
  return corpus_open_parquet(file, read_ahead > 0 ? &oo : NULL, f, err);
}

/* Decode unit u into dst (rows*dim floats; NULL: into d's own buffer, for the first unit). */
static vf_status decode_unit(pqt_file *f, int top, const rv_unit *u, int32_t *dim, float *dst,
                             pqt_leaf_data *leaf, pqt_dense *d, vf_error *err) {
  int lid = pqt_schema_of(f)->nodes[top].first_leaf;
  vf_status st = pqt_read_leaves(f, u->rg, &lid, 1, leaf, err);
  if (st != VF_OK) return st;
  if (dst) {
    d->data = dst;
    d->cap = (size_t)u->rows * (size_t)*dim;
  }
  st = pqt_dense_from_leaf(f, top, leaf, (int64_t)u->first, dim, d, err);
  bool moved = dst && d->data != dst;
  if (dst) { /* the caller's buffer is not d's to keep */
    if (moved) free(d->data);
    d->data = NULL;
    d->cap = 0;
  }
  if (st != VF_OK) return st;
  if (moved)
    return vf_error_set(err, VF_EINTERNAL, "%s: row group %d did not decode in place", pqt_name(f), u->rg);
  if ((uint64_t)d->rows != u->rows)
    return vf_error_set(err, VF_ECORRUPT, "%s: row group %d holds %" PRId64 " vectors, its footer says %" PRIu64,
                        pqt_name(f), u->rg, d->rows, u->rows);
  for (int64_t i = 0; d->null_rows && i < d->rows; i++)
    if (d->null_rows[i])
      return vf_error_set(err, VF_ECORRUPT, "%s: row %" PRIu64 ": the vector is null (read_vectors "
                          "returns a matrix; read it with open() to see nulls)", pqt_name(f), u->first + (uint64_t)i);
  return VF_OK;
}

/* whether top's values are float32 list elements: the decoded leaf values are the matrix rows */
static bool f32_list(const pqt_file *f, int top) {
  const pqt_schema *s = pqt_schema_of(f);
  return s->nodes[top].leaf < 0 && s->leaves[s->nodes[top].first_leaf].type == PQT_FLOAT;
}

/* Decode unit u straight into dst (rows*dim floats): the leaf's values buffer is dst, fixed in
 * size (max == cap).  *done false: not decoded in place (another element type, nulls, a row
 * group that is not rows x dim, more values than that), nothing wrong said yet — the caller
 * decodes it with decode_unit, which names what is wrong.  Levels stay in `leaf`. */
static vf_status decode_in_place(pqt_file *f, int top, const rv_unit *u, int32_t dim, float *dst,
                                 pqt_leaf_data *leaf, bool *done, vf_error *err) {
  *done = false;
  if (!f32_list(f, top)) return VF_OK;
  size_t bytes = (size_t)u->rows * (size_t)dim * sizeof(float);
  int lid = pqt_schema_of(f)->nodes[top].first_leaf;
  vf_buf own = leaf->values;
  leaf->values = (vf_buf){.data = (uint8_t *)dst, .len = 0, .cap = bytes, .max = bytes};
  vf_error e2;
  vf_error_clear(&e2);
  vf_status st = pqt_read_leaves(f, u->rg, &lid, 1, leaf, &e2);
  bool same = leaf->values.data == (uint8_t *)dst;
  size_t got = leaf->values.len;
  leaf->values = own; /* dst is the caller's again; the leaf keeps its own buffer */
  if (!same) /* the contract in format.h was broken: never free or reuse a slice of the matrix */
    return vf_error_set(err, VF_EINTERNAL, "%s: row group %d: the reader replaced the caller's value buffer",
                        pqt_name(f), u->rg);
  if (st == VF_ECANCELED) {
    *err = e2;
    return st;
  }
  if (st != VF_OK || got != bytes || leaf->def || leaf->nrows != (int64_t)u->rows) return VF_OK;
  /* the shape (every row exactly dim values, rep levels regular) without touching the floats */
  pqt_dense chk = {.check_only = true};
  leaf->values = (vf_buf){.data = (uint8_t *)dst, .len = bytes, .cap = bytes, .max = bytes};
  int32_t dm = dim;
  st = pqt_dense_from_leaf(f, top, leaf, (int64_t)u->first, &dm, &chk, &e2);
  leaf->values = own;
  *done = dm == dim && chk.rows == (int64_t)u->rows && !chk.null_rows && !chk.data;
  if (st != VF_OK) *done = false; /* a shape the check refuses: decode_unit says what is wrong */
  pqt_dense_free(&chk);
  return VF_OK;
}

/* one worker: jobs (written row groups) from the shared counter until none is left, each job's
 * units in order on one open file (a slot of a pool loop) */
static void rv_worker(void *arg, size_t slot, int w) {
  (void)slot;
  (void)w;
  rv_shared *s = arg;
  vf_error err;
  vf_error_clear(&err);
  pqt_file *own = NULL; /* this worker's file (job 0 uses s->f0, which the caller closes) */
  size_t fidx = SIZE_MAX;
  int top = -1;
  pqt_leaf_data leaf;
  pqt_leaf_data_init(&leaf);
  pqt_dense d = {0};
  vf_status st = VF_OK;
  for (;;) {
    if (atomic_load(&s->failed)) break;
    size_t ji = atomic_fetch_add(&s->next, 1);
    if (ji >= s->njobs) break;
    const rv_job *jb = &s->jobs[ji];
    size_t u0 = jb->u0;
    pqt_file *f;
    int ftop;
    if (ji == 0) {
      f = s->f0;
      ftop = s->top0;
      u0++; /* unit 0 is decoded */
    } else {
      const rv_unit *first = &s->units[u0];
      if (first->file != fidx) {
        pqt_close(own);
        own = NULL;
        fidx = SIZE_MAX;
        VF_TRY(open_pqt(&s->files->files[first->file], s->read_ahead, &own, &err));
        VF_TRY(corpus_dense_top(own, s->column, &top, &err));
        fidx = first->file;
      }
      f = own;
      ftop = top;
    }
    for (size_t ui = u0; ui < jb->u1; ui++) {
      const rv_unit *u = &s->units[ui];
      VF_TRY(vf_check_cancel(&err));
      int32_t dim = s->dim;
      float *dst = s->out + (size_t)u->row0 * (size_t)s->dim;
      bool done = false;
      VF_TRY(decode_in_place(f, ftop, u, dim, dst, &leaf, &done, &err));
      if (!done) VF_TRY(decode_unit(f, ftop, u, &dim, dst, &leaf, &d, &err));
    }
  }
out:
  if (st != VF_OK) {
    pthread_mutex_lock(&s->lock);
    if (s->st == VF_OK) {
      s->st = st;
      s->err = err;
    }
    atomic_store(&s->failed, 1);
    pthread_mutex_unlock(&s->lock);
  }
  pqt_dense_free(&d);
  pqt_leaf_data_free(&leaf);
  pqt_close(own);
}

static vf_status read_parquet(const corpus_files *files, const char *want, int threads,
                              float **out, uint64_t *rows, int32_t *dim, vf_error *err) {
  rv_unit *units = NULL;
  size_t nunits = 0, cap = 0;
  uint64_t total = 0;
  char *column = NULL;
  pqt_file *f = NULL;
  rv_job *jobs = NULL;
  size_t njobs = 0;
  pqt_leaf_data leaf;
  pqt_leaf_data_init(&leaf);
  pqt_dense d = {0};
  *out = NULL;
  *rows = 0;
  *dim = 0;
  vf_status st = VF_OK;
  /* pass 1: the row groups and their rows, from the footers */
  for (size_t fi = 0; fi < files->n; fi++) {
    int top = -1;
    VF_TRY(open_pqt(&files->files[fi], 0, &f, err));
    VF_TRY(corpus_dense_top(f, column ? column : want, &top, err));
    if (!column && !(column = vf_strdup(pqt_schema_of(f)->nodes[top].name)))
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    const pqt_file_meta *m = pqt_meta(f);
    uint64_t first = 0;
    for (int rg = 0; rg < m->nrow_groups; rg++) {
      int64_t nr = m->row_groups[rg].num_rows;
      if (nr < 0) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d has %" PRId64 " rows", pqt_name(f), rg, nr));
      if (nr == 0) continue;
      if (nunits == cap) {
        cap = cap ? 2 * cap : 64;
        rv_unit *nu = vf_realloc(units, cap * sizeof *nu);
        if (!nu) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
        units = nu;
      }
      units[nunits++] = (rv_unit){fi, rg, total, first, (uint64_t)nr, pqt_written_row_group(f, rg, NULL, NULL)};
      first += (uint64_t)nr;
      total += (uint64_t)nr;
    }
    pqt_close(f);
    f = NULL;
  }
  /* jobs: runs of units of one written row group of one file */
  if (nunits > 0 && !(jobs = vf_mallocarray(nunits, sizeof *jobs)))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (size_t u = 0; u < nunits; u++) {
    if (u > 0 && units[u].file == units[u - 1].file && units[u].wrg == units[u - 1].wrg)
      jobs[njobs - 1].u1 = u + 1;
    else
      jobs[njobs++] = (rv_job){u, u + 1};
  }
  int nt = threads > 0 ? threads : vf_threads();
  int ra = 0; /* threads beyond one per job read pages ahead (pqt_open_opts.read_ahead: 1..4) */
  if (njobs > 0 && (size_t)nt > njobs) ra = nt / (int)njobs > 4 ? 4 : nt / (int)njobs;
  if ((size_t)nt > njobs) nt = njobs > 0 ? (int)njobs : 1;
  int top0 = -1;
  int32_t dm = 0;
  /* the first row group: the dimension, and the start of the matrix */
  if (nunits > 0) {
    VF_TRY(open_pqt(&files->files[units[0].file], ra, &f, err));
    VF_TRY(corpus_dense_top(f, column, &top0, err));
    VF_TRY(decode_unit(f, top0, &units[0], &dm, NULL, &leaf, &d, err));
    if (dm > 0 && total > SIZE_MAX / sizeof(float) / (uint64_t)dm)
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "%" PRIu64 " x %d floats do not fit in memory", total, (int)dm));
    uint64_t budget = vf_memory_budget();
    if (budget && total * (uint64_t)dm * sizeof(float) > budget)
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "read_vectors: %" PRIu64 " x %d floats are over the memory budget",
                           total, (int)dm));
    float *m = realloc(d.data, (size_t)total * (size_t)dm * sizeof(float) + sizeof(float));
    if (!m) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory for %" PRIu64 " x %d floats", total, (int)dm));
    d.data = NULL;
    d.cap = 0;
    *out = m;
    vf_advise_huge(m, (size_t)total * (size_t)dm * sizeof(float)); /* fewer page faults */
  }
  pqt_dense_free(&d);
  pqt_leaf_data_free(&leaf);
  /* the rest, in parallel */
  if (nunits > 1) {
    rv_shared s = {.files = files, .column = column, .units = units, .nunits = nunits,
                   .jobs = jobs, .njobs = njobs, .f0 = f, .top0 = top0, .read_ahead = ra,
                   .out = *out, .dim = dm};
    atomic_init(&s.next, 0);
    atomic_init(&s.failed, 0);
    pthread_mutex_init(&s.lock, NULL);
    st = vf_pool_for((size_t)nt, nt, rv_worker, &s, err); /* the process pool (vforge/pool.h) */
    pthread_mutex_destroy(&s.lock);
    if (st != VF_OK) goto out;
    if (s.st != VF_OK) {
      st = s.st;
      if (err) *err = s.err;
      goto out;
    }
  }
  *rows = total;
  *dim = dm;
out:
  if (st != VF_OK) {
    free(*out);
    *out = NULL;
  }
  pqt_dense_free(&d);
  pqt_leaf_data_free(&leaf);
  pqt_close(f);
  free(jobs);
  free(units);
  free(column);
  return st;
}

/* configs, datasets, vector files: the record reader, batch after batch */
static vf_status read_records(const corpus_source *src, float **out, uint64_t *rows,
                              int32_t *dim, vf_error *err) {
  corpus_record_spec spec = {.vectors = &src->vec, .nvectors = 1, .id = src->id};
  float *m = NULL;
  size_t cap = 0, n = 0;
  int32_t dm = 0;
  uint64_t base = 0;
  corpus_batch b = {0};
  corpus_records *r = NULL;
  vf_status st = VF_OK;
  if (src->vec.kind != CORPUS_VEC_DENSE)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "vector '%s' is not dense; read it with open()", src->vec.name));
  for (size_t fi = 0; fi < src->files.n; fi++) {
    VF_TRY(corpus_records_open(&src->files.files[fi], &spec, base, &r, err));
    int nrg = corpus_records_row_groups(r);
    uint64_t frows = corpus_records_rows(r); /* this file's rows, reserved below */
    for (int rg = 0; rg < nrg; rg++) {
      VF_TRY(vf_check_cancel(err));
      VF_TRY(corpus_records_read(r, rg, corpus_records_row_group_first(r, rg), &b, NULL, err));
      if (b.n == 0) continue;
      int32_t bd = b.vectors[0].dim;
      if (dm == 0) dm = bd;
      if (bd != dm)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: vector '%s' has dimension %d, earlier rows %d",
                             src->files.files[fi].key, src->vec.name, (int)bd, (int)dm));
      size_t need = (n + b.n) * (size_t)dm;
      if (need > cap) {
        /* through the end of this file at once (the reader knows its rows), else doubling */
        size_t nc = cap > need / 2 ? 2 * cap : need;
        uint64_t upto = (uint64_t)n + frows;
        if (upto <= SIZE_MAX / sizeof(float) / (uint64_t)dm && (size_t)upto * (size_t)dm >= need)
          nc = (size_t)upto * (size_t)dm;
        float *nm = realloc(m, nc * sizeof(float));
        if (!nm) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory for %zu floats", nc));
        m = nm;
        cap = nc;
      }
      memcpy(m + n * (size_t)dm, b.vectors[0].dense, b.n * (size_t)dm * sizeof(float));
      n += b.n;
    }
    base += corpus_records_rows(r);
    corpus_records_close(r);
    r = NULL;
  }
  *out = m ? m : vf_malloc(sizeof(float));
  *rows = n;
  *dim = dm;
  if (!*out) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
out:
  corpus_records_close(r);
  corpus_batch_free(&b);
  if (st != VF_OK) free(m);
  return st;
}

/* corpus_read_vectors(): see config.h. */
vf_status corpus_read_vectors(const corpus_source *src, const char *column, int threads,
                              float **out, uint64_t *rows, int32_t *dim, vf_error *err) {
  *out = NULL;
  *rows = 0;
  *dim = 0;
  if (src->records) return read_records(src, out, rows, dim, err);
  return read_parquet(&src->files, column, threads, out, rows, dim, err);
}
