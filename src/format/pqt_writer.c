/*
 * Streaming parquet writer (parquet-format: README "File format", "Data Pages", "Nested
 * encoding"; LogicalTypes.md "Lists"; parquet.thrift for every struct written here).
 *
 * Why this shape: vforge writes query sets, ground truth and whole converted corpora, so the
 * writer must stream.  Rows arrive column-batch-wise; each column appends them to its *current
 * page* (levels as one byte each, values already PLAIN-encoded).  When a page reaches
 * `page_bytes` at a row boundary it is sealed: levels RLE-encoded with their 4-byte length
 * prefix (repetition first, then definition, then values: the v1 data page layout), the whole
 * page compressed, CRC-32 of the compressed bytes put in the PageHeader, header + page appended
 * to the column's *chunk buffer*.  Column chunks must be contiguous in the file, so chunks are
 * buffered until the row group is complete (`row_group_rows`), then written column after
 * column.  Peak memory is therefore one row group of encoded data plus one open page per
 * column; every buffer is reused across row groups.  The footer keeps only a few integers per
 * column chunk.
 *
 * Schema produced (one leaf per column):
 *   INT32/INT64/FLOAT/DOUBLE/BOOLEAN  `required|optional <type> name`
 *   STRING        `required|optional binary name (STRING)` (+ converted type UTF8)
 *   LIST_FLOAT / LIST_STRING / VECTOR, the standard 3-level list:
 *       `required|optional group name (LIST) { repeated group list { optional <t> element } }`
 *   LIST_LIST_FLOAT (multivectors) nests the same shape twice (5 schema elements, path
 *   name.list.element.list.element): max_rep 2, max_def 4 (required) or 5 (optional); a row's
 *   first value has rep 0, the first value of each further inner list rep 1, the rest rep 2;
 *   an empty outer list is def max_def - 4, an empty inner list def max_def - 2.
 *   SPARSE is `required|optional group name { required group indices (LIST) { repeated group
 *   list { optional int32 element (INTEGER(32, unsigned)) } } required group values (LIST) {
 *   ... float element } }`: two leaves, each written like a LIST column whose nullability is the
 *   struct's (a null struct is def 0, an empty list def max_def - 2), sharing the row offsets.
 *   A VECTOR is written exactly like a LIST<float> (what arrow does for FixedSizeList); the
 *   batch layout (nrows * dim floats) fixes the length of every row, and an ARROW:schema
 *   footer entry (pqt_arrow_schema.c) tells arrow readers to restore FixedSizeList<float>[dim];
 *   other readers infer the dimension.
 * Levels: flat optional columns have max_def 1 (0 = null).  Lists have max_rep 1 and
 * max_def 2 (required list) or 3 (optional list): a null list is def 0, an empty list def
 * max_def - 2, each element def max_def; the first element of a row has rep 0, the rest rep 1.
 * Values are never null inside a list (the batch API has no element validity), yet the
 * element is declared optional as arrow and DuckDB do, so readers take the common path.
 *
 * Output goes through vf_atomic_file: the path only appears when pqt_writer_close() succeeds;
 * pqt_writer_abort() (or any failure in close) removes the temporary file.
 */
#include <stdlib.h>

#include "format/pqt_writer_internal.h"

#ifndef VF_VERSION_STRING
#define VF_VERSION_STRING "0.1.0"
#endif
#ifndef VF_BUILD_ID
#define VF_BUILD_ID "dev"
#endif

#define PW_DEFAULT_RG_ROWS 65536
#define PW_DEFAULT_PAGE_BYTES ((int64_t)1 << 20)
/* Buffer ceilings: one page, raw or compressed (a page header's sizes are int32); the page
 * headers and the footer (the reader refuses a footer above 256 MiB, PQT_DEFAULT_MAX_FOOTER). */
#define PW_MAX_PAGE ((size_t)INT32_MAX)
#define PW_MAX_FOOTER ((size_t)256 << 20)
#define PW_MAX_PAGE_LEVELS ((int64_t)1 << 24) /* keeps num_values far below INT32_MAX */
#define PW_MAX_COLUMNS 32767

/* the handle and its column types: pqt_writer_internal.h */

static int pw_bits_for(unsigned max) {
  int b = 0;
  while ((1u << b) <= max)
    b++;
  return b;
}

static const char *pw_type_name(pqt_wtype t) {
  switch (t) {
  case PQT_W_INT32: return "INT32";
  case PQT_W_INT64: return "INT64";
  case PQT_W_FLOAT: return "FLOAT";
  case PQT_W_DOUBLE: return "DOUBLE";
  case PQT_W_BOOL: return "BOOL";
  case PQT_W_STRING: return "STRING";
  case PQT_W_LIST_FLOAT: return "LIST_FLOAT";
  case PQT_W_LIST_STRING: return "LIST_STRING";
  case PQT_W_VECTOR: return "VECTOR";
  case PQT_W_LIST_LIST_FLOAT: return "LIST_LIST_FLOAT";
  case PQT_W_SPARSE: return "SPARSE";
  }
  return "?";
}

static void pw_col_free(pw_col *c) {
  free(c->name);
  vf_buf_free(&c->def);
  vf_buf_free(&c->rep);
  vf_buf_free(&c->vals);
  vf_buf_free(&c->chunk);
}

static void pw_free(pqt_writer *w) {
  if (!w) return;
  vf_atomic_abort(w->af);
  for (int i = 0; i < w->ncols; i++)
    pw_col_free(&w->cols[i]);
  free(w->cols);
  for (int i = 0; i < w->nrgs; i++)
    free(w->rgs[i].cols);
  free(w->rgs);
  for (int i = 0; i < w->nkv; i++) {
    free(w->kv[i].key);
    free(w->kv[i].value);
  }
  free(w->kv);
  vf_buf_free(&w->raw);
  vf_buf_free(&w->comp);
  vf_buf_free(&w->hdr);
  free(w->path);
  free(w);
}

/*! pqt_writer_open() : validate the column list, create the temporary file and write the
 *  leading magic.  @return : VF_EUSAGE for a bad column list or options (message names the
 *  column), VF_EIO when the file cannot be created. */
