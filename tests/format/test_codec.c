/*
 * Tests for src/format/pqt_codec.c: round trips through pqt_compress, buffers produced with the
 * codec libraries themselves (multi-member gzip, multi-frame and size-less zstd, Hadoop-framed
 * and raw LZ4, brotli), wrong expected sizes, and garbled or truncated inputs that must fail
 * cleanly (never crash, never return a short or long page).
 */
#include <stdlib.h>

#include <brotli/encode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "format/pqt_internal.h"
#include "vf_test.h"

static uint64_t rng_state = 0x243f6a8885a308d3u;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static bool contains(const char *hay, const char *needle) {
  return strstr(hay, needle) != NULL;
}

/* compressible but not trivial: float-like data with repeats */
static uint8_t *make_page(size_t n) {
  uint8_t *p = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)((i % 251) < 100 ? (rnd() & 0x0f) : (i * 7) % 13);
  return p;
}

static void put_u32be(vf_buf *b, uint32_t v) {
  uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  vf_buf_append(b, x, 4, NULL);
}

/* Decompressing `c` as `codec` must give exactly `want`; one byte more or less expected is
 * corrupt with a message naming the codec. */
static void check_exact(int codec, const vf_buf *c, const uint8_t *want, size_t n) {
  uint8_t *out = malloc(n + 2);
  vf_error err = {0};
  vf_status st = pqt_decompress(codec, c->data, c->len, out, n, &err);
  CHECK_OK(st);
  if (st != VF_OK)
    fprintf(stderr, "    codec %d, %zu bytes: %s\n", codec, n, err.msg);
  else
    CHECK(n == 0 || memcmp(out, want, n) == 0);
  if (n > 0) {
    CHECK_STATUS(pqt_decompress(codec, c->data, c->len, out, n - 1, &err), VF_ECORRUPT);
  }
  CHECK_STATUS(pqt_decompress(codec, c->data, c->len, out, n + 1, &err), VF_ECORRUPT);
  free(out);
}

/* Garble and truncate `c`: the result must be VF_OK (exactly n bytes written) or VF_ECORRUPT. */
static void check_garbled(int codec, const vf_buf *c, size_t n) {
  uint8_t *bad = malloc(c->len + 1), *out = malloc(n + 1);
  vf_error err = {0};
  for (int it = 0; it < 60 && c->len; it++) {
    memcpy(bad, c->data, c->len);
    size_t len = c->len;
    if (it % 3 == 0)
      len = (size_t)(rnd() % c->len);
    else
      for (int k = 0; k < 1 + it % 4; k++)
        bad[rnd() % c->len] ^= (uint8_t)(1 + rnd() % 255);
    vf_status st = pqt_decompress(codec, bad, len, out, n, &err);
    if (st != VF_OK) CHECK_EQ_INT(st, VF_ECORRUPT);
  }
  free(bad);
  free(out);
}

VF_TEST(roundtrip_pqt_compress) {
  static const int codecs[] = {PQT_UNCOMPRESSED, PQT_ZSTD, PQT_SNAPPY, PQT_GZIP};
  static const size_t sizes[] = {0, 1, 100, 4096, 100000, 1 << 20};
  vf_error err = {0};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    uint8_t *page = make_page(sizes[s]);
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
      vf_buf out;
      vf_buf_init(&out, 0);
      vf_buf_append(&out, "hdr", 3, NULL); /* pqt_compress appends */
      CHECK_OK(pqt_compress(codecs[c], 3, page, sizes[s], &out, &err));
      CHECK(memcmp(out.data, "hdr", 3) == 0);
      vf_buf body = out;
      body.data += 3;
      body.len -= 3;
      check_exact(codecs[c], &body, page, sizes[s]);
      if (sizes[s] >= 4096 && codecs[c] != PQT_UNCOMPRESSED) CHECK(body.len < sizes[s]);
      if (sizes[s] == 4096) check_garbled(codecs[c], &body, sizes[s]);
      vf_buf_free(&out);
    }
    free(page);
  }
}

VF_TEST(compress_unsupported_and_ceiling) {
  vf_buf out;
  vf_buf_init(&out, 10);
  vf_error err = {0};
  uint8_t page[100] = {0};
  CHECK_STATUS(pqt_compress(PQT_BROTLI, 0, page, sizeof page, &out, &err), VF_EUNSUPPORTED);
  CHECK_STATUS(pqt_compress(PQT_UNCOMPRESSED, 0, page, sizeof page, &out, &err), VF_ENOMEM);
  CHECK_STATUS(pqt_compress(PQT_ZSTD, 1, page, sizeof page, &out, &err), VF_ENOMEM);
  vf_buf_free(&out);
}

