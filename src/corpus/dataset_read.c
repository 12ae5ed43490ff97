/*
 * Record batches from one part of a component dataset (src/corpus/dataset.h): row i of the
 * vectors file (npy / fbin / hdf5) and row i of the payload parquet become point i.
 *
 * The payload part is read by the ordinary parquet record reader (ids, payload and any vector
 * that names a payload `column`), so the read unit is the payload's row group; the vectors of
 * the same physical rows are then read from the vectors file and placed at their positions in
 * the spec.  Without a payload part the unit is DS_VIRTUAL_RG_ROWS rows and the ids come from
 * the id expression alone (`row`, `vf_point_id(filename, file_row_number)`, ...).
 *
 * Pairing is by physical row, never by position in a batch: each returned point carries its
 * file row and its vector is read at that row, so a row dropped as bad on either side cannot
 * shift the other side.  Opening a part checks its measured size against the one the parts
 * were resolved with (the parts index) and takes a reference in the part cache, which is how
 * `cache: evict` knows when a part can go.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset_internal.h"
#include "vforge/filter.h"
#include "internal.h"
#include "vforge/format.h"

struct ds_reader {
  struct corpus_dataset *d;
  size_t part;
  const corpus_file *file;
  corpus_record_spec spec;
  uint64_t base;
  bool acquired;
  vec_file *vf;
  uint64_t rows, dim;
  corpus_file pfile; /* the payload part, keyed like the dataset part */
  corpus_records *pr;
  corpus_vec_source *pvecs; /* spec vectors read from the payload parquet */
  int *pvec_at;             /* their index in spec.vectors */
  int npvecs;
  corpus_payload_source *psrc; /* payload sources given to the parquet reader */
  int npsrc;
  char **owned_names; /* column names of an automatic payload list */
  int nowned;
  float *vbuf;
  size_t vcap;
  uint64_t vbytes; /* bytes of vectors read */
  /* a jsonl payload part: line k (point k) is bytes [joff[k], joff[k+1]) of jfd */
  int jfd;
  uint64_t *joff;
  vf_buf jbuf, jobj;
};

/* ------------------------------------------------------------ jsonl payloads */

