/*
 * Parquet value and level decoders (parquet-format Encodings.md).
 *
 * Why this file is written the way it is: levels are the hot path.  A 768-d embedding column
 * stored as LIST<float> carries one definition and one repetition level per float, i.e. 77M
 * levels per 100k rows; a writer encodes the repetition levels as "0 then 767 ones" per row,
 * which comes out as a short bit-packed group plus a long RLE run.  So RLE runs are filled with
 * memset / fill loops, and bit-packed groups of 8 are unpacked word-at-a-time by one kernel per
 * bit width (the width is a compile-time constant inside each kernel, so the eight shifts and
 * masks are straight-line code), never bit by bit.
 *
 * Strictness (every input byte is untrusted):
 *  - RLE/bit-packed hybrid ("Run Length Encoding / Bit-Packing Hybrid"): a run header with a
 *    zero count, a run longer than 2^31-1 values (spec note 3), an RLE value wider than the bit
 *    width, a level above the column's max level, or a stream that ends before n values are
 *    VF_ECORRUPT.  One leniency, because other readers accept it and writers emit it: the last
 *    bit-packed run may be cut short in the stream as long as every byte holding one of the n
 *    requested values is present.  Bit width 0 carries no information, so an exhausted
 *    width-0 stream decodes as zeros (ARROW-GH-43605: a dictionary page with one entry).
 *  - DELTA_BINARY_PACKED ("Delta Encoding"): block size a multiple of 128, miniblock size a
 *    multiple of 32, miniblock bit widths <= 64 (also for INT32, see delta_decode); arithmetic is done in uint64 so
 *    that the wrap-around the spec requires is defined behaviour.  The stream must hold at
 *    least n values; values past n are walked (not stored) so *consumed is exact and
 *    DELTA_BYTE_ARRAY can find the stream that follows.  The last miniblock may be shorter
 *    than its padded size when it ends the input (its values must all be present).
 *  - Byte arrays are appended to a caller's vf_buf, so its ceiling caps input-driven growth;
 *    every length is checked against the bytes left before it is used.
 */
#include <stdlib.h>

#include "pqt_internal.h"

#if defined(__GNUC__)
#define PQT_UNROLL8 _Pragma("GCC unroll 8")
#else
#define PQT_UNROLL8
#endif

/* Spec note 3 of the RLE section: run lengths are in [1, 2^31 - 1]. */
#define RLE_MAX_RUN ((uint64_t)INT32_MAX)

static inline uint64_t load_u64le(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v; /* little-endian hosts only (util.c checks at build time) */
}

/* Up to 8 bytes from p[0..avail), zero-padded: for reads at the very end of a buffer. */
static inline uint64_t load_u64le_partial(const uint8_t *p, size_t avail) {
  uint64_t v = 0;
  memcpy(&v, p, avail < 8 ? avail : 8);
  return v;
}

static inline int32_t i32_from_bits(uint32_t x) {
  int32_t r;
  memcpy(&r, &x, sizeof r);
  return r;
}

static inline int64_t i64_from_bits(uint64_t x) {
  int64_t r;
  memcpy(&r, &x, sizeof r);
  return r;
}

/* Stands in for a NULL input of length 0 (pointer arithmetic on NULL is undefined). */
static const uint8_t no_bytes[1];
#define NONNULL_INPUT(p) ((p) ? (p) : no_bytes)

static inline uint64_t zigzag_decode(uint64_t u) {
  return (u >> 1) ^ (0 - (u & 1));
}

/* ------------------------------------------------------------ bit-unpack kernels */

/* Each kernel unpacks `ngroups` groups of 8 values of width W (LSB-first, Encodings.md RLE
 * note 1); a group is exactly W bytes.  It may read up to 8 bytes past the start of the last
 * group's final value, so callers guarantee ngroups * W + 8 readable bytes (see unpack_*). */
typedef void (*unpack_u8_fn)(const uint8_t *in, uint8_t *out, size_t ngroups);
typedef void (*unpack_u32_fn)(const uint8_t *in, uint32_t *out, size_t ngroups);

/* W <= 8: one 64-bit load holds a whole group. */
#define PQT_DEF_UNPACK_U8(W)                                                                       \
  static void unpack8_u8_w##W(const uint8_t *in, uint8_t *out, size_t ngroups) {                   \
    const uint64_t mask = (UINT64_C(1) << (W)) - 1;                                                \
    for (size_t g = 0; g < ngroups; g++, in += (W), out += 8) {                                    \
      const uint64_t word = load_u64le(in);                                                        \
      PQT_UNROLL8 for (unsigned i = 0; i < 8; i++) out[i] = (uint8_t)((word >> (i * (W))) & mask); \
    }                                                                                              \
  }
PQT_DEF_UNPACK_U8(3)
PQT_DEF_UNPACK_U8(5)
PQT_DEF_UNPACK_U8(6)
PQT_DEF_UNPACK_U8(7)

/* Widths 1, 2 and 4 are the common level widths (max level 1..15): spread the group's 8*W bits
 * so that field i lands in byte i with three shift/or/mask steps (a software pdep), then store
 * the 8 bytes at once. */
