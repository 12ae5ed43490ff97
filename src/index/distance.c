/*
 * distance.c — float32 distance kernels: a scalar reference, AVX2+FMA and AVX-512 variants,
 * chosen once at run time.
 *
 * Why this shape (after pgvector's vector.c and zstd's dispatch): the library is built once
 * for a generic x86-64 (or any other) target, yet exact search and brute force spend nearly
 * all their time here, so the AVX2 bodies are compiled in this same file under
 * __attribute__((target("avx2,fma"))) and only called after __builtin_cpu_supports() said the
 * CPU has both features.  No global -mavx2 flag exists, so nothing else in the library can
 * accidentally emit AVX2 instructions.  The AVX-512 bodies follow the same pattern (target
 * "avx512f,avx512bw,avx512dq,avx512vl,fma"), preferred when the CPU has all of those.
 * VFORGE_SIMD=scalar|avx2|avx512 forces a variant (or the best one below it the CPU runs).
 *
 * The scalar reference accumulates in float in index order (what a reader expects of "the
 * definition"); the AVX2 kernels use 4 x 8-lane accumulators, so their results differ from the
 * reference by rounding only (tests bound the difference by the magnitude of the terms).
 * Batched forms ("one query against n rows") are what exact search calls: the AVX2 batch
 * kernels score 4 rows per pass so each query load feeds 4 independent FMA chains.
 * Any dimension works; no alignment is assumed (unaligned loads throughout).
 */
#include <math.h>
#include <stdlib.h>

#include "vforge/index.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define IDX_HAVE_X86 1
#include <immintrin.h>
#else
#define IDX_HAVE_X86 0
#endif

/* ------------------------------------------------------------------ scalar */

static float sc_dot(const float *a, const float *b, size_t d) {
  float s = 0.0f;
  for (size_t i = 0; i < d; i++)
    s += a[i] * b[i];
  return s;
}

static float sc_l2sq(const float *a, const float *b, size_t d) {
  float s = 0.0f;
  for (size_t i = 0; i < d; i++) {
    float t = a[i] - b[i];
    s += t * t;
  }
  return s;
}

static float sc_l1(const float *a, const float *b, size_t d) {
  float s = 0.0f;
  for (size_t i = 0; i < d; i++)
    s += fabsf(a[i] - b[i]);
  return s;
}

static void sc_dot_batch(const float *q, const float *rows, size_t n, size_t d, float *out) {
  for (size_t i = 0; i < n; i++)
    out[i] = sc_dot(q, rows + i * d, d);
}
static void sc_l2sq_batch(const float *q, const float *rows, size_t n, size_t d, float *out) {
  for (size_t i = 0; i < n; i++)
    out[i] = sc_l2sq(q, rows + i * d, d);
}
static void sc_l1_batch(const float *q, const float *rows, size_t n, size_t d, float *out) {
  for (size_t i = 0; i < n; i++)
    out[i] = sc_l1(q, rows + i * d, d);
}

static const idx_kernels k_scalar = {IDX_SIMD_SCALAR, "scalar",     sc_dot,        sc_l2sq,
                                     sc_l1,           sc_dot_batch, sc_l2sq_batch, sc_l1_batch};

/* -------------------------------------------------------------------- AVX2 */

#if IDX_HAVE_X86
#define IDX_AVX2 __attribute__((target("avx2,fma")))

IDX_AVX2 static inline float hsum8(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  __m128 sh = _mm_movehdup_ps(lo);
  lo = _mm_add_ps(lo, sh);
  sh = _mm_movehl_ps(sh, lo);
  lo = _mm_add_ss(lo, sh);
  return _mm_cvtss_f32(lo);
}

/* |x| by clearing the sign bit */
IDX_AVX2 static inline __m256 abs8(__m256 x) {
  return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
}

IDX_AVX2 static float av_dot(const float *a, const float *b, size_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  for (; i + 8 <= d; i += 8)
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float s = hsum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < d; i++)
    s += a[i] * b[i];
  return s;
}

