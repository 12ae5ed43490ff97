/* IVF index: build (streaming, spilled, budgeted), open, search — recall of every code type on
 * a clustered synthetic set against exact search (idx_* kernels), exact scores for flat at full
 * probe for cosine / dot / euclid, byte-identical files across thread counts and budgets,
 * corrupted and truncated files refused with VF_ECORRUPT, bad input refused; 4-bit PQ (fast
 * scan): kernels against the scalar reference, scores against a float-ADC oracle, file
 * versions. */
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
    uint32_t pq_m, nbits, bits, rerank, nprobe, search_rerank;
    double min_recall;
    const char *what;
  } cases[] = {
      {IVF_SQ8, 0, 0, 0, 0, 64, 0, 0.90, "sq8"},
      {IVF_SQ8, 0, 0, 0, 4, 64, 0, 0.99, "sq8+rerank"},
      {IVF_PQ, 8, 0, 0, 0, 64, 0, 0.50, "pq8"},
      {IVF_PQ, 8, 0, 0, 10, 64, 0, 0.97, "pq8+rerank"},
      /* 4-bit PQ with twice the sub-quantizers: the same 8 bytes per row */
      {IVF_PQ, 16, 4, 0, 0, 64, 0, 0.50, "pq4"},
      {IVF_PQ, 16, 4, 0, 10, 64, 0, 0.97, "pq4+rerank"},
      {IVF_PQ, 16, 4, 0, 0, 64, 10, 0.50, "pq4+adc"},
      {IVF_PQ, 16, 4, 0, 10, 64, 20, 0.97, "pq4+rerank 20"},
      {IVF_RABITQ, 0, 0, 1, 0, 64, 0, 0.40, "rabitq1"},
      {IVF_RABITQ, 0, 0, 4, 0, 64, 0, 0.80, "rabitq4"},
      {IVF_RABITQ, 0, 0, 1, 4, 64, 0, 0.99, "rabitq1+rerank"},
  };
  double got[sizeof cases / sizeof cases[0]];
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ivf_params p = {.type = cases[c].type, .metric = CORPUS_EUCLID, .dim = D, .nlist = 64,
                    .pq_m = cases[c].pq_m, .pq_nbits = cases[c].nbits,
                    .rabitq_bits = cases[c].bits, .rerank = cases[c].rerank, .max_train = 4000,
                    .threads = 2};
    vf_error err = {0};
    ivf_build_report rep = {0};
    CHECK_OK(build(&p, path, N, 4096, &rep, &err));
    double r = run_recall(path, CORPUS_EUCLID, cases[c].nprobe, cases[c].search_rerank, k, truth, 2);
    got[c] = r;
    printf("  %-16s recall@10 %.4f (build %.3f s)\n", cases[c].what, r, rep.seconds);
    if (r < cases[c].min_recall)
      vf_test_fail(__FILE__, __LINE__, "%s: recall@10 %.4f < %.2f", cases[c].what, r,
                   cases[c].min_recall);
    if (cases[c].rerank == 0 && cases[c].type != IVF_FLAT)
      CHECK(r < 0.9999); /* approximate codes are not exact: the comparison is real */
  }
  /* 4-bit codes at the same code size come close to 8-bit ones (16 centroids of 2 dimensions
   * quantise a little worse than 256 of 4: 0.53 vs 0.57 in the -O2 build, 0.59 vs 0.66 in the
   * -O0 sanitizer build, whose k-means rounds differently without FMA contraction), the u8
   * tables cost nothing measurable against float ADC, and re-ranking twice as deep (the scan is
   * the cheap part) matches 8-bit PQ with re-rank */
  if (got[4] < got[2] - 0.08)
    vf_test_fail(__FILE__, __LINE__, "pq4 %.4f vs pq8 %.4f", got[4], got[2]);
  if (got[5] < got[3] - 0.02)
    vf_test_fail(__FILE__, __LINE__, "pq4+rerank %.4f vs pq8+rerank %.4f", got[5], got[3]);
  if (fabs(got[6] - got[4]) > 0.01)
    vf_test_fail(__FILE__, __LINE__, "pq4+adc %.4f vs pq4 %.4f", got[6], got[4]);
  if (got[7] < got[3] - 0.005)
    vf_test_fail(__FILE__, __LINE__, "pq4+rerank 20 %.4f vs pq8+rerank %.4f", got[7], got[3]);
  free(truth);
}

