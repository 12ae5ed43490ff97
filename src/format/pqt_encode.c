/*
 * RLE / bit-packed hybrid encoder for definition and repetition levels (parquet-format
 * Encodings.md, "Run Length Encoding / Bit-Packing Hybrid (RLE = 3)").
 *
 *   run := rle-run | bit-packed-run
 *   rle-run        := varint(count << 1)       value in ceil(bit_width / 8) bytes, little-endian
 *   bit-packed-run := varint(groups << 1 | 1)  groups * 8 values, bit_width bits each, LSB first
 *
 * Strategy (the one parquet-mr and arrow use, done over a whole page at once since the writer
 * has every level of the page in memory): a value repeated 8 or more times becomes an RLE run;
 * anything else is collected into bit-packed groups of 8.  Bit-packed runs must hold a multiple
 * of 8 values, so when a long repeat follows a partial group, the group is completed with the
 * first values of the repeat and the rest stays an RLE run.  Only the very last group of the
 * stream is zero-padded: readers decode exactly num_values levels, which the spec allows.
 * Literal runs are cut at 64 groups so their header is at most two bytes and a reader never
 * buffers more than 512 values of one run.
 */
#include "format/pqt_internal.h"

#define RLE_MIN_REPEAT 8
#define RLE_MAX_LITERAL_GROUPS 64

static size_t rle_put_uvarint(uint8_t *dst, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    dst[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  dst[n++] = (uint8_t)v;
  return n;
}

/* Emits `count` literal values (count > 0) as bit-packed runs; a final partial group is
 * zero-padded, which callers only allow at the end of the stream. */
static vf_status rle_emit_literals(const uint8_t *vals, size_t count, int bit_width, vf_buf *out,
                                   vf_error *err) {
  while (count > 0) {
    size_t take = count;
    size_t max_vals = (size_t)RLE_MAX_LITERAL_GROUPS * 8;
    if (take > max_vals) take = max_vals;
    size_t groups = (take + 7) / 8;
    size_t bytes = groups * (size_t)bit_width;
    vf_status st = vf_buf_reserve(out, 10 + bytes, err);
    if (st != VF_OK) return st;
    uint8_t hdr[10];
    size_t hn = rle_put_uvarint(hdr, ((uint64_t)groups << 1) | 1u);
    vf_buf_put(out, hdr, hn);
    uint8_t *dst = out->data + out->len;
    memset(dst, 0, bytes);
    uint64_t acc = 0;
    int nbits = 0;
    size_t o = 0;
    for (size_t i = 0; i < groups * 8; i++) {
      uint64_t v = i < take ? vals[i] : 0;
      acc |= v << nbits;
      nbits += bit_width;
      while (nbits >= 8) {
        dst[o++] = (uint8_t)acc;
        acc >>= 8;
        nbits -= 8;
      }
    }
    out->len += bytes;
    vals += take;
    count -= take;
  }
  return VF_OK;
}

static vf_status rle_emit_repeat(uint8_t value, size_t count, int bit_width, vf_buf *out,
                                 vf_error *err) {
  size_t vbytes = ((size_t)bit_width + 7) / 8;
  vf_status st = vf_buf_reserve(out, 10 + vbytes, err);
  if (st != VF_OK) return st;
  uint8_t hdr[10];
  size_t hn = rle_put_uvarint(hdr, (uint64_t)count << 1);
  vf_buf_put(out, hdr, hn);
  if (vbytes) vf_buf_putc(out, (char)value); /* bit_width <= 8: one byte at most */
  return VF_OK;
}

/*! pqt_rle_encode_u8() : append the RLE/bit-packed hybrid encoding of vals[0..n) with
 *  `bit_width` bits per value (0..8; every value must fit).  No length prefix: data page v1
 *  levels get their 4-byte length from the caller.
 *  @return : VF_EUSAGE for a bad width or a value that does not fit; VF_ENOMEM when `out`
 *            reaches its ceiling. */
vf_status pqt_rle_encode_u8(const uint8_t *vals, size_t n, int bit_width, vf_buf *out,
                            vf_error *err) {
  if (bit_width < 0 || bit_width > 8)
    return vf_error_set(err, VF_EUSAGE, "RLE encoder: bit width %d out of range 0..8", bit_width);
  unsigned limit = 1u << bit_width;
  size_t lit_start = 0; /* pending literals are vals[lit_start..i) */
  size_t i = 0;
  while (i < n) {
    if (vals[i] >= limit)
      return vf_error_set(err, VF_EUSAGE, "RLE encoder: value %u at %zu does not fit in %d bits",
                          vals[i], i, bit_width);
    size_t r = 1;
    while (i + r < n && vals[i + r] == vals[i])
      r++;
    if (r < RLE_MIN_REPEAT) {
      i += r;
      continue;
    }
    /* complete a partial literal group with the head of the repeat */
    size_t pending = i - lit_start;
    size_t borrow = pending % 8 ? 8 - pending % 8 : 0;
    if (r - borrow < RLE_MIN_REPEAT) {
      i += r; /* not worth splitting: keep it all literal */
      continue;
    }
    vf_status st;
    if (pending + borrow > 0) {
      st = rle_emit_literals(vals + lit_start, pending + borrow, bit_width, out, err);
      if (st != VF_OK) return st;
    }
    st = rle_emit_repeat(vals[i], r - borrow, bit_width, out, err);
    if (st != VF_OK) return st;
    i += r;
    lit_start = i;
  }
  if (lit_start < n) return rle_emit_literals(vals + lit_start, n - lit_start, bit_width, out, err);
  return VF_OK;
}