IDX_AVX2 static float av_l2sq(const float *a, const float *b, size_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    __m256 t0 = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    __m256 t1 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
    __m256 t2 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16));
    __m256 t3 = _mm256_sub_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24));
    s0 = _mm256_fmadd_ps(t0, t0, s0);
    s1 = _mm256_fmadd_ps(t1, t1, s1);
    s2 = _mm256_fmadd_ps(t2, t2, s2);
    s3 = _mm256_fmadd_ps(t3, t3, s3);
  }
  for (; i + 8 <= d; i += 8) {
    __m256 t = _mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    s0 = _mm256_fmadd_ps(t, t, s0);
  }
  float s = hsum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < d; i++) {
    float t = a[i] - b[i];
    s += t * t;
  }
  return s;
}

IDX_AVX2 static float av_l1(const float *a, const float *b, size_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    s0 = _mm256_add_ps(s0, abs8(_mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i))));
    s1 = _mm256_add_ps(s1,
                       abs8(_mm256_sub_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8))));
    s2 = _mm256_add_ps(
        s2, abs8(_mm256_sub_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16))));
    s3 = _mm256_add_ps(
        s3, abs8(_mm256_sub_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24))));
  }
  for (; i + 8 <= d; i += 8)
    s0 = _mm256_add_ps(s0, abs8(_mm256_sub_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i))));
  float s = hsum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < d; i++)
    s += fabsf(a[i] - b[i]);
  return s;
}

/* 4 rows per pass: one query load feeds four independent accumulator chains. */
IDX_AVX2 static void av_dot_batch(const float *q, const float *rows, size_t n, size_t d,
                                  float *out) {
  size_t r = 0;
  for (; r + 4 <= n; r += 4) {
    const float *x0 = rows + r * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= d; i += 8) {
      __m256 qv = _mm256_loadu_ps(q + i);
      s0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(x0 + i), s0);
      s1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(x1 + i), s1);
      s2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(x2 + i), s2);
      s3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(x3 + i), s3);
    }
    float t0 = hsum8(s0), t1 = hsum8(s1), t2 = hsum8(s2), t3 = hsum8(s3);
    for (; i < d; i++) {
      t0 += q[i] * x0[i];
      t1 += q[i] * x1[i];
      t2 += q[i] * x2[i];
      t3 += q[i] * x3[i];
    }
    out[r] = t0;
    out[r + 1] = t1;
    out[r + 2] = t2;
    out[r + 3] = t3;
  }
  for (; r < n; r++)
    out[r] = av_dot(q, rows + r * d, d);
}

IDX_AVX2 static void av_l2sq_batch(const float *q, const float *rows, size_t n, size_t d,
                                   float *out) {
  size_t r = 0;
  for (; r + 4 <= n; r += 4) {
    const float *x0 = rows + r * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= d; i += 8) {
      __m256 qv = _mm256_loadu_ps(q + i);
      __m256 t0 = _mm256_sub_ps(qv, _mm256_loadu_ps(x0 + i));
      __m256 t1 = _mm256_sub_ps(qv, _mm256_loadu_ps(x1 + i));
      __m256 t2 = _mm256_sub_ps(qv, _mm256_loadu_ps(x2 + i));
      __m256 t3 = _mm256_sub_ps(qv, _mm256_loadu_ps(x3 + i));
      s0 = _mm256_fmadd_ps(t0, t0, s0);
      s1 = _mm256_fmadd_ps(t1, t1, s1);
      s2 = _mm256_fmadd_ps(t2, t2, s2);
      s3 = _mm256_fmadd_ps(t3, t3, s3);
    }
    float t0 = hsum8(s0), t1 = hsum8(s1), t2 = hsum8(s2), t3 = hsum8(s3);
    for (; i < d; i++) {
      float e0 = q[i] - x0[i], e1 = q[i] - x1[i], e2 = q[i] - x2[i], e3 = q[i] - x3[i];
      t0 += e0 * e0;
      t1 += e1 * e1;
      t2 += e2 * e2;
      t3 += e3 * e3;
    }
    out[r] = t0;
    out[r + 1] = t1;
    out[r + 2] = t2;
    out[r + 3] = t3;
  }
  for (; r < n; r++)
    out[r] = av_l2sq(q, rows + r * d, d);
}

