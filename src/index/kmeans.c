/*
 * kmeans.c — Lloyd's k-means with a BLAS-tiled assignment step, and the nearest-centroid
 * assignment the IVF builder reuses.
 *
 * Assignment: |x - c|^2 = |x|^2 - 2 x.c + |c|^2, and |x|^2 does not change the argmin, so a
 * block of rows is scored against a tile of centroids by one sgemm (vf_sgemm_nt, x . c^T) plus the
 * precomputed centroid norms.  Rows are cut into fixed blocks of ASSIGN_BLOCK rows whatever
 * the thread count and every block is one identical sgemm call (the BLAS single-threaded inside
 * our workers), so the assignment — and everything computed from it — is the same for 1 or N
 * threads.  Ties go to the lower centroid index.
 *
 * Seeding: k-means++ (D^2 sampling) when n*k*d is small (it finds well-separated blobs that
 * random seeding splits), else k distinct random rows as FAISS does; both from the seed.
 *
 * Update: centroid sums are accumulated in double, rows in input order, by one thread (a fixed
 * reduction order; it costs n*d against the n*k*d of the assignment).  Empty clusters are
 * refilled by splitting the largest cluster (FAISS's rule): the empty centroid becomes a copy of
 * the big one, the two are pushed apart by a relative 1/1024 in opposite directions and the big
 * cluster's count is halved between them.
 *
 * Training sample (max_per_centroid): with n > k * cap, Lloyd runs on the m = k * cap rows
 * floor(i * n / m), i < m — an even stride, so a sample that is itself stratified stays so — and
 * the final assignment (when asked) covers all n rows.  FAISS subsamples the same way
 * (max_points_per_centroid = 256) but with a random permutation.
 *
 * Early stop (stop_changed): each iteration counts the rows whose cluster differs from the
 * previous iteration's; after the update of an iteration in which at most stop_changed * rows
 * changed, Lloyd stops.  The assignment is thread-count independent (above), so the count, the
 * iterations run and the centroids are too.  A tiny stop_changed stops only at a fixed point (no
 * row changed: the update reproduces the same centroids), so the result equals running every
 * iteration; <= 0 runs every iteration.  stop_objective stops too: after the update of an
 * iteration whose objective (sum over rows, in row order, in double, of the squared distance to
 * the assigned centroid — thread-count independent like the assignment) fell by at most
 * stop_objective of the previous iteration's.  On Fashion-MNIST at nlist 256 the changed-row
 * fraction is still 1 % after 20 iterations while the objective falls by 0.47, 0.33, 0.24, 0.17 %
 * in iterations 7-10: the recall of FAISS's 10 iterations is reached long before rows stop
 * moving between neighbouring lists, so the objective is the rule that fires.
 *
 * Two-level (opts->hier_min_k <= k, the IVF builder from nlist 1024): round(sqrt(k)) coarse
 * clusters, each split by its own k-means into its share of the k centroids, then hier_refine
 * full Lloyd iterations; see kmeans_hier() and DESIGN.md.  On Fashion-MNIST at nlist 1024 it kept
 * FAISS's recall for less than half the build's CPU.
 *
 * Metrics: k-means itself is euclidean.  `spherical` renormalises the centroids after each update
 * (cosine: the IVF layer normalises the vectors first).  For dot (maximum inner product) the IVF
 * layer clusters the raw vectors in L2 (balanced lists, each a neighbourhood of its centroid) and
 * probes lists by q.c at search time; see ivf_build.c.
 */
#include <math.h>
#include <stdlib.h>

#include "index/ivf_internal.h"
#include "vforge/pool.h"

#define ASSIGN_BLOCK 256  /* rows per sgemm */
#define CENT_TILE 1024    /* centroids per sgemm */
#define KMPP_MAX_WORK 2e8 /* n*k*d up to which k-means++ seeds the centroids */

/* --------------------------------------------------------------- threads */

typedef struct par_job {
  ivf_par_fn fn;
  void *arg;
} par_job;

static void par_chunk(void *arg, size_t c, int w) {
  (void)w;
  par_job *j = arg;
  j->fn(j->arg, (int)c);
}

