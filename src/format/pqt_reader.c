/*
 * Parquet reader: footer, column chunks, the page loop (parquet-format README "File format",
 * "Data Pages", "Column chunks"; Encodings.md).
 *
 * Why it is shaped this way:
 *  - One ranged read of the tail (64 KiB) usually yields magic, footer length and the whole
 *    footer, so opening a remote file costs one request.  The footer is thrift-compact
 *    FileMetaData (pqt_meta.c); the schema tree and levels come from pqt_schema.c.
 *  - pqt_read_leaves() fetches all requested column chunks with one coalesced io_read_ranges()
 *    call, then walks each chunk page by page until the row group's records are decoded (the
 *    pages are the truth, as in DuckDB and arrow-rs: ColumnMetaData.num_values, which some
 *    writers get wrong, only tells a repeated column whether its last record goes on).  The
 *    chunk range starts at the dictionary page when dictionary_page_offset is
 *    plausible (> 0 and before the data page), else at data_page_offset, and a dictionary page
 *    is accepted as the first page even when dictionary_page_offset is absent (writers that
 *    leave it 0).  A size that overshoots is clamped to the start of the footer; a page that
 *    runs past the chunk's end is corrupt (nation.dict-malformed: refusing beats guessing).
 *  - Output is one pqt_leaf_data per leaf: levels one byte each, packed values.  Definition
 *    levels are only materialised once a page has an entry below max_def (vectors have none),
 *    and PLAIN fixed-width values are memcpy'd straight from the (decompressed) page: the
 *    float-vector scan is a read, a level RLE fill and a memcpy.
 *  - Scratch buffers (decompression, dictionary, indices, levels) live in the pqt_file and are
 *    reused across pages, chunks and row groups.
 *  - Every size read from the file is checked against the bytes that hold it before it is used;
 *    page sizes must be non-negative i32s; decompression buffers and decoded output honour
 *    vf_memory_budget() (a page of a few KiB may legally inflate to 1 GiB).
 *    Errors name the file, row group, column path and the byte offset of the page.
 *  - Row groups larger than the memory budget (Spark writes 128 MiB-1 GiB ones) are sliced at
 *    open: pqt_meta() lists consecutive slices of about budget/32 decoded bytes, so every caller
 *    that plans and decodes per row group (scan, cat, load, brute-force) is bounded without
 *    knowing.  A slice is decoded page by page (stream_leaf): a per-leaf position (next page
 *    header, levels and records before it, the chunk's dictionary) is kept between slices, pages
 *    are read through one window of bounded size, each page is decoded alone into a scratch
 *    leaf and the entries whose record falls in the slice are copied out.  A page that straddles
 *    the slice's end is decoded again by the next slice (the position stays on it), so slices
 *    read in order cost one extra page decode each; reading an earlier slice restarts the
 *    chunk.  Page statistics are counted by the slice that finishes the page, so the totals
 *    equal an unsliced read.  Only one page that cannot fit (bytes + decompressed + decoded) is
 *    refused.
 *  - Decompression bombs: a page whose declared uncompressed size exceeds what its codec can
 *    produce from its compressed size (deflate 1032:1, snappy 22:1, LZ4 255:1, zstd 32768:1;
 *    brotli has no useful bound and is capped by the budget and the i32 size only) is refused
 *    before anything is allocated; the decompressors write into exactly the declared size.
 *
 * Files (issue 15 item 6): this one holds the helpers, open/close, leaf data and the page index;
 * page decoding is pqt_page.c, row-group slices and streamed slices (pqt_read_leaves) are
 * pqt_slice.c, and what they share (pqt_file, leaf_stream, chunk_ctx, pr_*) is
 * pqt_reader_internal.h.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "format/pqt_reader_internal.h"

#define PQT_DEFAULT_MAX_FOOTER ((uint64_t)256 << 20)
#define PQT_MAX_INDEX_BYTES ((int64_t)64 << 20)

/* ----------------------------------------------------------------- helpers */

