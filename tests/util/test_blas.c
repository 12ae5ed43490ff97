/* The BLAS loader (util/blas.c) and vforge's own sgemm (util/blas_own.c): the core-name table
 * and the CPUID -> OpenBLAS core choice, the own kernels against a double-precision reference
 * on shapes that hit every remainder path, the self-check catching wrong answers and writes
 * beyond n, lazy loading (this binary links no BLAS: nothing is loaded before the first use),
 * the environment left as it was, the loaded sgemm against the reference, and the thread count
 * under vf_blas_single_begin/end and vf_set_threads (lowered, never raised).  The CLI side
 * (which commands load it, the generic-core switch, the fallbacks) is tests/util/test_blas.sh. */
#include <stdlib.h>

#include "util/blas_internal.h"
#include "vf_test.h"

/* first: before any test below loads the BLAS */
VF_TEST(test_not_loaded_before_use) {
  CHECK(!vf_blas_loaded());
  vf_set_threads(1); /* capping a BLAS that is not loaded must not load it */
  vf_set_threads(0);
  CHECK(!vf_blas_loaded());
  CHECK_EQ_INT(vf_blas_single_begin(), 0);
  vf_blas_single_end(4);
  CHECK(!vf_blas_loaded());
}

VF_TEST(test_core_table) {
  CHECK_EQ_INT(blas_core_isa("Prescott"), BLAS_ISA_SSE);
  CHECK_EQ_INT(blas_core_isa("prescott"), BLAS_ISA_SSE);
  CHECK_EQ_INT(blas_core_isa("Nehalem"), BLAS_ISA_SSE);
  CHECK_EQ_INT(blas_core_isa("Core2"), BLAS_ISA_SSE);
  CHECK_EQ_INT(blas_core_isa("Atom"), BLAS_ISA_SSE);
  CHECK_EQ_INT(blas_core_isa("Sandybridge"), BLAS_ISA_AVX);
  CHECK_EQ_INT(blas_core_isa("Haswell"), BLAS_ISA_AVX2);
  CHECK_EQ_INT(blas_core_isa("ZEN"), BLAS_ISA_AVX2);
  CHECK_EQ_INT(blas_core_isa("SkylakeX"), BLAS_ISA_AVX512);
  CHECK_EQ_INT(blas_core_isa("Cooperlake"), BLAS_ISA_AVX512);
  CHECK_EQ_INT(blas_core_isa("NeoverseN1"), BLAS_ISA_UNKNOWN); /* not ours to judge */
  CHECK_EQ_INT(blas_core_isa(NULL), BLAS_ISA_UNKNOWN);
  CHECK_EQ_STR(blas_isa_name(BLAS_ISA_AVX512), "avx512");
}

static void check_targets(blas_cpu cpu, const char *const *want, size_t nwant) {
  const char *got[8];
  size_t n = blas_core_targets(&cpu, got, 8);
  CHECK_EQ_INT(n, nwant);
  for (size_t i = 0; i < n && i < nwant; i++)
    CHECK_EQ_STR(got[i], want[i]);
}

VF_TEST(test_core_targets) {
  /* Sapphire/Emerald Rapids (the Debian 0.3.21 "Prescott" case): AVX-512 + BF16 + AMX */
  static const char *const spr[] = {"SapphireRapids", "Cooperlake", "SkylakeX", "Haswell"};
  check_targets((blas_cpu){.isa = BLAS_ISA_AVX512, .bf16 = true, .amx = true}, spr, 4);
  static const char *const skx[] = {"SkylakeX", "Haswell"};
  check_targets((blas_cpu){.isa = BLAS_ISA_AVX512}, skx, 2);
  static const char *const zen4[] = {"Cooperlake", "SkylakeX", "Zen", "Haswell"};
  check_targets((blas_cpu){.isa = BLAS_ISA_AVX512, .amd = true, .bf16 = true}, zen4, 4);
  static const char *const zen[] = {"Zen", "Haswell"};
  check_targets((blas_cpu){.isa = BLAS_ISA_AVX2, .amd = true}, zen, 2);
  static const char *const hsw[] = {"Haswell"};
  check_targets((blas_cpu){.isa = BLAS_ISA_AVX2}, hsw, 1);
  check_targets((blas_cpu){.isa = BLAS_ISA_AVX}, NULL, 0); /* nothing to switch to */
  blas_cpu here;
  blas_cpu_detect(&here);
  CHECK(here.isa >= BLAS_ISA_SSE);
  CHECK(vf_cpu_model()[0] != '\0');
}

