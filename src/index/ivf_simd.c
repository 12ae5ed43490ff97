/*
 * ivf_simd.c — the list-scan kernels of IVF search (SQ8, PQ of 8 and 4 bits, RaBitQ): a scalar
 * reference, AVX2+FMA and AVX-512 variants compiled here under __attribute__((target)), chosen
 * at run time the way distance.c chooses its kernels (idx_kernels_active(): CPU features,
 * VFORGE_SIMD).
 * Flat lists use distance.c's batch kernels directly.
 */
#include <math.h>

#include "index/ivf_internal.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define IVF_HAVE_X86 1
#include <immintrin.h>
#else
#define IVF_HAVE_X86 0
#endif

/* ------------------------------------------------------------------ scalar */

static float sc_sq8_l2(const float *a, const float *s, const uint8_t *c, size_t d) {
  float acc = 0.0f;
  for (size_t j = 0; j < d; j++) {
    float t = a[j] - s[j] * (float)c[j];
    acc += t * t;
  }
  return acc;
}

static float sc_u8_dot(const float *w, const uint8_t *c, size_t d) {
  float acc = 0.0f;
  for (size_t j = 0; j < d; j++)
    acc += w[j] * (float)c[j];
  return acc;
}

static void sc_pq_block(const float *lut, const uint8_t *codes, size_t m, float *out) {
  for (size_t j = 0; j < IVF_PQ_BLOCK; j++)
    out[j] = 0.0f;
  for (size_t i = 0; i < m; i++) {
    const float *t = lut + i * 256;
    const uint8_t *c = codes + i * IVF_PQ_BLOCK;
    for (size_t j = 0; j < IVF_PQ_BLOCK; j++)
      out[j] += t[c[j]];
  }
}

static uint32_t sc_pq4_block(const uint8_t *lut, const uint8_t *codes, size_t ng, uint16_t bound,
                             uint16_t *out) {
  uint32_t mask = 0;
  for (size_t j = 0; j < IVF_PQ_BLOCK; j++) {
    unsigned acc = 0;
    for (size_t p = 0; p < ng; p++) {
      uint8_t c = codes[p * 32 + j];
      acc += lut[p * 32 + (c & 15u)] + lut[p * 32 + 16 + (c >> 4)];
    }
    out[j] = (uint16_t)acc;
    mask |= (uint32_t)(acc <= bound) << j;
  }
  return mask;
}

static void sc_pq4_lut(const float *x, const float *cbt, size_t m, size_t dsub, int l2,
                       float *lut) {
  for (size_t i = 0; i < m; i++)
    for (size_t c = 0; c < 16; c++) {
      float acc = 0.0f;
      for (size_t j = 0; j < dsub; j++) {
        float xv = x[i * dsub + j], cv = cbt[(i * dsub + j) * 16 + c];
        if (l2) {
          float t = xv - cv;
          acc += t * t;
        } else {
          acc += xv * cv;
        }
      }
      lut[i * 16 + c] = l2 ? acc : -acc;
    }
}

/* ivf_pq4_lut (ivf_internal.h): one scale for every table (the u8 sums of different
 * sub-quantizers must be comparable), a bias per table; rounding to nearest, so each entry is
 * within 0.5/a of its float value.  The u16 accumulators cannot overflow: the kernels sum at most
 * IVF_PQ4_CHUNK groups (2 * 128 * 255 < 65536) per call. */
