/*
 * libFuzzer harness for the Variant decoder (src/format/pqt_variant.c): metadata dictionary,
 * every primitive type, short strings, objects, arrays, and the object field walk that merges
 * partially shredded objects (pqt_rows.c).  Shredded reassembly itself runs in fuzz_file, whose
 * seeds include VARIANT files.
 *
 * Input layout: bytes 0..1 the metadata length m (u16 little-endian, cut to what follows), then
 * m bytes of metadata, then the value.  Besides "no crash, no leak, no sanitizer report", every
 * successful decode must be exactly one JSON value (checked by wrapping it as {"v": ...} for
 * vf_json_is_object), errors must be VF_ECORRUPT / VF_EUNSUPPORTED / VF_ENOMEM with a message,
 * and the output must stay under the decoder's cap.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc tests/fuzz/fuzz_variant.c \
 *     src/format/pqt_variant.c src/format/pqt_rows.c ... (the format and util sources)
 */
#include <stdlib.h>

#include "format/pqt_internal.h"

static void contract(bool ok) {
  if (!ok) abort(); /* the decoder broke its contract: report it as a crash */
}

static void check_status(vf_status st, const vf_error *err) {
  contract(st == VF_OK || st == VF_ECORRUPT || st == VF_EUNSUPPORTED || st == VF_ENOMEM);
  if (st) contract(err->msg[0] != '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  size_t mlen = (size_t)data[0] | (size_t)data[1] << 8;
  if (mlen > size - 2) mlen = size - 2;
  const uint8_t *meta = data + 2, *val = data + 2 + mlen;
  size_t vlen = size - 2 - mlen;
  vf_error err = {0};
  pqt_variant_meta m;
  vf_status st = pqt_variant_meta_parse(meta, mlen, &m, &err);
  check_status(st, &err);
  if (st != VF_OK) return 0;
  /* every dictionary string lookup is bounded */
  for (uint32_t i = 0; i < m.nkeys && i < 64; i++) {
    const uint8_t *k;
    size_t kn;
    if (pqt_variant_key(&m, i, &k, &kn, &err) == VF_OK)
      contract(k >= m.bytes && kn <= m.bytes_len && (size_t)(k - m.bytes) <= m.bytes_len - kn);
  }
  vf_buf out;
  vf_buf_init(&out, (size_t)256 << 20);
  vf_buf_append(&out, "{\"v\":", 5, NULL);
  st = pqt_variant_to_json(&m, val, vlen, &out, &err);
  check_status(st, &err);
  if (st == VF_OK) {
    vf_buf_append(&out, "}", 1, NULL);
    contract(vf_json_is_object((const char *)out.data, out.len));
  }
  /* the object walk used for partially shredded objects */
  pqt_variant_object o;
  if (pqt_variant_object_open(&m, val, vlen, &o, &err) == VF_OK) {
    for (uint32_t i = 0; i < o.n && i < 4096; i++) {
      const uint8_t *k, *fv;
      size_t kn, fl;
      st = pqt_variant_object_field(&o, i, &k, &kn, &fv, &fl, &err);
      check_status(st, &err);
      if (st != VF_OK) break;
      contract(fv > val && fl >= 1 && (size_t)(fv - val) + fl <= vlen);
      vf_buf_reset(&out);
      check_status(pqt_variant_to_json(&m, fv, fl, &out, &err), &err);
    }
  }
  vf_buf_free(&out);
  return 0;
}