/* the start of every line of a jsonl file (n + 1 offsets when `off` is set), counting lines */
static vf_status jsonl_scan(const char *path, int fd, uint64_t **off, uint64_t *rows, vf_error *err) {
  uint64_t *o = NULL;
  size_t cap = 0, n = 0;
  static const size_t CH = (size_t)1 << 20;
  char *buf = vf_malloc(CH);
  if (!buf) return vf_error_set(err, VF_ENOMEM, "out of memory");
  vf_status st = VF_OK;
  uint64_t pos = 0, line_start = 0;
  bool pending = false; /* bytes after the last newline */
  for (;;) {
    ssize_t got = pread(fd, buf, CH, (off_t)pos);
    if (got < 0) VF_FAIL(vf_error_set(err, VF_EIO, "%s: read error: %s", path, VF_STRERROR(errno)));
    if (got == 0) break;
    for (ssize_t i = 0; i < got; i++) {
      pending = true;
      if (buf[i] != '\n') continue;
      if (off) {
        if (n + 2 > cap) {
          size_t nc = cap ? cap * 2 : 4096;
          uint64_t *no = vf_realloc(o, nc * sizeof *no);
          if (!no) VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory for the line index", path));
          o = no;
          cap = nc;
        }
        o[n] = line_start;
      }
      n++;
      line_start = pos + (uint64_t)i + 1;
      pending = false;
    }
    pos += (uint64_t)got;
  }
  if (pending) { /* a last line without '\n' */
    if (off && n + 2 > cap) {
      uint64_t *no = vf_realloc(o, (n + 2) * sizeof *no);
      if (!no) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
      o = no;
    }
    if (off) o[n] = line_start;
    n++;
  }
  if (off) {
    if (!o && !(o = vf_malloc(sizeof *o))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    o[n] = pos;
    *off = o;
    o = NULL;
  }
  *rows = n;
out:
  free(buf);
  free(o);
  return st;
}

vf_status ds_jsonl_count(const char *path, uint64_t *rows, vf_error *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return vf_error_set(err, VF_ENOTFOUND, "%s: cannot open: %s", path, VF_STRERROR(errno));
  vf_status st = jsonl_scan(path, fd, NULL, rows, err);
  close(fd);
  return st;
}

/* append `"key":<member column of line s>` for payload source ps, unless the line has no such
 * member (*found false, nothing appended past `,`: the caller truncates) */
static vf_status jsonl_member(ds_reader *r, const corpus_payload_source *ps, const char *s, size_t n,
                              bool first, bool *found, vf_error *err) {
  vf_status st = VF_OK;
  *found = false;
  if (!first) VF_TRY(vf_buf_append(&r->jobj, ",", 1, err));
  VF_TRY(vf_json_string(&r->jobj, ps->key, strlen(ps->key), err));
  VF_TRY(vf_buf_append(&r->jobj, ":", 1, err));
  VF_TRY(flt_json_member(s, n, ps->column, &r->jobj, found, err));
out:
  return st;
}

/* the payloads of rows [from, end) from the jsonl part: the whole line, or with payload sources
 * (payload_fields) the object of those keys, each read from the line's member `column` */
static vf_status jsonl_rows(ds_reader *r, uint64_t from, uint64_t end, corpus_batch *out,
                            vf_error *err) {
  uint64_t a = r->joff[from], b = r->joff[end];
  vf_buf_reset(&r->jbuf);
  vf_status st = vf_buf_reserve(&r->jbuf, (size_t)(b - a) + 1, err);
  if (st != VF_OK) return st;
  for (uint64_t got = 0; got < b - a;) {
    ssize_t n = pread(r->jfd, r->jbuf.data + got, (size_t)(b - a - got), (off_t)(a + got));
    if (n <= 0)
      return vf_error_set(err, VF_EIO, "%s: read error at byte %" PRIu64, r->d->parts[r->part].ppath, a + got);
    got += (uint64_t)n;
  }
  const char *base = (const char *)r->jbuf.data;
  vf_buf_reset(&out->payload);
  out->payload_offsets[0] = 0;
  for (uint64_t k = from; k < end; k++) {
    const char *s = base + (r->joff[k] - a);
    size_t n = (size_t)(r->joff[k + 1] - r->joff[k]);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (n == 0) {
      s = "{}";
      n = 2;
    }
    if (r->spec.npayload == 0) {
      if (!vf_json_is_object(s, n))
        return vf_error_set(err, VF_ECORRUPT, "%s: line %" PRIu64 " is not a JSON object",
                            r->d->parts[r->part].ppath, k + 1);
      VF_TRY(vf_buf_append(&out->payload, s, n, err));
    } else {
      vf_buf_reset(&r->jobj);
      bool first = true;
      VF_TRY(vf_buf_append(&r->jobj, "{", 1, err));
      for (int i = 0; i < r->spec.npayload; i++) {
        size_t mark = r->jobj.len;
        bool found = false;
        st = jsonl_member(r, &r->spec.payload[i], s, n, first, &found, err);
        if (st != VF_OK) {
          vf_error_prefix(err, "%s: line %" PRIu64 ": ", r->d->parts[r->part].ppath, k + 1);
          goto out;
        }
        if (!found) r->jobj.len = mark; /* absent: the key is left out, as a parquet null */
        else first = false;
      }
      VF_TRY(vf_buf_append(&r->jobj, "}", 1, err));
      VF_TRY(vf_buf_append(&out->payload, r->jobj.data, r->jobj.len, err));
    }
    out->payload_offsets[k - from + 1] = (int64_t)out->payload.len;
  }
out:
  return st;
}

static bool in_list(char *const *l, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(l[i], s) == 0) return true;
  return false;
}

/* The payload sources: payload_fields when given, else every
 * top-level column of the payload file allowed by `columns` / `exclude`. */
static vf_status payload_sources(ds_reader *r, vf_error *err) {
  const struct corpus_dataset *d = r->d;
  if (r->spec.npayload > 0) {
    r->psrc = vf_calloc((size_t)r->spec.npayload, sizeof *r->psrc);
    if (!r->psrc) return vf_error_set(err, VF_ENOMEM, "out of memory");
    for (int i = 0; i < r->spec.npayload; i++)
      r->psrc[i] = r->spec.payload[i];
    r->npsrc = r->spec.npayload;
    return VF_OK;
  }
  io_source *src = NULL;
  pqt_file *f = NULL;
  vf_status st = io_open_local(r->pfile.uri, &src, err);
  if (st != VF_OK) return st;
  if ((st = pqt_open(src, NULL, &f, err)) != VF_OK) return st; /* takes src, also on failure */
  const pqt_schema *sc = pqt_schema_of(f);
  for (size_t i = 0; i < d->npcolumns; i++)
    if (pqt_find_top(f, d->pcolumns[i]) < 0)
      VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: datasource.payload.columns: no column '%s'",
                           r->pfile.uri, d->pcolumns[i]));
  r->psrc = vf_calloc((size_t)sc->ntop + 1, sizeof *r->psrc);
  r->owned_names = vf_calloc((size_t)sc->ntop + 1, sizeof *r->owned_names);
  if (!r->psrc || !r->owned_names) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (int i = 0; i < sc->ntop; i++) {
    const char *name = sc->nodes[sc->top[i]].name;
    if (d->npcolumns && !in_list(d->pcolumns, d->npcolumns, name)) continue;
    if (in_list(d->pexclude, d->npexclude, name)) continue;
    char *n = vf_strdup(name);
    if (!n) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    r->owned_names[r->nowned++] = n;
    r->psrc[r->npsrc++] = (corpus_payload_source){n, n};
  }
