/*
 * Private pieces of the parquet reader/writer shared between src/format/ files:
 * the thrift compact protocol, page headers, value/level decoders and codecs.
 */
#ifndef VFORGE_PQT_INTERNAL_H
#define VFORGE_PQT_INTERNAL_H

#include "vforge/format.h"

/* ------------------------------------------------- thrift compact protocol (pqt_thrift.c) */

/* Compact-protocol type ids (thrift/doc/specs/thrift-compact-protocol.md). */
enum {
  TC_STOP = 0, TC_TRUE = 1, TC_FALSE = 2, TC_BYTE = 3, TC_I16 = 4, TC_I32 = 5, TC_I64 = 6,
  TC_DOUBLE = 7, TC_BINARY = 8, TC_LIST = 9, TC_SET = 10, TC_MAP = 11, TC_STRUCT = 12,
  TC_UUID = 13
};

#define TC_MAX_DEPTH 64

typedef struct tc_reader {
  vf_cursor cur;
  int depth;
  int16_t last_fid[TC_MAX_DEPTH];
  bool bool_pending; /* compact protocol stores a struct field's bool in its header */
  bool bool_value;
  vf_error *err;
} tc_reader;

void tc_init(tc_reader *r, const uint8_t *buf, size_t len, uint64_t base_offset, vf_error *err);
/* Each returns VF_OK or VF_ECORRUPT (message names the offset).  Field iteration:
 *   tc_struct_begin(r); while (tc_field(r, &type, &fid) == VF_OK && type != TC_STOP) {...}
 *   tc_struct_end(r);  Unknown fields are skipped with tc_skip(r, type). */
vf_status tc_struct_begin(tc_reader *r);
vf_status tc_struct_end(tc_reader *r);
vf_status tc_field(tc_reader *r, int *type, int16_t *fid);
vf_status tc_bool(tc_reader *r, bool *v);
vf_status tc_i8(tc_reader *r, int8_t *v);
vf_status tc_i16(tc_reader *r, int16_t *v);
vf_status tc_i32(tc_reader *r, int32_t *v);
vf_status tc_i64(tc_reader *r, int64_t *v);
vf_status tc_double(tc_reader *r, double *v);
/* binary/string: a view into the buffer (length checked against the remaining bytes) */
vf_status tc_binary(tc_reader *r, const uint8_t **p, uint32_t *len);
/* list/set header: element type and count (count checked: count <= remaining bytes) */
vf_status tc_list_begin(tc_reader *r, int *elem_type, uint32_t *count);
vf_status tc_skip(tc_reader *r, int type);

/* thrift compact writer (pqt_thrift_write.c), appending to a vf_buf */
typedef struct tc_writer {
  vf_buf *out;
  int depth;
  int16_t last_fid[TC_MAX_DEPTH];
  vf_status st; /* first error; later calls are no-ops */
  vf_error *err;
} tc_writer;

void tcw_init(tc_writer *w, vf_buf *out, vf_error *err);
void tcw_struct_begin(tc_writer *w);
void tcw_struct_end(tc_writer *w); /* writes STOP */
void tcw_field_i16(tc_writer *w, int16_t fid, int16_t v); /* e.g. RowGroup.ordinal */
void tcw_field_i32(tc_writer *w, int16_t fid, int32_t v);
void tcw_field_i64(tc_writer *w, int16_t fid, int64_t v);
void tcw_field_bool(tc_writer *w, int16_t fid, bool v);
void tcw_field_binary(tc_writer *w, int16_t fid, const void *p, size_t n);
void tcw_field_struct_begin(tc_writer *w, int16_t fid); /* then fields, then tcw_struct_end */
void tcw_field_list_begin(tc_writer *w, int16_t fid, int elem_type, uint32_t count);
void tcw_list_i32(tc_writer *w, int32_t v);   /* list elements */
void tcw_list_i64(tc_writer *w, int64_t v);
void tcw_list_binary(tc_writer *w, const void *p, size_t n);
void tcw_list_struct_begin(tc_writer *w);     /* then fields, then tcw_struct_end */

