/* Tests for the parquet writer: the thrift compact writer (byte-exact against the spec and
 * round-tripped through the reader's tc_* decoder), the RLE/bit-packed level encoder, and whole
 * files written with every column type, nulls, several row groups and pages, each codec, read
 * back through pqt_open/pqt_read_leaves and checked level by level and value by value.
 *
 * With VF_WRITER_OUT=<dir> set, the `oracle_files` test also writes sample files and the
 * expected rows (JSON lines) there; tests/format/test_writer_oracle.sh reads them with DuckDB
 * and arrow-rs and compares. */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "format/pqt_internal.h"
#include "vf_test.h"

/* ------------------------------------------------------------------ thrift writer */

VF_TEST(tcw_bytes_match_compact_protocol) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err = {0};
  tc_writer w;
  tcw_init(&w, &b, &err);
  tcw_struct_begin(&w);
  tcw_field_i32(&w, 1, 5);                 /* 0x15 0x0a */
  tcw_field_bool(&w, 2, true);             /* 0x11 (delta 1, TRUE) */
  tcw_field_bool(&w, 3, false);            /* 0x12 */
  tcw_field_i64(&w, 20, -1);               /* delta 17 > 15: 0x06, zz(20)=0x28, zz(-1)=0x01 */
  tcw_field_binary(&w, 21, "ab", 2);       /* 0x18 0x02 'a' 'b' */
  tcw_field_list_begin(&w, 22, TC_I32, 3); /* 0x19 0x35 */
  tcw_list_i32(&w, 1);
  tcw_list_i32(&w, -2);
  tcw_list_i32(&w, 300);                      /* zz(300)=600 = 0xd8 0x04 */
  tcw_field_struct_begin(&w, 23);             /* 0x1c */
  tcw_field_i16(&w, 1, 7);                    /* 0x14 0x0e */
  tcw_struct_end(&w);                         /* 0x00 */
  tcw_field_i32(&w, 2, 0);                    /* fid goes down: 0x05 zz(2)=0x04, 0x00 */
  tcw_field_list_begin(&w, 3, TC_BINARY, 20); /* 0x19 0xf8 0x14 */
  for (int i = 0; i < 20; i++)
    tcw_list_binary(&w, "x", 1);
  tcw_struct_end(&w);
  CHECK_OK(w.st);
  const uint8_t want_head[] = {0x15, 0x0a, 0x11, 0x12, 0x06, 0x28, 0x01, 0x18, 0x02,
                               'a',  'b',  0x19, 0x35, 0x02, 0x03, 0xd8, 0x04, 0x1c,
                               0x14, 0x0e, 0x00, 0x05, 0x04, 0x00, 0x19, 0xf8, 0x14};
  CHECK(b.len == sizeof want_head + 20 * 2 + 1);
  CHECK(memcmp(b.data, want_head, sizeof want_head) == 0);
  CHECK(b.data[sizeof want_head] == 0x01 && b.data[sizeof want_head + 1] == 'x');
  CHECK(b.data[b.len - 1] == 0x00);

  /* decode with the reader's thrift decoder */
  tc_reader r;
  tc_init(&r, b.data, b.len, 0, &err);
  CHECK_OK(tc_struct_begin(&r));
  int type;
  int16_t fid;
  int32_t i32;
  int64_t i64;
  bool bv;
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_I32 && fid == 1);
  CHECK_OK(tc_i32(&r, &i32));
  CHECK_EQ_INT(i32, 5);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(fid == 2);
  CHECK_OK(tc_bool(&r, &bv));
  CHECK(bv);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(fid == 3);
  CHECK_OK(tc_bool(&r, &bv));
  CHECK(!bv);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_I64 && fid == 20);
  CHECK_OK(tc_i64(&r, &i64));
  CHECK_EQ_INT(i64, -1);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(fid == 21);
  const uint8_t *p;
  uint32_t n;
  CHECK_OK(tc_binary(&r, &p, &n));
  CHECK(n == 2 && memcmp(p, "ab", 2) == 0);
  CHECK_OK(tc_field(&r, &type, &fid));
  int et;
  uint32_t cnt;
  CHECK_OK(tc_list_begin(&r, &et, &cnt));
  CHECK(et == TC_I32 && cnt == 3);
  int32_t want_l[] = {1, -2, 300};
  for (int i = 0; i < 3; i++) {
    CHECK_OK(tc_i32(&r, &i32));
    CHECK_EQ_INT(i32, want_l[i]);
  }
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_STRUCT && fid == 23);
  CHECK_OK(tc_struct_begin(&r));
  CHECK_OK(tc_field(&r, &type, &fid));
  int16_t i16;
  CHECK(type == TC_I16 && fid == 1);
  CHECK_OK(tc_i16(&r, &i16));
  CHECK_EQ_INT(i16, 7);
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_STOP);
  CHECK_OK(tc_struct_end(&r));
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_I32 && fid == 2);
  CHECK_OK(tc_i32(&r, &i32));
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_LIST && fid == 3);
  CHECK_OK(tc_list_begin(&r, &et, &cnt));
  CHECK(et == TC_BINARY && cnt == 20);
  for (uint32_t i = 0; i < cnt; i++)
    CHECK_OK(tc_binary(&r, &p, &n));
  CHECK_OK(tc_field(&r, &type, &fid));
  CHECK(type == TC_STOP);
  CHECK(vf_cur_remaining(&r.cur) == 0);
  vf_buf_free(&b);
}

VF_TEST(tcw_misuse_is_sticky_error) {
  vf_buf b;
  vf_buf_init(&b, 4); /* tiny ceiling: the third byte fails */
  vf_error err = {0};
  tc_writer w;
  tcw_init(&w, &b, &err);
  tcw_field_i32(&w, 1, 1); /* outside a struct */
  CHECK(w.st == VF_EINTERNAL);
  tcw_init(&w, &b, &err);
  tcw_struct_begin(&w);
  tcw_field_binary(&w, 1, "abcdefgh", 8);
  CHECK(w.st == VF_ENOMEM);
  size_t len = b.len;
  tcw_field_i32(&w, 2, 1);
  CHECK(b.len == len); /* no-op after the first error */
  vf_buf_free(&b);
}

/* ------------------------------------------------------------------ RLE encoder */

static void rle_roundtrip(const uint8_t *vals, size_t n, int bw) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err = {0};
  CHECK_OK(pqt_rle_encode_u8(vals, n, bw, &b, &err));
  uint8_t *dec = malloc(n + 1);
  uint8_t max = (uint8_t)((1u << bw) - 1);
  CHECK_OK(pqt_rle_decode_u8(b.data, b.len, bw, max, dec, n, &err));
  CHECK(memcmp(dec, vals, n) == 0);
  free(dec);
  vf_buf_free(&b);
}

