/*
 * local_write.c — writing the local store: sequence numbers from .seq, opening and committing
 * segments (pqt_writer, temp + rename), and turning corpus batches into column batches
 * (upsert / flush).  Split out of local.c along its "writing" section; the design note is
 * local.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "local_internal.h"

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

vf_status ls_open_writer_at(local_store *s, const char *path, pqt_writer **w, vf_error *err) {
  pqt_writer_opts o;
  memset(&o, 0, sizeof o);
  o.codec = PQT_UNCOMPRESSED;
  o.row_group_rows = ls_row_group_rows(s);
  vf_status st = VF_OK;
  VF_TRY(pqt_writer_open(path, s->cols, s->ncols, &o, w, err));
  VF_TRY(pqt_writer_add_kv(*w, "vforge.store", "local", err));
  VF_TRY(pqt_writer_add_kv(*w, "vforge.collection", s->base.collection, err));
out:
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
  if (flock(s->lock_fd, LOCK_SH) != 0)
    VF_FAIL(vf_error_set(err, VF_EIO, "%s: flock: %s", s->lock_path, VF_STRERROR(errno)));
  uint64_t seq = 0;
  VF_TRY(ls_next_seq(s, &seq, err));
  char name[256];
  snprintf(name, sizeof name, "seg-%020llu-%s.parquet", (unsigned long long)seq, s->writer_id);
  char *path = ls_path_join(s->dir, name);
  if (!path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  st = ls_open_writer_at(s, path, &s->w, err);
  free(path);
  VF_TRY(st);
  s->w_rows = 0;
out:
  if (st != VF_OK) { /* the segment is not open: neither is its lock */
    close(s->lock_fd);
    s->lock_fd = -1;
  }
  return st;
}

vf_status ls_commit_segment(local_store *s, vf_error *err) {
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

const float ls_zero_float = 0.0f;

/* rows [r0, r1) of the batch into the open segment */
static vf_status ls_write_rows(local_store *s, const corpus_batch *b, size_t r0, size_t r1,
                               vf_error *err) {
  size_t n = r1 - r0;
  vf_status st = VF_OK;
  VF_TRY(ls_scratch(s, n, err));
  VF_TRY(ls_scratch_cols(s, n, err));
  VF_TRY(vf_buf_reserve(&s->idtext, n * 37, err));
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
          VF_TRY(vf_json_raw(&s->sparse, "{\"indices\":[", err));
          for (int64_t e = v->offsets[r]; e < v->offsets[r + 1]; e++) {
            if (e > v->offsets[r]) VF_TRY(vf_json_raw(&s->sparse, ",", err));
            VF_TRY(vf_json_u64(&s->sparse, v->indices[e], err));
          }
          VF_TRY(vf_json_raw(&s->sparse, "],\"values\":[", err));
          for (int64_t e = v->offsets[r]; e < v->offsets[r + 1]; e++) {
            if (e > v->offsets[r]) VF_TRY(vf_json_raw(&s->sparse, ",", err));
            VF_TRY(vf_json_f32(&s->sparse, v->values[e], err));
          }
          VF_TRY(vf_json_raw(&s->sparse, "]}", err));
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
  VF_TRY(pqt_writer_write(s->w, wb, (int64_t)n, err));
  s->w_rows += (int64_t)n;
out:
  return st;
}

vf_status ls_upsert(store *base, const corpus_batch *b, vf_error *err) {
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

vf_status ls_flush(store *base, vf_error *err) {
  return ls_commit_segment((local_store *)base, err);
}
