/*
 * Tests for src/format/pqt_encoding.c: hand-built vectors from parquet-format Encodings.md,
 * randomized round trips against small test-only encoders written here from the spec text,
 * and malformed inputs that must fail cleanly with a message saying what was expected.
 */
#include <float.h>
#include <limits.h>
#include <stdlib.h>

#include "format/pqt_internal.h"
#include "vf_test.h"

/* ------------------------------------------------------------ test helpers */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}
static size_t rnd_below(size_t n) {
  return n ? (size_t)(rnd() % n) : 0;
}

static bool contains(const char *hay, const char *needle) {
  return strstr(hay, needle) != NULL;
}

static void put_uvarint(vf_buf *b, uint64_t v) {
  while (v >= 0x80) {
    uint8_t c = (uint8_t)(v | 0x80);
    vf_buf_append(b, &c, 1, NULL);
    v >>= 7;
  }
  uint8_t c = (uint8_t)v;
  vf_buf_append(b, &c, 1, NULL);
}
static void put_zvarint(vf_buf *b, int64_t v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  put_uvarint(b, (u << 1) ^ (0 - (u >> 63)));
}
static void put_byte(vf_buf *b, uint8_t c) {
  vf_buf_append(b, &c, 1, NULL);
}

/* LSB-first bit packing (Encodings.md RLE note 1) of count values of width w, padded with
 * `pad` extra zero values. */
static void put_bitpacked(vf_buf *b, const uint64_t *v, size_t count, size_t pad, unsigned w) {
  const size_t total = count + pad, nbytes = (total * w + 7) / 8;
  size_t at = b->len;
  vf_buf_reserve(b, nbytes, NULL);
  memset(b->data + at, 0, nbytes);
  for (size_t i = 0; i < count; i++)
    for (unsigned k = 0; k < w; k++)
      if ((v[i] >> k) & 1) {
        size_t bit = i * w + k;
        b->data[at + bit / 8] |= (uint8_t)(1u << (bit % 8));
      }
  b->len += nbytes;
}

/* Test-only RLE/bit-packed hybrid encoder with randomly chosen run boundaries, so a stream
 * mixes RLE runs of every length with bit-packed runs of 1..k groups. */
static void t_rle_encode(const uint32_t *vals, size_t n, unsigned w, vf_buf *b) {
  size_t i = 0;
  uint64_t tmp[8 * 64];
  while (i < n) {
    size_t same = 1;
    while (i + same < n && vals[i + same] == vals[i])
      same++;
    if (same >= 8 || rnd_below(4) == 0) {
      size_t len = 1 + rnd_below(same);
      put_uvarint(b, (uint64_t)len << 1);
      for (unsigned k = 0; k < (w + 7) / 8; k++)
        put_byte(b, (uint8_t)(vals[i] >> (8 * k)));
      i += len;
    } else {
      size_t groups = 1 + rnd_below(8);
      size_t cnt = groups * 8 < n - i ? groups * 8 : n - i;
      groups = (cnt + 7) / 8;
      for (size_t k = 0; k < cnt; k++)
        tmp[k] = vals[i + k];
      put_uvarint(b, ((uint64_t)groups << 1) | 1);
      put_bitpacked(b, tmp, cnt, groups * 8 - cnt, w);
      i += cnt;
    }
  }
}

/* Test-only DELTA_BINARY_PACKED encoder.  narrow: INT32 (deltas wrap at 32 bits).  Unused
 * miniblock widths in the last block get garbage (readers must accept arbitrary values). */
static void t_delta_encode(const int64_t *v, size_t n, bool narrow, unsigned block, unsigned mbs,
                           vf_buf *b) {
  const unsigned mbv = block / mbs;
  put_uvarint(b, block);
  put_uvarint(b, mbs);
  put_uvarint(b, n);
  put_zvarint(b, n ? v[0] : 0);
  uint64_t *d = calloc(block, sizeof *d);
  size_t i = 1;
  while (i < n) {
    size_t cnt = n - i < block ? n - i : block;
    int64_t mind = INT64_MAX;
    for (size_t k = 0; k < cnt; k++) {
      uint64_t a = (uint64_t)v[i + k], p = (uint64_t)v[i + k - 1];
      int64_t delta;
      if (narrow)
        delta = (int64_t)(int32_t)(uint32_t)(a - p);
      else
        memcpy(&delta, &(uint64_t){a - p}, 8);
      d[k] = (uint64_t)delta;
      if (delta < mind) mind = delta;
    }
    put_zvarint(b, mind);
    for (size_t k = 0; k < cnt; k++) {
      d[k] -= (uint64_t)mind;
      if (narrow) d[k] &= 0xffffffffu;
    }
    size_t wat = b->len;
    for (unsigned m = 0; m < mbs; m++)
      put_byte(b, (uint8_t)(0xA0 + m)); /* garbage if unused */
    for (unsigned m = 0; m < mbs && (size_t)m * mbv < cnt; m++) {
      size_t c = cnt - (size_t)m * mbv < mbv ? cnt - (size_t)m * mbv : mbv;
      unsigned w = 0;
      for (size_t k = 0; k < c; k++)
        while (w < 64 && (d[m * mbv + k] >> w) != 0)
          w++;
      b->data[wat + m] = (uint8_t)w;
      put_bitpacked(b, d + (size_t)m * mbv, c, mbv - c, w);
    }
    i += cnt;
  }
  free(d);
}

static void t_dlba_encode(const char **s, size_t n, vf_buf *b) {
  int64_t *lens = calloc(n + 1, sizeof *lens);
  for (size_t i = 0; i < n; i++)
    lens[i] = (int64_t)strlen(s[i]);
  t_delta_encode(lens, n, true, 128, 4, b);
  for (size_t i = 0; i < n; i++)
    vf_buf_append(b, s[i], strlen(s[i]), NULL);
  free(lens);
}