VF_TEST(rle_encode_known_bytes) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err = {0};
  uint8_t zeros[10] = {0};
  CHECK_OK(pqt_rle_encode_u8(zeros, 10, 1, &b, &err));
  CHECK(b.len == 2 && b.data[0] == 0x14 && b.data[1] == 0x00); /* RLE run of 10 */
  /* spec example: 0..7 with bit width 3 -> one bit-packed group: 0x03 0x88 0xc6 0xfa */
  vf_buf_reset(&b);
  uint8_t seq[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK_OK(pqt_rle_encode_u8(seq, 8, 3, &b, &err));
  const uint8_t want[] = {0x03, 0x88, 0xc6, 0xfa};
  CHECK(b.len == 4 && memcmp(b.data, want, 4) == 0);
  /* 2 literals then 21 ones: the group is completed with 6 ones, 15 stay an RLE run */
  vf_buf_reset(&b);
  uint8_t mix[23] = {1, 0, 1};
  memset(mix + 3, 1, 20);
  CHECK_OK(pqt_rle_encode_u8(mix, 23, 1, &b, &err));
  const uint8_t want_mix[] = {0x03, 0xfd, 0x1e, 0x01};
  CHECK(b.len == 4 && memcmp(b.data, want_mix, 4) == 0);
  /* a value that does not fit the width is refused */
  vf_buf_reset(&b);
  uint8_t big[2] = {0, 4};
  CHECK_STATUS(pqt_rle_encode_u8(big, 2, 2, &b, &err), VF_EUSAGE);
  CHECK_STATUS(pqt_rle_encode_u8(big, 2, 9, &b, &err), VF_EUSAGE);
  vf_buf_free(&b);
}

VF_TEST(rle_encode_roundtrip_patterns) {
  enum { N = 5000 };
  uint8_t *v = malloc(N);
  uint32_t seed = 12345;
  for (int bw = 1; bw <= 8; bw++) {
    unsigned mod = 1u << bw;
    for (int pattern = 0; pattern < 4; pattern++) {
      for (size_t i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned rnd = (seed >> 16) % mod;
        switch (pattern) {
        case 0: v[i] = (uint8_t)rnd; break;                             /* all literal */
        case 1: v[i] = (uint8_t)((i / 37) % mod); break;                /* long runs */
        case 2: v[i] = (uint8_t)(((i % 13) < 9 ? 0 : rnd)); break;      /* runs of 9 + noise */
        default: v[i] = (uint8_t)((i % 768) == 0 ? 0 : mod - 1); break; /* list rep shape */
        }
      }
      for (size_t n = 0; n <= 20; n++)
        rle_roundtrip(v, n, bw);
      rle_roundtrip(v, N, bw);
      rle_roundtrip(v + 3, N - 7, bw);
    }
  }
  free(v);
}

/* ------------------------------------------------------------------ sample data */

enum { C_I32, C_I64, C_F32, C_F64, C_FLAG, C_TEXT, C_KEY, C_LF, C_LS, C_EMB, C_EMB2, NCOLS };

static const pqt_wcolumn k_cols[NCOLS] = {
    {"i32", PQT_W_INT32, true, 0},       {"i64", PQT_W_INT64, false, 0},
    {"f32", PQT_W_FLOAT, true, 0},       {"f64", PQT_W_DOUBLE, false, 0},
    {"flag", PQT_W_BOOL, true, 0},       {"text", PQT_W_STRING, true, 0},
    {"key", PQT_W_STRING, false, 0},     {"lf", PQT_W_LIST_FLOAT, true, 0},
    {"ls", PQT_W_LIST_STRING, false, 0}, {"emb", PQT_W_VECTOR, true, 4},
    {"emb2", PQT_W_VECTOR, false, 3},
};

static bool s_null(int c, int64_t r) {
  switch (c) {
  case C_I32: return r % 5 == 3;
  case C_F32: return r % 7 == 2;
  case C_FLAG: return r % 4 == 1;
  case C_TEXT: return r % 6 == 5;
  case C_LF: return r % 9 == 4;
  case C_EMB: return r % 8 == 7;
  default: return false;
  }
}
static int32_t s_i32(int64_t r) {
  return r == 2 ? INT32_MAX : r == 8 ? INT32_MIN : (int32_t)(r * 7 - 100);
}
static int64_t s_i64(int64_t r) {
  if (r == 5) return INT64_MAX;
  if (r == 6) return INT64_MIN;
  return (r % 2 ? -1 : 1) * r * 1000000007LL * 1000003LL;
}
static float s_f32(int64_t r) {
  if (r == 11) return NAN;
  if (r == 12) return INFINITY;
  if (r == 13) return -0.0f;
  return (float)r * 0.37f - 3.0f;
}
static double s_f64(int64_t r) {
  if (r == 4) return -INFINITY;
  if (r == 9) return NAN;
  return (double)r / 3.0;
}
static uint8_t s_flag(int64_t r) {
  return r % 3 == 0 ? (uint8_t)(r % 2 ? 7 : 1) : 0;
} /* nonzero = true */
static void s_text(int64_t r, char *out, size_t cap) {
  if (r % 10 == 0)
    out[0] = 0;
  else if (r % 10 == 1)
    snprintf(out, cap, "h\xc3\xa9llo \xe2\x9c\x93 \"%lld\"\\", (long long)r);
  else
    snprintf(out, cap, "t%lld", (long long)r);
}
static void s_key(int64_t r, char *out, size_t cap) {
  int n = snprintf(out, cap, "k%lld", (long long)r);
  for (int i = 0; i < (int)(r % 17) && (size_t)n + 1 < cap; i++)
    out[n++] = 'x';
  out[n] = 0;
}
static int s_lf_len(int64_t r) {
  return (int)(r % 4);
}
static float s_lf(int64_t r, int j) {
  return (float)r + (float)j * 0.5f;
}
static int s_ls_len(int64_t r) {
  return (int)(r % 3);
}
static void s_ls(int64_t r, int j, char *out, size_t cap) {
  snprintf(out, cap, "e%lld_%d", (long long)r, j);
}
static float s_emb(int64_t r, int j) {
  if (r == 20 && j == 1) return NAN;
  float x = (float)r;
  return j == 0 ? x : j == 1 ? x + 0.25f : j == 2 ? -x : x * 2.0f;
}
static float s_emb2(int64_t r, int j) {
  return j == 0 ? (float)r : (float)j;
}

/* One batch of sample rows [r0, r0+n): owns every array it points to. */
typedef struct sample_batch {
  pqt_wbatch b[NCOLS];
  int32_t *i32;
  int64_t *i64;
  float *f32, *lf, *emb, *emb2;
  double *f64;
  uint8_t *flag, *valid[NCOLS];
  char **text, **ls;
  char *key_bytes;
  int64_t *key_off, *lf_off, *ls_off;
} sample_batch;

