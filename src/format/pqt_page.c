/*
 * Parquet page decoding: levels, values (every encoding), dictionary and data pages (v1, v2), a
 * whole column chunk page by page (pqt_reader.c's header comment says how and why).
 *
 * Why a file of its own: it was the largest section of pqt_reader.c (issue 15 item 6); the
 * streamed slices (pqt_slice.c) decode their pages through the same functions.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_reader_internal.h"

/* ------------------------------------------------------------ page decoding */

vf_status pr_page_err(chunk_ctx *x, vf_status code, const char *fmt, ...) {
  char msg[VF_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return vf_error_set(x->err, code, "%s: row group %d, column %s, page at offset %" PRIu64 ": %s",
                      pqt_name(x->f), x->rg, pr_leaf_path(x->f, x->leaf), x->page_off, msg);
}

/* prefix an error set by a decoder below us (keeps its code) */
vf_status pr_page_prefix(chunk_ctx *x, vf_status st) {
  if (x->err)
    vf_error_prefix(x->err, "%s: row group %d, column %s, page at offset %" PRIu64 ": ",
                    pqt_name(x->f), x->rg, pr_leaf_path(x->f, x->leaf), x->page_off);
  return st;
}

/* Legacy BIT_PACKED levels (Encodings.md "Bit-packed (Deprecated)"): MSB first. */
static vf_status decode_bit_packed_levels(chunk_ctx *x, const uint8_t *p, size_t len, int bw,
                                          uint8_t max, uint8_t *out, size_t n) {
  uint64_t bits = (uint64_t)n * (uint64_t)bw;
  if ((bits + 7) / 8 > len)
    return pr_page_err(x, VF_ECORRUPT, "BIT_PACKED levels need %" PRIu64 " bytes, page has %zu",
                       (bits + 7) / 8, len);
  uint64_t pos = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned v = 0;
    for (int b = 0; b < bw; b++, pos++)
      v = (v << 1) | ((p[pos >> 3] >> (7 - (pos & 7))) & 1u);
    if (v > max) return pr_page_err(x, VF_ECORRUPT, "level %u above the maximum %u", v,
                                    (unsigned)max);
    out[i] = (uint8_t)v;
  }
  return VF_OK;
}

/* Decode n levels.  `prefixed`: v1 RLE has a 4-byte length first; v2 gives the length. */
static vf_status decode_levels(chunk_ctx *x, vf_cursor *c, int encoding, bool prefixed,
                               size_t v2_len, int max, uint8_t *out, size_t n, bool *all_max,
                               bool rep) {
  int bw = pr_bit_width_of(max);
  const uint8_t *p;
  if (encoding == PQT_ENC_BIT_PACKED && prefixed) {
    uint64_t nbytes = ((uint64_t)n * (uint64_t)bw + 7) / 8;
    if (!vf_cur_take(c, nbytes, &p))
      return pr_page_err(x, VF_ECORRUPT, "BIT_PACKED levels need %" PRIu64 " bytes, page has %zu",
                         nbytes, vf_cur_remaining(c));
    return decode_bit_packed_levels(x, p, (size_t)nbytes, bw, (uint8_t)max, out, n);
  }
  if (encoding != PQT_ENC_RLE && prefixed)
    return pr_page_err(x, VF_EUNSUPPORTED, "level encoding %s is not supported",
                       pqt_encoding_name(encoding));
  uint64_t len = v2_len;
  if (prefixed) {
    uint32_t l32;
    if (!vf_cur_u32le(c, &l32))
      return pr_page_err(x, VF_ECORRUPT, "truncated level length prefix at offset %" PRIu64,
                         vf_cur_offset(c));
    len = l32;
  }
  if (!vf_cur_take(c, len, &p))
    return pr_page_err(x, VF_ECORRUPT,
                       "levels of %" PRIu64 " bytes at offset %" PRIu64
                       " run past the page (%zu left)",
                       len, vf_cur_offset(c), vf_cur_remaining(c));
  uint8_t one;
  if (all_max && pr_rle_one_run(p, (size_t)len, bw, max, n, &one) && one == max) {
    *all_max = true; /* one run of the maximum: nothing to write or count */
    return VF_OK;
  }
  if (rep && x->rep_runs_ok && bw == 1 &&
      pr_rle_regular_w1(p, (size_t)len, n, &x->rep_zeros, &x->rep_dim, &x->rep_phase))
    return VF_OK; /* regular records: neither written nor counted (x->rep_dim) */
  if (rep) x->rep_dim = 0;
  vf_status st = pqt_rle_decode_u8(p, (size_t)len, bw, (uint8_t)max, out, n, x->err);
  if (st != VF_OK) return pr_page_prefix(x, st);
  return VF_OK;
}