static void sc_pq4_quant(const float *t, const float *add, size_t m, ivf_pq4_lut *out) {
  float span = 0.0f, bias = 0.0f, r[16];
  for (size_t i = 0; i < m; i++) {
    for (size_t c = 0; c < 16; c++)
      r[c] = add ? t[i * 16 + c] + add[i * 16 + c] : t[i * 16 + c];
    float lo = r[0], hi = r[0];
    for (size_t c = 1; c < 16; c++) {
      lo = r[c] < lo ? r[c] : lo;
      hi = r[c] > hi ? r[c] : hi;
    }
    bias += lo;
    if (hi - lo > span) span = hi - lo;
  }
  float a = span > 0.0f && isfinite(span) ? 255.0f / span : 0.0f;
  out->bias = bias;
  out->inv_a = a > 0.0f ? 1.0f / a : 0.0f;
  size_t ng = (m + 1) / 2;
  for (size_t p = 0; p < ng; p++) {
    uint8_t *g = out->q + p * 32;
    for (size_t h = 0; h < 2; h++) {
      size_t i = 2 * p + h;
      if (i >= m) { /* the missing half of an odd m: codes 0, table 0 */
        memset(g + 16 * h, 0, 16);
        continue;
      }
      for (size_t c = 0; c < 16; c++)
        r[c] = add ? t[i * 16 + c] + add[i * 16 + c] : t[i * 16 + c];
      float lo = r[0];
      for (size_t c = 1; c < 16; c++)
        lo = r[c] < lo ? r[c] : lo;
      for (size_t c = 0; c < 16; c++) {
        float v = (r[c] - lo) * a + 0.5f; /* >= 0.5: truncation rounds to nearest */
        g[16 * h + c] = (uint8_t)(v < 255.0f ? v : 255.0f); /* NaN (a NaN query): 255 */
      }
    }
  }
}

static void coarse_per_query(const idx_kernels *IK, const float *q, size_t nq, const float *rows,
                             size_t n, size_t d, int l2, float *out) {
  for (size_t j = 0; j < nq; j++)
    (l2 ? IK->l2sq_batch : IK->dot_batch)(q + j * d, rows, n, d, out + j * n);
}

static void sc_coarse(const float *q, size_t nq, const float *rows, size_t n, size_t d, int l2,
                      float *out) {
  coarse_per_query(idx_kernels_for(IDX_SIMD_SCALAR), q, nq, rows, n, d, l2, out);
}

static float sc_bytes_lut(const float *lut, const uint8_t *code, size_t nb) {
  float acc = 0.0f;
  for (size_t j = 0; j < nb; j++)
    acc += lut[j * 256 + code[j]];
  return acc;
}

static float sc_argmin(const float *cn, const float *ip, size_t n, uint32_t *idx) {
  float bv = INFINITY;
  uint32_t bi = 0;
  for (size_t i = 0; i < n; i++) {
    float v = cn[i] - (ip[i] + ip[i]);
    if (v < bv) {
      bv = v;
      bi = (uint32_t)i;
    }
  }
  *idx = bi;
  return bv;
}

static const ivf_kern k_scalar = {"scalar",     sc_sq8_l2,    sc_u8_dot,    sc_pq_block,
                                  sc_pq4_block, sc_pq4_lut,   sc_pq4_quant, sc_coarse,
                                  sc_bytes_lut, sc_argmin};

/* The end of a SIMD argmin: reduce the per-lane bests (lv[l] at index li[l]; first index on ties,
 * as the scalar loop) and finish rows i..n-1 one by one, so every variant returns exactly
 * sc_argmin's result. */
static float argmin_finish(const float *lv, const uint32_t *li, int lanes, const float *cn,
                           const float *ip, size_t i, size_t n, uint32_t *idx) {
  float best = INFINITY;
  uint32_t b = 0;
  for (int l = 0; l < lanes; l++)
    if (lv[l] < best || (lv[l] == best && best != INFINITY && li[l] < b)) {
      best = lv[l];
      b = li[l];
    }
  for (; i < n; i++) {
    float v = cn[i] - (ip[i] + ip[i]);
    if (v < best) {
      best = v;
      b = (uint32_t)i;
    }
  }
  *idx = b;
  return best;
}

/* -------------------------------------------------------------------- AVX2 */

#if IVF_HAVE_X86
#define IVF_AVX2 __attribute__((target("avx2,fma")))

IVF_AVX2 static inline float hsum8(__m256 v) {
  __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

IVF_AVX2 static inline __m256 load_u8x8(const uint8_t *c) {
  __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)c);
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b));
}

