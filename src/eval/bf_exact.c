/*
 * The exact kernel of brute-force's re-scoring (and of the norms it divides by): sums in double.
 * A float times a float is exact in double, so only the additions round.  They run in EX_LANES
 * interleaved partial sums (element i goes to sum i % EX_LANES), combined by a fixed halving
 * tree: independent chains that vectorise (one sequential chain was bound by the add latency:
 * a third of brute-force's CPU went to re-scoring candidates), and still a function of the data
 * alone — the same order on every machine, thread count and blocking (ISO C mode: no FMA
 * contraction; the AVX2 variant uses no FMA either), which is what makes brute-force's output
 * byte-identical everywhere.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "eval/bf_internal.h"
#include "vforge/index.h"

#define EX_LANES 16

static double lanes_total(double *a) {
  for (size_t w = EX_LANES / 2; w > 0; w /= 2)
    for (size_t l = 0; l < w; l++) a[l] += a[l + w];
  return a[0];
}

/* one term of the sum: the portable reference of the vector variant below */
static inline double ex_term(bf_exact_op op, float q, float x) {
  if (op == BF_EX_DOT) return (double)q * (double)x;
  double t = (double)q - (double)x;
  return op == BF_EX_L2SQ ? t * t : fabs(t);
}

static double ex_sum_c(bf_exact_op op, const float *q, const float *x, size_t d) {
  double a[EX_LANES] = {0};
  size_t i = 0;
  for (; i + EX_LANES <= d; i += EX_LANES)
    for (size_t l = 0; l < EX_LANES; l++) a[l] += ex_term(op, q[i + l], x[i + l]);
  for (size_t l = 0; i < d; i++, l++) a[l] += ex_term(op, q[i], x[i]);
  return lanes_total(a);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
/* AVX2 (no FMA: a fused multiply-add would round differently from the reference): the same
 * sixteen partial sums in four registers (lanes 0-3, 4-7, 8-11, 12-15), the same tail and tree,
 * so the result is bit-identical to ex_sum_c() */
__attribute__((target("avx2"))) static double ex_sum_avx2(bf_exact_op op, const float *q, const float *x,
                                                          size_t d) {
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  const __m256d sign = _mm256_set1_pd(-0.0);
  size_t i = 0;
#define EX_STEP(acc, off)                                                        \
  do {                                                                           \
    __m256d vq = _mm256_cvtps_pd(_mm_loadu_ps(q + i + (off)));                   \
    __m256d vx = _mm256_cvtps_pd(_mm_loadu_ps(x + i + (off)));                   \
    __m256d t;                                                                   \
    if (op == BF_EX_DOT) t = _mm256_mul_pd(vq, vx);                                      \
    else {                                                                       \
      t = _mm256_sub_pd(vq, vx);                                                 \
      t = op == BF_EX_L2SQ ? _mm256_mul_pd(t, t) : _mm256_andnot_pd(sign, t);             \
    }                                                                            \
    acc = _mm256_add_pd(acc, t);                                                 \
  } while (0)
  for (; i + EX_LANES <= d; i += EX_LANES) {
    EX_STEP(a0, 0);
    EX_STEP(a1, 4);
    EX_STEP(a2, 8);
    EX_STEP(a3, 12);
  }
#undef EX_STEP
  double a[EX_LANES];
  _mm256_storeu_pd(a, a0);
  _mm256_storeu_pd(a + 4, a1);
  _mm256_storeu_pd(a + 8, a2);
  _mm256_storeu_pd(a + 12, a3);
  for (size_t l = 0; i < d; i++, l++) a[l] += ex_term(op, q[i], x[i]);
  return lanes_total(a);
}

/* bf_exact_sum_variant(): see bf_internal.h. */
double bf_exact_sum_variant(bf_exact_op op, const float *q, const float *x, size_t d, bool vector) {
  if (vector && idx_kernels_for(IDX_SIMD_AVX2)) return ex_sum_avx2(op, q, x, d);
  return ex_sum_c(op, q, x, d);
}

/* bf_exact_sum(): see bf_internal.h. */
double bf_exact_sum(bf_exact_op op, const float *q, const float *x, size_t d) {
  return idx_kernels_active()->simd != IDX_SIMD_SCALAR ? ex_sum_avx2(op, q, x, d)
                                                       : ex_sum_c(op, q, x, d);
}
#else
double bf_exact_sum_variant(bf_exact_op op, const float *q, const float *x, size_t d, bool vector) {
  (void)vector;
  return ex_sum_c(op, q, x, d);
}

double bf_exact_sum(bf_exact_op op, const float *q, const float *x, size_t d) {
  return ex_sum_c(op, q, x, d);
}
#endif