vf_status pqt_writer_open(const char *path, const pqt_wcolumn *cols, int ncols,
                          const pqt_writer_opts *opts, pqt_writer **out, vf_error *err) {
  *out = NULL;
  if (!path || !*path) return vf_error_set(err, VF_EUSAGE, "parquet writer: empty path");
  if (!cols || ncols <= 0 || ncols > PW_MAX_COLUMNS)
    return vf_error_set(err, VF_EUSAGE, "%s: a parquet file needs 1..%d columns, got %d", path,
                        PW_MAX_COLUMNS, ncols);
  pqt_writer_opts o = {0};
  if (opts) o = *opts;
  if (o.codec != PQT_UNCOMPRESSED && o.codec != PQT_ZSTD && o.codec != PQT_SNAPPY &&
      o.codec != PQT_GZIP)
    return vf_error_set(err, VF_EUSAGE,
                        "%s: the writer supports UNCOMPRESSED, ZSTD, SNAPPY and "
                        "GZIP, not codec %d",
                        path, (int)o.codec);
  if (o.row_group_rows < 0 || o.page_bytes < 0)
    return vf_error_set(err, VF_EUSAGE, "%s: negative row_group_rows or page_bytes", path);
  for (int i = 0; i < ncols; i++) {
    const pqt_wcolumn *c = &cols[i];
    if (!c->name || !*c->name)
      return vf_error_set(err, VF_EUSAGE, "%s: column %d has no name", path, i);
    if ((unsigned)c->type > (unsigned)PQT_W_SPARSE)
      return vf_error_set(err, VF_EUSAGE, "%s: column '%s' has unknown type %d", path, c->name,
                          (int)c->type);
    if (c->type == PQT_W_VECTOR && c->dim <= 0)
      return vf_error_set(err, VF_EUSAGE, "%s: vector column '%s' needs dim > 0, got %d", path,
                          c->name, (int)c->dim);
    for (int j = 0; j < i; j++)
      if (strcmp(cols[j].name, c->name) == 0)
        return vf_error_set(err, VF_EUSAGE, "%s: duplicate column name '%s'", path, c->name);
  }

  vf_status st = VF_OK;
  pqt_writer *w = vf_calloc(1, sizeof *w);
  if (!w) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  w->codec = (int)o.codec;
  w->level = o.zstd_level ? o.zstd_level : 3;
  w->rg_rows = o.row_group_rows ? o.row_group_rows : PW_DEFAULT_RG_ROWS;
  w->page_bytes = o.page_bytes ? o.page_bytes : PW_DEFAULT_PAGE_BYTES;
  VF_BUF_INIT(&w->raw, PW_MAX_PAGE);
  VF_BUF_INIT(&w->comp, PW_MAX_PAGE);
  VF_BUF_INIT(&w->hdr, PW_MAX_FOOTER);
  w->path = vf_strdup(path);
  int nleaves = 0;
  for (int i = 0; i < ncols; i++) nleaves += cols[i].type == PQT_W_SPARSE ? 2 : 1;
  w->nbcols = ncols;
  w->cols = vf_calloc((size_t)nleaves, sizeof *w->cols);
  if (!w->path || !w->cols) {
    st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
    goto out;
  }
  for (int i = 0, li = 0; i < ncols; i++, li++) {
    int part = cols[i].type == PQT_W_SPARSE ? 1 : 0;
  again:;
    pw_col *c = &w->cols[li];
    /* a row group's levels, values and compressed chunk of this column, staged whole */
    VF_BUF_INIT(&c->def, VF_BUF_MAX_BATCH);
    VF_BUF_INIT(&c->rep, VF_BUF_MAX_BATCH);
    VF_BUF_INIT(&c->vals, VF_BUF_MAX_BATCH);
    VF_BUF_INIT(&c->chunk, VF_BUF_MAX_BATCH);
    w->ncols = li + 1;
    c->name = vf_strdup(cols[i].name);
    if (!c->name) {
      st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
      goto out;
    }
    c->wtype = cols[i].type;
    c->nullable = cols[i].nullable;
    c->dim = cols[i].dim;
    c->bcol = i;
    c->part = part;
    if (part) c->wtype = PQT_W_LIST_FLOAT; /* each leaf is written like a list<float|uint32> */
    switch (c->wtype) {
    case PQT_W_INT32: c->phys = PQT_INT32; break;
    case PQT_W_INT64: c->phys = PQT_INT64; break;
    case PQT_W_FLOAT: c->phys = PQT_FLOAT; break;
    case PQT_W_DOUBLE: c->phys = PQT_DOUBLE; break;
    case PQT_W_BOOL: c->phys = PQT_BOOLEAN; break;
    case PQT_W_STRING: c->phys = PQT_BYTE_ARRAY; break;
    case PQT_W_LIST_FLOAT:
    case PQT_W_VECTOR:
      c->phys = PQT_FLOAT;
      c->is_list = true;
      break;
    case PQT_W_LIST_STRING:
      c->phys = PQT_BYTE_ARRAY;
      c->is_list = true;
      break;
    case PQT_W_LIST_LIST_FLOAT:
      c->phys = PQT_FLOAT;
      c->is_list = true;
      c->depth = 1; /* +1 below */
      break;
    case PQT_W_SPARSE: break; /* not reached: split into its two leaves above */
    }
    if (c->is_list) {
      c->depth += 1;
      c->max_rep = (uint8_t)c->depth;
      c->max_def = (uint8_t)((c->nullable ? 1 : 0) + 2 * c->depth);
    } else {
      c->max_def = c->nullable ? 1 : 0;
    }
    if (part == 1) c->phys = PQT_INT32;
    c->def_bits = pw_bits_for(c->max_def);
    c->rep_bits = pw_bits_for(c->max_rep);
    if (part == 1) {
      part = 2;
      li++;
      goto again;
    }
  }
  st = vf_atomic_open(path, &w->af, err);
  if (st != VF_OK) goto out;
  st = vf_atomic_write(w->af, "PAR1", 4, err);
  if (st != VF_OK) goto out;
  *out = w;
  return VF_OK;
out:
  pw_free(w);
  return st;
}

/* ------------------------------------------------------------------ pages */

