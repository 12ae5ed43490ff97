/* VFORGE_SIMD=scalar forces the reference kernels (the choice is made once per process, so
 * this lives in its own executable and sets the variable before the first kernel call). */
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/index.h"

VF_TEST(env_forces_scalar) {
  setenv("VFORGE_SIMD", "scalar", 1);
  const idx_kernels *k = idx_kernels_active();
  CHECK(k != NULL);
  CHECK_EQ_INT(k->simd, IDX_SIMD_SCALAR);
  CHECK_EQ_STR(k->name, "scalar");
  float a[3] = {1, 2, 3};
  CHECK(idx_dot(a, a, 3) == 14.0f);
  CHECK(idx_kernels_active() == k); /* chosen once */
}
