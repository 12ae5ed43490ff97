/*
 * Page (de)compression (parquet-format Compression.md) over the system libraries: snappy,
 * zlib, zstd, lz4, brotli.
 *
 * Why every decompressor writes into a caller buffer of exactly dst_len bytes: the page header
 * already says how large the page is (uncompressed_page_size, checked by the reader against its
 * budget), so a codec never needs to allocate from a size claimed inside the compressed stream.
 * Any result that is not exactly dst_len bytes is VF_ECORRUPT: a short page would leave stale
 * bytes behind, a long one would be silently cut.
 *
 * Codec notes:
 *  - GZIP: RFC 1952, possibly several members back to back ("Readers should support reading
 *    pages containing multiple GZIP members"); windowBits 15+32 also accepts a zlib header,
 *    which some old writers produced.
 *  - ZSTD: ZSTD_decompress walks concatenated and skippable frames and does not need the
 *    frame content size, so frames written by a streaming compressor (no content size) read
 *    too.  It never allocates a window: the caller's buffer is the window.
 *  - LZ4 (deprecated): the Hadoop framing, blocks of [u32 BE decompressed size] followed by one
 *    or more [u32 BE compressed size][raw LZ4 block] until that size is reached.  Some writers
 *    (older parquet-cpp) wrote a bare LZ4 block under the same codec id, so when the framing
 *    does not parse exactly to dst_len we retry the whole input as one raw block, as Arrow
 *    does.
 *  - LZ4_RAW: one raw LZ4 block.  LZO: unsupported (no system library worth linking).
 */
#include <limits.h>

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <pthread.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_d_stableOutBuffer */
#include <zstd.h>
#include <zstd_errors.h>

#include "pqt_internal.h"

static const char *codec_name(int codec) {
  switch (codec) {
  case PQT_UNCOMPRESSED: return "UNCOMPRESSED";
  case PQT_SNAPPY: return "SNAPPY";
  case PQT_GZIP: return "GZIP";
  case PQT_LZO: return "LZO";
  case PQT_BROTLI: return "BROTLI";
  case PQT_LZ4: return "LZ4";
  case PQT_ZSTD: return "ZSTD";
  case PQT_LZ4_RAW: return "LZ4_RAW";
  default: return "unknown";
  }
}

/*! pqt_codec_max_ratio() : see pqt_internal.h.  Bounds from the formats: deflate's longest match
 *  (258 bytes) costs at least 2 bits (1032:1); a snappy copy of 64 bytes costs 3 bytes; an LZ4
 *  sequence grows by 255 bytes per extra length byte; a zstd RLE block turns 4 bytes into 128 KiB. */
uint64_t pqt_codec_max_ratio(int codec) {
  switch (codec) {
  case PQT_GZIP: return 1032;
  case PQT_SNAPPY: return 22;
  case PQT_LZ4:
  case PQT_LZ4_RAW: return 256;
  case PQT_ZSTD: return 32768;
  default: return 0;
  }
}

static vf_status corrupt(vf_error *err, int codec, const char *detail) {
  return vf_error_set(err, VF_ECORRUPT, "%s data is corrupt (%s)", codec_name(codec), detail);
}

static vf_status wrong_size(vf_error *err, int codec, size_t got, bool more, size_t want) {
  return vf_error_set(err, VF_ECORRUPT, "%s data decompressed to %s%zu bytes, expected %zu",
                      codec_name(codec), more ? "more than " : "", got, want);
}

/* zlib counts in uInt: feed and drain at most this much per call. */
#define ZCHUNK ((size_t)UINT_MAX)