const char *pr_leaf_path(const pqt_file *f, int leaf) {
  const char *p = f->schema.leaves[leaf].path;
  return p ? p : "?";
}

int pr_bit_width_of(int v) {
  int w = 0;
  while (v > 0) {
    w++;
    v >>= 1;
  }
  return w;
}

/* Count bytes equal to v, 8 at a time (SWAR): level counting is on the scan's hot path. */
#if defined(__SSE2__)
/* Count bytes equal to v.  Levels are counted once per page (non-null values, rows), which for
 * 768-d vectors is two passes over 768 bytes per row: SSE2 (baseline on x86-64) compares 16
 * bytes at a time and adds the 0/-1 masks into byte lanes, flushed every 255 steps. */
size_t pr_count_byte(const uint8_t *p, size_t n, uint8_t v) {
  const __m128i vv = _mm_set1_epi8((char)v), zero = _mm_setzero_si128();
  size_t cnt = 0, i = 0;
  while (i + 16 <= n) {
    size_t lim = n - i > 16 * 255 ? i + 16 * 255 : n;
    __m128i acc = zero;
    for (; i + 16 <= lim; i += 16)
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + i)), vv));
    __m128i s = _mm_sad_epu8(acc, zero);
    cnt += (size_t)_mm_cvtsi128_si64(s) + (size_t)_mm_extract_epi16(s, 4);
  }
  for (; i < n; i++)
    cnt += p[i] == v;
  return cnt;
}
#else
size_t pr_count_byte(const uint8_t *p, size_t n, uint8_t v) {
  const uint64_t ones = 0x0101010101010101ull, low7 = 0x7f7f7f7f7f7f7f7full;
  const uint64_t vv = ones * v;
  size_t cnt = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    w ^= vv;                                         /* zero bytes where equal */
    uint64_t nz = (((w & low7) + low7) | w) & ~low7; /* high bit set in each non-zero byte */
    cnt += 8 - (size_t)(((nz >> 7) * ones) >> 56);
  }
  for (; i < n; i++)
    cnt += p[i] == v;
  return cnt;
}
#endif

/* Index of the m-th (m >= 1) zero byte of p[from..n), or n when there are fewer: where a record
 * starts in a page's repetition levels (the slice walk over a 100 MB page is on the scan's hot
 * path: 16 levels per compare). */
size_t pr_nth_zero(const uint8_t *p, size_t from, size_t n, int64_t m) {
  size_t i = from;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    unsigned mask = (unsigned)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + i)), zero));
    unsigned c = mask - ((mask >> 1) & 0x5555u); /* popcount of 16 bits, inline (no POPCNT */
    c = (c & 0x3333u) + ((c >> 2) & 0x3333u);     /* in the x86-64 baseline: the builtin is a */
    c = (c + (c >> 4)) & 0x0f0fu;                  /* libgcc call) */
    c = (c + (c >> 8)) & 0x1fu;
    if ((int64_t)c < m) {
      m -= (int64_t)c;
      continue;
    }
    for (; mask; mask &= mask - 1)
      if (--m == 0) return i + (size_t)__builtin_ctz(mask);
  }
#endif
  for (; i < n; i++)
    if (p[i] == 0 && --m == 0) return i;
  return n;
}

/* D when rep[0..n) holds `zeros` zeros (the page's record count, counted once) and they are
 * exactly at o, o + D, o + 2D, ... with the entries after the last one no more than D (every
 * record D entries: a fixed-size list with nothing null or empty, as DuckDB writes FLOAT[768]);
 * *phase = o, the entries before the first record (a page that continues the previous page's
 * last record: DuckDB splits pages by value count, not at records).  0 otherwise.  Costs one
 * read per record plus the first two records: with exactly `zeros` zeros in the page, finding
 * one at each o + kD leaves none anywhere else. */