static void sample_make(sample_batch *s, int64_t r0, int64_t n) {
  memset(s, 0, sizeof *s);
  size_t un = (size_t)n + 1;
  s->i32 = calloc(un, 4);
  s->i64 = calloc(un, 8);
  s->f32 = calloc(un, 4);
  s->f64 = calloc(un, 8);
  s->flag = calloc(un, 1);
  s->text = calloc(un, sizeof(char *));
  s->key_bytes = calloc(un * 32, 1);
  s->key_off = calloc(un, 8);
  s->lf = calloc(un * 4, 4);
  s->lf_off = calloc(un, 8);
  s->ls = calloc(un * 3, sizeof(char *));
  s->ls_off = calloc(un, 8);
  s->emb = calloc(un * 4, 4);
  s->emb2 = calloc(un * 3, 4);
  for (int c = 0; c < NCOLS; c++) {
    s->valid[c] = NULL;
    if (k_cols[c].nullable) {
      s->valid[c] = calloc(un, 1);
      for (int64_t i = 0; i < n; i++)
        s->valid[c][i] = !s_null(c, r0 + i);
    }
  }
  int64_t kpos = 0, lfpos = 0, lspos = 0;
  char tmp[64];
  for (int64_t i = 0; i < n; i++) {
    int64_t r = r0 + i;
    s->i32[i] = s_i32(r);
    s->i64[i] = s_i64(r);
    s->f32[i] = s_f32(r);
    s->f64[i] = s_f64(r);
    s->flag[i] = s_flag(r);
    if (!s_null(C_TEXT, r)) {
      s_text(r, tmp, sizeof tmp);
      s->text[i] = vf_strdup(tmp);
    }
    s->key_off[i] = kpos;
    s_key(r, tmp, sizeof tmp);
    memcpy(s->key_bytes + kpos, tmp, strlen(tmp));
    kpos += (int64_t)strlen(tmp);
    s->lf_off[i] = lfpos;
    if (!s_null(C_LF, r))
      for (int j = 0; j < s_lf_len(r); j++)
        s->lf[lfpos++] = s_lf(r, j);
    s->ls_off[i] = lspos;
    for (int j = 0; j < s_ls_len(r); j++) {
      s_ls(r, j, tmp, sizeof tmp);
      s->ls[lspos++] = vf_strdup(tmp);
    }
    for (int j = 0; j < 4; j++)
      s->emb[i * 4 + j] = s_emb(r, j);
    for (int j = 0; j < 3; j++)
      s->emb2[i * 3 + j] = s_emb2(r, j);
  }
  s->key_off[n] = kpos;
  s->lf_off[n] = lfpos;
  s->ls_off[n] = lspos;
  s->b[C_I32].values = s->i32;
  s->b[C_I64].values = s->i64;
  s->b[C_F32].values = s->f32;
  s->b[C_F64].values = s->f64;
  s->b[C_FLAG].values = s->flag;
  s->b[C_TEXT].strs = (const char *const *)s->text;
  s->b[C_KEY].bytes = (const uint8_t *)s->key_bytes;
  s->b[C_KEY].offsets = s->key_off;
  s->b[C_LF].values = s->lf;
  s->b[C_LF].offsets = s->lf_off;
  s->b[C_LS].strs = (const char *const *)s->ls;
  s->b[C_LS].offsets = s->ls_off;
  s->b[C_EMB].values = s->emb;
  s->b[C_EMB2].values = s->emb2;
  for (int c = 0; c < NCOLS; c++)
    s->b[c].valid = s->valid[c];
  s->ls_off[0] = 0;
  (void)lspos;
}

static void sample_free(sample_batch *s, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    free(s->text[i]);
  for (int64_t i = 0; i < s->ls_off[n]; i++)
    free(s->ls[i]);
  free(s->i32);
  free(s->i64);
  free(s->f32);
  free(s->f64);
  free(s->flag);
  free(s->text);
  free(s->key_bytes);
  free(s->key_off);
  free(s->lf);
  free(s->lf_off);
  free(s->ls);
  free(s->ls_off);
  free(s->emb);
  free(s->emb2);
  for (int c = 0; c < NCOLS; c++)
    free(s->valid[c]);
}

/* Writes `nrows` sample rows in batches of varying size.  Returns the writer status. */
static vf_status write_sample(const char *path, pqt_codec codec, int64_t nrows, int64_t rg_rows,
                              int64_t page_bytes, vf_error *err) {
  pqt_writer_opts o = {.codec = codec, .row_group_rows = rg_rows, .page_bytes = page_bytes};
  pqt_writer *w;
  vf_status st = pqt_writer_open(path, k_cols, NCOLS, &o, &w, err);
  if (st != VF_OK) return st;
  static const int64_t sizes[] = {1, 7, 100, 3, 250, 64};
  int64_t r = 0;
  for (int k = 0; r < nrows; k++) {
    int64_t n = sizes[k % 6];
    if (n > nrows - r) n = nrows - r;
    sample_batch s;
    sample_make(&s, r, n);
    st = pqt_writer_write(w, s.b, n, err);
    sample_free(&s, n);
    if (st != VF_OK) {
      pqt_writer_abort(w);
      return st;
    }
    r += n;
  }
  st = pqt_writer_add_kv(w, "vforge.test", "yes", err);
  if (st == VF_OK) st = pqt_writer_add_kv(w, "vforge.test", "replaced", err);
  if (st == VF_OK) st = pqt_writer_add_kv(w, "novalue", NULL, err);
  if (st != VF_OK) {
    pqt_writer_abort(w);
    return st;
  }
  return pqt_writer_close(w, err);
}

/* --------------------------------------------------------- expected leaf contents */

typedef struct expect_leaf {
  vf_buf def, rep, vals;
  int64_t *off; /* BYTE_ARRAY value offsets */
  int64_t nvals, noff_cap;
} expect_leaf;

static void exp_putlev(expect_leaf *e, uint8_t d, uint8_t r) {
  vf_buf_append(&e->def, &d, 1, NULL);
  vf_buf_append(&e->rep, &r, 1, NULL);
}
static void exp_putval(expect_leaf *e, const void *p, size_t n, bool is_ba) {
  if (is_ba) {
    if (e->nvals + 2 > e->noff_cap) {
      e->noff_cap = e->noff_cap ? e->noff_cap * 2 : 64;
      e->off = realloc(e->off, (size_t)e->noff_cap * 8);
    }
    e->off[e->nvals] = (int64_t)e->vals.len;
    e->off[e->nvals + 1] = (int64_t)(e->vals.len + n);
  }
  vf_buf_append(&e->vals, p, n, NULL);
  e->nvals++;
}

