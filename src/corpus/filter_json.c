/*
 * filter_json.c — the JSON tape the filter reads: filter texts and point payloads.
 *
 * Why a tape and not a tree of allocations: a payload is parsed once and then read by every
 * query's filter, in brute force by several threads at once.  A flat array of fixed-size nodes
 * in document order (containers know where they end) costs one allocation per batch of rows,
 * is read without pointer chasing, and a key lookup is a linear walk over an object's members,
 * which is what payloads of a handful of keys want.  Strings are decoded in place in the copy of
 * the text the tape keeps (a decoded string is never longer than its escaped form).
 *
 * Untrusted input (RFC 8259, strict): nesting is capped at FJ_MAX_DEPTH, every escape and UTF-8
 * sequence is checked, raw control characters in strings are refused, numbers follow the RFC
 * grammar, and the node count is capped at 2^32 - 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "filter_internal.h"

#define FJ_MAX_NODES ((size_t)UINT32_MAX - 1)

void fj_init(fj_tape *t) {
  memset(t, 0, sizeof *t);
  VF_BUF_INIT(&t->text, VF_BUF_MAX_ROWS_HELD);
}

void fj_free(fj_tape *t) {
  free(t->nodes);
  vf_buf_free(&t->text);
  memset(t, 0, sizeof *t);
}

void fj_clear(fj_tape *t) {
  t->n = 0;
  vf_buf_reset(&t->text);
}

typedef struct fj_ctx {
  fj_tape *t;
  char *s;      /* the copy in t->text (writable: strings are decoded in place) */
  size_t len, pos;
  uint64_t base; /* offset of s in t->text */
  const char *what;
  vf_error *err;
} fj_ctx;

static vf_status fj_fail(fj_ctx *c, const char *expected) {
  return vf_error_set(c->err, VF_ECORRUPT, "%s: invalid JSON at byte %zu: expected %s", c->what,
                      c->pos, expected);
}

static void fj_ws(fj_ctx *c) {
  while (c->pos < c->len && (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' ||
                             c->s[c->pos] == '\n' || c->s[c->pos] == '\r'))
    c->pos++;
}

static vf_status fj_push(fj_ctx *c, uint8_t type, uint32_t *idx) {
  fj_tape *t = c->t;
  if (t->n >= FJ_MAX_NODES)
    return vf_error_set(c->err, VF_ENOMEM, "%s: more than %zu JSON values", c->what, FJ_MAX_NODES);
  if (t->n == t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 256;
    if (ncap > FJ_MAX_NODES) ncap = FJ_MAX_NODES;
    fj_node *nn = vf_realloc(t->nodes, ncap * sizeof *nn);
    if (!nn) return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory for %zu JSON values", c->what, ncap);
    t->nodes = nn;
    t->cap = ncap;
  }
  fj_node *nd = &t->nodes[t->n];
  memset(nd, 0, sizeof *nd);
  nd->t = type;
  *idx = (uint32_t)t->n;
  t->n++;
  nd->end = (uint32_t)t->n;
  return VF_OK;
}

static int fj_hex(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

static bool fj_u4(fj_ctx *c, unsigned *out) {
  if (c->len - c->pos < 4) return false;
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    int h = fj_hex(c->s[c->pos + (size_t)i]);
    if (h < 0) return false;
    v = v * 16 + (unsigned)h;
  }
  c->pos += 4;
  *out = v;
  return true;
}