static int64_t pw_page_estimate(const pw_col *c) {
  int64_t v = (int64_t)c->vals.len;
  if (c->phys == PQT_BOOLEAN) v /= 8;
  return v + c->page_levels / 4;
}

/* Appends the 4-byte length prefix and the RLE encoding of `levels` to w->raw. */
static vf_status pw_put_levels(pqt_writer *w, const vf_buf *levels, int bits, vf_error *err) {
  vf_status st = vf_buf_reserve(&w->raw, 4, err);
  if (st != VF_OK) return st;
  size_t at = w->raw.len;
  w->raw.len += 4;
  st = pqt_rle_encode_u8(levels->data, levels->len, bits, &w->raw, err);
  if (st != VF_OK) return st;
  size_t n = w->raw.len - at - 4;
  if (n > (size_t)INT32_MAX) return vf_error_set(err, VF_EUSAGE, "levels exceed 2 GiB");
  uint32_t n32 = (uint32_t)n;
  uint8_t le[4] = {(uint8_t)n32, (uint8_t)(n32 >> 8), (uint8_t)(n32 >> 16), (uint8_t)(n32 >> 24)};
  memcpy(w->raw.data + at, le, 4);
  return VF_OK;
}

/* Seals the open page of `c` into its chunk buffer (no-op when the page is empty). */
static vf_status pw_flush_page(pqt_writer *w, pw_col *c, vf_error *err) {
  if (c->page_levels == 0) return VF_OK;
  vf_status st;
  vf_buf_reset(&w->raw);
  if (c->max_rep > 0 && (st = pw_put_levels(w, &c->rep, c->rep_bits, err)) != VF_OK) return st;
  if (c->max_def > 0 && (st = pw_put_levels(w, &c->def, c->def_bits, err)) != VF_OK) return st;
  if (c->phys == PQT_BOOLEAN) { /* PLAIN BOOLEAN: bit-packed, LSB first */
    size_t nbytes = (c->vals.len + 7) / 8;
    if ((st = vf_buf_reserve(&w->raw, nbytes, err)) != VF_OK) return st;
    uint8_t *dst = w->raw.data + w->raw.len;
    memset(dst, 0, nbytes);
    for (size_t i = 0; i < c->vals.len; i++)
      dst[i >> 3] = (uint8_t)(dst[i >> 3] | (c->vals.data[i] << (i & 7)));
    w->raw.len += nbytes;
  } else if (c->vals.len) {
    if ((st = vf_buf_append(&w->raw, c->vals.data, c->vals.len, err)) != VF_OK) return st;
  }
  const vf_buf *payload = &w->raw;
  if (w->codec != PQT_UNCOMPRESSED) {
    vf_buf_reset(&w->comp);
    /* zstd_level is for ZSTD only; GZIP gets zlib's default level */
    st = pqt_compress(w->codec, w->codec == PQT_ZSTD ? w->level : 0, w->raw.data, w->raw.len,
                      &w->comp, err);
    if (st != VF_OK) return st;
    payload = &w->comp;
  }
  if (w->raw.len > (size_t)INT32_MAX || payload->len > (size_t)INT32_MAX)
    return vf_error_set(err, VF_EUSAGE,
                        "a data page of column '%s' exceeds 2 GiB (one row too "
                        "large?)",
                        c->name);
  uint32_t crc = pqt_crc32(payload->data, payload->len);

  vf_buf_reset(&w->hdr);
  tc_writer tw;
  tcw_init(&tw, &w->hdr, err);
  tcw_struct_begin(&tw); /* PageHeader */
  tcw_field_i32(&tw, 1, PQT_DATA_PAGE);
  tcw_field_i32(&tw, 2, (int32_t)w->raw.len);
  tcw_field_i32(&tw, 3, (int32_t)payload->len);
  tcw_field_i32(&tw, 4, (int32_t)crc);
  tcw_field_struct_begin(&tw, 5); /* DataPageHeader */
  tcw_field_i32(&tw, 1, (int32_t)c->page_levels);
  tcw_field_i32(&tw, 2, PQT_ENC_PLAIN);
  tcw_field_i32(&tw, 3, PQT_ENC_RLE);
  tcw_field_i32(&tw, 4, PQT_ENC_RLE);
  tcw_struct_end(&tw);
  tcw_struct_end(&tw);
  if (tw.st != VF_OK) return tw.st;

  if ((st = vf_buf_reserve(&c->chunk, w->hdr.len + payload->len, err)) != VF_OK) return st;
  vf_buf_put(&c->chunk, w->hdr.data, w->hdr.len);
  vf_buf_put(&c->chunk, payload->data, payload->len);
  c->chunk_uncomp += (int64_t)(w->hdr.len + w->raw.len);
  c->chunk_levels += c->page_levels;
  c->chunk_nulls += c->page_levels - c->page_values;
  vf_buf_reset(&c->def);
  vf_buf_reset(&c->rep);
  vf_buf_reset(&c->vals);
  c->page_levels = 0;
  c->page_values = 0;
  return VF_OK;
}

static vf_status pw_maybe_flush(pqt_writer *w, pw_col *c, vf_error *err) {
  if (pw_page_estimate(c) >= w->page_bytes || c->page_levels >= PW_MAX_PAGE_LEVELS)
    return pw_flush_page(w, c, err);
  return VF_OK;
}

/* ------------------------------------------------------------ appending rows */

static size_t pw_fixed_width(pqt_physical t) {
  switch (t) {
  case PQT_INT32:
  case PQT_FLOAT: return 4;
  case PQT_INT64:
  case PQT_DOUBLE: return 8;
  default: return 1; /* BOOLEAN, one byte per value until the page is sealed */
  }
}