out:
  pqt_close(f);
  return st;
}

vf_status ds_reader_open(const corpus_file *file, const corpus_record_spec *spec,
                         uint64_t global_row_base, ds_reader **out, vf_error *err) {
  *out = NULL;
  struct corpus_dataset *d = file->dataset;
  if (file->part >= d->nparts)
    return vf_error_set(err, VF_EUSAGE, "%s: no dataset part %" PRIu64, d->name, file->part);
  ds_reader *r = vf_calloc(1, sizeof *r);
  if (!r) return vf_error_set(err, VF_ENOMEM, "out of memory");
  r->d = d;
  r->part = (size_t)file->part;
  r->file = file;
  r->spec = *spec;
  r->base = global_row_base;
  r->jfd = -1;
  VF_BUF_INIT(&r->jbuf, VF_BUF_MAX_BATCH);
  VF_BUF_INIT(&r->jobj, VF_BUF_MAX_RECORD);
  const ds_part *p = &d->parts[r->part];
  vf_status st = VF_OK;
  VF_TRY(ds_part_acquire(d, r->part, err));
  r->acquired = true;
  VF_TRY(ds_open_vectors(d, p->vpath, &r->vf, err));
  r->rows = vec_rows(r->vf);
  r->dim = vec_dim(r->vf);
  if (r->rows != p->rows)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: dataset part %zu (%s) has %" PRIu64 " rows, but the parts index %s "
                         "records %" PRIu64 " (the part changed): delete %s to re-measure the parts",
                         d->name, r->part, p->vpath, r->rows, d->index_path, p->rows,
                         d->index_path));
  int nv = spec->nvectors;
  r->pvecs = vf_calloc((size_t)nv + 1, sizeof *r->pvecs);
  r->pvec_at = vf_calloc((size_t)nv + 1, sizeof *r->pvec_at);
  if (!r->pvecs || !r->pvec_at) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (int i = 0; i < nv; i++) {
    const corpus_vec_source *v = &spec->vectors[i];
    if (!v->column) {
      if (v->kind != CORPUS_VEC_DENSE)
        VF_FAIL(vf_error_set(err, VF_ECONFIG, "%s: vector '%s': %s files hold dense vectors only",
                             d->name, v->name, vec_format(r->vf)));
      continue;
    }
    if (!d->has_payload)
      VF_FAIL(vf_error_set(err, VF_ECONFIG,
                           "%s: vector '%s' reads column '%s', but the dataset has no payload part",
                           d->name, v->name, v->column));
    r->pvec_at[r->npvecs] = i;
    r->pvecs[r->npvecs++] = *v;
  }
  if (d->has_payload && d->pformat == VF_CFG_FORMAT_JSONL) {
    if (r->npvecs)
      VF_FAIL(vf_error_set(err, VF_ECONFIG, "%s: vector '%s' reads column '%s', but a jsonl payload "
                           "holds no vectors", d->name, r->pvecs[0].name, r->pvecs[0].column));
    uint64_t lines = 0;
    if ((r->jfd = open(p->ppath, O_RDONLY | O_CLOEXEC)) < 0)
      VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: cannot open: %s", p->ppath, VF_STRERROR(errno)));
    VF_TRY(jsonl_scan(p->ppath, r->jfd, &r->joff, &lines, err));
    if (lines != r->rows)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                        "%s: dataset part %zu: the vectors file %s has %" PRIu64
                        " rows but the payload file %s has %" PRIu64
                        " lines (line i is the payload of point i: the counts must be equal)",
                        d->name, r->part, p->vpath, r->rows, p->ppath, lines));
  } else if (d->has_payload) {
    r->pfile.uri = p->ppath;
    r->pfile.key = file->key;
    VF_TRY(payload_sources(r, err));
    corpus_record_spec ps = *spec;
    ps.vectors = r->pvecs;
    ps.nvectors = r->npvecs;
    ps.payload = r->psrc;
    ps.npayload = r->npsrc;
    if (d->fill_null) ps.payload_null_json = d->fill_null;
    VF_TRY(corpus_records_open(&r->pfile, &ps, global_row_base, &r->pr, err));
    if (corpus_records_rows(r->pr) != r->rows)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                        "%s: dataset part %zu: the vectors file %s has %" PRIu64
                        " rows but the payload file %s has %" PRIu64
                        " (row i of each becomes point i: the counts must be equal)",
                        d->name, r->part, p->vpath, r->rows, p->ppath, corpus_records_rows(r->pr)));
  }