static vf_status gunzip(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
                        vf_error *err) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 15 + 32) != Z_OK)
    return vf_error_set(err, VF_ENOMEM, "GZIP: cannot initialise zlib");
  vf_status st = VF_OK;
  size_t in_left = src_len, out_left = dst_len;
  zs.next_in = (Bytef *)(uintptr_t)src; /* zlib's API is not const-correct */
  zs.next_out = dst;
  for (;;) {
    /* top up the uInt-sized windows from the remaining totals */
    if (zs.avail_in == 0 && in_left) {
      zs.avail_in = (uInt)(in_left < ZCHUNK ? in_left : ZCHUNK);
      in_left -= zs.avail_in;
    }
    if (zs.avail_out == 0 && out_left) {
      zs.avail_out = (uInt)(out_left < ZCHUNK ? out_left : ZCHUNK);
      out_left -= zs.avail_out;
    }
    if (zs.avail_out == 0) {
      /* dst is full: the input must end here (member trailer only), else the page is longer */
      uint8_t probe[64];
      zs.next_out = probe;
      zs.avail_out = sizeof probe;
      int r = inflate(&zs, Z_NO_FLUSH);
      const size_t extra = sizeof probe - zs.avail_out;
      zs.next_out = dst + dst_len;
      zs.avail_out = 0;
      if (extra) {
        st = wrong_size(err, PQT_GZIP, dst_len, true, dst_len);
        goto out;
      }
      if (r == Z_STREAM_END) {
        if (zs.avail_in == 0 && in_left == 0) goto out; /* exact */
        if (inflateReset(&zs) != Z_OK) {
          st = corrupt(err, PQT_GZIP, "cannot reset between members");
          goto out;
        }
        continue; /* another member: it must decompress to nothing */
      }
      if (r != Z_OK) {
        st = corrupt(err, PQT_GZIP, zs.msg ? zs.msg : "truncated stream");
        goto out;
      }
      continue;
    }
    int r = inflate(&zs, Z_NO_FLUSH);
    if (r == Z_STREAM_END) {
      if (zs.avail_in == 0 && in_left == 0) {
        const size_t got = dst_len - out_left - zs.avail_out;
        if (got != dst_len) st = wrong_size(err, PQT_GZIP, got, false, dst_len);
        goto out;
      }
      /* concatenated members (Compression.md GZIP) */
      if (inflateReset(&zs) != Z_OK) {
        st = corrupt(err, PQT_GZIP, "cannot reset between members");
        goto out;
      }
      continue;
    }
    if (r == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0) {
      st = vf_error_set(err, VF_ECORRUPT,
                        "GZIP data is corrupt (stream is truncated after %zu of %zu bytes)",
                        dst_len - out_left - zs.avail_out, dst_len);
      goto out;
    }
    if (r != Z_OK && r != Z_BUF_ERROR) {
      st = corrupt(err, PQT_GZIP, zs.msg ? zs.msg : "inflate failed");
      goto out;
    }
  }
out:
  inflateEnd(&zs);
  return st;
}

static uint32_t load_u32be(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Hadoop LZ4 framing; false when it does not parse to exactly dst_len bytes. */
static bool lz4_hadoop(const uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len) {
  size_t in = 0, outp = 0;
  if (src_len == 0) return false;
  while (in < src_len) {
    if (src_len - in < 8) return false;
    const size_t block = load_u32be(src + in);
    in += 4;
    if (block > dst_len - outp) return false;
    const size_t block_end = outp + block;
    do {
      if (src_len - in < 4) return false;
      const size_t clen = load_u32be(src + in);
      in += 4;
      if (clen > src_len - in || clen > (size_t)LZ4_MAX_INPUT_SIZE) return false;
      const size_t room = block_end - outp;
      const int r = LZ4_decompress_safe((const char *)src + in, (char *)dst + outp, (int)clen,
                                        (int)(room < (size_t)INT_MAX ? room : (size_t)INT_MAX));
      if (r < 0) return false;
      in += clen;
      outp += (size_t)r;
    } while (outp < block_end);
  }
  return outp == dst_len;
}

static vf_status lz4_raw(int codec, const uint8_t *src, size_t src_len, uint8_t *dst,
                         size_t dst_len, vf_error *err) {
  if (src_len > (size_t)LZ4_MAX_INPUT_SIZE || dst_len > (size_t)INT_MAX)
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "%s block of %zu -> %zu bytes exceeds LZ4's 2 GiB limit", codec_name(codec),
                        src_len, dst_len);
  const int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)src_len, (int)dst_len);
  if (r < 0) return corrupt(err, codec, "invalid block or larger than the page");
  if ((size_t)r != dst_len) return wrong_size(err, codec, (size_t)r, false, dst_len);
  return VF_OK;
}