IVF_AVX2 static float av_sq8_l2(const float *a, const float *s, const uint8_t *c, size_t d) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  size_t j = 0;
  for (; j + 16 <= d; j += 16) {
    __m256 t0 = _mm256_fnmadd_ps(_mm256_loadu_ps(s + j), load_u8x8(c + j), _mm256_loadu_ps(a + j));
    __m256 t1 = _mm256_fnmadd_ps(_mm256_loadu_ps(s + j + 8), load_u8x8(c + j + 8),
                                 _mm256_loadu_ps(a + j + 8));
    acc0 = _mm256_fmadd_ps(t0, t0, acc0);
    acc1 = _mm256_fmadd_ps(t1, t1, acc1);
  }
  for (; j + 8 <= d; j += 8) {
    __m256 t0 = _mm256_fnmadd_ps(_mm256_loadu_ps(s + j), load_u8x8(c + j), _mm256_loadu_ps(a + j));
    acc0 = _mm256_fmadd_ps(t0, t0, acc0);
  }
  float acc = hsum8(_mm256_add_ps(acc0, acc1));
  for (; j < d; j++) {
    float t = a[j] - s[j] * (float)c[j];
    acc += t * t;
  }
  return acc;
}

IVF_AVX2 static float av_u8_dot(const float *w, const uint8_t *c, size_t d) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  size_t j = 0;
  for (; j + 16 <= d; j += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + j), load_u8x8(c + j), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + j + 8), load_u8x8(c + j + 8), acc1);
  }
  for (; j + 8 <= d; j += 8)
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + j), load_u8x8(c + j), acc0);
  float acc = hsum8(_mm256_add_ps(acc0, acc1));
  for (; j < d; j++)
    acc += w[j] * (float)c[j];
  return acc;
}

IVF_AVX2 static void av_pq_block(const float *lut, const uint8_t *codes, size_t m, float *out) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  for (size_t i = 0; i < m; i++) {
    const float *t = lut + i * 256;
    const uint8_t *c = codes + i * IVF_PQ_BLOCK;
    __m256i i0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)c));
    __m256i i1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(c + 8)));
    __m256i i2 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(c + 16)));
    __m256i i3 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(c + 24)));
    a0 = _mm256_add_ps(a0, _mm256_i32gather_ps(t, i0, 4));
    a1 = _mm256_add_ps(a1, _mm256_i32gather_ps(t, i1, 4));
    a2 = _mm256_add_ps(a2, _mm256_i32gather_ps(t, i2, 4));
    a3 = _mm256_add_ps(a3, _mm256_i32gather_ps(t, i3, 4));
  }
  _mm256_storeu_ps(out, a0);
  _mm256_storeu_ps(out + 8, a1);
  _mm256_storeu_ps(out + 16, a2);
  _mm256_storeu_ps(out + 24, a3);
}

/* 4-bit PQ fast scan: per group, the 32 code bytes split into low and high nibbles, each looked
 * up by one vpshufb in a 16-entry u8 table broadcast to both 128-bit lanes.  The u8 results are
 * summed in u16 lanes without unpacking: a0 adds each byte pair as one u16 (even row + 256 * odd
 * row, wrapping), a1 adds the odd rows alone (>> 8); at the end even = a0 - (a1 << 8), exact
 * modulo 2^16 and so exact, since no true sum reaches 2^16 (IVF_PQ4_CHUNK). */
IVF_AVX2 static uint32_t av_pq4_block(const uint8_t *lut, const uint8_t *codes, size_t ng,
                                      uint16_t bound, uint16_t *out) {
  const __m256i mask = _mm256_set1_epi8(15);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, b0 = a0, b1 = a0; /* two groups per pass */
#define PQ4_GROUP(p, x0, x1)                                                                       \
  do {                                                                                             \
    __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(codes + (p) * 32));            \
    __m256i lo = _mm256_and_si256(c, mask);                                                        \
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(c, 4), mask);                                  \
    const __m128i *t = (const __m128i *)(const void *)(lut + (p) * 32);                            \
    __m256i t0 = _mm256_broadcastsi128_si256(_mm_loadu_si128(t));                                  \
    __m256i t1 = _mm256_broadcastsi128_si256(_mm_loadu_si128(t + 1));                              \
    __m256i r0 = _mm256_shuffle_epi8(t0, lo), r1 = _mm256_shuffle_epi8(t1, hi);                    \
    x0 = _mm256_add_epi16(x0, _mm256_add_epi16(r0, r1));                                           \
    x1 = _mm256_add_epi16(x1, _mm256_add_epi16(_mm256_srli_epi16(r0, 8), _mm256_srli_epi16(r1, 8))); \
  } while (0)
  size_t p = 0;
  for (; p + 2 <= ng; p += 2) {
    PQ4_GROUP(p, a0, a1);
    PQ4_GROUP(p + 1, b0, b1);
  }
  if (p < ng) PQ4_GROUP(p, a0, a1);