static void expect_build(int c, int64_t r0, int64_t n, expect_leaf *e) {
  memset(e, 0, sizeof *e);
  vf_buf_init(&e->def, 0);
  vf_buf_init(&e->rep, 0);
  vf_buf_init(&e->vals, 0);
  bool nullable = k_cols[c].nullable;
  char tmp[64];
  for (int64_t r = r0; r < r0 + n; r++) {
    bool null = s_null(c, r);
    switch (c) {
    case C_I32:
    case C_I64:
    case C_F32:
    case C_F64:
    case C_FLAG:
    case C_TEXT:
    case C_KEY:
      exp_putlev(e, nullable ? (null ? 0 : 1) : 0, 0);
      if (null) break;
      if (c == C_I32) {
        int32_t v = s_i32(r);
        exp_putval(e, &v, 4, false);
      }
      if (c == C_I64) {
        int64_t v = s_i64(r);
        exp_putval(e, &v, 8, false);
      }
      if (c == C_F32) {
        float v = s_f32(r);
        exp_putval(e, &v, 4, false);
      }
      if (c == C_F64) {
        double v = s_f64(r);
        exp_putval(e, &v, 8, false);
      }
      if (c == C_FLAG) {
        uint8_t v = s_flag(r) ? 1 : 0;
        exp_putval(e, &v, 1, false);
      }
      if (c == C_TEXT) {
        s_text(r, tmp, sizeof tmp);
        exp_putval(e, tmp, strlen(tmp), true);
      }
      if (c == C_KEY) {
        s_key(r, tmp, sizeof tmp);
        exp_putval(e, tmp, strlen(tmp), true);
      }
      break;
    default: {
      uint8_t maxd = nullable ? 3 : 2;
      int len = c == C_LF ? s_lf_len(r) : c == C_LS ? s_ls_len(r) : c == C_EMB ? 4 : 3;
      if (null) {
        exp_putlev(e, 0, 0);
        break;
      }
      if (len == 0) exp_putlev(e, (uint8_t)(maxd - 2), 0);
      for (int j = 0; j < len; j++) {
        exp_putlev(e, maxd, j ? 1 : 0);
        if (c == C_LF) {
          float v = s_lf(r, j);
          exp_putval(e, &v, 4, false);
        }
        if (c == C_EMB) {
          float v = s_emb(r, j);
          exp_putval(e, &v, 4, false);
        }
        if (c == C_EMB2) {
          float v = s_emb2(r, j);
          exp_putval(e, &v, 4, false);
        }
        if (c == C_LS) {
          s_ls(r, j, tmp, sizeof tmp);
          exp_putval(e, tmp, strlen(tmp), true);
        }
      }
    }
    }
  }
}

static void expect_free(expect_leaf *e) {
  vf_buf_free(&e->def);
  vf_buf_free(&e->rep);
  vf_buf_free(&e->vals);
  free(e->off);
}

static const char *k_leaf_paths[NCOLS] = {"i32",
                                          "i64",
                                          "f32",
                                          "f64",
                                          "flag",
                                          "text",
                                          "key",
                                          "lf.list.element",
                                          "ls.list.element",
                                          "emb.list.element",
                                          "emb2.list.element"};

/* Compares one decoded leaf with the expectation; `what` names it in failures. */
static void check_leaf(int c, const pqt_leaf_data *d, const expect_leaf *e, const char *what) {
  int64_t nlev = (int64_t)e->def.len;
  if (d->nlevels != nlev || d->nvalues != e->nvals) {
    vf_test_fail(__FILE__, __LINE__, "%s: levels %lld/%lld values %lld/%lld", what,
                 (long long)d->nlevels, (long long)nlev, (long long)d->nvalues,
                 (long long)e->nvals);
    return;
  }
  uint8_t maxd = k_cols[c].type >= PQT_W_LIST_FLOAT ? (k_cols[c].nullable ? 3 : 2)
                                                    : (k_cols[c].nullable ? 1 : 0);
  for (int64_t i = 0; i < nlev; i++) {
    uint8_t dd = d->def ? d->def[i] : maxd;
    if (dd != e->def.data[i]) {
      vf_test_fail(__FILE__, __LINE__, "%s: def[%lld] %d != %d", what, (long long)i, dd,
                   e->def.data[i]);
      return;
    }
    if (k_cols[c].type >= PQT_W_LIST_FLOAT) {
      if (!d->rep || d->rep[i] != e->rep.data[i]) {
        vf_test_fail(__FILE__, __LINE__, "%s: rep[%lld] differs", what, (long long)i);
        return;
      }
    }
  }
  if (e->off) {
    for (int64_t j = 0; j < e->nvals; j++) {
      int64_t dl = d->offsets[j + 1] - d->offsets[j], el = e->off[j + 1] - e->off[j];
      if (dl != el ||
          memcmp(d->values.data + d->offsets[j], e->vals.data + e->off[j], (size_t)el) != 0) {
        vf_test_fail(__FILE__, __LINE__, "%s: string value %lld differs", what, (long long)j);
        return;
      }
    }
  } else if (d->values.len < e->vals.len ||
             memcmp(d->values.data, e->vals.data, e->vals.len) != 0) {
    /* bitwise comparison: NaN payloads and -0.0 must survive */
    vf_test_fail(__FILE__, __LINE__, "%s: values differ", what);
  }
}

