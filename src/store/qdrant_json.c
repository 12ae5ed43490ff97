/*
 * qdrant_json.c — a small DOM JSON reader (RFC 8259) for Qdrant's responses and the config's
 * `params` object.  Why not util: util only writes JSON (and validates objects); the Qdrant
 * store must read collection info, counts and query results.  Untrusted input: nesting is
 * capped at 64, every string escape is checked, numbers are checked against the RFC grammar,
 * and the entry count is bounded by the input length.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/qdrant_internal.h"

#define QJ_MAX_DEPTH 64

typedef struct qj_ctx {
  const char *s;
  size_t len, pos;
  const char *what;
  vf_error *err;
} qj_ctx;

static vf_status qj_fail(qj_ctx *c, const char *expected) {
  return vf_error_set(c->err, VF_ECORRUPT, "%s: invalid JSON at byte %zu: expected %s", c->what,
                      c->pos, expected);
}

static void qj_ws(qj_ctx *c) {
  while (c->pos < c->len &&
         (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' || c->s[c->pos] == '\n' ||
          c->s[c->pos] == '\r'))
    c->pos++;
}

static int qj_hex(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

static bool qj_u4(const char *s, size_t end, size_t *pos, unsigned *out) {
  if (end - *pos < 4) return false;
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int h = qj_hex(s[*pos + (size_t)i]);
    if (h < 0) return false;
    v = v * 16 + (unsigned)h;
  }
  *pos += 4;
  *out = v;
  return true;
}

/* qj_unescape(): see qdrant_internal.h. */
size_t qj_unescape(const char *s, size_t start, size_t end, char *d, size_t *n,
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
      if (!qj_u4(s, end, &pos, &cp)) {
        *expected = "4 hex digits after \\u";
        return pos;
      }
      if (cp >= 0xD800 && cp < 0xDC00) {
        unsigned lo;
        if (pos + 2 > end || s[pos] != '\\' || s[pos + 1] != 'u' ||
            (pos += 2, !qj_u4(s, end, &pos, &lo)) || lo < 0xDC00 || lo > 0xDFFF) {
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
static vf_status qj_string(qj_ctx *c, char **out) {
  c->pos++;
  size_t start = c->pos;
  while (c->pos < c->len && c->s[c->pos] != '"') {
    if (c->s[c->pos] == '\\') c->pos++;
    c->pos++;
  }
  if (c->pos >= c->len) return qj_fail(c, "a closing '\"'");
  size_t end = c->pos;
  char *d = vf_malloc(end - start + 1);
  if (!d) return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory", c->what);
  size_t n = 0;
  const char *expected;
  size_t at = qj_unescape(c->s, start, end, d, &n, &expected);
  if (expected) {
    free(d);
    c->pos = at;
    return qj_fail(c, expected);
  }
  d[n] = 0;
  c->pos = end + 1;
  *out = d;
  return VF_OK;
}

/* qj_scan_number(): see qdrant_internal.h. */
size_t qj_scan_number(const char *s, size_t len, size_t p, const char **expected) {
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

static vf_status qj_number(qj_ctx *c, qj_val *v) {
  const char *expected;
  size_t p = qj_scan_number(c->s, c->len, c->pos, &expected);
  if (expected) return qj_fail(c, expected);
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
  v->t = QJ_NUM;
  c->pos = p;
  return VF_OK;
}

static bool qj_lit(qj_ctx *c, const char *lit) {
  size_t n = strlen(lit);
  if (c->len - c->pos < n || memcmp(c->s + c->pos, lit, n) != 0) return false;
  c->pos += n;
  return true;
}

static vf_status qj_value(qj_ctx *c, qj_val *v, int depth);

static vf_status qj_push(qj_ctx *c, qj_val *v, size_t *cap, bool obj) {
  if (v->n == *cap) {
    size_t nc = *cap ? *cap * 2 : 4;
    qj_val *ni = vf_realloc(v->items, nc * sizeof *ni);
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

static vf_status qj_value(qj_ctx *c, qj_val *v, int depth) {
  memset(v, 0, sizeof *v);
  qj_ws(c);
  if (c->pos >= c->len) return qj_fail(c, "a value");
  size_t start = c->pos;
  vf_status st = VF_OK;
  char ch = c->s[c->pos];
  if (ch == '{' || ch == '[') {
    if (depth >= QJ_MAX_DEPTH) return qj_fail(c, "nesting of at most 64 levels");
    bool obj = ch == '{';
    v->t = obj ? QJ_OBJ : QJ_ARR;
    c->pos++;
    size_t cap = 0;
    qj_ws(c);
    if (c->pos < c->len && c->s[c->pos] == (obj ? '}' : ']')) {
      c->pos++;
    } else {
      for (;;) {
        if ((st = qj_push(c, v, &cap, obj)) != VF_OK) return st;
        if (obj) {
          qj_ws(c);
          if (c->pos >= c->len || c->s[c->pos] != '"') return qj_fail(c, "a member name");
          if ((st = qj_string(c, &v->keys[v->n - 1])) != VF_OK) return st;
          qj_ws(c);
          if (c->pos >= c->len || c->s[c->pos] != ':') return qj_fail(c, "':'");
          c->pos++;
        }
        if ((st = qj_value(c, &v->items[v->n - 1], depth + 1)) != VF_OK) return st;
        qj_ws(c);
        if (c->pos < c->len && c->s[c->pos] == ',') {
          c->pos++;
          continue;
        }
        if (c->pos < c->len && c->s[c->pos] == (obj ? '}' : ']')) {
          c->pos++;
          break;
        }
        return qj_fail(c, obj ? "',' or '}'" : "',' or ']'");
      }
    }
  } else if (ch == '"') {
    v->t = QJ_STR;
    st = qj_string(c, &v->str);
  } else if (qj_lit(c, "true")) {
    v->t = QJ_BOOL;
    v->b = true;
  } else if (qj_lit(c, "false")) {
    v->t = QJ_BOOL;
  } else if (qj_lit(c, "null")) {
    v->t = QJ_NULL;
  } else {
    st = qj_number(c, v);
  }
  v->raw = c->s + start;
  v->raw_len = c->pos - start;
  return st;
}

/* qj_parse(): see qdrant_internal.h. */
vf_status qj_parse(const char *text, size_t len, const char *what, qj_val *out, vf_error *err) {
  qj_ctx c = {text, len, 0, what, err};
  vf_status st = qj_value(&c, out, 0);
  if (st == VF_OK) {
    qj_ws(&c);
    if (c.pos != c.len) st = qj_fail(&c, "the end of the text");
  }
  if (st != VF_OK) qj_free(out);
  return st;
}

void qj_free(qj_val *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; i++) {
    if (v->items) qj_free(&v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
  memset(v, 0, sizeof *v);
}

const qj_val *qj_get(const qj_val *v, const char *key) {
  if (!v || v->t != QJ_OBJ) return NULL;
  for (size_t i = 0; i < v->n; i++)
    if (v->keys[i] && strcmp(v->keys[i], key) == 0) return &v->items[i];
  return NULL;
}

const qj_val *qj_path(const qj_val *v, const char *dotted) {
  char part[128];
  const char *p = dotted;
  while (v && *p) {
    size_t n = strcspn(p, ".");
    if (n >= sizeof part) return NULL;
    memcpy(part, p, n);
    part[n] = 0;
    v = qj_get(v, part);
    p += n;
    if (*p == '.') p++;
  }
  return v;
}
