/*
 * blas_own.c — vforge's own sgemm, C = A . B^T, and the self-check every BLAS passes before use.
 *
 * Why an own kernel at all: the BLAS loader (blas.c) needs somewhere to go when the library it
 * found cannot be trusted — a self-check that disagrees, or OpenBLAS stuck on generic kernels
 * without the DYNAMIC_ARCH switch — and for machines with no BLAS installed
 * (VFORGE_BLAS_LIB=builtin).  Every product vforge computes has the same shape: rows of A
 * against rows of B (queries x corpus rows, rows x centroids), both contiguous along k, so the
 * kernel needs no packing: a 4 x 3 tile of dot products keeps 12 AVX2 accumulators (enough to
 * hide FMA latency on two FMA ports) and loads 7 vectors per 12 FMAs.  Blocking: k in chunks of
 * OWN_KC (a 4-row panel of A stays in L1), B in blocks of OWN_NB rows (in L2).  It is single-
 * threaded — callers that want threads run it from their own workers, as they do with BLAS —
 * and reaches a good share of a core's peak, not OpenBLAS's (bench/kernels prints both).
 *
 * The self-check compares a product with a double-precision reference within the error bound
 * of a float dot product, (k + 2) * 2^-23 * sum |a_p b_p|: a wrong kernel misses by the size of
 * the terms, far above it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define OWN_X86 1
#endif

#include "util/blas_internal.h"

#define OWN_KC 512 /* k per pass: 4 rows of A = 8 KiB, in L1 */
#define OWN_NB 96  /* rows of B per block (a multiple of 3): 96 x 512 floats = 192 KiB, in L2 */

/* ---------------------------------------------------------------- scalar */

static float dot_scalar(const float *a, const float *b, size_t k) {
  float s[4] = {0, 0, 0, 0};
  size_t p = 0;
  for (; p + 4 <= k; p += 4)
    for (int l = 0; l < 4; l++)
      s[l] += a[p + (size_t)l] * b[p + (size_t)l];
  for (; p < k; p++)
    s[0] += a[p] * b[p];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

static void nt_scalar(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b,
                      size_t ldb, float *c, size_t ldc) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++)
      c[i * ldc + j] = dot_scalar(a + i * lda, b + j * ldb, k);
}

/* ------------------------------------------------------------------ AVX2 */

#ifdef OWN_X86
#define OWN_AVX2 __attribute__((target("avx2,fma")))

static OWN_AVX2 inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

static OWN_AVX2 float dot_avx2(const float *a, const float *b, size_t k) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  size_t p = 0;
  for (; p + 16 <= k; p += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + p), _mm256_loadu_ps(b + p), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + p + 8), _mm256_loadu_ps(b + p + 8), s1);
  }
  for (; p + 8 <= k; p += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + p), _mm256_loadu_ps(b + p), s0);
  float s = hsum8(_mm256_add_ps(s0, s1));
  for (; p < k; p++)
    s += a[p] * b[p];
  return s;
}

/* c[i][j] (+)= a_i . b_j for a 4 x 3 tile over kc elements */
static OWN_AVX2 void tile_4x3(const float *a, size_t lda, const float *b, size_t ldb, size_t kc,
                              float *c, size_t ldc, int acc) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00;
  __m256 c20 = c00, c21 = c00, c22 = c00, c30 = c00, c31 = c00, c32 = c00;
  const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
  const float *b0 = b, *b1 = b + ldb, *b2 = b + 2 * ldb;
  size_t p = 0;
  for (; p + 8 <= kc; p += 8) {
    __m256 x0 = _mm256_loadu_ps(b0 + p), x1 = _mm256_loadu_ps(b1 + p),
           x2 = _mm256_loadu_ps(b2 + p);
    __m256 r = _mm256_loadu_ps(a0 + p);
    c00 = _mm256_fmadd_ps(r, x0, c00);
    c01 = _mm256_fmadd_ps(r, x1, c01);
    c02 = _mm256_fmadd_ps(r, x2, c02);
    r = _mm256_loadu_ps(a1 + p);
    c10 = _mm256_fmadd_ps(r, x0, c10);
    c11 = _mm256_fmadd_ps(r, x1, c11);
    c12 = _mm256_fmadd_ps(r, x2, c12);
    r = _mm256_loadu_ps(a2 + p);
    c20 = _mm256_fmadd_ps(r, x0, c20);
    c21 = _mm256_fmadd_ps(r, x1, c21);
    c22 = _mm256_fmadd_ps(r, x2, c22);
    r = _mm256_loadu_ps(a3 + p);
    c30 = _mm256_fmadd_ps(r, x0, c30);
    c31 = _mm256_fmadd_ps(r, x1, c31);
    c32 = _mm256_fmadd_ps(r, x2, c32);
  }
  float t[4][3] = {{hsum8(c00), hsum8(c01), hsum8(c02)},
                   {hsum8(c10), hsum8(c11), hsum8(c12)},
                   {hsum8(c20), hsum8(c21), hsum8(c22)},
                   {hsum8(c30), hsum8(c31), hsum8(c32)}};
  const float *ar[4] = {a0, a1, a2, a3}, *br[3] = {b0, b1, b2};
  for (; p < kc; p++)
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++)
        t[i][j] += ar[i][p] * br[j][p];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++) {
      float *o = c + (size_t)i * ldc + (size_t)j;
      *o = acc ? *o + t[i][j] : t[i][j];
    }
}