static void t_dba_encode(const char **s, size_t n, vf_buf *b) {
  int64_t *pre = calloc(n + 1, sizeof *pre);
  const char **sfx = calloc(n + 1, sizeof *sfx);
  for (size_t i = 0; i < n; i++) {
    size_t p = 0;
    if (i)
      while (s[i][p] && s[i - 1][p] == s[i][p])
        p++;
    pre[i] = (int64_t)p;
    sfx[i] = s[i] + p;
  }
  t_delta_encode(pre, n, true, 128, 4, b);
  t_dlba_encode(sfx, n, b);
  free(pre);
  free(sfx);
}

/* ------------------------------------------------------------------- RLE */

VF_TEST(rle_spec_bitpacked_example) {
  /* Encodings.md: 0..7 with bit width 3 packs to 10001000 11000110 11111010 */
  const uint8_t s[] = {0x03, 0x88, 0xC6, 0xFA};
  uint8_t o8[8];
  uint32_t o32[8];
  vf_error err = {0};
  CHECK_OK(pqt_rle_decode_u8(s, sizeof s, 3, 7, o8, 8, &err));
  CHECK_OK(pqt_rle_decode_u32(s, sizeof s, 3, o32, 8, &err));
  for (int i = 0; i < 8; i++) {
    CHECK_EQ_INT(o8[i], i);
    CHECK_EQ_INT(o32[i], i);
  }
}

VF_TEST(rle_runs_mixed) {
  /* RLE run of 10 x 5, bit-packed group 0..7, RLE run of 300 x 2 (varint header 600) */
  const uint8_t s[] = {20, 5, 0x03, 0x88, 0xC6, 0xFA, 0xD8, 0x04, 2};
  uint8_t o[318];
  vf_error err = {0};
  CHECK_OK(pqt_rle_decode_u8(s, sizeof s, 3, 7, o, 318, &err));
  for (int i = 0; i < 10; i++)
    CHECK_EQ_INT(o[i], 5);
  for (int i = 0; i < 8; i++)
    CHECK_EQ_INT(o[10 + i], i);
  for (int i = 18; i < 318; i++)
    CHECK_EQ_INT(o[i], 2);
  /* a run may cover more values than requested */
  CHECK_OK(pqt_rle_decode_u8(s, sizeof s, 3, 7, o, 5, &err));
  CHECK_EQ_INT(o[4], 5);
}

VF_TEST(rle_u32_wide_values) {
  /* bit width 32: RLE value in 4 bytes; bit width 20: value in 3 bytes */
  const uint8_t s32[] = {6, 0x78, 0x56, 0x34, 0x12};
  uint32_t o[3];
  vf_error err = {0};
  CHECK_OK(pqt_rle_decode_u32(s32, sizeof s32, 32, o, 3, &err));
  CHECK_EQ_INT(o[2], 0x12345678);
  const uint8_t s20[] = {4, 0x45, 0x23, 0x01};
  CHECK_OK(pqt_rle_decode_u32(s20, sizeof s20, 20, o, 2, &err));
  CHECK_EQ_INT(o[1], 0x12345);
  /* a value wider than the bit width is corrupt */
  const uint8_t bad[] = {4, 0x45, 0x23, 0x11};
  CHECK_STATUS(pqt_rle_decode_u32(bad, sizeof bad, 20, o, 2, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "wider than bit width 20"));
}

VF_TEST(rle_roundtrip_u32_all_widths) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err = {0};
  for (unsigned w = 0; w <= 32; w++) {
    for (int iter = 0; iter < 40; iter++) {
      size_t n = rnd_below(iter < 20 ? 40 : 3000);
      uint32_t *v = calloc(n + 1, sizeof *v), *o = calloc(n + 1, sizeof *o);
      uint64_t lim = w == 32 ? 0xffffffffu : (1u << w) - 1;
      for (size_t i = 0; i < n; i++) {
        /* runs of repeated values so RLE runs appear */
        if (i && rnd_below(3))
          v[i] = v[i - 1];
        else
          v[i] = (uint32_t)(rnd() & lim);
      }
      vf_buf_reset(&b);
      t_rle_encode(v, n, w, &b);
      vf_status st = pqt_rle_decode_u32(b.data, b.len, (int)w, o, n, &err);
      CHECK_OK(st);
      if (st == VF_OK && memcmp(v, o, n * sizeof *v) != 0) {
        vf_test_fail(__FILE__, __LINE__, "u32 mismatch at width %u, n %zu", w, n);
        free(v);
        free(o);
        break;
      }
      /* every truncation either decodes fewer bytes' worth of values or fails cleanly */
      if (n && b.len) {
        size_t cut = rnd_below(b.len);
        vf_status st2 = pqt_rle_decode_u32(b.data, cut, (int)w, o, n, &err);
        if (st2 != VF_OK) CHECK_EQ_INT(st2, VF_ECORRUPT);
      }
      free(v);
      free(o);
    }
  }
  vf_buf_free(&b);
}