out:
  if (st != VF_OK) {
    ds_reader_close(r);
    return st;
  }
  *out = r;
  return VF_OK;
}

int ds_reader_row_groups(const ds_reader *r) {
  if (r->pr) return corpus_records_row_groups(r->pr);
  return (int)((r->rows + DS_VIRTUAL_RG_ROWS - 1) / DS_VIRTUAL_RG_ROWS);
}

uint64_t ds_reader_rows(const ds_reader *r) {
  return r->rows;
}

uint64_t ds_reader_row_group_first(const ds_reader *r, int rg) {
  if (r->pr) return corpus_records_row_group_first(r->pr, rg);
  if (rg < 0) return 0;
  uint64_t f = (uint64_t)rg * DS_VIRTUAL_RG_ROWS;
  return f < r->rows ? f : r->rows;
}

uint64_t ds_reader_bytes_read(const ds_reader *r) {
  /* the payload reader's count plus the vector bytes (the vec reader reads exactly those) */
  return (r->pr ? corpus_records_bytes_read(r->pr) : 0) + r->vbytes;
}

const corpus_records *ds_reader_payload(const ds_reader *r) {
  return r->pr;
}

void ds_reader_close(ds_reader *r) {
  if (!r) return;
  corpus_records_close(r->pr);
  vec_close(r->vf);
  if (r->acquired) ds_part_release(r->d, r->part);
  for (int i = 0; i < r->nowned; i++)
    free(r->owned_names[i]);
  free(r->owned_names);
  free(r->psrc);
  free(r->pvecs);
  free(r->pvec_at);
  free(r->vbuf);
  if (r->jfd >= 0) close(r->jfd);
  free(r->joff);
  vf_buf_free(&r->jbuf);
  vf_buf_free(&r->jobj);
  free(r);
}

static vf_status no_column(void *user, const char *column, corpus_value *out, vf_error *err) {
  (void)out;
  const ds_reader *r = user;
  return vf_error_set(err, VF_ECONFIG,
                      "%s: the id expression reads column '%s', but the dataset has no payload "
                      "part (use `row` or vf_point_id(filename, file_row_number))",
                      r->d->name, column);
}

/* Rows [from, end) of a part without payload: ids and empty payloads. */
static vf_status read_plain(ds_reader *r, uint64_t from, uint64_t end, corpus_batch *out,
                            vf_error *err) {
  size_t n = (size_t)(end - from);
  void *a = vf_realloc(out->ids, (n + 1) * sizeof *out->ids);
  if (a) out->ids = a;
  void *b = a ? vf_realloc(out->file_rows, (n + 1) * sizeof *out->file_rows) : NULL;
  if (b) out->file_rows = b;
  void *c = b ? vf_realloc(out->payload_offsets, (n + 1) * sizeof *out->payload_offsets) : NULL;
  if (c) out->payload_offsets = c;
  if (!c) return vf_error_set(err, VF_ENOMEM, "out of memory for %zu rows", n);
  vf_buf_reset(&out->payload);
  out->payload_offsets[0] = 0;
  const char *key = r->file->key;
  size_t klen = strlen(key);
  for (size_t k = 0; k < n; k++) {
    uint64_t row = from + k;
    out->file_rows[k] = row;
    if (r->spec.id) {
      corpus_row_ctx rc = {.file_key = key,
                           .file_key_len = klen,
                           .file_row = row,
                           .global_row = r->base + row,
                           .get_column = no_column,
                           .user = r};
      vf_status st = corpus_idexpr_eval(r->spec.id, &rc, &out->ids[k], err);
      if (st != VF_OK) return st;
    } else {
      memset(&out->ids[k], 0, sizeof out->ids[k]);
      out->ids[k].is_uuid = true;
      corpus_point_id(key, klen, row, out->ids[k].uuid);
    }
    vf_status st = vf_buf_append(&out->payload, "{}", 2, err);
    if (st != VF_OK) return st;
    out->payload_offsets[k + 1] = (int64_t)out->payload.len;
  }
  out->n = n;
  return VF_OK;
}

