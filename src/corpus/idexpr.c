/*
 * idexpr.c — the id_expression language (DESIGN.md "Point ids"; grammar in corpus.h).
 *
 * Why a tiny hand-written parser and not SQL: the expression is evaluated once per row on the
 * hot path and must give the same ids as the existing tools, so the language is closed: a handful
 * of forms, each compiled into a small tagged struct at parse time.  Errors name the expression
 * and the 1-based column of the offending token, so a config typo is found at start-up.
 *
 *   expr  := 'vf_point_id' '(' 'filename' ',' 'file_row_number' ')'
 *          | 'make_point_id' '(' sexpr ',' iexpr ')'
 *          | 'hash' '(' column ')' | 'uuid' '(' ')' | 'row' | column
 *   sexpr := 'filename' | 'literal' | column
 *   iexpr := 'file_row_number' | 'row' | column | integer
 *   column:= identifier | "quoted identifier"   ("" inside quotes is one ")
 * Function names and keywords are case-insensitive; column names are not.  A column that would
 * collide with a keyword (a column called "row") is written quoted.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

#include "internal.h"

typedef enum idx_kind { IDX_POINT_ID, IDX_COLUMN, IDX_ROW, IDX_HASH, IDX_UUID } idx_kind;
typedef enum idx_str { IDS_FILENAME, IDS_LITERAL, IDS_COLUMN } idx_str;
typedef enum idx_int { IDI_FILE_ROW, IDI_ROW, IDI_COLUMN, IDI_LITERAL } idx_int;

struct corpus_idexpr {
  idx_kind kind;
  idx_str skind;
  idx_int ikind;
  char *sval;    /* IDS_LITERAL text, or the column of IDS_COLUMN / IDX_COLUMN / IDX_HASH */
  char *icol;    /* IDI_COLUMN */
  bool ineg;     /* IDI_LITERAL sign */
  uint64_t ival; /* IDI_LITERAL magnitude */
  const char *cols[2];
  int ncols;
};

/* ------------------------------------------------------------------ tokens */

typedef enum tok_kind {
  T_END,
  T_IDENT,
  T_QIDENT,
  T_STRING,
  T_INT,
  T_LPAREN,
  T_RPAREN,
  T_COMMA
} tok_kind;

typedef struct tok {
  tok_kind kind;
  size_t pos; /* offset in the text */
  char *text; /* owned: identifier / unquoted string / digits */
  bool neg;
  uint64_t num;
} tok;

typedef struct parser {
  const char *src;
  size_t pos;
  tok cur;
  vf_error *err;
} parser;

static vf_status perr(parser *p, size_t pos, const char *what) {
  return vf_error_set(p->err, VF_ECONFIG, "id_expression \"%s\": %s at column %zu", p->src, what,
                      pos + 1);
}

static vf_status next(parser *p) {
  free(p->cur.text);
  memset(&p->cur, 0, sizeof p->cur);
  const char *s = p->src;
  while (s[p->pos] == ' ' || s[p->pos] == '\t' || s[p->pos] == '\n' || s[p->pos] == '\r')
    p->pos++;
  size_t start = p->pos;
  p->cur.pos = start;
  char c = s[start];
  if (c == '\0') {
    p->cur.kind = T_END;
    return VF_OK;
  }
  if (c == '(' || c == ')' || c == ',') {
    p->cur.kind = c == '(' ? T_LPAREN : c == ')' ? T_RPAREN : T_COMMA;
    p->pos++;
    return VF_OK;
  }
  if (isalpha((unsigned char)c) || c == '_') {
    size_t e = start;
    while (isalnum((unsigned char)s[e]) || s[e] == '_')
      e++;
    p->cur.kind = T_IDENT;
    p->cur.text = vf_strndup(s + start, e - start);
    p->pos = e;
    return p->cur.text ? VF_OK : vf_error_set(p->err, VF_ENOMEM, "out of memory");
  }
  if (isdigit((unsigned char)c) || (c == '-' && isdigit((unsigned char)s[start + 1]))) {
    size_t e = start;
    bool neg = false;
    if (s[e] == '-') {
      neg = true;
      e++;
    }
    uint64_t v = 0;
    while (isdigit((unsigned char)s[e])) {
      unsigned d = (unsigned)(s[e] - '0');
      if (v > (UINT64_MAX - d) / 10) return perr(p, start, "integer literal out of range");
      v = v * 10 + d;
      e++;
    }
    if (isalpha((unsigned char)s[e]) || s[e] == '_' || s[e] == '.')
      return perr(p, start, "malformed integer literal");
    if (neg && v > (uint64_t)INT64_MAX + 1) return perr(p, start, "integer literal out of range");
    p->cur.kind = T_INT;
    p->cur.neg = neg && v != 0;
    p->cur.num = v;
    p->pos = e;
    return VF_OK;
  }
  if (c == '\'' || c == '"') {
    /* quoted: the quote char doubled stands for itself */
    size_t len = strlen(s + start);
    char *buf = malloc(len + 1);
    if (!buf) return vf_error_set(p->err, VF_ENOMEM, "out of memory");
    size_t n = 0, e = start + 1;
    for (;;) {
      if (s[e] == '\0') {
        free(buf);
        return perr(p, start,
                    c == '\'' ? "unterminated string literal" : "unterminated quoted column name");
      }
      if (s[e] == c) {
        if (s[e + 1] == c) {
          buf[n++] = c;
          e += 2;
          continue;
        }
        e++;
        break;
      }
      buf[n++] = s[e++];
    }
    buf[n] = '\0';
    if (c == '"' && n == 0) {
      free(buf);
      return perr(p, start, "empty quoted column name");
    }
    p->cur.kind = c == '\'' ? T_STRING : T_QIDENT;
    p->cur.text = buf;
    p->pos = e;
    return VF_OK;
  }
  char what[64];
  if (isprint((unsigned char)c))
    snprintf(what, sizeof what, "unexpected character '%c'", c);
  else
    snprintf(what, sizeof what, "unexpected byte 0x%02x", (unsigned)(unsigned char)c);
  return perr(p, start, what);
}

