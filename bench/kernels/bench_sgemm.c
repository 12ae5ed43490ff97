/* bench_sgemm [--threads=1,2] [--seconds=S] [--shapes=all|blocks] — the machine's sgemm peak
 * through vforge's own BLAS path (vf_sgemm_nt: the library the loader chose, on the kernels it
 * chose), the figure issue 17's brute-force roofline is computed against.
 *
 * Shapes (m x k x n, C = A . B^T): 4096x784x4096 (numpy's Fashion-MNIST sgemm), the brute-force
 * block (BF_QB 1024 queries x d x BF_RB 2048 rows) at d = 784 and 768, and the k-means
 * assignment tile (256 rows x d x 1024 centroids) at d = 784.  Two ways to use T threads:
 * "blas" — one product, the BLAS's own T threads; "workers" — T threads of ours, each running
 * its own single-threaded product (how brute force and k-means call it).  One JSON line per
 * (shape, mode, threads), then one "sgemm_peak" line per thread count: the best of them.
 * Every line names the BLAS library, its core and the CPU model.  --shapes=blocks skips the
 * 4096-square shape (for slow kernels). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vforge/util.h"

typedef struct shape {
  size_t m, k, n;
  const char *what;
} shape;

typedef struct worker {
  const float *a, *b;
  float *c;
  size_t m, n, k;
  int reps;
  pthread_barrier_t *bar;
} worker;

static void *worker_main(void *p) {
  worker *w = p;
  pthread_barrier_wait(w->bar);
  for (int r = 0; r < w->reps; r++)
    vf_sgemm_nt(w->m, w->n, w->k, w->a, w->k, w->b, w->k, w->c, w->n);
  return NULL;
}

/* s as a JSON string body: quotes, backslashes and control bytes become '?' */
static const char *json_safe(char *dst, size_t cap, const char *s) {
  size_t i = 0;
  for (; s[i] && i + 1 < cap; i++)
    dst[i] = s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20 ? '?' : s[i];
  dst[i] = '\0';
  return dst;
}

static void fill(float *x, size_t n, unsigned mul) {
  for (size_t i = 0; i < n; i++)
    x[i] = (float)((i * mul) % 1000) * 1e-3f - 0.5f;
}

/* T of our threads, each a single-threaded product: GFLOP/s of all of them together */
static double run_workers(const shape *s, int t, double seconds) {
  double one = 0;
  vf_error err;
  if (vf_blas_measure(1, s->m, s->n, s->k, seconds / 4, &one, &err) != VF_OK || one <= 0) return 0;
  double flop = 2.0 * (double)s->m * (double)s->n * (double)s->k;
  int reps = (int)(seconds * one * 1e9 / flop) + 1;
  float *a = malloc(sizeof(float) * s->m * s->k), *b = malloc(sizeof(float) * s->n * s->k);
  float *c = malloc(sizeof(float) * (size_t)t * s->m * s->n);
  worker *w = calloc((size_t)t, sizeof *w);
  pthread_t *tid = calloc((size_t)t, sizeof *tid);
  double rate = 0;
  if (!a || !b || !c || !w || !tid) goto out;
  fill(a, s->m * s->k, 2654435761u);
  fill(b, s->n * s->k, 40503u);
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, (unsigned)t + 1);
  int saved = vf_blas_single_begin();
  for (int i = 0; i < t; i++) {
    w[i] = (worker){a, b, c + (size_t)i * s->m * s->n, s->m, s->n, s->k, reps, &bar};
    pthread_create(&tid[i], NULL, worker_main, &w[i]);
  }
  pthread_barrier_wait(&bar);
  double t0 = vf_now();
  for (int i = 0; i < t; i++)
    pthread_join(tid[i], NULL);
  double dt = vf_now() - t0;
  vf_blas_single_end(saved);
  pthread_barrier_destroy(&bar);
  rate = dt > 0 ? (double)t * (double)reps * flop / dt * 1e-9 : 0;
out:
  free(a);
  free(b);
  free(c);
  free(w);
  free(tid);
  return rate;
}

int main(int argc, char **argv) {
  int threads[8] = {1, 2}, nthreads = 2;
  double seconds = 0.3;
  int blocks_only = 0;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--threads=", 10) == 0) {
      nthreads = 0;
      for (char *p = argv[i] + 10; *p && nthreads < 8;) {
        threads[nthreads] = (int)strtol(p, &p, 10);
        if (threads[nthreads] < 1) {
          fprintf(stderr, "bench_sgemm: --threads wants a list of counts >= 1\n");
          return 2;
        }
        nthreads++;
        if (*p == ',') p++;
      }
    } else if (strncmp(argv[i], "--seconds=", 10) == 0) {
      seconds = strtod(argv[i] + 10, NULL);
    } else if (strcmp(argv[i], "--shapes=blocks") == 0) {
      blocks_only = 1;
    } else if (strcmp(argv[i], "--shapes=all") != 0) {
      fprintf(stderr, "bench_sgemm: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  vf_blas_info bi;
  vf_error err;
  vf_error_clear(&err);
  if (vf_blas_info_get(&bi, &err) != VF_OK) {
    fprintf(stderr, "bench_sgemm: %s\n", err.msg);
    return 1;
  }
  static const shape shapes[] = {{4096, 784, 4096, "numpy Fashion-MNIST"},
                                 {1024, 784, 2048, "brute-force block d=784"},
                                 {1024, 768, 2048, "brute-force block d=768"},
                                 {256, 784, 1024, "k-means assignment tile d=784"}};
  char head[1024], lib[512], cpu[160];
  snprintf(head, sizeof head, "\"library\":\"%s\",\"core\":\"%s\",\"source\":\"%s\",\"cpu\":\"%s\"",
           json_safe(lib, sizeof lib, bi.library), bi.core, bi.source,
           json_safe(cpu, sizeof cpu, vf_cpu_model()));
  for (int ti = 0; ti < nthreads; ti++) {
    int t = threads[ti];
    double peak = 0;
    const char *peak_shape = "", *peak_mode = "";
    for (size_t si = blocks_only ? 1 : 0; si < sizeof shapes / sizeof shapes[0]; si++) {
      const shape *s = &shapes[si];
      for (int mode = 0; mode < 2; mode++) {
        if (mode == 1 && t == 1) continue; /* one worker = one single-threaded product */
        double g = 0;
        if (mode == 0) {
          if (vf_blas_measure(t, s->m, s->n, s->k, seconds, &g, &err) != VF_OK) {
            fprintf(stderr, "bench_sgemm: %s\n", err.msg);
            return 1;
          }
        } else {
          g = run_workers(s, t, seconds);
        }
        const char *mname = mode == 0 ? "blas" : "workers";
        printf("{\"bench\":\"sgemm\",%s,\"shape\":\"%zux%zux%zu\",\"what\":\"%s\",\"threads\":%d,"
               "\"mode\":\"%s\",\"gflops\":%.1f}\n",
               head, s->m, s->k, s->n, s->what, t, mname, g);
        fflush(stdout);
        if (g > peak) {
          peak = g;
          peak_shape = s->what;
          peak_mode = mname;
        }
      }
    }
    printf("{\"bench\":\"sgemm_peak\",%s,\"threads\":%d,\"gflops\":%.1f,\"best_shape\":\"%s\","
           "\"best_mode\":\"%s\"}\n",
           head, t, peak, peak_shape, peak_mode);
    fflush(stdout);
  }
  return 0;
}
