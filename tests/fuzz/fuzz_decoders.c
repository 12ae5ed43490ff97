/*
 * libFuzzer harness for the parquet value/level decoders and page codecs
 * (src/format/pqt_encoding.c, src/format/pqt_codec.c).
 *
 * Input layout: byte 0 picks the decoder family, byte 1 a parameter (bit width, value width,
 * codec), bytes 2..4 the value count n (or the page size for codecs), the rest is the encoded
 * stream.  n is capped so one input cannot ask for gigabytes of output; byte-array output goes
 * to a vf_buf with a 1 MiB ceiling.  Besides "no crash, no sanitizer report", every successful
 * decode is checked for its contract: levels <= max, offsets monotonic and inside the buffer,
 * *consumed <= len.  Build with -DFUZZ_FAMILY=k to pin the family (byte 0 is then ignored).
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc tests/fuzz/fuzz_decoders.c \
 *     src/format/pqt_encoding.c src/format/pqt_codec.c src/util/util.c \
 *     -lzstd -lsnappy -llz4 -lz -lbrotlidec -lm
 */
#include <stdlib.h>

#include "format/pqt_internal.h"

enum {
  FAM_RLE_U8,
  FAM_RLE_U32,
  FAM_PLAIN_BOOL,
  FAM_PLAIN_BA,
  FAM_DELTA_BP,
  FAM_DELTA_LENGTH_BA,
  FAM_DELTA_BA,
  FAM_BSS,
  FAM_DECOMPRESS,
  FAM_HALF,
  FAM_COUNT
};

#define MAX_VALUES ((size_t)1 << 16)
#define MAX_PAGE ((size_t)1 << 20)

static void contract(bool ok) {
  if (!ok) abort(); /* a decoder broke its contract: report it as a crash */
}

static void check_offsets(const int64_t *off, size_t n, const vf_buf *d) {
  contract(off[0] == 0);
  for (size_t i = 0; i < n; i++)
    contract(off[i] <= off[i + 1]);
  contract((size_t)off[n] == d->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 5) return 0;
#ifdef FUZZ_FAMILY
  const int fam = FUZZ_FAMILY;
#else
  const int fam = data[0] % FAM_COUNT;
#endif
  const uint8_t param = data[1];
  const size_t count = (size_t)data[2] | (size_t)data[3] << 8 | (size_t)data[4] << 16;
  const uint8_t *p = data + 5;
  const size_t len = size - 5;
  const size_t n = count % (MAX_VALUES + 1);
  vf_error err = {0};
  vf_buf buf;
  vf_buf_init(&buf, MAX_PAGE);
  size_t consumed = 0;
  void *out = NULL;
  int64_t *off = NULL;

  switch (fam) {
  case FAM_RLE_U8: {
    const int bw = param % 9;
    const uint8_t max = (uint8_t)(bw == 0 ? 0 : (param >> 4) % (1u << bw));
    uint8_t *o = out = malloc(n + 1);
    if (pqt_rle_decode_u8(p, len, bw, max, o, n, &err) == VF_OK)
      for (size_t i = 0; i < n; i++)
        contract(o[i] <= max);
    break;
  }
  case FAM_RLE_U32: {
    const int bw = param % 33;
    uint32_t *o = out = malloc((n + 1) * sizeof *o);
    if (pqt_rle_decode_u32(p, len, bw, o, n, &err) == VF_OK && bw < 32)
      for (size_t i = 0; i < n; i++)
        contract(o[i] < (UINT32_C(1) << bw));
    break;
  }
  case FAM_PLAIN_BOOL: {
    uint8_t *o = out = malloc(n + 1);
    if (pqt_plain_bool_decode(p, len, o, n, &consumed, &err) == VF_OK) {
      contract(consumed <= len);
      for (size_t i = 0; i < n; i++)
        contract(o[i] <= 1);
    }
    break;
  }
  case FAM_PLAIN_BA:
  case FAM_DELTA_LENGTH_BA:
  case FAM_DELTA_BA: {
    off = malloc((n + 1) * sizeof *off);
    vf_status st = fam == FAM_PLAIN_BA ? pqt_plain_ba_decode(p, len, n, &buf, off, &consumed, &err)
                   : fam == FAM_DELTA_LENGTH_BA
                       ? pqt_delta_length_ba_decode(p, len, n, &buf, off, &consumed, &err)
                       : pqt_delta_ba_decode(p, len, n, &buf, off, &consumed, &err);
    if (st == VF_OK) {
      contract(consumed <= len);
      check_offsets(off, n, &buf);
    } else {
      contract(st == VF_ECORRUPT || st == VF_ENOMEM);
    }
    break;
  }
  case FAM_DELTA_BP: {
    const int width = (param & 1) ? 8 : 4;
    out = malloc((n + 1) * 8);
    vf_status st = pqt_delta_bp_decode(p, len, width, out, n, &consumed, &err);
    if (st == VF_OK)
      contract(consumed <= len);
    else
      contract(st == VF_ECORRUPT);
    break;
  }
  case FAM_BSS: {
    const int width = 1 + param % 16;
    out = malloc(n * (size_t)width + 1);
    vf_status st = pqt_bss_decode(p, len, width, out, n, &err);
    contract(st == VF_OK ? n * (size_t)width <= len : st == VF_ECORRUPT);
    break;
  }
  case FAM_DECOMPRESS: {
    const int codec = param % 8;
    const size_t dst_len = count % (MAX_PAGE + 1);
    out = malloc(dst_len + 1);
    vf_status st = pqt_decompress(codec, p, len, out, dst_len, &err);
    contract(st == VF_OK || st == VF_ECORRUPT || (st == VF_EUNSUPPORTED && codec == PQT_LZO));
    break;
  }
  case FAM_HALF: {
    for (size_t i = 0; i + 1 < len; i += 2) {
      const float f = pqt_half_to_float((uint16_t)(p[i] | p[i + 1] << 8));
      const uint16_t h = (uint16_t)(p[i] | p[i + 1] << 8);
      const bool half_nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
      contract(half_nan == (f != f));
    }
    break;
  }
  default: break;
  }
  /* an error always comes with a message */
  if (err.code != VF_OK) contract(err.msg[0] != '\0');
  free(out);
  free(off);
  vf_buf_free(&buf);
  return 0;
}