VF_TEST(rle_roundtrip_u8_all_widths) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err = {0};
  for (unsigned w = 0; w <= 8; w++) {
    for (int iter = 0; iter < 60; iter++) {
      size_t n = rnd_below(iter < 30 ? 70 : 5000);
      uint32_t *v = calloc(n + 1, sizeof *v);
      uint8_t *o = calloc(n + 1, 1);
      uint32_t max = (1u << w) - 1;
      for (size_t i = 0; i < n; i++)
        v[i] = i && rnd_below(2) ? v[i - 1] : (uint32_t)(rnd() & max);
      vf_buf_reset(&b);
      t_rle_encode(v, n, w, &b);
      vf_status st = pqt_rle_decode_u8(b.data, b.len, (int)w, (uint8_t)max, o, n, &err);
      CHECK_OK(st);
      size_t bad = n;
      for (size_t i = 0; i < n && bad == n; i++)
        if (o[i] != v[i]) bad = i;
      if (st == VF_OK && bad != n)
        vf_test_fail(__FILE__, __LINE__, "u8 mismatch at width %u, n %zu, index %zu", w, n, bad);
      free(v);
      free(o);
    }
  }
  vf_buf_free(&b);
}

VF_TEST(rle_levels_above_max) {
  vf_error err = {0};
  uint8_t o[16];
  /* RLE run of 4 x 3 with max 2 */
  const uint8_t rle[] = {8, 3};
  CHECK_STATUS(pqt_rle_decode_u8(rle, sizeof rle, 2, 2, o, 4, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "value 3"));
  CHECK(contains(err.msg, "maximum level 2"));
  /* bit-packed 0..7 (width 3) with max 5: the first bad value is 6 at index 6 */
  const uint8_t bp[] = {0x03, 0x88, 0xC6, 0xFA};
  CHECK_STATUS(pqt_rle_decode_u8(bp, sizeof bp, 3, 5, o, 8, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "value 6 at index 6"));
  /* ... but values past n are not levels and are not checked */
  CHECK_OK(pqt_rle_decode_u8(bp, sizeof bp, 3, 5, o, 6, &err));
}

VF_TEST(rle_zero_count_and_truncation) {
  vf_error err = {0};
  uint8_t o[16];
  const uint8_t zero_rle[] = {0x00, 1};
  CHECK_STATUS(pqt_rle_decode_u8(zero_rle, sizeof zero_rle, 1, 1, o, 4, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "length 0"));
  const uint8_t zero_bp[] = {0x01, 0xff};
  CHECK_STATUS(pqt_rle_decode_u8(zero_bp, sizeof zero_bp, 1, 1, o, 4, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "0 groups"));
  /* stream ends after 4 of 10 values */
  const uint8_t short_s[] = {8, 1};
  CHECK_STATUS(pqt_rle_decode_u8(short_s, sizeof short_s, 1, 1, o, 10, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "after 4 of 10 values"));
  CHECK(contains(err.msg, "expected a run header"));
  /* RLE value byte missing */
  const uint8_t no_val[] = {8};
  CHECK_STATUS(pqt_rle_decode_u8(no_val, sizeof no_val, 1, 1, o, 4, &err), VF_ECORRUPT);
  /* a varint header that never ends */
  const uint8_t endless[] = {0x80, 0x80, 0x80};
  CHECK_STATUS(pqt_rle_decode_u8(endless, sizeof endless, 1, 1, o, 4, &err), VF_ECORRUPT);
  /* run longer than 2^31 - 1 (spec note 3) */
  const uint8_t huge[] = {0x80, 0x80, 0x80, 0x80, 0x10, 1};
  CHECK_STATUS(pqt_rle_decode_u8(huge, sizeof huge, 1, 1, o, 4, &err), VF_ECORRUPT);
  /* bit width out of range */
  CHECK_STATUS(pqt_rle_decode_u8(short_s, sizeof short_s, 9, 1, o, 4, &err), VF_ECORRUPT);
  uint32_t o32[4];
  CHECK_STATUS(pqt_rle_decode_u32(short_s, sizeof short_s, 33, o32, 4, &err), VF_ECORRUPT);
  CHECK_STATUS(pqt_rle_decode_u32(short_s, sizeof short_s, -1, o32, 4, &err), VF_ECORRUPT);
}

VF_TEST(rle_truncated_last_group_lenient_only_past_n) {
  vf_error err = {0};
  uint8_t o[16];
  /* bit-packed run claiming 2 groups of width 8 (16 bytes), only 3 bytes present */
  const uint8_t s[] = {0x05, 1, 2, 3};
  CHECK_OK(pqt_rle_decode_u8(s, sizeof s, 8, 255, o, 3, &err));
  CHECK_EQ_INT(o[0], 1);
  CHECK_EQ_INT(o[2], 3);
  /* the 4th value is requested and missing: corrupt */
  CHECK_STATUS(pqt_rle_decode_u8(s, sizeof s, 8, 255, o, 4, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "needs 4 bytes"));
  /* width 3: 5 values need 15 bits = 2 bytes */
  const uint8_t s3[] = {0x03, 0x88, 0xC6};
  CHECK_OK(pqt_rle_decode_u8(s3, sizeof s3, 3, 7, o, 5, &err));
  CHECK_EQ_INT(o[4], 4);
  CHECK_STATUS(pqt_rle_decode_u8(s3, sizeof s3, 3, 7, o, 6, &err), VF_ECORRUPT);
  /* same leniency through the u32 path with many groups (fast kernel + tail) */
  uint32_t v[200], o32[200];
  for (int i = 0; i < 200; i++)
    v[i] = (uint32_t)(i * 7919) & 0x1fff;
  vf_buf b;
  vf_buf_init(&b, 0);
  put_uvarint(&b, (25 << 1) | 1);
  uint64_t v64[200];
  for (int i = 0; i < 200; i++)
    v64[i] = v[i];
  put_bitpacked(&b, v64, 200, 0, 13);
  for (size_t n = 1; n <= 200; n++) {
    size_t need = 1 + (n * 13 + 7) / 8;
    CHECK_OK(pqt_rle_decode_u32(b.data, need, 13, o32, n, &err));
    CHECK(memcmp(o32, v, n * 4) == 0);
    CHECK_STATUS(pqt_rle_decode_u32(b.data, need - 1, 13, o32, n, &err), VF_ECORRUPT);
  }
  vf_buf_free(&b);
}