/* Opens `path`, checks metadata and every leaf of every row group against the sample. */
static void check_sample_file(const char *path, pqt_codec codec, int64_t nrows, int64_t rg_rows) {
  vf_error err = {0};
  io_source *src;
  CHECK_OK(io_open_local(path, &src, &err));
  if (err.code) return;
  pqt_file *f;
  vf_status st = pqt_open(src, NULL, &f, &err);
  CHECK_OK(st);
  if (st != VF_OK) {
    fprintf(stderr, "  %s\n", err.msg);
    return;
  }
  const pqt_file_meta *m = pqt_meta(f);
  CHECK_EQ_INT(m->num_rows, nrows);
  int64_t want_rgs = (nrows + rg_rows - 1) / rg_rows;
  CHECK_EQ_INT(m->nrow_groups, want_rgs);
  CHECK(m->created_by && strncmp(m->created_by, "vforge version ", 15) == 0);
  bool kv_ok = false, nv_ok = false;
  for (int i = 0; i < m->nkv; i++) {
    if (strcmp(m->kv[i].key, "vforge.test") == 0)
      kv_ok = m->kv[i].value && strcmp(m->kv[i].value, "replaced") == 0;
    if (strcmp(m->kv[i].key, "novalue") == 0) nv_ok = m->kv[i].value == NULL;
  }
  CHECK(kv_ok && nv_ok);
  /* schema: root + 7 flat + 4 lists x 3 */
  CHECK_EQ_INT(m->nschema, 1 + 7 + 4 * 3);
  if (m->nschema == 20) {
    CHECK_EQ_INT(m->schema[0].num_children, NCOLS);
    CHECK_EQ_STR(m->schema[6].name, "text");
    CHECK_EQ_INT(m->schema[6].type, PQT_BYTE_ARRAY);
    CHECK_EQ_INT(m->schema[6].converted_type, PQT_CT_UTF8);
    CHECK_EQ_INT(m->schema[6].logical, PQT_LT_STRING);
    CHECK_EQ_INT(m->schema[6].repetition, PQT_OPTIONAL);
    CHECK_EQ_INT(m->schema[7].repetition, PQT_REQUIRED);
    CHECK_EQ_STR(m->schema[8].name, "lf");
    CHECK_EQ_INT(m->schema[8].type, -1);
    CHECK_EQ_INT(m->schema[8].converted_type, PQT_CT_LIST);
    CHECK_EQ_INT(m->schema[8].logical, PQT_LT_LIST);
    CHECK_EQ_INT(m->schema[9].repetition, PQT_REPEATED);
    CHECK_EQ_STR(m->schema[9].name, "list");
    CHECK_EQ_STR(m->schema[10].name, "element");
    CHECK_EQ_INT(m->schema[10].type, PQT_FLOAT);
    CHECK_EQ_INT(m->schema[11].repetition, PQT_REQUIRED); /* ls is not nullable */
    CHECK_EQ_INT(m->schema[13].logical, PQT_LT_STRING);
  }
  const pqt_schema *sc = pqt_schema_of(f);
  CHECK_EQ_INT(sc->nleaves, NCOLS);
  int leaves[NCOLS];
  for (int c = 0; c < NCOLS; c++) {
    leaves[c] = pqt_find_leaf(f, k_leaf_paths[c]);
    CHECK(leaves[c] == c);
  }
  pqt_leaf_data d[NCOLS];
  for (int c = 0; c < NCOLS; c++)
    pqt_leaf_data_init(&d[c]);
  int64_t prev_end = 4;
  for (int g = 0; g < m->nrow_groups; g++) {
    const pqt_row_group *rg = &m->row_groups[g];
    int64_t r0 = (int64_t)g * rg_rows;
    int64_t n = nrows - r0 < rg_rows ? nrows - r0 : rg_rows;
    CHECK_EQ_INT(rg->num_rows, n);
    CHECK_EQ_INT(rg->ordinal, g);
    CHECK_EQ_INT(rg->file_offset, prev_end);
    int64_t comp = 0;
    for (int c = 0; c < rg->ncolumns; c++) {
      const pqt_column_meta *cm = &rg->columns[c].meta;
      CHECK_EQ_INT(cm->codec, codec);
      CHECK_EQ_INT(cm->data_page_offset, prev_end);
      prev_end += cm->total_compressed_size;
      comp += cm->total_compressed_size;
      CHECK(cm->stats.has_null_count);
      expect_leaf e;
      expect_build(c, r0, n, &e);
      CHECK_EQ_INT(cm->num_values, (int64_t)e.def.len);
      CHECK_EQ_INT(cm->stats.null_count, (int64_t)e.def.len - e.nvals);
      expect_free(&e);
    }
    CHECK_EQ_INT(rg->total_compressed_size, comp);
    vf_status rst = pqt_read_leaves(f, g, leaves, NCOLS, d, &err);
    CHECK_OK(rst);
    if (rst != VF_OK) {
      fprintf(stderr, "  %s\n", err.msg);
      break;
    }
    for (int c = 0; c < NCOLS; c++) {
      expect_leaf e;
      expect_build(c, r0, n, &e);
      char what[128];
      snprintf(what, sizeof what, "%s rg %d col %s", path, g, k_cols[c].name);
      check_leaf(c, &d[c], &e, what);
      CHECK_EQ_INT(d[c].nrows, n);
      expect_free(&e);
    }
  }
  for (int c = 0; c < NCOLS; c++)
    pqt_leaf_data_free(&d[c]);
  pqt_close(f);
}

static bool file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

static int count_dir_entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)))
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) n++;
  closedir(d);
  return n;
}

/* ------------------------------------------------------------------ file tests */

VF_TEST(write_all_types_each_codec_roundtrip) {
  static const pqt_codec codecs[] = {PQT_UNCOMPRESSED, PQT_SNAPPY, PQT_GZIP, PQT_ZSTD};
  for (int i = 0; i < 4; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/all_%s.parquet", vf_test_tmpdir(), pqt_codec_name(codecs[i]));
    vf_error err = {0};
    vf_status st = write_sample(path, codecs[i], 1000, 300, 512, &err);
    CHECK_OK(st);
    if (st != VF_OK) {
      fprintf(stderr, "  %s\n", err.msg);
      continue;
    }
    check_sample_file(path, codecs[i], 1000, 300);
  }
}

VF_TEST(write_single_row_group_default_options) {
  char path[512];
  snprintf(path, sizeof path, "%s/one_rg.parquet", vf_test_tmpdir());
  vf_error err = {0};
  CHECK_OK(write_sample(path, PQT_UNCOMPRESSED, 777, 0, 0, &err));
  check_sample_file(path, PQT_UNCOMPRESSED, 777, 65536);
}

VF_TEST(write_empty_file) {
  char path[512];
  snprintf(path, sizeof path, "%s/empty.parquet", vf_test_tmpdir());
  vf_error err = {0};
  CHECK_OK(write_sample(path, PQT_ZSTD, 0, 100, 0, &err));
  io_source *src;
  CHECK_OK(io_open_local(path, &src, &err));
  pqt_file *f;
  CHECK_OK(pqt_open(src, NULL, &f, &err));
  if (err.code) return;
  CHECK_EQ_INT(pqt_meta(f)->num_rows, 0);
  CHECK_EQ_INT(pqt_meta(f)->nrow_groups, 0);
  CHECK_EQ_INT(pqt_schema_of(f)->nleaves, NCOLS);
  pqt_close(f);
}

/* Reads the whole file into memory. */
static uint8_t *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n + 1);
  if (fread(b, 1, (size_t)n, fp) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(fp);
  *len = (size_t)n;
  return b;
}