/* ivf_parallel(): see ivf_internal.h.  Slot t is chunk t of one loop on the process pool
 * (vforge/pool.h), so no thread is started per call; the slots share their work through their
 * own atomic counters, so a slot that starts late (its core busy) finds less left to do. */
vf_status ivf_parallel(int nthreads, ivf_par_fn fn, void *arg, vf_error *err) {
  if (nthreads <= 1) {
    fn(arg, 0);
    return VF_OK;
  }
  par_job j = {fn, arg};
  return vf_pool_for((size_t)nthreads, nthreads, par_chunk, &j, err);
}

/* ------------------------------------------------------------ assignment */

typedef struct assign_job {
  const float *x, *c, *cnorm;
  const float *xnorm; /* NULL, or |x_i|^2 of every row (dist without recomputing it) */
  size_t n, d, k;
  uint32_t *assign;
  float *dist;
  float *scratch; /* per worker ASSIGN_BLOCK x CENT_TILE */
} assign_job;

static float row_norm(const float *xr, size_t d) {
  float xn = 0.0f;
  for (size_t e = 0; e < d; e++)
    xn += xr[e] * xr[e];
  return xn;
}

/* one block of ASSIGN_BLOCK rows (chunk b of the pool loop) on worker w's scratch */
static void assign_block(void *arg, size_t b, int w) {
  assign_job *j = arg;
  size_t tile = j->k < CENT_TILE ? j->k : CENT_TILE;
  float *ip = j->scratch + (size_t)w * ASSIGN_BLOCK * tile;
  const ivf_kern *K = ivf_kern_active();
  float best[ASSIGN_BLOCK];
  uint32_t bi[ASSIGN_BLOCK];
  size_t r0 = b * ASSIGN_BLOCK, nr = j->n - r0 < ASSIGN_BLOCK ? j->n - r0 : ASSIGN_BLOCK;
  for (size_t i = 0; i < nr; i++) {
    best[i] = INFINITY;
    bi[i] = 0;
  }
  for (size_t c0 = 0; c0 < j->k; c0 += tile) {
    size_t nc = j->k - c0 < tile ? j->k - c0 : tile;
    vf_sgemm_nt(nr, nc, j->d, j->x + r0 * j->d, j->d, j->c + c0 * j->d, j->d, ip, nc);
    for (size_t i = 0; i < nr; i++) {
      uint32_t c;
      float v = K->argmin(j->cnorm + c0, ip + i * nc, nc, &c);
      if (v < best[i]) { /* earlier tiles hold lower indices: strict */
        best[i] = v;
        bi[i] = (uint32_t)c0 + c;
      }
    }
  }
  for (size_t i = 0; i < nr; i++) {
    j->assign[r0 + i] = bi[i];
    if (j->dist) {
      float xn = j->xnorm ? j->xnorm[r0 + i] : row_norm(j->x + (r0 + i) * j->d, j->d);
      float v = best[i] + xn;
      j->dist[r0 + i] = v > 0.0f ? v : 0.0f;
    }
  }
}

/* ivf_assign_l2() with the rows' squared norms given (xnorm, for dist; NULL: computed) */
static vf_status assign_l2(const float *x, const float *xnorm, size_t n, size_t d, const float *c,
                           const float *cnorm, size_t k, int threads, uint32_t *assign, float *dist,
                           vf_error *err) {
  if (n == 0) return VF_OK;
  vf_status st = vf_blas_require(err);
  if (st != VF_OK) return st;
  if (threads < 1) threads = 1;
  size_t nblocks = (n + ASSIGN_BLOCK - 1) / ASSIGN_BLOCK;
  threads = vf_pool_width(nblocks, threads);
  assign_job j = {.x = x, .c = c, .cnorm = cnorm, .xnorm = xnorm, .n = n, .d = d, .k = k,
                  .assign = assign, .dist = dist};
  j.scratch = vf_mallocarray((size_t)threads * ASSIGN_BLOCK, (k < CENT_TILE ? k : CENT_TILE) * sizeof(float));
  if (!j.scratch) return vf_error_set(err, VF_ENOMEM, "k-means: out of memory for the assignment");
  int saved = vf_blas_single_begin();
  st = vf_pool_for(nblocks, threads, assign_block, &j, err);
  vf_blas_single_end(saved);
  free(j.scratch);
  return st;
}