size_t pr_regular_dim(const uint8_t *rep, size_t n, int64_t zeros, size_t *phase) {
  *phase = 0;
  if (zeros <= 0) return 0;
  size_t o = pr_nth_zero(rep, 0, n, 1);
  if (o >= n) return 0;
  size_t d;
  if (zeros == 1) {
    if (o != 0) return 0; /* one record and a continuation: nothing to gain */
    d = n;
  } else {
    size_t o2 = pr_nth_zero(rep, o + 1, n, 1);
    if (o2 >= n) return 0;
    d = o2 - o;
  }
  uint64_t last = (uint64_t)o + (uint64_t)(zeros - 1) * d;
  if (last >= n || n - last > d) return 0;
  for (size_t k = o; k < n; k += d)
    if (rep[k] != 0) return 0;
  *phase = o;
  return d;
}

/* pr_nth_zero() of levels that pr_regular_dim() found to have D entries per record after a
 * continuation of `phase` entries (zeros at phase + kD below n) */
size_t pr_nth_zero_regular(size_t d, size_t phase, size_t from, size_t n, int64_t m) {
  uint64_t first = from <= phase ? 0 : (uint64_t)(from - phase + d - 1) / d; /* record at/after */
  uint64_t j = first + (uint64_t)(m - 1);
  uint64_t k = (uint64_t)phase + j * (uint64_t)d;
  return j < (uint64_t)n && k < n ? (size_t)k : n;
}

/* Records starting before entry x of regular levels (see pr_nth_zero_regular) */
size_t pr_zeros_before_regular(size_t d, size_t phase, size_t x) {
  return x <= phase ? 0 : (x - phase + d - 1) / d;
}

/* One zero level at entry q, for pr_rle_regular_w1: the first two fix phase and D, every later
 * one must fall at the next multiple. */
static bool regular_zero(size_t q, int64_t *zeros, size_t *dim, size_t *phase, size_t *next) {
  if (*zeros == 0) {
    *phase = q;
  } else if (*zeros == 1) {
    *dim = q - *phase;
    *next = q;
  } else if (q != *next) {
    return false;
  }
  (*zeros)++;
  if (*zeros >= 2) *next += *dim;
  return true;
}

/* Whether the first n levels of the RLE/bit-packed hybrid p[0..len) of bit width 1 (max_rep 1)
 * are regular as pr_regular_dim() defines it, found run by run without writing a level: *zeros
 * records of *dim entries at *phase + k * *dim.  A run costs one step and a bit-packed byte a
 * few, however long the page (DuckDB writes 25 M levels a page).  False on anything else —
 * irregular, short or malformed data included: the full decoder then writes the levels and
 * reports what is wrong. */
bool pr_rle_regular_w1(const uint8_t *p, size_t len, size_t n, int64_t *zeros, size_t *dim,
                       size_t *phase) {
  vf_cursor c;
  vf_cur_init(&c, p, len, 0);
  size_t pos = 0, next = 0;
  *zeros = 0;
  *dim = *phase = 0;
  while (pos < n) {
    uint64_t header;
    if (!vf_cur_uvarint(&c, &header)) return false;
    uint64_t count = header >> 1;
    if (!(header & 1)) { /* RLE run: count copies of one byte */
      const uint8_t *v;
      if (count == 0 || !vf_cur_take(&c, 1, &v) || *v > 1) return false;
      size_t k = count < n - pos ? (size_t)count : n - pos;
      if (*v == 0) { /* consecutive zeros: regular only for D = 1 (fails at the third else) */
        for (size_t i = 0; i < k; i++)
          if (!regular_zero(pos + i, zeros, dim, phase, &next)) return false;
      }
      pos += k;
      continue;
    }
    const uint8_t *b; /* bit-packed: count groups of 8 one-bit values, LSB first */
    if (count == 0 || count > (n - pos + 7) / 8 + 1 || !vf_cur_take(&c, count, &b)) return false;
    for (uint64_t g = 0; g < count && pos < n; g++) {
      unsigned z = (unsigned)(uint8_t)~b[g];
      size_t k = n - pos < 8 ? n - pos : 8;
      if (k < 8) z &= (1u << k) - 1u;
      for (; z; z &= z - 1)
        if (!regular_zero(pos + (size_t)__builtin_ctz(z), zeros, dim, phase, &next)) return false;
      pos += k;
    }
  }
  if (*zeros == 0) return false;
  if (*zeros == 1) {
    if (*phase != 0) return false; /* one record and a continuation: nothing to gain */
    *dim = n;
  }
  if (*dim == 0) return false;
  uint64_t last = (uint64_t)*phase + (uint64_t)(*zeros - 1) * *dim;
  return last < n && n - last <= *dim;
}

