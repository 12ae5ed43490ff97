/*
 * fake_blas.c — stand-in BLAS libraries for tests/util/test_blas.sh (test code only; never part
 * of libvforge).  The test builds it three ways with `cc -shared`:
 *   (plain)             a CBLAS that is not OpenBLAS: cblas_sgemm only (row-major A . B^T, the
 *                       one form vforge calls; any other form fills C with NaN)
 *   -DFAKE_WRONG        the same, but C[0][0] is off by one: a BLAS whose answers are wrong
 *   -DFAKE_GENERIC      also openblas_get_corename() = "Prescott" and the thread-count calls,
 *                       without OpenBLAS's DYNAMIC_ARCH entry points: a generic core that
 *                       cannot be switched
 *   -DFAKE_DYNAMIC      the same with the DYNAMIC_ARCH entry points (gotoblas_dynamic_quit /
 *                       _init, gotoblas_<CORE>): its "detection" always says Prescott, and
 *                       OPENBLAS_CORETYPE picks another core, as in OpenBLAS.  Like OpenBLAS it
 *                       takes its thread count from OPENBLAS_NUM_THREADS when loaded; a
 *                       re-selection while it has more than one thread (server threads that
 *                       run gotoblas_dynamic_init themselves, the race that crashed CI) aborts
 * FAKE_BLAS_COUNT=FILE: at exit the number of cblas_sgemm calls is written to FILE, so the test
 * sees whether vforge computed with this library or only ran its self-check on it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static long g_calls;
static int g_threads = 4;

static void write_count(void) {
  const char *f = getenv("FAKE_BLAS_COUNT");
  if (!f) return;
  FILE *fp = fopen(f, "w");
  if (!fp) return;
  fprintf(fp, "%ld\n", g_calls);
  fclose(fp);
}

#ifdef FAKE_DYNAMIC
static const char *const g_cores[] = {"Prescott", "Haswell", "Zen", "SkylakeX", "Cooperlake",
                                      "SapphireRapids"};
static const char *g_core;
#endif

__attribute__((constructor)) static void fake_init(void) {
  atexit(write_count);
#ifdef FAKE_DYNAMIC
  const char *t = getenv("OPENBLAS_NUM_THREADS");
  g_threads = t && atoi(t) >= 1 ? atoi(t) : 4;
  g_core = g_cores[0];
  const char *c = getenv("OPENBLAS_CORETYPE");
  for (size_t i = 0; c && i < sizeof g_cores / sizeof g_cores[0]; i++)
    if (strcasecmp(c, g_cores[i]) == 0) g_core = g_cores[i];
#endif
}

void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc) {
  __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED);
  int ok = order == 101 && ta == 111 && tb == 112;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int p = 0; p < k; p++)
        s += (double)a[(size_t)i * (size_t)lda + (size_t)p] *
             (double)b[(size_t)j * (size_t)ldb + (size_t)p];
      float *o = &c[(size_t)i * (size_t)ldc + (size_t)j];
      *o = ok ? (float)(alpha * s + (beta != 0.0f ? beta * *o : 0.0)) : NAN;
    }
#ifdef FAKE_WRONG
  if (m > 0 && n > 0) c[0] += 1.0f;
#endif
}

#ifdef FAKE_DYNAMIC
#define FAKE_GENERIC
int gotoblas_PRESCOTT, gotoblas_HASWELL, gotoblas_ZEN, gotoblas_SKYLAKEX, gotoblas_COOPERLAKE,
    gotoblas_SAPPHIRERAPIDS;
static void no_threads_running(const char *what) {
  if (g_threads == 1) return;
  fprintf(stderr, "fake BLAS: %s with %d threads\n", what, g_threads);
  abort();
}
void gotoblas_dynamic_quit(void) {
  no_threads_running("gotoblas_dynamic_quit");
  g_core = NULL;
}
void gotoblas_dynamic_init(void) {
  no_threads_running("gotoblas_dynamic_init");
  if (g_core) return;
  g_core = g_cores[0];
  const char *c = getenv("OPENBLAS_CORETYPE");
  for (size_t i = 0; c && i < sizeof g_cores / sizeof g_cores[0]; i++)
    if (strcasecmp(c, g_cores[i]) == 0) g_core = g_cores[i];
}
char *openblas_get_corename(void) {
  return (char *)(g_core ? g_core : "unknown");
}
#elif defined(FAKE_GENERIC)
char *openblas_get_corename(void) {
  return "Prescott";
}
#endif
#ifdef FAKE_GENERIC
char *openblas_get_config(void) {
  return "fake OpenBLAS (tests/util/fake_blas.c) Prescott";
}
int openblas_get_num_threads(void) {
  return g_threads;
}
void openblas_set_num_threads(int n) {
  g_threads = n < 1 ? 1 : n;
}
#endif