/* Flat fixed-width columns: as many rows per step as fit in the open page. */
static vf_status pw_append_fixed(pqt_writer *w, pw_col *c, const pqt_wbatch *b, int64_t r0,
                                 int64_t r1, vf_error *err) {
  size_t width = pw_fixed_width(c->phys);
  int64_t vbytes_per_row = c->phys == PQT_BOOLEAN ? 1 : (int64_t)width;
  const uint8_t *src = b->values;
  int64_t r = r0;
  while (r < r1) {
    int64_t room = w->page_bytes - pw_page_estimate(c);
    int64_t n = room > 0 ? room / vbytes_per_row : 1;
    if (n < 1) n = 1;
    if (n > r1 - r) n = r1 - r;
    if (n > PW_MAX_PAGE_LEVELS - c->page_levels) n = PW_MAX_PAGE_LEVELS - c->page_levels;
    vf_status st = vf_buf_reserve(&c->vals, (size_t)n * width, err);
    if (st != VF_OK) return st;
    if (c->max_def) {
      st = vf_buf_reserve(&c->def, (size_t)n, err);
      if (st != VF_OK) return st;
    }
    const uint8_t *s = src + (size_t)r * width;
    if (!b->valid) {
      if (c->phys == PQT_BOOLEAN) {
        uint8_t *d = c->vals.data + c->vals.len;
        for (int64_t i = 0; i < n; i++)
          d[i] = s[i] ? 1 : 0;
        c->vals.len += (size_t)n;
      } else {
        vf_buf_put(&c->vals, s, (size_t)n * width);
      }
      if (c->max_def) {
        memset(c->def.data + c->def.len, 1, (size_t)n);
        c->def.len += (size_t)n;
      }
      c->page_values += n;
    } else {
      const uint8_t *valid = b->valid + r;
      for (int64_t i = 0; i < n; i++) {
        if (valid[i]) {
          if (c->phys == PQT_BOOLEAN)
            vf_buf_putc(&c->vals, s[i] ? 1 : 0);
          else
            vf_buf_put(&c->vals, s + (size_t)i * width, width);
          c->page_values++;
        }
        if (c->max_def) vf_buf_putc(&c->def, valid[i] ? 1 : 0);
      }
    }
    c->page_levels += n;
    r += n;
    if ((st = pw_maybe_flush(w, c, err)) != VF_OK) return st;
  }
  return VF_OK;
}

/* Value j of a STRING (row j) or LIST_STRING (element j) batch. */
static void pw_string_at(const pqt_wbatch *b, int64_t j, const uint8_t **p, size_t *n) {
  if (b->strs) {
    *p = (const uint8_t *)b->strs[j];
    *n = strlen(b->strs[j]);
  } else {
    *p = b->bytes + b->offsets[j];
    *n = (size_t)(b->offsets[j + 1] - b->offsets[j]);
  }
}

static vf_status pw_put_string(pw_col *c, const uint8_t *p, size_t n, int64_t row, vf_error *err) {
  if (n > (size_t)INT32_MAX)
    return vf_error_set(err, VF_EUSAGE, "column '%s' row %lld: string of %zu bytes exceeds 2 GiB",
                        c->name, (long long)row, n);
  vf_status st = vf_buf_reserve(&c->vals, 4 + n, err);
  if (st != VF_OK) return st;
  uint32_t n32 = (uint32_t)n;
  uint8_t le[4] = {(uint8_t)n32, (uint8_t)(n32 >> 8), (uint8_t)(n32 >> 16), (uint8_t)(n32 >> 24)};
  vf_buf_put(&c->vals, le, 4);
  if (n) vf_buf_put(&c->vals, p, n);
  return VF_OK;
}

static vf_status pw_append_string(pqt_writer *w, pw_col *c, const pqt_wbatch *b, int64_t r0,
                                  int64_t r1, int64_t row_base, vf_error *err) {
  for (int64_t r = r0; r < r1; r++) {
    bool valid = !b->valid || b->valid[r];
    vf_status st = VF_OK;
    if (c->max_def && (st = vf_buf_reserve(&c->def, 1, err)) != VF_OK) return st;
    if (valid) {
      const uint8_t *p;
      size_t n;
      pw_string_at(b, r, &p, &n);
      if ((st = pw_put_string(c, p, n, row_base + r, err)) != VF_OK) return st;
      c->page_values++;
    }
    if (c->max_def) vf_buf_putc(&c->def, valid ? 1 : 0);
    c->page_levels++;
    if ((st = pw_maybe_flush(w, c, err)) != VF_OK) return st;
  }
  return VF_OK;
}

/* LIST_FLOAT, LIST_STRING, VECTOR: one row at a time so pages end on row boundaries. */
static vf_status pw_append_list(pqt_writer *w, pw_col *c, const pqt_wbatch *b, int64_t r0,
                                int64_t r1, int64_t row_base, vf_error *err) {
  uint8_t empty_def = (uint8_t)(c->max_def - 2);
  for (int64_t r = r0; r < r1; r++) {
    bool valid = !b->valid || b->valid[r];
    int64_t first, count;
    if (c->wtype == PQT_W_VECTOR) {
      first = r * c->dim;
      count = c->dim;
    } else {
      first = b->offsets[r];
      count = b->offsets[r + 1] - first;
    }
    if (!valid) count = 0;
    if (count > PW_MAX_PAGE_LEVELS)
      return vf_error_set(err, VF_EUSAGE,
                          "column '%s' row %lld: %lld list elements exceed the "
                          "writer's limit of %lld per row",
                          c->name, (long long)(row_base + r), (long long)count,
                          (long long)PW_MAX_PAGE_LEVELS);
    size_t nlev = count ? (size_t)count : 1;
    vf_status st = vf_buf_reserve(&c->def, nlev, err);
    if (st != VF_OK) return st;
    st = vf_buf_reserve(&c->rep, nlev, err);
    if (st != VF_OK) return st;
    uint8_t *d = c->def.data + c->def.len, *rp = c->rep.data + c->rep.len;
    if (count == 0) {
      d[0] = valid ? empty_def : 0;
      rp[0] = 0;
    } else {
      memset(d, c->max_def, nlev);
      rp[0] = 0;
      if (nlev > 1) memset(rp + 1, 1, nlev - 1);
      if (c->phys == PQT_FLOAT || c->phys == PQT_INT32) { /* 4-byte values */
        const float *v = (const float *)b->values + first;
        if ((st = vf_buf_append(&c->vals, v, (size_t)count * 4, err)) != VF_OK) return st;
      } else {
        for (int64_t j = first; j < first + count; j++) {
          const uint8_t *p;
          size_t n;
          pw_string_at(b, j, &p, &n);
          if ((st = pw_put_string(c, p, n, row_base + r, err)) != VF_OK) return st;
        }
      }
      c->page_values += count;
    }
    c->def.len += nlev;
    c->rep.len += nlev;
    c->page_levels += (int64_t)nlev;
    if ((st = pw_maybe_flush(w, c, err)) != VF_OK) return st;
  }
  return VF_OK;
}