static inline uint64_t spread_w1(uint64_t t) {
  t = (t | t << 28) & UINT64_C(0x0000000F0000000F);
  t = (t | t << 14) & UINT64_C(0x0003000300030003);
  return (t | t << 7) & UINT64_C(0x0101010101010101);
}
static inline uint64_t spread_w2(uint64_t t) {
  t = (t | t << 24) & UINT64_C(0x000000FF000000FF);
  t = (t | t << 12) & UINT64_C(0x000F000F000F000F);
  return (t | t << 6) & UINT64_C(0x0303030303030303);
}
static inline uint64_t spread_w4(uint64_t t) {
  t = (t | t << 16) & UINT64_C(0x0000FFFF0000FFFF);
  t = (t | t << 8) & UINT64_C(0x00FF00FF00FF00FF);
  return (t | t << 4) & UINT64_C(0x0F0F0F0F0F0F0F0F);
}
static void unpack8_u8_w1(const uint8_t *in, uint8_t *out, size_t ngroups) {
  for (size_t g = 0; g < ngroups; g++) {
    const uint64_t v = spread_w1(in[g]);
    memcpy(out + 8 * g, &v, 8);
  }
}
static void unpack8_u8_w2(const uint8_t *in, uint8_t *out, size_t ngroups) {
  for (size_t g = 0; g < ngroups; g++) {
    const uint64_t v = spread_w2((uint64_t)in[2 * g] | (uint64_t)in[2 * g + 1] << 8);
    memcpy(out + 8 * g, &v, 8);
  }
}
static void unpack8_u8_w4(const uint8_t *in, uint8_t *out, size_t ngroups) {
  for (size_t g = 0; g < ngroups; g++) {
    uint32_t x;
    memcpy(&x, in + 4 * g, 4);
    const uint64_t v = spread_w4(x);
    memcpy(out + 8 * g, &v, 8);
  }
}
static void unpack8_u8_w8(const uint8_t *in, uint8_t *out, size_t ngroups) {
  memcpy(out, in, ngroups * 8);
}

static const unpack_u8_fn unpack_u8_tab[9] = {
    NULL,          unpack8_u8_w1, unpack8_u8_w2, unpack8_u8_w3, unpack8_u8_w4,
    unpack8_u8_w5, unpack8_u8_w6, unpack8_u8_w7, unpack8_u8_w8,
};

/* W <= 32: value i starts at bit i*W; a 64-bit load at its byte covers shift (<= 7) + W bits. */
#define PQT_DEF_UNPACK_U32(W)                                                                      \
  static void unpack8_u32_w##W(const uint8_t *in, uint32_t *out, size_t ngroups) {                 \
    const uint64_t mask = (UINT64_C(1) << (W)) - 1;                                                \
    for (size_t g = 0; g < ngroups; g++, in += (W), out += 8) {                                    \
      PQT_UNROLL8 for (unsigned i = 0; i < 8; i++) {                                               \
        const unsigned bit = i * (W);                                                              \
        out[i] = (uint32_t)((load_u64le(in + bit / 8) >> (bit & 7)) & mask);                       \
      }                                                                                            \
    }                                                                                              \
  }
PQT_DEF_UNPACK_U32(1)
PQT_DEF_UNPACK_U32(2)
PQT_DEF_UNPACK_U32(3)
PQT_DEF_UNPACK_U32(4)
PQT_DEF_UNPACK_U32(5)
PQT_DEF_UNPACK_U32(6)
PQT_DEF_UNPACK_U32(7)
PQT_DEF_UNPACK_U32(8)
PQT_DEF_UNPACK_U32(9)
PQT_DEF_UNPACK_U32(10)
PQT_DEF_UNPACK_U32(11)
PQT_DEF_UNPACK_U32(12)
PQT_DEF_UNPACK_U32(13)
PQT_DEF_UNPACK_U32(14)
PQT_DEF_UNPACK_U32(15)
PQT_DEF_UNPACK_U32(16)
PQT_DEF_UNPACK_U32(17)
PQT_DEF_UNPACK_U32(18)
PQT_DEF_UNPACK_U32(19)
PQT_DEF_UNPACK_U32(20)
PQT_DEF_UNPACK_U32(21)
PQT_DEF_UNPACK_U32(22)
PQT_DEF_UNPACK_U32(23)
PQT_DEF_UNPACK_U32(24)
PQT_DEF_UNPACK_U32(25)
PQT_DEF_UNPACK_U32(26)
PQT_DEF_UNPACK_U32(27)
PQT_DEF_UNPACK_U32(28)
PQT_DEF_UNPACK_U32(29)
PQT_DEF_UNPACK_U32(30)
PQT_DEF_UNPACK_U32(31)
PQT_DEF_UNPACK_U32(32)

static const unpack_u32_fn unpack_u32_tab[33] = {
    NULL,
    unpack8_u32_w1,
    unpack8_u32_w2,
    unpack8_u32_w3,
    unpack8_u32_w4,
    unpack8_u32_w5,
    unpack8_u32_w6,
    unpack8_u32_w7,
    unpack8_u32_w8,
    unpack8_u32_w9,
    unpack8_u32_w10,
    unpack8_u32_w11,
    unpack8_u32_w12,
    unpack8_u32_w13,
    unpack8_u32_w14,
    unpack8_u32_w15,
    unpack8_u32_w16,
    unpack8_u32_w17,
    unpack8_u32_w18,
    unpack8_u32_w19,
    unpack8_u32_w20,
    unpack8_u32_w21,
    unpack8_u32_w22,
    unpack8_u32_w23,
    unpack8_u32_w24,
    unpack8_u32_w25,
    unpack8_u32_w26,
    unpack8_u32_w27,
    unpack8_u32_w28,
    unpack8_u32_w29,
    unpack8_u32_w30,
    unpack8_u32_w31,
    unpack8_u32_w32,
};