/* The calling thread's zstd decompression context (NULL if it cannot be created: the caller
 * falls back to ZSTD_decompress).  Freed by the key's destructor when the thread exits. */
static pthread_key_t zstd_key;
static pthread_once_t zstd_once = PTHREAD_ONCE_INIT;
static void zstd_free_dctx(void *p) { ZSTD_freeDCtx((ZSTD_DCtx *)p); }
static void zstd_make_key(void) { (void)pthread_key_create(&zstd_key, zstd_free_dctx); }
static ZSTD_DCtx *zstd_thread_dctx(void) {
  if (pthread_once(&zstd_once, zstd_make_key) != 0) return NULL;
  ZSTD_DCtx *d = pthread_getspecific(zstd_key);
  if (!d && (d = ZSTD_createDCtx()) != NULL && pthread_setspecific(zstd_key, d) != 0) {
    ZSTD_freeDCtx(d);
    d = NULL;
  }
  return d;
}

/* The calling thread's zstd context for streamed pages (ZSTD_d_stableOutBuffer: decoded straight
 * into the page buffer, no window copy); separate from zstd_key's so that one keeps defaults. */
static pthread_key_t zstd_skey;
static pthread_once_t zstd_sonce = PTHREAD_ONCE_INIT;
static void zstd_make_skey(void) { (void)pthread_key_create(&zstd_skey, zstd_free_dctx); }
static ZSTD_DCtx *zstd_thread_sctx(void) {
  if (pthread_once(&zstd_sonce, zstd_make_skey) != 0) return NULL;
  ZSTD_DCtx *d = pthread_getspecific(zstd_skey);
  if (!d && (d = ZSTD_createDCtx()) != NULL && pthread_setspecific(zstd_skey, d) != 0) {
    ZSTD_freeDCtx(d);
    d = NULL;
  }
  return d;
}

/*! pqt_zstd_stream() : see pqt_internal.h. */
vf_status pqt_zstd_stream(pqt_chunk_fn rd, void *arg, size_t src_len, const uint8_t *head,
                          size_t head_len, uint8_t *win, size_t win_cap, uint8_t *dst,
                          size_t dst_len, uint32_t *crc, vf_error *err) {
  const int codec = PQT_ZSTD;
  uLong c = crc32(0L, Z_NULL, 0);
  if (src_len == 0 && dst_len == 0) {
    if (crc) *crc = (uint32_t)c;
    return VF_OK;
  }
  ZSTD_DCtx *d = zstd_thread_sctx();
  if (!d || win_cap == 0 || win_cap > ZCHUNK)
    return vf_error_set(err, VF_ENOMEM, "cannot set up streamed ZSTD decompression");
  size_t r = ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters);
  if (!ZSTD_isError(r)) r = ZSTD_DCtx_setParameter(d, ZSTD_d_stableOutBuffer, 1);
  if (ZSTD_isError(r)) return corrupt(err, codec, ZSTD_getErrorName(r));
  ZSTD_outBuffer out = {dst, dst_len, 0};
  size_t last = 1; /* 0 once a frame is complete and no other has started */
  if (!head || head_len > src_len || head_len > ZCHUNK) head_len = 0;
  for (size_t pos = 0; pos < src_len;) {
    const uint8_t *src = win;
    size_t n = src_len - pos < win_cap ? src_len - pos : win_cap;
    if (pos < head_len) { /* the bytes the caller holds: in place */
      src = head;
      n = head_len;
    } else {
      vf_status st = rd(arg, pos, win, n, err);
      if (st != VF_OK) return st;
    }
    if (crc) c = crc32(c, src, (uInt)n);
    ZSTD_inBuffer in = {src, n, 0};
    while (in.pos < in.size) {
      size_t ip = in.pos, op = out.pos;
      last = ZSTD_decompressStream(d, &out, &in);
      if (ZSTD_isError(last)) {
        if (ZSTD_getErrorCode(last) == ZSTD_error_dstSize_tooSmall)
          return wrong_size(err, codec, dst_len, true, dst_len);
        return corrupt(err, codec, ZSTD_getErrorName(last));
      }
      if (in.pos == ip && out.pos == op) /* output full, input left: more than the page */
        return wrong_size(err, codec, dst_len, true, dst_len);
    }
    pos += n;
  }
  if (last != 0) return corrupt(err, codec, "truncated frame");
  if (out.pos != dst_len) return wrong_size(err, codec, out.pos, false, dst_len);
  if (crc) *crc = (uint32_t)c;
  return VF_OK;
}