VF_TEST(rle_width_zero) {
  vf_error err = {0};
  uint8_t o[8];
  memset(o, 9, sizeof o);
  /* ARROW-GH-43605: width 0 with no runs at all reads as zeros */
  CHECK_OK(pqt_rle_decode_u8(NULL, 0, 0, 0, o, 8, &err));
  for (int i = 0; i < 8; i++)
    CHECK_EQ_INT(o[i], 0);
  uint32_t o32[8];
  memset(o32, 9, sizeof o32);
  const uint8_t s[] = {6}; /* RLE run of 3, value has 0 bytes */
  CHECK_OK(pqt_rle_decode_u32(s, sizeof s, 0, o32, 8, &err));
  for (int i = 0; i < 8; i++)
    CHECK_EQ_INT(o32[i], 0);
}

VF_TEST(rle_vector_levels_pattern) {
  /* the 768-d vector case: rep levels 0,1x767 per row as a writer emits them (a bit-packed
   * group then an RLE run), decoded across many rows */
  enum { DIM = 768, ROWS = 50 };
  vf_buf b;
  vf_buf_init(&b, 0);
  for (int r = 0; r < ROWS; r++) {
    put_uvarint(&b, (1 << 1) | 1);
    put_byte(&b, 0xFE); /* 0,1,1,1,1,1,1,1 */
    put_uvarint(&b, (uint64_t)(DIM - 8) << 1);
    put_byte(&b, 1);
  }
  uint8_t *o = malloc((size_t)DIM * ROWS);
  vf_error err = {0};
  CHECK_OK(pqt_rle_decode_u8(b.data, b.len, 1, 1, o, (size_t)DIM * ROWS, &err));
  size_t bad = 0;
  for (size_t i = 0; i < (size_t)DIM * ROWS; i++)
    bad += o[i] != (i % DIM != 0);
  CHECK_EQ_INT(bad, 0);
  free(o);
  vf_buf_free(&b);
}

/* ----------------------------------------------------------------- PLAIN */

VF_TEST(plain_bool) {
  const uint8_t s[] = {0xA5, 0x03}; /* 1,0,1,0,0,1,0,1, 1,1 */
  const uint8_t want[] = {1, 0, 1, 0, 0, 1, 0, 1, 1, 1};
  uint8_t o[10];
  size_t used = 0;
  vf_error err = {0};
  CHECK_OK(pqt_plain_bool_decode(s, sizeof s, o, 10, &used, &err));
  CHECK(memcmp(o, want, 10) == 0);
  CHECK_EQ_INT(used, 2);
  CHECK_OK(pqt_plain_bool_decode(s, sizeof s, o, 8, &used, &err));
  CHECK_EQ_INT(used, 1);
  CHECK_STATUS(pqt_plain_bool_decode(s, sizeof s, o, 17, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "need 3 bytes"));
}

VF_TEST(plain_byte_array) {
  const uint8_t s[] = {5, 0, 0, 0, 'H', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 2, 0, 0, 0, 'a', 'b', 0xEE};
  vf_buf d;
  vf_buf_init(&d, 0);
  vf_buf_append(&d, "xyz", 3, NULL); /* offsets are positions in the whole buffer */
  int64_t off[4];
  size_t used = 0;
  vf_error err = {0};
  CHECK_OK(pqt_plain_ba_decode(s, sizeof s, 3, &d, off, &used, &err));
  CHECK_EQ_INT(used, 19);
  CHECK_EQ_INT(off[0], 3);
  CHECK_EQ_INT(off[1], 8);
  CHECK_EQ_INT(off[2], 8);
  CHECK_EQ_INT(off[3], 10);
  CHECK_EQ_INT(d.len, 10);
  CHECK(memcmp(d.data, "xyzHelloab", 10) == 0);
  /* length past the end; truncated length prefix */
  CHECK_STATUS(pqt_plain_ba_decode(s, 8, 1, &d, off, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "length 5"));
  CHECK_STATUS(pqt_plain_ba_decode(s, sizeof s, 4, &d, off, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "value 3 of 4"));
  const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 1};
  CHECK_STATUS(pqt_plain_ba_decode(huge, sizeof huge, 1, &d, off, &used, &err), VF_ECORRUPT);
  vf_buf_free(&d);
  /* the buffer's ceiling is honoured */
  vf_buf small;
  vf_buf_init(&small, 6);
  CHECK_STATUS(pqt_plain_ba_decode(s, sizeof s, 3, &small, off, &used, &err), VF_ENOMEM);
  CHECK_OK(pqt_plain_ba_decode(s, sizeof s, 2, &small, off, &used, &err));
  vf_buf_free(&small);
}

/* ---------------------------------------------------------- DELTA_BINARY_PACKED */

