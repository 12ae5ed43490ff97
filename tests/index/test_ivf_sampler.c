/* ivf_sampler: stratified sampling keeps every part of an ordered stream in proportion —
 * a minority only at the tail, only in every k-th block, or only in a small late batch — with
 * the total known up front or not, whatever the batch sizes of the calls. */
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/ivf.h"

enum { DIM = 3 };

/* pattern of the minority rows (component 0 = 1) in an ordered stream of n rows */
typedef enum { TAIL, EVERY_KTH_BLOCK, LATE_BATCH } pattern;

static bool is_minority(pattern p, uint64_t row, uint64_t n) {
  switch (p) {
  case TAIL: return row >= n - n / 20;                  /* last 5 % */
  case EVERY_KTH_BLOCK: return (row / 1000) % 10 == 7;  /* blocks of 1000, every 10th: 10 % */
  case LATE_BATCH: return row >= n - 500;               /* a small last batch */
  }
  return false;
}

/* offer the stream in uneven call sizes; return the minority count of the sample */
static size_t run(pattern p, uint64_t n, uint64_t cap, bool known, uint64_t seed, size_t *got) {
  ivf_sampler *s = NULL;
  vf_error err;
  CHECK_OK(ivf_sampler_open(DIM, cap, known ? n : 0, seed, &s, &err));
  if (!s) return 0;
  float *buf = malloc(sizeof(float) * DIM * 4096);
  uint64_t row = 0, call = 0;
  while (row < n) {
    uint64_t m = 1 + (call++ * 7919) % 4096; /* 1..4096 rows per call */
    if (m > n - row) m = n - row;
    for (uint64_t i = 0; i < m; i++) {
      buf[i * DIM + 0] = is_minority(p, row + i, n) ? 1.0f : 0.0f;
      buf[i * DIM + 1] = (float)(row + i); /* its position, to check input order */
      buf[i * DIM + 2] = 0.5f;
    }
    CHECK_OK(ivf_sampler_offer(s, buf, (size_t)m, &err));
    row += m;
  }
  CHECK_EQ_INT(ivf_sampler_seen(s), n);
  size_t k = 0, minority = 0;
  const float *r = ivf_sampler_rows(s, &k);
  for (size_t i = 0; i < k; i++) {
    minority += r[i * DIM] == 1.0f;
    CHECK(r[i * DIM + 2] == 0.5f);
    if (i > 0 && !(r[i * DIM + 1] > r[(i - 1) * DIM + 1])) {
      CHECK(!"sample rows not in input order");
      break;
    }
  }
  *got = k;
  free(buf);
  ivf_sampler_close(s);
  return minority;
}

/* expected share within 4 standard deviations of a binomial, and at least 1 */
static void check_share(pattern p, uint64_t n, size_t k, size_t minority, const char *what) {
  uint64_t mrows = 0;
  for (uint64_t r = 0; r < n; r++) mrows += is_minority(p, r, n);
  double share = (double)mrows / (double)n, want = share * (double)k;
  double sd = sqrt((double)k * share * (1 - share));
  if (minority < 1 || fabs((double)minority - want) > 4 * sd + 1)
    vf_test_fail(__FILE__, __LINE__, "%s: %zu minority rows in a sample of %zu, expected %.1f +- %.1f",
                 what, minority, k, want, 4 * sd + 1);
}

VF_TEST(sampler_known_total_is_proportional) {
  const pattern ps[] = {TAIL, EVERY_KTH_BLOCK, LATE_BATCH};
  for (int i = 0; i < 3; i++) {
    size_t k = 0;
    size_t m = run(ps[i], 200000, 4000, true, 7, &k);
    CHECK_EQ_INT(k, 4000); /* one row per stratum */
    check_share(ps[i], 200000, k, m, "known total");
  }
}