/* The tail of a bit-packed run (fewer than 8 bytes of slack after it) is copied into a
 * zero-padded scratch block so the kernels never read past the input.  The tail is shorter
 * than W + 8 <= 40 bytes, i.e. at most 9 groups (W = 1). */
#define UNPACK_TAIL_BYTES 96
#define UNPACK_TAIL_VALUES 128

/* Decode `count` values of width w (1..8) from in[0..avail); avail >= ceil(count*w/8). */
static void unpack_u8(const uint8_t *in, size_t avail, int w, uint8_t *out, size_t count) {
  const unpack_u8_fn fn = unpack_u8_tab[w];
  const size_t uw = (size_t)w;
  size_t fast = count / 8;
  if (avail < 8)
    fast = 0;
  else if (fast > (avail - 8) / uw)
    fast = (avail - 8) / uw;
  fn(in, out, fast);
  size_t rem = count - fast * 8;
  if (rem == 0) return;
  in += fast * uw;
  out += fast * 8;
  const size_t rem_bytes = (rem * uw + 7) / 8;
  const size_t rem_groups = (rem + 7) / 8;
  uint8_t tmp_in[UNPACK_TAIL_BYTES] = {0};
  uint8_t tmp_out[UNPACK_TAIL_VALUES];
  memcpy(tmp_in, in, rem_bytes);
  fn(tmp_in, tmp_out, rem_groups);
  memcpy(out, tmp_out, rem);
}

/* Decode `count` values of width w (1..32) from in[0..avail); avail >= ceil(count*w/8). */
static void unpack_u32(const uint8_t *in, size_t avail, int w, uint32_t *out, size_t count) {
  const unpack_u32_fn fn = unpack_u32_tab[w];
  const size_t uw = (size_t)w;
  size_t fast = count / 8;
  if (avail < 8)
    fast = 0;
  else if (fast > (avail - 8) / uw)
    fast = (avail - 8) / uw;
  fn(in, out, fast);
  size_t rem = count - fast * 8;
  if (rem == 0) return;
  in += fast * uw;
  out += fast * 8;
  const size_t rem_bytes = (rem * uw + 7) / 8;
  const size_t rem_groups = (rem + 7) / 8;
  uint8_t tmp_in[UNPACK_TAIL_BYTES] = {0};
  uint32_t tmp_out[UNPACK_TAIL_VALUES];
  memcpy(tmp_in, in, rem_bytes);
  fn(tmp_in, tmp_out, rem_groups);
  memcpy(out, tmp_out, rem * sizeof *out);
}

/* Decode `count` values of width w (0..64) from in[0..avail); avail >= ceil(count*w/8).
 * Used for DELTA_BINARY_PACKED miniblocks, which are not on the level hot path. */
static void unpack_u64(const uint8_t *in, size_t avail, unsigned w, uint64_t *out, size_t count) {
  if (w == 0) {
    memset(out, 0, count * sizeof *out);
    return;
  }
  const uint64_t mask = w == 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1;
  for (size_t i = 0; i < count; i++) {
    const uint64_t bit = (uint64_t)i * w;
    const size_t byte = (size_t)(bit >> 3);
    const unsigned sh = (unsigned)(bit & 7);
    uint64_t v =
        byte + 8 <= avail ? load_u64le(in + byte) : load_u64le_partial(in + byte, avail - byte);
    v >>= sh;
    if (sh + w > 64) {
      /* a value of 58..64 bits starting mid-byte spills into a ninth byte */
      const uint64_t hi = byte + 8 < avail ? in[byte + 8] : 0;
      v |= hi << (64 - sh);
    }
    out[i] = v & mask;
  }
}

/* ---------------------------------------------------------------- RLE hybrid */

/* One decoder for both outputs: `bytes` selects uint8 levels (checked against max) or uint32
 * dictionary indices.  Always inlined with a constant `bytes`, so each public function gets
 * its own specialised copy. */