static uint32_t g_seed = 12345;
static float rnd(void) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (float)((g_seed >> 9) & 0xffff) / 32768.0f - 1.0f;
}

/* C = A . B^T of a random product with padded leading dimensions against a double reference;
 * the padding of C must stay as it was */
static void check_product(void (*nt)(void *, size_t, size_t, size_t, const float *, size_t,
                                     const float *, size_t, float *, size_t),
                          void *ctx, size_t m, size_t n, size_t k) {
  size_t lda = k + 3, ldb = k + 1, ldc = n + 2;
  float *a = malloc(sizeof(float) * m * lda), *b = malloc(sizeof(float) * n * ldb);
  float *c = malloc(sizeof(float) * m * ldc);
  for (size_t i = 0; i < m * lda; i++)
    a[i] = rnd();
  for (size_t i = 0; i < n * ldb; i++)
    b[i] = rnd();
  for (size_t i = 0; i < m * ldc; i++)
    c[i] = -7.0f;
  nt(ctx, m, n, k, a, lda, b, ldb, c, ldc);
  int bad = 0;
  for (size_t i = 0; i < m && !bad; i++)
    for (size_t j = 0; j < ldc && !bad; j++) {
      float got = c[i * ldc + j];
      if (j >= n) {
        if (got != -7.0f) {
          vf_test_fail(__FILE__, __LINE__, "%zux%zux%zu: padding C[%zu][%zu] written", m, n, k,
                       i, j);
          bad = 1;
        }
        continue;
      }
      double ref = 0, mag = 0;
      for (size_t p = 0; p < k; p++) {
        ref += (double)a[i * lda + p] * b[j * ldb + p];
        mag += fabs((double)a[i * lda + p] * b[j * ldb + p]);
      }
      if (fabs(got - ref) > (double)(k + 2) * 0x1p-23 * mag + 1e-30) {
        vf_test_fail(__FILE__, __LINE__, "%zux%zux%zu: C[%zu][%zu] = %.9g, want %.9g", m, n, k,
                     i, j, (double)got, ref);
        bad = 1;
      }
    }
  free(a);
  free(b);
  free(c);
}

static void own_call(void *ctx, size_t m, size_t n, size_t k, const float *a, size_t lda,
                     const float *b, size_t ldb, float *c, size_t ldc) {
  blas_own_sgemm_nt(*(blas_own_variant *)ctx, m, n, k, a, lda, b, ldb, c, ldc);
}

static void api_call(void *ctx, size_t m, size_t n, size_t k, const float *a, size_t lda,
                     const float *b, size_t ldb, float *c, size_t ldc) {
  (void)ctx;
  vf_sgemm_nt(m, n, k, a, lda, b, ldb, c, ldc);
}

VF_TEST(test_own_kernels) {
  static const size_t ms[] = {1, 3, 4, 5, 9, 33}, ns[] = {1, 2, 3, 4, 7, 97, 200};
  static const size_t ks[] = {1, 7, 8, 9, 17, 511, 512, 513, 1100};
  blas_own_variant vs[2] = {BLAS_OWN_SCALAR, blas_own_best()};
  for (int v = 0; v < 2; v++)
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
      for (size_t j = 0; j < sizeof ns / sizeof *ns; j++)
        for (size_t p = 0; p < sizeof ks / sizeof *ks; p++)
          if (ms[i] * ns[j] * ks[p] <= 2000000)
            check_product(own_call, &vs[v], ms[i], ns[j], ks[p]);
  float c[6] = {1, 2, 3, 4, 5, 6};
  blas_own_sgemm_nt(blas_own_best(), 2, 3, 0, NULL, 0, NULL, 0, c, 3); /* k = 0: zeros */
  for (int i = 0; i < 6; i++)
    CHECK(c[i] == 0.0f);
  CHECK(strncmp(blas_own_name(blas_own_best()), "builtin-", 8) == 0);
}