VF_TEST(gzip_written_with_gzip_header) {
  /* Compression.md: GZIP means RFC 1952 (magic 1f 8b), not zlib */
  uint8_t page[64] = {1, 2, 3};
  vf_buf out;
  vf_buf_init(&out, 0);
  vf_error err = {0};
  CHECK_OK(pqt_compress(PQT_GZIP, 6, page, sizeof page, &out, &err));
  CHECK(out.len > 2 && out.data[0] == 0x1f && out.data[1] == 0x8b);
  vf_buf_free(&out);
}

static void gzip_member(const uint8_t *p, size_t n, vf_buf *out) {
  vf_error err = {0};
  CHECK_OK(pqt_compress(PQT_GZIP, 6, p, n, out, &err));
}

VF_TEST(gzip_multi_member_and_zlib) {
  size_t n = 50000;
  uint8_t *page = make_page(n);
  vf_buf c;
  vf_buf_init(&c, 0);
  /* three members: 20000 + 0 + 30000 bytes */
  gzip_member(page, 20000, &c);
  gzip_member(page, 0, &c);
  gzip_member(page + 20000, 30000, &c);
  check_exact(PQT_GZIP, &c, page, n);
  check_garbled(PQT_GZIP, &c, n);
  /* an empty member after the page is complete */
  vf_buf tail;
  vf_buf_init(&tail, 0);
  gzip_member(page, n, &tail);
  gzip_member(page, 0, &tail);
  check_exact(PQT_GZIP, &tail, page, n);
  vf_buf_free(&tail);
  /* trailing garbage after the last member */
  vf_buf_append(&c, "junk", 4, NULL);
  uint8_t *out = malloc(n);
  vf_error err = {0};
  CHECK_STATUS(pqt_decompress(PQT_GZIP, c.data, c.len, out, n, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "GZIP data is corrupt"));
  /* a zlib-wrapped stream (some old writers) */
  vf_buf_reset(&c);
  uLongf zl = compressBound((uLong)n);
  vf_buf_reserve(&c, zl, NULL);
  CHECK(compress2(c.data, &zl, page, (uLong)n, 6) == Z_OK);
  c.len = zl;
  check_exact(PQT_GZIP, &c, page, n);
  /* sizes in the message */
  CHECK_STATUS(pqt_decompress(PQT_GZIP, c.data, c.len, out, n - 10, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "decompressed to more than"));
  free(out);
  free(page);
  vf_buf_free(&c);
}

VF_TEST(zstd_frames) {
  size_t n = 300000;
  uint8_t *page = make_page(n);
  vf_buf c;
  vf_buf_init(&c, 0);
  vf_error err = {0};
  /* two frames back to back plus a skippable frame */
  CHECK_OK(pqt_compress(PQT_ZSTD, 1, page, 100000, &c, &err));
  const uint8_t skippable[] = {0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9};
  vf_buf_append(&c, skippable, sizeof skippable, NULL);
  CHECK_OK(pqt_compress(PQT_ZSTD, 19, page + 100000, n - 100000, &c, &err));
  check_exact(PQT_ZSTD, &c, page, n);
  check_garbled(PQT_ZSTD, &c, n);
  /* a frame without content size, as a streaming compressor writes it */
  vf_buf_reset(&c);
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  size_t bound = ZSTD_compressBound(n);
  vf_buf_reserve(&c, bound, NULL);
  ZSTD_outBuffer ob = {c.data, bound, 0};
  ZSTD_inBuffer ib = {page, n, 0};
  size_t r = ZSTD_compressStream2(cctx, &ob, &ib, ZSTD_e_end);
  CHECK(r == 0);
  c.len = ob.pos;
  CHECK(ZSTD_getFrameContentSize(c.data, c.len) == ZSTD_CONTENTSIZE_UNKNOWN);
  check_exact(PQT_ZSTD, &c, page, n);
  ZSTD_freeCCtx(cctx);
  /* message names both sizes */
  uint8_t *out = malloc(n + 1);
  CHECK_STATUS(pqt_decompress(PQT_ZSTD, c.data, c.len, out, n + 1, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "ZSTD data decompressed to 300000 bytes, expected 300001"));
  free(out);
  free(page);
  vf_buf_free(&c);
}

