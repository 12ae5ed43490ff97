/*
 * corpus_convert — vector files (.npy, IDX, gzipped IDX) into a parquet corpus (`vforge convert`).
 *
 * Output (DESIGN.md "Corpus layout"): DIR/batch_00000000.parquet, batch_00000001.parquet, ...
 * each holding up to rows_per_file rows: `id` INT64 = the global row (0-based over the sources
 * in the order given), the vector column as a fixed-dimension float vector (written as
 * LIST<float> with an ARROW:schema FixedSizeList hint, zstd) and, with label files, `label`
 * INT32.  The zero-padded number keeps byte-wise key order equal to row order, so discovery
 * reads the corpus back in exactly the order it was written.
 *
 * Why two passes: every header is opened and checked first — readable formats, one dimension
 * across the sources, integer label files whose rows add up to exactly the vector rows — so
 * nothing is written for an input that cannot be converted whole.  The second pass streams:
 * sources and label files are each read as one concatenated sequence, `chunk` rows at a time
 * (about 8 MiB of floats), straight into the writer, whose buffered row group (about 32 MiB of
 * floats by default) is the other half of the memory bound.  Gzipped IDX files are inflated in
 * memory by their reader, once per pass: they are small by nature (the format has no
 * streaming random access), and large corpora come as .npy.
 *
 * Failure and interruption: the files are written into a staging directory beside the output,
 * "<output>.tmp.<host>-<pid>.<n>" (util.h "Temporary names"), which becomes the output by one
 * rename when the output does not exist yet or is empty (otherwise, with `overwrite` or beside
 * other files, each batch file is renamed into it); a failed, cancelled (vf_cancelled(), polled
 * per chunk) or killed conversion therefore never leaves a corpus that looks complete: the
 * staging directory is removed, or swept by the next conversion to the same output.  A
 * directory already holding parquet files is refused (it would silently merge two corpora)
 * unless `overwrite`, which only ever replaces or removes this layout's batch_NNNNNNNN.parquet
 * files.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vforge/format.h"
#include "vforge/vecfile.h"

#define CV_DEFAULT_ROWS_PER_FILE 1000000u
#define CV_CHUNK_BYTES ((uint64_t)8 << 20)
#define CV_ROW_GROUP_BYTES ((uint64_t)32 << 20)
#define CV_MAX_ROW_GROUP_ROWS 65536
#define CV_MAX_FILES 100000000u /* batch_NNNNNNNN */

/* ------------------------------------------------------------ a sequence of files */

/* Several vector files read as one row sequence (sources, or label files). */
typedef struct cv_seq {
  const char *const *paths;
  size_t n;
  const vec_open_opts *opts;
  uint64_t *rows; /* per file, from the first pass */
  uint64_t dim;
  size_t idx; /* current file */
  vec_file *cur;
  uint64_t row; /* next row inside cur */
} cv_seq;

static void seq_free(cv_seq *s) {
  vec_close(s->cur);
  s->cur = NULL;
  free(s->rows);
  s->rows = NULL;
}

/* First pass: open each file, check it and record its rows.  `ints` requires integer values
 * (labels); `want_dim` (0 = take the first file's) fixes the dimension. */
static vf_status seq_probe(cv_seq *s, bool ints, uint64_t want_dim, uint64_t *total,
                           vf_error *err) {
  *total = 0;
  if (!(s->rows = vf_calloc(s->n ? s->n : 1, sizeof *s->rows)))
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  s->dim = want_dim;
  for (size_t i = 0; i < s->n; i++) {
    vec_file *f = NULL;
    vf_status st = vec_open_path(s->paths[i], s->opts, &f, err);
    if (st != VF_OK) return st;
    const vec_layout *l = vec_layout_of(f);
    if (ints && !vec_dtype_is_int(l->dtype)) {
      st = vf_error_set(err, VF_EUNSUPPORTED, "%s: labels must be integers, the file holds %s",
                        s->paths[i], vec_dtype_name(l->dtype));
    } else if (!ints && l->ndim < 2) {
      st = vf_error_set(err, VF_EUNSUPPORTED,
                        "%s: a 1-D %s file is a list of scalars, not vectors (shape (N, D) "
                        "expected)",
                        s->paths[i], vec_format(f));
    } else if (ints && vec_dim(f) != 1) {
      st = vf_error_set(err, VF_EUNSUPPORTED,
                        "%s: labels must be one value per row (shape (N,) or (N, 1)), the file "
                        "has %llu per row",
                        s->paths[i], (unsigned long long)vec_dim(f));
    } else if (s->dim && vec_dim(f) != s->dim) {
      st = vf_error_set(err, VF_ECORRUPT,
                        "%s: vectors of dimension %llu, but %s has dimension %llu", s->paths[i],
                        (unsigned long long)vec_dim(f), s->paths[0], (unsigned long long)s->dim);
    } else {
      s->dim = vec_dim(f);
      s->rows[i] = vec_rows(f);
      if (__builtin_add_overflow(*total, s->rows[i], total) || *total > (uint64_t)INT64_MAX)
        st = vf_error_set(err, VF_EUNSUPPORTED, "%s: more than 2^63 rows in all", s->paths[i]);
    }
    vec_close(f);
    if (st != VF_OK) return st;
  }
  return VF_OK;
}