/* LIST_LIST_FLOAT: one row at a time (pages end on row boundaries). */
static vf_status pw_append_list2(pqt_writer *w, pw_col *c, const pqt_wbatch *b, int64_t r0,
                                 int64_t r1, int64_t row_base, vf_error *err) {
  uint8_t md = c->max_def;
  for (int64_t r = r0; r < r1; r++) {
    bool valid = !b->valid || b->valid[r];
    int64_t v0 = valid ? b->offsets[r] : 0, v1 = valid ? b->offsets[r + 1] : 0;
    int64_t nlev = 0;
    for (int64_t v = v0; v < v1; v++) {
      int64_t n = b->offsets2[v + 1] - b->offsets2[v];
      nlev += n ? n : 1;
    }
    if (nlev == 0) nlev = 1;
    if (nlev > PW_MAX_PAGE_LEVELS)
      return vf_error_set(err, VF_EUSAGE, "column '%s' row %lld: %lld values exceed the writer's "
                          "limit of %lld per row", c->name, (long long)(row_base + r),
                          (long long)nlev, (long long)PW_MAX_PAGE_LEVELS);
    vf_status st = vf_buf_reserve(&c->def, (size_t)nlev, err);
    if (st != VF_OK) return st;
    st = vf_buf_reserve(&c->rep, (size_t)nlev, err);
    if (st != VF_OK) return st;
    if (v0 == v1) {
      vf_buf_putc(&c->def, valid ? (uint8_t)(md - 4) : 0);
      vf_buf_putc(&c->rep, 0);
    }
    for (int64_t v = v0; v < v1; v++) {
      int64_t e0 = b->offsets2[v], e1 = b->offsets2[v + 1];
      uint8_t first_rep = v == v0 ? 0 : 1;
      if (e0 == e1) {
        vf_buf_putc(&c->def, (uint8_t)(md - 2));
        vf_buf_putc(&c->rep, first_rep);
        continue;
      }
      for (int64_t e = e0; e < e1; e++) {
        vf_buf_putc(&c->def, md);
        vf_buf_putc(&c->rep, e == e0 ? first_rep : 2);
      }
      st = vf_buf_append(&c->vals, (const float *)b->values + e0, (size_t)(e1 - e0) * 4, err);
      if (st != VF_OK) return st;
      c->page_values += e1 - e0;
    }
    c->page_levels += nlev;
    if ((st = pw_maybe_flush(w, c, err)) != VF_OK) return st;
  }
  return VF_OK;
}

/* ---------------------------------------------------------------- row groups */

static vf_status pw_flush_row_group(pqt_writer *w, vf_error *err) {
  if (w->buffered_rows == 0) return VF_OK;
  vf_status st;
  for (int i = 0; i < w->ncols; i++)
    if ((st = pw_flush_page(w, &w->cols[i], err)) != VF_OK) return st;
  if (w->nrgs == w->rgs_cap) {
    int cap = w->rgs_cap ? w->rgs_cap * 2 : 8;
    pw_rg_meta *n = vf_realloc(w->rgs, (size_t)cap * sizeof *n);
    if (!n) return vf_error_set(err, VF_ENOMEM, "out of memory (row group list)");
    w->rgs = n;
    w->rgs_cap = cap;
  }
  pw_rg_meta *rg = &w->rgs[w->nrgs];
  memset(rg, 0, sizeof *rg);
  rg->cols = vf_calloc((size_t)w->ncols, sizeof *rg->cols);
  if (!rg->cols) return vf_error_set(err, VF_ENOMEM, "out of memory (row group metadata)");
  w->nrgs++;
  rg->num_rows = w->buffered_rows;
  rg->offset = vf_atomic_tell(w->af);
  for (int i = 0; i < w->ncols; i++) {
    pw_col *c = &w->cols[i];
    pw_chunk_meta *m = &rg->cols[i];
    m->offset = vf_atomic_tell(w->af);
    m->comp = (int64_t)c->chunk.len;
    m->uncomp = c->chunk_uncomp;
    m->num_values = c->chunk_levels;
    m->null_count = c->chunk_nulls;
    if ((st = vf_atomic_write(w->af, c->chunk.data, c->chunk.len, err)) != VF_OK) return st;
    rg->comp += m->comp;
    rg->uncomp += m->uncomp;
    vf_buf_reset(&c->chunk);
    c->chunk_uncomp = c->chunk_levels = c->chunk_nulls = 0;
  }
  w->buffered_rows = 0;
  return VF_OK;
}

/* ------------------------------------------------------------------ writing */

/* Checks one column batch completely before anything is appended, so a rejected batch leaves
 * the writer usable. */
