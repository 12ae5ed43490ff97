/* Distance kernels: every SIMD variant this CPU runs against the scalar reference and against
 * a double-precision definition, on random data of every dimension 1..1031 (unaligned
 * pointers), plus the score conventions of DESIGN.md (larger = nearer). */
#include <float.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/index.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static float frand(void) { /* uniform in [-1, 1) */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (float)((double)(rng_state >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

/* error bound of a float sum of d terms whose magnitudes add up to `mag` */
static double bound(size_t d, double mag) {
  return (double)(d + 4) * FLT_EPSILON * mag + 1e-30;
}

typedef void (*batch_fn)(const float *q, const float *rows, size_t n, size_t d, float *out);

/* one batch kernel against the reference's; the error bound scales with the sum of |terms|
 * (dot: sum |a_i b_i|; distances: the distance itself, whose terms are all >= 0) */
static int check_batch(const char *variant, const char *what, batch_fn fn, batch_fn ref_fn,
                       bool dot_terms, const float *a, const float *r, size_t n, size_t d) {
  float out[16], outr[16];
  fn(a, r, n, d, out);
  ref_fn(a, r, n, d, outr);
  for (size_t j = 0; j < n; j++) {
    double mag = fabs((double)outr[j]);
    if (dot_terms) {
      mag = 0;
      for (size_t i = 0; i < d; i++)
        mag += fabs((double)a[i] * r[j * d + i]);
    }
    if (fabs(out[j] - outr[j]) > 2 * bound(d, mag)) {
      vf_test_fail(__FILE__, __LINE__, "%s %s d=%zu row %zu: %g vs %g", variant, what, d, j, out[j],
                   outr[j]);
      return 1;
    }
  }
  return 0;
}

static void check_variant(const idx_kernels *k) {
  const idx_kernels *ref = idx_kernels_for(IDX_SIMD_SCALAR);
  enum { DMAX = 1031, NROWS = 7 };
  /* +1 so that a and b can start at an odd float offset: unaligned loads */
  float *abuf = malloc((DMAX + 1) * sizeof(float));
  float *rows = malloc((NROWS * DMAX + 1) * sizeof(float));
  int bad = 0;
  for (size_t d = 1; d <= DMAX && bad < 5; d++) {
    float *a = abuf + (d & 1);
    float *r = rows + ((d >> 1) & 1);
    for (size_t i = 0; i < d; i++)
      a[i] = frand() * (d % 3 == 0 ? 100.0f : 1.0f);
    for (size_t i = 0; i < NROWS * d; i++)
      r[i] = frand();
    for (size_t j = 0; j < NROWS; j++) {
      const float *b = r + j * d;
      double dot = 0, dotm = 0, l2 = 0, l1 = 0;
      for (size_t i = 0; i < d; i++) {
        double p = (double)a[i] * b[i], t = (double)a[i] - b[i];
        dot += p;
        dotm += fabs(p);
        l2 += t * t;
        l1 += fabs(t);
      }
      float kd = k->dot(a, b, d), rd = ref->dot(a, b, d);
      float kl2 = k->l2sq(a, b, d), rl2 = ref->l2sq(a, b, d);
      float kl1 = k->l1(a, b, d), rl1 = ref->l1(a, b, d);
      if (fabs(kd - dot) > bound(d, dotm) || fabs(rd - dot) > bound(d, dotm) ||
          fabs(kl2 - l2) > bound(d, l2) || fabs(rl2 - l2) > bound(d, l2) ||
          fabs(kl1 - l1) > bound(d, l1) || fabs(rl1 - l1) > bound(d, l1)) {
        vf_test_fail(__FILE__, __LINE__,
                     "%s d=%zu row %zu: dot %g/%g/%.9g l2sq %g/%g/%.9g l1 %g/%g/%.9g", k->name, d,
                     j, kd, rd, dot, kl2, rl2, l2, kl1, rl1, l1);
        bad++;
      }
    }
    /* batch forms equal the reference's batch forms up to rounding */
    bad += check_batch(k->name, "dot_batch", k->dot_batch, ref->dot_batch, true, a, r, NROWS, d);
    bad +=
        check_batch(k->name, "l2sq_batch", k->l2sq_batch, ref->l2sq_batch, false, a, r, NROWS, d);
    bad += check_batch(k->name, "l1_batch", k->l1_batch, ref->l1_batch, false, a, r, NROWS, d);
  }
  free(abuf);
  free(rows);
}