#undef PQ4_GROUP
  a0 = _mm256_add_epi16(a0, b0);
  a1 = _mm256_add_epi16(a1, b1);
  __m256i ev = _mm256_sub_epi16(a0, _mm256_slli_epi16(a1, 8));
  __m256i lo16 = _mm256_unpacklo_epi16(ev, a1); /* rows 0..7 | rows 16..23 */
  __m256i hi16 = _mm256_unpackhi_epi16(ev, a1); /* rows 8..15 | rows 24..31 */
  __m256i r0 = _mm256_permute2x128_si256(lo16, hi16, 0x20); /* rows 0..15 */
  __m256i r1 = _mm256_permute2x128_si256(lo16, hi16, 0x31); /* rows 16..31 */
  _mm256_storeu_si256((__m256i *)(void *)out, r0);
  _mm256_storeu_si256((__m256i *)(void *)(out + 16), r1);
  /* x <= bound <=> max(x, bound) == bound; the 16-bit masks packed to bytes in row order */
  const __m256i b = _mm256_set1_epi16((short)bound);
  __m256i m0 = _mm256_cmpeq_epi16(_mm256_max_epu16(r0, b), b);
  __m256i m1 = _mm256_cmpeq_epi16(_mm256_max_epu16(r1, b), b);
  __m256i m = _mm256_permute4x64_epi64(_mm256_packs_epi16(m0, m1), 0xd8);
  return (uint32_t)_mm256_movemask_epi8(m);
}

/* the 16 entries of a table in two registers, dsub terms accumulated in sc_pq4_lut's order with
 * separate multiply and add (no FMA), so the tables equal the scalar ones */
IVF_AVX2 static void av_pq4_lut(const float *x, const float *cbt, size_t m, size_t dsub, int l2,
                                float *lut) {
  for (size_t i = 0; i < m; i++) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    for (size_t j = 0; j < dsub; j++) {
      __m256 xv = _mm256_set1_ps(x[i * dsub + j]);
      const float *c = cbt + (i * dsub + j) * 16;
      __m256 c0 = _mm256_loadu_ps(c), c1 = _mm256_loadu_ps(c + 8);
      if (l2) {
        __m256 t0 = _mm256_sub_ps(xv, c0), t1 = _mm256_sub_ps(xv, c1);
        s0 = _mm256_add_ps(s0, _mm256_mul_ps(t0, t0));
        s1 = _mm256_add_ps(s1, _mm256_mul_ps(t1, t1));
      } else {
        s0 = _mm256_add_ps(s0, _mm256_mul_ps(xv, c0));
        s1 = _mm256_add_ps(s1, _mm256_mul_ps(xv, c1));
      }
    }
    if (!l2) {
      const __m256 neg = _mm256_set1_ps(-0.0f);
      s0 = _mm256_xor_ps(s0, neg);
      s1 = _mm256_xor_ps(s1, neg);
    }
    _mm256_storeu_ps(lut + i * 16, s0);
    _mm256_storeu_ps(lut + i * 16 + 8, s1);
  }
}

IVF_AVX2 static inline float hmin8(__m256 v) {
  __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_min_ps(m, _mm_shuffle_ps(m, m, 0x4e));
  return _mm_cvtss_f32(_mm_min_ss(m, _mm_shuffle_ps(m, m, 0xb1)));
}

IVF_AVX2 static inline float hmax8(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_shuffle_ps(m, m, 0x4e));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 0xb1)));
}