static inline __attribute__((always_inline)) vf_status rle_decode(const uint8_t *p, size_t len,
                                                                  int bit_width, uint32_t max,
                                                                  void *outv, size_t n, bool bytes,
                                                                  const char *what, vf_error *err) {
  uint8_t *out8 = bytes ? (uint8_t *)outv : NULL;
  uint32_t *out32 = bytes ? NULL : (uint32_t *)outv;
  const int max_bw = bytes ? 8 : 32;
  if (bit_width < 0 || bit_width > max_bw)
    return vf_error_set(err, VF_ECORRUPT, "%s: bit width %d is out of range 0..%d", what, bit_width,
                        max_bw);
  const size_t value_bytes = ((size_t)bit_width + 7) / 8;
  const uint64_t width_limit =
      bit_width == 32 ? UINT64_C(0xffffffff) : (UINT64_C(1) << bit_width) - 1;
  /* bit-packed values can only exceed max when max is below the width's limit */
  const bool check_packed = bytes && (uint64_t)max < width_limit;
  vf_cursor c;
  vf_cur_init(&c, NONNULL_INPUT(p), len, 0);
  size_t i = 0;
  while (i < n) {
    const size_t run_at = (size_t)vf_cur_offset(&c);
    uint64_t header;
    if (VF_UNLIKELY(!vf_cur_uvarint(&c, &header))) {
      if (bit_width == 0 && vf_cur_remaining(&c) == 0) {
        /* width 0: every value is 0 whether or not runs say so */
        if (bytes)
          memset(out8 + i, 0, n - i);
        else
          memset(out32 + i, 0, (n - i) * sizeof *out32);
        return VF_OK;
      }
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: stream of %zu bytes ends at byte %zu after %zu of %zu values "
                          "(expected a run header)",
                          what, len, run_at, i, n);
    }
    const uint64_t count = header >> 1;
    if (header & 1) {
      /* bit-packed run: count groups of 8 values, count*bit_width bytes */
      if (VF_UNLIKELY(count == 0 || count > RLE_MAX_RUN / 8))
        return vf_error_set(
            err, VF_ECORRUPT,
            "%s: bit-packed run at byte %zu has %llu groups of 8 (expected 1..%llu)", what, run_at,
            (unsigned long long)count, (unsigned long long)(RLE_MAX_RUN / 8));
      const size_t run_values = (size_t)count * 8;
      const size_t run_bytes = (size_t)count * (size_t)bit_width;
      const size_t take = run_values < n - i ? run_values : n - i;
      const size_t need_bytes = (take * (size_t)bit_width + 7) / 8;
      const size_t avail = vf_cur_remaining(&c);
      if (VF_UNLIKELY(avail < need_bytes))
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: bit-packed run at byte %zu needs %zu bytes for values %zu..%zu of "
                            "%zu, only %zu remain",
                            what, run_at, need_bytes, i, i + take - 1, n, avail);
      if (bit_width == 0) {
        if (bytes)
          memset(out8 + i, 0, take);
        else
          memset(out32 + i, 0, take * sizeof *out32);
      } else if (bytes) {
        unpack_u8(c.p, avail, bit_width, out8 + i, take);
        if (check_packed) {
          uint8_t worst = 0;
          for (size_t k = 0; k < take; k++)
            worst = out8[i + k] > worst ? out8[i + k] : worst;
          if (VF_UNLIKELY(worst > max)) {
            size_t k = 0;
            while (out8[i + k] <= max)
              k++;
            return vf_error_set(
                err, VF_ECORRUPT,
                "%s: value %u at index %zu (bit-packed run at byte %zu) exceeds the "
                "maximum level %u",
                what, (unsigned)out8[i + k], i + k, run_at, (unsigned)max);
          }
        }
      } else {
        unpack_u32(c.p, avail, bit_width, out32 + i, take);
      }
      /* the run's bytes past the n-th value may be missing: the lenient case above */
      vf_cur_skip(&c, run_bytes < avail ? run_bytes : avail);
      i += take;
    } else {
      /* RLE run: count copies of one value stored in ceil(bit_width/8) bytes */
      if (VF_UNLIKELY(count == 0 || count > RLE_MAX_RUN))
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: RLE run at byte %zu has length %llu (expected 1..%llu)", what,
                            run_at, (unsigned long long)count, (unsigned long long)RLE_MAX_RUN);
      const uint8_t *vp;
      if (VF_UNLIKELY(!vf_cur_take(&c, value_bytes, &vp)))
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: RLE run at byte %zu needs a %zu-byte value, only %zu bytes remain",
                            what, run_at, value_bytes, vf_cur_remaining(&c));
      uint32_t v = 0;
      for (size_t k = 0; k < value_bytes; k++)
        v |= (uint32_t)vp[k] << (8 * k);
      if (VF_UNLIKELY((uint64_t)v > width_limit))
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: RLE run at byte %zu repeats value %u, wider than bit width %d",
                            what, run_at, v, bit_width);
      const size_t take = count < (uint64_t)(n - i) ? (size_t)count : n - i;
      if (bytes) {
        if (VF_UNLIKELY(v > max))
          return vf_error_set(err, VF_ECORRUPT,
                              "%s: value %u at index %zu (RLE run at byte %zu) exceeds the maximum "
                              "level %u",
                              what, v, i, run_at, (unsigned)max);
        memset(out8 + i, (int)v, take);
      } else {
        uint32_t *o = out32 + i;
        for (size_t k = 0; k < take; k++)
          o[k] = v;
      }
      i += take;
    }
  }
  return VF_OK;
}

/*! pqt_rle_decode_u8() : n levels of bit_width 0..8 from the RLE/bit-packed hybrid stream
 *  p[0..len) (no length prefix), each checked to be <= max.
 *  @return : VF_ECORRUPT naming the byte offset in the stream and what was expected. */
vf_status pqt_rle_decode_u8(const uint8_t *p, size_t len, int bit_width, uint8_t max, uint8_t *out,
                            size_t n, vf_error *err) {
  return rle_decode(p, len, bit_width, max, out, n, true, "RLE/bit-packed levels", err);
}

/*! pqt_rle_decode_u32() : n values of bit_width 0..32 (dictionary indices) from the hybrid
 *  stream p[0..len).  Values are not range-checked beyond the bit width.
 *  @return : VF_ECORRUPT naming the byte offset in the stream and what was expected. */
vf_status pqt_rle_decode_u32(const uint8_t *p, size_t len, int bit_width, uint32_t *out, size_t n,
                             vf_error *err) {
  return rle_decode(p, len, bit_width, UINT32_MAX, out, n, false, "RLE/bit-packed indices", err);
}

/* ------------------------------------------------------------------- PLAIN */

/*! pqt_plain_bool_decode() : n booleans bit-packed LSB first (Encodings.md PLAIN) into one
 *  byte each (0/1); *consumed = ceil(n/8).
 *  @return : VF_ECORRUPT when fewer than ceil(n/8) bytes are present. */