VF_TEST(scalar_reference_matches_double_definition) {
  const idx_kernels *k = idx_kernels_for(IDX_SIMD_SCALAR);
  CHECK(k != NULL);
  CHECK_EQ_STR(k->name, "scalar");
  check_variant(k);
}

VF_TEST(avx2_matches_reference) {
  const idx_kernels *k = idx_kernels_for(IDX_SIMD_AVX2);
  if (!k) {
    vf_test_skip("this CPU has no AVX2+FMA");
    return;
  }
  CHECK_EQ_STR(k->name, "avx2");
  check_variant(k);
  /* the active variant is the best this CPU runs unless VFORGE_SIMD=scalar */
  const char *env = getenv("VFORGE_SIMD");
  if (!env || strcmp(env, "scalar") != 0) CHECK(idx_kernels_active() == k);
}

VF_TEST(dimension_zero_is_zero) {
  float a[1] = {1}, b[1] = {2};
  for (int s = 0; s <= IDX_SIMD_AVX2; s++) {
    const idx_kernels *k = idx_kernels_for((idx_simd)s);
    if (!k) continue;
    CHECK(k->dot(a, b, 0) == 0.0f);
    CHECK(k->l2sq(a, b, 0) == 0.0f);
    CHECK(k->l1(a, b, 0) == 0.0f);
  }
}

VF_TEST(scores_larger_is_nearer) {
  float q[3] = {1, 0, 0};
  float rows[9] = {1, 0, 0, /* identical */ 0, 1, 0, /* orthogonal */ -2, 0, 0 /* opposite */};
  float out[3];
  idx_scores(CORPUS_EUCLID, q, rows, 3, 3, out);
  CHECK(out[0] == 0.0f);
  CHECK(fabsf(out[1] + sqrtf(2.0f)) < 1e-6f);
  CHECK(fabsf(out[2] + 3.0f) < 1e-6f);
  idx_scores(CORPUS_MANHATTAN, q, rows, 3, 3, out);
  CHECK(out[0] == 0.0f && out[1] == -2.0f && out[2] == -3.0f);
  idx_scores(CORPUS_DOT, q, rows, 3, 3, out);
  CHECK(out[0] == 1.0f && out[1] == 0.0f && out[2] == -2.0f);
  /* cosine = dot of normalised vectors */
  float r2[6] = {3, 4, 0, 0, 0, 0};
  CHECK_EQ_INT(idx_normalize_rows(r2, 2, 3), 1); /* the zero row cannot be normalised */
  CHECK(fabsf(r2[0] - 0.6f) < 1e-7f && fabsf(r2[1] - 0.8f) < 1e-7f);
  CHECK(r2[3] == 0.0f);
  idx_scores(CORPUS_COSINE, q, r2, 2, 3, out);
  CHECK(fabsf(out[0] - 0.6f) < 1e-7f && out[1] == 0.0f);
  float a[2] = {2, 0}, b[2] = {3, 3};
  CHECK(fabsf(idx_cosine(a, b, 2) - (float)(1 / sqrt(2.0))) < 1e-6f);
  CHECK(idx_cosine(a, r2 + 3, 2) == 0.0f);
  CHECK(fabsf(idx_l2(a, b, 2) - sqrtf(10.0f)) < 1e-6f);
}

VF_TEST(metric_names_round_trip) {
  corpus_distance m;
  for (int i = CORPUS_COSINE; i <= CORPUS_MANHATTAN; i++) {
    CHECK(idx_metric_parse(idx_metric_name((corpus_distance)i), &m));
    CHECK_EQ_INT(m, i);
  }
  CHECK(!idx_metric_parse("hamming", &m));
}