/* ivf_assign_l2(): see ivf_internal.h. */
vf_status ivf_assign_l2(const float *x, size_t n, size_t d, const float *c, const float *cnorm,
                        size_t k, int threads, uint32_t *assign, float *dist, vf_error *err) {
  return assign_l2(x, NULL, n, d, c, cnorm, k, threads, assign, dist, err);
}

/* --------------------------------------------------------------- k-means */

static void centroid_norms(const float *c, size_t k, size_t d, float *cn) {
  for (size_t j = 0; j < k; j++) {
    float s = 0.0f;
    for (size_t e = 0; e < d; e++)
      s += c[j * d + e] * c[j * d + e];
    cn[j] = s;
  }
}

/* The training sample (max_per_centroid `per`): with n > k * per, the m = k * per rows of an
 * even stride over x, copied into *xsub (the caller frees it); else *xsub = NULL and *m = n. */
static vf_status km_subsample(const float *x, size_t n, size_t d, size_t k, uint32_t per,
                              float **xsub, size_t *m, vf_error *err) {
  *xsub = NULL;
  *m = n;
  if (!per || (double)n <= (double)k * (double)per) return VF_OK;
  size_t ms = k * (size_t)per;
  float *xs = vf_mallocarray(ms, d * sizeof(float));
  if (!xs) return vf_error_set(err, VF_ENOMEM, "k-means: out of memory for a %zu-row subsample", ms);
  vf_advise_huge(xs, ms * d * sizeof(float));
  for (size_t i = 0; i < ms; i++)
    memcpy(xs + i * d, x + (size_t)(((unsigned __int128)i * n) / ms) * d, d * sizeof(float));
  *xsub = xs;
  *m = ms;
  return VF_OK;
}

/* Lloyd on x (n x d, k centroids); `seeded`: centroids already hold the start (the hierarchical
 * refinement), else they are seeded from opts->seed.  The rest as idx_kmeans(). */
