/* bench_ivf_kernels [DIM...] — throughput of the IVF list-scan kernels (src/index/ivf_simd.c)
 * for every variant this CPU runs (scalar, avx2, avx512), on one list of 4096 rows held in
 * cache (as a probed list is scanned): SQ8 (sq8_l2 and the dot form u8_dot, d code bytes per
 * row), PQ ADC (pq_block, m = d/8 sub-quantizers, blocks of 32 rows), 4-bit PQ fast scan
 * (pq4_block, m = d/4 sub-quantizers: the same bytes per row as pq_block's; pq4_table: the
 * per-list float tables and their u8 quantisation, "rows" = tables of one list), RaBitQ 1-bit
 * (bytes_lut over d/8 bytes) and the k-means/PQ-encode argmin over 1024 centroids.  Prints one
 * JSON line per (variant, kernel, dim): rows/s and the speedup over scalar and AVX2 (null when
 * absent). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/ivf_internal.h"

enum { NROWS = 4096, NK = 7, NCENT = 1024 };
static const char *const knames[NK] = {"sq8_l2", "u8_dot", "pq_block", "rabitq_bytes_lut",
                                       "argmin", "pq4_block", "pq4_table"};

typedef struct data {
  size_t d, m, nb;
  float *a, *s, *lut, *cn, *ip, *out, *cbt;
  uint8_t *codes, *lut8;
  uint16_t *out16;
} data;

static volatile float sink;

/* one pass of kernel j over the list; returns the number of rows (or centroids) scored */
static size_t pass(const ivf_kern *K, int j, const data *D) {
  float acc = 0;
  switch (j) {
  case 0:
    for (size_t r = 0; r < NROWS; r++)
      acc += K->sq8_l2(D->a, D->s, D->codes + r * D->d, D->d);
    break;
  case 1:
    for (size_t r = 0; r < NROWS; r++)
      acc += K->u8_dot(D->a, D->codes + r * D->d, D->d);
    break;
  case 2:
    for (size_t b = 0; b < NROWS / IVF_PQ_BLOCK; b++) {
      K->pq_block(D->lut, D->codes + b * D->m * IVF_PQ_BLOCK, D->m, D->out);
      acc += D->out[b & 31];
    }
    break;
  case 3:
    for (size_t r = 0; r < NROWS; r++)
      acc += K->bytes_lut(D->lut, D->codes + r * D->nb, D->nb);
    break;
  case 5: { /* m4 = d/4 sub-quantizers, d/8 groups of 32 bytes per block */
    size_t ng = D->d / 8;
    for (size_t b = 0; b < NROWS / IVF_PQ_BLOCK; b++) {
      K->pq4_block(D->lut8, D->codes + b * ng * 32, ng, 1000, D->out16);
      acc += (float)D->out16[b & 31];
    }
    break;
  }
  case 6: { /* one list's tables: float l2 tables of a residual, then u8 */
    ivf_pq4_lut ql = {.q = D->lut8, .lo = D->out};
    size_t m4 = D->d / 4;
    for (size_t r = 0; r < 64; r++) {
      K->pq4_lut(D->a, D->cbt, m4, 4, 1, D->lut);
      K->pq4_quant(D->lut, NULL, m4, &ql);
      acc += ql.bias;
    }
    sink = acc;
    return 64;
  }
  default:
    for (size_t r = 0; r < NROWS / 64; r++) {
      uint32_t ix;
      acc += K->argmin(D->cn, D->ip + (r & 7), NCENT, &ix);
    }
    sink = acc;
    return NROWS / 64 * NCENT;
  }
  sink = acc;
  return NROWS;
}

static double rate(const ivf_kern *K, int j, const data *D) {
  double best = 1e30;
  size_t n = 0;
  for (int rep = 0; rep < 7; rep++) {
    double t0 = vf_now();
    n = pass(K, j, D);
    double t = vf_now() - t0;
    if (t < best) best = t;
  }
  return (double)n / (best > 0 ? best : 1e-9);
}