static int64_t first_nonfinite(const float *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[i], 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return (int64_t)i;
  }
  return -1;
}

/* Drop the rows with keep[k] == 0 from the batch (dense vectors only); payload_offsets are
 * left for the caller to rebuild. */
static vf_status compact(corpus_batch *b, const uint8_t *keep, vf_error *err) {
  for (int i = 0; i < b->nvectors; i++)
    if (b->vectors[i].kind != CORPUS_VEC_DENSE)
      return vf_error_set(err, VF_EUNSUPPORTED,
                          "skip_bad_rows: dropping rows of a batch with sparse or multivector "
                          "vectors from a dataset's payload is not supported");
  vf_buf np;
  VF_BUF_INIT(&np, VF_BUF_MAX_BATCH);
  vf_status st = VF_OK;
  const int64_t *po = b->payload_offsets;
  size_t w = 0;
  for (size_t k = 0; k < b->n; k++) {
    if (!keep[k]) continue;
    b->ids[w] = b->ids[k];
    b->file_rows[w] = b->file_rows[k];
    for (int i = 0; i < b->nvectors; i++) {
      corpus_vec_batch *v = &b->vectors[i];
      size_t dim = (size_t)v->dim;
      if (v->dense && w != k) memmove(v->dense + w * dim, v->dense + k * dim, dim * sizeof(float));
    }
    VF_TRY(vf_buf_append(&np, b->payload.data + po[k], (size_t)(po[k + 1] - po[k]), err));
    w++;
  }
  vf_buf_free(&b->payload);
  b->payload = np;
  b->n = w;
out:
  if (st != VF_OK) vf_buf_free(&np);
  return st;
}