VF_TEST(pages_split_on_row_boundaries_with_crc) {
  char path[512];
  snprintf(path, sizeof path, "%s/pages.parquet", vf_test_tmpdir());
  vf_error err = {0};
  CHECK_OK(write_sample(path, PQT_UNCOMPRESSED, 600, 600, 64, &err));
  size_t len;
  uint8_t *file = slurp(path, &len);
  CHECK(file != NULL);
  if (!file) return;
  CHECK(len > 12 && memcmp(file, "PAR1", 4) == 0 && memcmp(file + len - 4, "PAR1", 4) == 0);
  uint32_t flen = vf_load_u32le(file + len - 8);
  pqt_file_meta m;
  CHECK_OK(pqt_parse_file_meta(file + len - 8 - flen, flen, len - 8 - flen, &m, &err));
  if (err.code) {
    free(file);
    return;
  }
  /* walk every page of every list column: each page must start a row (first rep level 0),
   * carry a CRC equal to crc32 of its bytes, and there must be many pages */
  for (int c = 0; c < NCOLS; c++) {
    const pqt_column_meta *cm = &m.row_groups[0].columns[c].meta;
    vf_cursor cur;
    vf_cur_init(&cur, file + cm->data_page_offset, (size_t)cm->total_compressed_size,
                (uint64_t)cm->data_page_offset);
    int pages = 0;
    int64_t levels = 0;
    while (vf_cur_remaining(&cur) > 0) {
      pqt_page_header h;
      vf_status st = pqt_parse_page_header(&cur, &h, &err);
      CHECK_OK(st);
      if (st != VF_OK) break;
      const uint8_t *p = NULL;
      if (!vf_cur_take(&cur, (uint64_t)h.compressed_size, &p)) {
        vf_test_fail(__FILE__, __LINE__, "column %s: page runs past its chunk", k_cols[c].name);
        break;
      }
      CHECK(h.type == PQT_DATA_PAGE && h.has_crc);
      CHECK(h.crc == pqt_crc32(p, (size_t)h.compressed_size));
      CHECK_EQ_INT(h.encoding, PQT_ENC_PLAIN);
      if (k_cols[c].type >= PQT_W_LIST_FLOAT) {
        uint32_t rl = vf_load_u32le(p);
        uint8_t first;
        CHECK_OK(pqt_rle_decode_u8(p + 4, rl, 1, 1, &first, 1, &err));
        CHECK_EQ_INT(first, 0);
      }
      levels += h.num_values;
      pages++;
    }
    if (pages < 3)
      vf_test_fail(__FILE__, __LINE__, "column %s: only %d pages", k_cols[c].name, pages);
    CHECK_EQ_INT(levels, cm->num_values);
  }
  pqt_file_meta_free(&m);

  /* a flipped byte inside the first page of "f64" is caught by the CRC check */
  m = (pqt_file_meta){0};
  CHECK_OK(pqt_parse_file_meta(file + len - 8 - flen, flen, len - 8 - flen, &m, &err));
  int64_t off = m.row_groups[0].columns[C_F64].meta.data_page_offset;
  pqt_file_meta_free(&m);
  file[off + 30] ^= 0x40; /* inside the values: headers here are < 30 bytes */
  io_source *src;
  CHECK_OK(io_open_memory(file, len, "flipped.parquet", &src, &err));
  pqt_file *f;
  CHECK_OK(pqt_open(src, NULL, &f, &err));
  if (err.code == VF_OK) {
    int leaf = C_F64;
    pqt_leaf_data d;
    pqt_leaf_data_init(&d);
    CHECK_STATUS(pqt_read_leaves(f, 0, &leaf, 1, &d, &err), VF_ECORRUPT);
    CHECK(strstr(err.msg, "CRC") || strstr(err.msg, "crc"));
    pqt_leaf_data_free(&d);
    pqt_close(f);
  }
  free(file);
}

VF_TEST(vector_column_large_dim_many_row_groups) {
  enum { DIM = 768, N = 1000 };
  char path[512];
  snprintf(path, sizeof path, "%s/vec.parquet", vf_test_tmpdir());
  pqt_wcolumn cols[2] = {{"id", PQT_W_INT64, false, 0}, {"emb", PQT_W_VECTOR, false, DIM}};
  pqt_writer_opts o = {.codec = PQT_ZSTD, .row_group_rows = 256, .page_bytes = 100000};
  vf_error err = {0};
  pqt_writer *w;
  CHECK_OK(pqt_writer_open(path, cols, 2, &o, &w, &err));
  if (err.code) return;
  float *v = malloc(sizeof(float) * DIM * 100);
  int64_t ids[100];
  for (int64_t r0 = 0; r0 < N; r0 += 100) {
    for (int i = 0; i < 100; i++) {
      ids[i] = r0 + i;
      for (int j = 0; j < DIM; j++)
        v[i * DIM + j] = (float)(r0 + i) + (float)j / 1024.0f;
    }
    pqt_wbatch b[2] = {{.values = ids}, {.values = v}};
    CHECK_OK(pqt_writer_write(w, b, 100, &err));
  }
  CHECK_OK(pqt_writer_close(w, &err));
  io_source *src;
  CHECK_OK(io_open_local(path, &src, &err));
  pqt_file *f;
  CHECK_OK(pqt_open(src, NULL, &f, &err));
  if (err.code) {
    free(v);
    return;
  }
  CHECK_EQ_INT(pqt_meta(f)->nrow_groups, 4);
  int top = pqt_find_top(f, "emb");
  int leaf = pqt_find_leaf(f, "emb.list.element");
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  pqt_dense dense = {0};
  int64_t row = 0;
  for (int g = 0; g < 4; g++) {
    CHECK_OK(pqt_read_leaves(f, g, &leaf, 1, &d, &err));
    CHECK(d.npages > 1);
    int32_t dim = 0;
    CHECK_OK(pqt_dense_from_leaf(f, top, &d, row, &dim, &dense, &err));
    CHECK_EQ_INT(dim, DIM);
    bool ok = true;
    for (int64_t i = 0; i < dense.rows && ok; i++)
      for (int j = 0; j < DIM; j++)
        if (dense.data[i * DIM + j] != (float)(row + i) + (float)j / 1024.0f) ok = false;
    CHECK(ok);
    row += dense.rows;
  }
  CHECK_EQ_INT(row, N);
  pqt_dense_free(&dense);
  pqt_leaf_data_free(&d);
  pqt_close(f);
  free(v);
}

VF_TEST(invalid_batches_are_refused_and_writer_stays_usable) {
  char path[512];
  snprintf(path, sizeof path, "%s/invalid.parquet", vf_test_tmpdir());
  pqt_wcolumn cols[3] = {{"a", PQT_W_INT32, false, 0},
                         {"s", PQT_W_STRING, false, 0},
                         {"l", PQT_W_LIST_STRING, true, 0}};
  vf_error err = {0};
  pqt_writer *w;
  CHECK_OK(pqt_writer_open(path, cols, 3, NULL, &w, &err));
  if (err.code) return;
  int32_t a[2] = {1, 2};
  const char *s[2] = {"x", "y"};
  const char *ls[3] = {"p", "q", "r"};
  int64_t loff[3] = {0, 2, 3};
  uint8_t zero_one[2] = {0, 1};
  pqt_wbatch b[3] = {{.values = a}, {.strs = s}, {.strs = ls, .offsets = loff}};

  b[0].valid = zero_one; /* null in a required column */
  CHECK_STATUS(pqt_writer_write(w, b, 2, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "'a'") && strstr(err.msg, "row 0"));
  b[0].valid = NULL;
  CHECK_STATUS(pqt_writer_write(w, b, -1, &err), VF_EUSAGE);
  b[0].values = NULL;
  CHECK_STATUS(pqt_writer_write(w, b, 2, &err), VF_EUSAGE);
  b[0].values = a;
  s[1] = NULL; /* NULL string in a valid row */
  CHECK_STATUS(pqt_writer_write(w, b, 2, &err), VF_EUSAGE);
  s[1] = "y";
  loff[1] = 4; /* offsets going backwards */
  CHECK_STATUS(pqt_writer_write(w, b, 2, &err), VF_EUSAGE);
  loff[1] = 2;
  ls[2] = NULL; /* NULL list element */
  CHECK_STATUS(pqt_writer_write(w, b, 2, &err), VF_EUSAGE);
  b[2].valid = zero_one + 0; /* ...unless its row is null: {0,1} makes row 0 null, row 1 has r */
  CHECK_STATUS(pqt_writer_write(w, b, 2, &err), VF_EUSAGE);
  ls[2] = "r";
  CHECK_OK(pqt_writer_write(w, b, 2, &err)); /* still usable after refusals */
  CHECK_OK(pqt_writer_write(w, b, 0, &err));
  CHECK_OK(pqt_writer_close(w, &err));

  vf_error_clear(&err);
  io_source *src;
  CHECK_OK(io_open_local(path, &src, &err));
  pqt_file *f;
  CHECK_OK(pqt_open(src, NULL, &f, &err));
  if (err.code) return;
  CHECK_EQ_INT(pqt_meta(f)->num_rows, 2);
  int leaf = pqt_find_leaf(f, "l.list.element");
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  CHECK_OK(pqt_read_leaves(f, 0, &leaf, 1, &d, &err));
  CHECK_EQ_INT(d.nlevels, 2); /* null row, then one element */
  CHECK_EQ_INT(d.nvalues, 1);
  CHECK(d.def && d.def[0] == 0 && d.def[1] == 3);
  CHECK(d.nvalues == 1 && d.offsets[1] - d.offsets[0] == 1 && d.values.data[d.offsets[0]] == 'r');
  pqt_leaf_data_free(&d);
  pqt_close(f);
}

