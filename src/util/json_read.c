/*
 * json_read.c — a small DOM JSON reader (RFC 8259) for untrusted text: Qdrant's responses, the
 * config's `params` object, the HF tree listing, the dist manifest, store and bench records.
 * Why in util: every layer above reads JSON (issue 15 moved it down from the Qdrant store, so
 * io and dist no longer include a store header).  Untrusted input: nesting is
 * capped at 64, every string escape is checked, numbers are checked against the RFC grammar,
 * and the entry count is bounded by the input length.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vforge/util.h"

#define VF_JSON_MAX_DEPTH 64

typedef struct jr_ctx {
  const char *s;
  size_t len, pos;
  const char *what;
  vf_error *err;
} jr_ctx;

static vf_status jr_fail(jr_ctx *c, const char *expected) {
  return vf_error_set(c->err, VF_ECORRUPT, "%s: invalid JSON at byte %zu: expected %s", c->what,
                      c->pos, expected);
}

static void jr_ws(jr_ctx *c) {
  while (c->pos < c->len &&
         (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' || c->s[c->pos] == '\n' ||
          c->s[c->pos] == '\r'))
    c->pos++;
}

static int jr_hex(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

static bool jr_u4(const char *s, size_t end, size_t *pos, unsigned *out) {
  if (end - *pos < 4) return false;
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int h = jr_hex(s[*pos + (size_t)i]);
    if (h < 0) return false;
    v = v * 16 + (unsigned)h;
  }
  *pos += 4;
  *out = v;
  return true;
}

/* vf_json_unescape(): see qdrant_internal.h. */
size_t vf_json_unescape(const char *s, size_t start, size_t end, char *d, size_t *n,
                   const char **expected) {
  size_t pos = start, w = 0;
  while (pos < end) {
    unsigned char ch = (unsigned char)s[pos];
    if (ch < 0x20) {
      *expected = "no raw control character in a string";
      return pos;
    }
    if (ch != '\\') {
      d[w++] = (char)ch;
      pos++;
      continue;
    }
    if (++pos >= end) {
      *expected = "a valid escape";
      return pos;
    }
    char e = s[pos++];
    unsigned cp;
    switch (e) {
    case '"': d[w++] = '"'; break;
    case '\\': d[w++] = '\\'; break;
    case '/': d[w++] = '/'; break;
    case 'b': d[w++] = '\b'; break;
    case 'f': d[w++] = '\f'; break;
    case 'n': d[w++] = '\n'; break;
    case 'r': d[w++] = '\r'; break;
    case 't': d[w++] = '\t'; break;
    case 'u':
      if (!jr_u4(s, end, &pos, &cp)) {
        *expected = "4 hex digits after \\u";
        return pos;
      }
      if (cp >= 0xD800 && cp < 0xDC00) {
        unsigned lo;
        if (pos + 2 > end || s[pos] != '\\' || s[pos + 1] != 'u' ||
            (pos += 2, !jr_u4(s, end, &pos, &lo)) || lo < 0xDC00 || lo > 0xDFFF) {
          *expected = "a low surrogate escape";
          return pos;
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        *expected = "no lone low surrogate";
        return pos;
      }
      /* UTF-8 of cp: never longer than the 6+ escape bytes it came from */
      if (cp < 0x80) {
        d[w++] = (char)cp;
      } else if (cp < 0x800) {
        d[w++] = (char)(0xC0 | (cp >> 6));
        d[w++] = (char)(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        d[w++] = (char)(0xE0 | (cp >> 12));
        d[w++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[w++] = (char)(0x80 | (cp & 0x3F));
      } else {
        d[w++] = (char)(0xF0 | (cp >> 18));
        d[w++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        d[w++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[w++] = (char)(0x80 | (cp & 0x3F));
      }
      break;
    default: *expected = "a valid escape"; return pos;
    }
  }
  *n = w;
  *expected = NULL;
  return end;
}

/* A string at c->pos (the opening quote); decoded into a new NUL-terminated buffer. */
static vf_status jr_string(jr_ctx *c, char **out) {
  c->pos++;
  size_t start = c->pos;
  while (c->pos < c->len && c->s[c->pos] != '"') {
    if (c->s[c->pos] == '\\') c->pos++;
    c->pos++;
  }
  if (c->pos >= c->len) return jr_fail(c, "a closing '\"'");
  size_t end = c->pos;
  char *d = vf_malloc(end - start + 1);
  if (!d) return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory", c->what);
  size_t n = 0;
  const char *expected;
  size_t at = vf_json_unescape(c->s, start, end, d, &n, &expected);
  if (expected) {
    free(d);
    c->pos = at;
    return jr_fail(c, expected);
  }
  d[n] = 0;
  c->pos = end + 1;
  *out = d;
  return VF_OK;
}

/* vf_json_scan_number(): see qdrant_internal.h. */
size_t vf_json_scan_number(const char *s, size_t len, size_t p, const char **expected) {
  *expected = "a value";
  if (p < len && s[p] == '-') p++;
  if (p >= len || s[p] < '0' || s[p] > '9') return 0;
  if (s[p] == '0')
    p++;
  else
    while (p < len && s[p] >= '0' && s[p] <= '9')
      p++;
  if (p < len && s[p] == '.') {
    p++;
    *expected = "a digit after '.'";
    if (p >= len || s[p] < '0' || s[p] > '9') return 0;
    while (p < len && s[p] >= '0' && s[p] <= '9')
      p++;
  }
  if (p < len && (s[p] == 'e' || s[p] == 'E')) {
    p++;
    if (p < len && (s[p] == '+' || s[p] == '-')) p++;
    *expected = "an exponent";
    if (p >= len || s[p] < '0' || s[p] > '9') return 0;
    while (p < len && s[p] >= '0' && s[p] <= '9')
      p++;
  }
  *expected = NULL;
  return p;
}

static vf_status jr_number(jr_ctx *c, vf_json_val *v) {
  const char *expected;
  size_t p = vf_json_scan_number(c->s, c->len, c->pos, &expected);
  if (expected) return jr_fail(c, expected);
  char tmp[64];
  size_t n = p - c->pos;
  if (n >= sizeof tmp) {
    /* long numbers: strtod needs a terminated copy */
    char *big = vf_strndup(c->s + c->pos, n);
    if (!big) return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory", c->what);
    v->num = strtod(big, NULL);
    free(big);
  } else {
    memcpy(tmp, c->s + c->pos, n);
    tmp[n] = 0;
    v->num = strtod(tmp, NULL);
  }
  v->t = VF_JSON_NUM;
  c->pos = p;
  return VF_OK;
}

static bool jr_lit(jr_ctx *c, const char *lit) {
  size_t n = strlen(lit);
  if (c->len - c->pos < n || memcmp(c->s + c->pos, lit, n) != 0) return false;
  c->pos += n;
  return true;
}

static vf_status jr_value(jr_ctx *c, vf_json_val *v, int depth);

static vf_status jr_push(jr_ctx *c, vf_json_val *v, size_t *cap, bool obj) {
  if (v->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 4;
    vf_json_val *ni = vf_realloc(v->items, nc * sizeof *ni);
    if (!ni) return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory", c->what);
    v->items = ni;
    if (obj) {
      char **nk = vf_realloc(v->keys, nc * sizeof *nk);
      if (!nk) return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory", c->what);
      v->keys = nk;
    }
    *cap = nc;
  }
  memset(&v->items[v->n], 0, sizeof v->items[0]);
  if (obj) v->keys[v->n] = NULL;
  v->n++;
  return VF_OK;
}

static vf_status jr_value(jr_ctx *c, vf_json_val *v, int depth) {
  memset(v, 0, sizeof *v);
  jr_ws(c);
  if (c->pos >= c->len) return jr_fail(c, "a value");
  size_t start = c->pos;
  vf_status st = VF_OK;
  char ch = c->s[c->pos];
  if (ch == '{' || ch == '[') {
    if (depth >= VF_JSON_MAX_DEPTH) return jr_fail(c, "nesting of at most 64 levels");
    bool obj = ch == '{';
    v->t = obj ? VF_JSON_OBJ : VF_JSON_ARR;
    c->pos++;
    size_t cap = 0;
    jr_ws(c);
    if (c->pos < c->len && c->s[c->pos] == (obj ? '}' : ']')) {
      c->pos++;
    } else {
      for (;;) {
        if ((st = jr_push(c, v, &cap, obj)) != VF_OK) return st;
        if (obj) {
          jr_ws(c);
          if (c->pos >= c->len || c->s[c->pos] != '"') return jr_fail(c, "a member name");
          if ((st = jr_string(c, &v->keys[v->n - 1])) != VF_OK) return st;
          jr_ws(c);
          if (c->pos >= c->len || c->s[c->pos] != ':') return jr_fail(c, "':'");
          c->pos++;
        }
        if ((st = jr_value(c, &v->items[v->n - 1], depth + 1)) != VF_OK) return st;
        jr_ws(c);
        if (c->pos < c->len && c->s[c->pos] == ',') {
          c->pos++;
          continue;
        }
        if (c->pos < c->len && c->s[c->pos] == (obj ? '}' : ']')) {
          c->pos++;
          break;
        }
        return jr_fail(c, obj ? "',' or '}'" : "',' or ']'");
      }
    }
  } else if (ch == '"') {
    v->t = VF_JSON_STR;
    st = jr_string(c, &v->str);
  } else if (jr_lit(c, "true")) {
    v->t = VF_JSON_BOOL;
    v->b = true;
  } else if (jr_lit(c, "false")) {
    v->t = VF_JSON_BOOL;
  } else if (jr_lit(c, "null")) {
    v->t = VF_JSON_NULL;
  } else {
    st = jr_number(c, v);
  }
  v->raw = c->s + start;
  v->raw_len = c->pos - start;
  return st;
}

/* vf_json_parse(): see qdrant_internal.h. */
vf_status vf_json_parse(const char *text, size_t len, const char *what, vf_json_val *out, vf_error *err) {
  jr_ctx c = {text, len, 0, what, err};
  vf_status st = VF_OK;
  VF_TRY(jr_value(&c, out, 0));
  jr_ws(&c);
  if (c.pos != c.len) VF_FAIL(jr_fail(&c, "the end of the text"));
out:
  if (st != VF_OK) vf_json_free(out);
  return st;
}

void vf_json_free(vf_json_val *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; i++) {
    if (v->items) vf_json_free(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
  memset(v, 0, sizeof *v);
}

const vf_json_val *vf_json_get(const vf_json_val *v, const char *key) {
  if (!v || v->t != VF_JSON_OBJ) return NULL;
  for (size_t i = 0; i < v->n; i++)
    if (v->keys[i] && strcmp(v->keys[i], key) == 0) return &v->items[i];
  return NULL;
}

const vf_json_val *vf_json_path(const vf_json_val *v, const char *dotted) {
  char part[128];
  const char *p = dotted;
  while (v && *p) {
    size_t n = strcspn(p, ".");
    if (n >= sizeof part) return NULL;
    memcpy(part, p, n);
    part[n] = 0;
    v = vf_json_get(v, part);
    p += n;
    if (*p == '.') p++;
  }
  return v;
}