VF_TEST(sampler_unknown_total_is_proportional) {
  const pattern ps[] = {TAIL, EVERY_KTH_BLOCK, LATE_BATCH};
  for (int i = 0; i < 3; i++) {
    size_t k = 0;
    size_t m = run(ps[i], 200000, 4000, false, 7, &k);
    CHECK(k >= 2000 && k <= 4000);
    check_share(ps[i], 200000, k, m, "unknown total");
  }
}

/* a prefix sampler (the first cap rows) must fail the same check: the test can fail */
VF_TEST(sampler_prefix_would_fail) {
  uint64_t n = 200000, cap = 4000, mrows = 0;
  for (uint64_t r = 0; r < cap; r++) mrows += is_minority(TAIL, r, n);
  CHECK_EQ_INT(mrows, 0);
  mrows = 0;
  for (uint64_t r = 0; r < cap; r++) mrows += is_minority(LATE_BATCH, r, n);
  CHECK_EQ_INT(mrows, 0);
}

/* more rows than announced: nothing is lost, the tail beyond the total is still sampled */
VF_TEST(sampler_total_exceeded) {
  ivf_sampler *s = NULL;
  vf_error err;
  CHECK_OK(ivf_sampler_open(DIM, 1000, 50000, 3, &s, &err));
  float row[DIM];
  size_t late = 0;
  for (uint64_t r = 0; r < 100000; r++) {
    row[0] = r >= 50000 ? 1.0f : 0.0f;
    row[1] = (float)r;
    row[2] = 0.5f;
    CHECK_OK(ivf_sampler_offer(s, row, 1, &err));
  }
  size_t k = 0;
  const float *x = ivf_sampler_rows(s, &k);
  for (size_t i = 0; i < k; i++) late += x[i * DIM] == 1.0f;
  CHECK(k >= 500 && k <= 1000);
  CHECK(late > k / 2 - 4 * 16 && late < k / 2 + 4 * 16 + 2); /* about half */
  CHECK_EQ_INT(ivf_sampler_seen(s), 100000);
  ivf_sampler_close(s);
}

VF_TEST(sampler_small_input_kept_whole_and_deterministic) {
  size_t k1 = 0, k2 = 0;
  size_t m = run(TAIL, 3000, 4000, true, 11, &k1);
  CHECK_EQ_INT(k1, 3000);
  CHECK_EQ_INT(m, 150);
  /* same seed, same sample; another seed, another one */
  ivf_sampler *a = NULL, *b = NULL, *c = NULL;
  vf_error err;
  CHECK_OK(ivf_sampler_open(DIM, 100, 0, 5, &a, &err));
  CHECK_OK(ivf_sampler_open(DIM, 100, 0, 5, &b, &err));
  CHECK_OK(ivf_sampler_open(DIM, 100, 0, 6, &c, &err));
  float row[DIM];
  for (int r = 0; r < 10000; r++) {
    row[0] = row[2] = 0;
    row[1] = (float)r;
    CHECK_OK(ivf_sampler_offer(a, row, 1, &err));
    CHECK_OK(ivf_sampler_offer(b, row, 1, &err));
    CHECK_OK(ivf_sampler_offer(c, row, 1, &err));
  }
  const float *ra = ivf_sampler_rows(a, &k1), *rb = ivf_sampler_rows(b, &k2);
  CHECK_EQ_INT(k1, k2);
  CHECK(memcmp(ra, rb, k1 * DIM * sizeof(float)) == 0);
  size_t k3 = 0;
  const float *rc = ivf_sampler_rows(c, &k3);
  CHECK(k3 != k1 || memcmp(ra, rc, k1 * DIM * sizeof(float)) != 0);
  ivf_sampler_close(a);
  ivf_sampler_close(b);
  ivf_sampler_close(c);
}

VF_TEST(sampler_bad_arguments) {
  ivf_sampler *s = NULL;
  vf_error err;
  CHECK_STATUS(ivf_sampler_open(0, 10, 0, 1, &s, &err), VF_EUSAGE);
  CHECK_STATUS(ivf_sampler_open(4, 0, 0, 1, &s, &err), VF_EUSAGE);
  CHECK(s == NULL);
  ivf_sampler_close(NULL);
}