static size_t fj_utf8(char *d, unsigned cp) {
  if (cp < 0x80) {
    d[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    d[0] = (char)(0xC0 | (cp >> 6));
    d[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    d[0] = (char)(0xE0 | (cp >> 12));
    d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  d[0] = (char)(0xF0 | (cp >> 18));
  d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  d[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* a string at c->pos (the opening quote), decoded in place */
static vf_status fj_string(fj_ctx *c, uint32_t *idx) {
  c->pos++;
  size_t w = c->pos, start = c->pos;
  for (;;) {
    if (c->pos >= c->len) return fj_fail(c, "a closing '\"'");
    unsigned char ch = (unsigned char)c->s[c->pos];
    if (ch == '"') break;
    if (ch < 0x20) return fj_fail(c, "no raw control character in a string");
    if (ch >= 0x80) {
      size_t bad = 0, n = vf_utf8_seq((const uint8_t *)c->s + c->pos, c->len - c->pos, &bad);
      if (!n) return fj_fail(c, "well-formed UTF-8");
      memmove(c->s + w, c->s + c->pos, n);
      w += n;
      c->pos += n;
      continue;
    }
    if (ch != '\\') {
      c->s[w++] = (char)ch;
      c->pos++;
      continue;
    }
    c->pos++;
    if (c->pos >= c->len) return fj_fail(c, "an escape");
    char e = c->s[c->pos++];
    switch (e) {
    case '"': c->s[w++] = '"'; break;
    case '\\': c->s[w++] = '\\'; break;
    case '/': c->s[w++] = '/'; break;
    case 'b': c->s[w++] = '\b'; break;
    case 'f': c->s[w++] = '\f'; break;
    case 'n': c->s[w++] = '\n'; break;
    case 'r': c->s[w++] = '\r'; break;
    case 't': c->s[w++] = '\t'; break;
    case 'u': {
      unsigned cp;
      if (!fj_u4(c, &cp)) return fj_fail(c, "4 hex digits after \\u");
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        unsigned lo;
        if (c->len - c->pos < 6 || c->s[c->pos] != '\\' || c->s[c->pos + 1] != 'u')
          return fj_fail(c, "a low surrogate after a high surrogate");
        c->pos += 2;
        if (!fj_u4(c, &lo) || lo < 0xDC00 || lo > 0xDFFF)
          return fj_fail(c, "a low surrogate after a high surrogate");
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return fj_fail(c, "no lone low surrogate");
      }
      /* the escape took >= 6 bytes, the encoding <= 4: w stays behind pos */
      w += fj_utf8(c->s + w, cp);
      break;
    }
    default: return fj_fail(c, "a valid escape");
    }
  }
  c->s[w] = 0; /* NUL-terminated (w is at or before the closing quote, already read) */
  c->pos++;
  size_t n = w - start;
  if (n > UINT32_MAX) return vf_error_set(c->err, VF_EUNSUPPORTED, "%s: a string over 4 GiB", c->what);
  vf_status st = fj_push(c, FJ_STR, idx);
  if (st != VF_OK) return st;
  fj_node *nd = &c->t->nodes[*idx];
  nd->n = (uint32_t)n;
  nd->off = c->base + start;
  return VF_OK;
}

static vf_status fj_number(fj_ctx *c, uint32_t *idx) {
  size_t start = c->pos;
  bool integer = true;
  if (c->s[c->pos] == '-') c->pos++;
  if (c->pos >= c->len) return fj_fail(c, "a digit");
  if (c->s[c->pos] == '0') {
    c->pos++;
  } else if (c->s[c->pos] >= '1' && c->s[c->pos] <= '9') {
    while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') c->pos++;
  } else {
    return fj_fail(c, "a digit");
  }
  if (c->pos < c->len && c->s[c->pos] == '.') {
    integer = false;
    c->pos++;
    if (c->pos >= c->len || c->s[c->pos] < '0' || c->s[c->pos] > '9') return fj_fail(c, "a digit after '.'");
    while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') c->pos++;
  }
  if (c->pos < c->len && (c->s[c->pos] == 'e' || c->s[c->pos] == 'E')) {
    integer = false;
    c->pos++;
    if (c->pos < c->len && (c->s[c->pos] == '+' || c->s[c->pos] == '-')) c->pos++;
    if (c->pos >= c->len || c->s[c->pos] < '0' || c->s[c->pos] > '9') return fj_fail(c, "an exponent");
    while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') c->pos++;
  }
  char small[64], *num = small;
  size_t n = c->pos - start;
  if (n >= sizeof small && !(num = vf_malloc(n + 1)))
    return vf_error_set(c->err, VF_ENOMEM, "%s: out of memory", c->what);
  memcpy(num, c->s + start, n);
  num[n] = 0;
  vf_status st = VF_OK;
  VF_TRY(fj_push(c, FJ_NUM, idx));
  fj_node *nd = &c->t->nodes[*idx];
  nd->d = strtod(num, NULL);
  if (integer) {
    errno = 0;
    long long v = strtoll(num, NULL, 10);
    if (errno == 0) {
      nd->isint = 1;
      nd->i = (int64_t)v;
    }
  }
out:
  if (num != small) free(num);
  return st;
}

static bool fj_lit(fj_ctx *c, const char *w) {
  size_t n = strlen(w);
  if (c->len - c->pos < n || memcmp(c->s + c->pos, w, n) != 0) return false;
  c->pos += n;
  return true;
}

static vf_status fj_value(fj_ctx *c, int depth, uint32_t *idx);

static vf_status fj_container(fj_ctx *c, int depth, bool obj, uint32_t *idx) {
  if (depth >= FJ_MAX_DEPTH) return fj_fail(c, "nesting of at most 128 levels");
  vf_status st = fj_push(c, obj ? FJ_OBJ : FJ_ARR, idx);
  if (st != VF_OK) return st;
  uint32_t me = *idx, count = 0;
  c->pos++;
  fj_ws(c);
  char close = obj ? '}' : ']';
  if (c->pos < c->len && c->s[c->pos] == close) {
    c->pos++;
  } else {
    for (;;) {
      uint32_t k;
      if (obj) {
        fj_ws(c);
        if (c->pos >= c->len || c->s[c->pos] != '"') return fj_fail(c, "a member name");
        if ((st = fj_string(c, &k)) != VF_OK) return st;
        fj_ws(c);
        if (c->pos >= c->len || c->s[c->pos] != ':') return fj_fail(c, "':'");
        c->pos++;
      }
      if ((st = fj_value(c, depth + 1, &k)) != VF_OK) return st;
      count++;
      fj_ws(c);
      if (c->pos < c->len && c->s[c->pos] == ',') {
        c->pos++;
        continue;
      }
      if (c->pos < c->len && c->s[c->pos] == close) {
        c->pos++;
        break;
      }
      return fj_fail(c, obj ? "',' or '}'" : "',' or ']'");
    }
  }
  c->t->nodes[me].n = count;
  c->t->nodes[me].end = (uint32_t)c->t->n;
  return VF_OK;
}

static vf_status fj_value(fj_ctx *c, int depth, uint32_t *idx) {
  fj_ws(c);
  if (c->pos >= c->len) return fj_fail(c, "a value");
  char ch = c->s[c->pos];
  if (ch == '{') return fj_container(c, depth, true, idx);
  if (ch == '[') return fj_container(c, depth, false, idx);
  if (ch == '"') return fj_string(c, idx);
  if (ch == '-' || (ch >= '0' && ch <= '9')) return fj_number(c, idx);
  if (fj_lit(c, "true")) return fj_push(c, FJ_TRUE, idx);
  if (fj_lit(c, "false")) return fj_push(c, FJ_FALSE, idx);
  if (fj_lit(c, "null")) return fj_push(c, FJ_NULL, idx);
  return fj_fail(c, "a value");
}

/* fj_parse(): see filter_internal.h. */
vf_status fj_parse(fj_tape *t, const char *s, size_t len, bool obj_only, const char *what,
                   uint32_t *root, vf_error *err) {
  size_t n0 = t->n, l0 = t->text.len;
  fj_ctx c = {.t = t, .len = len, .what = what, .err = err, .base = t->text.len};
  vf_status st = vf_buf_append(&t->text, s, len, err);
  if (st != VF_OK) return st;
  st = vf_buf_append(&t->text, "", 1, err); /* strings stay NUL-safe to print */
  if (st != VF_OK) return st;
  c.s = (char *)t->text.data + c.base;
  fj_ws(&c);
  if (c.pos == len && obj_only) {
    VF_TRY(fj_push(&c, FJ_OBJ, root));
  } else {
    if (obj_only && (c.pos >= len || c.s[c.pos] != '{')) VF_FAIL(fj_fail(&c, "a JSON object"));
    VF_TRY(fj_value(&c, 0, root));
    fj_ws(&c);
    if (c.pos != len) VF_FAIL(fj_fail(&c, "the end of the text"));
  }
out:
  if (st != VF_OK) {
    t->n = n0;
    t->text.len = l0;
  }
  return st;
}

/* fj_get(): see filter_internal.h. */
uint32_t fj_get(const fj_tape *t, uint32_t obj, const char *key, size_t klen) {
  const fj_node *o = &t->nodes[obj];
  if (o->t != FJ_OBJ) return 0;
  uint32_t found = 0, i = obj + 1;
  for (uint32_t m = 0; m < o->n; m++) {
    const fj_node *k = &t->nodes[i];
    uint32_t v = i + 1;
    if (k->n == klen && memcmp(fj_str(t, k), key, klen) == 0) found = v;
    i = t->nodes[v].end;
  }
  return found;
}

/* fj_write(): see filter_internal.h. */
vf_status fj_write(const fj_tape *t, uint32_t i, vf_buf *out, vf_error *err) {
  const fj_node *nd = &t->nodes[i];
  switch (nd->t) {
  case FJ_NULL: return vf_json_raw(out, "null", err);
  case FJ_FALSE: return vf_json_raw(out, "false", err);
  case FJ_TRUE: return vf_json_raw(out, "true", err);
  case FJ_NUM: return nd->isint ? vf_json_i64(out, nd->i, err) : vf_json_f64(out, nd->d, err);
  case FJ_STR: return vf_json_string(out, fj_str(t, nd), nd->n, err);
  default: break;
  }
  bool obj = nd->t == FJ_OBJ;
  vf_status st = VF_OK;
  VF_TRY(vf_json_raw(out, obj ? "{" : "[", err));
  uint32_t j = i + 1;
  for (uint32_t m = 0; m < nd->n; m++) {
    if (m) VF_TRY(vf_json_raw(out, ",", err));
    if (obj) {
      VF_TRY(fj_write(t, j, out, err));
      VF_TRY(vf_json_raw(out, ":", err));
      j++;
    }
    VF_TRY(fj_write(t, j, out, err));
    j = t->nodes[j].end;
  }
  VF_TRY(vf_json_raw(out, obj ? "}" : "]", err));
out:
  return st;
}

/* flt_json_member(): see filter.h. */
vf_status flt_json_member(const char *text, size_t len, const char *key, vf_buf *out,
                          bool *found, vf_error *err) {
  *found = false;
  fj_tape t;
  fj_init(&t);
  uint32_t root;
  vf_status st = VF_OK;
  VF_TRY(fj_parse(&t, text, len, true, "payload", &root, err));
  uint32_t v = fj_get(&t, root, key, strlen(key));
  if (v) {
    *found = true;
    VF_TRY(fj_write(&t, v, out, err));
  }
out:
  fj_free(&t);
  return st;
}
