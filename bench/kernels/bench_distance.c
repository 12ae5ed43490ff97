/* bench_distance [--mib=N] [DIM...] — throughput of the distance kernels, one query against
 * N MiB of rows (default 64: the rows come from memory, not cache; a small N such as 4 keeps
 * them in L2/L3 as when many queries scan one block of rows), for every variant this
 * CPU runs (scalar, avx2, avx512).  Prints one JSON line per (variant, kernel, dim): rows/s,
 * GFLOP/s (2*d flops per row for dot and l2sq, 3*d for l1) and the speedup over the scalar and
 * the AVX2 variant of the same kernel and dim (null when that variant does not run here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  size_t dims[16] = {96, 768, 1536}, mib = 64;
  int ndims = 3, given = 0;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--mib=", 6) == 0) {
      mib = (size_t)strtoul(argv[i] + 6, NULL, 10);
      if (mib == 0 || mib > 65536) {
        fprintf(stderr, "bench_distance: --mib wants 1..65536, got %s\n", argv[i] + 6);
        return 2;
      }
      continue;
    }
    if (!given) ndims = 0;
    given = 1;
    if (ndims < 16) dims[ndims++] = (size_t)strtoul(argv[i], NULL, 10);
  }
  for (int di = 0; di < ndims; di++) {
    size_t d = dims[di];
    if (d == 0) continue;
    size_t n = (mib << 20) / (d * sizeof(float));
    if (n == 0) n = 1;
    float *rows = malloc(n * d * sizeof *rows), *q = malloc(d * sizeof *q),
          *out = malloc(n * sizeof *out);
    if (!rows || !q || !out) return 1;
    for (size_t i = 0; i < n * d; i++)
      rows[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
    for (size_t i = 0; i < d; i++)
      q[i] = (float)i / (float)d;
    double base[IDX_SIMD_AVX512 + 1][3] = {{0}}; /* rows/s per (variant, kernel) */
    for (int s = IDX_SIMD_SCALAR; s <= IDX_SIMD_AVX512; s++) {
      const idx_kernels *k = idx_kernels_for((idx_simd)s);
      if (!k) continue;
      struct {
        const char *name;
        batch_fn fn;
        double flops;
      } ks[3] = {{"dot", k->dot_batch, 2}, {"l2sq", k->l2sq_batch, 2}, {"l1", k->l1_batch, 3}};
      for (int j = 0; j < 3; j++) {
        double t = run(ks[j].fn, q, rows, n, d, out);
        double rps = (double)n / t;
        base[s][j] = rps;
        char vs[2][32];
        for (int b = 0; b < 2; b++) {
          double ref = base[b == 0 ? IDX_SIMD_SCALAR : IDX_SIMD_AVX2][j];
          if (ref > 0)
            snprintf(vs[b], sizeof vs[b], "%.2f", rps / ref);
          else
            snprintf(vs[b], sizeof vs[b], "null");
        }
        printf("{\"variant\": \"%s\", \"kernel\": \"%s\", \"dim\": %zu, \"rows\": %zu, "
               "\"mib\": %zu, \"rows_per_s\": %.0f, \"gflops\": %.2f, \"vs_scalar\": %s, "
               "\"vs_avx2\": %s}\n",
               k->name, ks[j].name, d, n, mib, rps, ks[j].flops * (double)n * (double)d / t / 1e9,
               vs[0], vs[1]);
      }
    }
    free(rows);
    free(q);
    free(out);
  }
  return 0;
}
