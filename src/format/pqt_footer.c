/*
 * pqt_footer.c — a parsed parquet footer kept apart from any open file, and a reader opened over
 * one (format.h "parsed footers").
 *
 * Why: a command opens every file of a corpus once to plan (rows, dimension, empty files) and
 * then again per work unit to read it.  Each pqt_open() reads the file's tail (and its first
 * bytes) and parses the thrift footer again — a request per open on a remote corpus, and a
 * 64-slot byte cache in httpsrc.c only hid the repeat until a corpus had more files than that.
 * The corpus plan (src/corpus/plan.c) keeps the footer parsed at the first open and opens the
 * later readers over it with pqt_open_footer(), which reads nothing from the source.
 *
 * A pqt_footer is the FileMetaData as the reader keeps it after pqt_open()'s checks (row groups
 * as written, num_rows corrected to the row groups' sum) plus the file size and where the footer
 * starts.  pqt_open_footer() deep-copies it into the new file, so one footer serves any number of
 * readers on any threads, and the file frees its copy in pqt_close() as always.
 */
#include <stdlib.h>
#include <string.h>

#include "format/pqt_reader_internal.h"

struct pqt_footer {
  uint64_t size;      /* of the file it was read from */
  uint64_t data_end;  /* first byte of the footer */
  uint64_t open_read; /* bytes pqt_open() reads to get it (tail, magic, a long footer) */
  size_t bytes;       /* heap held, for the plan's cache cap */
  pqt_file_meta meta;
};

static char *ft_strdup(const char *s, size_t *bytes, bool *oom) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (!d) {
    *oom = true;
    return NULL;
  }
  memcpy(d, s, n);
  *bytes += n;
  return d;
}

static void *ft_dup(const void *p, size_t n, size_t *bytes, bool *oom) {
  if (!p || n == 0) return NULL;
  void *d = malloc(n);
  if (!d) {
    *oom = true;
    return NULL;
  }
  memcpy(d, p, n);
  *bytes += n;
  return d;
}

/* A deep copy of `m` with `rgs`/`nrgs` as its row groups; counts are kept only where their
 * arrays were copied, so pqt_file_meta_free() frees a partial copy correctly. */
static bool meta_copy(const pqt_file_meta *m, const pqt_row_group *rgs, int nrgs,
                      pqt_file_meta *out, size_t *bytes) {
  bool oom = false;
  memset(out, 0, sizeof *out);
  out->version = m->version;
  out->num_rows = m->num_rows;
  out->has_encryption_algorithm = m->has_encryption_algorithm;
  out->created_by = ft_strdup(m->created_by, bytes, &oom);
  out->schema = ft_dup(m->schema, (size_t)m->nschema * sizeof *m->schema, bytes, &oom);
  if (out->schema) {
    for (int i = 0; i < m->nschema; i++)
      out->schema[i].name = NULL;
    out->nschema = m->nschema;
    for (int i = 0; i < m->nschema; i++)
      out->schema[i].name = ft_strdup(m->schema[i].name, bytes, &oom);
  }
  out->kv = vf_calloc((size_t)m->nkv + 1, sizeof *out->kv);
  if (!out->kv) return false;
  *bytes += ((size_t)m->nkv + 1) * sizeof *out->kv;
  out->nkv = m->nkv;
  for (int i = 0; i < m->nkv; i++) {
    out->kv[i].key = ft_strdup(m->kv[i].key, bytes, &oom);
    out->kv[i].value = ft_strdup(m->kv[i].value, bytes, &oom);
  }
  out->row_groups = vf_calloc((size_t)nrgs + 1, sizeof *out->row_groups);
  if (!out->row_groups) return false;
  *bytes += ((size_t)nrgs + 1) * sizeof *out->row_groups;
  out->nrow_groups = nrgs;
  for (int g = 0; g < nrgs && !oom; g++) {
    const pqt_row_group *src = &rgs[g];
    pqt_row_group *dst = &out->row_groups[g];
    *dst = *src;
    dst->columns = NULL;
    dst->ncolumns = 0;
    dst->columns = vf_calloc((size_t)src->ncolumns + 1, sizeof *dst->columns);
    if (!dst->columns) return false;
    *bytes += ((size_t)src->ncolumns + 1) * sizeof *dst->columns;
    dst->ncolumns = src->ncolumns;
    for (int c = 0; c < src->ncolumns; c++) {
      const pqt_column_chunk *sc = &src->columns[c];
      pqt_column_chunk *dc = &dst->columns[c];
      *dc = *sc;
      dc->file_path = ft_strdup(sc->file_path, bytes, &oom);
      dc->meta.encodings = NULL;
      dc->meta.nencodings = 0;
      dc->meta.path = NULL;
      dc->meta.path_len = 0;
      dc->meta.encodings = ft_dup(sc->meta.encodings,
                                  (size_t)sc->meta.nencodings * sizeof *sc->meta.encodings, bytes,
                                  &oom);
      if (dc->meta.encodings) dc->meta.nencodings = sc->meta.nencodings;
      if (sc->meta.path_len > 0) {
        dc->meta.path = vf_calloc((size_t)sc->meta.path_len, sizeof *dc->meta.path);
        if (!dc->meta.path) return false;
        *bytes += (size_t)sc->meta.path_len * sizeof *dc->meta.path;
        dc->meta.path_len = sc->meta.path_len;
        for (int k = 0; k < sc->meta.path_len; k++)
          dc->meta.path[k] = ft_strdup(sc->meta.path[k], bytes, &oom);
      }
    }
  }
  return !oom;
}