VF_TEST(delta_spec_example2) {
  /* Example 2 of Encodings.md (7,5,3,1,2,3,4,5), with a valid block of 128 = 4 x 32 */
  const uint8_t s[] = {0x80, 0x01, 0x04, 0x08, 0x0E,           /* header: 128, 4, 8, zigzag(7) */
                       0x03,                                   /* min delta zigzag(-2) */
                       0x02, 0x00, 0x00, 0x00,                 /* widths */
                       0xC0, 0x3F, 0,    0,    0,    0, 0, 0}; /* 0,0,0,3,3,3,3 on 2 bits, padded */
  int32_t o[8];
  int64_t o64[8];
  size_t used = 0;
  vf_error err = {0};
  const int32_t want[] = {7, 5, 3, 1, 2, 3, 4, 5};
  CHECK_OK(pqt_delta_bp_decode(s, sizeof s, 4, o, 8, &used, &err));
  CHECK(memcmp(o, want, sizeof want) == 0);
  CHECK_EQ_INT(used, sizeof s);
  CHECK_OK(pqt_delta_bp_decode(s, sizeof s, 8, o64, 8, &used, &err));
  for (int i = 0; i < 8; i++)
    CHECK_EQ_INT(o64[i], want[i]);
  /* fewer requested than stored: the whole stream is still consumed */
  CHECK_OK(pqt_delta_bp_decode(s, sizeof s, 4, o, 3, &used, &err));
  CHECK_EQ_INT(used, sizeof s);
  CHECK_EQ_INT(o[2], 3);
  /* the last miniblock's padding may be missing; its values may not */
  CHECK_OK(pqt_delta_bp_decode(s, 12, 4, o, 8, &used, &err));
  CHECK_EQ_INT(used, 12);
  CHECK(memcmp(o, want, sizeof want) == 0);
  CHECK_STATUS(pqt_delta_bp_decode(s, 11, 4, o, 8, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "needs 2 bytes"));
  /* more requested than stored */
  CHECK_STATUS(pqt_delta_bp_decode(s, sizeof s, 4, o, 9, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "holds 8 values, expected at least 9"));
}

VF_TEST(delta_spec_example1_and_headers) {
  /* Example 1 (1..5): all deltas 1, bit width 0, no miniblock bytes */
  const uint8_t s[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0};
  int64_t o[5];
  size_t used = 0;
  vf_error err = {0};
  CHECK_OK(pqt_delta_bp_decode(s, sizeof s, 8, o, 5, &used, &err));
  for (int i = 0; i < 5; i++)
    CHECK_EQ_INT(o[i], i + 1);
  CHECK_EQ_INT(used, sizeof s);
  /* the spec's illustrative block size 8 is invalid */
  const uint8_t b8[] = {0x08, 0x01, 0x05, 0x02, 0x02, 0};
  CHECK_STATUS(pqt_delta_bp_decode(b8, sizeof b8, 8, o, 5, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "block size 8"));
  /* 128 / 3 miniblocks; 128 / 8 = 16 values per miniblock (not a multiple of 32) */
  const uint8_t m3[] = {0x80, 0x01, 0x03, 0x01, 0x02};
  CHECK_STATUS(pqt_delta_bp_decode(m3, sizeof m3, 8, o, 1, &used, &err), VF_ECORRUPT);
  const uint8_t m8[] = {0x80, 0x01, 0x08, 0x01, 0x02};
  CHECK_STATUS(pqt_delta_bp_decode(m8, sizeof m8, 8, o, 1, &used, &err), VF_ECORRUPT);
  /* a single value needs no block */
  const uint8_t one[] = {0x80, 0x01, 0x04, 0x01, 0x03};
  CHECK_OK(pqt_delta_bp_decode(one, sizeof one, 8, o, 1, &used, &err));
  CHECK_EQ_INT(o[0], -2);
  CHECK_EQ_INT(used, 5);
  /* header cut short, missing block */
  CHECK_STATUS(pqt_delta_bp_decode(s, 3, 8, o, 5, &used, &err), VF_ECORRUPT);
  CHECK_STATUS(pqt_delta_bp_decode(s, 5, 8, o, 5, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "truncated"));
  /* a 33-bit miniblock (DuckDB writes these for INT32 columns): INT32 values wrap at 32 bits,
   * INT64 keeps the full value */
  const uint8_t w33[] = {0x80, 0x01, 0x04, 0x02, 0x00, 0x00, 33, 0, 0, 0, 5, 0, 0, 0, 1};
  int32_t o32[2];
  CHECK_OK(pqt_delta_bp_decode(w33, sizeof w33, 4, o32, 2, &used, &err));
  CHECK_EQ_INT(o32[0], 0);
  CHECK_EQ_INT(o32[1], 5);
  CHECK_OK(pqt_delta_bp_decode(w33, sizeof w33, 8, o, 2, &used, &err));
  CHECK_EQ_INT(o[1], 4294967301LL);
  /* INT32_MIN then INT32_MAX-1: the min delta 4294967294 lies outside int32 (DuckDB v2 files) */
  const uint8_t wide[] = {0x80, 0x01, 0x04, 0x02, 0xff, 0xff, 0xff, 0xff, 0x0f,
                          0xfc, 0xff, 0xff, 0xff, 0x1f, 0, 0, 0, 0};
  CHECK_OK(pqt_delta_bp_decode(wide, sizeof wide, 4, o32, 2, &used, &err));
  CHECK_EQ_INT(o32[0], INT32_MIN);
  CHECK_EQ_INT(o32[1], INT32_MAX - 1);
  /* widths above 64 are invalid for any type */
  const uint8_t w65[] = {0x80, 0x01, 0x04, 0x02, 0x00, 0x00, 65, 0, 0, 0, 1, 0, 0, 0, 0};
  CHECK_STATUS(pqt_delta_bp_decode(w65, sizeof w65, 4, o32, 2, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "bit width 65"));
  CHECK_STATUS(pqt_delta_bp_decode(w33, sizeof w33, 2, o, 2, &used, &err), VF_EINTERNAL);
}