IDX_AVX2 static void av_l1_batch(const float *q, const float *rows, size_t n, size_t d,
                                 float *out) {
  for (size_t r = 0; r < n; r++)
    out[r] = av_l1(q, rows + r * d, d);
}

static const idx_kernels k_avx2 = {IDX_SIMD_AVX2, "avx2",       av_dot,        av_l2sq,
                                   av_l1,         av_dot_batch, av_l2sq_batch, av_l1_batch};

static bool cpu_has_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* ----------------------------------------------------------------- AVX-512 */

/* AVX-512 (F for the arithmetic and masked loads, VL/BW/DQ only so the compiler may use the
 * narrower forms): 4 x 16-lane accumulators, and the tail of every row is one masked load
 * (masked-off lanes read nothing, so a row ending at the end of a mapping is safe) instead of
 * a scalar loop. */
#define IDX_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))

IDX_AVX512 static inline __mmask16 tail16(size_t n) { /* the low n (< 16) lanes */
  return (__mmask16)((1u << n) - 1u);
}

IDX_AVX512 static float x5_dot(const float *a, const float *b, size_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= d; i += 64) {
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
    s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
  }
  for (; i + 16 <= d; i += 16)
    s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
  if (i < d) {
    __mmask16 m = tail16(d - i);
    s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

IDX_AVX512 static float x5_l2sq(const float *a, const float *b, size_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= d; i += 64) {
    __m512 t0 = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    __m512 t1 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16));
    __m512 t2 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32));
    __m512 t3 = _mm512_sub_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48));
    s0 = _mm512_fmadd_ps(t0, t0, s0);
    s1 = _mm512_fmadd_ps(t1, t1, s1);
    s2 = _mm512_fmadd_ps(t2, t2, s2);
    s3 = _mm512_fmadd_ps(t3, t3, s3);
  }
  for (; i + 16 <= d; i += 16) {
    __m512 t = _mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));
    s0 = _mm512_fmadd_ps(t, t, s0);
  }
  if (i < d) {
    __mmask16 m = tail16(d - i);
    __m512 t = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i));
    s1 = _mm512_fmadd_ps(t, t, s1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

IDX_AVX512 static float x5_l1(const float *a, const float *b, size_t d) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  size_t i = 0;
  for (; i + 64 <= d; i += 64) {
    s0 = _mm512_add_ps(
        s0, _mm512_abs_ps(_mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i))));
    s1 = _mm512_add_ps(
        s1, _mm512_abs_ps(_mm512_sub_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16))));
    s2 = _mm512_add_ps(
        s2, _mm512_abs_ps(_mm512_sub_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32))));
    s3 = _mm512_add_ps(
        s3, _mm512_abs_ps(_mm512_sub_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48))));
  }
  for (; i + 16 <= d; i += 16)
    s0 = _mm512_add_ps(
        s0, _mm512_abs_ps(_mm512_sub_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i))));
  if (i < d) {
    __mmask16 m = tail16(d - i);
    s1 = _mm512_add_ps(s1, _mm512_abs_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, a + i),
                                                       _mm512_maskz_loadu_ps(m, b + i))));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