/* the 16 entries of table i: t (+ add) */
IVF_AVX2 static inline void pq4_t16(const float *t, const float *add, size_t i, __m256 *v0,
                                    __m256 *v1) {
  *v0 = _mm256_loadu_ps(t + i * 16);
  *v1 = _mm256_loadu_ps(t + i * 16 + 8);
  if (add) {
    *v0 = _mm256_add_ps(*v0, _mm256_loadu_ps(add + i * 16));
    *v1 = _mm256_add_ps(*v1, _mm256_loadu_ps(add + i * 16 + 8));
  }
}

/* the 16 entries (v - lo) * a + 0.5 of table i, clamped to 255 (NaN: 255), truncated */
IVF_AVX2 static inline void pq4_q16(const float *t, const float *add, size_t i, float lo,
                                    __m256 a, __m256i *q0, __m256i *q1) {
  const __m256 half = _mm256_set1_ps(0.5f), top = _mm256_set1_ps(255.0f);
  __m256 v0, v1;
  pq4_t16(t, add, i, &v0, &v1);
  __m256 l = _mm256_set1_ps(lo);
  v0 = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v0, l), a), half);
  v1 = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v1, l), a), half);
  *q0 = _mm256_cvttps_epi32(_mm256_min_ps(v0, top)); /* min_ps(NaN, 255) = 255, as the scalar */
  *q1 = _mm256_cvttps_epi32(_mm256_min_ps(v1, top));
}

/* sc_pq4_quant with the same float operations: minima and spans (exact in any order), the
 * bias summed table by table, then each group of two tables packed to 32 bytes */
IVF_AVX2 static void av_pq4_quant(const float *t, const float *add, size_t m, ivf_pq4_lut *out) {
  float span = 0.0f, bias = 0.0f;
  size_t i = 0;
  for (; i + 2 <= m; i += 2) { /* two tables share the horizontal reductions */
    __m256 a0, a1, b0, b1;
    pq4_t16(t, add, i, &a0, &a1);
    pq4_t16(t, add, i + 1, &b0, &b1);
    __m256 mn = _mm256_min_ps(a0, a1), nb = _mm256_min_ps(b0, b1);
    __m256 mx = _mm256_max_ps(a0, a1), xb = _mm256_max_ps(b0, b1);
    /* lane 0: table i, lane 1: table i + 1 */
    __m256 lo = _mm256_min_ps(_mm256_permute2f128_ps(mn, nb, 0x20),
                              _mm256_permute2f128_ps(mn, nb, 0x31));
    __m256 hi = _mm256_max_ps(_mm256_permute2f128_ps(mx, xb, 0x20),
                              _mm256_permute2f128_ps(mx, xb, 0x31));
    lo = _mm256_min_ps(lo, _mm256_shuffle_ps(lo, lo, 0x4e));
    lo = _mm256_min_ps(lo, _mm256_shuffle_ps(lo, lo, 0xb1));
    hi = _mm256_max_ps(hi, _mm256_shuffle_ps(hi, hi, 0x4e));
    hi = _mm256_max_ps(hi, _mm256_shuffle_ps(hi, hi, 0xb1));
    float l0 = _mm256_cvtss_f32(lo), l1 = _mm_cvtss_f32(_mm256_extractf128_ps(lo, 1));
    float h0 = _mm256_cvtss_f32(hi), h1 = _mm_cvtss_f32(_mm256_extractf128_ps(hi, 1));
    out->lo[i] = l0;
    out->lo[i + 1] = l1;
    bias += l0;
    bias += l1;
    if (h0 - l0 > span) span = h0 - l0;
    if (h1 - l1 > span) span = h1 - l1;
  }
  if (i < m) {
    __m256 v0, v1;
    pq4_t16(t, add, i, &v0, &v1);
    float lo = hmin8(_mm256_min_ps(v0, v1)), hi = hmax8(_mm256_max_ps(v0, v1));
    out->lo[i] = lo;
    bias += lo;
    if (hi - lo > span) span = hi - lo;
  }
  float a = span > 0.0f && isfinite(span) ? 255.0f / span : 0.0f;
  out->bias = bias;
  out->inv_a = a > 0.0f ? 1.0f / a : 0.0f;
  const __m256 av = _mm256_set1_ps(a);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (size_t p = 0; p < (m + 1) / 2; p++) {
    __m256i a0, a1, b0 = _mm256_setzero_si256(), b1 = _mm256_setzero_si256();
    pq4_q16(t, add, 2 * p, out->lo[2 * p], av, &a0, &a1);
    if (2 * p + 1 < m) pq4_q16(t, add, 2 * p + 1, out->lo[2 * p + 1], av, &b0, &b1);
    /* bytes a0-3 a8-11 b0-3 b8-11 | a4-7 a12-15 b4-7 b12-15, then dwords into order */
    __m256i x = _mm256_packus_epi16(_mm256_packus_epi32(a0, a1), _mm256_packus_epi32(b0, b1));
    _mm256_storeu_si256((__m256i *)(void *)(out->q + p * 32),
                        _mm256_permutevar8x32_epi32(x, order));
  }
}

