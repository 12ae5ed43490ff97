/* Distance kernels: every SIMD variant this CPU runs (scalar, AVX2, AVX-512) against the scalar
 * reference and against a double-precision definition, on random data of every dimension
 * 1..1031 (unaligned pointers), rows that end at an unreadable page (the masked tails read
 * nothing past the end), the IVF list-scan kernels of every variant against their scalar
 * reference, plus the score conventions of DESIGN.md (larger = nearer). */
#include <float.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "index/ivf_internal.h"
#include "vf_test.h"
#include "vforge/index.h"

#define SIMD_LAST IDX_SIMD_AVX512

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

/* every variant the CPU runs; each reports its own enum value and name */
VF_TEST(every_variant_matches_reference) {
  static const char *const names[] = {"scalar", "avx2", "avx512"};
  const idx_kernels *best = NULL;
  int ran = 0;
  for (int s = IDX_SIMD_AVX2; s <= SIMD_LAST; s++) {
    const idx_kernels *k = idx_kernels_for((idx_simd)s);
    if (!k) continue;
    CHECK_EQ_INT(k->simd, s);
    CHECK_EQ_STR(k->name, names[s]);
    idx_simd parsed;
    CHECK(idx_simd_parse(names[s], &parsed) && parsed == (idx_simd)s);
    check_variant(k);
    best = k;
    ran++;
  }
  idx_simd parsed;
  CHECK(!idx_simd_parse("avx1024", &parsed));
  CHECK(idx_kernels_for((idx_simd)(SIMD_LAST + 1)) == NULL);
  /* the active variant is the best this CPU runs unless VFORGE_SIMD says otherwise */
  const char *env = getenv("VFORGE_SIMD");
  if (!env || !*env)
    CHECK(idx_kernels_active() == (best ? best : idx_kernels_for(IDX_SIMD_SCALAR)));
  if (!ran) vf_test_skip("this CPU runs no SIMD variant (only the scalar reference was checked)");
}

/* The AVX-512 variant is offered exactly when the CPU has the features it is compiled for. */
VF_TEST(avx512_offered_iff_cpu_has_it) {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  __builtin_cpu_init();
  bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  CHECK((idx_kernels_for(IDX_SIMD_AVX512) != NULL) == has);
  CHECK((ivf_kern_for(IDX_SIMD_AVX512) != NULL) == has);
#else
  CHECK(idx_kernels_for(IDX_SIMD_AVX512) == NULL);
  CHECK(idx_kernels_for(IDX_SIMD_AVX2) == NULL);
#endif
}

/* Rows that end exactly at an unreadable page: no kernel reads past the last element (the
 * masked AVX-512 tails, the scalar tails of AVX2).  Values are small integers, so every
 * variant must give the exact result. */