/* Whether the RLE/bit-packed hybrid p[0..len) of bit width bw (1..8) opens with one RLE run of
 * at least n copies of a value <= max: the decoder would write n copies of it (*v). */
bool pr_rle_one_run(const uint8_t *p, size_t len, int bw, int max, size_t n, uint8_t *v) {
  vf_cursor c;
  uint64_t header;
  if (bw < 1 || bw > 8 || len == 0) return false;
  vf_cur_init(&c, p, len, 0);
  if (!vf_cur_uvarint(&c, &header) || (header & 1) || vf_cur_remaining(&c) < 1) return false;
  uint64_t count = header >> 1;
  if (count < n || count > (uint64_t)INT32_MAX || *c.p > max) return false;
  *v = *c.p;
  return true;
}

int32_t pr_physical_width(pqt_physical t, int32_t type_length) {
  switch (t) {
  case PQT_BOOLEAN: return 1;
  case PQT_INT32:
  case PQT_FLOAT: return 4;
  case PQT_INT64:
  case PQT_DOUBLE: return 8;
  case PQT_INT96: return 12;
  case PQT_FIXED_LEN_BYTE_ARRAY: return type_length;
  default: return 0;
  }
}

/* Grow a plain array (count elements of `size`) to hold `need` elements; geometric growth. */
vf_status pr_grow_array(void **p, int64_t *cap, int64_t need, size_t size, vf_error *err) {
  if (need <= *cap && *p) return VF_OK;
  int64_t ncap = *cap > 0 ? *cap : 1024;
  while (ncap < need)
    ncap = ncap > INT64_MAX / 2 ? need : ncap * 2;
  uint64_t budget = vf_memory_budget();
  if (budget && (uint64_t)ncap * size > budget) {
    ncap = need;
    if ((uint64_t)need * size > budget)
      return vf_error_set(err, VF_ENOMEM,
                          "decoded column would need %" PRIu64
                          " bytes, over the memory budget of %" PRIu64,
                          (uint64_t)need * size, budget);
  }
  void *np = NULL;
  if ((uint64_t)ncap <= SIZE_MAX / size) {
    size_t bytes = (size_t)ncap * size, got = 0;
    if (bytes >= PQT_MEM_MIN) /* a block a closed file left (no fresh pages to fault in) */
      np = pqt_mem_grow(*p, *p ? (size_t)*cap * size : 0, bytes, &got);
    if (np) ncap = (int64_t)(got / size);
    else np = realloc(*p, bytes);
  }
  if (!np)
    return vf_error_set(err, VF_ENOMEM, "out of memory allocating %" PRId64 " entries", ncap);
  *p = np;
  *cap = ncap;
  return VF_OK;
}

vf_status pr_grow_sz(void **p, size_t *cap, size_t need, size_t size, vf_error *err) {
  int64_t c = (int64_t)*cap;
  vf_status st = pr_grow_array(p, &c, (int64_t)need, size, err);
  *cap = (size_t)c;
  return st;
}

/* reserve in a value buffer, honouring the memory budget */
vf_status pr_buf_reserve(vf_buf *b, uint64_t extra, vf_error *err) {
  uint64_t budget = vf_memory_budget();
  if (budget && b->len + extra > budget)
    return vf_error_set(err, VF_ENOMEM,
                        "decoded values would need %" PRIu64
                        " bytes, over the memory budget of %" PRIu64,
                        (uint64_t)b->len + extra, budget);
  if (extra > SIZE_MAX / 2) return vf_error_set(err, VF_ENOMEM, "value buffer too large");
  return pqt_buf_grow(b, (size_t)extra, err);
}