/* --------------------------------------------------------- page header (pqt_meta.c) */

typedef struct pqt_page_header {
  int type; /* pqt_page_type */
  int32_t uncompressed_size;
  int32_t compressed_size;
  bool has_crc;
  uint32_t crc;
  /* DATA_PAGE (v1) */
  int32_t num_values;
  int encoding, def_encoding, rep_encoding;
  /* DATA_PAGE_V2 (num_values and encoding above are shared) */
  int32_t num_nulls, num_rows;
  int32_t def_levels_byte_length, rep_levels_byte_length;
  bool is_compressed; /* default true */
  /* DICTIONARY_PAGE */
  int32_t dict_num_values;
  int dict_encoding;
  bool has_data_header, has_data_header_v2, has_dict_header;
} pqt_page_header;

/*! pqt_parse_page_header() : decode one PageHeader at the cursor and advance past it.
 *  Sizes are checked to be >= 0. */
vf_status pqt_parse_page_header(vf_cursor *c, pqt_page_header *out, vf_error *err);

/* --------------------------------------------------- levels and values (pqt_encoding.c) */

/* RLE/bit-packed hybrid (parquet-format Encodings.md "RLE").  Decodes exactly n values of
 * `bit_width` bits (u8: 0..8, u32: 0..32) from p[0..len).  Levels are checked to be <= max
 * (the error names the value); dictionary indices are checked by the caller. */
vf_status pqt_rle_decode_u8(const uint8_t *p, size_t len, int bit_width, uint8_t max, uint8_t *out,
                            size_t n, vf_error *err);
vf_status pqt_rle_decode_u32(const uint8_t *p, size_t len, int bit_width, uint32_t *out, size_t n,
                             vf_error *err);
/* levels are checked to be in [0, max]; dictionary indices are checked by the caller */

/* RLE/bit-packed encoder (writer): appends the hybrid encoding of n values (no length prefix). */
vf_status pqt_rle_encode_u8(const uint8_t *vals, size_t n, int bit_width, vf_buf *out, vf_error *err);

/* PLAIN BOOLEAN: bit-packed LSB first */
vf_status pqt_plain_bool_decode(const uint8_t *p, size_t len, uint8_t *out, size_t n,
                                size_t *consumed, vf_error *err);
/* PLAIN BYTE_ARRAY: 4-byte little-endian length + bytes, n values appended to `data`;
 * offsets[0..n] are absolute positions in `data` (offsets[0] == data->len at entry). */
vf_status pqt_plain_ba_decode(const uint8_t *p, size_t len, size_t n, vf_buf *data,
                              int64_t *offsets, size_t *consumed, vf_error *err);

/* DELTA_BINARY_PACKED: n values (int32 if width == 4, int64 if width == 8); *consumed = bytes used */
vf_status pqt_delta_bp_decode(const uint8_t *p, size_t len, int width, void *out, size_t n,
                              size_t *consumed, vf_error *err);
/* DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY: n values appended as for pqt_plain_ba_decode */
vf_status pqt_delta_length_ba_decode(const uint8_t *p, size_t len, size_t n, vf_buf *data,
                                     int64_t *offsets, size_t *consumed, vf_error *err);
vf_status pqt_delta_ba_decode(const uint8_t *p, size_t len, size_t n, vf_buf *data,
                              int64_t *offsets, size_t *consumed, vf_error *err);
/* BYTE_STREAM_SPLIT: n values of `width` bytes (any width >= 1: FLOAT, DOUBLE, INT32, INT64,
 * FLBA); needs len >= n*width */
vf_status pqt_bss_decode(const uint8_t *p, size_t len, int width, uint8_t *out, size_t n,
                         vf_error *err);

/* --------------------------------------------------------------- codecs (pqt_codec.c) */