/* distance.c's hsum8: the same association, so the sums below equal its batch kernels' */
IVF_AVX2 static inline float hsum8_idx(__m256 v) {
  __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  __m128 sh = _mm_movehdup_ps(lo);
  lo = _mm_add_ps(lo, sh);
  sh = _mm_movehl_ps(sh, lo);
  return _mm_cvtss_f32(_mm_add_ss(lo, sh));
}

/* Coarse scores of up to 4 queries, 2 rows at a time: each row is loaded once for the group
 * (the centroids of a large index do not fit the caches: one query at a time streams them from
 * memory for every query).  Per pair the operations of distance.c's av_l2sq_batch /
 * av_dot_batch (one 8-lane accumulator, t = q - x, fma, hsum8); the rows past the last multiple
 * of 4, which those kernels score with the single-pair kernel, and dimensions that are not a
 * multiple of 8 go to the AVX2 distance kernels themselves. */
IVF_AVX2 static void av_coarse(const float *q, size_t nq, const float *rows, size_t n, size_t d,
                               int l2, float *out) {
  const idx_kernels *A = idx_kernels_for(IDX_SIMD_AVX2);
  if (d % 8 || nq > IVF_QGROUP) {
    coarse_per_query(A, q, nq, rows, n, d, l2, out);
    return;
  }
  /* missing queries repeat the first (computed, not stored) */
  const float *q0 = q, *q1 = q + (nq > 1 ? d : 0), *q2 = q + (nq > 2 ? 2 * d : 0);
  const float *q3 = q + (nq > 3 ? 3 * d : 0);
  size_t n4 = n / 4 * 4;
  for (size_t r = 0; r < n4; r += 2) {
    const float *x0 = rows + r * d, *x1 = x0 + d;
    __m256 s00 = _mm256_setzero_ps(), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00;
    __m256 s30 = s00, s31 = s00;
#define AV_PAIR(qp, sa, sb)                                                                        \
  do {                                                                                             \
    __m256 qv = _mm256_loadu_ps(qp + i);                                                           \
    if (l2) {                                                                                      \
      __m256 t0 = _mm256_sub_ps(qv, a), t1 = _mm256_sub_ps(qv, b);                                 \
      sa = _mm256_fmadd_ps(t0, t0, sa);                                                            \
      sb = _mm256_fmadd_ps(t1, t1, sb);                                                            \
    } else {                                                                                       \
      sa = _mm256_fmadd_ps(qv, a, sa);                                                             \
      sb = _mm256_fmadd_ps(qv, b, sb);                                                             \
    }                                                                                              \
  } while (0)
    for (size_t i = 0; i < d; i += 8) {
      __m256 a = _mm256_loadu_ps(x0 + i), b = _mm256_loadu_ps(x1 + i);
      AV_PAIR(q0, s00, s01);
      AV_PAIR(q1, s10, s11);
      AV_PAIR(q2, s20, s21);
      AV_PAIR(q3, s30, s31);
    }
#undef AV_PAIR
    __m256 sv[IVF_QGROUP][2] = {{s00, s01}, {s10, s11}, {s20, s21}, {s30, s31}};
    for (size_t j = 0; j < nq; j++) {
      out[j * n + r] = hsum8_idx(sv[j][0]);
      out[j * n + r + 1] = hsum8_idx(sv[j][1]);
    }
  }
  for (size_t r = n4; r < n; r++)
    for (size_t j = 0; j < nq; j++)
      out[j * n + r] = (l2 ? A->l2sq : A->dot)(q + j * d, rows + r * d, d);
}

