/* IVF index: build (streaming, spilled, budgeted), open, search — recall of every code type on
 * a clustered synthetic set against exact search (idx_* kernels), exact scores for flat at full
 * probe for cosine / dot / euclid, byte-identical files across thread counts and budgets,
 * corrupted and truncated files refused with VF_ECORRUPT, bad input refused. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "vf_test.h"
#include "index/ivf_internal.h"
#include "vforge/ivf.h"

/* 20k rows; 8k under AddressSanitizer (a -O0 build) to keep the test a few seconds there */
#if defined(__SANITIZE_ADDRESS__) || defined(VF_TEST_SMALL)
#define N 8000
#else
#define N 20000
#endif
#define D 32
#define NQ 100
#define NB 64

static float *g_x, *g_q;
static char **g_ids;
static size_t *g_idlen;

static uint64_t rs;
static double urand(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (double)(rs >> 11) / 9007199254740992.0;
}
static float grand(void) {
  double u = urand(), v = urand();
  if (u < 1e-12) u = 1e-12;
  return (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
}

static void make_data(void) {
  if (g_x) return;
  rs = 20261129;
  float *c = malloc(NB * D * sizeof *c);
  for (size_t i = 0; i < NB * D; i++)
    c[i] = 4.0f * grand();
  g_x = malloc((size_t)N * D * sizeof *g_x);
  g_q = malloc((size_t)NQ * D * sizeof *g_q);
  for (size_t i = 0; i < N; i++) {
    size_t b = (size_t)(urand() * NB);
    for (size_t e = 0; e < D; e++)
      g_x[i * D + e] = c[b * D + e] + grand() + 0.5f; /* offset: dot differs from cosine */
  }
  for (size_t i = 0; i < NQ; i++) {
    size_t b = (size_t)(urand() * NB);
    for (size_t e = 0; e < D; e++)
      g_q[i * D + e] = c[b * D + e] + grand() + 0.5f;
  }
  free(c);
  g_ids = malloc(N * sizeof *g_ids);
  g_idlen = malloc(N * sizeof *g_idlen);
  for (size_t i = 0; i < N; i++) {
    char buf[32];
    int l = snprintf(buf, sizeof buf, "pt-%06zu", i); /* id order == row order */
    g_ids[i] = strdup(buf);
    g_idlen[i] = (size_t)l;
  }
}

static char *tmp_path(const char *name) {
  static char buf[4][512];
  static int k;
  char *p = buf[k++ % 4];
  snprintf(p, 512, "%s/%s", vf_test_tmpdir(), name);
  return p;
}

static vf_status build(const ivf_params *p, const char *path, size_t nrows, size_t batch,
                       ivf_build_report *rep, vf_error *err) {
  ivf_builder *b = NULL;
  vf_status st = ivf_builder_open(p, path, nrows, &b, err);
  if (st) return st;
  for (size_t r = 0; r < nrows; r += batch) {
    size_t n = nrows - r < batch ? nrows - r : batch;
    if ((st = ivf_builder_add(b, g_x + r * D, n, (const char *const *)g_ids + r, g_idlen + r, err))) {
      ivf_builder_abort(b);
      return st;
    }
  }
  st = ivf_builder_finish(b, rep, err);
  if (st && st != VF_EUSAGE) printf("  build %s: %s\n", path, err->msg);
  return st;
}

/* exact top-k (scores larger = nearer) with the idx_* kernels */
static void exact(corpus_distance m, size_t k, idx_hit *out) {
  float *x = malloc((size_t)N * D * sizeof *x), *q = malloc(D * sizeof *q), *s = malloc(N * sizeof *s);
  memcpy(x, g_x, (size_t)N * D * sizeof *x);
  if (m == CORPUS_COSINE) idx_normalize_rows(x, N, D);
  idx_topk t;
  CHECK_OK(idx_topk_init(&t, k, NULL, NULL, NULL));
  for (size_t i = 0; i < NQ; i++) {
    memcpy(q, g_q + i * D, D * sizeof *q);
    if (m == CORPUS_COSINE) idx_normalize(q, D);
    idx_scores(m, q, x, N, D, s);
    idx_topk_reset(&t);
    idx_topk_push_batch(&t, s, N, NULL, 0, NULL);
    idx_topk_sorted(&t, out + i * k);
  }
  idx_topk_free(&t);
  free(x);
  free(q);
  free(s);
}

static float exact_score(corpus_distance m, size_t qi, int64_t row) {
  const float *q = g_q + qi * D, *x = g_x + row * D;
  if (m == CORPUS_COSINE) return idx_cosine(q, x, D);
  if (m == CORPUS_DOT) return idx_dot(q, x, D);
  return -idx_l2(q, x, D);
}

/* recall@k of `hits` against `truth`; a hit whose exact score ties the k-th true score (within
 * rounding) counts as found */
static double recall(corpus_distance m, const idx_hit *hits, const size_t *counts,
                     const idx_hit *truth, size_t k) {
  size_t found = 0;
  for (size_t i = 0; i < NQ; i++) {
    const idx_hit *t = truth + i * k;
    float kth = t[k - 1].score, tol = 1e-5f * (fabsf(kth) + 1.0f);
    for (size_t j = 0; j < counts[i]; j++) {
      int64_t r = hits[i * k + j].key;
      bool in = false;
      for (size_t a = 0; a < k && !in; a++)
        in = t[a].key == r;
      if (!in && exact_score(m, i, r) >= kth - tol) in = true;
      found += in;
    }
  }
  return (double)found / (double)(NQ * k);
}

static double run_recall(const char *path, corpus_distance m, uint32_t nprobe, uint32_t rerank,
                         size_t k, const idx_hit *truth, int threads) {
  ivf_index *ix = NULL;
  vf_error err = {0};
  if (ivf_open(path, &ix, &err) != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "ivf_open: %s", err.msg);
    return 0;
  }
  idx_hit *hits = malloc(NQ * k * sizeof *hits);
  size_t counts[NQ];
  ivf_search_opts so = {.nprobe = nprobe, .threads = threads, .rerank = rerank};
  CHECK_OK(ivf_search(ix, g_q, NQ, D, k, &so, hits, counts, &err));
  double r = recall(m, hits, counts, truth, k);
  ivf_close(ix);
  free(hits);
  return r;
}