/* Ensure room for `n` more level entries in the leaf. */
static vf_status reserve_levels(chunk_ctx *x, int64_t n) {
  pqt_leaf_data *d = x->d;
  int64_t need = d->nlevels + n;
  vf_status st;
  if (x->lf->max_rep > 0) {
    st = pr_grow_array((void **)&d->rep, &d->rep_cap, need, 1, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
  }
  if (x->def_mat) {
    st = pr_grow_array((void **)&d->def, &d->def_cap, need, 1, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
  }
  return VF_OK;
}

/* Append nn fixed-width values gathered from the dictionary. */
static vf_status gather_dict(chunk_ctx *x, const uint32_t *idx, size_t nn) {
  pqt_file *f = x->f;
  pqt_leaf_data *d = x->d;
  uint32_t dn = (uint32_t)f->dict_n;
  for (size_t i = 0; i < nn; i++) {
    if (VF_UNLIKELY(idx[i] >= dn))
      return pr_page_err(x, VF_ECORRUPT,
                         "dictionary index %u out of range (dictionary has %u entries)", idx[i],
                         dn);
  }
  if (x->lf->type == PQT_BYTE_ARRAY) {
    uint64_t total = 0;
    for (size_t i = 0; i < nn; i++)
      total += (uint64_t)(f->dict_off[idx[i] + 1] - f->dict_off[idx[i]]);
    vf_status st = pr_buf_reserve(&d->values, total, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    st = pr_grow_array((void **)&d->offsets, &d->off_cap, d->nvalues + (int64_t)nn + 1,
                       sizeof(int64_t), x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    int64_t *o = d->offsets + d->nvalues;
    for (size_t i = 0; i < nn; i++) {
      int64_t a = f->dict_off[idx[i]], b = f->dict_off[idx[i] + 1];
      vf_buf_put(&d->values, f->dict.data + a, (size_t)(b - a));
      o[i + 1] = (int64_t)d->values.len;
    }
    return VF_OK;
  }
  size_t w = (size_t)x->width;
  vf_status st = pr_buf_reserve(&d->values, (uint64_t)nn * w, x->err);
  if (st != VF_OK) return pr_page_prefix(x, st);
  uint8_t *dst = d->values.data + d->values.len;
  const uint8_t *src = f->dict.data;
  if (w == 4) {
    const uint32_t *s = (const uint32_t *)(const void *)src;
    for (size_t i = 0; i < nn; i++)
      memcpy(dst + 4 * i, &s[idx[i]], 4);
  } else if (w == 8) {
    for (size_t i = 0; i < nn; i++)
      memcpy(dst + 8 * i, src + 8 * (size_t)idx[i], 8);
  } else {
    for (size_t i = 0; i < nn; i++)
      memcpy(dst + w * i, src + w * (size_t)idx[i], w);
  }
  d->values.len += nn * w;
  return VF_OK;
}

/* Byte arrays decoded into f->tmp/f->tmp_off (n values) appended as FLBA values of x->width. */
static vf_status append_tmp_as_flba(chunk_ctx *x, size_t n) {
  pqt_file *f = x->f;
  size_t w = (size_t)x->width;
  for (size_t i = 0; i < n; i++) {
    if ((size_t)(f->tmp_off[i + 1] - f->tmp_off[i]) != w)
      return pr_page_err(x, VF_ECORRUPT,
                         "value %zu has %" PRId64 " bytes, FIXED_LEN_BYTE_ARRAY(%zu) expected", i,
                         f->tmp_off[i + 1] - f->tmp_off[i], w);
  }
  vf_status st = pr_buf_reserve(&x->d->values, (uint64_t)n * w, x->err);
  if (st != VF_OK) return pr_page_prefix(x, st);
  if (n) vf_buf_put(&x->d->values, f->tmp.data + f->tmp_off[0], n * w);
  return VF_OK;
}

/* Decode `nn` non-null values of a data page's values section. */
static vf_status decode_values(chunk_ctx *x, int encoding, const uint8_t *p, size_t len,
                               size_t nn) {
  pqt_file *f = x->f;
  pqt_leaf_data *d = x->d;
  pqt_physical t = x->lf->type;
  size_t w = (size_t)x->width;
  vf_status st;
  size_t consumed = 0;
  if (nn == 0) return VF_OK;
  switch (encoding) {
  case PQT_ENC_PLAIN:
    if (t == PQT_BYTE_ARRAY) {
      st = pr_grow_array((void **)&d->offsets, &d->off_cap, d->nvalues + (int64_t)nn + 1,
                         sizeof(int64_t), x->err);
      if (st != VF_OK) return pr_page_prefix(x, st);
      if (len / 4 < nn)
        return pr_page_err(x, VF_ECORRUPT, "%zu PLAIN byte arrays cannot fit in %zu bytes", nn,
                           len);
      st = pqt_plain_ba_decode(p, len, nn, &d->values, d->offsets + d->nvalues, &consumed, x->err);
      return st != VF_OK ? pr_page_prefix(x, st) : VF_OK;
    }
    if (t == PQT_BOOLEAN) {
      st = pr_buf_reserve(&d->values, nn, x->err);
      if (st != VF_OK) return pr_page_prefix(x, st);
      st = pqt_plain_bool_decode(p, len, d->values.data + d->values.len, nn, &consumed, x->err);
      if (st != VF_OK) return pr_page_prefix(x, st);
      d->values.len += nn;
      return VF_OK;
    }
    if (len / w < nn)
      return pr_page_err(x, VF_ECORRUPT,
                         "%zu PLAIN values of %zu bytes need %zu bytes, the page has %zu", nn, w,
                         nn * w, len);
    if (x->view_ok && d->values.len == 0) { /* streaming: no copy, the page bytes are kept */
      x->view = p;
      return VF_OK;
    }
    st = pr_buf_reserve(&d->values, (uint64_t)nn * w, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    vf_buf_put(&d->values, p, nn * w); /* the fast path: floats straight from the page */
    return VF_OK;
  case PQT_ENC_PLAIN_DICTIONARY:
  case PQT_ENC_RLE_DICTIONARY: {
    if (f->dict_n < 0)
      return pr_page_err(x, VF_ECORRUPT,
                         "dictionary-encoded page but the column chunk has no dictionary page");
    if (len < 1) return pr_page_err(x, VF_ECORRUPT,
                                    "dictionary-encoded page has no bit width byte");
    int bw = p[0];
    if (bw > 32) return pr_page_err(x, VF_ECORRUPT, "dictionary index bit width %d is over 32", bw);
    st = pr_grow_sz((void **)&f->idx, &f->idx_cap, nn, sizeof(uint32_t), x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    st = pqt_rle_decode_u32(p + 1, len - 1, bw, f->idx, nn, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    return gather_dict(x, f->idx, nn);
  }
  case PQT_ENC_RLE: {
    if (t != PQT_BOOLEAN)
      return pr_page_err(x, VF_EUNSUPPORTED, "RLE encoding for %s values is not supported",
                         pqt_physical_name(t));
    if (len < 4) return pr_page_err(x, VF_ECORRUPT, "RLE boolean values lack their 4-byte length");
    uint32_t l = vf_load_u32le(p);
    if (l > len - 4)
      return pr_page_err(x, VF_ECORRUPT, "RLE boolean length %u runs past the page (%zu bytes)", l,
                         len - 4);
    st = pr_buf_reserve(&d->values, nn, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    st = pqt_rle_decode_u8(p + 4, l, 1, 1, d->values.data + d->values.len, nn, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    d->values.len += nn;
    return VF_OK;
  }
  case PQT_ENC_DELTA_BINARY_PACKED:
    if (t != PQT_INT32 && t != PQT_INT64)
      return pr_page_err(x, VF_ECORRUPT, "DELTA_BINARY_PACKED used for %s values",
                         pqt_physical_name(t));
    st = pr_buf_reserve(&d->values, (uint64_t)nn * w, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    st = pqt_delta_bp_decode(p, len, (int)w, d->values.data + d->values.len, nn, &consumed, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    d->values.len += nn * w;
    return VF_OK;
  case PQT_ENC_DELTA_LENGTH_BYTE_ARRAY:
  case PQT_ENC_DELTA_BYTE_ARRAY:
    if (t == PQT_BYTE_ARRAY) {
      st = pr_grow_array((void **)&d->offsets, &d->off_cap, d->nvalues + (int64_t)nn + 1,
                         sizeof(int64_t), x->err);
      if (st != VF_OK) return pr_page_prefix(x, st);
      st = encoding == PQT_ENC_DELTA_BYTE_ARRAY
               ? pqt_delta_ba_decode(p, len, nn, &d->values, d->offsets + d->nvalues, &consumed,
                                     x->err)
               : pqt_delta_length_ba_decode(p, len, nn, &d->values, d->offsets + d->nvalues,
                                            &consumed, x->err);
      return st != VF_OK ? pr_page_prefix(x, st) : VF_OK;
    }
    if (t == PQT_FIXED_LEN_BYTE_ARRAY) {
      vf_buf_reset(&f->tmp);
      st = pr_grow_sz((void **)&f->tmp_off, &f->tmp_off_cap, nn + 1, sizeof(int64_t), x->err);
      if (st != VF_OK) return pr_page_prefix(x, st);
      f->tmp_off[0] = 0;
      st = encoding == PQT_ENC_DELTA_BYTE_ARRAY
               ? pqt_delta_ba_decode(p, len, nn, &f->tmp, f->tmp_off, &consumed, x->err)
               : pqt_delta_length_ba_decode(p, len, nn, &f->tmp, f->tmp_off, &consumed, x->err);
      if (st != VF_OK) return pr_page_prefix(x, st);
      return append_tmp_as_flba(x, nn);
    }
    return pr_page_err(x, VF_ECORRUPT, "%s used for %s values", pqt_encoding_name(encoding),
                       pqt_physical_name(t));
  case PQT_ENC_BYTE_STREAM_SPLIT:
    if (t == PQT_BYTE_ARRAY || t == PQT_BOOLEAN || t == PQT_INT96)
      return pr_page_err(x, VF_ECORRUPT, "BYTE_STREAM_SPLIT used for %s values",
                         pqt_physical_name(t));
    st = pr_buf_reserve(&d->values, (uint64_t)nn * w, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    st = pqt_bss_decode(p, len, (int)w, d->values.data + d->values.len, nn, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    d->values.len += nn * w;
    return VF_OK;
  default:
    return pr_page_err(x, VF_EUNSUPPORTED, "value encoding %s (%d) is not supported",
                       pqt_encoding_name(encoding), encoding);
  }
}

/* Dictionary page: PLAIN values into f->dict. */
vf_status pr_decode_dict_page(chunk_ctx *x, const pqt_page_header *h, const uint8_t *p,
                              size_t len) {
  pqt_file *f = x->f;
  pqt_physical t = x->lf->type;
  if (x->seen_data) return pr_page_err(x, VF_ECORRUPT, "dictionary page after data pages");
  if (f->dict_n >= 0) return pr_page_err(x, VF_ECORRUPT,
                                         "second dictionary page in one column chunk");
  if (h->dict_encoding != PQT_ENC_PLAIN && h->dict_encoding != PQT_ENC_PLAIN_DICTIONARY)
    return pr_page_err(x, VF_EUNSUPPORTED, "dictionary page encoding %s is not supported",
                       pqt_encoding_name(h->dict_encoding));
  if (h->dict_num_values < 0)
    return pr_page_err(x, VF_ECORRUPT, "dictionary page has a negative value count %d",
                       h->dict_num_values);
  size_t n = (size_t)h->dict_num_values;
  vf_buf_reset(&f->dict);
  size_t consumed = 0;
  vf_status st;
  if (t == PQT_BYTE_ARRAY) {
    if (len / 4 < n)
      return pr_page_err(x, VF_ECORRUPT, "%zu dictionary strings cannot fit in %zu bytes", n, len);
    int64_t cap = f->dict_off_cap;
    st = pr_grow_array((void **)&f->dict_off, &cap, (int64_t)n + 1, sizeof(int64_t), x->err);
    f->dict_off_cap = cap;
    if (st != VF_OK) return pr_page_prefix(x, st);
    f->dict_off[0] = 0;
    st = pqt_plain_ba_decode(p, len, n, &f->dict, f->dict_off, &consumed, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
  } else if (t == PQT_BOOLEAN) {
    if (len < (n + 7) / 8)
      return pr_page_err(x, VF_ECORRUPT, "%zu dictionary booleans cannot fit in %zu bytes", n, len);
    st = pr_buf_reserve(&f->dict, n, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    st = pqt_plain_bool_decode(p, len, f->dict.data, n, &consumed, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    f->dict.len = n;
  } else {
    size_t w = (size_t)x->width;
    if (len / w < n)
      return pr_page_err(x, VF_ECORRUPT,
                         "%zu dictionary values of %zu bytes cannot fit in %zu bytes",
                         n, w, len);
    st = vf_buf_append(&f->dict, p, n * w, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
  }
  f->dict_n = (int64_t)n;
  return VF_OK;
}

/* Decompress `len` bytes at p into f->page (exactly `ulen` bytes); returns the bytes to use. */
vf_status pr_decompress_into_page(chunk_ctx *x, const uint8_t *p, size_t len, int64_t ulen,
                                  const uint8_t **outp, size_t *outlen) {
  int codec = x->cm->codec;
  if (codec == PQT_UNCOMPRESSED) {
    *outp = p;
    *outlen = len;
    return VF_OK;
  }
  if (ulen < 0 || ulen > PQT_MAX_PAGE_BYTES)
    return pr_page_err(x, VF_ECORRUPT, "uncompressed page size %" PRId64 " is out of range", ulen);
  uint64_t ratio = pqt_codec_max_ratio(codec);
  if (ratio && (uint64_t)ulen > ratio * (uint64_t)len + 4096)
    return pr_page_err(x, VF_ECORRUPT,
                       "declared uncompressed size %" PRId64 " bytes is more than %s can produce "
                       "from %zu compressed bytes (at most %" PRIu64 ":1): refusing a "
                       "decompression bomb",
                       ulen, pqt_codec_name(codec), len, ratio);
  uint64_t budget = vf_memory_budget();
  if (budget && (uint64_t)ulen > budget)
    return pr_page_err(x, VF_ENOMEM,
                       "page declares %" PRId64 " uncompressed bytes (%zu compressed), more than "
                       "the memory budget of %" PRIu64 " bytes (raise --memory-budget)",
                       ulen, len, budget);
  if (x->pre_out && p == x->pre_in && len == x->pre_inlen && ulen == x->pre_ulen) {
    *outp = x->pre_out; /* decompressed already */
    *outlen = (size_t)ulen;
    return VF_OK;
  }
  if (x->pre_streamed) /* its bytes were never in memory whole (cannot happen) */
    return pr_page_err(x, VF_EINTERNAL, "read-ahead page without its decompressed bytes");
  vf_buf_reset(&x->f->page);
  vf_status st = pr_buf_reserve(&x->f->page, (uint64_t)ulen, x->err);
  if (st != VF_OK) return pr_page_prefix(x, st);
  st = pqt_decompress(codec, p, len, x->f->page.data, (size_t)ulen, x->err);
  if (st != VF_OK) return pr_page_prefix(x, st);
  *outp = x->f->page.data;
  *outlen = (size_t)ulen;
  return VF_OK;
}

/* Store one page's def levels (in `lv`, n entries) into the leaf, materialising lazily;
 * returns the non-null count. */
static vf_status store_def(chunk_ctx *x, const uint8_t *lv, size_t n, size_t *nn_out) {
  pqt_leaf_data *d = x->d;
  uint8_t maxd = (uint8_t)x->lf->max_def;
  size_t nn = pr_count_byte(lv, n, maxd);
  *nn_out = nn;
  if (x->def_mat) {
    if (lv != d->def + d->nlevels) memcpy(d->def + d->nlevels, lv, n);
    return VF_OK;
  }
  if (nn == n) return VF_OK;
  x->def_mat = true;
  vf_status st = pr_grow_array((void **)&d->def, &d->def_cap, d->nlevels + (int64_t)n, 1, x->err);
  if (st != VF_OK) return pr_page_prefix(x, st);
  memset(d->def, maxd, (size_t)d->nlevels);
  memcpy(d->def + d->nlevels, lv, n);
  return VF_OK;
}

/* Decode one data page (v1 or v2) whose bytes (as stored) are p[0..len). */
vf_status pr_decode_data_page(chunk_ctx *x, const pqt_page_header *h, const uint8_t *p,
                              size_t len) {
  pqt_file *f = x->f;
  pqt_leaf_data *d = x->d;
  const pqt_leaf *lf = x->lf;
  vf_status st;
  x->seen_data = true;
  x->rep_dim = 0;
  if (h->num_values < 0) return pr_page_err(x, VF_ECORRUPT, "negative value count %d",
                                            h->num_values);
  size_t n = (size_t)h->num_values;
  if (n == 0) return VF_OK; /* an empty page: some writers omit even the level length prefixes */
  st = reserve_levels(x, (int64_t)n);
  if (st != VF_OK) return st;
  uint8_t *rep_out = lf->max_rep > 0 ? d->rep + d->nlevels : NULL;
  uint8_t *def_out = NULL;
  if (lf->max_def > 0) {
    if (x->def_mat) {
      def_out = d->def + d->nlevels;
    } else {
      st = pr_grow_sz((void **)&f->lvl, &f->lvl_cap, n ? n : 1, 1, x->err);
      if (st != VF_OK) return pr_page_prefix(x, st);
      def_out = f->lvl;
    }
  }
  /* def levels that are one RLE run of max_def (nothing null) are neither written nor counted
   * while the leaf's levels are not materialised */
  bool def_full = false, *def_fullp = x->def_mat ? NULL : &def_full;
  const uint8_t *vals;
  size_t vlen;
  if (h->type == PQT_DATA_PAGE) {
    const uint8_t *u;
    size_t ulen;
    st = pr_decompress_into_page(x, p, len, h->uncompressed_size, &u, &ulen);
    if (st != VF_OK) return st;
    vf_cursor c;
    vf_cur_init(&c, u, ulen, 0);
    if (lf->max_rep > 0) {
      st = decode_levels(x, &c, h->rep_encoding, true, 0, lf->max_rep, rep_out, n, NULL, true);
      if (st != VF_OK) return st;
    }
    if (lf->max_def > 0) {
      st = decode_levels(x, &c, h->def_encoding, true, 0, lf->max_def, def_out, n, def_fullp,
                         false);
      if (st != VF_OK) return st;
    }
    vals = c.p;
    vlen = vf_cur_remaining(&c);
  } else {
    if (h->rep_levels_byte_length < 0 || h->def_levels_byte_length < 0 ||
        (uint64_t)h->rep_levels_byte_length + (uint64_t)h->def_levels_byte_length > len)
      return pr_page_err(x, VF_ECORRUPT, "level lengths %d + %d exceed the page size %zu",
                         h->rep_levels_byte_length, h->def_levels_byte_length, len);
    vf_cursor c;
    vf_cur_init(&c, p, len, 0);
    if (lf->max_rep > 0) {
      st = decode_levels(x, &c, PQT_ENC_RLE, false, (size_t)h->rep_levels_byte_length, lf->max_rep,
                         rep_out, n, NULL, true);
      if (st != VF_OK) return st;
    } else {
      vf_cur_skip(&c, (uint64_t)h->rep_levels_byte_length);
    }
    if (lf->max_def > 0) {
      st = decode_levels(x, &c, PQT_ENC_RLE, false, (size_t)h->def_levels_byte_length, lf->max_def,
                         def_out, n, def_fullp, false);
      if (st != VF_OK) return st;
    } else {
      vf_cur_skip(&c, (uint64_t)h->def_levels_byte_length);
    }
    vals = c.p;
    vlen = vf_cur_remaining(&c);
    int64_t vulen =
        (int64_t)h->uncompressed_size - h->rep_levels_byte_length - h->def_levels_byte_length;
    if (h->is_compressed && x->cm->codec != PQT_UNCOMPRESSED && vulen != 0) {
      st = pr_decompress_into_page(x, vals, vlen, vulen, &vals, &vlen);
      if (st != VF_OK) return st;
    } else if (vulen == 0) {
      vlen = 0;
    }
  }
  size_t nn = n;
  if (lf->max_def > 0 && !def_full) {
    st = store_def(x, def_out, n, &nn);
    if (st != VF_OK) return st;
  }
  if (rep_out) {
    bool runs = x->rep_dim > 0; /* regular, not written: the record starts are arithmetic */
    int64_t r = runs ? x->rep_zeros : (int64_t)pr_count_byte(rep_out, n, 0);
    uint8_t first = runs ? (x->rep_phase == 0 ? 0 : 1) : rep_out[0];
    if (d->nlevels == 0 && !x->cont && n > 0 && first != 0)
      return pr_page_err(x, VF_ECORRUPT,
                         "the column chunk starts with repetition level %u instead of 0",
                         first);
    d->nrows += r;
  } else {
    d->nrows += (int64_t)n;
  }
  st = decode_values(x, h->encoding, vals, vlen, nn);
  if (st != VF_OK) return st;
  d->nlevels += (int64_t)n;
  d->nvalues += (int64_t)nn;
  return VF_OK;
}

/* Whether the pages decoded so far complete the chunk's `want` records.  The pages are the
 * truth, as DuckDB and arrow-rs take them: ColumnMetaData.num_values (some writers get it wrong,
 * 0 included) only says, for a repeated column whose records are all started, whether the last
 * one may continue on a next page. */
bool pr_chunk_done(const pqt_leaf *lf, const pqt_column_meta *cm, const pqt_leaf_data *d,
                   int64_t want) {
  if (lf->max_rep == 0) return d->nlevels >= want;
  return d->nrows >= want && d->nlevels >= cm->num_values;
}

/* Decode the pages of one whole column chunk b[0..len) (file offset `start`) until they hold the
 * row group's `want` records or the chunk ends (the caller checks the count). */
static vf_status decode_chunk(chunk_ctx *x, vf_buf *b, uint64_t start, int64_t want) {
  pqt_file *f = x->f;
  pqt_leaf_data *d = x->d;
  const pqt_column_meta *cm = x->cm;
  vf_status st;
  size_t pos = 0;
  f->dict_n = -1;
  while (!pr_chunk_done(x->lf, cm, d, want) && pos < b->len) {
    x->page_off = start + pos;
    pqt_page_header h;
    vf_cursor c;
    vf_cur_init(&c, b->data + pos, b->len - pos, start + pos);
    memset(&h, 0, sizeof h);
    st = pqt_parse_page_header(&c, &h, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    size_t hlen = (size_t)(c.p - (b->data + pos));
    if (h.compressed_size < 0 || h.uncompressed_size < 0)
      return pr_page_err(x, VF_ECORRUPT, "negative page size");
    uint64_t psize = (uint64_t)h.compressed_size;
    if (psize > b->len - pos - hlen)
      return pr_page_err(x, VF_ECORRUPT,
                         "page of %" PRIu64 " bytes runs past the end of the column chunk (which "
                         "ends at offset %" PRIu64 ")",
                         psize, start + b->len);
    const uint8_t *p = b->data + pos + hlen;
    pos += hlen + (size_t)psize;
    if (h.has_crc && f->opts.verify_crc &&
        (h.type == PQT_DATA_PAGE || h.type == PQT_DATA_PAGE_V2 || h.type == PQT_DICTIONARY_PAGE)) {
      uint32_t crc = pqt_crc32(p, (size_t)psize);
      if (crc != h.crc)
        return pr_page_err(x, VF_ECORRUPT,
                           "page CRC mismatch at offset %" PRIu64 " (stored %08x, computed %08x)",
                           x->page_off, h.crc, crc);
    }
    switch (h.type) {
    case PQT_DICTIONARY_PAGE: {
      const uint8_t *u;
      size_t ulen;
      st = pr_decompress_into_page(x, p, (size_t)psize, h.uncompressed_size, &u, &ulen);
      if (st != VF_OK) return st;
      st = pr_decode_dict_page(x, &h, u, ulen);
      if (st != VF_OK) return st;
      break;
    }
    case PQT_DATA_PAGE:
    case PQT_DATA_PAGE_V2: {
      /* every record started and num_values says more levels follow: this page continues the
       * last record, unless it starts a new one (num_values was wrong), which is undone */
      bool tentative = x->lf->max_rep > 0 && d->nrows >= want;
      int64_t nlevels = d->nlevels, nvalues = d->nvalues, nrows = d->nrows;
      size_t vlen = d->values.len;
      st = pr_decode_data_page(x, &h, p, (size_t)psize);
      if (st != VF_OK) return st;
      if (tentative && d->nlevels > nlevels && d->rep[nlevels] == 0) {
        d->nlevels = nlevels;
        d->nvalues = nvalues;
        d->nrows = nrows;
        d->values.len = vlen;
        return VF_OK;
      }
      break;
    }
    default: /* INDEX_PAGE and unknown page types carry nothing we need */ break;
    }
    d->npages++;
    d->compressed_bytes += psize;
    d->uncompressed_bytes += (uint64_t)h.uncompressed_size;
  }
  return VF_OK;
}

/* Checks shared by both read paths: the chunk exists, is readable, and matches the schema. */
vf_status pr_check_chunk(pqt_file *f, int rg, const pqt_row_group *g, int leaf, vf_error *err) {
  const char *name = pqt_name(f);
  if (leaf < 0 || leaf >= f->schema.nleaves || leaf >= g->ncolumns)
    return vf_error_set(err, VF_EUSAGE, "%s: leaf column %d does not exist", name, leaf);
  const pqt_column_chunk *cc = &g->columns[leaf];
  if (cc->file_path)
    return vf_error_set(
        err, VF_EUNSUPPORTED,
        "%s: row group %d, column %s is stored in another file (%s), which is not supported", name,
        rg, pr_leaf_path(f, leaf), cc->file_path);
  if (cc->encrypted)
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "%s: row group %d, column %s is encrypted (parquet modular encryption), "
                        "which is not supported",
                        name, rg, pr_leaf_path(f, leaf));
  if (!cc->has_meta_data)
    return vf_error_set(err, VF_ECORRUPT, "%s: row group %d, column %s has no column metadata",
                        name, rg, pr_leaf_path(f, leaf));
  const pqt_leaf *lf = &f->schema.leaves[leaf];
  if (cc->meta.type != (int)lf->type)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: row group %d, column %s: chunk type %s differs from the schema's %s",
                        name, rg, pr_leaf_path(f, leaf), pqt_physical_name(cc->meta.type),
                        pqt_physical_name(lf->type));
  if (lf->type == PQT_FIXED_LEN_BYTE_ARRAY && (lf->type_length <= 0 || lf->type_length > (1 << 24)))
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: column %s: FIXED_LEN_BYTE_ARRAY length %d is out of range", name,
                        pr_leaf_path(f, leaf), lf->type_length);
  return VF_OK;
}

/* The chunk's byte range: from the dictionary page when its offset is plausible, clamped to the
 * data area. */
void pr_chunk_range(const pqt_file *f, const pqt_column_meta *cm, uint64_t *start,
                    uint64_t *len) {
  uint64_t s0 = (uint64_t)cm->data_page_offset;
  if (cm->dictionary_page_offset > 0 && cm->dictionary_page_offset < cm->data_page_offset)
    s0 = (uint64_t)cm->dictionary_page_offset;
  uint64_t l = (uint64_t)cm->total_compressed_size;
  if (s0 >= f->data_end) s0 = (uint64_t)cm->data_page_offset;
  if (l > f->data_end - s0) l = f->data_end - s0; /* clamp sizes that overshoot */
  *start = s0;
  *len = l;
}

/* Empty an output leaf for a new read (allocations kept; levels it cannot have dropped). */
vf_status pr_leaf_reset(pqt_file *f, int leaf, pqt_leaf_data *d, vf_error *err) {
  const pqt_leaf *lf = &f->schema.leaves[leaf];
  d->leaf = leaf;
  d->type = lf->type;
  d->width = lf->type == PQT_BYTE_ARRAY ? 0 : pr_physical_width(lf->type, lf->type_length);
  d->nlevels = d->nvalues = d->nrows = 0;
  d->compressed_bytes = d->uncompressed_bytes = 0;
  d->npages = 0;
  d->view = NULL;
  vf_buf_reset(&d->values);
  if (lf->type == PQT_BYTE_ARRAY) {
    vf_status st = pr_grow_array((void **)&d->offsets, &d->off_cap, 1, sizeof(int64_t), err);
    if (st != VF_OK) return st;
    d->offsets[0] = 0;
  }
  if (lf->max_def == 0 && d->def) {
    free(d->def);
    d->def = NULL;
    d->def_cap = 0;
  }
  if (lf->max_rep == 0 && d->rep) {
    free(d->rep);
    d->rep = NULL;
    d->rep_cap = 0;
  }
  return VF_OK;
}


/* Whole column chunks of (physical) row group `rg` = *g: one coalesced io_read_ranges(). */
vf_status pr_read_whole(pqt_file *f, int rg, const pqt_row_group *g, const int *leaves,
                        int nleaves, pqt_leaf_data *outs, vf_error *err) {
  const char *name = pqt_name(f);
  if (nleaves > f->nchunks_cap) {
    vf_buf *nb = realloc(f->chunks, (size_t)nleaves * sizeof *nb);
    if (!nb) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
    for (int i = f->nchunks_cap; i < nleaves; i++)
      VF_BUF_INIT(&nb[i], VF_BUF_MAX_BATCH);
    f->chunks = nb;
    f->nchunks_cap = nleaves;
  }
  io_range *ranges = vf_calloc((size_t)nleaves, sizeof *ranges);
  if (!ranges) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
  vf_status st = VF_OK;
  size_t nr = 0;
  uint64_t *starts = vf_calloc((size_t)nleaves, sizeof *starts);
  if (!starts) {
    free(ranges);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
  }
  for (int i = 0; i < nleaves; i++) {
    int leaf = leaves[i];
    st = pr_check_chunk(f, rg, g, leaf, err);
    if (st != VF_OK) goto out;
    const pqt_column_meta *cm = &g->columns[leaf].meta;
    starts[i] = 0;
    vf_buf_reset(&f->chunks[i]);
    if (g->num_rows == 0) continue; /* the row group's count decides, not num_values */
    uint64_t start, len;
    pr_chunk_range(f, cm, &start, &len);
    starts[i] = start;
    vf_buf *b = &f->chunks[i];
    vf_buf_reset(b);
    st = pr_buf_reserve(b, len ? len : 1, err);
    if (st != VF_OK) goto out;
    b->len = (size_t)len;
    ranges[nr].offset = start;
    ranges[nr].len = len;
    ranges[nr].dst = b->data;
    nr++;
  }
  st = pqt_pf_read_ranges(f->pf, f->src, ranges, nr, IO_DEFAULT_COALESCE_GAP, err);
  if (st != VF_OK) {
    vf_error_prefix(err, "%s: row group %d: reading column chunks: ", name, rg);
    goto out;
  }
  for (int i = 0; i < nleaves; i++) {
    int leaf = leaves[i];
    const pqt_leaf *lf = &f->schema.leaves[leaf];
    pqt_leaf_data *d = &outs[i];
    chunk_ctx x = {
        .f = f, .rg = rg, .leaf = leaf, .lf = lf, .cm = &g->columns[leaf].meta, .d = d, .err = err};
    x.width = pr_physical_width(lf->type, lf->type_length);
    st = pr_leaf_reset(f, leaf, d, err);
    if (st != VF_OK) goto out;
    x.def_mat = d->def != NULL; /* reuse an allocation; freed below if no nulls */
    st = decode_chunk(&x, &f->chunks[i], starts[i], g->num_rows);
    if (st != VF_OK) goto out;
    if (x.def_mat && d->def) {
      /* a reused buffer: drop it when this chunk had no nulls */
      if (pr_count_byte(d->def, (size_t)d->nlevels, (uint8_t)lf->max_def) == (size_t)d->nlevels) {
        free(d->def);
        d->def = NULL;
        d->def_cap = 0;
      }
    }
    int64_t want_rows = g->num_rows;
    if ((lf->max_rep == 0 ? d->nlevels : d->nrows) != want_rows) {
      st = vf_error_set(
          err, VF_ECORRUPT,
          "%s: row group %d, column %s: decoded %" PRId64 " rows, the row group has %" PRId64, name,
          rg, pr_leaf_path(f, leaf), lf->max_rep == 0 ? d->nlevels : d->nrows, want_rows);
      goto out;
    }
  }
out:
  free(ranges);
  free(starts);
  return st;
}