/*! pqt_decompress() : decompress `src` into exactly `dst_len` bytes.  GZIP: multi-member;
 *  ZSTD: multi-frame; LZ4: Hadoop framing ([u32be total][u32be compressed][block]...) with a
 *  raw-block fallback; LZ4_RAW: one raw block; SNAPPY raw; BROTLI.  A result of a different
 *  size is VF_ECORRUPT; LZO is VF_EUNSUPPORTED. */
vf_status pqt_decompress(int codec, const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                         vf_error *err);
/*! pqt_compress() : compress into `out` (appended) with ZSTD (level), SNAPPY, GZIP or
 *  UNCOMPRESSED (copy). */
vf_status pqt_compress(int codec, int level, const uint8_t *src, size_t src_len, vf_buf *out,
                       vf_error *err);

/* reads n bytes at position pos of a compressed stream into dst */
typedef vf_status (*pqt_chunk_fn)(void *arg, uint64_t pos, uint8_t *dst, size_t n, vf_error *err);
/*! pqt_zstd_stream() : pqt_decompress(PQT_ZSTD, ...) of src_len bytes fed by rd in chunks of at
 *  most win_cap bytes (< 4 GiB) through win, so a 100 MB page needs no 100 MB input buffer;
 *  the first head_len bytes (head_len <= src_len; 0: none) are read from `head` in place, no
 *  copy.  *crc (optional): CRC-32 of the compressed bytes.  Exactly dst_len bytes or
 *  VF_ECORRUPT. */
vf_status pqt_zstd_stream(pqt_chunk_fn rd, void *arg, size_t src_len, const uint8_t *head,
                          size_t head_len, uint8_t *win, size_t win_cap, uint8_t *dst,
                          size_t dst_len, uint32_t *crc, vf_error *err);

/*! pqt_codec_max_ratio() : the largest uncompressed/compressed ratio `codec` can produce (deflate
 *  1032, snappy 22, LZ4 255, zstd 32768 with slack), 0 when unbounded (BROTLI, UNCOMPRESSED,
 *  unknown): a page declaring more is a decompression bomb or corrupt. */
uint64_t pqt_codec_max_ratio(int codec);

/* Ceiling of the reader's page-sized scratch (scripts/check-buflimits.sh; curl's dynbuf
 * `toobig`): one page as stored or decompressed (thrift sizes are i32: < 2 GiB, its header
 * < PQT_MAX_HEADER, 16 MiB), the dictionary or byte arrays decoded from one page, and a streamed read
 * window (a slice's share of one column chunk).  Buffers swapped with each other (pqt_file's page
 * and window, a leaf's held page and dictionary) share it.  Column chunks read whole and a leaf's
 * decoded values are one row group's (or slice's) bytes: VF_BUF_MAX_BATCH. */
#define PQT_MAX_PAGE_BUF ((size_t)16 << 30)

/* ------------------------------------------- scratch block cache (pqt_mem.c) */

/* Blocks of at least this many bytes released by a pqt_file are kept for the next one. */
#define PQT_MEM_MIN ((size_t)1 << 20)
/*! pqt_mem_take() : a cached block of at least `need` bytes (its size in *cap), or NULL. */
void *pqt_mem_take(size_t need, size_t *cap);
/*! pqt_mem_give() : keep block p of `cap` bytes for a later take (bounded), or free it. */
void pqt_mem_give(void *p, size_t cap);
/*! pqt_buf_grow() : vf_buf_reserve(), adopting a cached block when b must grow past its cap. */
vf_status pqt_buf_grow(vf_buf *b, size_t extra, vf_error *err);
/*! pqt_buf_put() : give b's block to the cache and leave b empty (its limit kept). */
void pqt_buf_put(vf_buf *b);
/*! pqt_mem_grow() : a cached block of >= need bytes holding p's first old_cap bytes (p given to
 *  the cache), or NULL (p untouched) when none fits. */
void *pqt_mem_grow(void *p, size_t old_cap, size_t need, size_t *cap);

