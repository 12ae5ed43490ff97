/*
 * json.c — JSON token writers appending to a vf_buf (RFC 8259).
 *
 * Why hand-written: output must be byte-stable across platforms and always valid JSON, whatever
 * the data holds.  Numbers: float32 printed with 9 significant digits and doubles with 17, the
 * counts that round-trip (IEEE 754 binary32/binary64); NaN and the infinities have no JSON number
 * form, so they are the strings "NaN", "Infinity", "-Infinity" (the spelling Python's json and
 * JavaScript use).  Strings: '"' and '\\' escaped, every control character below 0x20 as
 * \u00XX (RFC 8259 section 7), and each maximal ill-formed UTF-8 subpart replaced by U+FFFD
 * (Unicode 15 section 3.9, "U+FFFD substitution of maximal subparts"), so a file name or string
 * column with bad bytes can never produce unparseable output.
 */
#include <math.h>
#include <stdio.h>

#include "vforge/util.h"

/* vf_utf8_seq(): see util.h. */
size_t vf_utf8_seq(const uint8_t *s, size_t n, size_t *bad) {
  uint8_t c = s[0];
  size_t need;
  uint8_t lo = 0x80, hi = 0xbf;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    need = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    need = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    *bad = 1;
    return 0;
  }
  for (size_t i = 1; i < need; i++) {
    uint8_t l = (i == 1) ? lo : 0x80, h = (i == 1) ? hi : 0xbf;
    if (i >= n || s[i] < l || s[i] > h) {
      *bad = i;
      return 0;
    }
  }
  return need;
}

/* vf_json_string(): see util.h.  Appends a quoted, escaped string. */
vf_status vf_json_string(vf_buf *b, const char *s, size_t len, vf_error *err) {
  static const char hex[] = "0123456789abcdef";
  const uint8_t *p = (const uint8_t *)s;
  /* first pass: the exact escaped size, so the reserve is neither short nor a spurious
   * ceiling failure on a buffer with a tight max */
  size_t out = 2;
  for (size_t j = 0; j < len;) {
    uint8_t c = p[j];
    size_t add, adv = 1;
    if (c == '"' || c == '\\') {
      add = 2;
    } else if (c < 0x20) {
      add = 6;
    } else if (c < 0x80) {
      add = 1;
    } else {
      size_t bad = 0;
      size_t k = vf_utf8_seq(p + j, len - j, &bad);
      add = k ? k : 3;
      adv = k ? k : bad;
    }
    if (out > SIZE_MAX - add)
      return vf_error_set(err, VF_ENOMEM, "JSON string of %zu bytes is too long", len);
    out += add;
    j += adv;
  }
  vf_status st = vf_buf_reserve(b, out, err);
  if (st != VF_OK) return st;
  vf_buf_putc(b, '"');
  size_t i = 0;
  while (i < len) {
    uint8_t c = p[i];
    if (c == '"' || c == '\\') {
      vf_buf_putc(b, '\\');
      vf_buf_putc(b, (char)c);
      i++;
    } else if (c < 0x20) {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      vf_buf_put(b, e, 6);
      i++;
    } else if (c < 0x80) {
      vf_buf_putc(b, (char)c);
      i++;
    } else {
      size_t bad = 0;
      size_t k = vf_utf8_seq(p + i, len - i, &bad);
      if (k) {
        vf_buf_put(b, p + i, k);
        i += k;
      } else {
        vf_buf_put(b, "\xef\xbf\xbd", 3);
        i += bad;
      }
    }
  }
  vf_buf_putc(b, '"');
  return VF_OK;
}

static vf_status json_nonfinite(vf_buf *b, double v, vf_error *err) {
  if (isnan(v)) return vf_buf_append(b, "\"NaN\"", 5, err);
  if (v > 0) return vf_buf_append(b, "\"Infinity\"", 10, err);
  return vf_buf_append(b, "\"-Infinity\"", 11, err);
}

static vf_status json_number(vf_buf *b, double v, int digits, vf_error *err) {
  char tmp[64];
  int n = snprintf(tmp, sizeof tmp, "%.*g", digits, v);
  if (n <= 0 || (size_t)n >= sizeof tmp)
    return vf_error_set(err, VF_EINTERNAL, "JSON number formatting failed");
  return vf_buf_append(b, tmp, (size_t)n, err);
}

/* vf_json_f32(): see util.h.  9 significant digits; non-finite values as strings. */
vf_status vf_json_f32(vf_buf *b, float v, vf_error *err) {
  if (!isfinite(v)) return json_nonfinite(b, (double)v, err);
  return json_number(b, (double)v, 9, err);
}

/* vf_json_f64(): see util.h.  17 significant digits; non-finite values as strings. */
vf_status vf_json_f64(vf_buf *b, double v, vf_error *err) {
  if (!isfinite(v)) return json_nonfinite(b, v, err);
  return json_number(b, v, 17, err);
}

/* vf_json_i64(): see util.h. */
vf_status vf_json_i64(vf_buf *b, int64_t v, vf_error *err) {
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
  return vf_buf_append(b, tmp, (size_t)n, err);
}

/* vf_json_u64(): see util.h. */
vf_status vf_json_u64(vf_buf *b, uint64_t v, vf_error *err) {
  char tmp[32];
  int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
  return vf_buf_append(b, tmp, (size_t)n, err);
}

/* vf_json_raw(): see util.h.  Appends `s` verbatim; the caller guarantees it is valid JSON. */
vf_status vf_json_raw(vf_buf *b, const char *s, vf_error *err) {
  return vf_buf_append(b, s, strlen(s), err);
}

/* vf_base64_encode(): see util.h. */
size_t vf_base64_encode(const uint8_t *p, size_t n, char *out) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16;
    if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
    if (i + 2 < n) v |= p[i + 2];
    out[o++] = alphabet[(v >> 18) & 63];
    out[o++] = alphabet[(v >> 12) & 63];
    out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
    out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
  }
  return o;
}

/* vf_json_base64(): see util.h.  The alphabet needs no JSON escaping. */
vf_status vf_json_base64(vf_buf *b, const void *p, size_t n, vf_error *err) {
  size_t len = vf_base64_len(n);
  if (len < n) return vf_error_set(err, VF_ENOMEM, "base64 of %zu bytes overflows", n);
  vf_status st = vf_buf_reserve(b, len + 2, err);
  if (st != VF_OK) return st;
  vf_buf_putc(b, '"');
  b->len += vf_base64_encode(p, n, (char *)b->data + b->len);
  vf_buf_putc(b, '"');
  return VF_OK;
}