vf_status ds_reader_read(ds_reader *r, int rg, uint64_t from_row, corpus_batch *out,
                         uint64_t *skipped, vf_error *err) {
  if (skipped) *skipped = 0;
  vf_status st;
  uint64_t end;
  if (r->pr) {
    uint64_t psk = 0;
    st = corpus_records_read(r->pr, rg, from_row, out, &psk, err);
    if (st != VF_OK) return st;
    if (skipped) *skipped = psk;
    end = corpus_records_row_group_first(r->pr, rg + 1);
  } else {
    int nrg = ds_reader_row_groups(r);
    if (rg < 0 || rg >= nrg)
      return vf_error_set(err, VF_EUSAGE, "%s: no row group %d (the part has %d)", r->file->uri,
                          rg, nrg);
    uint64_t first = ds_reader_row_group_first(r, rg);
    end = ds_reader_row_group_first(r, rg + 1);
    if (from_row < first || from_row > end)
      return vf_error_set(err, VF_EUSAGE, "%s: row %" PRIu64 " is not in row group %d",
                          r->file->uri, from_row, rg);
    corpus_batch_vectors_free(out);
    if ((st = read_plain(r, from_row, end, out, err)) != VF_OK) return st;
    if (r->joff && (st = jsonl_rows(r, from_row, end, out, err)) != VF_OK) return st;
  }
  out->file_key = r->file->key;
  /* the vectors in spec order: the payload reader's ones moved to their places */
  int nv = r->spec.nvectors;
  corpus_vec_batch *vv = vf_calloc((size_t)nv + 1, sizeof *vv);
  if (!vv) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (int j = 0; j < r->npvecs && out->vectors && j < out->nvectors; j++)
    vv[r->pvec_at[j]] = out->vectors[j];
  free(out->vectors);
  out->vectors = vv;
  out->nvectors = nv;
  size_t n = out->n;
  if (n == 0) return VF_OK;
  uint64_t lo = out->file_rows[0], hi = out->file_rows[n - 1] + 1;
  (void)end;
  if (hi > r->rows)
    return vf_error_set(err, VF_EINTERNAL, "%s: row %" PRIu64 " past the part's %" PRIu64 " rows",
                        r->file->uri, hi - 1, r->rows);
  size_t dim = (size_t)r->dim;
  size_t need = (size_t)(hi - lo) * dim;
  bool any_vec = false;
  for (int i = 0; i < nv; i++)
    any_vec |= r->spec.vectors[i].column == NULL;
  if (!any_vec) return VF_OK;
  if (need > r->vcap) {
    float *nb = vf_realloc(r->vbuf, need * sizeof(float));
    if (!nb) return vf_error_set(err, VF_ENOMEM, "out of memory for %zu floats", need);
    r->vbuf = nb;
    r->vcap = need;
  }
  if ((st = vec_read_rows(r->vf, lo, hi - lo, r->vbuf, err)) != VF_OK) return st;
  r->vbytes += (hi - lo) * dim * vec_dtype_size(vec_layout_of(r->vf)->dtype);
  uint8_t *keep = NULL;
  int64_t *lens = NULL;
  size_t nbad = 0;
  for (int i = 0; i < nv; i++) {
    const corpus_vec_source *s = &r->spec.vectors[i];
    if (s->column) continue;
    corpus_vec_batch *o = &out->vectors[i];
    o->name = s->name;
    o->kind = CORPUS_VEC_DENSE;
    o->distance = s->distance;
    o->dim = (int32_t)dim;
    o->dense = vf_malloc(n * dim * sizeof(float) + 1);
    if (!o->dense) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    for (size_t k = 0; k < n; k++) {
      const float *x = r->vbuf + (size_t)(out->file_rows[k] - lo) * dim;
      memcpy(o->dense + k * dim, x, dim * sizeof(float));
      int64_t bad = first_nonfinite(x, dim);
      if (bad < 0) continue;
      if (!r->spec.skip_bad_rows)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                             "%s: row %" PRIu64 ": vector '%s' has a non-finite value at "
                             "position %" PRId64 " (set loader.skip_bad_rows to drop such rows)",
                             vec_name(r->vf), out->file_rows[k], s->name, bad));
      if (!keep) {
        keep = vf_malloc(n);
        if (!keep) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
        memset(keep, 1, n);
      }
      if (keep[k]) nbad++;
      keep[k] = 0;
    }
  }
  if (keep) {
    /* payload offsets of the kept rows, rebuilt from the old ones */
    int64_t *po = out->payload_offsets;
    lens = vf_mallocarray(n + 1, sizeof *lens);
    if (!lens) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    size_t w = 0;
    for (size_t k = 0; k < n; k++)
      if (keep[k]) lens[w++] = po[k + 1] - po[k];
    VF_TRY(compact(out, keep, err));
    out->payload_offsets[0] = 0;
    for (size_t k = 0; k < w; k++)
      out->payload_offsets[k + 1] = out->payload_offsets[k] + lens[k];
    if (skipped) *skipped += nbad;
  }
out:
  free(lens);
  free(keep);
  return st;
}

/* ------------------------------------------------------------ the record reader's source */

/* corpus_records over a dataset part (internal.h corpus_records_source): the ds_reader calls. */
static vf_status dsrc_open(corpus_records *r, const struct pqt_open_opts *opts, void **impl,
                           vf_error *err) {
  (void)opts; /* the payload parquet file is opened with defaults */
  ds_reader *d = NULL;
  vf_status st = ds_reader_open(corpus_records_file(r), corpus_records_spec(r),
                                corpus_records_row_base(r), &d, err);
  *impl = d;
  return st;
}
static int dsrc_row_groups(const void *impl) {
  return ds_reader_row_groups(impl);
}
static uint64_t dsrc_rows(const void *impl) {
  return ds_reader_rows(impl);
}
static uint64_t dsrc_row_group_first(const void *impl, int rg) {
  return ds_reader_row_group_first(impl, rg);
}
static vf_status dsrc_read(void *impl, int rg, uint64_t from_row, corpus_batch *out,
                           uint64_t *skipped, vf_error *err) {
  return ds_reader_read(impl, rg, from_row, out, skipped, err);
}
static uint64_t dsrc_bytes_read(const void *impl) {
  return ds_reader_bytes_read(impl);
}
static bool dsrc_payload(const void *impl, corpus_payload_view *out) {
  const corpus_records *pr = ds_reader_payload(impl);
  return pr && corpus_records_payload_view(pr, out);
}
static void dsrc_close(void *impl) {
  ds_reader_close(impl);
}

const corpus_records_source ds_records_source = {
    .open = dsrc_open,
    .row_groups = dsrc_row_groups,
    .rows = dsrc_rows,
    .row_group_first = dsrc_row_group_first,
    .read = dsrc_read,
    .bytes_read = dsrc_bytes_read,
    .payload = dsrc_payload,
    .close = dsrc_close,
};