static bool is_kw(const tok *t, const char *kw) {
  return t->kind == T_IDENT && strcasecmp(t->text, kw) == 0;
}

static bool is_reserved(const tok *t) {
  static const char *const kws[] = {
      "filename", "file_row_number", "row", "vf_point_id", "make_point_id", "hash", "uuid"};
  for (size_t i = 0; i < sizeof kws / sizeof kws[0]; i++)
    if (is_kw(t, kws[i])) return true;
  return false;
}

static vf_status expect(parser *p, tok_kind k, const char *what) {
  if (p->cur.kind != k) {
    char msg[128];
    snprintf(msg, sizeof msg, "expected %s", what);
    return perr(p, p->cur.pos, msg);
  }
  return next(p);
}

/* Take the current token's text as a column name (identifier that is not a keyword, or quoted). */
static vf_status take_column(parser *p, char **out, const char *what) {
  if (p->cur.kind == T_QIDENT || (p->cur.kind == T_IDENT && !is_reserved(&p->cur))) {
    *out = p->cur.text;
    p->cur.text = NULL;
    return next(p);
  }
  char msg[160];
  snprintf(msg, sizeof msg, "expected %s", what);
  return perr(p, p->cur.pos, msg);
}

static vf_status parse_expr(parser *p, corpus_idexpr *e) {
  vf_status st;
  tok *t = &p->cur;
  if (is_kw(t, "vf_point_id")) {
    e->kind = IDX_POINT_ID;
    e->skind = IDS_FILENAME;
    e->ikind = IDI_FILE_ROW;
    if ((st = next(p)) || (st = expect(p, T_LPAREN, "'('"))) return st;
    if (!is_kw(t, "filename"))
      return perr(p, t->pos,
                  "vf_point_id takes exactly (filename, file_row_number): expected filename");
    if ((st = next(p)) || (st = expect(p, T_COMMA, "','"))) return st;
    if (!is_kw(t, "file_row_number"))
      return perr(
          p, t->pos,
          "vf_point_id takes exactly (filename, file_row_number): expected file_row_number");
    if ((st = next(p))) return st;
    return expect(p, T_RPAREN, "')'");
  }
  if (is_kw(t, "make_point_id")) {
    e->kind = IDX_POINT_ID;
    if ((st = next(p)) || (st = expect(p, T_LPAREN, "'('"))) return st;
    if (is_kw(t, "filename")) {
      e->skind = IDS_FILENAME;
      if ((st = next(p))) return st;
    } else if (t->kind == T_STRING) {
      e->skind = IDS_LITERAL;
      e->sval = t->text;
      t->text = NULL;
      if ((st = next(p))) return st;
    } else {
      e->skind = IDS_COLUMN;
      if ((st = take_column(p, &e->sval, "a key (filename, a 'string' or a column)"))) return st;
    }
    if ((st = expect(p, T_COMMA, "','"))) return st;
    if (is_kw(t, "file_row_number")) {
      e->ikind = IDI_FILE_ROW;
      if ((st = next(p))) return st;
    } else if (is_kw(t, "row")) {
      e->ikind = IDI_ROW;
      if ((st = next(p))) return st;
    } else if (t->kind == T_INT) {
      e->ikind = IDI_LITERAL;
      e->ineg = t->neg;
      e->ival = t->num;
      if ((st = next(p))) return st;
    } else {
      e->ikind = IDI_COLUMN;
      if ((st = take_column(p, &e->icol,
                            "a row number (file_row_number, row, a column or an integer)")))
        return st;
    }
    return expect(p, T_RPAREN, "')'");
  }
  if (is_kw(t, "hash")) {
    e->kind = IDX_HASH;
    if ((st = next(p)) || (st = expect(p, T_LPAREN, "'('"))) return st;
    if ((st = take_column(p, &e->sval, "a column name"))) return st;
    return expect(p, T_RPAREN, "')'");
  }
  if (is_kw(t, "uuid")) {
    e->kind = IDX_UUID;
    if ((st = next(p)) || (st = expect(p, T_LPAREN, "'('"))) return st;
    return expect(p, T_RPAREN, "')' (uuid takes no arguments)");
  }
  if (is_kw(t, "row")) {
    e->kind = IDX_ROW;
    return next(p);
  }
  if (is_kw(t, "filename") || is_kw(t, "file_row_number"))
    return perr(p, t->pos,
                "filename and file_row_number are only valid inside vf_point_id() or "
                "make_point_id() (quote a column with that name: \"filename\")");
  if (t->kind == T_END) return perr(p, t->pos, "empty expression");
  e->kind = IDX_COLUMN;
  if ((st =
           take_column(p, &e->sval,
                       "vf_point_id(...), make_point_id(...), hash(...), uuid(), row or a column")))
    return st;
  if (t->kind == T_LPAREN) return perr(p, t->pos, "unknown function");
  return VF_OK;
}