VF_TEST(ivf_codes_dot_and_cosine) {
  make_data();
  size_t k = 10;
  idx_hit *truth = malloc(NQ * k * sizeof *truth);
  const char *path = tmp_path("dot.ivf");
  corpus_distance ms[2] = {CORPUS_DOT, CORPUS_COSINE};
  ivf_code ts[4] = {IVF_SQ8, IVF_PQ, IVF_RABITQ, IVF_PQ};
  for (int mi = 0; mi < 2; mi++) {
    exact(ms[mi], k, truth);
    for (int ti = 0; ti < 4; ti++) {
      /* 4-bit PQ with twice the sub-quantizers: the 16 bytes per row of the 8-bit one */
      ivf_params p = {.type = ts[ti], .metric = ms[mi], .dim = D, .nlist = 32,
                      .pq_m = ti == 3 ? 32 : 16, .pq_nbits = ti == 3 ? 4 : 0, .rabitq_bits = 4,
                      .rerank = 4,
                      .max_train = 2500, .threads = 2,
                      /* the codes under test, on the fully converged quantizer the thresholds
                       * were set with (the early stop moves cosine 4-bit PQ 0.70 -> 0.68 here:
                       * other residuals, every list probed) */
                      .kmeans_stop = -1};
      vf_error err = {0};
      CHECK_OK(build(&p, path, N, 5000, NULL, &err));
      double r = run_recall(path, ms[mi], 32, 0, k, truth, 1);
      /* cosine on this set (every row near one direction) is hard for 16-byte PQ: FAISS
       * IVFPQ gets 0.40 without re-rank where we get 0.38; re-ranking 40 lifts it to 0.75 */
      double want = ms[mi] == CORPUS_COSINE && ts[ti] == IVF_PQ ? 0.70 : 0.97;
      if (r < want)
        vf_test_fail(__FILE__, __LINE__, "%s %s%s + rerank: recall@10 %.4f",
                     idx_metric_name(ms[mi]), ivf_code_name(ts[ti]), ti == 3 ? " 4-bit" : "", r);
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
  ivf_code ts[5] = {IVF_FLAT, IVF_SQ8, IVF_PQ, IVF_RABITQ, IVF_PQ};
  for (int ti = 0; ti < 5; ti++) {
    ivf_params p = {.type = ts[ti], .metric = CORPUS_EUCLID, .dim = D, .nlist = 50,
                    .pq_m = ti == 4 ? 8 : 4, .pq_nbits = ti == 4 ? 4 : 0,
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
  ivf_code ts[3] = {IVF_PQ, IVF_RABITQ, IVF_PQ};
  for (int ti = 0; ti < 3; ti++) {
    ivf_params p = {.type = ts[ti], .metric = CORPUS_DOT, .dim = D, .nlist = 8, .pq_m = 4,
                    .pq_nbits = ti == 2 ? 4 : 0, .rerank = 2};
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
  ivf_code ts[5] = {IVF_FLAT, IVF_SQ8, IVF_PQ, IVF_RABITQ, IVF_PQ};
  for (int ti = 0; ti < 5; ti++) { /* the last: 4-bit PQ, an odd m (a half-empty code group) */
    ivf_params p = {.type = ts[ti], .metric = CORPUS_EUCLID, .dim = (int32_t)d, .nlist = 10,
                    .pq_m = 7, .pq_nbits = ti == 4 ? 4 : 0, .rabitq_bits = 2, .rerank = 10};
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

/* 4-bit PQ kernels: every variant this CPU runs returns exactly the scalar reference's sums
 * (integers: no rounding) and tables; the reference is checked by hand; the packed layout
 * round-trips; quantised tables are within half a step of the float ones. */
VF_TEST(ivf_pq4_kernels_match_scalar) {
  rs = 4242;
  enum { NG = 130 };
  static uint8_t lut[NG * 32], codes[NG * 32];
  uint16_t o1[32], o2[32];
  for (size_t i = 0; i < NG * 32; i++) {
    lut[i] = (uint8_t)(urand() * 256);
    codes[i] = (uint8_t)(urand() * 256);
  }
  const ivf_kern *r = ivf_kern_scalar();
  size_t ngs[] = {1, 2, 3, 7, 28, 56, 98, 127, IVF_PQ4_CHUNK};
  int variants = 0;
  for (int v = IDX_SIMD_SCALAR; v <= IDX_SIMD_AVX512; v++) {
    const ivf_kern *K = ivf_kern_for((idx_simd)v);
    if (!K) continue;
    variants++;
    for (size_t t = 0; t < sizeof ngs / sizeof ngs[0]; t++) {
      uint16_t bounds[] = {0, 1000, (uint16_t)(ngs[t] * 255), 65535};
      for (size_t bi = 0; bi < 4; bi++) {
        uint32_t k1 = K->pq4_block(lut, codes, ngs[t], bounds[bi], o1);
        uint32_t k2 = r->pq4_block(lut, codes, ngs[t], bounds[bi], o2);
        if (memcmp(o1, o2, sizeof o1) != 0 || k1 != k2)
          vf_test_fail(__FILE__, __LINE__, "%s pq4_block differs at ng %zu", K->name, ngs[t]);
        for (int j = 0; j < 32; j++)
          CHECK_EQ_INT((k2 >> j) & 1, o2[j] <= bounds[bi]);
      }
    }
    /* the largest sums a chunk can hold: no wrap-around in the u16 lanes */
    static uint8_t full[IVF_PQ4_CHUNK * 32];
    memset(full, 255, sizeof full);
    CHECK_EQ_INT(K->pq4_block(full, codes, IVF_PQ4_CHUNK, 65279, o1), 0);
    for (int j = 0; j < 32; j++)
      CHECK_EQ_INT(o1[j], IVF_PQ4_CHUNK * 2 * 255);
    CHECK_EQ_INT(K->pq4_block(full, codes, IVF_PQ4_CHUNK, 65280, o1), 0xffffffffu);
    /* quantisation: the same bytes, bias and scale as the reference (odd m, one table, many) */
    size_t qms[] = {1, 2, 9, 112, 301};
    for (size_t t = 0; t < sizeof qms / sizeof qms[0]; t++) {
      size_t m = qms[t], ng = (m + 1) / 2;
      float *tab = malloc(m * 16 * sizeof *tab);
      uint8_t *q1 = malloc(ng * 32), *q2 = malloc(ng * 32);
      for (size_t i = 0; i < m * 16; i++)
        tab[i] = grand() * (float)(1 + i % 7) + (float)(i / 16);
      float *lo = malloc(m * sizeof *lo);
      ivf_pq4_lut A = {.q = q1, .lo = lo}, B = {.q = q2, .lo = lo};
      for (int ad = 0; ad < 2; ad++) { /* alone, and with a second table added */
        const float *add = ad ? tab + 16 * (m / 2) : NULL;
        K->pq4_quant(tab, add, m - (ad ? m / 2 : 0), &A);
        r->pq4_quant(tab, add, m - (ad ? m / 2 : 0), &B);
        if (memcmp(q1, q2, ((m - (ad ? m / 2 : 0)) + 1) / 2 * 32) != 0 || A.bias != B.bias ||
            A.inv_a != B.inv_a)
          vf_test_fail(__FILE__, __LINE__, "%s pq4_quant differs at m %zu (add %d)", K->name, m, ad);
      }
      free(tab);
      free(lo);
      free(q1);
      free(q2);
    }
    /* tables: 16 entries per sub-quantizer, l2 and negated inner product */
    size_t shapes[][2] = {{1, 1}, {7, 3}, {16, 2}, {112, 7}, {33, 24}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
      size_t m = shapes[t][0], ds = shapes[t][1];
      float *x = malloc(m * ds * sizeof *x), *cbt = malloc(m * ds * 16 * sizeof *cbt);
      float *l1 = malloc(m * 16 * sizeof *l1), *l2 = malloc(m * 16 * sizeof *l2);
      for (size_t i = 0; i < m * ds; i++)
        x[i] = grand();
      for (size_t i = 0; i < m * ds * 16; i++)
        cbt[i] = grand();
      for (int l2mode = 0; l2mode < 2; l2mode++) {
        K->pq4_lut(x, cbt, m, ds, l2mode, l1);
        r->pq4_lut(x, cbt, m, ds, l2mode, l2);
        size_t bad = 0;
        for (size_t i = 0; i < m * 16; i++)
          if (fabsf(l1[i] - l2[i]) > 1e-5f * (fabsf(l2[i]) + 1.0f)) bad++;
        if (bad) vf_test_fail(__FILE__, __LINE__, "%s pq4_lut m %zu: %zu differ", K->name, m, bad);
      }
      /* the reference by hand: sub-quantizer m-1, centroid 5 */
      double e2 = 0, ed = 0;
      for (size_t j = 0; j < ds; j++) {
        double xv = x[(m - 1) * ds + j], cv = cbt[((m - 1) * ds + j) * 16 + 5];
        e2 += (xv - cv) * (xv - cv);
        ed += xv * cv;
      }
      r->pq4_lut(x, cbt, m, ds, 1, l2);
      CHECK(fabs(l2[(m - 1) * 16 + 5] - e2) < 1e-4 * (e2 + 1));
      r->pq4_lut(x, cbt, m, ds, 0, l2);
      CHECK(fabs(l2[(m - 1) * 16 + 5] + ed) < 1e-4 * (fabs(ed) + 1));
      free(x);
      free(cbt);
      free(l1);
      free(l2);
    }
  }
  CHECK(variants >= 1);
  /* the scalar sum by hand: row 5 of a 3-group block */
  r->pq4_block(lut, codes, 3, 0, o2);
  unsigned want = 0;
  for (int p = 0; p < 3; p++)
    want += lut[p * 32 + (codes[p * 32 + 5] & 15)] + lut[p * 32 + 16 + (codes[p * 32 + 5] >> 4)];
  CHECK_EQ_INT(o2[5], want);
  /* pack: 29 rows (3 padding rows), m = 7 (the last group has one sub-quantizer) */
  uint8_t c[29 * 7], blk[4 * 32];
  for (size_t i = 0; i < sizeof c; i++)
    c[i] = (uint8_t)(urand() * 16);
  ivf_pq4_pack(c, 29, 7, blk);
  for (size_t j = 0; j < 32; j++)
    for (size_t i = 0; i < 8; i++)
      CHECK_EQ_INT(ivf_pq4_code(blk, j, i), j < 29 && i < 7 ? c[j * 7 + i] : 0);
  /* quantised tables: one scale, a bias per table, each entry within half a step */
  float t[9 * 16];
  for (size_t i = 0; i < 9 * 16; i++)
    t[i] = (float)(i / 16) * 3.0f + grand() * (float)(1 + i / 16);
  uint8_t qb[5 * 32];
  float lo9[9];
  ivf_pq4_lut ql = {.q = qb, .lo = lo9};
  r->pq4_quant(t, NULL, 9, &ql);
  CHECK(ql.inv_a > 0);
  double bias = 0;
  for (size_t i = 0; i < 9; i++) {
    float lo = t[i * 16];
    for (size_t e = 1; e < 16; e++)
      lo = t[i * 16 + e] < lo ? t[i * 16 + e] : lo;
    bias += lo;
    for (size_t e = 0; e < 16; e++) {
      double back = lo + qb[(i / 2) * 32 + (i % 2) * 16 + e] * (double)ql.inv_a;
      CHECK(fabs(back - t[i * 16 + e]) <= 0.5 * ql.inv_a * 1.001 + 1e-5);
    }
  }
  CHECK(fabs(bias - ql.bias) < 1e-3);
  for (size_t e = 0; e < 16; e++)
    CHECK_EQ_INT(qb[4 * 32 + 16 + e], 0); /* the missing tenth table */
  /* constant tables: no scale, every entry 0, the bias carries the value */
  for (size_t i = 0; i < 9 * 16; i++)
    t[i] = 2.0f;
  r->pq4_quant(t, NULL, 9, &ql);
  CHECK(ql.inv_a == 0.0f && fabsf(ql.bias - 18.0f) < 1e-5f);
  for (size_t i = 0; i < sizeof qb; i++)
    CHECK_EQ_INT(qb[i], 0);
}

/* the float-ADC score of every row of a 4-bit PQ index (decoded from the file, in double):
 * euclid -|q - c - C|^2, dot q.c + q.C; out[row] */
static void pq4_oracle(const ivf_index *ix, const float *q, double *out) {
  const ivf_geom *g = &ix->g;
  size_t d = g->d;
  double *x = malloc(d * sizeof *x);
  for (uint32_t l = 0; l < ix->h.nlist; l++) {
    const float *c = ix->centroids + (size_t)l * d;
    const int64_t *rows = (const int64_t *)(const void *)(ix->lists + ix->dir[3 * l]);
    const uint8_t *codes = ix->lists + ix->dir[3 * l] + ivf_align(ix->dir[3 * l + 1] * 8);
    double qc = 0;
    for (size_t e = 0; e < d; e++) {
      x[e] = (double)q[e] - c[e];
      qc += (double)q[e] * c[e];
    }
    for (uint64_t r = 0; r < ix->dir[3 * l + 1]; r++) {
      const uint8_t *blk = codes + r / 32 * g->pq_block_bytes;
      double s = 0;
      for (size_t i = 0; i < g->m; i++) {
        const float *cb = ix->q.pq_cb + (i * 16 + ivf_pq4_code(blk, r % 32, i)) * g->dsub;
        for (size_t j = 0; j < g->dsub; j++) {
          double v = ix->h.metric == CORPUS_EUCLID ? x[i * g->dsub + j] - cb[j]
                                                   : (double)q[i * g->dsub + j] * cb[j];
          s += ix->h.metric == CORPUS_EUCLID ? v * v : v;
        }
      }
      out[rows[r]] = ix->h.metric == CORPUS_EUCLID ? -s : qc + s;
    }
  }
  free(x);
}

/* 4-bit PQ search against the float-ADC oracle: re-ranking every candidate by float ADC gives
 * the oracle's top k and scores; the u8 scan alone gives scores within its rounding bound and
 * nearly the same hits.  d = 264 with one dimension per sub-quantizer: 132 code groups, more
 * than one kernel chunk; d = 32: one chunk. */
VF_TEST(ivf_pq4_scores_match_float_adc) {
  make_data();
  size_t dims[2] = {32, 264}, n = 1500, nq = 12, k = 10;
  corpus_distance ms[2] = {CORPUS_EUCLID, CORPUS_DOT};
  for (int di = 0; di < 2; di++)
    for (int mi = 0; mi < 2; mi++) {
      size_t d = dims[di];
      float *x = malloc(n * d * sizeof *x), *q = malloc(nq * d * sizeof *q);
      for (size_t i = 0; i < n * d; i++)
        x[i] = g_x[(i / d) * D + (i % d) % D] + 0.3f * grand();
      for (size_t i = 0; i < nq * d; i++)
        q[i] = g_q[(i / d) * D + (i % d) % D] + 0.3f * grand();
      ivf_params p = {.type = IVF_PQ, .metric = ms[mi], .dim = (int32_t)d, .nlist = 6,
                      .pq_m = (uint32_t)(d == 32 ? 16 : d), .pq_nbits = 4, .threads = 2};
      ivf_build_report rep;
      vf_error err = {0};
      const char *path = tmp_path("pq4o.ivf");
      CHECK_OK(ivf_build_matrix(&p, path, x, n, &rep, &err));
      ivf_index *ix = NULL;
      CHECK_OK(ivf_open(path, &ix, &err));
      if (!ix) continue;
      double *orc = malloc(n * sizeof *orc);
      idx_hit *hits = malloc(nq * k * sizeof *hits);
      size_t counts[12], bad = 0, same = 0, outside = 0;
      bool euclid = ms[mi] == CORPUS_EUCLID;
      for (int pass = 0; pass < 2; pass++) {
        /* pass 0: every row re-scored by float ADC; pass 1: the u8 scan alone */
        ivf_search_opts so = {.nprobe = 6, .threads = 2, .rerank = pass == 0 ? (uint32_t)n : 0};
        CHECK_OK(ivf_search(ix, q, nq, (int32_t)d, k, &so, hits, counts, &err));
        for (size_t qi = 0; qi < nq; qi++) {
          pq4_oracle(ix, q + qi * d, orc);
          /* the oracle's k-th best score */
          double *srt = malloc(n * sizeof *srt);
          memcpy(srt, orc, n * sizeof *srt);
          for (size_t a = 0; a < k; a++)
            for (size_t b2 = a + 1; b2 < n; b2++)
              if (srt[b2] > srt[a]) {
                double tt = srt[a];
                srt[a] = srt[b2];
                srt[b2] = tt;
              }
          double kth = srt[k - 1], span = fabs(srt[0]) + 1.0;
          free(srt);
          CHECK_EQ_INT(counts[qi], k);
          for (size_t j = 0; j < counts[qi]; j++) {
            const idx_hit *h = &hits[qi * k + j];
            double o = orc[h->key];
            double got = euclid ? -(double)h->score * h->score : h->score; /* back to -L2^2 */
            if (pass == 0) {
              if (fabs(got - o) > 1e-4 * (fabs(o) + 1.0)) bad++;
              if (o < kth - 1e-4 * span) outside++;
            } else {
              same += o >= kth - 1e-4 * span;
              /* the u8 estimate: each of m table entries within half a step (a = 255 / the
               * largest table span, which is below |score| + ...): a loose sanity bound */
              if (fabs(got - o) > 0.05 * (fabs(o) + 1.0) * (double)p.pq_m) bad++;
            }
          }
        }
      }
      if (bad || outside)
        vf_test_fail(__FILE__, __LINE__, "d %zu %s: %zu scores off, %zu hits outside the ADC top k",
                     d, idx_metric_name(ms[mi]), bad, outside);
      if (same < nq * k * 8 / 10)
        vf_test_fail(__FILE__, __LINE__, "d %zu %s: u8 scan finds %zu of %zu ADC hits", d,
                     idx_metric_name(ms[mi]), same, nq * k);
      free(orc);
      free(hits);
      ivf_close(ix);
      free(x);
      free(q);
    }
}

static void rehash(uint8_t *f, size_t n) {
  ivf_hash h;
  ivf_hash_init(&h);
  ivf_hash_update(&h, f, n - 8);
  uint64_t c = ivf_hash_final(&h);
  memcpy(f + n - 8, &c, 8);
}

/* File versions: 4-bit PQ files are version 2 with pq_nbits at offset 32; everything else is
 * still written as version 1 (readable by older builds); a version-1 file written before 4-bit
 * PQ existed still opens; inconsistent headers (bad pq_nbits, a 4-bit file relabelled as
 * version 1, unknown versions) are refused even with a valid checksum. */
VF_TEST(ivf_file_versions) {
  make_data();
  const char *p4 = tmp_path("v2.ivf"), *p8 = tmp_path("v1.ivf"), *bad = tmp_path("vbad.ivf");
  ivf_params p = {.type = IVF_PQ, .metric = CORPUS_EUCLID, .dim = D, .nlist = 8, .pq_m = 8,
                  .pq_nbits = 4};
  vf_error err = {0};
  CHECK_OK(build(&p, p4, 3000, 3000, NULL, &err));
  p.pq_nbits = 0;
  CHECK_OK(build(&p, p8, 3000, 3000, NULL, &err));
  size_t n4 = 0, n8 = 0;
  uint8_t *f4 = slurp(p4, &n4), *f8 = slurp(p8, &n8);
  CHECK(f4 && f8 && n4 > 400 && n8 > 400);
  if (!f4 || !f8) return;
  uint32_t v;
  memcpy(&v, f4 + 8, 4);
  CHECK_EQ_INT(v, 2);
  memcpy(&v, f4 + 32, 4);
  CHECK_EQ_INT(v, 4);
  memcpy(&v, f8 + 8, 4);
  CHECK_EQ_INT(v, 1);
  for (size_t i = 176; i < 192; i++)
    CHECK_EQ_INT(f8[i], 0);
  CHECK(n4 < n8); /* 16 centroids per sub-quantizer, half a byte per code */
  ivf_index *ix = NULL;
  ivf_info in;
  CHECK_OK(ivf_open(p4, &ix, &err));
  if (ix) {
    ivf_info_get(ix, &in);
    CHECK(in.version == 2 && in.pq_nbits == 4 && in.pq_m == 8);
    ivf_close(ix);
  }
  CHECK_OK(ivf_open(p8, &ix, &err));
  if (ix) {
    ivf_info_get(ix, &in);
    CHECK(in.version == 1 && in.pq_nbits == 8);
    ivf_close(ix);
  }
  struct {
    uint8_t *f;
    size_t n, off;
    uint32_t val;
    const char *why;
  } cases[] = {
      {f4, n4, 32, 5, "pq_nbits"},  {f4, n4, 32, 0, "pq_nbits"},
      {f4, n4, 32, 8, "quantizer"}, /* sizes of a 4-bit file under an 8-bit label */
      {f4, n4, 8, 1, "quantizer"},   /* a 4-bit file relabelled as version 1 */
      {f4, n4, 8, 3, "version"},     {f8, n8, 8, 0, "version"},
      {f8, n8, 8, 2, "pq_nbits"},    /* version 2 needs pq_nbits 4 or 8 for PQ */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    uint8_t *g = malloc(cases[c].n);
    memcpy(g, cases[c].f, cases[c].n);
    memcpy(g + cases[c].off, &cases[c].val, 4);
    rehash(g, cases[c].n);
    CHECK(spit(bad, g, cases[c].n));
    ix = NULL;
    vf_status st = ivf_open(bad, &ix, &err);
    CHECK_STATUS(st, VF_ECORRUPT);
    if (st == VF_OK) ivf_close(ix);
    else if (!strstr(err.msg, cases[c].why) || !strstr(err.msg, "vbad.ivf"))
      vf_test_fail(__FILE__, __LINE__, "case %zu: '%s' does not name %s", c, err.msg, cases[c].why);
    free(g);
  }
  /* version 2 may also describe an 8-bit file (not written, but consistent) */
  uint32_t two = 2, eight = 8;
  memcpy(f8 + 8, &two, 4);
  memcpy(f8 + 32, &eight, 4);
  rehash(f8, n8);
  CHECK(spit(bad, f8, n8));
  CHECK_OK(ivf_open(bad, &ix, &err));
  ivf_close(ix);
  free(f4);
  free(f8);
  /* a file written by the version-1 code before 4-bit PQ existed (the fuzz seed) */
  const char *src = getenv("VF_SRC");
  if (src) {
    char old[1024];
    snprintf(old, sizeof old, "%s/tests/fuzz/corpus/fuzz_ivf/pq.ivf", src);
    ix = NULL;
    CHECK_OK(ivf_open(old, &ix, &err));
    if (ix) {
      ivf_info_get(ix, &in);
      CHECK(in.version == 1 && in.type == IVF_PQ && in.pq_nbits == 8);
      float *qq = calloc((size_t)in.dim, sizeof *qq);
      idx_hit h[3];
      size_t cnt[1];
      ivf_search_opts so = {.nprobe = in.nlist};
      CHECK_OK(ivf_search(ix, qq, 1, in.dim, 3, &so, h, cnt, &err));
      CHECK(cnt[0] == 3 || cnt[0] == in.rows);
      free(qq);
      ivf_close(ix);
    }
  }
}

/* The spill stores frames that zstd barely shrinks (dense random floats) plain and compresses the
 * rest (mostly zero pixels), unless params.spill_plain stores every frame plain: spill_bytes covers
 * every vector byte in the plain cases and under a quarter of them in the compressed one; every
 * index holds every row and finds each probed row itself. */
VF_TEST(ivf_spill_plain_frames) {
  enum { SN = 6000, SD = 64 };
  float *x = malloc((size_t)SN * SD * sizeof *x);
  char **ids = malloc(SN * sizeof *ids);
  size_t *lens = malloc(SN * sizeof *lens);
  uint64_t rng = 99;
  for (size_t i = 0; i < SN; i++) {
    char buf[16];
    int l = snprintf(buf, sizeof buf, "s%05zu", i);
    ids[i] = strdup(buf);
    lens[i] = (size_t)l;
  }
  for (int pass = 0; pass < 3; pass++) { /* pass 2: pass 1's data with params.spill_plain */
    for (size_t i = 0; i < (size_t)SN * SD && pass < 2; i++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      double u = (double)(rng >> 11) / 9007199254740992.0;
      /* pass 0: uniform in (-1, 1); pass 1: 90 % zeros, the rest a few small integers */
      x[i] = pass == 0 ? (float)(2.0 * u - 1.0) : u < 0.9 ? 0.0f : (float)(int)(u * 40.0 - 35.0);
    }
    if (pass == 1) /* pass 2 reuses these rows */
      for (size_t i = 0; i < SN; i++)
        x[i * SD + i % SD] += (float)(i + 1); /* distinct rows */
    ivf_params p = {.type = IVF_FLAT, .metric = CORPUS_EUCLID, .dim = SD, .nlist = 16, .threads = 2,
                    .memory_budget = (uint64_t)64 << 20, .spill_plain = pass == 2,
                    .spill_to_disk = true}; /* the file's frames (memory ones are plain) */
    const char *path = tmp_path("spill.ivf");
    ivf_builder *b = NULL;
    vf_error err = {0};
    ivf_build_report rep = {0};
    CHECK_OK(ivf_builder_open(&p, path, SN, &b, &err));
    for (size_t r = 0; r < SN && b; r += 500)
      CHECK_OK(ivf_builder_add(b, x + r * SD, 500, (const char *const *)ids + r, lens + r, &err));
    CHECK_OK(ivf_builder_finish(b, &rep, &err));
    CHECK_EQ_INT(rep.rows, SN);
    uint64_t vec_bytes = (uint64_t)SN * SD * 4;
    if (pass != 1 && rep.spill_bytes < vec_bytes + (uint64_t)SN * 8)
      vf_test_fail(__FILE__, __LINE__, "pass %d: spill %llu bytes < the %llu plain bytes", pass,
                   (unsigned long long)rep.spill_bytes, (unsigned long long)vec_bytes);
    if (pass == 1 && rep.spill_bytes > vec_bytes / 4)
      vf_test_fail(__FILE__, __LINE__, "sparse floats: spill %llu bytes, not compressed (%llu raw)",
                   (unsigned long long)rep.spill_bytes, (unsigned long long)vec_bytes);
    ivf_index *ix = NULL;
    CHECK_OK(ivf_open(path, &ix, &err));
    if (!ix) continue;
    idx_hit hits[4];
    size_t cnt[4];
    ivf_search_opts so = {.nprobe = 16, .threads = 1};
    for (size_t qi = 0; qi < SN; qi += SN / 4) {
      CHECK_OK(ivf_search(ix, x + qi * SD, 1, SD, 1, &so, hits, cnt, &err));
      CHECK(cnt[0] == 1 && hits[0].key == (int64_t)qi);
    }
    ivf_close(ix);
  }
  for (size_t i = 0; i < SN; i++)
    free(ids[i]);
  free(ids);
  free(lens);
  free(x);
}

/* issue 17 item 3: spill frames that fit the budget's share stay in memory — neither compressed
 * nor written (spill_bytes is the assignment file alone) — and the index is byte-identical to
 * the one built from the file's frames, also when the share holds only the first frames and the
 * rest go to the file (a small budget). */
VF_TEST(ivf_spill_in_memory) {
  make_data();
  ivf_code ts[2] = {IVF_SQ8, IVF_PQ};
  for (int ti = 0; ti < 2; ti++) {
    const char *path[3] = {tmp_path("mem0.ivf"), tmp_path("mem1.ivf"), tmp_path("mem2.ivf")};
    ivf_build_report rep[3];
    for (int v = 0; v < 3; v++) {
      ivf_params p = {.type = ts[ti], .metric = CORPUS_EUCLID, .dim = D, .nlist = 32, .pq_m = 4,
                      .max_train = 2000, .threads = 2, .spill_to_disk = v == 0,
                      .memory_budget = v == 2 ? (uint64_t)6 << 20 : (uint64_t)256 << 20};
      vf_error err = {0};
      memset(&rep[v], 0, sizeof rep[v]);
      CHECK_OK(build(&p, path[v], N, 500, &rep[v], &err));
    }
    uint64_t abytes = (uint64_t)N * 4; /* the assignment spill */
    if (!(rep[0].spill_bytes > abytes && rep[1].spill_bytes == abytes && rep[2].spill_bytes > abytes &&
          rep[2].spill_bytes < rep[0].spill_bytes))
      vf_test_fail(__FILE__, __LINE__, "type %d: spill bytes disk %llu, memory %llu, mixed %llu", ti,
                   (unsigned long long)rep[0].spill_bytes, (unsigned long long)rep[1].spill_bytes,
                   (unsigned long long)rep[2].spill_bytes);
    size_t n0 = 0, n1 = 0, n2 = 0;
    uint8_t *f0 = slurp(path[0], &n0), *f1 = slurp(path[1], &n1), *f2 = slurp(path[2], &n2);
    CHECK(f0 && f1 && f2 && n0 > 0);
    CHECK(n0 == n1 && f0 && f1 && memcmp(f0, f1, n0) == 0);
    CHECK(n0 == n2 && f0 && f2 && memcmp(f0, f2, n0) == 0);
    free(f0);
    free(f1);
    free(f2);
  }
  /* an id longer than the in-memory share left: its frame (staged in memory) moves to the file */
  size_t big = (size_t)1 << 20;
  char *bid = malloc(big);
  memset(bid, 'x', big);
  const char *path[2] = {tmp_path("memid0.ivf"), tmp_path("memid1.ivf")};
  for (int v = 0; v < 2; v++) {
    ivf_params p = {.type = IVF_FLAT, .metric = CORPUS_EUCLID, .dim = D, .nlist = 8, .max_train = 2000,
                    .threads = 1, .spill_to_disk = v == 0, .memory_budget = (uint64_t)6 << 20};
    ivf_builder *b = NULL;
    vf_error err = {0};
    CHECK_OK(ivf_builder_open(&p, path[v], 3000, &b, &err));
    for (size_t r = 0; r < 3000 && b; r += 500) {
      const char *ids[500];
      size_t lens[500];
      for (size_t i = 0; i < 500; i++) {
        ids[i] = g_ids[r + i];
        lens[i] = g_idlen[r + i];
      }
      if (r == 1000) { /* the second frame's first row */
        memcpy(bid, g_ids[r], g_idlen[r]);
        ids[0] = bid;
        lens[0] = big;
      }
      CHECK_OK(ivf_builder_add(b, g_x + r * D, 500, ids, lens, &err));
    }
    CHECK_OK(ivf_builder_finish(b, NULL, &err));
  }
  size_t n0 = 0, n1 = 0;
  uint8_t *f0 = slurp(path[0], &n0), *f1 = slurp(path[1], &n1);
  CHECK(f0 && f1 && n0 > big && n0 == n1 && memcmp(f0, f1, n0) == 0);
  free(f0);
  free(f1);
  free(bid);
}

/* The spill's named ceiling (issue 15 item 5): the buffers that stage, compress and read back a
 * frame refuse to grow past IVF_MAX_SPILL_FRAME, naming it, and it is far above what a frame of
 * the widest vectors holds (three 16 MiB chunks). */
VF_TEST(ivf_spill_frame_ceiling) {
  CHECK_BUF_CEILING(IVF_MAX_SPILL_FRAME, (size_t)16 << 30);
  CHECK(IVF_MAX_SPILL_FRAME > 3 * (64 * ((size_t)65536 * 4 + 16)));
}