static vf_status pw_validate(const pqt_writer *w, const pw_col *c, const pqt_wbatch *b,
                             int64_t nrows, vf_error *err) {
  const char *what = NULL;
  int64_t row0 = w->total_rows;
  if (b->valid && !c->nullable) {
    for (int64_t i = 0; i < nrows; i++)
      if (!b->valid[i])
        return vf_error_set(err, VF_EUSAGE,
                            "%s: column '%s' row %lld is null but the column is "
                            "not nullable",
                            w->path, c->name, (long long)(row0 + i));
  }
  switch (c->wtype) {
  case PQT_W_INT32:
  case PQT_W_INT64:
  case PQT_W_FLOAT:
  case PQT_W_DOUBLE:
  case PQT_W_BOOL:
    if (!b->values) what = "values";
    break;
  case PQT_W_VECTOR:
    if (!b->values)
      what = "values";
    else if (nrows > INT64_MAX / c->dim)
      what = "a row count that fits";
    break;
  case PQT_W_STRING:
    if (b->strs) {
      for (int64_t i = 0; i < nrows; i++)
        if ((!b->valid || b->valid[i]) && !b->strs[i])
          return vf_error_set(err, VF_EUSAGE,
                              "%s: column '%s' row %lld: NULL string in a "
                              "valid row (mark it null in `valid`)",
                              w->path, c->name, (long long)(row0 + i));
    } else if (!b->offsets) {
      what = "strs or bytes+offsets";
    } else {
      for (int64_t i = 0; i < nrows; i++)
        if (b->offsets[i] < 0 || b->offsets[i + 1] < b->offsets[i])
          return vf_error_set(err, VF_EUSAGE,
                              "%s: column '%s' row %lld: string offsets %lld..%lld "
                              "are not non-negative and ascending",
                              w->path, c->name, (long long)(row0 + i), (long long)b->offsets[i],
                              (long long)b->offsets[i + 1]);
      if (!b->bytes && b->offsets[nrows] != b->offsets[0]) what = "bytes";
    }
    break;
  case PQT_W_LIST_FLOAT:
  case PQT_W_LIST_STRING: {
    if (!b->offsets) {
      what = "offsets";
      break;
    }
    for (int64_t i = 0; i < nrows; i++)
      if (b->offsets[i] < 0 || b->offsets[i + 1] < b->offsets[i])
        return vf_error_set(err, VF_EUSAGE,
                            "%s: column '%s' row %lld: list offsets %lld..%lld are "
                            "not non-negative and ascending",
                            w->path, c->name, (long long)(row0 + i), (long long)b->offsets[i],
                            (long long)b->offsets[i + 1]);
    bool any = false;
    for (int64_t i = 0; i < nrows && !any; i++)
      any = (!b->valid || b->valid[i]) && b->offsets[i + 1] > b->offsets[i];
    if (!any) break;
    if (c->wtype == PQT_W_LIST_FLOAT) {
      if (!b->values) what = "values";
      break;
    }
    if (!b->strs) {
      what = "strs";
      break;
    }
    for (int64_t i = 0; i < nrows; i++) {
      if (b->valid && !b->valid[i]) continue;
      for (int64_t j = b->offsets[i]; j < b->offsets[i + 1]; j++)
        if (!b->strs[j])
          return vf_error_set(err, VF_EUSAGE,
                              "%s: column '%s' row %lld: list element %lld is a "
                              "NULL string (list elements cannot be null)",
                              w->path, c->name, (long long)(row0 + i),
                              (long long)(j - b->offsets[i]));
    }
    break;
  }
  case PQT_W_SPARSE: break; /* not reached: each leaf is validated as a LIST_FLOAT */
  case PQT_W_LIST_LIST_FLOAT: {
    if (!b->offsets || !b->offsets2) {
      what = "offsets and offsets2";
      break;
    }
    for (int64_t i = 0; i < nrows; i++) {
      if (b->offsets[i] < 0 || b->offsets[i + 1] < b->offsets[i])
        return vf_error_set(err, VF_EUSAGE, "%s: column '%s' row %lld: list offsets %lld..%lld are "
                            "not non-negative and ascending", w->path, c->name,
                            (long long)(row0 + i), (long long)b->offsets[i],
                            (long long)b->offsets[i + 1]);
      if (b->valid && !b->valid[i]) continue;
      for (int64_t v = b->offsets[i]; v < b->offsets[i + 1]; v++)
        if (b->offsets2[v] < 0 || b->offsets2[v + 1] < b->offsets2[v])
          return vf_error_set(err, VF_EUSAGE, "%s: column '%s' row %lld: inner list %lld has "
                              "offsets %lld..%lld, not non-negative and ascending", w->path,
                              c->name, (long long)(row0 + i), (long long)(v - b->offsets[i]),
                              (long long)b->offsets2[v], (long long)b->offsets2[v + 1]);
      if (b->offsets[i + 1] > b->offsets[i] &&
          b->offsets2[b->offsets[i + 1]] > b->offsets2[b->offsets[i]] && !b->values)
        what = "values";
    }
    break;
  }
  }
  if (what)
    return vf_error_set(err, VF_EUSAGE, "%s: column '%s' (%s): the batch needs %s", w->path,
                        c->name, pw_type_name(c->wtype), what);
  return VF_OK;
}

/* the batch of one leaf: the column's batch, or for a SPARSE leaf its indices or values list */
static pqt_wbatch pw_leaf_batch(const pw_col *c, const pqt_wbatch *cols) {
  pqt_wbatch b = cols[c->bcol];
  if (c->part == 1) b.values = b.indices;
  return b;
}

/*! pqt_writer_write() : append `nrows` rows given as one batch per column (see pqt_wbatch).
 *  Row groups are flushed to the file as they fill up.
 *  @return : VF_EUSAGE for an invalid batch (nothing is appended; the writer stays usable);
 *            after an I/O or memory failure the writer only accepts pqt_writer_abort(). */
vf_status pqt_writer_write(pqt_writer *w, const pqt_wbatch *cols, int64_t nrows, vf_error *err) {
  if (!w) return vf_error_set(err, VF_EUSAGE, "parquet writer: NULL writer");
  if (w->failed != VF_OK)
    return vf_error_set(err, VF_EUSAGE, "%s: the writer failed earlier and cannot continue",
                        w->path);
  if (nrows < 0)
    return vf_error_set(err, VF_EUSAGE, "%s: negative row count %lld", w->path, (long long)nrows);
  if (nrows == 0) return VF_OK;
  if (!cols) return vf_error_set(err, VF_EUSAGE, "%s: no column batches", w->path);
  vf_status st;
  for (int i = 0; i < w->ncols; i++) {
    pqt_wbatch lb = pw_leaf_batch(&w->cols[i], cols);
    if ((st = pw_validate(w, &w->cols[i], &lb, nrows, err)) != VF_OK) return st;
  }

  int64_t done = 0;
  while (done < nrows) {
    int64_t take = w->rg_rows - w->buffered_rows;
    if (take > nrows - done) take = nrows - done;
    for (int i = 0; i < w->ncols; i++) {
      pw_col *c = &w->cols[i];
      pqt_wbatch lb = pw_leaf_batch(c, cols);
      const pqt_wbatch *b = &lb;
      int64_t row_base = w->total_rows - done; /* file row of batch row 0 */
      switch (c->wtype) {
      case PQT_W_STRING: st = pw_append_string(w, c, b, done, done + take, row_base, err); break;
      case PQT_W_LIST_FLOAT:
      case PQT_W_LIST_STRING:
      case PQT_W_VECTOR: st = pw_append_list(w, c, b, done, done + take, row_base, err); break;
      case PQT_W_LIST_LIST_FLOAT:
        st = pw_append_list2(w, c, b, done, done + take, row_base, err);
        break;
      default: st = pw_append_fixed(w, c, b, done, done + take, err); break;
      }
      if (st != VF_OK) goto out;
    }
    w->buffered_rows += take;
    w->total_rows += take;
    done += take;
    if (w->buffered_rows >= w->rg_rows) VF_TRY(pw_flush_row_group(w, err));
  }
  return VF_OK;
out:
  vf_error_prefix(err, "%s: ", w->path);
  w->failed = st;
  return st;
}