static void delta_roundtrip(bool narrow, int iters) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err = {0};
  static const unsigned shapes[][2] = {{128, 4}, {128, 1}, {256, 8}, {512, 4}, {128, 2}};
  for (int it = 0; it < iters; it++) {
    size_t n = rnd_below(it < iters / 2 ? 300 : 5000);
    int64_t *v = calloc(n + 1, sizeof *v), *o64 = calloc(n + 1, sizeof *o64);
    int32_t *o32 = calloc(n + 1, sizeof *o32);
    int kind = (int)rnd_below(5);
    for (size_t i = 0; i < n; i++) {
      uint64_t r = rnd();
      int64_t x;
      switch (kind) {
      case 0: x = (int64_t)(r % 1000); break;               /* small */
      case 1: x = (int64_t)i * 3 + (int64_t)(r % 3); break; /* sorted ids */
      case 2: memcpy(&x, &r, 8); break;                     /* full range: wraps */
      case 3: x = (r & 1) ? INT64_MAX - (int64_t)(r % 4) : INT64_MIN + (int64_t)(r % 4); break;
      default: x = (int64_t)(r % 7) - 3; break;
      }
      if (narrow) x = (int64_t)(int32_t)(uint32_t)(uint64_t)x;
      v[i] = x;
    }
    const unsigned *sh = shapes[rnd_below(5)];
    vf_buf_reset(&b);
    t_delta_encode(v, n, narrow, sh[0], sh[1], &b);
    size_t stream = b.len;
    vf_buf_append(&b, "TAIL", 4, NULL); /* something after the stream */
    size_t used = 0;
    size_t want_n = n ? n - rnd_below(3 > n ? n : 3) : 0;
    vf_status st = narrow ? pqt_delta_bp_decode(b.data, b.len, 4, o32, want_n, &used, &err)
                          : pqt_delta_bp_decode(b.data, b.len, 8, o64, want_n, &used, &err);
    CHECK_OK(st);
    CHECK_EQ_INT(used, stream);
    size_t bad = want_n;
    for (size_t i = 0; i < want_n && bad == want_n; i++)
      if ((narrow ? (int64_t)o32[i] : o64[i]) != v[i]) bad = i;
    if (st == VF_OK && bad != want_n)
      vf_test_fail(__FILE__, __LINE__, "delta mismatch (narrow %d, kind %d, n %zu) at %zu", narrow,
                   kind, n, bad);
    /* cuts inside the stream must fail, except inside the final miniblock's padding */
    if (stream > 1) {
      size_t cut = rnd_below(stream);
      vf_status st2 = narrow ? pqt_delta_bp_decode(b.data, cut, 4, o32, n, &used, &err)
                             : pqt_delta_bp_decode(b.data, cut, 8, o64, n, &used, &err);
      if (st2 != VF_OK) CHECK_EQ_INT(st2, VF_ECORRUPT);
    }
    free(v);
    free(o64);
    free(o32);
  }
  vf_buf_free(&b);
}

VF_TEST(delta_roundtrip_int32) {
  delta_roundtrip(true, 400);
}
VF_TEST(delta_roundtrip_int64) {
  delta_roundtrip(false, 400);
}

VF_TEST(delta_int64_extremes_wrap) {
  /* INT64_MIN, INT64_MAX, INT64_MIN: deltas overflow int64, width 64 */
  const int64_t v[] = {INT64_MIN, INT64_MAX, INT64_MIN, 0, -1, INT64_MAX};
  vf_buf b;
  vf_buf_init(&b, 0);
  t_delta_encode(v, 6, false, 128, 4, &b);
  int64_t o[6];
  size_t used = 0;
  vf_error err = {0};
  CHECK_OK(pqt_delta_bp_decode(b.data, b.len, 8, o, 6, &used, &err));
  for (int i = 0; i < 6; i++)
    CHECK(o[i] == v[i]);
  vf_buf_free(&b);
}

/* -------------------------------------------------------------- byte arrays */

VF_TEST(delta_length_byte_array_spec) {
  const char *s[] = {"Hello", "World", "Foobar", "ABCDEF"};
  vf_buf enc, d;
  vf_buf_init(&enc, 0);
  vf_buf_init(&d, 0);
  t_dlba_encode(s, 4, &enc);
  vf_buf_append(&d, "#", 1, NULL);
  int64_t off[5];
  size_t used = 0;
  vf_error err = {0};
  CHECK_OK(pqt_delta_length_ba_decode(enc.data, enc.len, 4, &d, off, &used, &err));
  CHECK_EQ_INT(used, enc.len);
  CHECK_EQ_INT(off[0], 1);
  CHECK_EQ_INT(off[4], 23);
  CHECK(d.len == 23 && memcmp(d.data, "#HelloWorldFoobarABCDEF", 23) == 0);
  /* bytes missing at the end */
  CHECK_STATUS(pqt_delta_length_ba_decode(enc.data, enc.len - 1, 4, &d, off, &used, &err),
               VF_ECORRUPT);
  CHECK(contains(err.msg, "remain"));
  /* a negative length */
  const int64_t neg[] = {3, -1};
  vf_buf_reset(&enc);
  t_delta_encode(neg, 2, true, 128, 4, &enc);
  vf_buf_append(&enc, "abcdefgh", 8, NULL);
  CHECK_STATUS(pqt_delta_length_ba_decode(enc.data, enc.len, 2, &d, off, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "negative length -1"));
  vf_buf_free(&enc);
  vf_buf_free(&d);
}