VF_TEST(rows_ending_at_unreadable_page) {
  long pg = sysconf(_SC_PAGESIZE);
  CHECK(pg > 0);
  if (pg <= 0) return;
  enum { NP = 8 }; /* NP - 1 readable pages, then one PROT_NONE page */
  size_t psz = (size_t)pg, room = (NP - 1) * psz;
  uint8_t *map = mmap(NULL, NP * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(map != MAP_FAILED);
  if (map == MAP_FAILED) return;
  CHECK(mprotect(map + room, psz, PROT_NONE) == 0);
  float *end = (float *)(void *)(map + room);
  float *front = (float *)(void *)map; /* scratch far from the end */
  for (int s = IDX_SIMD_SCALAR; s <= SIMD_LAST; s++) {
    const idx_kernels *k = idx_kernels_for((idx_simd)s);
    const ivf_kern *K = ivf_kern_for((idx_simd)s);
    if (!k) continue;
    CHECK(K != NULL);
    if (!K) continue;
    for (size_t d = 1; d <= 70; d++) {
      enum { N = 5 };
      float *rows = end - N * d, *q = rows - d - 1; /* q unaligned by one float */
      for (size_t i = 0; i < d; i++)
        q[i] = (float)((int)(i % 7) - 3);
      for (size_t i = 0; i < N * d; i++)
        rows[i] = (float)((int)(i % 5) - 2);
      float out[N];
      k->dot_batch(q, rows, N, d, out);
      for (size_t r = 0; r < N; r++) {
        float want = 0;
        for (size_t i = 0; i < d; i++)
          want += q[i] * rows[r * d + i];
        if (out[r] != want || k->dot(q, rows + r * d, d) != want)
          vf_test_fail(__FILE__, __LINE__, "%s dot d=%zu row %zu: %g, want %g", k->name, d, r,
                       out[r], want);
      }
      k->l2sq_batch(q, rows, N, d, out);
      for (size_t r = 0; r < N; r++) {
        float want = 0;
        for (size_t i = 0; i < d; i++)
          want += (q[i] - rows[r * d + i]) * (q[i] - rows[r * d + i]);
        if (out[r] != want || k->l2sq(rows + r * d, q, d) != want)
          vf_test_fail(__FILE__, __LINE__, "%s l2sq d=%zu row %zu: %g, want %g", k->name, d, r,
                       out[r], want);
      }
      k->l1_batch(q, rows, N, d, out);
      for (size_t r = 0; r < N; r++) {
        float want = 0;
        for (size_t i = 0; i < d; i++)
          want += fabsf(q[i] - rows[r * d + i]);
        if (out[r] != want || k->l1(rows + r * d, q, d) != want)
          vf_test_fail(__FILE__, __LINE__, "%s l1 d=%zu row %zu: %g, want %g", k->name, d, r,
                       out[r], want);
      }
      /* IVF, two layouts: (a) the u8 codes end at the page end, the floats in front;
       * (b) the floats end at the page end, the codes in front.  Small integers: exact. */
      for (int lay = 0; lay < 2; lay++) {
        uint8_t *code = lay == 0 ? map + room - d : map + 1;
        float *w = lay == 0 ? front + 1 : end - 2 * d, *st = lay == 0 ? front + 2 + d : end - d;
        for (size_t i = 0; i < d; i++) {
          w[i] = (float)((int)(i % 9) - 4);
          st[i] = (float)(i % 3);
          code[i] = (uint8_t)((i * 37) % 11);
        }
        float wd = 0, wl = 0;
        for (size_t i = 0; i < d; i++) {
          wd += w[i] * (float)code[i];
          float t = w[i] - st[i] * (float)code[i];
          wl += t * t;
        }
        float gd = K->u8_dot(w, code, d), gl = K->sq8_l2(w, st, code, d);
        if (gd != wd || gl != wl)
          vf_test_fail(__FILE__, __LINE__, "%s layout %d u8_dot/sq8_l2 d=%zu: %g/%g, want %g/%g",
                       K->name, lay, d, gd, gl, wd, wl);
      }
      if (d <= 20) { /* RaBitQ bytes_lut: the d code bytes end at the page end */
        float *lut = front;
        for (size_t i = 0; i < d * 256; i++)
          lut[i] = (float)(i % 11);
        const uint8_t *c2 = map + room - d;
        float want = 0;
        for (size_t j = 0; j < d; j++)
          want += lut[j * 256 + c2[j]];
        float got = K->bytes_lut(lut, c2, d);
        if (got != want)
          vf_test_fail(__FILE__, __LINE__, "%s bytes_lut nb=%zu: %g, want %g", K->name, d, got,
                       want);
      }
    }
  }
  munmap(map, NP * psz);
}

/* The IVF list-scan kernels of every variant agree with the scalar reference (rounding only;
 * argmin exactly), on odd sizes and unaligned operands. */
static uint64_t irs = 12345;
static float iu(void) { /* [0, 1) */
  irs ^= irs << 13;
  irs ^= irs >> 7;
  irs ^= irs << 17;
  return (float)((double)(irs >> 11) / (double)(1ull << 53));
}

VF_TEST(ivf_kernels_every_variant_match_scalar) {
  const ivf_kern *r = ivf_kern_scalar();
  CHECK(ivf_kern_for(IDX_SIMD_SCALAR) == r);
  enum { DM = 131, LM = 41 };
  float wb[DM + 1], sb[DM + 1], lut[LM * 256], o1[32], o2[32], cnb[300], ipb[300];
  uint8_t cb[DM + 1], codes[LM * 32];
  for (int i = 0; i <= DM; i++) {
    wb[i] = iu() * 2 - 1;
    sb[i] = iu() * 0.1f;
    cb[i] = (uint8_t)(iu() * 256);
  }
  for (int i = 0; i < LM * 256; i++)
    lut[i] = iu();
  for (int i = 0; i < LM * 32; i++)
    codes[i] = (uint8_t)(iu() * 256);
  const float *w = wb + 1, *st = sb + 1; /* unaligned */
  const uint8_t *c = cb + 1;
  int checked = 0;
  for (int s = IDX_SIMD_AVX2; s <= SIMD_LAST; s++) {
    const ivf_kern *a = ivf_kern_for((idx_simd)s);
    CHECK((a != NULL) == (idx_kernels_for((idx_simd)s) != NULL));
    if (!a) continue;
    checked++;
    for (size_t d = 1; d <= 130; d++) {
      float x1 = a->sq8_l2(w, st, c, d), x2 = r->sq8_l2(w, st, c, d);
      double mag = 0;
      for (size_t j = 0; j < d; j++)
        mag += fabs((double)w[j]) * fabs((double)st[j] * c[j]);
      if (fabsf(x1 - x2) > 2 * (float)bound(d, x2 + mag))
        vf_test_fail(__FILE__, __LINE__, "%s sq8_l2 d=%zu: %g vs %g", a->name, d, x1, x2);
      x1 = a->u8_dot(w, c, d);
      x2 = r->u8_dot(w, c, d);
      mag = 0;
      for (size_t j = 0; j < d; j++)
        mag += fabs((double)w[j] * c[j]);
      if (fabsf(x1 - x2) > 2 * (float)bound(d, mag))
        vf_test_fail(__FILE__, __LINE__, "%s u8_dot d=%zu: %g vs %g", a->name, d, x1, x2);
      if (d <= LM) {
        x1 = a->bytes_lut(lut, c, d);
        x2 = r->bytes_lut(lut, c, d);
        if (fabsf(x1 - x2) > 2 * (float)bound(d, x2))
          vf_test_fail(__FILE__, __LINE__, "%s bytes_lut nb=%zu: %g vs %g", a->name, d, x1, x2);
        a->pq_block(lut, codes, d, o1);
        r->pq_block(lut, codes, d, o2);
        for (int j = 0; j < 32; j++)
          if (fabsf(o1[j] - o2[j]) > 2 * (float)bound(d, o2[j]))
            vf_test_fail(__FILE__, __LINE__, "%s pq_block m=%zu row %d: %g vs %g", a->name, d, j,
                         o1[j], o2[j]);
      }
    }
    /* argmin: identical index and value, ties to the first index, NaN never wins */
    for (int rep = 0; rep < 200; rep++) {
      size_t n = 1 + (size_t)(iu() * 299);
      for (size_t i = 0; i < n; i++) {
        cnb[i] = (float)(int)(iu() * 4); /* many ties */
        ipb[i] = (float)(int)(iu() * 3);
      }
      if (rep % 3 == 0) cnb[(size_t)(iu() * (float)n)] = NAN;
      uint32_t i1 = 7, i2 = 9;
      float v1 = a->argmin(cnb, ipb, n, &i1), v2 = r->argmin(cnb, ipb, n, &i2);
      if (i1 != i2 || v1 != v2)
        vf_test_fail(__FILE__, __LINE__, "%s argmin n=%zu: %u/%g vs %u/%g", a->name, n, i1, v1, i2,
                     v2);
    }
  }
  if (!checked) vf_test_skip("this CPU runs no SIMD variant of the IVF kernels");
}

VF_TEST(dimension_zero_is_zero) {
  float a[1] = {1}, b[1] = {2};
  for (int s = 0; s <= SIMD_LAST; s++) {
    const idx_kernels *k = idx_kernels_for((idx_simd)s);
    if (!k) continue;
    CHECK(k->dot(a, b, 0) == 0.0f);
    CHECK(k->l2sq(a, b, 0) == 0.0f);
    CHECK(k->l1(a, b, 0) == 0.0f);
    const ivf_kern *K = ivf_kern_for((idx_simd)s);
    uint8_t c[1] = {3};
    CHECK(K != NULL);
    if (!K) continue;
    CHECK(K->u8_dot(a, c, 0) == 0.0f);
    CHECK(K->sq8_l2(a, b, c, 0) == 0.0f);
    uint32_t ix = 5;
    CHECK(K->argmin(a, b, 0, &ix) == INFINITY && ix == 0);
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