/* Second pass: the next n rows of the sequence (floats into fo, or int64 into io). */
static vf_status seq_read(cv_seq *s, uint64_t n, float *fo, int64_t *io, vf_error *err) {
  while (n > 0) {
    if (!s->cur) {
      if (s->idx >= s->n)
        return vf_error_set(err, VF_EINTERNAL, "convert: read past the last input file");
      vf_status st = vec_open_path(s->paths[s->idx], s->opts, &s->cur, err);
      if (st != VF_OK) return st;
      if (vec_rows(s->cur) != s->rows[s->idx] || vec_dim(s->cur) != s->dim)
        return vf_error_set(err, VF_EIO, "%s: the file changed during the conversion",
                            s->paths[s->idx]);
      s->row = 0;
    }
    uint64_t avail = vec_rows(s->cur) - s->row;
    if (avail == 0) {
      vec_close(s->cur);
      s->cur = NULL;
      s->idx++;
      continue;
    }
    uint64_t take = avail < n ? avail : n;
    vf_status st = fo ? vec_read_rows(s->cur, s->row, take, fo, err)
                      : vec_read_rows_i64(s->cur, s->row, take, io, err);
    if (st != VF_OK) return st;
    s->row += take;
    n -= take;
    if (fo)
      fo += take * s->dim;
    else
      io += take * s->dim;
  }
  return VF_OK;
}

/* ------------------------------------------------------------ output directory */

/* The staging directory of an output (see the top of this file): the parent is created, the
 * staging directories that killed conversions of this output left are swept. */
