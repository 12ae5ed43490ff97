/* bench_distance [DIM...] — throughput of the distance kernels, one query against 64 MiB of
 * rows (so the rows come from memory, not cache, as in exact search), for every variant this
 * CPU runs.  Prints one JSON line per (variant, kernel, dim): rows/s and GFLOP/s (2*d flops per
 * row for dot and l2sq, 3*d for l1). */
#include <stdio.h>
#include <stdlib.h>

#include "vforge/index.h"

typedef void (*batch_fn)(const float *q, const float *rows, size_t n, size_t d, float *out);

static double run(batch_fn fn, const float *q, const float *rows, size_t n, size_t d, float *out) {
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = vf_now();
    fn(q, rows, n, d, out);
    double t = vf_now() - t0;
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  size_t dims[16] = {96, 768, 1536};
  int ndims = 3;
  if (argc > 1) {
    ndims = 0;
    for (int i = 1; i < argc && ndims < 16; i++)
      dims[ndims++] = (size_t)strtoul(argv[i], NULL, 10);
  }
  for (int di = 0; di < ndims; di++) {
    size_t d = dims[di];
    if (d == 0) continue;
    size_t n = ((size_t)64 << 20) / (d * sizeof(float));
    float *rows = malloc(n * d * sizeof *rows), *q = malloc(d * sizeof *q),
          *out = malloc(n * sizeof *out);
    if (!rows || !q || !out) return 1;
    for (size_t i = 0; i < n * d; i++)
      rows[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
    for (size_t i = 0; i < d; i++)
      q[i] = (float)i / (float)d;
    for (int s = IDX_SIMD_SCALAR; s <= IDX_SIMD_AVX2; s++) {
      const idx_kernels *k = idx_kernels_for((idx_simd)s);
      if (!k) continue;
      struct {
        const char *name;
        batch_fn fn;
        double flops;
      } ks[3] = {{"dot", k->dot_batch, 2}, {"l2sq", k->l2sq_batch, 2}, {"l1", k->l1_batch, 3}};
      for (int j = 0; j < 3; j++) {
        double t = run(ks[j].fn, q, rows, n, d, out);
        printf("{\"variant\": \"%s\", \"kernel\": \"%s\", \"dim\": %zu, \"rows\": %zu, "
               "\"rows_per_s\": %.0f, \"gflops\": %.2f}\n",
               k->name, ks[j].name, d, n, (double)n / t,
               ks[j].flops * (double)n * (double)d / t / 1e9);
      }
    }
    free(rows);
    free(q);
    free(out);
  }
  return 0;
}