VF_TEST(lz4_raw_and_hadoop) {
  size_t n = 200000;
  uint8_t *page = make_page(n);
  vf_buf raw, had;
  vf_buf_init(&raw, 0);
  vf_buf_init(&had, 0);
  /* LZ4_RAW: one block */
  int bound = LZ4_compressBound((int)n);
  vf_buf_reserve(&raw, (size_t)bound, NULL);
  int cl = LZ4_compress_default((const char *)page, (char *)raw.data, (int)n, bound);
  CHECK(cl > 0);
  raw.len = (size_t)cl;
  check_exact(PQT_LZ4_RAW, &raw, page, n);
  check_garbled(PQT_LZ4_RAW, &raw, n);
  /* LZ4 without framing (older parquet-cpp): the raw-block fallback */
  check_exact(PQT_LZ4, &raw, page, n);
  /* Hadoop framing: block 1 = 120000 bytes in two inner chunks, block 2 = 80000 in one */
  const size_t parts[][2] = {{0, 70000}, {70000, 50000}, {120000, 80000}};
  uint8_t *tmp = malloc((size_t)LZ4_compressBound(80000));
  for (int k = 0; k < 3; k++) {
    if (k == 0) put_u32be(&had, 120000);
    if (k == 2) put_u32be(&had, 80000);
    int l = LZ4_compress_default((const char *)page + parts[k][0], (char *)tmp, (int)parts[k][1],
                                 LZ4_compressBound(80000));
    put_u32be(&had, (uint32_t)l);
    vf_buf_append(&had, tmp, (size_t)l, NULL);
  }
  check_exact(PQT_LZ4, &had, page, n);
  check_garbled(PQT_LZ4, &had, n);
  /* the Hadoop frame is not a valid raw block */
  uint8_t *out = malloc(n);
  vf_error err = {0};
  CHECK_STATUS(pqt_decompress(PQT_LZ4_RAW, had.data, had.len, out, n, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "LZ4_RAW"));
  free(out);
  free(tmp);
  free(page);
  vf_buf_free(&raw);
  vf_buf_free(&had);
}

VF_TEST(brotli_and_snappy_library_buffers) {
  size_t n = 70000;
  uint8_t *page = make_page(n);
  vf_buf c;
  vf_buf_init(&c, 0);
  size_t bl = BrotliEncoderMaxCompressedSize(n);
  vf_buf_reserve(&c, bl, NULL);
  CHECK(BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, n, page, &bl, c.data));
  c.len = bl;
  check_exact(PQT_BROTLI, &c, page, n);
  check_garbled(PQT_BROTLI, &c, n);
  vf_buf_reset(&c);
  size_t sl = snappy_max_compressed_length(n);
  vf_buf_reserve(&c, sl, NULL);
  CHECK(snappy_compress((const char *)page, n, (char *)c.data, &sl) == SNAPPY_OK);
  c.len = sl;
  check_exact(PQT_SNAPPY, &c, page, n);
  check_garbled(PQT_SNAPPY, &c, n);
  free(page);
  vf_buf_free(&c);
}

VF_TEST(codec_errors) {
  uint8_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[16];
  vf_error err = {0};
  CHECK_STATUS(pqt_decompress(PQT_LZO, in, sizeof in, out, 16, &err), VF_EUNSUPPORTED);
  CHECK_EQ_STR(err.msg, "LZO codec is not supported");
  CHECK_STATUS(pqt_decompress(42, in, sizeof in, out, 16, &err), VF_EUNSUPPORTED);
  CHECK_STATUS(pqt_decompress(PQT_UNCOMPRESSED, in, sizeof in, out, 7, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "holds 8 bytes, expected 7"));
  CHECK_OK(pqt_decompress(PQT_UNCOMPRESSED, in, sizeof in, out, 8, &err));
  CHECK(memcmp(in, out, 8) == 0);
  /* empty page, empty input: fine for every codec */
  for (int codec = 0; codec <= PQT_LZ4_RAW; codec++)
    if (codec != PQT_LZO) CHECK_OK(pqt_decompress(codec, in, 0, out, 0, &err));
  /* empty input for a non-empty page */
  static const int all[] = {PQT_SNAPPY, PQT_GZIP, PQT_ZSTD, PQT_LZ4, PQT_LZ4_RAW, PQT_BROTLI};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    CHECK_STATUS(pqt_decompress(all[i], in, 0, out, 16, &err), VF_ECORRUPT);
    CHECK_STATUS(pqt_decompress(all[i], in, sizeof in, out, 16, &err), VF_ECORRUPT);
  }
  /* a snappy preamble claiming a size other than the page's */
  const uint8_t sn[] = {0x05, 0x10, 'a', 'b', 'c', 'd', 'e'};
  CHECK_OK(pqt_decompress(PQT_SNAPPY, sn, sizeof sn, out, 5, &err));
  CHECK(memcmp(out, "abcde", 5) == 0);
  CHECK_STATUS(pqt_decompress(PQT_SNAPPY, sn, sizeof sn, out, 6, &err), VF_ECORRUPT);
  CHECK(contains(err.msg, "SNAPPY data decompressed to 5 bytes, expected 6"));
}

VF_TEST(crc32_ieee) {
  CHECK_EQ_INT(pqt_crc32((const uint8_t *)"123456789", 9), 0xCBF43926u);
  CHECK_EQ_INT(pqt_crc32((const uint8_t *)"", 0), 0);
}