vf_status pqt_plain_bool_decode(const uint8_t *p, size_t len, uint8_t *out, size_t n,
                                size_t *consumed, vf_error *err) {
  const size_t need = n / 8 + (n % 8 != 0);
  if (len < need)
    return vf_error_set(err, VF_ECORRUPT,
                        "PLAIN BOOLEAN: %zu values need %zu bytes, only %zu present", n, need, len);
  const size_t full = n / 8;
  for (size_t j = 0; j < full; j++) {
    const unsigned b = p[j];
    PQT_UNROLL8 for (unsigned k = 0; k < 8; k++) out[j * 8 + k] = (uint8_t)((b >> k) & 1);
  }
  for (size_t k = full * 8; k < n; k++)
    out[k] = (uint8_t)((p[full] >> (k & 7)) & 1);
  if (consumed) *consumed = need;
  return VF_OK;
}

/*! pqt_plain_ba_decode() : n PLAIN BYTE_ARRAY values (u32le length + bytes each) appended to
 *  `data`; offsets[0..n] are positions in data->data: offsets[0] = data->len at entry,
 *  offsets[i+1] - offsets[i] = length of value i.  *consumed = bytes of p used.
 *  @return : VF_ECORRUPT naming the value and byte offset when a length runs past the input;
 *            VF_ENOMEM when `data` would grow past its ceiling. */
vf_status pqt_plain_ba_decode(const uint8_t *p, size_t len, size_t n, vf_buf *data,
                              int64_t *offsets, size_t *consumed, vf_error *err) {
  /* pass 1: validate every length and compute the offsets; pass 2: one reserve, then copy */
  vf_cursor c;
  p = NONNULL_INPUT(p);
  vf_cur_init(&c, p, len, 0);
  const size_t base = data->len;
  size_t total = 0;
  offsets[0] = (int64_t)base;
  for (size_t i = 0; i < n; i++) {
    const size_t at = (size_t)vf_cur_offset(&c);
    uint32_t l;
    if (!vf_cur_u32le(&c, &l))
      return vf_error_set(
          err, VF_ECORRUPT,
          "PLAIN BYTE_ARRAY: value %zu of %zu at byte %zu: expected a 4-byte length, "
          "only %zu bytes remain",
          i, n, at, len - at);
    if (!vf_cur_skip(&c, l))
      return vf_error_set(err, VF_ECORRUPT,
                          "PLAIN BYTE_ARRAY: value %zu of %zu at byte %zu has length %u, only %zu "
                          "bytes remain",
                          i, n, at, l, vf_cur_remaining(&c));
    total += l; /* <= len: cannot overflow */
    offsets[i + 1] = (int64_t)(base + total);
  }
  vf_status st = vf_buf_reserve(data, total, err);
  if (st != VF_OK) return st;
  const uint8_t *q = p;
  for (size_t i = 0; i < n; i++) {
    const size_t l = (size_t)(offsets[i + 1] - offsets[i]);
    vf_buf_put(data, q + 4, l);
    q += 4 + l;
  }
  if (consumed) *consumed = (size_t)(q - p);
  return VF_OK;
}

/* ------------------------------------------------------- DELTA_BINARY_PACKED */

#define DELTA_MAX_BLOCK ((uint64_t)1 << 31)
#define DELTA_CHUNK 256 /* miniblock values unpacked per step (a multiple of 8) */

/* Decodes a DELTA_BINARY_PACKED stream.  `narrow`: INT32 semantics (values wrap at 32 bits).
 * Bit widths up to 64 are accepted for INT32 too: DuckDB computes INT32 deltas in 64 bits and
 * writes 33-bit miniblocks and min deltas outside the int32 range; decoding in uint64 and
 * truncating each value to 32 bits gives exactly the values it wrote (the spec's wrap rule).  The first min(n, total) values go to out32 or out64 (both NULL: walk only);
 * the stream must hold >= n values.  *consumed = bytes of the whole stream. */
static vf_status delta_decode(const uint8_t *p, size_t len, bool narrow, int32_t *out32,
                              int64_t *out64, size_t n, size_t *consumed, const char *what,
                              vf_error *err) {
  if (n == 0 && len == 0) {
    /* nothing requested from an absent stream (an all-null page) */
    if (consumed) *consumed = 0;
    return VF_OK;
  }
  vf_cursor c;
  p = NONNULL_INPUT(p);
  vf_cur_init(&c, p, len, 0);
  uint64_t block_size, mb_count, total, first_zz;
  if (!vf_cur_uvarint(&c, &block_size) || !vf_cur_uvarint(&c, &mb_count) ||
      !vf_cur_uvarint(&c, &total) || !vf_cur_uvarint(&c, &first_zz))
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: truncated or malformed header in %zu bytes (expected block size, "
                        "miniblock count, value count, first value as varints)",
                        what, len);
  if (block_size == 0 || block_size % 128 != 0 || block_size > DELTA_MAX_BLOCK)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: block size %llu is not a positive multiple of 128 (at most %llu)",
                        what, (unsigned long long)block_size, (unsigned long long)DELTA_MAX_BLOCK);
  if (mb_count == 0 || block_size % mb_count != 0 || (block_size / mb_count) % 32 != 0)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: %llu miniblocks per block of %llu values (expected a divisor giving a "
                        "multiple of 32 values per miniblock)",
                        what, (unsigned long long)mb_count, (unsigned long long)block_size);
  if (total < n)
    return vf_error_set(err, VF_ECORRUPT, "%s: stream holds %llu values, expected at least %zu",
                        what, (unsigned long long)total, n);
  const uint64_t mb_values = block_size / mb_count;
  const unsigned max_width = 64;
  uint64_t last = zigzag_decode(first_zz);
  const bool store = out32 || out64;