IVF_AVX2 static float av_bytes_lut(const float *lut, const uint8_t *code, size_t nb) {
  /* 8 bytes per gather: lane k looks up lut[(j+k)*256 + code[j+k]] */
  const __m256i base = _mm256_setr_epi32(0, 256, 512, 768, 1024, 1280, 1536, 1792);
  __m256 acc = _mm256_setzero_ps();
  size_t j = 0;
  for (; j + 8 <= nb; j += 8) {
    __m256i idx = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(code + j)));
    acc = _mm256_add_ps(acc, _mm256_i32gather_ps(lut + j * 256, _mm256_add_epi32(idx, base), 4));
  }
  float s = hsum8(acc);
  for (; j < nb; j++)
    s += lut[j * 256 + code[j]];
  return s;
}

/* 8 lanes each keep their first minimum; the lanes are then merged by (value, index), so the
 * result is exactly the scalar one (the values are computed identically: 2*ip is exact). */
IVF_AVX2 static float av_argmin(const float *cn, const float *ip, size_t n, uint32_t *idx) {
  __m256 bv = _mm256_set1_ps(INFINITY);
  __m256i bi = _mm256_setzero_si256(), ci = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i step = _mm256_set1_epi32(8);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 p = _mm256_loadu_ps(ip + i);
    __m256 v = _mm256_sub_ps(_mm256_loadu_ps(cn + i), _mm256_add_ps(p, p));
    __m256 lt = _mm256_cmp_ps(v, bv, _CMP_LT_OQ);
    bv = _mm256_blendv_ps(bv, v, lt);
    bi = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(bi), _mm256_castsi256_ps(ci), lt));
    ci = _mm256_add_epi32(ci, step);
  }
  float lv[8];
  uint32_t li[8];
  _mm256_storeu_ps(lv, bv);
  _mm256_storeu_si256((__m256i *)(void *)li, bi);
  return argmin_finish(lv, li, 8, cn, ip, i, n, idx);
}

static const ivf_kern k_avx2 = {"avx2",       av_sq8_l2,  av_u8_dot,    av_pq_block,
                                av_pq4_block, av_pq4_lut, av_pq4_quant, av_coarse,
                                av_bytes_lut, av_argmin};

/* ----------------------------------------------------------------- AVX-512 */

/* SQ8 and argmin 16 lanes wide; tails are masked loads (masked-off bytes are not read). */
#define IVF_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))

IVF_AVX512 static inline __mmask16 x5_tail(size_t n) { /* the low n (< 16) lanes */
  return (__mmask16)((1u << n) - 1u);
}

IVF_AVX512 static inline __m512 x5_u8x16(const uint8_t *c) {
  return _mm512_cvtepi32_ps(
      _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)c)));
}

IVF_AVX512 static inline __m512 x5_u8x16_mask(__mmask16 m, const uint8_t *c) {
  return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, c)));
}

IVF_AVX512 static float x5_sq8_l2(const float *a, const float *s, const uint8_t *c, size_t d) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  size_t j = 0;
  for (; j + 32 <= d; j += 32) {
    __m512 t0 = _mm512_fnmadd_ps(_mm512_loadu_ps(s + j), x5_u8x16(c + j), _mm512_loadu_ps(a + j));
    __m512 t1 = _mm512_fnmadd_ps(_mm512_loadu_ps(s + j + 16), x5_u8x16(c + j + 16),
                                 _mm512_loadu_ps(a + j + 16));
    acc0 = _mm512_fmadd_ps(t0, t0, acc0);
    acc1 = _mm512_fmadd_ps(t1, t1, acc1);
  }
  for (; j + 16 <= d; j += 16) {
    __m512 t0 = _mm512_fnmadd_ps(_mm512_loadu_ps(s + j), x5_u8x16(c + j), _mm512_loadu_ps(a + j));
    acc0 = _mm512_fmadd_ps(t0, t0, acc0);
  }
  if (j < d) {
    __mmask16 m = x5_tail(d - j);
    __m512 t1 = _mm512_fnmadd_ps(_mm512_maskz_loadu_ps(m, s + j), x5_u8x16_mask(m, c + j),
                                 _mm512_maskz_loadu_ps(m, a + j));
    acc1 = _mm512_fmadd_ps(t1, t1, acc1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

IVF_AVX512 static float x5_u8_dot(const float *w, const uint8_t *c, size_t d) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  size_t j = 0;
  for (; j + 32 <= d; j += 32) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + j), x5_u8x16(c + j), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + j + 16), x5_u8x16(c + j + 16), acc1);
  }
  for (; j + 16 <= d; j += 16)
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + j), x5_u8x16(c + j), acc0);
  if (j < d) {
    __mmask16 m = x5_tail(d - j);
    acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w + j), x5_u8x16_mask(m, c + j), acc1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

