/*
 * IDX reader (the MNIST / Fashion-MNIST "ubyte" files), plain or gzip-compressed.
 *
 * Format (Y. LeCun, "THE MNIST DATABASE", section "FILE FORMATS FOR THE MNIST DATABASE"):
 *   magic: two zero bytes | type | number of dimensions, then one big-endian u32 per dimension,
 *   then the data, big-endian, row-major (last index fastest).  Types: 0x08 unsigned byte,
 *   0x09 signed byte, 0x0B short (2 bytes), 0x0C int (4), 0x0D float (4), 0x0E double (8).
 *   Images are 0x00000803 (N, 28, 28): each image is one row of 784 values; labels are
 *   0x00000801 (N,).
 * After the header the file is the shared raw layout (vecfile.h), so the row reader of vecfile.c
 * serves it, converting from big-endian.
 *
 * Why gzip is inflated into memory: the files are distributed gzipped (Debian's
 * dataset-fashion-mnist ships only *-ubyte.gz) and a deflate stream cannot be read at a row
 * offset.  The decompressed bytes therefore become an in-memory source.  Memory is driven by
 * what the stream really produces, never by what the header claims: the buffer grows by
 * doubling as output arrives, up to the size the dimensions imply — and that claim is first
 * checked against what a gzip file of this size could possibly hold (deflate's best ratio is
 * 1032:1, RFC 1951 §3.2.5: a 258-byte match in at most 2 bits) and against `max_inflate`.
 * Output beyond the claimed size, a stream that ends early, or bytes after the last gzip
 * member are VF_ECORRUPT.  Uncompressed IDX files are read in place through the source.
 */
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "vforge/vecfile.h"

#define IDX_DEFAULT_MAX_INFLATE ((uint64_t)16 << 30)
#define IDX_INFLATE_RATIO 1032u
#define IDX_IN_CHUNK ((size_t)1 << 20)
#define IDX_FIRST_OUT ((size_t)1 << 16)

static bool idx_type(uint8_t code, vec_dtype *t) {
  switch (code) {
  case 0x08: *t = VEC_U8; return true;
  case 0x09: *t = VEC_I8; return true;
  case 0x0B: *t = VEC_I16; return true;
  case 0x0C: *t = VEC_I32; return true;
  case 0x0D: *t = VEC_F32; return true;
  case 0x0E: *t = VEC_F64; return true;
  default: return false;
  }
}

/* Validates the 4 magic bytes: sets dtype and ndim. */
static vf_status idx_magic(const char *name, const uint8_t m[4], vec_layout *l, vf_error *err) {
  if (m[0] != 0 || m[1] != 0 || !idx_type(m[2], &l->dtype))
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: not an IDX file (magic %02x%02x%02x%02x; 0x0000TTNN with type TT in "
                        "08 09 0B 0C 0D 0E expected)",
                        name, m[0], m[1], m[2], m[3]);
  if (m[3] < 1 || m[3] > VEC_MAX_NDIM)
    return vf_error_set(err, VF_EUNSUPPORTED, "%s: IDX file with %u dimensions (1..%d supported)",
                        name, m[3], VEC_MAX_NDIM);
  l->ndim = m[3];
  l->big_endian = true;
  l->data_offset = 4 + 4 * (uint64_t)l->ndim;
  return VF_OK;
}

static void idx_dims(const uint8_t *p, vec_layout *l) {
  for (int i = 0; i < l->ndim; i++, p += 4)
    l->shape[i] = ((uint64_t)p[0] << 24) | ((uint64_t)p[1] << 16) | ((uint64_t)p[2] << 8) | p[3];
}

/* ------------------------------------------------------- owned memory source */

typedef struct idx_mem {
  io_source base;
  uint8_t *data;
} idx_mem;

static vf_status idx_mem_read_at(io_source *src, uint64_t offset, void *dst, size_t n,
                                 vf_error *err) {
  (void)err;
  memcpy(dst, ((idx_mem *)src)->data + offset, n); /* io_read_at checked the bounds */
  return VF_OK;
}

static void idx_mem_close(io_source *src) {
  free(((idx_mem *)src)->data);
  free(src);
}

static const io_source_vtable idx_mem_vt = {idx_mem_read_at, idx_mem_close};

/* ------------------------------------------------------------------ inflate */