VF_TEST(ivf_flat_exact_at_full_probe) {
  make_data();
  corpus_distance ms[3] = {CORPUS_COSINE, CORPUS_DOT, CORPUS_EUCLID};
  size_t k = 10;
  idx_hit *truth = malloc(NQ * k * sizeof *truth), *hits = malloc(NQ * k * sizeof *hits);
  for (int mi = 0; mi < 3; mi++) {
    ivf_params p = {.type = IVF_FLAT, .metric = ms[mi], .dim = D, .nlist = 64, .threads = 2};
    const char *path = tmp_path("flat.ivf");
    vf_error err = {0};
    ivf_build_report rep = {0};
    CHECK_OK(build(&p, path, N, 1500, &rep, &err));
    CHECK_EQ_INT(rep.rows, N);
    CHECK_EQ_INT(rep.nlist, 64);
    CHECK(rep.spill_bytes > 0);
    CHECK(rep.training_rows_seen == N);
    CHECK(rep.training_rows_retained > 0 && rep.training_rows_retained <= N);
    CHECK(rep.list_max_over_mean >= 1.0 && rep.list_balance >= (double)N / 64);
    CHECK(rep.peak_rss_bytes > 0 && rep.seconds > 0);
    exact(ms[mi], k, truth);
    ivf_index *ix = NULL;
    CHECK_OK(ivf_open(path, &ix, &err));
    if (!ix) continue;
    ivf_info in;
    ivf_info_get(ix, &in);
    CHECK_EQ_INT(in.rows, N);
    CHECK_EQ_INT(in.nlist, 64);
    CHECK_EQ_INT(in.type, IVF_FLAT);
    CHECK_EQ_INT(in.metric, ms[mi]);
    CHECK(in.list_min <= in.list_max && in.list_max > 0);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (uint64_t)sb.st_size == in.file_bytes);
    size_t counts[NQ];
    ivf_search_opts so = {.nprobe = 64, .threads = 2};
    CHECK_OK(ivf_search(ix, g_q, NQ, D, k, &so, hits, counts, &err));
    double r = recall(ms[mi], hits, counts, truth, k);
    if (r != 1.0) vf_test_fail(__FILE__, __LINE__, "metric %d: flat full-probe recall %.4f", mi, r);
    size_t bad = 0;
    for (size_t i = 0; i < NQ; i++) {
      CHECK_EQ_INT(counts[i], k);
      for (size_t j = 0; j < counts[i]; j++) {
        const idx_hit *h = &hits[i * k + j];
        float e = exact_score(ms[mi], i, h->key);
        if (fabsf(e - h->score) > 1e-4f * (fabsf(e) + 1.0f)) bad++;
        if (j) CHECK(h->score <= hits[i * k + j - 1].score);
        size_t il;
        const char *id = ivf_id(ix, h->key, &il);
        CHECK(il == g_idlen[h->key] && memcmp(id, g_ids[h->key], il) == 0);
      }
    }
    CHECK_EQ_INT(bad, 0);
    /* fewer probes: still good on clustered data, and never better than full probe */
    so.nprobe = 8;
    CHECK_OK(ivf_search(ix, g_q, NQ, D, k, &so, hits, counts, &err));
    double r8 = recall(ms[mi], hits, counts, truth, k);
    if (r8 < 0.85) vf_test_fail(__FILE__, __LINE__, "metric %d: flat nprobe 8 recall %.4f", mi, r8);
    ivf_close(ix);
  }
  free(truth);
  free(hits);
}