/* 4 rows per pass, as the AVX2 batch kernels; the tail is one masked step per row. */
IDX_AVX512 static void x5_dot_batch(const float *q, const float *rows, size_t n, size_t d,
                                    float *out) {
  size_t r = 0;
  for (; r + 4 <= n; r += 4) {
    const float *x0 = rows + r * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= d; i += 16) {
      __m512 qv = _mm512_loadu_ps(q + i);
      s0 = _mm512_fmadd_ps(qv, _mm512_loadu_ps(x0 + i), s0);
      s1 = _mm512_fmadd_ps(qv, _mm512_loadu_ps(x1 + i), s1);
      s2 = _mm512_fmadd_ps(qv, _mm512_loadu_ps(x2 + i), s2);
      s3 = _mm512_fmadd_ps(qv, _mm512_loadu_ps(x3 + i), s3);
    }
    if (i < d) {
      __mmask16 m = tail16(d - i);
      __m512 qv = _mm512_maskz_loadu_ps(m, q + i);
      s0 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, x0 + i), s0);
      s1 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, x1 + i), s1);
      s2 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, x2 + i), s2);
      s3 = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, x3 + i), s3);
    }
    out[r] = _mm512_reduce_add_ps(s0);
    out[r + 1] = _mm512_reduce_add_ps(s1);
    out[r + 2] = _mm512_reduce_add_ps(s2);
    out[r + 3] = _mm512_reduce_add_ps(s3);
  }
  for (; r < n; r++)
    out[r] = x5_dot(q, rows + r * d, d);
}

IDX_AVX512 static void x5_l2sq_batch(const float *q, const float *rows, size_t n, size_t d,
                                     float *out) {
  size_t r = 0;
  for (; r + 4 <= n; r += 4) {
    const float *x0 = rows + r * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= d; i += 16) {
      __m512 qv = _mm512_loadu_ps(q + i);
      __m512 t0 = _mm512_sub_ps(qv, _mm512_loadu_ps(x0 + i));
      __m512 t1 = _mm512_sub_ps(qv, _mm512_loadu_ps(x1 + i));
      __m512 t2 = _mm512_sub_ps(qv, _mm512_loadu_ps(x2 + i));
      __m512 t3 = _mm512_sub_ps(qv, _mm512_loadu_ps(x3 + i));
      s0 = _mm512_fmadd_ps(t0, t0, s0);
      s1 = _mm512_fmadd_ps(t1, t1, s1);
      s2 = _mm512_fmadd_ps(t2, t2, s2);
      s3 = _mm512_fmadd_ps(t3, t3, s3);
    }
    if (i < d) {
      __mmask16 m = tail16(d - i);
      __m512 qv = _mm512_maskz_loadu_ps(m, q + i);
      __m512 t0 = _mm512_sub_ps(qv, _mm512_maskz_loadu_ps(m, x0 + i));
      __m512 t1 = _mm512_sub_ps(qv, _mm512_maskz_loadu_ps(m, x1 + i));
      __m512 t2 = _mm512_sub_ps(qv, _mm512_maskz_loadu_ps(m, x2 + i));
      __m512 t3 = _mm512_sub_ps(qv, _mm512_maskz_loadu_ps(m, x3 + i));
      s0 = _mm512_fmadd_ps(t0, t0, s0);
      s1 = _mm512_fmadd_ps(t1, t1, s1);
      s2 = _mm512_fmadd_ps(t2, t2, s2);
      s3 = _mm512_fmadd_ps(t3, t3, s3);
    }
    out[r] = _mm512_reduce_add_ps(s0);
    out[r + 1] = _mm512_reduce_add_ps(s1);
    out[r + 2] = _mm512_reduce_add_ps(s2);
    out[r + 3] = _mm512_reduce_add_ps(s3);
  }
  for (; r < n; r++)
    out[r] = x5_l2sq(q, rows + r * d, d);
}