VF_TEST(delta_byte_array_spec) {
  const char *s[] = {"axis", "axle", "babble", "babyhood"};
  vf_buf enc, d;
  vf_buf_init(&enc, 0);
  vf_buf_init(&d, 0);
  t_dba_encode(s, 4, &enc);
  /* the suffix bytes are the spec's "axislebabbleyhood" */
  CHECK(enc.len > 17 && memcmp(enc.data + enc.len - 17, "axislebabbleyhood", 17) == 0);
  int64_t off[5];
  size_t used = 0;
  vf_error err = {0};
  CHECK_OK(pqt_delta_ba_decode(enc.data, enc.len, 4, &d, off, &used, &err));
  CHECK_EQ_INT(used, enc.len);
  CHECK(d.len == 22 && memcmp(d.data, "axisaxlebabblebabyhood", 22) == 0);
  CHECK_EQ_INT(off[1], 4);
  CHECK_EQ_INT(off[2], 8);
  CHECK_EQ_INT(off[3], 14);
  CHECK_EQ_INT(off[4], 22);
  /* prefix longer than the previous value: prefixes 0, 5 after "ab" */
  const int64_t pre[] = {0, 5};
  const char *sfx[] = {"ab", "c"};
  vf_buf_reset(&enc);
  t_delta_encode(pre, 2, true, 128, 4, &enc);
  t_dlba_encode(sfx, 2, &enc);
  CHECK_STATUS(pqt_delta_ba_decode(enc.data, enc.len, 2, &d, off, &used, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "prefix length 5, previous value has 2 bytes"));
  /* the first value cannot have a prefix */
  const int64_t pre0[] = {1, 0};
  vf_buf_reset(&enc);
  t_delta_encode(pre0, 2, true, 128, 4, &enc);
  t_dlba_encode(sfx, 2, &enc);
  CHECK_STATUS(pqt_delta_ba_decode(enc.data, enc.len, 2, &d, off, &used, &err), VF_ECORRUPT);
  vf_buf_free(&enc);
  vf_buf_free(&d);
}

VF_TEST(byte_array_roundtrips_random) {
  vf_buf enc, d;
  vf_buf_init(&enc, 0);
  vf_buf_init(&d, 0);
  vf_error err = {0};
  for (int it = 0; it < 200; it++) {
    size_t n = rnd_below(it < 100 ? 20 : 1500);
    char **s = calloc(n + 1, sizeof *s);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
      size_t l = rnd_below(12);
      s[i] = calloc(l + 1, 1);
      size_t keep = i && rnd_below(2) ? strlen(s[i - 1]) : 0;
      for (size_t k = 0; k < l; k++)
        s[i][k] = k < keep ? s[i - 1][k] : (char)('a' + rnd_below(3)); /* shared prefixes */
      total += l;
    }
    int64_t *off = calloc(n + 1, sizeof *off);
    size_t used = 0;
    for (int which = 0; which < 3; which++) {
      vf_buf_reset(&enc);
      vf_buf_reset(&d);
      vf_status st;
      if (which == 0) {
        for (size_t i = 0; i < n; i++) {
          uint32_t l = (uint32_t)strlen(s[i]);
          vf_buf_append(&enc, &l, 4, NULL);
          vf_buf_append(&enc, s[i], l, NULL);
        }
        st = pqt_plain_ba_decode(enc.data, enc.len, n, &d, off, &used, &err);
      } else if (which == 1) {
        t_dlba_encode((const char **)s, n, &enc);
        st = pqt_delta_length_ba_decode(enc.data, enc.len, n, &d, off, &used, &err);
      } else {
        t_dba_encode((const char **)s, n, &enc);
        st = pqt_delta_ba_decode(enc.data, enc.len, n, &d, off, &used, &err);
      }
      CHECK_OK(st);
      CHECK_EQ_INT(used, enc.len);
      CHECK_EQ_INT(d.len, total);
      bool ok = st == VF_OK && off[0] == 0;
      for (size_t i = 0; ok && i < n; i++)
        ok = (size_t)(off[i + 1] - off[i]) == strlen(s[i]) &&
             memcmp(d.data + off[i], s[i], strlen(s[i])) == 0;
      if (!ok) vf_test_fail(__FILE__, __LINE__, "byte array kind %d mismatch, n %zu", which, n);
      /* truncations fail cleanly */
      if (enc.len && n) {
        size_t cut = rnd_below(enc.len);
        vf_status st2 = which == 0 ? pqt_plain_ba_decode(enc.data, cut, n, &d, off, &used, &err)
                        : which == 1
                            ? pqt_delta_length_ba_decode(enc.data, cut, n, &d, off, &used, &err)
                            : pqt_delta_ba_decode(enc.data, cut, n, &d, off, &used, &err);
        if (st2 != VF_OK) CHECK_EQ_INT(st2, VF_ECORRUPT);
      }
    }
    for (size_t i = 0; i < n; i++)
      free(s[i]);
    free(s);
    free(off);
  }
  vf_buf_free(&enc);
  vf_buf_free(&d);
}

VF_TEST(delta_byte_array_respects_ceiling) {
  /* 1000 copies of a 100-byte value: prefix 100 + empty suffix each -> 100 kB from ~200 bytes */
  enum { N = 1000 };
  int64_t pre[N];
  const char *sfx[N];
  static char first[101];
  memset(first, 'q', 100);
  pre[0] = 0;
  sfx[0] = first;
  for (int i = 1; i < N; i++) {
    pre[i] = 100;
    sfx[i] = "";
  }
  vf_buf enc, d;
  vf_buf_init(&enc, 0);
  vf_buf_init(&d, 50000);
  t_delta_encode(pre, N, true, 128, 4, &enc);
  t_dlba_encode(sfx, N, &enc);
  int64_t *off = calloc(N + 1, sizeof *off);
  size_t used = 0;
  vf_error err = {0};
  CHECK_STATUS(pqt_delta_ba_decode(enc.data, enc.len, N, &d, off, &used, &err), VF_ENOMEM);
  vf_buf_free(&d);
  vf_buf_init(&d, 0);
  CHECK_OK(pqt_delta_ba_decode(enc.data, enc.len, N, &d, off, &used, &err));
  CHECK_EQ_INT(d.len, 100 * N);
  CHECK_EQ_INT(off[N], 100 * N);
  free(off);
  vf_buf_free(&enc);
  vf_buf_free(&d);
}