/*! pqt_footer_of(): see format.h. */
vf_status pqt_footer_of(const pqt_file *f, pqt_footer **out, vf_error *err) {
  *out = NULL;
  pqt_footer *ft = vf_calloc(1, sizeof *ft);
  if (!ft) return vf_error_set(err, VF_ENOMEM, "%s: out of memory keeping the footer", pqt_name(f));
  ft->size = f->src->size;
  ft->data_end = f->data_end;
  uint64_t flen = ft->size - 8 - ft->data_end;
  uint64_t tail = ft->size < PQT_TAIL_READ ? ft->size : PQT_TAIL_READ;
  ft->open_read = tail + (ft->size > tail ? 4 : 0) + (flen + 8 > tail ? flen : 0);
  ft->bytes = sizeof *ft;
  const pqt_row_group *rgs = f->phys_rgs ? f->phys_rgs : f->meta.row_groups;
  int nrgs = f->phys_rgs ? f->nphys : f->meta.nrow_groups;
  if (!meta_copy(&f->meta, rgs, nrgs, &ft->meta, &ft->bytes)) {
    pqt_footer_free(ft);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory keeping the footer", pqt_name(f));
  }
  *out = ft;
  return VF_OK;
}

/*! pqt_footer_free(): see format.h. */
void pqt_footer_free(pqt_footer *ft) {
  if (!ft) return;
  pqt_file_meta_free(&ft->meta);
  free(ft);
}

/*! pqt_footer_bytes(): see format.h. */
size_t pqt_footer_bytes(const pqt_footer *ft) {
  return ft->bytes;
}

/*! pqt_footer_size(): see format.h. */
uint64_t pqt_footer_size(const pqt_footer *ft) {
  return ft->size;
}

/*! pqt_open_footer(): see format.h. */
vf_status pqt_open_footer(io_source *src, const pqt_footer *ft, const pqt_open_opts *opts,
                          pqt_file **out, vf_error *err) {
  *out = NULL;
  if (src->size != ft->size) return pqt_open(src, opts, out, err); /* not the file planned */
  const char *name = src->name ? src->name : "(parquet)";
  pqt_file *f = pr_file_new(src, opts);
  if (!f) {
    io_close(src);
    return vf_error_set(err, VF_ENOMEM, "out of memory opening a parquet file");
  }
  f->data_end = ft->data_end;
  /* the bytes a pqt_open() of this file reads, so a reader's bytes_read (a logical count that
   * commands print) is the same whether its footer came from the plan or from the file */
  src->bytes_read += ft->open_read;
  size_t ignored = 0;
  vf_status st = VF_OK;
  if (!meta_copy(&ft->meta, ft->meta.row_groups, ft->meta.nrow_groups, &f->meta, &ignored)) {
    st = vf_error_set(err, VF_ENOMEM, "%s: out of memory opening a parquet file", name);
    goto out;
  }
  st = pqt_schema_build(&f->meta, &f->schema, err);
  if (st != VF_OK) {
    vf_error_prefix(err, "%s: schema: ", name);
    goto out;
  }
  VF_TRY(pr_slice_row_groups(f, err));
out:
  if (st != VF_OK) pqt_close(f);
  else *out = f;
  return st;
}