/*! pqt_decompress() : see pqt_internal.h.  Writes exactly dst_len bytes into dst or fails.
 *  An empty input for an empty page is accepted for every codec. */
vf_status pqt_decompress(int codec, const uint8_t *src, size_t src_len, uint8_t *dst,
                         size_t dst_len, vf_error *err) {
  if (src_len == 0 && dst_len == 0) return VF_OK;
  switch (codec) {
  case PQT_UNCOMPRESSED:
    if (src_len != dst_len)
      return vf_error_set(err, VF_ECORRUPT, "UNCOMPRESSED page holds %zu bytes, expected %zu",
                          src_len, dst_len);
    memcpy(dst, src, dst_len);
    return VF_OK;
  case PQT_SNAPPY: {
    size_t ulen = 0;
    if (snappy_uncompressed_length((const char *)src, src_len, &ulen) != SNAPPY_OK)
      return corrupt(err, codec, "bad length preamble");
    if (ulen != dst_len) return wrong_size(err, codec, ulen, false, dst_len);
    size_t out_len = dst_len;
    if (snappy_uncompress((const char *)src, src_len, (char *)dst, &out_len) != SNAPPY_OK)
      return corrupt(err, codec, "invalid stream");
    if (out_len != dst_len) return wrong_size(err, codec, out_len, false, dst_len);
    return VF_OK;
  }
  case PQT_GZIP: return gunzip(src, src_len, dst, dst_len, err);
  case PQT_ZSTD: {
    /* One decompression context per thread, reused: ZSTD_decompress() creates and frees one
     * per call, and on every page that malloc/free of ~100 KiB+ went back to the kernel as
     * fresh zeroed pages (a fifth of a zstd vector scan was clear_page). */
    ZSTD_DCtx *dctx = zstd_thread_dctx();
    const size_t r = dctx ? ZSTD_decompressDCtx(dctx, dst, dst_len, src, src_len)
                          : ZSTD_decompress(dst, dst_len, src, src_len);
    if (ZSTD_isError(r)) {
      if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
        return wrong_size(err, codec, dst_len, true, dst_len);
      return corrupt(err, codec, ZSTD_getErrorName(r));
    }
    if (r != dst_len) return wrong_size(err, codec, r, false, dst_len);
    return VF_OK;
  }
  case PQT_LZ4:
    if (lz4_hadoop(src, src_len, dst, dst_len)) return VF_OK;
    return lz4_raw(codec, src, src_len, dst, dst_len, err);
  case PQT_LZ4_RAW: return lz4_raw(codec, src, src_len, dst, dst_len, err);
  case PQT_BROTLI: {
    size_t out_len = dst_len;
    const BrotliDecoderResult r = BrotliDecoderDecompress(src_len, src, &out_len, dst);
    if (r != BROTLI_DECODER_RESULT_SUCCESS)
      return corrupt(err, codec, "invalid, truncated or larger than the page");
    if (out_len != dst_len) return wrong_size(err, codec, out_len, false, dst_len);
    return VF_OK;
  }
  case PQT_LZO: return vf_error_set(err, VF_EUNSUPPORTED, "LZO codec is not supported");
  default: return vf_error_set(err, VF_EUNSUPPORTED, "unknown compression codec %d", codec);
  }
}