/* ------------------------------------------------------------------- open */

static _Atomic bool g_verify_crc = true;

/*! pqt_set_verify_crc_default() / pqt_verify_crc_default() : see format.h. */
void pqt_set_verify_crc_default(bool on) {
  g_verify_crc = on;
}
bool pqt_verify_crc_default(void) {
  return g_verify_crc;
}

/* pr_file_new(): see pqt_reader_internal.h. */
pqt_file *pr_file_new(io_source *src, const pqt_open_opts *opts) {
  pqt_file *f = vf_calloc(1, sizeof *f);
  if (!f) return NULL;
  f->src = src;
  f->opts.verify_crc = pqt_verify_crc_default();
  f->opts.max_footer = PQT_DEFAULT_MAX_FOOTER;
  if (opts) {
    f->opts = *opts;
    if (!f->opts.max_footer) f->opts.max_footer = PQT_DEFAULT_MAX_FOOTER;
  }
  f->dict_n = -1;
  VF_BUF_INIT(&f->win, PQT_MAX_PAGE_BUF);
  VF_BUF_INIT(&f->zwin, PQT_MAX_PAGE_BUF);
  VF_BUF_INIT(&f->page, PQT_MAX_PAGE_BUF);
  VF_BUF_INIT(&f->dict, PQT_MAX_PAGE_BUF);
  VF_BUF_INIT(&f->tmp, PQT_MAX_PAGE_BUF);
  return f;
}