VF_TEST(ivf_codes_recall) {
  make_data();
  size_t k = 10;
  idx_hit *truth = malloc(NQ * k * sizeof *truth);
  exact(CORPUS_EUCLID, k, truth);
  const char *path = tmp_path("codes.ivf");
  struct {
    ivf_code type;
    uint32_t pq_m, bits, rerank, nprobe;
    double min_recall;
    const char *what;
  } cases[] = {
      {IVF_SQ8, 0, 0, 0, 64, 0.90, "sq8"},
      {IVF_SQ8, 0, 0, 4, 64, 0.99, "sq8+rerank"},
      {IVF_PQ, 8, 0, 0, 64, 0.50, "pq8"},
      {IVF_PQ, 8, 0, 10, 64, 0.97, "pq8+rerank"},
      {IVF_RABITQ, 0, 1, 0, 64, 0.40, "rabitq1"},
      {IVF_RABITQ, 0, 4, 0, 64, 0.80, "rabitq4"},
      {IVF_RABITQ, 0, 1, 4, 64, 0.99, "rabitq1+rerank"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ivf_params p = {.type = cases[c].type, .metric = CORPUS_EUCLID, .dim = D, .nlist = 64,
                    .pq_m = cases[c].pq_m, .rabitq_bits = cases[c].bits,
                    .rerank = cases[c].rerank, .max_train = 4000, .threads = 2};
    vf_error err = {0};
    ivf_build_report rep = {0};
    CHECK_OK(build(&p, path, N, 4096, &rep, &err));
    double r = run_recall(path, CORPUS_EUCLID, cases[c].nprobe, 0, k, truth, 2);
    printf("  %-16s recall@10 %.4f (build %.3f s)\n", cases[c].what, r, rep.seconds);
    if (r < cases[c].min_recall)
      vf_test_fail(__FILE__, __LINE__, "%s: recall@10 %.4f < %.2f", cases[c].what, r,
                   cases[c].min_recall);
    if (cases[c].rerank == 0 && cases[c].type != IVF_FLAT)
      CHECK(r < 0.9999); /* approximate codes are not exact: the comparison is real */
  }
  free(truth);
}

VF_TEST(ivf_codes_dot_and_cosine) {
  make_data();
  size_t k = 10;
  idx_hit *truth = malloc(NQ * k * sizeof *truth);
  const char *path = tmp_path("dot.ivf");
  corpus_distance ms[2] = {CORPUS_DOT, CORPUS_COSINE};
  ivf_code ts[3] = {IVF_SQ8, IVF_PQ, IVF_RABITQ};
  for (int mi = 0; mi < 2; mi++) {
    exact(ms[mi], k, truth);
    for (int ti = 0; ti < 3; ti++) {
      ivf_params p = {.type = ts[ti], .metric = ms[mi], .dim = D, .nlist = 32, .pq_m = 16,
                      .rabitq_bits = 4, .rerank = 4, .max_train = 2500, .threads = 2};
      vf_error err = {0};
      CHECK_OK(build(&p, path, N, 5000, NULL, &err));
      double r = run_recall(path, ms[mi], 32, 0, k, truth, 1);
      /* cosine on this set (every row near one direction) is hard for 16-byte PQ: FAISS
       * IVFPQ gets 0.40 without re-rank where we get 0.38; re-ranking 40 lifts it to 0.75 */
      double want = ms[mi] == CORPUS_COSINE && ts[ti] == IVF_PQ ? 0.70 : 0.97;
      if (r < want)
        vf_test_fail(__FILE__, __LINE__, "%s %s + rerank: recall@10 %.4f", idx_metric_name(ms[mi]),
                     ivf_code_name(ts[ti]), r);
      double r0 = run_recall(path, ms[mi], 32, 0, k, truth, 1);
      CHECK(r0 == r); /* search is deterministic */
    }
  }
  free(truth);
}

static void *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long l = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = malloc((size_t)l + 1);
  *n = fread(p, 1, (size_t)l, f);
  fclose(f);
  return p;
}