#define DELTA_STORE(idx, v)                                                                        \
  do {                                                                                             \
    if (out32)                                                                                     \
      out32[idx] = i32_from_bits((uint32_t)(v));                                                   \
    else if (narrow)                                                                               \
      out64[idx] = (int64_t)i32_from_bits((uint32_t)(v));                                          \
    else                                                                                           \
      out64[idx] = i64_from_bits(v);                                                               \
  } while (0)
  uint64_t done = 0; /* values produced so far, including the first */
  if (total > 0) {
    if (store && n > 0) DELTA_STORE(0, last);
    done = 1;
  }
  uint64_t deltas[DELTA_CHUNK];
  while (done < total) {
    const size_t block_at = (size_t)vf_cur_offset(&c);
    uint64_t min_zz;
    const uint8_t *widths;
    if (!vf_cur_uvarint(&c, &min_zz) || !vf_cur_take(&c, mb_count, &widths))
      return vf_error_set(
          err, VF_ECORRUPT,
          "%s: block at byte %zu is truncated after %llu of %llu values (expected a "
          "min delta and %llu bit widths)",
          what, block_at, (unsigned long long)done, (unsigned long long)total,
          (unsigned long long)mb_count);
    const uint64_t min_delta = zigzag_decode(min_zz);
    for (uint64_t m = 0; m < mb_count && done < total; m++) {
      const unsigned w = widths[m];
      const size_t mb_at = (size_t)vf_cur_offset(&c);
      if (w > max_width)
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: miniblock at byte %zu has bit width %u (expected at most %u)",
                            what, mb_at, w, max_width);
      const uint64_t vals = total - done < mb_values ? total - done : mb_values;
      const uint64_t need = (vals * w + 7) / 8; /* vals <= 2^31, w <= 64: no overflow */
      const uint64_t padded = mb_values * w / 8;
      const size_t avail = vf_cur_remaining(&c);
      if (need > avail)
        return vf_error_set(
            err, VF_ECORRUPT,
            "%s: miniblock at byte %zu needs %llu bytes for %llu values of %u bits, "
            "only %zu remain",
            what, mb_at, (unsigned long long)need, (unsigned long long)vals, w, avail);
      /* values before n are stored; the rest are only walked for *consumed */
      uint64_t todo =
          store && done < n ? ((uint64_t)n - done < vals ? (uint64_t)n - done : vals) : 0;
      for (uint64_t off = 0; off < todo; off += DELTA_CHUNK) {
        const size_t k = (size_t)(todo - off < DELTA_CHUNK ? todo - off : DELTA_CHUNK);
        const size_t byte_off = (size_t)(off * w / 8); /* off is a multiple of 8 */
        unpack_u64(c.p + byte_off, avail - byte_off, w, deltas, k);
        for (size_t j = 0; j < k; j++) {
          last += min_delta + deltas[j];
          DELTA_STORE((size_t)done + j, last);
        }
        done += k;
      }
      done += vals - todo;
      /* only the stream's final miniblock may lack its padding */
      vf_cur_skip(&c, padded < avail ? padded : avail);
    }
  }
#undef DELTA_STORE
  if (consumed) *consumed = (size_t)vf_cur_offset(&c);
  return VF_OK;
}

/*! pqt_delta_bp_decode() : n DELTA_BINARY_PACKED values: int32 when width == 4, int64 when
 *  width == 8.  *consumed = bytes of the whole stream (which may hold more than n values).
 *  @return : VF_ECORRUPT naming the byte offset and what was expected; VF_EINTERNAL for a
 *            width other than 4 or 8. */
vf_status pqt_delta_bp_decode(const uint8_t *p, size_t len, int width, void *out, size_t n,
                              size_t *consumed, vf_error *err) {
  if (width == 4)
    return delta_decode(p, len, true, (int32_t *)out, NULL, n, consumed,
                        "DELTA_BINARY_PACKED INT32", err);
  if (width == 8)
    return delta_decode(p, len, false, NULL, (int64_t *)out, n, consumed,
                        "DELTA_BINARY_PACKED INT64", err);
  return vf_error_set(err, VF_EINTERNAL, "DELTA_BINARY_PACKED: value width %d is not 4 or 8",
                      width);
}

/* Lengths (an INT32 DELTA_BINARY_PACKED stream) into offsets[1..n], then offsets made
 * cumulative from `base`; *bytes = the sum, checked against `limit`. */
static vf_status delta_lengths(const uint8_t *p, size_t len, size_t n, int64_t *offsets,
                               size_t base, size_t limit, size_t *consumed, size_t *bytes,
                               const char *what, vf_error *err) {
  vf_status st = delta_decode(p, len, true, NULL, offsets + 1, n, consumed, what, err);
  if (st != VF_OK) return st;
  uint64_t sum = 0;
  offsets[0] = (int64_t)base;
  for (size_t i = 0; i < n; i++) {
    const int64_t l = offsets[i + 1];
    if (l < 0)
      return vf_error_set(err, VF_ECORRUPT, "%s: value %zu has negative length %lld", what, i,
                          (long long)l);
    sum += (uint64_t)l; /* n * 2^31 cannot overflow 64 bits */
    if (sum > limit)
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: lengths of values 0..%zu add up to %llu bytes, only %zu remain",
                          what, i, (unsigned long long)sum, limit);
    offsets[i + 1] = (int64_t)(base + (size_t)sum);
  }
  *bytes = (size_t)sum;
  return VF_OK;
}

/*! pqt_delta_length_ba_decode() : n DELTA_LENGTH_BYTE_ARRAY values (delta-encoded lengths,
 *  then the bytes back to back) appended to `data`, offsets as for pqt_plain_ba_decode.
 *  @return : VF_ECORRUPT when a length is negative or the lengths overrun the input. */