/*! pqt_open() : see format.h. */
vf_status pqt_open(io_source *src, const pqt_open_opts *opts, pqt_file **out, vf_error *err) {
  *out = NULL;
  vf_status st = VF_OK;
  uint8_t *tail = NULL, *footer_copy = NULL;
  pqt_file *f = pr_file_new(src, opts);
  if (!f) {
    io_close(src);
    return vf_error_set(err, VF_ENOMEM, "out of memory opening a parquet file");
  }
  const char *name = src->name ? src->name : "(parquet)";
  uint64_t size = src->size;
  if (size < 12) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: file is %" PRIu64
                         " bytes, too small to be parquet (magic + footer length + magic "
                         "need 12)",
                         name, size));
  }
  size_t tail_len = size < PQT_TAIL_READ ? (size_t)size : PQT_TAIL_READ;
  uint64_t tail_off = size - tail_len;
  tail = vf_malloc(tail_len);
  if (!tail) {
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory reading the footer", name));
  }
  VF_TRY(io_read_at(src, tail_off, tail, tail_len, err));
  const uint8_t *trailer = tail + tail_len - 4;
  if (memcmp(trailer, "PARE", 4) == 0) {
    VF_FAIL(vf_error_set(err, VF_EUNSUPPORTED,
                         "%s: encrypted footer (parquet modular encryption) is not supported",
                         name));
  }
  if (memcmp(trailer, "PAR1", 4) != 0) {
    VF_FAIL(vf_error_set(
        err, VF_ECORRUPT,
        "%s: not a parquet file: no \"PAR1\" magic in the last 4 bytes (offset %" PRIu64 ")", name,
        size - 4));
  }
  uint8_t head[4];
  if (tail_off == 0) {
    memcpy(head, tail, 4);
  } else {
    VF_TRY(io_read_at(src, 0, head, 4, err));
  }
  if (memcmp(head, "PAR1", 4) != 0) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: not a parquet file: no \"PAR1\" magic at offset 0", name));
  }
  uint64_t flen = vf_load_u32le(tail + tail_len - 8);
  if (flen > size - 12) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: footer length %" PRIu64 " (read at offset %" PRIu64
                         ") does not fit in a file of %" PRIu64 " bytes",
                         name, flen, size - 8, size));
  }
  if (flen > f->opts.max_footer) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: footer length %" PRIu64 " at offset %" PRIu64
                         " is over the limit of %" PRIu64 " bytes",
                         name, flen, size - 8, f->opts.max_footer));
  }
  uint64_t fstart = size - 8 - flen;
  const uint8_t *fbuf;
  if (flen + 8 <= tail_len) {
    fbuf = tail + (tail_len - 8 - flen);
  } else {
    footer_copy = vf_malloc((size_t)flen);
    if (!footer_copy) {
      VF_FAIL(vf_error_set(err, VF_ENOMEM,
                           "%s: out of memory reading a %" PRIu64 "-byte footer", name, flen));
    }
    VF_TRY(io_read_at(src, fstart, footer_copy, (size_t)flen, err));
    fbuf = footer_copy;
  }
  f->data_end = fstart;
  st = pqt_parse_file_meta(fbuf, (size_t)flen, fstart, &f->meta, err);
  if (st != VF_OK) {
    vf_error_prefix(err, "%s: footer: ", name);
    goto out;
  }
  st = pqt_schema_build(&f->meta, &f->schema, err);
  if (st != VF_OK) {
    vf_error_prefix(err, "%s: schema: ", name);
    goto out;
  }
  /* sanity of the row groups against the schema and the file */
  int64_t rows = 0;
  for (int g = 0; g < f->meta.nrow_groups; g++) {
    const pqt_row_group *rg = &f->meta.row_groups[g];
    if (rg->ncolumns != f->schema.nleaves) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                           "%s: row group %d has %d column chunks but the schema has %d leaf "
                           "columns",
                           name, g, rg->ncolumns, f->schema.nleaves));
    }
    if (rg->num_rows < 0 || rows > INT64_MAX - rg->num_rows) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row group %d has an invalid row count %" PRId64,
                           name, g, rg->num_rows));
    }
    rows += rg->num_rows;
    for (int c = 0; c < rg->ncolumns; c++) {
      const pqt_column_chunk *cc = &rg->columns[c];
      if (!cc->has_meta_data || cc->file_path) continue; /* refused when read */
      const pqt_column_meta *cm = &cc->meta;
      if (rg->num_rows == 0 && cm->total_compressed_size >= 0) continue; /* nothing to read */
      if (cm->data_page_offset < 4 || (uint64_t)cm->data_page_offset >= fstart ||
          cm->total_compressed_size < 0 || cm->num_values < 0) {
        st =
            vf_error_set(err, VF_ECORRUPT,
                         "%s: row group %d, column %s: column chunk at offset %" PRId64 " (%" PRId64
                         " bytes, %" PRId64 " values) is outside the data area [4, %" PRIu64 ")",
                         name, g, pr_leaf_path(f, c), cm->data_page_offset,
                         cm->total_compressed_size,
                         cm->num_values, fstart);
        goto out;
      }
    }
  }
  if (rows != f->meta.num_rows) {
    /* Rows are decoded per row group, so the groups' counts are the truth (repeated_no_annotation
     * says 0 in the footer and holds 6); the total is corrected so callers see one number. */
    vf_log(VF_LOG_WARN,
           "%s: footer num_rows %" PRId64 " differs from the row groups' sum %" PRId64
           "; using the sum",
           name, f->meta.num_rows, rows);
    f->meta.num_rows = rows;
  }
  VF_TRY(pr_slice_row_groups(f, err));
  free(tail);
  free(footer_copy);
  *out = f;
  return VF_OK;
out:
  free(tail);
  free(footer_copy);
  pqt_close(f);
  return st;
}