typedef struct inflate_state {
  io_source *src;
  const vec_open_opts *opts;
  z_stream zs;
  bool zinit;
  uint8_t *in;
  uint64_t in_off; /* next compressed byte to fetch */
  uint8_t *out;
  size_t len, cap;
  size_t limit; /* output may not exceed this (grows as the header is learnt) */
  int stage;    /* 0: need magic, 1: need dims, 2: size known */
  vec_layout layout;
  uint64_t expect; /* total decompressed size claimed by the header (stage 2) */
} inflate_state;

/* Called whenever `len` reached `limit`: learn the header and raise the limit. */
static vf_status learn_header(inflate_state *s, vf_error *err) {
  const char *name = s->src->name;
  if (s->stage == 0) {
    vf_status st = idx_magic(name, s->out, &s->layout, err);
    if (st != VF_OK) return st;
    s->stage = 1;
    s->limit = (size_t)s->layout.data_offset;
    return VF_OK;
  }
  if (s->stage == 1) {
    idx_dims(s->out + 4, &s->layout);
    uint64_t need = vec_dtype_size(s->layout.dtype);
    bool over = false;
    for (int i = 0; i < s->layout.ndim; i++)
      if (__builtin_mul_overflow(need, s->layout.shape[i], &need)) over = true;
    if (!over && __builtin_add_overflow(need, s->layout.data_offset, &need)) over = true;
    uint64_t can_hold = s->src->size > UINT64_MAX / IDX_INFLATE_RATIO
                            ? UINT64_MAX
                            : s->src->size * IDX_INFLATE_RATIO;
    if (over || need > can_hold)
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: IDX header claims %s%llu bytes, more than a %llu-byte gzip file can "
                          "hold",
                          name, over ? "over " : "",
                          over ? (unsigned long long)UINT64_MAX : (unsigned long long)need,
                          (unsigned long long)s->src->size);
    uint64_t cap = s->opts && s->opts->max_inflate ? s->opts->max_inflate : IDX_DEFAULT_MAX_INFLATE;
    if (need > cap || need >= SIZE_MAX)
      return vf_error_set(err, VF_EUNSUPPORTED,
                          "%s: decompressed IDX data would be %llu bytes, above the %llu-byte "
                          "in-memory limit; gunzip the file and convert the raw IDX file",
                          name, (unsigned long long)need, (unsigned long long)cap);
    s->expect = need;
    s->stage = 2;
    s->limit = (size_t)need + 1; /* one byte more reveals trailing data */
    return VF_OK;
  }
  return vf_error_set(err, VF_ECORRUPT,
                      "%s: the gzip stream holds more than the %llu bytes the IDX header's "
                      "dimensions imply (trailing data)",
                      name, (unsigned long long)s->expect);
}

static vf_status grow_out(inflate_state *s, vf_error *err) {
  size_t want = s->cap > IDX_FIRST_OUT / 2 ? s->cap * 2 : IDX_FIRST_OUT;
  if (want > s->limit || want < s->cap) want = s->limit;
  uint8_t *n = vf_realloc(s->out, want);
  if (!n)
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory inflating %zu bytes", s->src->name,
                        want);
  s->out = n;
  s->cap = want;
  return VF_OK;
}

static vf_status refill(inflate_state *s, vf_error *err) {
  uint64_t left = s->src->size - s->in_off;
  size_t take = left < IDX_IN_CHUNK ? (size_t)left : IDX_IN_CHUNK;
  vf_status st = io_read_at(s->src, s->in_off, s->in, take, err);
  if (st != VF_OK) return st;
  s->in_off += take;
  s->zs.next_in = s->in;
  s->zs.avail_in = (uInt)take;
  return VF_OK;
}