int main(int argc, char **argv) {
  size_t dims[16] = {96, 768};
  int ndims = 2;
  if (argc > 1) {
    ndims = 0;
    for (int i = 1; i < argc && ndims < 16; i++)
      dims[ndims++] = (size_t)strtoul(argv[i], NULL, 10);
  }
  for (int di = 0; di < ndims; di++) {
    data D = {.d = dims[di]};
    if (D.d < 8 || D.d % 8) {
      fprintf(stderr, "bench_ivf_kernels: dim %zu: want a multiple of 8\n", D.d);
      return 2;
    }
    D.m = D.d / 8;
    D.nb = D.d / 8;
    size_t lutn = (D.m > D.nb ? D.m : D.nb) * 256;
    D.a = malloc(D.d * sizeof(float));
    D.s = malloc(D.d * sizeof(float));
    D.lut = malloc(lutn * sizeof(float));
    D.cn = malloc(NCENT * sizeof(float));
    D.ip = malloc((NCENT + 8) * sizeof(float));
    D.out = malloc((D.d / 4 > 32 ? D.d / 4 : 32) * sizeof(float)); /* also pq4 minima */
    D.codes = malloc((size_t)NROWS * D.d);
    D.lut8 = malloc(D.d / 8 * 32);
    D.out16 = malloc(32 * sizeof(uint16_t));
    D.cbt = malloc(D.d * 16 * sizeof(float));
    if (!D.a || !D.s || !D.lut || !D.cn || !D.ip || !D.out || !D.codes || !D.lut8 || !D.out16 ||
        !D.cbt)
      return 1;
    for (size_t i = 0; i < D.d / 8 * 32; i++)
      D.lut8[i] = (uint8_t)((i * 40503u) >> 5);
    for (size_t i = 0; i < D.d * 16; i++)
      D.cbt[i] = (float)((i * 7919u) % 991) / 100.0f;
    for (size_t i = 0; i < D.d; i++) {
      D.a[i] = (float)(i % 17) * 0.25f - 2.0f;
      D.s[i] = 0.01f + (float)(i % 5) * 0.001f;
    }
    for (size_t i = 0; i < lutn; i++)
      D.lut[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
    for (size_t i = 0; i < NCENT; i++)
      D.cn[i] = (float)((i * 40503u) % 997) / 10.0f;
    for (size_t i = 0; i < NCENT + 8; i++)
      D.ip[i] = (float)((i * 7919u) % 991) / 20.0f;
    for (size_t i = 0; i < (size_t)NROWS * D.d; i++)
      D.codes[i] = (uint8_t)((i * 2654435761u) >> 13);
    double base[IDX_SIMD_AVX512 + 1][NK] = {{0}};
    for (int s = IDX_SIMD_SCALAR; s <= IDX_SIMD_AVX512; s++) {
      const ivf_kern *K = ivf_kern_for((idx_simd)s);
      if (!K) continue;
      for (int j = 0; j < NK; j++) {
        double rps = rate(K, j, &D);
        base[s][j] = rps;
        char vs[2][32];
        for (int b = 0; b < 2; b++) {
          double ref = base[b == 0 ? IDX_SIMD_SCALAR : IDX_SIMD_AVX2][j];
          if (ref > 0)
            snprintf(vs[b], sizeof vs[b], "%.2f", rps / ref);
          else
            snprintf(vs[b], sizeof vs[b], "null");
        }
        printf("{\"variant\": \"%s\", \"kernel\": \"%s\", \"dim\": %zu, \"rows_per_s\": %.0f, "
               "\"vs_scalar\": %s, \"vs_avx2\": %s}\n",
               K->name, knames[j], D.d, rps, vs[0], vs[1]);
      }
    }
    free(D.a);
    free(D.s);
    free(D.lut);
    free(D.cn);
    free(D.ip);
    free(D.out);
    free(D.codes);
    free(D.lut8);
    free(D.out16);
    free(D.cbt);
  }
  return 0;
}