/* As av_argmin, 16 lanes: exactly the scalar result (same values, first index on ties). */
IVF_AVX512 static float x5_argmin(const float *cn, const float *ip, size_t n, uint32_t *idx) {
  __m512 bv = _mm512_set1_ps(INFINITY);
  __m512i bi = _mm512_setzero_si512();
  __m512i ci = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i step = _mm512_set1_epi32(16);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 p = _mm512_loadu_ps(ip + i);
    __m512 v = _mm512_sub_ps(_mm512_loadu_ps(cn + i), _mm512_add_ps(p, p));
    __mmask16 lt = _mm512_cmp_ps_mask(v, bv, _CMP_LT_OQ);
    bv = _mm512_mask_blend_ps(lt, bv, v);
    bi = _mm512_mask_blend_epi32(lt, bi, ci);
    ci = _mm512_add_epi32(ci, step);
  }
  float lv[16];
  uint32_t li[16];
  _mm512_storeu_ps(lv, bv);
  _mm512_storeu_si512((void *)li, bi);
  return argmin_finish(lv, li, 16, cn, ip, i, n, idx);
}

/* The coarse scores are the AVX2 group kernel's (four queries per pass over the centroids, the
 * pass that is bound by memory): on an AVX-512 CPU they equal idx's AVX2 kernels, not its
 * AVX-512 ones, at rounding level.
 * PQ ADC and RaBitQ 1-bit are table gathers: 16-lane gathers measured no faster than the AVX2
 * 8-lane ones on an AVX-512 CPU (AMD EPYC, Zen 4: pq_block 0.97-1.0x for m = 8..96), and a
 * masked 16-lane tail made short RaBitQ codes slower (nb = 24: 0.7-0.85x), so the AVX-512 table
 * keeps the AVX2 gather kernels (a CPU with AVX-512 F/BW/DQ/VL here also has AVX2 + FMA).
 * The 4-bit PQ kernels are the AVX2 ones too: a 64-byte vpshufb variant (two groups per
 * instruction) was not written because no AVX-512 machine was at hand to test it against the
 * scalar reference. */
static const ivf_kern k_avx512 = {"avx512",     x5_sq8_l2,  x5_u8_dot,    av_pq_block,
                                  av_pq4_block, av_pq4_lut, av_pq4_quant, av_coarse,
                                  av_bytes_lut, x5_argmin};
#endif

const ivf_kern *ivf_kern_scalar(void) { return &k_scalar; }

/* the table of one variant, without the CPU check */
static const ivf_kern *kern_of(idx_simd simd) {
  switch (simd) {
  case IDX_SIMD_SCALAR: return &k_scalar;
#if IVF_HAVE_X86
  case IDX_SIMD_AVX2: return &k_avx2;
  case IDX_SIMD_AVX512: return &k_avx512;
#else
  default: break;
#endif
  }
  return NULL;
}

/* ivf_kern_for(): see ivf_internal.h. */
const ivf_kern *ivf_kern_for(idx_simd simd) {
  return idx_kernels_for(simd) ? kern_of(simd) : NULL; /* the same CPU check as distance.c */
}

/* ivf_kern_active(): the variant distance.c runs (same CPU check, same VFORGE_SIMD override). */
const ivf_kern *ivf_kern_active(void) {
  const ivf_kern *k = kern_of(idx_kernels_active()->simd);
  return k ? k : &k_scalar;
}