static bool spit(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(p, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

static unsigned long long g_flushes;
static void log_cb(void *user, vf_log_level level, const char *msg) {
  (void)user;
  (void)level;
  const char *f = strstr(msg, "rows, ");
  unsigned long long n;
  unsigned nl;
  if (f && sscanf(f, "rows, %u lists, %llu list-buffer flushes", &nl, &n) == 2) g_flushes = n;
}

VF_TEST(ivf_deterministic_threads_and_budget) {
  make_data();
  ivf_code ts[4] = {IVF_FLAT, IVF_SQ8, IVF_PQ, IVF_RABITQ};
  for (int ti = 0; ti < 4; ti++) {
    ivf_params p = {.type = ts[ti], .metric = CORPUS_EUCLID, .dim = D, .nlist = 50, .pq_m = 4,
                    .rabitq_bits = ti == 3 ? 1 : 0, .rerank = 2, .max_train = 2000, .threads = 1,
                    .memory_budget = (uint64_t)512 << 20};
    const char *a = tmp_path("det1.ivf"), *b = tmp_path("det2.ivf"), *c = tmp_path("det3.ivf");
    vf_error err = {0};
    ivf_build_report r1 = {0}, r3 = {0};
    CHECK_OK(build(&p, a, N < 9000 ? N : 9000, 700, &r1, &err));
    p.threads = 2;
    CHECK_OK(build(&p, b, N < 9000 ? N : 9000, 3000, NULL, &err));
    /* a small budget: tiny spill chunks, list buffers flushed many times */
    p.memory_budget = (uint64_t)3072 << 10;
    g_flushes = 0;
    vf_set_log_handler(log_cb, NULL);
    CHECK_OK(build(&p, c, N < 9000 ? N : 9000, 1000, &r3, &err));
    vf_set_log_handler(NULL, NULL);
    if (g_flushes < 1) vf_test_fail(__FILE__, __LINE__, "type %d: %llu flushes", ti, g_flushes);
    if (err.code) printf("  %s\n", err.msg);
    size_t na = 0, nb = 0, nc = 0;
    uint8_t *fa = slurp(a, &na), *fb = slurp(b, &nb), *fc = slurp(c, &nc);
    CHECK(fa && fb && fc && na > 0);
    CHECK(na == nb && fa && fb && memcmp(fa, fb, na) == 0);
    CHECK(na == nc && fa && fc && memcmp(fa, fc, na) == 0);
    CHECK(r3.peak_rss_bytes > 0);
    free(fa);
    free(fb);
    free(fc);
  }
  /* a different seed changes the file */
  ivf_params p = {.type = IVF_SQ8, .metric = CORPUS_EUCLID, .dim = D, .nlist = 50, .seed = 5};
  vf_error err = {0};
  CHECK_OK(build(&p, tmp_path("s5.ivf"), 5000, 5000, NULL, &err));
  p.seed = 6;
  CHECK_OK(build(&p, tmp_path("s6.ivf"), 5000, 5000, NULL, &err));
  size_t n5, n6;
  uint8_t *f5 = slurp(tmp_path("s5.ivf"), &n5), *f6 = slurp(tmp_path("s6.ivf"), &n6);
  CHECK(f5 && f6 && (n5 != n6 || memcmp(f5, f6, n5) != 0));
  free(f5);
  free(f6);
}

VF_TEST(ivf_budget_too_small_is_refused) {
  make_data();
  ivf_params p = {.type = IVF_FLAT, .metric = CORPUS_EUCLID, .dim = D, .nlist = 16,
                  .max_train = 100000, .memory_budget = 1 << 20};
  ivf_builder *b = NULL;
  vf_error err = {0};
  CHECK_STATUS(ivf_builder_open(&p, tmp_path("small.ivf"), N, &b, &err), VF_ENOMEM);
  CHECK(strstr(err.msg, "budget") != NULL);
}

VF_TEST(ivf_corrupt_files_are_refused) {
  make_data();
  const char *path = tmp_path("good.ivf"), *bad = tmp_path("bad.ivf");
  ivf_code ts[2] = {IVF_PQ, IVF_RABITQ};
  for (int ti = 0; ti < 2; ti++) {
    ivf_params p = {.type = ts[ti], .metric = CORPUS_DOT, .dim = D, .nlist = 8, .pq_m = 4,
                    .rerank = 2};
    vf_error err = {0};
    CHECK_OK(build(&p, path, 2000, 2000, NULL, &err));
    size_t n = 0;
    uint8_t *f = slurp(path, &n);
    CHECK(f && n > 300);
    if (!f) return;
    ivf_index *ix = NULL;
    CHECK_OK(ivf_open(path, &ix, &err));
    ivf_close(ix);
    size_t cuts[] = {0, 7, 100, 192, 500, n / 2, n - 9, n - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
      CHECK(spit(bad, f, cuts[c]));
      ix = NULL;
      CHECK_STATUS(ivf_open(bad, &ix, &err), VF_ECORRUPT);
      CHECK(ix == NULL && strstr(err.msg, "bad.ivf") != NULL);
    }
    size_t flips[] = {0, 9, 13, 17, 24, 50, 70, 200, n / 3, n / 2, n - 20, n - 3};
    for (size_t c = 0; c < sizeof flips / sizeof flips[0]; c++) {
      f[flips[c]] ^= 0x5a;
      CHECK(spit(bad, f, n));
      ix = NULL;
      vf_status st = ivf_open(bad, &ix, &err);
      CHECK_STATUS(st, VF_ECORRUPT);
      if (st == VF_OK) ivf_close(ix);
      f[flips[c]] ^= 0x5a;
    }
    free(f);
  }
  vf_error err = {0};
  ivf_index *ix = NULL;
  CHECK_STATUS(ivf_open(tmp_path("missing.ivf"), &ix, &err), VF_ENOTFOUND);
}

VF_TEST(ivf_bad_input) {
  make_data();
  vf_error err = {0};
  ivf_builder *b = NULL;
  ivf_params p = {.type = IVF_FLAT, .metric = CORPUS_MANHATTAN, .dim = D};
  CHECK_STATUS(ivf_builder_open(&p, tmp_path("x.ivf"), 0, &b, &err), VF_EUSAGE);
  p.metric = CORPUS_EUCLID;
  p.type = IVF_PQ;
  p.pq_m = 5;
  CHECK_STATUS(ivf_builder_open(&p, tmp_path("x.ivf"), 0, &b, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "pq_m") != NULL);
  p.type = IVF_FLAT;
  p.nlist = 4;
  CHECK_OK(ivf_builder_open(&p, tmp_path("x.ivf"), 0, &b, &err));
  float v[2 * D];
  memcpy(v, g_x, sizeof v);
  v[D + 3] = NAN;
  CHECK_STATUS(ivf_builder_add(b, v, 2, (const char *const *)g_ids, g_idlen, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 1") != NULL);
  ivf_builder_abort(b);
  struct stat sb;
  CHECK(stat(tmp_path("x.ivf"), &sb) != 0); /* nothing left behind */
  /* nlist larger than the rows */
  p.nlist = 100;
  CHECK_STATUS(build(&p, tmp_path("y.ivf"), 50, 50, NULL, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "nlist") != NULL);
  CHECK(stat(tmp_path("y.ivf"), &sb) != 0);
  /* search: dimension mismatch, k = 0 */
  p.nlist = 4;
  CHECK_OK(build(&p, tmp_path("z.ivf"), 300, 300, NULL, &err));
  ivf_index *ix = NULL;
  CHECK_OK(ivf_open(tmp_path("z.ivf"), &ix, &err));
  if (!ix) return;
  idx_hit hits[400];
  size_t counts[1];
  CHECK_STATUS(ivf_search(ix, g_q, 1, D - 1, 10, NULL, hits, counts, &err), VF_EUSAGE);
  CHECK_STATUS(ivf_search(ix, g_q, 1, D, 0, NULL, hits, counts, &err), VF_EUSAGE);
  /* k larger than the rows: every row comes back */
  ivf_search_opts so = {.nprobe = 4};
  CHECK_OK(ivf_search(ix, g_q, 1, D, 400, &so, hits, counts, &err));
  CHECK_EQ_INT(counts[0], 300);
  ivf_close(ix);
  CHECK(strcmp(ivf_code_name(IVF_RABITQ), "rabitq") == 0);
  ivf_code c;
  CHECK(ivf_code_parse("sq8", &c) && c == IVF_SQ8);
  CHECK(!ivf_code_parse("sq4", &c));
}

/* SQ8 bounds cover every encoded row, not just the training sample: an outlier that the
 * 500-row sample cannot contain is still encoded without clipping. */
VF_TEST(ivf_sq8_bounds_cover_outliers) {
  make_data();
  size_t n = 5000, out = 4321;
  float *x = malloc(n * D * sizeof *x);
  memcpy(x, g_x, n * D * sizeof *x);
  for (size_t e = 0; e < D; e++)
    x[out * D + e] = 60.0f + (float)e;
  ivf_params p = {.type = IVF_SQ8, .metric = CORPUS_EUCLID, .dim = D, .nlist = 16, .max_train = 500};
  ivf_builder *b = NULL;
  vf_error err = {0};
  const char *path = tmp_path("outlier.ivf");
  CHECK_OK(ivf_builder_open(&p, path, n, &b, &err));
  if (!b) return;
  CHECK_OK(ivf_builder_add(b, x, n, (const char *const *)g_ids, g_idlen, &err));
  ivf_build_report rep = {0};
  CHECK_OK(ivf_builder_finish(b, &rep, &err));
  CHECK(rep.training_rows_retained <= 500);
  ivf_index *ix = NULL;
  CHECK_OK(ivf_open(path, &ix, &err));
  if (ix) {
    idx_hit h[1];
    size_t cnt[1];
    ivf_search_opts so = {.nprobe = 16};
    CHECK_OK(ivf_search(ix, x + out * D, 1, D, 1, &so, h, cnt, &err));
    CHECK_EQ_INT(cnt[0], 1);
    CHECK_EQ_INT(h[0].key, (long long)out);
    if (h[0].score < -1.0f) vf_test_fail(__FILE__, __LINE__, "outlier decoded %.3f away", -h[0].score);
    ivf_close(ix);
  }
  free(x);
}

/* The AVX2 list-scan kernels agree with the scalar reference (rounding only). */
VF_TEST(ivf_kernels_match_scalar) {
  const ivf_kern *a = ivf_kern_active(), *r = ivf_kern_scalar();
  rs = 99;
  float w[300], s2[300], lut[40 * 256], o1[32], o2[32];
  uint8_t c[300], codes[40 * 32];
  for (int i = 0; i < 300; i++) {
    w[i] = grand();
    s2[i] = (float)urand() * 0.1f;
    c[i] = (uint8_t)(urand() * 256);
  }
  for (int i = 0; i < 40 * 256; i++)
    lut[i] = (float)urand();
  for (int i = 0; i < 40 * 32; i++)
    codes[i] = (uint8_t)(urand() * 256);
  size_t dims[] = {1, 7, 8, 16, 31, 32, 100, 300};
  for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
    size_t d = dims[t];
    float x1 = a->sq8_l2(w, s2, c, d), x2 = r->sq8_l2(w, s2, c, d);
    CHECK(fabsf(x1 - x2) <= 1e-4f * (fabsf(x2) + 1.0f));
    x1 = a->u8_dot(w, c, d);
    x2 = r->u8_dot(w, c, d);
    CHECK(fabsf(x1 - x2) <= 1e-4f * (fabsf(x2) + 100.0f));
    if (d <= 40) {
      x1 = a->bytes_lut(lut, c, d);
      x2 = r->bytes_lut(lut, c, d);
      CHECK(fabsf(x1 - x2) <= 1e-4f * (fabsf(x2) + 1.0f));
      a->pq_block(lut, codes, d, o1);
      r->pq_block(lut, codes, d, o2);
      for (int j = 0; j < 32; j++)
        CHECK(fabsf(o1[j] - o2[j]) <= 1e-4f * (fabsf(o2[j]) + 1.0f));
    }
  }
  /* argmin: identical (index and value), ties to the first index */
  for (int rep = 0; rep < 50; rep++) {
    size_t n = 1 + (size_t)(urand() * 299);
    for (size_t i = 0; i < n; i++) {
      s2[i] = (float)(int)(urand() * 4); /* many ties */
      w[i] = (float)(int)(urand() * 3);
    }
    uint32_t i1, i2;
    float v1 = a->argmin(s2, w, n, &i1), v2 = r->argmin(s2, w, n, &i2);
    CHECK(i1 == i2 && v1 == v2);
    uint32_t want = 0;
    for (size_t i = 1; i < n; i++)
      if (s2[i] - 2 * w[i] < s2[want] - 2 * w[want]) want = (uint32_t)i;
    CHECK_EQ_INT(i2, want);
  }
  /* and the scalar reference is what it claims: a hand computation */
  float e = 0;
  for (int j = 0; j < 5; j++)
    e += lut[j * 256 + c[j]];
  CHECK(fabsf(r->bytes_lut(lut, c, 5) - e) < 1e-5f);
}

/* Odd dimensions (no SIMD multiple, pq_m = dim, RaBitQ padding): every type with re-rank at full
 * probe finds the exact neighbours. */
VF_TEST(ivf_odd_dimension) {
  make_data();
  size_t n = 3000, d = 7, k = 5, nq = 20;
  float *x = malloc(n * d * sizeof *x), *q = malloc(nq * d * sizeof *q), *s = malloc(n * sizeof *s);
  for (size_t i = 0; i < n; i++)
    memcpy(x + i * d, g_x + i * D, d * sizeof *x);
  for (size_t i = 0; i < nq; i++)
    memcpy(q + i * d, g_q + i * D, d * sizeof *q);
  ivf_code ts[4] = {IVF_FLAT, IVF_SQ8, IVF_PQ, IVF_RABITQ};
  for (int ti = 0; ti < 4; ti++) {
    ivf_params p = {.type = ts[ti], .metric = CORPUS_EUCLID, .dim = (int32_t)d, .nlist = 10,
                    .pq_m = 7, .rabitq_bits = 2, .rerank = 10};
    ivf_builder *b = NULL;
    vf_error err = {0};
    const char *path = tmp_path("odd.ivf");
    CHECK_OK(ivf_builder_open(&p, path, 0, &b, &err));
    if (!b) continue;
    for (size_t r = 0; r < n; r += 777) {
      size_t m = n - r < 777 ? n - r : 777;
      CHECK_OK(ivf_builder_add(b, x + r * d, m, (const char *const *)g_ids + r, g_idlen + r, &err));
    }
    CHECK_OK(ivf_builder_finish(b, NULL, &err));
    ivf_index *ix = NULL;
    CHECK_OK(ivf_open(path, &ix, &err));
    if (!ix) continue;
    idx_hit hits[20 * 5];
    size_t counts[20];
    ivf_search_opts so = {.nprobe = 10, .threads = 2};
    CHECK_OK(ivf_search(ix, q, nq, (int32_t)d, k, &so, hits, counts, &err));
    size_t found = 0;
    idx_topk t;
    CHECK_OK(idx_topk_init(&t, k, NULL, NULL, NULL));
    idx_hit truth[5];
    for (size_t i = 0; i < nq; i++) {
      idx_scores(CORPUS_EUCLID, q + i * d, x, n, d, s);
      idx_topk_reset(&t);
      idx_topk_push_batch(&t, s, n, NULL, 0, NULL);
      idx_topk_sorted(&t, truth);
      for (size_t j = 0; j < counts[i]; j++)
        for (size_t a = 0; a < k; a++)
          if (hits[i * k + j].key == truth[a].key) found++;
    }
    idx_topk_free(&t);
    if (found < nq * k * 97 / 100)
      vf_test_fail(__FILE__, __LINE__, "%s dim 7: %zu of %zu found", ivf_code_name(ts[ti]), found, nq * k);
    ivf_close(ix);
  }
  free(x);
  free(q);
  free(s);
}