static OWN_AVX2 void nt_avx2(size_t m, size_t n, size_t k, const float *a, size_t lda,
                             const float *b, size_t ldb, float *c, size_t ldc) {
  for (size_t p0 = 0; p0 < k; p0 += OWN_KC) {
    size_t kc = k - p0 < OWN_KC ? k - p0 : OWN_KC;
    int acc = p0 > 0;
    for (size_t j0 = 0; j0 < n; j0 += OWN_NB) {
      size_t j1 = n - j0 < OWN_NB ? n : j0 + OWN_NB;
      size_t i = 0;
      for (; i + 4 <= m; i += 4) {
        const float *ap = a + i * lda + p0;
        size_t j = j0;
        for (; j + 3 <= j1; j += 3)
          tile_4x3(ap, lda, b + j * ldb + p0, ldb, kc, c + i * ldc + j, ldc, acc);
        for (; j < j1; j++)
          for (size_t r = 0; r < 4; r++) {
            float v = dot_avx2(ap + r * lda, b + j * ldb + p0, kc);
            float *o = c + (i + r) * ldc + j;
            *o = acc ? *o + v : v;
          }
      }
      for (; i < m; i++)
        for (size_t j = j0; j < j1; j++) {
          float v = dot_avx2(a + i * lda + p0, b + j * ldb + p0, kc);
          float *o = c + i * ldc + j;
          *o = acc ? *o + v : v;
        }
    }
  }
}
#endif

/* ------------------------------------------------------------- dispatch */

/* blas_own_best(): see blas_internal.h. */
blas_own_variant blas_own_best(void) {
  const char *simd = getenv("VFORGE_SIMD");
  if (simd && strcmp(simd, "scalar") == 0) return BLAS_OWN_SCALAR;
#ifdef OWN_X86
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return BLAS_OWN_AVX2;
#endif
  return BLAS_OWN_SCALAR;
}

const char *blas_own_name(blas_own_variant v) {
  return v == BLAS_OWN_AVX2 ? "builtin-avx2" : "builtin-scalar";
}

/* blas_own_sgemm_nt(): see blas_internal.h.  k == 0 gives zeros. */
void blas_own_sgemm_nt(blas_own_variant v, size_t m, size_t n, size_t k, const float *a,
                       size_t lda, const float *b, size_t ldb, float *c, size_t ldc) {
  if (k == 0) {
    for (size_t i = 0; i < m; i++)
      memset(c + i * ldc, 0, n * sizeof(float));
    return;
  }
#ifdef OWN_X86
  if (v == BLAS_OWN_AVX2) {
    nt_avx2(m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
#endif
  (void)v;
  nt_scalar(m, n, k, a, lda, b, ldb, c, ldc);
}

/* ------------------------------------------------------------ self-check */

#define CHECK_SENTINEL 12345.0f

typedef struct check_shape {
  size_t m, n, k, lda, ldb, ldc;
} check_shape;

/* deterministic values in [-1, 1) */
static float check_value(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) * 0x1p-23f - 1.0f;
}

static bool check_one(blas_nt_fn fn, void *ctx, const check_shape *sh, char *why, size_t whylen) {
  float *a = vf_mallocarray(sh->m * sh->lda, sizeof(float));
  float *b = vf_mallocarray(sh->n * sh->ldb, sizeof(float));
  float *c = vf_mallocarray(sh->m * sh->ldc, sizeof(float));
  bool ok = false;
  if (!a || !b || !c) {
    snprintf(why, whylen, "out of memory for the self-check");
    goto out;
  }
  uint32_t seed = (uint32_t)(sh->m * 131 + sh->n * 7 + sh->k);
  for (size_t i = 0; i < sh->m * sh->lda; i++)
    a[i] = check_value(&seed);
  for (size_t i = 0; i < sh->n * sh->ldb; i++)
    b[i] = check_value(&seed);
  for (size_t i = 0; i < sh->m * sh->ldc; i++)
    c[i] = CHECK_SENTINEL;
  fn(ctx, sh->m, sh->n, sh->k, a, sh->lda, b, sh->ldb, c, sh->ldc);
  for (size_t i = 0; i < sh->m; i++) {
    for (size_t j = 0; j < sh->ldc; j++) {
      float got = c[i * sh->ldc + j];
      if (j >= sh->n) { /* padding: never written */
        if (got != CHECK_SENTINEL) {
          snprintf(why, whylen, "%zux%zux%zu: wrote C[%zu][%zu] beyond n (ldc %zu)", sh->m, sh->n,
                   sh->k, i, j, sh->ldc);
          goto out;
        }
        continue;
      }
      double ref = 0, mag = 0;
      for (size_t p = 0; p < sh->k; p++) {
        double t = (double)a[i * sh->lda + p] * (double)b[j * sh->ldb + p];
        ref += t;
        mag += fabs(t);
      }
      double tol = (double)(sh->k + 2) * 0x1p-23 * mag + 1e-30;
      if (!(fabs((double)got - ref) <= tol)) {
        snprintf(why, whylen, "%zux%zux%zu: C[%zu][%zu] = %.9g, expected %.9g (allowed error %.3g)",
                 sh->m, sh->n, sh->k, i, j, (double)got, ref, tol);
        goto out;
      }
    }
  }
  ok = true;
out:
  free(a);
  free(b);
  free(c);
  return ok;
}

/* blas_self_check(): see blas_internal.h.  A small odd product (every remainder path) and one
 * large enough for a BLAS's blocked, possibly threaded path (~8 MFLOP). */
bool blas_self_check(blas_nt_fn fn, void *ctx, char *why, size_t whylen) {
  static const check_shape shapes[] = {{7, 19, 69, 72, 70, 21}, {64, 100, 640, 640, 643, 103}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    if (!check_one(fn, ctx, &shapes[i], why, whylen)) return false;
  return true;
}