vf_status pqt_delta_length_ba_decode(const uint8_t *p, size_t len, size_t n, vf_buf *data,
                                     int64_t *offsets, size_t *consumed, vf_error *err) {
  const char *what = "DELTA_LENGTH_BYTE_ARRAY";
  p = NONNULL_INPUT(p);
  size_t used = 0, bytes = 0;
  const size_t base = data->len;
  vf_status st = delta_lengths(p, len, n, offsets, base, len, &used, &bytes, what, err);
  if (st != VF_OK) return st;
  if (bytes > len - used)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: values need %zu bytes after the lengths at byte %zu, only %zu remain",
                        what, bytes, used, len - used);
  st = vf_buf_append(data, p + used, bytes, err);
  if (st != VF_OK) return st;
  if (consumed) *consumed = used + bytes;
  return VF_OK;
}

/*! pqt_delta_ba_decode() : n DELTA_BYTE_ARRAY values (prefix lengths, then suffixes as
 *  DELTA_LENGTH_BYTE_ARRAY) appended to `data`, offsets as for pqt_plain_ba_decode.
 *  @return : VF_ECORRUPT when a prefix is longer than the previous value or a stream overruns
 *            the input; VF_ENOMEM when `data` would grow past its ceiling. */
vf_status pqt_delta_ba_decode(const uint8_t *p, size_t len, size_t n, vf_buf *data,
                              int64_t *offsets, size_t *consumed, vf_error *err) {
  const char *what = "DELTA_BYTE_ARRAY";
  p = NONNULL_INPUT(p);
  vf_status st = VF_OK;
  int32_t *prefix = NULL;
  size_t used_pre = 0, used_len = 0, suffix_bytes = 0;
  const size_t base = data->len;
  /* n prefix lengths: bounded by the caller's offsets array of n + 1 entries */
  prefix = vf_mallocarray(n ? n : 1, sizeof *prefix);
  if (!prefix) {
    st = vf_error_set(err, VF_ENOMEM, "%s: out of memory for %zu prefix lengths", what, n);
    goto out;
  }
  st = delta_decode(p, len, true, prefix, NULL, n, &used_pre, "DELTA_BYTE_ARRAY prefix lengths",
                    err);
  if (st != VF_OK) goto out;
  /* suffix lengths land in offsets[1..n] as cumulative suffix offsets from 0 */
  st = delta_lengths(p + used_pre, len - used_pre, n, offsets, 0, len - used_pre, &used_len,
                     &suffix_bytes, "DELTA_BYTE_ARRAY suffix lengths", err);
  if (st != VF_OK) goto out;
  const size_t sfx_at = used_pre + used_len;
  if (suffix_bytes > len - sfx_at) {
    st = vf_error_set(err, VF_ECORRUPT, "%s: suffixes need %zu bytes at byte %zu, only %zu remain",
                      what, suffix_bytes, sfx_at, len - sfx_at);
    goto out;
  }
  /* validate prefixes and size the output before writing anything */
  uint64_t out_total = 0, prev_len = 0;
  for (size_t i = 0; i < n; i++) {
    const uint64_t sfx = (uint64_t)(offsets[i + 1] - offsets[i]);
    if (prefix[i] < 0 || (uint64_t)prefix[i] > prev_len) {
      st = vf_error_set(err, VF_ECORRUPT,
                        "%s: value %zu has prefix length %d, previous value has %llu bytes", what,
                        i, prefix[i], (unsigned long long)prev_len);
      goto out;
    }
    prev_len = (uint64_t)prefix[i] + sfx;
    out_total += prev_len;
    if (out_total > SIZE_MAX / 2) {
      st = vf_error_set(err, VF_ECORRUPT, "%s: values add up to more than %zu bytes", what,
                        SIZE_MAX / 2);
      goto out;
    }
  }
  st = vf_buf_reserve(data, (size_t)out_total, err);
  if (st != VF_OK) goto out;
  const uint8_t *sfx = p + sfx_at;
  size_t prev_start = base;
  int64_t sfx_prev = 0;
  offsets[0] = (int64_t)base;
  for (size_t i = 0; i < n; i++) {
    const size_t sl = (size_t)(offsets[i + 1] - sfx_prev);
    const size_t pl = (size_t)prefix[i];
    sfx_prev = offsets[i + 1];
    const size_t start = data->len;
    /* the prefix comes from the previous value, which ends where this one starts */
    if (pl) memcpy(data->data + start, data->data + prev_start, pl);
    memcpy(data->data + start + pl, sfx, sl);
    sfx += sl;
    data->len = start + pl + sl;
    offsets[i + 1] = (int64_t)data->len;
    prev_start = start;
  }
  if (consumed) *consumed = sfx_at + suffix_bytes;
out:
  free(prefix);
  return st;
}

/* --------------------------------------------------------- BYTE_STREAM_SPLIT */

/* FLOAT and DOUBLE pages (vectors stored BYTE_STREAM_SPLIT) are interleaved 16 values at a time
 * with SSE2 byte/word/dword unpacks, which every x86-64 CPU has (no run-time dispatch needed);
 * the scalar loops in pqt_bss_decode are the reference and handle the tail and other CPUs.
 * Each returns how many leading values it decoded. */