/* corpus_idexpr_parse(): see corpus.h.  NULL text means the default,
 * vf_point_id(filename, file_row_number). */
vf_status corpus_idexpr_parse(const char *text, corpus_idexpr **out, vf_error *err) {
  *out = NULL;
  if (!text) text = "vf_point_id(filename, file_row_number)";
  corpus_idexpr *e = calloc(1, sizeof *e);
  if (!e) return vf_error_set(err, VF_ENOMEM, "out of memory");
  parser p = {text, 0, {0}, err};
  vf_status st = VF_OK;
  VF_TRY(next(&p));
  VF_TRY(parse_expr(&p, e));
  if (p.cur.kind != T_END) VF_FAIL(perr(&p, p.cur.pos, "unexpected text after the expression"));
  if ((e->kind == IDX_POINT_ID && e->skind == IDS_COLUMN) || e->kind == IDX_COLUMN ||
      e->kind == IDX_HASH)
    e->cols[e->ncols++] = e->sval;
  if (e->kind == IDX_POINT_ID && e->ikind == IDI_COLUMN &&
      !(e->ncols == 1 && strcmp(e->cols[0], e->icol) == 0))
    e->cols[e->ncols++] = e->icol;
  *out = e;
out:
  free(p.cur.text);
  if (st != VF_OK) corpus_idexpr_free(e);
  return st;
}

void corpus_idexpr_free(corpus_idexpr *e) {
  if (!e) return;
  free(e->sval);
  free(e->icol);
  free(e);
}

/* corpus_idexpr_columns(): see corpus.h.  At most two names, valid until the expression is freed.
 */
const char *const *corpus_idexpr_columns(const corpus_idexpr *e, int *n) {
  *n = e->ncols;
  return e->cols;
}

/* corpus_idexpr_deterministic(): see corpus.h. */
bool corpus_idexpr_deterministic(const corpus_idexpr *e) {
  return e->kind != IDX_UUID;
}

/* ------------------------------------------------------------- evaluation */

static vf_status row_err(const corpus_row_ctx *ctx, vf_error *err, const char *col,
                         const char *what) {
  const char *key = ctx->file_key ? ctx->file_key : "";
  int klen = ctx->file_key ? (int)(ctx->file_key_len > 4096 ? 4096 : ctx->file_key_len) : 0;
  return vf_error_set(err, VF_ECORRUPT, "%.*s row %llu: id column \"%s\" %s", klen, key,
                      (unsigned long long)ctx->file_row, col, what);
}

static vf_status get_col(const corpus_row_ctx *ctx, const char *col, corpus_value *v,
                         vf_error *err) {
  memset(v, 0, sizeof *v);
  if (!ctx->get_column)
    return vf_error_set(err, VF_EINTERNAL,
                        "id expression reads column \"%s\" but no column "
                        "accessor was given",
                        col);
  vf_status st = ctx->get_column(ctx->user, col, v, err);
  if (st != VF_OK) return st;
  if (v->kind == CORPUS_V_NULL) return row_err(ctx, err, col, "is null");
  if (v->kind == CORPUS_V_STR && !v->s && v->len) return row_err(ctx, err, col, "has no data");
  return VF_OK;
}

