/* VFORGE_SIMD=scalar|avx2|avx512 forces a kernel variant.  The choice is made once per process,
 * so each case runs in a forked child that sets the variable before its first kernel call (the
 * parent never calls idx_kernels_active()), and reports through its exit status. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "index/ivf_internal.h"
#include "vf_test.h"
#include "vforge/index.h"

/* the variant the child with VFORGE_SIMD=env (NULL: unset) runs, as its idx_simd, or -1 when
 * the child failed (its checks print why) */
static int child_variant(const char *env) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (env)
      setenv("VFORGE_SIMD", env, 1);
    else
      unsetenv("VFORGE_SIMD");
    const idx_kernels *k = idx_kernels_active();
    int bad = 0;
    if (!k || idx_kernels_active() != k) bad = 1;                    /* chosen once */
    if (!bad && ivf_kern_active() != ivf_kern_for(k->simd)) bad = 2; /* IVF follows */
    if (!bad && strcmp(ivf_kern_active()->name, k->name) != 0) bad = 3;
    float a[3] = {1, 2, 3};
    if (!bad && idx_dot(a, a, 3) != 14.0f) bad = 4;
    if (bad) {
      fprintf(stderr, "VFORGE_SIMD=%s: check %d failed\n", env ? env : "(unset)", bad);
      _exit(100);
    }
    _exit((int)k->simd);
  }
  int st = 0;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) >= 100) return -1;
  return WEXITSTATUS(st);
}

/* the best variant at or below `want` that this CPU runs */
static int best_at_most(idx_simd want) {
  for (int s = (int)want; s > IDX_SIMD_SCALAR; s--)
    if (idx_kernels_for((idx_simd)s)) return s;
  return IDX_SIMD_SCALAR;
}

VF_TEST(env_forces_scalar) {
  CHECK_EQ_INT(child_variant("scalar"), IDX_SIMD_SCALAR);
}

VF_TEST(env_forces_avx2) {
  CHECK_EQ_INT(child_variant("avx2"), best_at_most(IDX_SIMD_AVX2));
  if (!idx_kernels_for(IDX_SIMD_AVX2))
    vf_test_skip("this CPU has no AVX2+FMA (fell back to scalar)");
}

VF_TEST(env_forces_avx512) {
  CHECK_EQ_INT(child_variant("avx512"), best_at_most(IDX_SIMD_AVX512));
  if (!idx_kernels_for(IDX_SIMD_AVX512)) vf_test_skip("this CPU has no AVX-512 (fell back)");
}

VF_TEST(unset_or_unknown_picks_the_best) {
  int best = best_at_most(IDX_SIMD_AVX512);
  CHECK_EQ_INT(child_variant(NULL), best);
  CHECK_EQ_INT(child_variant(""), best);
  CHECK_EQ_INT(child_variant("sse9"), best);
}