/*! pqt_writer_add_kv() : set a footer key-value entry (a repeated key replaces the value;
 *  `value` may be NULL for a key without value). */
vf_status pqt_writer_add_kv(pqt_writer *w, const char *key, const char *value, vf_error *err) {
  if (!w || !key) return vf_error_set(err, VF_EUSAGE, "parquet writer: NULL writer or key");
  char *v = NULL;
  if (value && !(v = vf_strdup(value))) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (int i = 0; i < w->nkv; i++) {
    if (strcmp(w->kv[i].key, key) == 0) {
      free(w->kv[i].value);
      w->kv[i].value = v;
      return VF_OK;
    }
  }
  if (w->nkv == w->kv_cap) {
    int cap = w->kv_cap ? w->kv_cap * 2 : 4;
    pqt_kv *n = vf_realloc(w->kv, (size_t)cap * sizeof *n);
    if (!n) {
      free(v);
      return vf_error_set(err, VF_ENOMEM, "out of memory");
    }
    w->kv = n;
    w->kv_cap = cap;
  }
  char *k = vf_strdup(key);
  if (!k) {
    free(v);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  w->kv[w->nkv].key = k;
  w->kv[w->nkv].value = v;
  w->nkv++;
  return VF_OK;
}

/* ---------------------------------------------------------------- footer */

static void pw_schema_string_annotation(tc_writer *tw) {
  tcw_field_i32(tw, 6, PQT_CT_UTF8);
  tcw_field_struct_begin(tw, 10); /* LogicalType */
  tcw_field_struct_begin(tw, 1);  /* STRING: StringType {} */
  tcw_struct_end(tw);
  tcw_struct_end(tw);
}

static void pw_schema_column(tc_writer *tw, const pw_col *c) {
  int rep = c->nullable ? PQT_OPTIONAL : PQT_REQUIRED;
  if (!c->is_list) {
    tcw_list_struct_begin(tw);
    tcw_field_i32(tw, 1, (int32_t)c->phys);
    tcw_field_i32(tw, 3, rep);
    tcw_field_binary(tw, 4, c->name, strlen(c->name));
    if (c->wtype == PQT_W_STRING) pw_schema_string_annotation(tw);
    tcw_struct_end(tw);
    return;
  }
  const char *lname = c->name;
  if (c->part) { /* SPARSE: the struct before its first leaf; both lists are required */
    if (c->part == 1) {
      tcw_list_struct_begin(tw);
      tcw_field_i32(tw, 3, rep);
      tcw_field_binary(tw, 4, c->name, strlen(c->name));
      tcw_field_i32(tw, 5, 2);
      tcw_struct_end(tw);
    }
    rep = PQT_REQUIRED;
    lname = c->part == 1 ? "indices" : "values";
  }
  tcw_list_struct_begin(tw); /* the LIST-annotated group */
  tcw_field_i32(tw, 3, rep);
  tcw_field_binary(tw, 4, lname, strlen(lname));
  tcw_field_i32(tw, 5, 1);
  tcw_field_i32(tw, 6, PQT_CT_LIST);
  tcw_field_struct_begin(tw, 10); /* LogicalType */
  tcw_field_struct_begin(tw, 3);  /* LIST: ListType {} */
  tcw_struct_end(tw);
  tcw_struct_end(tw);
  tcw_struct_end(tw);
  tcw_list_struct_begin(tw); /* repeated group list */
  tcw_field_i32(tw, 3, PQT_REPEATED);
  tcw_field_binary(tw, 4, "list", 4);
  tcw_field_i32(tw, 5, 1);
  tcw_struct_end(tw);
  if (c->depth == 2) {
    tcw_list_struct_begin(tw); /* optional group element (LIST) */
    tcw_field_i32(tw, 3, PQT_OPTIONAL);
    tcw_field_binary(tw, 4, "element", 7);
    tcw_field_i32(tw, 5, 1);
    tcw_field_i32(tw, 6, PQT_CT_LIST);
    tcw_field_struct_begin(tw, 10);
    tcw_field_struct_begin(tw, 3);
    tcw_struct_end(tw);
    tcw_struct_end(tw);
    tcw_struct_end(tw);
    tcw_list_struct_begin(tw); /* repeated group list */
    tcw_field_i32(tw, 3, PQT_REPEATED);
    tcw_field_binary(tw, 4, "list", 4);
    tcw_field_i32(tw, 5, 1);
    tcw_struct_end(tw);
  }
  tcw_list_struct_begin(tw); /* optional <t> element */
  tcw_field_i32(tw, 1, (int32_t)c->phys);
  tcw_field_i32(tw, 3, PQT_OPTIONAL);
  tcw_field_binary(tw, 4, "element", 7);
  if (c->phys == PQT_BYTE_ARRAY) pw_schema_string_annotation(tw);
  if (c->phys == PQT_INT32) /* uint32 (the ConvertedType alone: readers map it to uint32) */
    tcw_field_i32(tw, 6, PQT_CT_UINT_32);
  tcw_struct_end(tw);
}

static vf_status pw_write_footer(pqt_writer *w, vf_error *err) {
  vf_buf *b = &w->hdr;
  vf_buf_reset(b);
  int nschema = 1;
  for (int i = 0; i < w->ncols; i++)
    nschema += (w->cols[i].is_list ? 1 + 2 * w->cols[i].depth : 1) + (w->cols[i].part == 1);
  tc_writer tw;
  tcw_init(&tw, b, err);
  tcw_struct_begin(&tw); /* FileMetaData */
  tcw_field_i32(&tw, 1, 1);
  tcw_field_list_begin(&tw, 2, TC_STRUCT, (uint32_t)nschema);
  tcw_list_struct_begin(&tw); /* root */
  tcw_field_binary(&tw, 4, "schema", 6);
  tcw_field_i32(&tw, 5, w->nbcols);
  tcw_struct_end(&tw);
  for (int i = 0; i < w->ncols; i++)
    pw_schema_column(&tw, &w->cols[i]);
  tcw_field_i64(&tw, 3, w->total_rows);
  tcw_field_list_begin(&tw, 4, TC_STRUCT, (uint32_t)w->nrgs);
  for (int g = 0; g < w->nrgs; g++) {
    const pw_rg_meta *rg = &w->rgs[g];
    tcw_list_struct_begin(&tw); /* RowGroup */
    tcw_field_list_begin(&tw, 1, TC_STRUCT, (uint32_t)w->ncols);
    for (int i = 0; i < w->ncols; i++) {
      const pw_col *c = &w->cols[i];
      const pw_chunk_meta *m = &rg->cols[i];
      tcw_list_struct_begin(&tw); /* ColumnChunk */
      tcw_field_i64(&tw, 2, m->offset);
      tcw_field_struct_begin(&tw, 3); /* ColumnMetaData */
      tcw_field_i32(&tw, 1, (int32_t)c->phys);
      tcw_field_list_begin(&tw, 2, TC_I32, 2);
      tcw_list_i32(&tw, PQT_ENC_PLAIN);
      tcw_list_i32(&tw, PQT_ENC_RLE);
      tcw_field_list_begin(&tw, 3, TC_BINARY, (uint32_t)(1 + 2 * c->depth + (c->part ? 1 : 0)));
      tcw_list_binary(&tw, c->name, strlen(c->name));
      if (c->part == 1) tcw_list_binary(&tw, "indices", 7);
      if (c->part == 2) tcw_list_binary(&tw, "values", 6);
      for (int lv = 0; lv < c->depth; lv++) {
        tcw_list_binary(&tw, "list", 4);
        tcw_list_binary(&tw, "element", 7);
      }
      tcw_field_i32(&tw, 4, w->codec);
      tcw_field_i64(&tw, 5, m->num_values);
      tcw_field_i64(&tw, 6, m->uncomp);
      tcw_field_i64(&tw, 7, m->comp);
      tcw_field_i64(&tw, 9, m->offset);
      tcw_field_struct_begin(&tw, 12); /* Statistics */
      tcw_field_i64(&tw, 3, m->null_count);
      tcw_struct_end(&tw);
      tcw_struct_end(&tw); /* ColumnMetaData */
      tcw_struct_end(&tw); /* ColumnChunk */
    }
    tcw_field_i64(&tw, 2, rg->uncomp);
    tcw_field_i64(&tw, 3, rg->num_rows);
    tcw_field_i64(&tw, 5, rg->offset);
    tcw_field_i64(&tw, 6, rg->comp);
    if (g <= INT16_MAX) tcw_field_i16(&tw, 7, (int16_t)g);
    tcw_struct_end(&tw);
  }
  if (w->nkv > 0) {
    tcw_field_list_begin(&tw, 5, TC_STRUCT, (uint32_t)w->nkv);
    for (int i = 0; i < w->nkv; i++) {
      tcw_list_struct_begin(&tw);
      tcw_field_binary(&tw, 1, w->kv[i].key, strlen(w->kv[i].key));
      if (w->kv[i].value) tcw_field_binary(&tw, 2, w->kv[i].value, strlen(w->kv[i].value));
      tcw_struct_end(&tw);
    }
  }
  const char *created_by = "vforge version " VF_VERSION_STRING " (build " VF_BUILD_ID ")";
  tcw_field_binary(&tw, 6, created_by, strlen(created_by));
  tcw_field_list_begin(&tw, 7, TC_STRUCT, (uint32_t)w->ncols); /* column_orders */
  for (int i = 0; i < w->ncols; i++) {
    tcw_list_struct_begin(&tw);     /* ColumnOrder union */
    tcw_field_struct_begin(&tw, 1); /* TYPE_ORDER: TypeDefinedOrder {} */
    tcw_struct_end(&tw);
    tcw_struct_end(&tw);
  }
  tcw_struct_end(&tw);
  if (tw.st != VF_OK) return tw.st;
  if (b->len > (size_t)UINT32_MAX)
    return vf_error_set(err, VF_EUSAGE, "footer of %zu bytes exceeds 4 GiB", b->len);
  uint32_t n = (uint32_t)b->len;
  uint8_t trailer[8] = {
      (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24), 'P', 'A', 'R', '1'};
  vf_status st = vf_atomic_write(w->af, b->data, b->len, err);
  if (st != VF_OK) return st;
  return vf_atomic_write(w->af, trailer, 8, err);
}

/*! pqt_writer_close() : flush the last row group, write the footer and commit the file
 *  (rename into place).  Frees `w` in every case; on failure no file is left behind. */
vf_status pqt_writer_close(pqt_writer *w, vf_error *err) {
  if (!w) return vf_error_set(err, VF_EUSAGE, "parquet writer: NULL writer");
  vf_status st = w->failed;
  if (st != VF_OK) {
    vf_error_set(err, st, "%s: the writer failed earlier; file discarded", w->path);
    goto out;
  }
  if ((st = pw_flush_row_group(w, err)) != VF_OK) goto out;
  if ((st = pw_add_arrow_schema(w, err)) != VF_OK) goto out;
  if ((st = pw_write_footer(w, err)) != VF_OK) goto out;
  st = vf_atomic_commit(w->af, err);
  w->af = NULL; /* commit frees it, also on failure */
out:
  if (st != VF_OK && err && strncmp(err->msg, w->path, strlen(w->path)) != 0)
    vf_error_prefix(err, "%s: ", w->path);
  pw_free(w);
  return st;
}

/*! pqt_writer_abort() : discard everything written so far (the temp file is removed). */
void pqt_writer_abort(pqt_writer *w) {
  pw_free(w);
}