VF_TEST(open_refuses_bad_column_lists) {
  char path[512];
  snprintf(path, sizeof path, "%s/never.parquet", vf_test_tmpdir());
  vf_error err = {0};
  pqt_writer *w = NULL;
  pqt_wcolumn dup[2] = {{"a", PQT_W_INT32, false, 0}, {"a", PQT_W_INT64, false, 0}};
  CHECK_STATUS(pqt_writer_open(path, dup, 2, NULL, &w, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "duplicate"));
  pqt_wcolumn vec0[1] = {{"v", PQT_W_VECTOR, false, 0}};
  CHECK_STATUS(pqt_writer_open(path, vec0, 1, NULL, &w, &err), VF_EUSAGE);
  pqt_wcolumn noname[1] = {{"", PQT_W_INT32, false, 0}};
  CHECK_STATUS(pqt_writer_open(path, noname, 1, NULL, &w, &err), VF_EUSAGE);
  CHECK_STATUS(pqt_writer_open(path, dup, 0, NULL, &w, &err), VF_EUSAGE);
  pqt_writer_opts lzo = {.codec = PQT_LZO};
  CHECK_STATUS(pqt_writer_open(path, dup, 1, &lzo, &w, &err), VF_EUSAGE);
  CHECK(w == NULL);
  CHECK(!file_exists(path));
  char missing[600];
  snprintf(missing, sizeof missing, "%s/no/such/dir/x.parquet", vf_test_tmpdir());
  CHECK(pqt_writer_open(missing, dup, 1, NULL, &w, &err) != VF_OK);
}

VF_TEST(abort_leaves_no_file) {
  char dir[512], path[600];
  snprintf(dir, sizeof dir, "%s/abort", vf_test_tmpdir());
  mkdir(dir, 0777);
  snprintf(path, sizeof path, "%s/x.parquet", dir);
  vf_error err = {0};
  pqt_wcolumn cols[1] = {{"a", PQT_W_INT32, false, 0}};
  pqt_writer_opts o = {.row_group_rows = 10};
  pqt_writer *w;
  CHECK_OK(pqt_writer_open(path, cols, 1, &o, &w, &err));
  if (err.code) return;
  int32_t a[100] = {0};
  pqt_wbatch b = {.values = a};
  CHECK_OK(pqt_writer_write(w, &b, 100, &err)); /* several row groups already on disk */
  CHECK(!file_exists(path));
  pqt_writer_abort(w);
  CHECK(!file_exists(path));
  CHECK_EQ_INT(count_dir_entries(dir), 0);
  pqt_writer_abort(NULL);
}

/* ------------------------------------------------------------------ ARROW:schema */

static int b64_val(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
  if (ch >= '0' && ch <= '9') return ch - '0' + 52;
  if (ch == '+') return 62;
  if (ch == '/') return 63;
  return -1;
}

static uint8_t *b64_decode(const char *s, size_t *n) {
  size_t len = strlen(s);
  uint8_t *out = malloc(len / 4 * 3 + 3);
  size_t o = 0;
  for (size_t i = 0; i + 4 <= len; i += 4) {
    int v[4];
    for (int k = 0; k < 4; k++)
      v[k] = s[i + k] == '=' ? 0 : b64_val(s[i + k]);
    if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0) {
      free(out);
      return NULL;
    }
    uint32_t x = (uint32_t)(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
    out[o++] = (uint8_t)(x >> 16);
    if (s[i + 2] != '=') out[o++] = (uint8_t)(x >> 8);
    if (s[i + 3] != '=') out[o++] = (uint8_t)x;
  }
  *n = o;
  return out;
}

/* minimal flatbuffer navigation for the test (buffers are trusted: written just above) */
static const uint8_t *fbt_field(const uint8_t *table, int slot) {
  int32_t soff;
  memcpy(&soff, table, 4);
  const uint8_t *vt = table - soff;
  uint16_t vsize, off;
  memcpy(&vsize, vt, 2);
  if (4 + 2 * slot >= vsize) return NULL;
  memcpy(&off, vt + 4 + 2 * slot, 2);
  return off ? table + off : NULL;
}
static const uint8_t *fbt_deref(const uint8_t *p) {
  uint32_t o;
  memcpy(&o, p, 4);
  return p + o;
}

static const char *kv_get(const pqt_file_meta *m, const char *key) {
  for (int i = 0; i < m->nkv; i++)
    if (strcmp(m->kv[i].key, key) == 0) return m->kv[i].value ? m->kv[i].value : "";
  return NULL;
}

static void open_meta(const char *path, pqt_file **f) {
  vf_error err = {0};
  io_source *src;
  *f = NULL;
  if (io_open_local(path, &src, &err) != VF_OK || pqt_open(src, NULL, f, &err) != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "cannot open %s: %s", path, err.msg);
    *f = NULL;
  }
}