/* keyed sampling (params.sample_by_id): the cap rows of smallest key, in key order after
 * ivf_sampler_sort_keyed(), whatever order and call sizes the rows come in; fewer rows than
 * cap keeps them all; mixing keyed and unkeyed offers is refused */
static uint64_t key_of(uint64_t r) {
  uint64_t z = r * 0x9E3779B97F4A7C15ull + 17;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  return z ^ (z >> 31);
}

static void keyed_run(const uint64_t *order, size_t n, size_t cap, size_t step, float **out,
                      size_t *k) {
  ivf_sampler *s = NULL;
  vf_error err;
  CHECK_OK(ivf_sampler_open(DIM, cap, n, 9, &s, &err));
  float *rows = malloc(sizeof(float) * DIM * step);
  uint64_t *keys = malloc(sizeof *keys * step);
  for (size_t i = 0; i < n; i += step) {
    size_t m = n - i < step ? n - i : step;
    for (size_t j = 0; j < m; j++) {
      rows[j * DIM] = (float)order[i + j];
      rows[j * DIM + 1] = rows[j * DIM + 2] = 0.5f;
      keys[j] = key_of(order[i + j]);
    }
    CHECK_OK(ivf_sampler_offer_keyed(s, rows, keys, m, &err));
  }
  CHECK_OK(ivf_sampler_sort_keyed(s, &err));
  const float *r = ivf_sampler_rows(s, k);
  *out = malloc(sizeof(float) * DIM * (*k ? *k : 1));
  memcpy(*out, r, sizeof(float) * DIM * *k);
  CHECK_EQ_INT(ivf_sampler_seen(s), n);
  free(rows);
  free(keys);
  ivf_sampler_close(s);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

VF_TEST(sampler_keyed_order_free) {
  enum { N = 20000, CAP = 700 };
  uint64_t *fwd = malloc(sizeof *fwd * N), *shuf = malloc(sizeof *shuf * N);
  uint64_t *keys = malloc(sizeof *keys * N);
  for (size_t i = 0; i < N; i++) fwd[i] = shuf[i] = i;
  uint64_t rng = 42;
  for (size_t i = N - 1; i > 0; i--) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    size_t j = (size_t)((rng >> 33) % (i + 1));
    uint64_t t = shuf[i];
    shuf[i] = shuf[j];
    shuf[j] = t;
  }
  float *a = NULL, *b = NULL;
  size_t ka = 0, kb = 0;
  keyed_run(fwd, N, CAP, 1000, &a, &ka);
  keyed_run(shuf, N, CAP, 37, &b, &kb);
  CHECK_EQ_INT(ka, CAP);
  CHECK_EQ_INT(kb, CAP);
  CHECK(memcmp(a, b, sizeof(float) * DIM * CAP) == 0);
  /* the sample is exactly the CAP smallest keys, ascending */
  for (size_t i = 0; i < N; i++) keys[i] = key_of(i);
  qsort(keys, N, sizeof *keys, cmp_u64);
  size_t bad = 0;
  for (size_t i = 0; i < CAP; i++) bad += key_of((uint64_t)a[i * DIM]) != keys[i];
  CHECK_EQ_INT(bad, 0);
  free(a);
  free(b);
  /* fewer rows than cap: all of them */
  keyed_run(shuf, 300, CAP, 64, &a, &ka);
  CHECK_EQ_INT(ka, 300);
  free(a);
  /* keyed after unkeyed rows: refused */
  ivf_sampler *s = NULL;
  vf_error err;
  CHECK_OK(ivf_sampler_open(DIM, 10, 0, 1, &s, &err));
  float row[DIM] = {0, 0, 0};
  uint64_t k = 1;
  CHECK_OK(ivf_sampler_offer(s, row, 1, &err));
  CHECK_STATUS(ivf_sampler_offer_keyed(s, row, &k, 1, &err), VF_EUSAGE);
  ivf_sampler_close(s);
  free(fwd);
  free(shuf);
  free(keys);
}