IDX_AVX512 static void x5_l1_batch(const float *q, const float *rows, size_t n, size_t d,
                                   float *out) {
  size_t r = 0;
  for (; r + 4 <= n; r += 4) {
    const float *x0 = rows + r * d, *x1 = x0 + d, *x2 = x1 + d, *x3 = x2 + d;
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 16 <= d; i += 16) {
      __m512 qv = _mm512_loadu_ps(q + i);
      s0 = _mm512_add_ps(s0, _mm512_abs_ps(_mm512_sub_ps(qv, _mm512_loadu_ps(x0 + i))));
      s1 = _mm512_add_ps(s1, _mm512_abs_ps(_mm512_sub_ps(qv, _mm512_loadu_ps(x1 + i))));
      s2 = _mm512_add_ps(s2, _mm512_abs_ps(_mm512_sub_ps(qv, _mm512_loadu_ps(x2 + i))));
      s3 = _mm512_add_ps(s3, _mm512_abs_ps(_mm512_sub_ps(qv, _mm512_loadu_ps(x3 + i))));
    }
    if (i < d) {
      __mmask16 m = tail16(d - i);
      __m512 qv = _mm512_maskz_loadu_ps(m, q + i);
      s0 = _mm512_add_ps(s0, _mm512_abs_ps(_mm512_sub_ps(qv, _mm512_maskz_loadu_ps(m, x0 + i))));
      s1 = _mm512_add_ps(s1, _mm512_abs_ps(_mm512_sub_ps(qv, _mm512_maskz_loadu_ps(m, x1 + i))));
      s2 = _mm512_add_ps(s2, _mm512_abs_ps(_mm512_sub_ps(qv, _mm512_maskz_loadu_ps(m, x2 + i))));
      s3 = _mm512_add_ps(s3, _mm512_abs_ps(_mm512_sub_ps(qv, _mm512_maskz_loadu_ps(m, x3 + i))));
    }
    out[r] = _mm512_reduce_add_ps(s0);
    out[r + 1] = _mm512_reduce_add_ps(s1);
    out[r + 2] = _mm512_reduce_add_ps(s2);
    out[r + 3] = _mm512_reduce_add_ps(s3);
  }
  for (; r < n; r++)
    out[r] = x5_l1(q, rows + r * d, d);
}

static const idx_kernels k_avx512 = {IDX_SIMD_AVX512, "avx512",     x5_dot,        x5_l2sq,
                                     x5_l1,           x5_dot_batch, x5_l2sq_batch, x5_l1_batch};

static bool cpu_has_avx512(void) {
  __builtin_cpu_init();
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}
#endif /* IDX_HAVE_X86 */

/* ---------------------------------------------------------------- dispatch */

/* idx_kernels_for(): see index.h. */
const idx_kernels *idx_kernels_for(idx_simd simd) {
  switch (simd) {
  case IDX_SIMD_SCALAR: return &k_scalar;
  case IDX_SIMD_AVX2:
#if IDX_HAVE_X86
    return cpu_has_avx2() ? &k_avx2 : NULL;
#else
    return NULL;
#endif
  case IDX_SIMD_AVX512:
#if IDX_HAVE_X86
    return cpu_has_avx512() ? &k_avx512 : NULL;
#else
    return NULL;
#endif
  }
  return NULL;
}

/* idx_simd_parse(): see index.h. */
bool idx_simd_parse(const char *name, idx_simd *out) {
  static const struct {
    const char *name;
    idx_simd s;
  } names[] = {{"scalar", IDX_SIMD_SCALAR}, {"avx2", IDX_SIMD_AVX2}, {"avx512", IDX_SIMD_AVX512}};
  if (!name) return false;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i].name) == 0) {
      *out = names[i].s;
      return true;
    }
  return false;
}

/* The choice is made once; concurrent first calls compute the same pointer, so a benign
 * relaxed atomic store is all the synchronisation needed. */
static const idx_kernels *_Atomic g_active;

/* idx_kernels_active(): see index.h.  The best variant at or below `want` that this CPU runs
 * (variants are ordered scalar < avx2 < avx512); the scalar reference always runs. */