static vf_status gzip_compress(int level, const uint8_t *src, size_t src_len, vf_buf *out,
                               vf_error *err) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (level <= 0 || level > 9) level = Z_DEFAULT_COMPRESSION;
  /* 15 + 16: a gzip (RFC 1952) wrapper, as Compression.md requires */
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return vf_error_set(err, VF_ENOMEM, "GZIP: cannot initialise zlib");
  vf_status st = vf_buf_reserve(out, (size_t)deflateBound(&zs, (uLong)src_len), err);
  if (st != VF_OK) goto out;
  size_t in_left = src_len;
  zs.next_in = (Bytef *)(uintptr_t)src;
  for (;;) {
    if (zs.avail_in == 0 && in_left) {
      zs.avail_in = (uInt)(in_left < ZCHUNK ? in_left : ZCHUNK);
      in_left -= zs.avail_in;
    }
    size_t room = out->cap - out->len;
    if (room == 0) {
      VF_TRY(vf_buf_reserve(out, 1 << 16, err));
      room = out->cap - out->len;
    }
    zs.next_out = out->data + out->len;
    zs.avail_out = (uInt)(room < ZCHUNK ? room : ZCHUNK);
    const uInt before = zs.avail_out;
    const int r = deflate(&zs, in_left ? Z_NO_FLUSH : Z_FINISH);
    out->len += before - zs.avail_out;
    if (r == Z_STREAM_END) break;
    if (r != Z_OK && r != Z_BUF_ERROR) {
      VF_FAIL(vf_error_set(err, VF_EINTERNAL, "GZIP compression failed (%d)", r));
    }
  }
out:
  deflateEnd(&zs);
  return st;
}

/*! pqt_compress() : append the compressed form of src to `out`.  level: ZSTD level (0 = zstd's
 *  default), GZIP level 1..9 (other values = zlib's default); ignored otherwise.
 *  @return : VF_EUNSUPPORTED for codecs other than UNCOMPRESSED, ZSTD, SNAPPY, GZIP;
 *            VF_ENOMEM when `out` would pass its ceiling. */
vf_status pqt_compress(int codec, int level, const uint8_t *src, size_t src_len, vf_buf *out,
                       vf_error *err) {
  vf_status st;
  switch (codec) {
  case PQT_UNCOMPRESSED: return vf_buf_append(out, src, src_len, err);
  case PQT_ZSTD: {
    const size_t bound = ZSTD_compressBound(src_len);
    if (ZSTD_isError(bound) || bound == 0)
      return vf_error_set(err, VF_EUSAGE, "ZSTD: %zu bytes is too large to compress", src_len);
    if ((st = vf_buf_reserve(out, bound, err)) != VF_OK) return st;
    const size_t r = ZSTD_compress(out->data + out->len, bound, src, src_len, level);
    if (ZSTD_isError(r))
      return vf_error_set(err, VF_EINTERNAL, "ZSTD compression failed: %s", ZSTD_getErrorName(r));
    out->len += r;
    return VF_OK;
  }
  case PQT_SNAPPY: {
    size_t bound = snappy_max_compressed_length(src_len);
    if ((st = vf_buf_reserve(out, bound, err)) != VF_OK) return st;
    if (snappy_compress((const char *)src, src_len, (char *)out->data + out->len, &bound) !=
        SNAPPY_OK)
      return vf_error_set(err, VF_EINTERNAL, "SNAPPY compression of %zu bytes failed", src_len);
    out->len += bound;
    return VF_OK;
  }
  case PQT_GZIP: return gzip_compress(level, src, src_len, out, err);
  default:
    return vf_error_set(err, VF_EUNSUPPORTED, "compressing with %s is not supported",
                        codec_name(codec));
  }
}

/*! pqt_crc32() : CRC-32 (IEEE 802.3, zlib's crc32) of p[0..n), as in PageHeader.crc. */
uint32_t pqt_crc32(const uint8_t *p, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n) {
    const uInt k = (uInt)(n < ZCHUNK ? n : ZCHUNK);
    crc = crc32(crc, p, k);
    p += k;
    n -= k;
  }
  return (uint32_t)crc;
}