/*! pqt_close() : free everything, including the io_source.  NULL ok. */
void pqt_close(pqt_file *f) {
  if (!f) return;
  pqt_pf_destroy(f->pf); /* first: its thread reads f->src */
  f->pf = NULL;
  if (f->phys_rgs) {
    for (int g = 0; g < f->meta.nrow_groups; g++)
      free(f->meta.row_groups[g].columns);
    free(f->meta.row_groups);
    f->meta.row_groups = f->phys_rgs;
    f->meta.nrow_groups = f->nphys;
  }
  free(f->v_phys);
  free(f->v_row0);
  if (f->streams) {
    for (int i = 0; i < f->schema.nleaves; i++) {
      vf_buf_free(&f->streams[i].dict);
      free(f->streams[i].dict_off);
      pqt_offset_index_free(&f->streams[i].oi);
      pqt_leaf_data_free(&f->streams[i].pg);
      pqt_buf_put(&f->streams[i].held);
    }
    free(f->streams);
  }
  /* the big scratch goes to the block cache for the next file (pqt_mem.c) */
  pqt_buf_put(&f->win);
  pqt_buf_put(&f->zwin);
  for (int i = 0; i < f->nchunks_cap; i++)
    pqt_buf_put(&f->chunks[i]);
  free(f->chunks);
  pqt_buf_put(&f->page);
  vf_buf_free(&f->dict);
  vf_buf_free(&f->tmp);
  free(f->dict_off);
  pqt_mem_give(f->idx, f->idx_cap * sizeof *f->idx);
  pqt_mem_give(f->lvl, f->lvl_cap);
  free(f->tmp_off);
  pqt_schema_free(&f->schema);
  pqt_file_meta_free(&f->meta);
  io_close(f->src);
  free(f);
}

uint64_t pqt_read_ahead_pages(pqt_file *f) {
  return pqt_pf_served(f->pf);
}
uint64_t pqt_streamed_pages(const pqt_file *f) {
  return f->nstreamed;
}

const char *pqt_name(const pqt_file *f) {
  return f->src->name ? f->src->name : "(parquet)";
}
const pqt_file_meta *pqt_meta(const pqt_file *f) {
  return &f->meta;
}
int pqt_written_row_group(const pqt_file *f, int rg, int64_t *row0, bool *last) {
  if (!f->phys_rgs || rg < 0 || rg >= f->meta.nrow_groups) {
    if (row0) *row0 = 0;
    if (last) *last = true;
    return rg;
  }
  int p = f->v_phys[rg];
  if (row0) *row0 = f->v_row0[rg];
  if (last) *last = rg + 1 >= f->meta.nrow_groups || f->v_phys[rg + 1] != p;
  return p;
}
int pqt_written_row_groups(const pqt_file *f) {
  return f->phys_rgs ? f->nphys : f->meta.nrow_groups;
}
const pqt_schema *pqt_schema_of(const pqt_file *f) {
  return &f->schema;
}
io_source *pqt_source(pqt_file *f) {
  pqt_pf_quiesce(f->pf); /* callers read its counters: no read-ahead in flight meanwhile */
  return f->src;
}

/*! pqt_find_leaf() : see format.h. */
int pqt_find_leaf(const pqt_file *f, const char *dotted_path) {
  for (int i = 0; i < f->schema.nleaves; i++)
    if (f->schema.leaves[i].path && strcmp(f->schema.leaves[i].path, dotted_path) == 0) return i;
  return -1;
}

/*! pqt_find_top() : see format.h. */
int pqt_find_top(const pqt_file *f, const char *name) {
  for (int i = 0; i < f->schema.ntop; i++) {
    const pqt_node *n = &f->schema.nodes[f->schema.top[i]];
    if (n->name && strcmp(n->name, name) == 0) return f->schema.top[i];
  }
  return -1;
}

/* -------------------------------------------------------------- leaf data */

void pqt_leaf_data_init(pqt_leaf_data *d) {
  memset(d, 0, sizeof *d);
  d->leaf = -1;
  VF_BUF_INIT(&d->values, VF_BUF_MAX_BATCH);
}

void pqt_leaf_data_free(pqt_leaf_data *d) {
  if (!d) return;
  /* big arrays go to the block cache (pqt_mem.c), small ones are freed */
  pqt_mem_give(d->def, d->def ? (size_t)d->def_cap : 0);
  pqt_mem_give(d->rep, d->rep ? (size_t)d->rep_cap : 0);
  pqt_mem_give(d->offsets, d->offsets ? (size_t)d->off_cap * sizeof *d->offsets : 0);
  pqt_buf_put(&d->values);
  pqt_leaf_data_init(d);
}