const idx_kernels *idx_kernels_active(void) {
  const idx_kernels *k = g_active;
  if (VF_LIKELY(k != NULL)) return k;
  idx_simd want = IDX_SIMD_AVX512;
  const char *env = getenv("VFORGE_SIMD");
  if (env && *env && !idx_simd_parse(env, &want)) {
    vf_log(VF_LOG_WARN,
           "VFORGE_SIMD=%s: unknown kernel variant (expected scalar, avx2 or avx512); "
           "using the best this CPU runs",
           env);
    want = IDX_SIMD_AVX512;
  }
  k = NULL;
  for (int s = (int)want; s > IDX_SIMD_SCALAR && !k; s--)
    k = idx_kernels_for((idx_simd)s);
  if (!k) k = &k_scalar;
  if (env && *env && k->simd != want)
    vf_log(VF_LOG_WARN, "VFORGE_SIMD=%s: this CPU cannot run it; using the %s kernels", env,
           k->name);
  g_active = k;
  return k;
}

float idx_dot(const float *a, const float *b, size_t d) {
  return idx_kernels_active()->dot(a, b, d);
}
float idx_l2sq(const float *a, const float *b, size_t d) {
  return idx_kernels_active()->l2sq(a, b, d);
}
float idx_l2(const float *a, const float *b, size_t d) {
  return sqrtf(idx_kernels_active()->l2sq(a, b, d));
}
float idx_l1(const float *a, const float *b, size_t d) {
  return idx_kernels_active()->l1(a, b, d);
}

/* idx_cosine(): see index.h. */
float idx_cosine(const float *a, const float *b, size_t d) {
  const idx_kernels *k = idx_kernels_active();
  float na = k->dot(a, a, d), nb = k->dot(b, b, d);
  if (!(na > 0.0f) || !(nb > 0.0f)) return 0.0f;
  return (float)((double)k->dot(a, b, d) / (sqrt((double)na) * sqrt((double)nb)));
}

/* idx_normalize(): see index.h. */
bool idx_normalize(float *v, size_t d) {
  double s = 0.0;
  for (size_t i = 0; i < d; i++)
    s += (double)v[i] * (double)v[i];
  if (!(s > 0.0) || !isfinite(s)) return false;
  double inv = 1.0 / sqrt(s);
  for (size_t i = 0; i < d; i++)
    v[i] = (float)((double)v[i] * inv);
  return true;
}

/* idx_normalize_rows(): see index.h. */
size_t idx_normalize_rows(float *rows, size_t n, size_t d) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++)
    if (!idx_normalize(rows + i * d, d)) bad++;
  return bad;
}

/* idx_scores(): see index.h. */
void idx_scores(corpus_distance metric, const float *q, const float *rows, size_t n, size_t d,
                float *out) {
  const idx_kernels *k = idx_kernels_active();
  switch (metric) {
  case CORPUS_COSINE:
  case CORPUS_DOT: k->dot_batch(q, rows, n, d, out); return;
  case CORPUS_EUCLID:
    k->l2sq_batch(q, rows, n, d, out);
    for (size_t i = 0; i < n; i++)
      out[i] = -sqrtf(out[i]);
    return;
  case CORPUS_MANHATTAN:
    k->l1_batch(q, rows, n, d, out);
    for (size_t i = 0; i < n; i++)
      out[i] = -out[i];
    return;
  }
}

const char *idx_metric_name(corpus_distance metric) {
  switch (metric) {
  case CORPUS_COSINE: return "cosine";
  case CORPUS_DOT: return "dot";
  case CORPUS_EUCLID: return "euclid";
  case CORPUS_MANHATTAN: return "manhattan";
  }
  return "?";
}

bool idx_metric_parse(const char *name, corpus_distance *out) {
  static const struct {
    const char *name;
    corpus_distance m;
  } names[] = {
      {"cosine", CORPUS_COSINE},       {"dot", CORPUS_DOT},     {"ip", CORPUS_DOT},
      {"euclid", CORPUS_EUCLID},       {"l2", CORPUS_EUCLID},   {"euclidean", CORPUS_EUCLID},
      {"manhattan", CORPUS_MANHATTAN}, {"l1", CORPUS_MANHATTAN}};
  if (!name) return false;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i].name) == 0) {
      *out = names[i].m;
      return true;
    }
  return false;
}