#if defined(__SSE2__)
#include <emmintrin.h>
static size_t bss4_simd(const uint8_t *s0, const uint8_t *s1, const uint8_t *s2, const uint8_t *s3,
                        uint8_t *out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s0 + i));
    const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s1 + i));
    const __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s2 + i));
    const __m128i d = _mm_loadu_si128((const __m128i *)(const void *)(s3 + i));
    const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
    const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
    __m128i *o = (__m128i *)(void *)(out + 4 * i);
    _mm_storeu_si128(o + 0, _mm_unpacklo_epi16(ab_lo, cd_lo));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
  }
  return i;
}
static size_t bss8_simd(const uint8_t *const s[8], uint8_t *out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i v[8], pl[4], ph[4], q[8];
    for (int k = 0; k < 8; k++)
      v[k] = _mm_loadu_si128((const __m128i *)(const void *)(s[k] + i));
    for (int k = 0; k < 4; k++) {
      pl[k] = _mm_unpacklo_epi8(v[2 * k], v[2 * k + 1]); /* values 0..7, bytes 2k, 2k+1 */
      ph[k] = _mm_unpackhi_epi8(v[2 * k], v[2 * k + 1]); /* values 8..15 */
    }
    for (int h = 0; h < 2; h++) { /* bytes 0..3 (h = 0) and 4..7 (h = 1) of each value */
      q[4 * h + 0] = _mm_unpacklo_epi16(pl[2 * h], pl[2 * h + 1]); /* values 0..3 */
      q[4 * h + 1] = _mm_unpackhi_epi16(pl[2 * h], pl[2 * h + 1]); /* values 4..7 */
      q[4 * h + 2] = _mm_unpacklo_epi16(ph[2 * h], ph[2 * h + 1]); /* values 8..11 */
      q[4 * h + 3] = _mm_unpackhi_epi16(ph[2 * h], ph[2 * h + 1]); /* values 12..15 */
    }
    __m128i *o = (__m128i *)(void *)(out + 8 * i);
    for (int k = 0; k < 4; k++) {
      _mm_storeu_si128(o + 2 * k, _mm_unpacklo_epi32(q[k], q[4 + k]));
      _mm_storeu_si128(o + 2 * k + 1, _mm_unpackhi_epi32(q[k], q[4 + k]));
    }
  }
  return i;
}
#else
static size_t bss4_simd(const uint8_t *s0, const uint8_t *s1, const uint8_t *s2, const uint8_t *s3,
                        uint8_t *out, size_t n) {
  (void)s0, (void)s1, (void)s2, (void)s3, (void)out, (void)n;
  return 0;
}
static size_t bss8_simd(const uint8_t *const s[8], uint8_t *out, size_t n) {
  (void)s, (void)out, (void)n;
  return 0;
}
#endif

/*! pqt_bss_decode() : n values of `width` bytes from K = width byte streams of n bytes each
 *  (Encodings.md BYTE_STREAM_SPLIT): out[i*width + k] = p[k*n + i].
 *  @return : VF_ECORRUPT when len < n*width; VF_EINTERNAL for width < 1. */
vf_status pqt_bss_decode(const uint8_t *p, size_t len, int width, uint8_t *out, size_t n,
                         vf_error *err) {
  if (width < 1) return vf_error_set(err, VF_EINTERNAL, "BYTE_STREAM_SPLIT: value width %d", width);
  const size_t w = (size_t)width;
  p = NONNULL_INPUT(p);
  if (n > len / w)
    return vf_error_set(
        err, VF_ECORRUPT,
        "BYTE_STREAM_SPLIT: %zu values of %zu bytes need %zu bytes, only %zu present", n, w,
        n > SIZE_MAX / w ? SIZE_MAX : n * w, len);
  if (w == 4) {
    const uint8_t *s0 = p, *s1 = p + n, *s2 = p + 2 * n, *s3 = p + 3 * n;
    size_t i = bss4_simd(s0, s1, s2, s3, out, n);
    for (; i < n; i++) {
      const uint32_t v =
          (uint32_t)s0[i] | (uint32_t)s1[i] << 8 | (uint32_t)s2[i] << 16 | (uint32_t)s3[i] << 24;
      memcpy(out + 4 * i, &v, 4);
    }
  } else if (w == 8) {
    const uint8_t *s[8];
    for (size_t k = 0; k < 8; k++)
      s[k] = p + k * n;
    size_t i = bss8_simd(s, out, n);
    for (; i < n; i++) {
      const uint64_t v = (uint64_t)s[0][i] | (uint64_t)s[1][i] << 8 | (uint64_t)s[2][i] << 16 |
                         (uint64_t)s[3][i] << 24 | (uint64_t)s[4][i] << 32 |
                         (uint64_t)s[5][i] << 40 | (uint64_t)s[6][i] << 48 |
                         (uint64_t)s[7][i] << 56;
      memcpy(out + 8 * i, &v, 8);
    }
  } else {
    for (size_t k = 0; k < w; k++) {
      const uint8_t *s = p + k * n;
      uint8_t *o = out + k;
      for (size_t i = 0; i < n; i++)
        o[i * w] = s[i];
    }
  }
  return VF_OK;
}

/* ------------------------------------------------------------------- FLOAT16 */

/*! pqt_half_to_float() : IEEE 754 binary16 -> binary32, exact (subnormals, ±inf, NaN with its
 *  payload kept in the top mantissa bits). */
float pqt_half_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13); /* inf or NaN */
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13); /* rebias 15 -> 127 */
  } else if (mant == 0) {
    bits = sign; /* ±0 */
  } else {
    /* subnormal: value = mant * 2^-24; normalise into a float */
    uint32_t e = 113; /* exponent field for 2^-14, the half subnormal scale */
    while (!(mant & 0x400u)) {
      mant <<= 1;
      e--;
    }
    bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}