VF_TEST(arrow_schema_describes_vector_columns) {
  char path[512];
  snprintf(path, sizeof path, "%s/arrow_schema.parquet", vf_test_tmpdir());
  vf_error err = {0};
  pqt_wcolumn cols[3] = {{"id", PQT_W_INT64, false, 0},
                         {"emb", PQT_W_VECTOR, true, 5},
                         {"tags", PQT_W_LIST_STRING, true, 0}};
  pqt_writer *w;
  CHECK_OK(pqt_writer_open(path, cols, 3, NULL, &w, &err));
  if (err.code) return;
  CHECK_OK(pqt_writer_close(w, &err));
  pqt_file *f;
  open_meta(path, &f);
  if (!f) return;
  const char *b64 = kv_get(pqt_meta(f), "ARROW:schema");
  CHECK(b64 != NULL);
  size_t n = 0;
  uint8_t *raw = b64 ? b64_decode(b64, &n) : NULL;
  CHECK(raw != NULL);
  if (raw) {
    uint32_t cont = vf_load_u32le(raw), mlen = vf_load_u32le(raw + 4);
    CHECK(cont == 0xFFFFFFFFu);
    CHECK(mlen == n - 8 && mlen % 8 == 0);
    const uint8_t *fb = raw + 8;
    const uint8_t *msg = fbt_deref(fb);
    const uint8_t *ht = fbt_field(msg, 1);
    CHECK(ht && *ht == 1); /* MessageHeader.Schema */
    int16_t version = 0;
    const uint8_t *vp = fbt_field(msg, 0);
    if (vp) memcpy(&version, vp, 2);
    CHECK_EQ_INT(version, 4);
    const uint8_t *schema = fbt_deref(fbt_field(msg, 2));
    const uint8_t *fields = fbt_deref(fbt_field(schema, 1));
    CHECK_EQ_INT(vf_load_u32le(fields), 3);
    const uint8_t *emb = fbt_deref(fields + 4 + 4);
    const uint8_t *name = fbt_deref(fbt_field(emb, 0));
    CHECK(vf_load_u32le(name) == 3 && memcmp(name + 4, "emb", 4) == 0);
    CHECK(*fbt_field(emb, 1) == 1);  /* nullable */
    CHECK(*fbt_field(emb, 2) == 16); /* Type.FixedSizeList */
    const uint8_t *fsl = fbt_deref(fbt_field(emb, 3));
    CHECK_EQ_INT(vf_load_u32le(fbt_field(fsl, 0)), 5); /* listSize */
    const uint8_t *children = fbt_deref(fbt_field(emb, 5));
    CHECK_EQ_INT(vf_load_u32le(children), 1);
    const uint8_t *id = fbt_deref(fields + 4);
    CHECK(*fbt_field(id, 2) == 2); /* Type.Int */
    CHECK(fbt_field(id, 1) == NULL || *fbt_field(id, 1) == 0);
    CHECK_EQ_INT(vf_load_u32le(fbt_deref(fbt_field(id, 5))), 0); /* empty children */
    const uint8_t *tags = fbt_deref(fields + 4 + 8);
    CHECK(*fbt_field(tags, 2) == 12); /* Type.List */
    free(raw);
  }
  pqt_close(f);

  /* no VECTOR column: no ARROW:schema; a caller's own value is kept as given */
  pqt_wcolumn plain[1] = {{"x", PQT_W_LIST_FLOAT, false, 0}};
  CHECK_OK(pqt_writer_open(path, plain, 1, NULL, &w, &err));
  if (err.code) return;
  CHECK_OK(pqt_writer_close(w, &err));
  open_meta(path, &f);
  if (f) {
    CHECK(kv_get(pqt_meta(f), "ARROW:schema") == NULL);
    pqt_close(f);
  }
  CHECK_OK(pqt_writer_open(path, cols, 3, NULL, &w, &err));
  if (err.code) return;
  CHECK_OK(pqt_writer_add_kv(w, "ARROW:schema", "mine", &err));
  CHECK_OK(pqt_writer_close(w, &err));
  open_meta(path, &f);
  if (f) {
    const char *v = kv_get(pqt_meta(f), "ARROW:schema");
    CHECK(v && strcmp(v, "mine") == 0);
    pqt_close(f);
  }
}

/* ---------------------------------------------------- oracle files (VF_WRITER_OUT) */

static void json_str(FILE *fp, const char *s) {
  fputc('"', fp);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(fp, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(fp, "\\u%04x", ch);
    else
      fputc(ch, fp);
  }
  fputc('"', fp);
}

static void json_num(FILE *fp, double v, bool f32) {
  if (isnan(v))
    fputs("\"NaN\"", fp);
  else if (isinf(v))
    fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", fp);
  else
    fprintf(fp, f32 ? "%.9g" : "%.17g", v);
}

/* The sample rows as JSON lines, in the conventions of tests/oracle/read_with_*.mjs. */
static void write_expected(const char *path, int64_t nrows) {
  FILE *fp = fopen(path, "w");
  CHECK(fp != NULL);
  if (!fp) return;
  char tmp[64];
  for (int64_t r = 0; r < nrows; r++) {
    fputc('{', fp);
    for (int c = 0; c < NCOLS; c++) {
      if (c) fputc(',', fp);
      fprintf(fp, "\"%s\":", k_cols[c].name);
      if (s_null(c, r)) {
        fputs("null", fp);
        continue;
      }
      switch (c) {
      case C_I32: fprintf(fp, "%d", s_i32(r)); break;
      case C_I64: fprintf(fp, "%lld", (long long)s_i64(r)); break;
      case C_F32: json_num(fp, s_f32(r), true); break;
      case C_F64: json_num(fp, s_f64(r), false); break;
      case C_FLAG: fputs(s_flag(r) ? "true" : "false", fp); break;
      case C_TEXT:
        s_text(r, tmp, sizeof tmp);
        json_str(fp, tmp);
        break;
      case C_KEY:
        s_key(r, tmp, sizeof tmp);
        json_str(fp, tmp);
        break;
      default: {
        int len = c == C_LF ? s_lf_len(r) : c == C_LS ? s_ls_len(r) : c == C_EMB ? 4 : 3;
        fputc('[', fp);
        for (int j = 0; j < len; j++) {
          if (j) fputc(',', fp);
          if (c == C_LS) {
            s_ls(r, j, tmp, sizeof tmp);
            json_str(fp, tmp);
          } else {
            json_num(fp, c == C_LF ? s_lf(r, j) : c == C_EMB ? s_emb(r, j) : s_emb2(r, j), true);
          }
        }
        fputc(']', fp);
      }
      }
    }
    fputs("}\n", fp);
  }
  fclose(fp);
}

VF_TEST(oracle_files) {
  const char *out = getenv("VF_WRITER_OUT");
  if (!out || !*out) {
    vf_test_skip("VF_WRITER_OUT not set (used by test_writer_oracle.sh)");
    return;
  }
  mkdir(out, 0777);
  /* float32 columns, so the comparison can round both sides to float32 */
  char path[1024];
  snprintf(path, sizeof path, "%s/float32_columns.txt", out);
  FILE *fp = fopen(path, "w");
  CHECK(fp != NULL);
  if (fp) {
    fputs("f32\nlf\nemb\nemb2\n", fp);
    fclose(fp);
  }
  static const pqt_codec codecs[] = {PQT_UNCOMPRESSED, PQT_SNAPPY, PQT_GZIP, PQT_ZSTD};
  static const int64_t rows[] = {1000, 1000, 1000, 1000, 0};
  for (int i = 0; i < 5; i++) {
    pqt_codec codec = i < 4 ? codecs[i] : PQT_ZSTD;
    const char *name = i < 4 ? pqt_codec_name(codec) : "empty";
    vf_error err = {0};
    snprintf(path, sizeof path, "%s/writer_%s.parquet", out, name);
    vf_status st = write_sample(path, codec, rows[i], 300, 1024, &err);
    CHECK_OK(st);
    if (st != VF_OK) fprintf(stderr, "  %s\n", err.msg);
    snprintf(path, sizeof path, "%s/writer_%s.expected.jsonl", out, name);
    write_expected(path, rows[i]);
  }
}