VF_TEST(empty_inputs) {
  /* an empty (NULL, 0) input with n = 0 is fine for every decoder; with n > 0 it is corrupt */
  vf_buf d;
  vf_buf_init(&d, 0);
  int64_t off[2];
  int32_t o32[1];
  uint8_t o8[8];
  size_t used = 7;
  vf_error err = {0};
  CHECK_OK(pqt_plain_ba_decode(NULL, 0, 0, &d, off, &used, &err));
  CHECK_EQ_INT(used, 0);
  CHECK_OK(pqt_delta_length_ba_decode(NULL, 0, 0, &d, off, &used, &err));
  CHECK_OK(pqt_delta_ba_decode(NULL, 0, 0, &d, off, &used, &err));
  CHECK_OK(pqt_delta_bp_decode(NULL, 0, 4, o32, 0, &used, &err));
  CHECK_OK(pqt_bss_decode(NULL, 0, 4, o8, 0, &err));
  CHECK_OK(pqt_plain_bool_decode(NULL, 0, o8, 0, &used, &err));
  CHECK_OK(pqt_rle_decode_u8(NULL, 0, 1, 1, o8, 0, &err));
  CHECK_STATUS(pqt_rle_decode_u8(NULL, 0, 1, 1, o8, 1, &err), VF_ECORRUPT);
  CHECK_STATUS(pqt_plain_ba_decode(NULL, 0, 1, &d, off, &used, &err), VF_ECORRUPT);
  CHECK_STATUS(pqt_delta_bp_decode(NULL, 0, 4, o32, 1, &used, &err), VF_ECORRUPT);
  CHECK_STATUS(pqt_delta_ba_decode(NULL, 0, 1, &d, off, &used, &err), VF_ECORRUPT);
  CHECK_STATUS(pqt_bss_decode(NULL, 0, 4, o8, 1, &err), VF_ECORRUPT);
  CHECK_EQ_INT(d.len, 0);
  vf_buf_free(&d);
}

/* ------------------------------------------------------- BYTE_STREAM_SPLIT */

VF_TEST(bss_spec_example) {
  const uint8_t s[] = {0xAA, 0x00, 0xA3, 0xBB, 0x11, 0xB4, 0xCC, 0x22, 0xC5, 0xDD, 0x33, 0xD6};
  const uint8_t want[] = {0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33, 0xA3, 0xB4, 0xC5, 0xD6};
  uint8_t o[12];
  vf_error err = {0};
  CHECK_OK(pqt_bss_decode(s, sizeof s, 4, o, 3, &err));
  CHECK(memcmp(o, want, 12) == 0);
  CHECK_STATUS(pqt_bss_decode(s, 11, 4, o, 3, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "need 12 bytes"));
  CHECK_STATUS(pqt_bss_decode(s, sizeof s, 0, o, 3, &err), VF_EINTERNAL);
  CHECK_STATUS(pqt_bss_decode(s, sizeof s, 8, o, SIZE_MAX / 4, &err), VF_ECORRUPT);
}

VF_TEST(bss_roundtrip_widths) {
  static const int widths[] = {1, 2, 3, 4, 5, 8, 12, 16};
  vf_error err = {0};
  for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
    const size_t w = (size_t)widths[wi];
    for (size_t n = 0; n < 300; n += 1 + n / 3) {
      uint8_t *v = malloc(n * w + 1), *e = malloc(n * w + 1), *o = malloc(n * w + 1);
      for (size_t i = 0; i < n * w; i++)
        v[i] = (uint8_t)rnd();
      for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < w; k++)
          e[k * n + i] = v[i * w + k];
      CHECK_OK(pqt_bss_decode(e, n * w, (int)w, o, n, &err));
      if (n) CHECK(memcmp(o, v, n * w) == 0);
      free(v);
      free(e);
      free(o);
    }
  }
}

/* ----------------------------------------------------------------- FLOAT16 */

static double half_reference(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return s * ldexp(m, -24);
  if (e == 31) return m ? NAN : s * INFINITY;
  return s * ldexp(1024 + m, e - 25);
}

VF_TEST(half_to_float) {
  CHECK(pqt_half_to_float(0x3C00) == 1.0f);
  CHECK(pqt_half_to_float(0xC000) == -2.0f);
  CHECK(pqt_half_to_float(0x7BFF) == 65504.0f);
  CHECK(pqt_half_to_float(0x0001) == ldexpf(1.0f, -24));
  CHECK(pqt_half_to_float(0x03FF) == ldexpf(1023.0f, -24));
  CHECK(pqt_half_to_float(0x0400) == ldexpf(1.0f, -14));
  CHECK(isinf(pqt_half_to_float(0x7C00)) && pqt_half_to_float(0x7C00) > 0);
  CHECK(isinf(pqt_half_to_float(0xFC00)) && pqt_half_to_float(0xFC00) < 0);
  CHECK(isnan(pqt_half_to_float(0x7E00)));
  CHECK(isnan(pqt_half_to_float(0xFC01)));
  float nz = pqt_half_to_float(0x8000);
  CHECK(nz == 0.0f && signbit(nz));
  /* exhaustive against a double-precision reference */
  int bad = 0;
  for (uint32_t h = 0; h <= 0xffff; h++) {
    float f = pqt_half_to_float((uint16_t)h);
    double r = half_reference((uint16_t)h);
    if (isnan(r) ? !isnan(f) : ((double)f != r || !signbit(f) != !signbit(r))) bad++;
  }
  CHECK_EQ_INT(bad, 0);
}
