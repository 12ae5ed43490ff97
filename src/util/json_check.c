/*
 * json_check.c — a strict RFC 8259 validator for JSON object texts.
 *
 * Why: the loader inserts a string column's value into a point's payload as a JSON object when
 * the string holds one (DESIGN.md "Configuration", payload_fields).  The text is then copied
 * verbatim into the payload, so it must be exactly valid JSON — anything the validator lets
 * through ends up in every store and every tool that reads the payload.  Strict means:
 * RFC 8259 grammar only (no comments, no trailing commas, no NaN/Infinity, no leading zeros, no
 * single quotes), well-formed UTF-8 (Unicode Table 3-7) everywhere, no raw control characters in
 * strings, \u escapes with paired surrogates.  Nesting is capped (VF_JSON_CHECK_MAX_DEPTH) and
 * the walk is iterative, so a hostile text costs one linear pass and no recursion.
 */
#include "vforge/util.h"

#define VF_JSON_CHECK_MAX_DEPTH 512

typedef struct jc {
  const uint8_t *p;
  const uint8_t *end;
} jc;

static void jc_ws(jc *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static int jc_hex4(const uint8_t *p, const uint8_t *end, unsigned *v) {
  if (end - p < 4) return 0;
  unsigned x = 0;
  for (int i = 0; i < 4; i++) {
    uint8_t ch = p[i];
    unsigned d;
    if (ch >= '0' && ch <= '9')
      d = (unsigned)(ch - '0');
    else if (ch >= 'a' && ch <= 'f')
      d = (unsigned)(ch - 'a' + 10);
    else if (ch >= 'A' && ch <= 'F')
      d = (unsigned)(ch - 'A' + 10);
    else
      return 0;
    x = x * 16 + d;
  }
  *v = x;
  return 1;
}

/* A string starting at the opening quote. */
static bool jc_string(jc *c) {
  if (c->p >= c->end || *c->p != '"') return false;
  c->p++;
  while (c->p < c->end) {
    uint8_t ch = *c->p;
    if (ch == '"') {
      c->p++;
      return true;
    }
    if (ch < 0x20) return false;
    if (ch == '\\') {
      if (c->end - c->p < 2) return false;
      uint8_t e = c->p[1];
      if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
          e == 't') {
        c->p += 2;
        continue;
      }
      if (e != 'u') return false;
      unsigned u;
      if (!jc_hex4(c->p + 2, c->end, &u)) return false;
      c->p += 6;
      if (u >= 0xdc00 && u <= 0xdfff) return false; /* lone low surrogate */
      if (u >= 0xd800 && u <= 0xdbff) {             /* must be followed by a low surrogate */
        unsigned lo;
        if (c->end - c->p < 6 || c->p[0] != '\\' || c->p[1] != 'u' ||
            !jc_hex4(c->p + 2, c->end, &lo) || lo < 0xdc00 || lo > 0xdfff)
          return false;
        c->p += 6;
      }
      continue;
    }
    if (ch < 0x80) {
      c->p++;
      continue;
    }
    size_t bad;
    size_t k = vf_utf8_seq(c->p, (size_t)(c->end - c->p), &bad);
    if (!k) return false;
    c->p += k;
  }
  return false;
}

static bool jc_digit(const jc *c) {
  return c->p < c->end && *c->p >= '0' && *c->p <= '9';
}

static bool jc_number(jc *c) {
  if (c->p < c->end && *c->p == '-') c->p++;
  if (!jc_digit(c)) return false;
  if (*c->p == '0') {
    c->p++;
  } else {
    while (jc_digit(c))
      c->p++;
  }
  if (c->p < c->end && *c->p == '.') {
    c->p++;
    if (!jc_digit(c)) return false;
    while (jc_digit(c))
      c->p++;
  }
  if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
    c->p++;
    if (c->p < c->end && (*c->p == '+' || *c->p == '-')) c->p++;
    if (!jc_digit(c)) return false;
    while (jc_digit(c))
      c->p++;
  }
  return true;
}

static bool jc_literal(jc *c, const char *lit, size_t n) {
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0) return false;
  c->p += n;
  return true;
}

/*! vf_json_is_object() : see util.h. */
bool vf_json_is_object(const char *text, size_t len) {
  if (!text) return false;
  jc c = {(const uint8_t *)text, (const uint8_t *)text + len};
  /* stack[d]: 1 = inside an object, 0 = inside an array */
  uint8_t stack[VF_JSON_CHECK_MAX_DEPTH];
  int depth = 0;
  jc_ws(&c);
  if (c.p >= c.end || *c.p != '{') return false;
  /* States: expecting a value (after ':' or ',' in an array or '[') or a key. */
  for (;;) {
    /* here: at the start of a value */
    jc_ws(&c);
    if (c.p >= c.end) return false;
    uint8_t ch = *c.p;
    bool scalar = true;
    if (ch == '{' || ch == '[') {
      if (depth >= VF_JSON_CHECK_MAX_DEPTH) return false;
      stack[depth++] = ch == '{';
      c.p++;
      jc_ws(&c);
      if (c.p < c.end && *c.p == (ch == '{' ? '}' : ']')) {
        c.p++;
        depth--;
      } else if (ch == '{') {
        if (!jc_string(&c)) return false;
        jc_ws(&c);
        if (c.p >= c.end || *c.p != ':') return false;
        c.p++;
        continue; /* the member's value */
      } else {
        continue; /* the first element */
      }
      scalar = false;
    }
    if (scalar) {
      bool ok;
      if (ch == '"')
        ok = jc_string(&c);
      else if (ch == 't')
        ok = jc_literal(&c, "true", 4);
      else if (ch == 'f')
        ok = jc_literal(&c, "false", 5);
      else if (ch == 'n')
        ok = jc_literal(&c, "null", 4);
      else
        ok = jc_number(&c);
      if (!ok) return false;
    }
    /* after a complete value: close containers or move to the next member/element */
    for (;;) {
      if (depth == 0) {
        jc_ws(&c);
        return c.p == c.end;
      }
      jc_ws(&c);
      if (c.p >= c.end) return false;
      uint8_t in_obj = stack[depth - 1];
      if (*c.p == (in_obj ? '}' : ']')) {
        c.p++;
        depth--;
        continue;
      }
      if (*c.p != ',') return false;
      c.p++;
      if (in_obj) {
        jc_ws(&c);
        if (!jc_string(&c)) return false;
        jc_ws(&c);
        if (c.p >= c.end || *c.p != ':') return false;
        c.p++;
      }
      break;
    }
  }
}