/* ------------------------------------------------------------- page index */

/*! pqt_read_page_index() : see format.h. */
vf_status pqt_read_page_index(pqt_file *f, int rg, int leaf, pqt_offset_index *oi,
                              pqt_column_index *ci, vf_error *err) {
  const char *name = pqt_name(f);
  memset(oi, 0, sizeof *oi);
  if (ci) memset(ci, 0, sizeof *ci);
  if (rg < 0 || rg >= f->meta.nrow_groups || leaf < 0 || leaf >= f->meta.row_groups[rg].ncolumns)
    return vf_error_set(err, VF_EUSAGE, "%s: no row group %d / column %d", name, rg, leaf);
  if (f->phys_rgs) rg = f->v_phys[rg]; /* a slice: its row group's index (physical rows) */
  const pqt_row_group *rgp = f->phys_rgs ? &f->phys_rgs[rg] : &f->meta.row_groups[rg];
  const pqt_column_chunk *cc = &rgp->columns[leaf];
  if (cc->offset_index_offset < 0 || cc->offset_index_length <= 0)
    return vf_error_set(err, VF_ENOTFOUND, "%s: row group %d, column %s has no page index", name,
                        rg, pr_leaf_path(f, leaf));
  uint64_t limit = f->src->size - 8;
  struct {
    int64_t off;
    int32_t len;
  } parts[2] = {{cc->offset_index_offset, cc->offset_index_length},
                {ci ? cc->column_index_offset : -1, ci ? cc->column_index_length : 0}};
  vf_status st = VF_OK;
  for (int k = 0; k < 2; k++) {
    if (parts[k].off < 0 || parts[k].len <= 0) continue;
    if ((uint64_t)parts[k].off < 4 || parts[k].len > PQT_MAX_INDEX_BYTES ||
        (uint64_t)parts[k].off > limit || (uint64_t)parts[k].len > limit - (uint64_t)parts[k].off) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                           "%s: row group %d, column %s: %s index at offset %" PRId64
                           " (%d bytes) is outside the file "
                           "(%" PRIu64 " bytes)",
                           name, rg, pr_leaf_path(f, leaf), k ? "column" : "offset", parts[k].off,
                           parts[k].len, f->src->size));
    }
    uint8_t *buf = vf_malloc((size_t)parts[k].len);
    if (!buf) {
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", name));
    }
    st = pqt_pf_read_at(f->pf, f->src, (uint64_t)parts[k].off, buf, (size_t)parts[k].len, err);
    if (st != VF_OK) {
      free(buf);
    } else {
      st = k == 0
               ? pqt_parse_offset_index(buf, (size_t)parts[k].len, (uint64_t)parts[k].off, oi, err)
               : pqt_parse_column_index(buf, (size_t)parts[k].len, (uint64_t)parts[k].off, ci, err);
      free(buf);
    }
    if (st != VF_OK) {
      vf_error_prefix(err, "%s: row group %d, column %s: %s index: ", name, rg,
                      pr_leaf_path(f, leaf), k ? "column" : "offset");
      goto out;
    }
  }
  /* page locations must lie inside the data area */
  for (int p = 0; p < oi->npages; p++) {
    const pqt_page_location *pl = &oi->pages[p];
    if (pl->offset < 4 || (uint64_t)pl->offset >= f->data_end || pl->compressed_page_size < 0 ||
        (uint64_t)pl->compressed_page_size > f->data_end - (uint64_t)pl->offset ||
        pl->first_row_index < 0) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                           "%s: row group %d, column %s: offset index page %d at offset %" PRId64
                           " (%d bytes) is "
                           "outside the data area",
                           name, rg, pr_leaf_path(f, leaf), p, pl->offset,
                           pl->compressed_page_size));
    }
  }
  return VF_OK;
out:
  pqt_offset_index_free(oi);
  if (ci) pqt_column_index_free(ci);
  return st;
}