/* ------------------------------------------------ page read-ahead (pqt_prefetch.c) */

#define PQT_PF_MAX_THREADS 4
#define PQT_PF_MAX_SLOTS (PQT_PF_MAX_THREADS + 1)

/* One page read (and decompressed) ahead of the consumer. */
typedef struct pqt_pf_page {
  uint64_t at;         /* file offset of its header */
  uint64_t end;        /* and of the byte after the page */
  pqt_page_header h;
  size_t hlen;
  vf_buf raw;          /* header + page bytes as stored */
  bool ok;             /* read and parsed (else the consumer reads the page itself) */
  bool crc_checked;    /* its CRC was verified here */
  bool streamed;       /* raw holds the header only: decompressed from a bounded window, so
                        * in[] is a position, never read (have_out is then true) */
  bool have_out;       /* in[0..inlen) decompressed into out (ulen bytes) */
  const uint8_t *in;
  size_t inlen;
  int64_t ulen;
  vf_buf out;
  int leaf, idx;
} pqt_pf_page;

typedef struct pqt_pf pqt_pf;

/*! pqt_pf_create() : start `nthreads` (1..PQT_PF_MAX_THREADS) read-ahead threads for `nleaves`
 *  leaves of src (not owned); each leaf gets nthreads + 1 page slots. */
vf_status pqt_pf_create(io_source *src, int nleaves, int nthreads, bool verify_crc, pqt_pf **out,
                        vf_error *err);
/*! pqt_pf_destroy() : stop and join the thread, free the slots (to the block cache).  NULL ok. */
void pqt_pf_destroy(pqt_pf *pf);
/*! pqt_pf_get() : the page whose header is at `at` in the chunk ending at `end`, read ahead
 *  (blocks while it is being read; repositions the leaf's ring when it is elsewhere); NULL when
 *  the ring could not read it (the caller reads it itself).  Hand it back with pqt_pf_release. */
pqt_pf_page *pqt_pf_get(pqt_pf *pf, int leaf, uint64_t at, uint64_t end, int codec);
void pqt_pf_release(pqt_pf *pf, pqt_pf_page *pg);
/*! pqt_pf_quiesce() : stop reading ahead and wait for reads in flight (the source's counters are
 *  then stable); the next pqt_pf_get() starts again.  NULL ok. */
void pqt_pf_quiesce(pqt_pf *pf);
/*! pqt_pf_served() : pages pqt_pf_get() handed over so far (0 for NULL). */
uint64_t pqt_pf_served(pqt_pf *pf);
/*! pqt_read_ahead_pages() : pages of this file decoded from the read-ahead ring (tests). */
uint64_t pqt_read_ahead_pages(pqt_file *f);
/*! pqt_streamed_pages() : pages the decoder decompressed through a bounded window (tests). */
uint64_t pqt_streamed_pages(const pqt_file *f);
/*! pqt_pf_read_at() / pqt_pf_read_ranges() : io_read_at / io_read_ranges serialised with the
 *  read-ahead thread's reads (pf NULL: plain). */
vf_status pqt_pf_read_at(pqt_pf *pf, io_source *src, uint64_t off, void *dst, size_t n,
                         vf_error *err);
vf_status pqt_pf_read_ranges(pqt_pf *pf, io_source *src, io_range *ranges, size_t n,
                             uint64_t max_gap, vf_error *err);

/* CRC-32 (IEEE, as zlib's crc32) used for page checksums */
uint32_t pqt_crc32(const uint8_t *p, size_t n);

/* pqt_half_to_float() is declared in vforge/format.h (implemented in pqt_encoding.c) */

/* ------------------------------------------------ value text shared by rows and variants */

/* JSON strings in the `cat` spelling (DuckDB's): "YYYY-MM-DD", "YYYY-MM-DD HH:MM:SS[.f]" (+ "+00"
 * when adjusted to UTC), "HH:MM:SS[.f]" (fraction trailing zeros trimmed), canonical UUIDs;
 * decimals as exact JSON numbers (big-endian two's complement, `scale` fraction digits).
 * pqt_rows.c. */