static vf_status stage_open(const char *out_dir, char **stage, vf_error *err) {
  *stage = NULL;
  char *out = vf_strdup(out_dir);
  if (!out) return vf_error_set(err, VF_ENOMEM, "out of memory");
  size_t l = strlen(out);
  while (l > 1 && out[l - 1] == '/') out[--l] = 0;
  char *slash = strrchr(out, '/');
  char *parent = slash ? vf_strndup(out, slash == out ? 1 : (size_t)(slash - out)) : vf_strdup(".");
  vf_status st = VF_OK;
  if (!parent) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(vf_mkdir_p(parent, 0777, err));
  VF_TRY(vf_temp_sweep(parent, slash ? slash + 1 : out, NULL, err));
  if (!(*stage = vf_temp_path(out, "tmp"))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  if (mkdir(*stage, 0777) != 0) {
    st = vf_error_set(err, VF_EIO, "%s: cannot create the staging directory: %s", *stage,
                      VF_STRERROR(errno));
    free(*stage);
    *stage = NULL;
  }
out:
  free(parent);
  free(out);
  return st;
}

static bool dir_is_empty(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return false;
  struct dirent *e;
  bool empty = true;
  while (empty && (e = readdir(d)) != NULL)
    empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
  closedir(d);
  return empty;
}

/* "batch_NNNNNNNN.parquet" -> N, else -1 */
static long long batch_number(const char *name) {
  if (strncmp(name, "batch_", 6) != 0 || strlen(name) != 6 + 8 + 8 ||
      strcmp(name + 14, ".parquet") != 0)
    return -1;
  long long v = 0;
  for (int i = 6; i < 14; i++) {
    if (name[i] < '0' || name[i] > '9') return -1;
    v = v * 10 + (name[i] - '0');
  }
  return v;
}

static bool ends_with_parquet(const char *name) {
  size_t l = strlen(name);
  return l >= 8 && strcmp(name + l - 8, ".parquet") == 0;
}

typedef struct cv_existing {
  char *other; /* first parquet file that is not one of our batch files (path) */
  char *batch; /* first batch file (path) */
  long long max_batch;
} cv_existing;

/* Finds parquet files under dir (any depth: discovery would read them as part of the corpus). */
static vf_status scan_existing(const char *dir, int depth, cv_existing *ex, vf_error *err) {
  DIR *d = opendir(dir);
  if (!d) {
    if (errno == ENOENT) return VF_OK;
    return vf_error_set(err, VF_EIO, "%s: cannot list the directory: %s", dir, VF_STRERROR(errno));
  }
  vf_status st = VF_OK;
  struct dirent *e;
  char *path = NULL;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    size_t l = strlen(dir) + strlen(e->d_name) + 2;
    path = vf_malloc(l);
    if (!path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    snprintf(path, l, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      /* eval/ holds evaluation artifacts, not corpus files (DESIGN.md) */
      if (depth < 32 && strcmp(e->d_name, "eval") != 0)
        VF_TRY(scan_existing(path, depth + 1, ex, err));
    } else if (ends_with_parquet(e->d_name)) {
      long long b = depth == 0 ? batch_number(e->d_name) : -1;
      if (b < 0 && !ex->other) ex->other = vf_strdup(path);
      if (b >= 0) {
        if (!ex->batch) ex->batch = vf_strdup(path);
        if (b > ex->max_batch) ex->max_batch = b;
      }
    }
    free(path);
    path = NULL;
  }
out:
  free(path);
  closedir(d);
  return st;
}

static char *batch_path(const char *dir, uint64_t k) {
  size_t l = strlen(dir) + 32;
  char *p = vf_malloc(l);
  if (p) snprintf(p, l, "%s/batch_%08llu.parquet", dir, (unsigned long long)k);
  return p;
}

/* ------------------------------------------------------------------ convert */

static void emit_progress(uint64_t done, uint64_t total, uint64_t files_done, uint64_t nfiles,
                          double t0) {
  vf_progress p;
  memset(&p, 0, sizeof p);
  p.phase = "convert";
  p.rows_done = done;
  p.rows_total = total;
  p.files_done = files_done;
  p.files_total = nfiles;
  p.elapsed_s = vf_now() - t0;
  vf_progress_emit(&p);
}

static bool valid_column_name(const char *s) {
  return s && *s && strlen(s) < 256;
}

/*! corpus_convert() : see vecfile.h. */
vf_status corpus_convert(const corpus_convert_opts *o, corpus_convert_result *res, vf_error *err) {
  double t0 = vf_now();
  memset(res, 0, sizeof *res);
  if (!o || !o->sources || o->nsources == 0)
    return vf_error_set(err, VF_EUSAGE, "convert: no source files");
  if (!o->output_dir || !*o->output_dir)
    return vf_error_set(err, VF_EUSAGE, "convert: no output directory (--output DIR)");
  if (strstr(o->output_dir, "://"))
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "convert: %s: only local output directories are supported", o->output_dir);
  const char *vcol = o->vector_column ? o->vector_column : "emb";
  const char *lcol = o->label_column ? o->label_column : "label";
  bool with_labels = o->nlabels > 0;
  if (!valid_column_name(vcol) || !valid_column_name(lcol) || strcmp(vcol, "id") == 0 ||
      (with_labels && (strcmp(lcol, "id") == 0 || strcmp(lcol, vcol) == 0)))
    return vf_error_set(err, VF_EUSAGE,
                        "convert: column names must be non-empty, distinct and not 'id' "
                        "(vector column '%s', label column '%s')",
                        vcol, lcol);
  uint64_t per_file = o->rows_per_file ? o->rows_per_file : CV_DEFAULT_ROWS_PER_FILE;
  if (o->row_group_rows < 0)
    return vf_error_set(err, VF_EUSAGE, "convert: negative row group size");

  vf_status st;
  cv_seq vs = {o->sources, o->nsources, &o->open_opts, NULL, 0, 0, NULL, 0};
  cv_seq ls = {o->labels, o->nlabels, &o->open_opts, NULL, 0, 0, NULL, 0};
  cv_existing ex = {NULL, NULL, -1};
  float *vec = NULL;
  int64_t *ids = NULL, *lab64 = NULL;
  int32_t *lab = NULL;
  pqt_writer *w = NULL;
  char *path = NULL, *stage = NULL;
  uint64_t files = 0, done = 0, total = 0;

  /* pass 1: every header */
  if ((st = seq_probe(&vs, false, 0, &total, err)) != VF_OK) goto out;
  if (with_labels) {
    uint64_t ltotal = 0;
    if ((st = seq_probe(&ls, true, 1, &ltotal, err)) != VF_OK) goto out;
    if (ltotal != total) {
      st = vf_error_set(err, VF_ECORRUPT,
                        "convert: the label file%s %s%s hold%s %llu labels but the source%s "
                        "%s%s hold%s %llu vectors",
                        o->nlabels > 1 ? "s" : "", o->labels[0], o->nlabels > 1 ? ", ..." : "",
                        o->nlabels > 1 ? "" : "s", (unsigned long long)ltotal,
                        o->nsources > 1 ? "s" : "", o->sources[0], o->nsources > 1 ? ", ..." : "",
                        o->nsources > 1 ? "" : "s", (unsigned long long)total);
      goto out;
    }
  }
  uint64_t dim = vs.dim;
  if (dim > (uint64_t)INT32_MAX / 4) {
    st = vf_error_set(err, VF_EUNSUPPORTED, "%s: dimension %llu is too large for a vector column",
                      o->sources[0], (unsigned long long)dim);
    goto out;
  }
  uint64_t nfiles = total == 0 ? 1 : (total + per_file - 1) / per_file;
  if (nfiles > CV_MAX_FILES) {
    st = vf_error_set(err, VF_EUSAGE,
                      "convert: %llu rows at --rows-per-file %llu make more than %u files",
                      (unsigned long long)total, (unsigned long long)per_file, CV_MAX_FILES);
    goto out;
  }

  /* the output directory (it must be one when it exists) and the staging directory */
  struct stat osb;
  bool out_exists = stat(o->output_dir, &osb) == 0;
  if (out_exists && !S_ISDIR(osb.st_mode)) {
    st = vf_error_set(err, VF_EUSAGE, "%s: the output exists and is not a directory",
                      o->output_dir);
    goto out;
  }
  if ((st = scan_existing(o->output_dir, 0, &ex, err)) != VF_OK) goto out;
  if (ex.other) {
    st = vf_error_set(err, VF_EUSAGE,
                      "convert: %s already holds parquet files that are not batch files of a "
                      "previous conversion (%s); choose an empty directory",
                      o->output_dir, ex.other);
    goto out;
  }
  if (ex.batch && !o->overwrite) {
    st = vf_error_set(err, VF_EUSAGE,
                      "convert: %s already holds a corpus (%s); pass --overwrite to replace it",
                      o->output_dir, ex.batch);
    goto out;
  }

  /* buffers: one chunk of rows */
  uint64_t chunk = CV_CHUNK_BYTES / (dim * 4);
  if (chunk < 1) chunk = 1;
  if (chunk > per_file) chunk = per_file;
  int64_t rg_rows = o->row_group_rows;
  if (rg_rows == 0) {
    uint64_t r = CV_ROW_GROUP_BYTES / (dim * 4);
    rg_rows = r < 1 ? 1 : r > CV_MAX_ROW_GROUP_ROWS ? CV_MAX_ROW_GROUP_ROWS : (int64_t)r;
  }
  vec = vf_mallocarray(chunk * dim, sizeof *vec);
  ids = vf_mallocarray(chunk, sizeof *ids);
  if (with_labels) {
    lab64 = vf_mallocarray(chunk, sizeof *lab64);
    lab = vf_mallocarray(chunk, sizeof *lab);
  }
  if (!vec || !ids || (with_labels && (!lab64 || !lab))) {
    st = vf_error_set(err, VF_ENOMEM, "convert: out of memory for a chunk of %llu rows",
                      (unsigned long long)chunk);
    goto out;
  }

  pqt_wcolumn cols[3] = {{"id", PQT_W_INT64, false, 0},
                         {vcol, PQT_W_VECTOR, false, (int32_t)dim},
                         {lcol, PQT_W_INT32, false, 0}};
  int ncols = with_labels ? 3 : 2;
  pqt_writer_opts wo = {PQT_ZSTD, 3, rg_rows, 0};
  double last_progress = 0;
  if ((st = stage_open(o->output_dir, &stage, err)) != VF_OK) goto out;

  /* pass 2: stream */
  for (uint64_t k = 0; k < nfiles; k++) {
    free(path);
    if (!(path = batch_path(stage, k))) {
      st = vf_error_set(err, VF_ENOMEM, "out of memory");
      goto out;
    }
    if ((st = pqt_writer_open(path, cols, ncols, &wo, &w, err)) != VF_OK) goto out;
    uint64_t in_file = 0;
    while (in_file < per_file && done < total) {
      if ((st = vf_check_cancel(err)) != VF_OK) goto out;
      uint64_t take = chunk;
      if (take > per_file - in_file) take = per_file - in_file;
      if (take > total - done) take = total - done;
      if ((st = seq_read(&vs, take, vec, NULL, err)) != VF_OK) goto out;
      for (uint64_t i = 0; i < take; i++)
        ids[i] = (int64_t)(done + i);
      if (with_labels) {
        if ((st = seq_read(&ls, take, NULL, lab64, err)) != VF_OK) goto out;
        for (uint64_t i = 0; i < take; i++) {
          if (lab64[i] < INT32_MIN || lab64[i] > INT32_MAX) {
            st = vf_error_set(err, VF_ECORRUPT,
                              "%s: label %lld at row %llu of the label files does not fit INT32",
                              o->labels[ls.idx < ls.n ? ls.idx : ls.n - 1], (long long)lab64[i],
                              (unsigned long long)(done + i));
            goto out;
          }
          lab[i] = (int32_t)lab64[i];
        }
      }
      pqt_wbatch b[3];
      memset(b, 0, sizeof b);
      b[0].values = ids;
      b[1].values = vec;
      b[2].values = lab;
      if ((st = pqt_writer_write(w, b, (int64_t)take, err)) != VF_OK) goto out;
      in_file += take;
      done += take;
      if (vf_now() - last_progress >= 0.2) {
        last_progress = vf_now();
        emit_progress(done, total, vs.idx, o->nsources, t0);
      }
    }
    st = pqt_writer_close(w, err);
    w = NULL;
    if (st != VF_OK) goto out;
    files++;
  }
  if ((st = vf_check_cancel(err)) != VF_OK) goto out;
  /* the staging directory becomes the output: one rename when there is nothing there yet */
  if (!out_exists || dir_is_empty(o->output_dir)) {
    if (out_exists) rmdir(o->output_dir);
    if (rename(stage, o->output_dir) != 0) {
      st = vf_error_set(err, VF_EIO, "%s: cannot rename %s into place: %s", o->output_dir, stage,
                        VF_STRERROR(errno));
      goto out;
    }
    free(stage);
    stage = NULL;
  } else {
    for (uint64_t k = 0; k < files; k++) {
      char *from = batch_path(stage, k), *to = batch_path(o->output_dir, k);
      if (!from || !to) st = vf_error_set(err, VF_ENOMEM, "out of memory");
      else if (rename(from, to) != 0)
        st = vf_error_set(err, VF_EIO, "%s: cannot rename %s into place: %s", to, from,
                          VF_STRERROR(errno));
      free(from);
      free(to);
      if (st != VF_OK) goto out;
    }
  }
  /* overwrite: a previous, longer conversion's files past ours */
  for (long long k = (long long)files; k <= ex.max_batch; k++) {
    free(path);
    if (!(path = batch_path(o->output_dir, (uint64_t)k))) {
      st = vf_error_set(err, VF_ENOMEM, "out of memory");
      goto out;
    }
    if (unlink(path) == 0)
      res->removed++;
    else if (errno != ENOENT) {
      st = vf_error_set(err, VF_EIO, "%s: cannot remove a stale batch file: %s", path,
                        VF_STRERROR(errno));
      goto out;
    }
  }
  emit_progress(done, total, o->nsources, o->nsources, t0);
  res->rows = total;
  res->files = files;
  res->dim = dim;
  st = VF_OK;
out:
  pqt_writer_abort(w);
  if (stage) { /* never leave a partial corpus: the staging directory goes (emptied on success) */
    vf_error e;
    if (vf_remove_tree(stage, &e) != VF_OK) vf_log(VF_LOG_WARN, "convert: %s", e.msg);
    free(stage);
  }
  free(path);
  free(vec);
  free(ids);
  free(lab64);
  free(lab);
  free(ex.other);
  free(ex.batch);
  seq_free(&vs);
  seq_free(&ls);
  res->seconds = vf_now() - t0;
  return st;
}