static void wrong_call(void *ctx, size_t m, size_t n, size_t k, const float *a, size_t lda,
                       const float *b, size_t ldb, float *c, size_t ldc) {
  own_call(ctx, m, n, k, a, lda, b, ldb, c, ldc);
  c[(m - 1) * ldc + n - 1] *= 1.001f; /* 0.1 %: far above a float dot product's error */
}

static void spill_call(void *ctx, size_t m, size_t n, size_t k, const float *a, size_t lda,
                       const float *b, size_t ldb, float *c, size_t ldc) {
  own_call(ctx, m, n, k, a, lda, b, ldb, c, ldc);
  if (ldc > n) c[n] = 0.0f; /* writes the padding of row 0 */
}

VF_TEST(test_self_check) {
  blas_own_variant v = blas_own_best();
  char why[256] = "";
  CHECK(blas_self_check(own_call, &v, why, sizeof why));
  v = BLAS_OWN_SCALAR;
  CHECK(blas_self_check(own_call, &v, why, sizeof why));
  CHECK(!blas_self_check(wrong_call, &v, why, sizeof why));
  CHECK(strstr(why, "expected") != NULL);
  CHECK(!blas_self_check(spill_call, &v, why, sizeof why));
  CHECK(strstr(why, "beyond n") != NULL);
}

VF_TEST(test_loaded_blas) {
  const char *threads_env = getenv("OPENBLAS_NUM_THREADS");
  const char *core_env = getenv("OPENBLAS_CORETYPE");
  vf_error err;
  vf_error_clear(&err);
  vf_status st = vf_blas_require(&err);
  if (st == VF_EIO) {
    vf_test_skip("no BLAS library on this machine");
    return;
  }
  CHECK_OK(st);
  CHECK(vf_blas_loaded());
  /* the loader's environment changes were undone */
  CHECK((getenv("OPENBLAS_NUM_THREADS") != NULL) == (threads_env != NULL));
  CHECK((getenv("OPENBLAS_CORETYPE") != NULL) == (core_env != NULL));
  vf_blas_info bi;
  CHECK_OK(vf_blas_info_get(&bi, &err));
  CHECK(bi.library && bi.library[0]);
  CHECK(bi.core && bi.core[0]);
  CHECK(bi.threads >= 1 && bi.threads <= vf_threads());
  check_product(api_call, NULL, 300, 257, 784);
  check_product(api_call, NULL, 5, 3, 1);
  double g = 0;
  CHECK_OK(vf_blas_measure(1, 64, 64, 64, 0.0, &g, &err));
  CHECK(g > 0);
}

VF_TEST(test_blas_threads) {
  vf_error err;
  if (vf_blas_require(&err) != VF_OK) {
    vf_test_skip("no BLAS library on this machine");
    return;
  }
  vf_blas_info bi;
  CHECK_OK(vf_blas_info_get(&bi, &err));
  int before = bi.threads;
  int saved = vf_blas_single_begin();
  CHECK_OK(vf_blas_info_get(&bi, &err));
  CHECK_EQ_INT(bi.threads, 1);
  vf_blas_single_end(saved);
  CHECK_OK(vf_blas_info_get(&bi, &err));
  CHECK_EQ_INT(bi.threads, before);
  vf_set_threads(1);
  CHECK_OK(vf_blas_info_get(&bi, &err));
  CHECK_EQ_INT(bi.threads, 1); /* capped */
  vf_set_threads(2);
  CHECK_OK(vf_blas_info_get(&bi, &err));
  CHECK_EQ_INT(bi.threads, 1); /* never raised: that would start more server threads */
  vf_set_threads(0);
}