static vf_status kmeans_flat(const float *x, size_t n, size_t d, size_t k,
                             const idx_kmeans_opts *opts, bool seeded, float *centroids,
                             uint32_t *assign, vf_error *err) {
  int iters = opts && opts->iters > 0 ? opts->iters : 20;
  uint64_t seed = opts ? opts->seed : 0;
  int threads = opts && opts->threads > 0 ? opts->threads : vf_threads();
  bool spherical = opts && opts->spherical;
  double stop = opts ? opts->stop_changed : 0.0;
  double stop_obj = opts ? opts->stop_objective : 0.0;
  uint32_t per = opts ? opts->max_per_centroid : 0;
  const float *xall = x;
  size_t nall = n;
  float *xsub = NULL;
  uint32_t *as = NULL, *prev = NULL;
  size_t m = n;
  vf_status sst = km_subsample(x, n, d, k, per, &xsub, &m, err); /* Lloyd on its rows */
  if (sst != VF_OK) return sst;
  if (xsub) {
    x = xsub;
    n = m;
  }
  if (opts && opts->rows_used) *opts->rows_used = n;
  if (opts && opts->iters_run) *opts->iters_run = 0;

  as = assign && !xsub ? assign : vf_mallocarray(n, sizeof *as);
  prev = stop > 0 ? vf_mallocarray(n, sizeof *prev) : NULL;
  const char *phase = opts ? opts->progress : NULL;
  bool want_obj = phase || stop_obj > 0;
  float *dist = want_obj ? vf_mallocarray(n, sizeof *dist) : NULL; /* for the objective */
  float *xn = want_obj ? vf_mallocarray(n, sizeof *xn) : NULL; /* |x_i|^2, once: rows stay */
  float *cn = vf_mallocarray(k, sizeof *cn);
  double *sum = vf_mallocarray(k * d, sizeof *sum);
  uint64_t *cnt = vf_mallocarray(k, sizeof *cnt);
  size_t *perm = vf_mallocarray(n, sizeof *perm);
  vf_status st = VF_OK;
  if (!as || !cn || !sum || !cnt || !perm || (want_obj && (!dist || !xn)) || (stop > 0 && !prev))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "k-means: out of memory (%zu rows x %zu, k = %zu)", n, d, k));
  ivf_rng rng = {seed ^ 0x6b6d65616e73ull};
  if (seeded) {
    /* the caller's centroids are the start */
  } else if ((double)n * (double)k * (double)d <= KMPP_MAX_WORK) {
    /* k-means++ seeding (D^2 sampling, sequential in row order) while it costs at most about
     * one Lloyd iteration of a small problem; larger problems start from random rows (FAISS). */
    const idx_kernels *K = idx_kernels_active();
    float *mind = (float *)(void *)perm; /* n floats fit in n size_t */
    float *tmp = vf_mallocarray(n, sizeof(float));
    if (!tmp) VF_FAIL(vf_error_set(err, VF_ENOMEM, "k-means: out of memory (%zu rows)", n));
    size_t first = (size_t)(ivf_rng_next(&rng) % (uint64_t)n);
    memcpy(centroids, x + first * d, d * sizeof(float));
    K->l2sq_batch(centroids, x, n, d, mind);
    for (size_t j = 1; j < k; j++) {
      double tot = 0;
      for (size_t i = 0; i < n; i++)
        tot += mind[i];
      size_t pick = (size_t)(ivf_rng_next(&rng) % (uint64_t)n);
      if (tot > 0) {
        double r = ivf_rng_unit(&rng) * tot, acc = 0;
        for (size_t i = 0; i < n; i++) {
          acc += mind[i];
          if (acc > r && mind[i] > 0) {
            pick = i;
            break;
          }
        }
      }
      float *cj = centroids + j * d;
      memcpy(cj, x + pick * d, d * sizeof(float));
      K->l2sq_batch(cj, x, n, d, tmp);
      for (size_t i = 0; i < n; i++)
        if (tmp[i] < mind[i]) mind[i] = tmp[i];
    }
    free(tmp);
  } else {
    /* k distinct rows from a seeded partial Fisher-Yates shuffle */
    for (size_t i = 0; i < n; i++)
      perm[i] = i;
    for (size_t i = 0; i < k; i++) {
      size_t j = i + (size_t)(ivf_rng_next(&rng) % (uint64_t)(n - i));
      size_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
      memcpy(centroids + i * d, x + perm[i] * d, d * sizeof(float));
    }
  }
  if (xn)
    for (size_t i = 0; i < n; i++)
      xn[i] = row_norm(x + i * d, d);
  if (k == 1) iters = 1;
  vf_stage sg;
  if (phase) {
    vf_stage_begin(&sg, phase, "k-means", "iterations", (uint64_t)iters);
    vf_stage_update(&sg, 0, "%zu centroids, %zu rows", k, n);
  }
  double prev_obj = 0;
  for (int it = 0; it < iters; it++) {
    VF_TRY(vf_check_cancel(err));
    centroid_norms(centroids, k, d, cn);
    VF_TRY(assign_l2(x, xn, n, d, centroids, cn, k, threads, as, dist, err));
    size_t changed = n;
    if (prev && it > 0) {
      changed = 0;
      for (size_t i = 0; i < n; i++)
        changed += as[i] != prev[i];
    }
    double obj = 0; /* the objective of the centroids just used (before this update) */
    if (dist)
      for (size_t i = 0; i < n; i++)
        obj += dist[i];
    bool settled = prev && it > 0 && (double)changed <= stop * (double)n;
    bool obj_settled = !settled && stop_obj > 0 && it > 0 && prev_obj - obj <= stop_obj * prev_obj;
    settled = settled || obj_settled;
    prev_obj = obj;
    if (prev && !settled) memcpy(prev, as, n * sizeof *as);
    if (opts && opts->iters_run) *opts->iters_run = it + 1;
    if (phase) {
      if (settled) sg.last = -1.0; /* the settling iteration is always reported (vf_stage) */
      if (prev && it > 0)
        vf_stage_update(&sg, (uint64_t)it + 1, "objective %.6g, %zu of %zu rows changed list%s", obj,
                        changed, n,
                        obj_settled ? " (objective settled: stopping)"
                        : settled   ? " (settled: stopping)"
                                    : "");
      else
        vf_stage_update(&sg, (uint64_t)it + 1, "objective %.6g%s", obj,
                        obj_settled ? " (objective settled: stopping)" : "");
    }
    memset(sum, 0, k * d * sizeof *sum);
    memset(cnt, 0, k * sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
      double *s = sum + (size_t)as[i] * d;
      const float *xr = x + i * d;
      for (size_t e = 0; e < d; e++)
        s[e] += xr[e];
      cnt[as[i]]++;
    }
    for (size_t j = 0; j < k; j++) {
      if (!cnt[j]) continue;
      for (size_t e = 0; e < d; e++)
        centroids[j * d + e] = (float)(sum[j * d + e] / (double)cnt[j]);
    }
    /* empty clusters: split the largest (lowest index on ties) */
    for (size_t j = 0; j < k; j++) {
      if (cnt[j]) continue;
      size_t big = 0;
      for (size_t b = 1; b < k; b++)
        if (cnt[b] > cnt[big]) big = b;
      if (cnt[big] < 2) break; /* nothing left to split (duplicate rows) */
      for (size_t e = 0; e < d; e++) {
        float v = centroids[big * d + e];
        float eps = (e % 2 ? 1.0f : -1.0f) / 1024.0f;
        centroids[j * d + e] = v * (1.0f + eps) + (v == 0.0f ? eps * 1e-3f : 0.0f);
        centroids[big * d + e] = v * (1.0f - eps) - (v == 0.0f ? eps * 1e-3f : 0.0f);
      }
      cnt[j] = cnt[big] / 2;
      cnt[big] -= cnt[j];
    }
    if (spherical)
      for (size_t j = 0; j < k; j++)
        idx_normalize(centroids + j * d, d);
    if (settled) break;
  }
  if (assign) {
    centroid_norms(centroids, k, d, cn);
    st = ivf_assign_l2(xall, nall, d, centroids, cn, k, threads, assign, NULL, err);
  }