/* Parse a dashed UUID (any case) into canonical lowercase. */
static bool parse_uuid(const char *s, size_t len, char out[37]) {
  if (len != 36) return false;
  for (size_t i = 0; i < 36; i++) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
      out[i] = '-';
    } else if (isxdigit((unsigned char)c)) {
      out[i] = (char)tolower((unsigned char)c);
    } else {
      return false;
    }
  }
  out[36] = '\0';
  return true;
}

/* The text form of a value (ints in decimal): points into `num` or the value's own bytes. */
static void value_text(const corpus_value *v, char num[24], const char **s, size_t *len) {
  if (v->kind == CORPUS_V_STR) {
    *s = v->s ? v->s : "";
    *len = v->len;
  } else {
    int n = v->kind == CORPUS_V_INT ? snprintf(num, 24, "%" PRId64, v->i)
                                    : snprintf(num, 24, "%" PRIu64, v->u);
    *s = num;
    *len = (size_t)n;
  }
}

static vf_status random_uuid(char out[37], vf_error *err) {
  uint8_t b[16];
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t r = getrandom(b + got, sizeof b - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      return vf_error_set(err, VF_EIO, "uuid(): getrandom failed: %s", VF_STRERROR(errno));
    }
    got += (size_t)r;
  }
  b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 (RFC 9562 section 5.4) */
  b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* variant 10 */
  corpus_uuid_format(b, out);
  return VF_OK;
}

/* corpus_idexpr_eval(): see corpus.h. */

vf_status corpus_idexpr_eval(const corpus_idexpr *e, const corpus_row_ctx *ctx, corpus_id *out,
                             vf_error *err) {
  memset(out, 0, sizeof *out);
  vf_status st;
  corpus_value v;
  switch (e->kind) {
  case IDX_ROW: out->num = ctx->global_row; return VF_OK;
  case IDX_UUID: out->is_uuid = true; return random_uuid(out->uuid, err);
  case IDX_COLUMN:
    if ((st = get_col(ctx, e->sval, &v, err))) return st;
    if (v.kind == CORPUS_V_UINT) {
      out->num = v.u;
      return VF_OK;
    }
    if (v.kind == CORPUS_V_INT) {
      if (v.i < 0) {
        char what[64];
        snprintf(what, sizeof what, "is negative (%" PRId64 ")", v.i);
        return row_err(ctx, err, e->sval, what);
      }
      out->num = (uint64_t)v.i;
      return VF_OK;
    }
    if (!parse_uuid(v.s, v.len, out->uuid))
      return row_err(ctx, err, e->sval, "is a string that is not a UUID");
    out->is_uuid = true;
    return VF_OK;
  case IDX_HASH: {
    if ((st = get_col(ctx, e->sval, &v, err))) return st;
    char num[24];
    const char *s;
    size_t len;
    value_text(&v, num, &s, &len);
    uint8_t d[16];
    vf_md5(s, len, d);
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)
      h = (h << 8) | d[i];
    out->num = h;
    return VF_OK;
  }
  case IDX_POINT_ID: {
    /* the ":<row>" part first, so a string column's bytes are used right after they are read */
    char suffix[24];
    int nl;
    switch (e->ikind) {
    case IDI_FILE_ROW: nl = corpus_id_suffix(suffix, false, ctx->file_row); break;
    case IDI_ROW: nl = corpus_id_suffix(suffix, false, ctx->global_row); break;
    case IDI_LITERAL: nl = corpus_id_suffix(suffix, e->ineg, e->ival); break;
    default:
      if ((st = get_col(ctx, e->icol, &v, err))) return st;
      if (v.kind == CORPUS_V_STR) return row_err(ctx, err, e->icol, "is a string, not an integer");
      /* a negative value keeps its sign, as string concatenation in the existing tools does */
      nl = v.kind == CORPUS_V_UINT ? corpus_id_suffix(suffix, false, v.u)
           : v.i < 0               ? corpus_id_suffix(suffix, true, (uint64_t)0 - (uint64_t)v.i)
                                   : corpus_id_suffix(suffix, false, (uint64_t)v.i);
      break;
    }
    const char *key;
    size_t key_len;
    char knum[24];
    if (e->skind == IDS_FILENAME) {
      key = ctx->file_key;
      key_len = ctx->file_key_len;
    } else if (e->skind == IDS_LITERAL) {
      key = e->sval;
      key_len = strlen(e->sval);
    } else {
      if ((st = get_col(ctx, e->sval, &v, err))) return st;
      value_text(&v, knum, &key, &key_len);
    }
    out->is_uuid = true;
    corpus_point_id_text(key, key_len, suffix, (size_t)nl, out->uuid);
    return VF_OK;
  }
  }
  return vf_error_set(err, VF_EINTERNAL, "bad id expression kind");
}