vf_status pqt_json_date(vf_buf *out, int64_t days, vf_error *err);
vf_status pqt_json_timestamp(vf_buf *out, int64_t v, pqt_time_unit unit, bool utc, vf_error *err);
/*! pqt_json_time() : @return : VF_ECORRUPT (message without context) for a value outside
 *  00:00:00..24:00:00 — a negative or too long time of day is refused, as DuckDB refuses it. */
vf_status pqt_json_time(vf_buf *out, int64_t v, pqt_time_unit unit, vf_error *err);
vf_status pqt_json_uuid(vf_buf *out, const uint8_t p[16], vf_error *err);
vf_status pqt_json_decimal(vf_buf *out, const uint8_t *p, size_t len, int32_t scale,
                           vf_error *err);

/* --------------------------------------------------------------- variant (pqt_variant.c) */

/* The metadata of a Variant value (parquet-format VariantEncoding.md "Metadata encoding"): the
 * field-name dictionary.  A view into the caller's bytes. */
typedef struct pqt_variant_meta {
  const uint8_t *offsets; /* nkeys + 1 offsets of `offset_size` bytes */
  const uint8_t *bytes;   /* the strings */
  size_t bytes_len;
  uint32_t nkeys;
  unsigned offset_size;
} pqt_variant_meta;

/*! pqt_variant_meta_parse() : check the header (version 1) and that the offset table fits.
 *  @return : VF_ECORRUPT / VF_EUNSUPPORTED (another version) with a message naming the byte. */
vf_status pqt_variant_meta_parse(const uint8_t *p, size_t len, pqt_variant_meta *m,
                                 vf_error *err);
/*! pqt_variant_key() : dictionary string `id` (bounds checked). */
vf_status pqt_variant_key(const pqt_variant_meta *m, uint32_t id, const uint8_t **s, size_t *n,
                          vf_error *err);

/*! pqt_variant_to_json() : render the Variant value v[0..len) as JSON: object keys in name order
 *  (as the spec stores them; others are reordered), strings as strings, binary as base64,
 *  numbers exact (decimals with their scale, floats 9 / doubles 17 digits), dates and times as
 *  `cat` prints them, NaN/inf as strings.
 *  Nesting is capped (PQT_VARIANT_MAX_DEPTH) and so is the output (a few small values referenced
 *  many times must not turn into gigabytes).
 *  @return : VF_ECORRUPT naming the byte offset inside the value; VF_EUNSUPPORTED for a primitive
 *            type this reader does not know (its size is unknown, so it cannot be skipped). */
vf_status pqt_variant_to_json(const pqt_variant_meta *m, const uint8_t *v, size_t len, vf_buf *out,
                              vf_error *err);

/* The fields of an object value, for merging with shredded fields. */
typedef struct pqt_variant_object {
  const pqt_variant_meta *m;
  const uint8_t *v; /* the whole value */
  size_t len;
  uint32_t n;                      /* fields */
  const uint8_t *ids, *offs;       /* field ids, field offsets */
  unsigned id_size, off_size;
  size_t fields;                   /* offset of the first field value in v */
  size_t fields_len;               /* bytes of the field values */
} pqt_variant_object;

/*! pqt_variant_object_open() : `v` must be an object value (else VF_ECORRUPT "not an object"). */
vf_status pqt_variant_object_open(const pqt_variant_meta *m, const uint8_t *v, size_t len,
                                  pqt_variant_object *o, vf_error *err);
/*! pqt_variant_object_field() : field i: its name and its value (which extends at most to *vlen
 *  bytes; values are self-delimiting). */
vf_status pqt_variant_object_field(const pqt_variant_object *o, uint32_t i, const uint8_t **key,
                                   size_t *klen, const uint8_t **val, size_t *vlen, vf_error *err);

#endif