out:
  if (as != assign) free(as);
  free(prev);
  free(xsub);
  free(dist);
  free(xn);
  free(cn);
  free(sum);
  free(cnt);
  free(perm);
  return st;
}

/* Two-level k-means (opts->hier_min_k <= k): k1 = round(sqrt(k)) coarse clusters on the (capped)
 * rows, each coarse cluster split by its own k-means into its share of the k centroids — k * n_j
 * / n rounded down, the remainder to the largest fractions (lower index on ties), so every share
 * is at most n_j — then opts->hier_refine Lloyd iterations over all k centroids and rows.  A level
 * costs about n*k1*d per iteration against the n*k*d of one full iteration.  Sub-problems run in
 * coarse-cluster order, their rows in row order, each seeded from opts->seed and its index, every
 * one with the thread-count independent assignment: the result does not depend on the threads. */
static vf_status kmeans_hier(const float *x, size_t n, size_t d, size_t k,
                             const idx_kmeans_opts *opts, float *centroids, uint32_t *assign,
                             vf_error *err) {
  vf_status st = VF_OK;
  const float *xs = x;
  size_t m = n;
  float *xsub = NULL, *c1 = NULL, *sub = NULL;
  uint32_t *as1 = NULL;
  size_t *cnt = NULL, *share = NULL, *start = NULL, *order = NULL;
  uint32_t per = opts->max_per_centroid;
  int threads = opts->threads > 0 ? opts->threads : vf_threads();
  VF_TRY(km_subsample(x, n, d, k, per, &xsub, &m, err)); /* the rows kmeans_flat would use */
  if (xsub) xs = xsub;
  size_t k1 = (size_t)llround(sqrt((double)k));
  if (k1 < 2) k1 = 2;
  c1 = vf_mallocarray(k1, d * sizeof(float));
  as1 = vf_mallocarray(m, sizeof *as1);
  cnt = vf_calloc(k1, sizeof *cnt);
  share = vf_calloc(k1, sizeof *share);
  start = vf_calloc(k1 + 1, sizeof *start);
  order = vf_mallocarray(m, sizeof *order);
  if (!c1 || !as1 || !cnt || !share || !start || !order)
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "k-means: out of memory (%zu rows, k = %zu)", m, k));
  idx_kmeans_opts o = *opts;
  o.max_per_centroid = 0;
  o.hier_min_k = 0;
  o.progress = NULL;
  o.iters_run = NULL;
  o.rows_used = NULL;
  VF_TRY(kmeans_flat(xs, m, d, k1, &o, false, c1, as1, err));
  for (size_t i = 0; i < m; i++)
    cnt[as1[i]]++;
  size_t given = 0;
  for (size_t j = 0; j < k1; j++) {
    share[j] = (size_t)(((unsigned __int128)k * cnt[j]) / m);
    given += share[j];
  }
  while (given < k) { /* largest remainder k * n_j mod m; only shares below n_j can grow */
    size_t best = k1;
    uint64_t bestr = 0;
    for (size_t j = 0; j < k1; j++) {
      uint64_t r = (uint64_t)(((unsigned __int128)k * cnt[j]) % m);
      bool fresh = share[j] == (size_t)(((unsigned __int128)k * cnt[j]) / m); /* not bumped yet */
      if (fresh && share[j] < cnt[j] && (best == k1 || r > bestr)) {
        best = j;
        bestr = r;
      }
    }
    if (best == k1) break; /* cannot happen: sum n_j = m >= k */
    share[best]++;
    given++;
  }
  for (size_t j = 0; j < k1; j++)
    start[j + 1] = start[j] + cnt[j];
  memset(cnt, 0, k1 * sizeof *cnt);
  for (size_t i = 0; i < m; i++)
    order[start[as1[i]] + cnt[as1[i]]++] = i;
  size_t maxn = 0;
  for (size_t j = 0; j < k1; j++)
    if (cnt[j] > maxn) maxn = cnt[j];
  sub = vf_mallocarray(maxn ? maxn : 1, d * sizeof(float));
  if (!sub) VF_FAIL(vf_error_set(err, VF_ENOMEM, "k-means: out of memory (%zu rows)", maxn));
  size_t c0 = 0;
  for (size_t j = 0; j < k1; j++) {
    if (!share[j]) continue;
    VF_TRY(vf_check_cancel(err));
    for (size_t i = 0; i < cnt[j]; i++)
      memcpy(sub + i * d, xs + order[start[j] + i] * d, d * sizeof(float));
    o.seed = opts->seed + 0x9e3779b97f4a7c15ull * (j + 1);
    VF_TRY(kmeans_flat(sub, cnt[j], d, share[j], &o, false, centroids + c0 * d, NULL, err));
    c0 += share[j];
  }
  if (c0 != k) VF_FAIL(vf_error_set(err, VF_EINTERNAL, "k-means: %zu of %zu centroids placed", c0, k));
  if (opts->rows_used) *opts->rows_used = m;
  if (opts->iters_run) *opts->iters_run = 0;
  if (opts->hier_refine > 0) {
    o = *opts;
    o.iters = opts->hier_refine;
    o.max_per_centroid = 0;
    o.hier_min_k = 0;
    o.rows_used = NULL;
    VF_TRY(kmeans_flat(xs, m, d, k, &o, true, centroids, NULL, err));
  }
  if (assign) {
    float *cn = vf_mallocarray(k, sizeof *cn);
    if (!cn) VF_FAIL(vf_error_set(err, VF_ENOMEM, "k-means: out of memory (k = %zu)", k));
    centroid_norms(centroids, k, d, cn);
    st = ivf_assign_l2(x, n, d, centroids, cn, k, threads, assign, NULL, err);
    free(cn);
  }
out:
  free(xsub);
  free(c1);
  free(sub);
  free(as1);
  free(cnt);
  free(share);
  free(start);
  free(order);
  return st;
}

/* idx_kmeans(): see ivf.h. */
vf_status idx_kmeans(const float *x, size_t n, size_t d, size_t k, const idx_kmeans_opts *opts,
                     float *centroids, uint32_t *assign, vf_error *err) {
  if (k == 0 || d == 0 || n < k)
    return vf_error_set(err, VF_EUSAGE,
                        "k-means: need 1 <= k <= rows and dim > 0 (k = %zu, rows = %zu, dim = %zu)",
                        k, n, d);
  if (opts && opts->hier_min_k && k >= opts->hier_min_k && k >= 4)
    return kmeans_hier(x, n, d, k, opts, centroids, assign, err);
  return kmeans_flat(x, n, d, k, opts, false, centroids, assign, err);
}