/* Inflates every gzip member of s->src into s->out. */
static vf_status inflate_all(inflate_state *s, vf_error *err) {
  const char *name = s->src->name;
  vf_status st;
  if (!(s->in = vf_malloc(IDX_IN_CHUNK)))
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
  memset(&s->zs, 0, sizeof s->zs);
  if (inflateInit2(&s->zs, 16 + MAX_WBITS) != Z_OK)
    return vf_error_set(err, VF_ENOMEM, "%s: zlib inflateInit2 failed", name);
  s->zinit = true;
  s->limit = 4;
  for (;;) {
    while (s->len == s->limit)
      if ((st = learn_header(s, err)) != VF_OK) return st;
    if (s->len == s->cap && (st = grow_out(s, err)) != VF_OK) return st;
    if (s->zs.avail_in == 0 && s->in_off < s->src->size && (st = refill(s, err)) != VF_OK)
      return st;
    size_t room = (s->cap < s->limit ? s->cap : s->limit) - s->len;
    s->zs.next_out = s->out + s->len;
    s->zs.avail_out = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
    uInt out_before = s->zs.avail_out, in_before = s->zs.avail_in;
    int rc = inflate(&s->zs, Z_NO_FLUSH);
    s->len += out_before - s->zs.avail_out;
    if (rc == Z_STREAM_END) {
      /* another gzip member may follow (RFC 1952 §2.2); anything else fails its header check */
      if (s->zs.avail_in == 0 && s->in_off == s->src->size) break;
      if (inflateReset(&s->zs) != Z_OK)
        return vf_error_set(err, VF_EINTERNAL, "%s: zlib inflateReset failed", name);
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      return vf_error_set(err, VF_ECORRUPT, "%s: corrupt gzip stream at compressed byte %llu: %s",
                          name, (unsigned long long)(s->in_off - s->zs.avail_in),
                          s->zs.msg ? s->zs.msg : "inflate failed");
    /* No progress although output space was offered (zlib may still hold pending output after
     * the input ran out, so only this proves the stream incomplete). */
    if (s->zs.avail_out == out_before && s->zs.avail_in == in_before) {
      if (s->zs.avail_in == 0 && s->in_off == s->src->size)
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: the gzip stream is truncated after %zu decompressed bytes%s", name,
                            s->len, s->stage == 2 ? "" : " (inside the IDX header)");
      if (s->zs.avail_in != 0)
        return vf_error_set(err, VF_ECORRUPT, "%s: the gzip stream makes no progress at byte %llu",
                            name, (unsigned long long)(s->in_off - s->zs.avail_in));
    }
  }
  while (s->len == s->limit)
    if ((st = learn_header(s, err)) != VF_OK) return st;
  if (s->stage < 2)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: the gzip stream ends after %zu bytes, inside the IDX header", name,
                        s->len);
  return VF_OK; /* a short stream is named by vec_open_raw's size check */
}

static vf_status idx_open_gzip(io_source *src, const vec_open_opts *opts, vec_file **out,
                               vf_error *err) {
  inflate_state s;
  memset(&s, 0, sizeof s);
  s.src = src;
  s.opts = opts;
  vf_status st = inflate_all(&s, err);
  if (s.zinit) inflateEnd(&s.zs);
  free(s.in);
  idx_mem *m = NULL;
  if (st != VF_OK) goto out;
  m = vf_calloc(1, sizeof *m);
  if (!m) VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", src->name));
  m->base.name = vf_strdup(src->name);
  if (!m->base.name) VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", src->name));
  m->base.vt = &idx_mem_vt;
  m->base.size = s.len;
  m->data = s.out;
  io_close(src);
  return vec_open_raw(&m->base, &s.layout, "idx", out, err);
out:
  free(m);
  free(s.out);
  io_close(src);
  return st;
}

/*! idx_open() : see vecfile.h. */
vf_status idx_open(io_source *src, const vec_open_opts *opts, vec_file **out, vf_error *err) {
  *out = NULL;
  if (!src) return vf_error_set(err, VF_EUSAGE, "idx_open: NULL source");
  const char *name = src->name;
  uint8_t hdr[4 + 4 * VEC_MAX_NDIM];
  vf_status st;
  if (src->size >= 2) {
    VF_TRY(io_read_at(src, 0, hdr, 2, err));
    if (hdr[0] == 0x1f && hdr[1] == 0x8b) return idx_open_gzip(src, opts, out, err);
  }
  if (src->size < 4) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: not an IDX file (%llu bytes, shorter than the magic)", name,
                         (unsigned long long)src->size));
  }
  VF_TRY(io_read_at(src, 0, hdr, 4, err));
  vec_layout l;
  memset(&l, 0, sizeof l);
  VF_TRY(idx_magic(name, hdr, &l, err));
  if (src->size < l.data_offset) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: IDX header of %d dimensions needs %llu bytes, the file has %llu",
                         name, l.ndim, (unsigned long long)l.data_offset,
                         (unsigned long long)src->size));
  }
  VF_TRY(io_read_at(src, 4, hdr + 4, (size_t)l.data_offset - 4, err));
  idx_dims(hdr + 4, &l);
  return vec_open_raw(src, &l, "idx", out, err);
out:
  io_close(src);
  return st;
}
