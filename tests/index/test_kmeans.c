/* idx_kmeans(): separable blobs are found, the result does not depend on the thread count,
 * degenerate inputs (duplicates -> empty clusters, n < k) are handled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vf_test.h"
#include "vforge/ivf.h"

static uint64_t rs;
static double urand(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (double)(rs >> 11) / 9007199254740992.0;
}
static float grand(void) {
  double u = urand(), v = urand();
  if (u < 1e-12) u = 1e-12;
  return (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
}

/* n points around `nb` centres (spread `sigma`), labels in lab */
static float *blobs(size_t n, size_t d, size_t nb, float sigma, uint32_t *lab) {
  float *c = malloc(nb * d * sizeof *c), *x = malloc(n * d * sizeof *x);
  for (size_t i = 0; i < nb * d; i++)
    c[i] = 20.0f * (float)urand();
  for (size_t i = 0; i < n; i++) {
    lab[i] = (uint32_t)(i % nb);
    for (size_t e = 0; e < d; e++)
      x[i * d + e] = c[lab[i] * d + e] + sigma * grand();
  }
  free(c);
  return x;
}

VF_TEST(kmeans_finds_blobs) {
  rs = 42;
  size_t n = 4000, d = 16, k = 8;
  uint32_t *lab = malloc(n * sizeof *lab), *as = malloc(n * sizeof *as);
  float *x = blobs(n, d, k, 0.2f, lab);
  float *cent = malloc(k * d * sizeof *cent);
  for (uint64_t seed = 1; seed <= 5; seed++) {
    idx_kmeans_opts o = {.iters = 10, .seed = seed, .threads = 2};
    CHECK_OK(idx_kmeans(x, n, d, k, &o, cent, as, NULL));
    /* every blob maps to one cluster and distinct blobs to distinct clusters */
    uint32_t map[8];
    for (size_t b = 0; b < k; b++)
      map[b] = as[b];
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
      if (as[i] != map[lab[i]]) bad++;
    CHECK_EQ_INT(bad, 0);
    for (size_t a = 0; a < k; a++)
      for (size_t b = a + 1; b < k; b++)
        CHECK(map[a] != map[b]);
  }
  free(lab);
  free(as);
  free(x);
  free(cent);
}

/* lists that no row was assigned to */
static size_t empty_clusters(const uint32_t *as, size_t n, size_t k) {
  size_t *cnt = calloc(k, sizeof *cnt), empty = 0;
  for (size_t i = 0; i < n; i++)
    cnt[as[i]]++;
  for (size_t j = 0; j < k; j++)
    empty += cnt[j] == 0;
  free(cnt);
  return empty;
}

VF_TEST(kmeans_deterministic_across_threads) {
  rs = 7;
  size_t n = 6000, d = 24;
  uint32_t *lab = malloc(n * sizeof *lab);
  float *x = blobs(n, d, 30, 3.0f, lab);
  size_t ks[2] = {50, 2000}; /* k-means++ seeding and random seeding */
  for (int t = 0; t < 2; t++) {
    size_t k = ks[t];
    float *c1 = malloc(k * d * sizeof *c1), *c2 = malloc(k * d * sizeof *c2);
    uint32_t *a1 = malloc(n * sizeof *a1), *a2 = malloc(n * sizeof *a2);
    idx_kmeans_opts o1 = {.iters = 6, .seed = 99, .threads = 1};
    idx_kmeans_opts o2 = {.iters = 6, .seed = 99, .threads = 2};
    CHECK_OK(idx_kmeans(x, n, d, k, &o1, c1, a1, NULL));
    CHECK_OK(idx_kmeans(x, n, d, k, &o2, c2, a2, NULL));
    CHECK(memcmp(c1, c2, k * d * sizeof *c1) == 0);
    CHECK(memcmp(a1, a2, n * sizeof *a1) == 0);
    /* a different seed gives different centroids */
    o2.seed = 100;
    CHECK_OK(idx_kmeans(x, n, d, k, &o2, c2, NULL, NULL));
    CHECK(memcmp(c1, c2, k * d * sizeof *c1) != 0);
    /* no cluster is left empty on this data (k = 50) */
    if (k == 50) CHECK_EQ_INT(empty_clusters(a1, n, k), 0);
    free(c1);
    free(c2);
    free(a1);
    free(a2);
  }
  free(lab);
  free(x);
}

VF_TEST(kmeans_degenerate_inputs) {
  size_t n = 200, d = 4, k = 6;
  float *x = malloc(n * d * sizeof *x);
  for (size_t i = 0; i < n; i++) /* only 3 distinct points */
    for (size_t e = 0; e < d; e++)
      x[i * d + e] = (float)(i % 3) + (float)e;
  float *c = malloc(k * d * sizeof *c);
  uint32_t *as = malloc(n * sizeof *as);
  idx_kmeans_opts o = {.iters = 5, .seed = 3, .threads = 2};
  CHECK_OK(idx_kmeans(x, n, d, k, &o, c, as, NULL));
  for (size_t i = 0; i < k * d; i++)
    CHECK(isfinite(c[i]));
  for (size_t i = 0; i < n; i++) {
    CHECK(as[i] < k);
    /* each row sits on (or next to) its centroid */
    float dd = 0;
    for (size_t e = 0; e < d; e++)
      dd += (x[i * d + e] - c[as[i] * d + e]) * (x[i * d + e] - c[as[i] * d + e]);
    CHECK(dd < 1e-3f);
  }
  vf_error err = {0};
  CHECK_STATUS(idx_kmeans(x, 5, d, k, &o, c, NULL, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "k") != NULL);
  CHECK_STATUS(idx_kmeans(x, n, d, 0, &o, c, NULL, NULL), VF_EUSAGE);
  /* spherical: unit-norm centroids */
  o.spherical = true;
  CHECK_OK(idx_kmeans(x, n, d, 3, &o, c, NULL, NULL));
  for (size_t j = 0; j < 3; j++) {
    float nn = 0;
    for (size_t e = 0; e < d; e++)
      nn += c[j * d + e] * c[j * d + e];
    CHECK(fabsf(nn - 1.0f) < 1e-4f);
  }
  free(x);
  free(c);
  free(as);
}

/* issue 14: k-means reports its iterations (i/N with the objective; throttled, the last one
 * always) when asked, is silent otherwise, and stops with VF_ECANCELED once cancellation is
 * requested */
static int g_km_events;
static double g_km_obj[64];
static uint64_t g_km_last, g_km_total;
static void km_progress(void *user, const vf_progress *p) {
  (void)user;
  if (!p->stage || strcmp(p->stage, "k-means") != 0 || !p->detail) return;
  double v = 0;
  if (sscanf(p->detail, "objective %lf", &v) == 1 && g_km_events < 64) {
    g_km_obj[g_km_events++] = v;
    g_km_last = p->rows_done;
    g_km_total = p->rows_total;
  }
}

VF_TEST(kmeans_progress_and_cancel) {
  rs = 7;
  size_t n = 2000, d = 8, k = 4;
  uint32_t *lab = malloc(n * sizeof *lab);
  float *x = blobs(n, d, k, 1.0f, lab);
  float *cent = malloc(k * d * sizeof *cent);
  vf_error err;
  vf_set_progress_handler(km_progress, NULL);
  idx_kmeans_opts o = {.iters = 6, .seed = 3, .threads = 1};
  g_km_events = 0;
  CHECK_OK(idx_kmeans(x, n, d, k, &o, cent, NULL, &err));
  CHECK_EQ_INT(g_km_events, 0); /* no progress phase: silent */
  o.progress = "test";
  CHECK_OK(idx_kmeans(x, n, d, k, &o, cent, NULL, &err));
  CHECK(g_km_events >= 1); /* the last iteration at least (the others may be throttled) */
  CHECK_EQ_INT(g_km_last, 6);
  CHECK_EQ_INT(g_km_total, 6);
  CHECK(g_km_obj[g_km_events - 1] > 0);
  for (int i = 1; i < g_km_events; i++) CHECK(g_km_obj[i] <= g_km_obj[i - 1] * (1 + 1e-6));
  vf_cancel_request(0);
  CHECK_STATUS(idx_kmeans(x, n, d, k, &o, cent, NULL, &err), VF_ECANCELED);
  CHECK_EQ_STR(err.msg, "interrupted");
  vf_cancel_reset();
  CHECK_OK(idx_kmeans(x, n, d, k, &o, cent, NULL, &err));
  vf_set_progress_handler(NULL, NULL);
  free(lab);
  free(x);
  free(cent);
}

/* issue 17: early stop once assignments settle, and a training subsample capped per centroid */
static int g_changed_n;
static size_t g_changed[256];
static void km_changed(void *user, const vf_progress *p) {
  (void)user;
  size_t c = 0, n = 0;
  const char *s = p->detail ? strstr(p->detail, ", ") : NULL;
  if (s && sscanf(s, ", %zu of %zu rows changed list", &c, &n) == 2 && g_changed_n < 256)
    g_changed[g_changed_n++] = c;
}

VF_TEST(kmeans_early_stop) {
  rs = 11;
  size_t n = 8000, d = 16, k = 40;
  uint32_t *lab = malloc(n * sizeof *lab);
  float *x = blobs(n, d, 40, 1.5f, lab);
  float *c1 = malloc(k * d * sizeof *c1), *c2 = malloc(k * d * sizeof *c2);
  uint32_t *a1 = malloc(n * sizeof *a1), *a2 = malloc(n * sizeof *a2);
  int it1 = 0, it2 = 0, itall = 0;
  /* every iteration (the default of idx_kmeans: stop_changed 0) */
  idx_kmeans_opts o = {.iters = 60, .seed = 5, .threads = 1, .iters_run = &itall};
  CHECK_OK(idx_kmeans(x, n, d, k, &o, c1, a1, NULL));
  CHECK_EQ_INT(itall, 60);
  /* 0.1 %: settles well before 60 on separable blobs; the same for 1 and 2 threads */
  vf_set_progress_handler(km_changed, NULL);
  g_changed_n = 0;
  idx_kmeans_opts o1 = {.iters = 60, .seed = 5, .threads = 1, .stop_changed = 0.001,
                        .iters_run = &it1, .progress = "test"};
  idx_kmeans_opts o2 = {.iters = 60, .seed = 5, .threads = 2, .stop_changed = 0.001,
                        .iters_run = &it2};
  CHECK_OK(idx_kmeans(x, n, d, k, &o1, c1, a1, NULL));
  vf_set_progress_handler(NULL, NULL);
  CHECK_OK(idx_kmeans(x, n, d, k, &o2, c2, a2, NULL));
  CHECK(it1 >= 2 && it1 < 60);
  CHECK_EQ_INT(it1, it2);
  CHECK(memcmp(c1, c2, k * d * sizeof *c1) == 0);
  CHECK(memcmp(a1, a2, n * sizeof *a1) == 0);
  /* the last progress event names the count that stopped it (<= 0.1 % of 8000) */
  CHECK(g_changed_n >= 1);
  if (g_changed_n >= 1) CHECK(g_changed[g_changed_n - 1] <= 8);

  /* a tiny threshold stops only at a fixed point: the same centroids as running every iteration */
  int itfix = 0;
  idx_kmeans_opts of = {.iters = 60, .seed = 5, .threads = 2, .stop_changed = 1e-12, .iters_run = &itfix};
  CHECK_OK(idx_kmeans(x, n, d, k, &of, c2, a2, NULL));
  CHECK(itfix <= 60);
  if (itfix < 60) {
    o.iters_run = NULL;
    CHECK_OK(idx_kmeans(x, n, d, k, &o, c1, a1, NULL));
    CHECK(memcmp(c1, c2, k * d * sizeof *c1) == 0);
    CHECK(memcmp(a1, a2, n * sizeof *a1) == 0);
  }
  free(lab);
  free(x);
  free(c1);
  free(c2);
  free(a1);
  free(a2);
}

/* issue 17 item 3: the objective rule stops where the changed-row rule does not (overlapping
 * blobs: rows keep moving between neighbouring clusters), the same for 1 and 2 threads, and
 * stopping after iteration i keeps that iteration's update: the result equals running i. */
static char g_last_detail[256];
static void km_detail(void *user, const vf_progress *p) {
  (void)user;
  if (p->detail) snprintf(g_last_detail, sizeof g_last_detail, "%s", p->detail);
}

VF_TEST(kmeans_objective_stop) {
  rs = 17;
  size_t n = 8000, d = 16, k = 64;
  uint32_t *lab = malloc(n * sizeof *lab);
  float *x = blobs(n, d, 16, 6.0f, lab); /* 64 centroids over 16 wide blobs */
  float *c1 = malloc(k * d * sizeof *c1), *c2 = malloc(k * d * sizeof *c2);
  uint32_t *a1 = malloc(n * sizeof *a1), *a2 = malloc(n * sizeof *a2);
  int it1 = 0, it2 = 0, itc = 0;
  idx_kmeans_opts oc = {.iters = 60, .seed = 3, .threads = 1, .stop_changed = 0.001, .iters_run = &itc};
  CHECK_OK(idx_kmeans(x, n, d, k, &oc, c1, a1, NULL));
  g_last_detail[0] = 0;
  vf_set_progress_handler(km_detail, NULL);
  idx_kmeans_opts o1 = {.iters = 60, .seed = 3, .threads = 1, .stop_objective = 0.003,
                        .iters_run = &it1, .progress = "test"};
  CHECK_OK(idx_kmeans(x, n, d, k, &o1, c1, a1, NULL));
  vf_set_progress_handler(NULL, NULL);
  idx_kmeans_opts o2 = {.iters = 60, .seed = 3, .threads = 2, .stop_objective = 0.003, .iters_run = &it2};
  CHECK_OK(idx_kmeans(x, n, d, k, &o2, c2, a2, NULL));
  if (!(it1 >= 2 && it1 < itc))
    vf_test_fail(__FILE__, __LINE__, "objective stop after %d iterations, changed-row stop after %d", it1, itc);
  CHECK(strstr(g_last_detail, "objective settled: stopping") != NULL);
  CHECK_EQ_INT(it1, it2);
  CHECK(memcmp(c1, c2, k * d * sizeof *c1) == 0);
  CHECK(memcmp(a1, a2, n * sizeof *a1) == 0);
  /* running exactly it1 iterations without a stop rule gives the same centroids */
  idx_kmeans_opts on = {.iters = it1, .seed = 3, .threads = 2};
  CHECK_OK(idx_kmeans(x, n, d, k, &on, c2, a2, NULL));
  CHECK(memcmp(c1, c2, k * d * sizeof *c1) == 0);
  free(lab);
  free(x);
  free(c1);
  free(c2);
  free(a1);
  free(a2);
}

VF_TEST(kmeans_sample_cap_per_centroid) {
  rs = 13;
  size_t n = 6000, d = 8, k = 20;
  uint32_t *lab = malloc(n * sizeof *lab);
  float *x = blobs(n, d, 20, 0.3f, lab);
  float *c1 = malloc(k * d * sizeof *c1), *c2 = malloc(k * d * sizeof *c2);
  uint32_t *a1 = malloc(n * sizeof *a1), *a2 = malloc(n * sizeof *a2);
  size_t used1 = 0, used2 = 0, usedall = 0;
  idx_kmeans_opts o1 = {.iters = 8, .seed = 2, .threads = 1, .max_per_centroid = 50, .rows_used = &used1};
  idx_kmeans_opts o2 = {.iters = 8, .seed = 2, .threads = 2, .max_per_centroid = 50, .rows_used = &used2};
  CHECK_OK(idx_kmeans(x, n, d, k, &o1, c1, a1, NULL));
  CHECK_OK(idx_kmeans(x, n, d, k, &o2, c2, a2, NULL));
  CHECK_EQ_INT(used1, 1000); /* 20 x 50 of the 6000 rows */
  CHECK_EQ_INT(used2, 1000);
  CHECK(memcmp(c1, c2, k * d * sizeof *c1) == 0);
  CHECK(memcmp(a1, a2, n * sizeof *a1) == 0);
  /* the assignment covers every row: each sits nearest its centroid */
  for (size_t i = 0; i < n; i += 37) {
    float best = INFINITY;
    uint32_t bi = 0;
    for (uint32_t j = 0; j < k; j++) {
      float dd = 0;
      for (size_t e = 0; e < d; e++)
        dd += (x[i * d + e] - c1[j * d + e]) * (x[i * d + e] - c1[j * d + e]);
      if (dd < best) {
        best = dd;
        bi = j;
      }
    }
    CHECK_EQ_INT(a1[i], bi);
  }
  /* a cap above rows/k leaves the input whole */
  idx_kmeans_opts o3 = {.iters = 8, .seed = 2, .threads = 1, .max_per_centroid = 300, .rows_used = &usedall};
  CHECK_OK(idx_kmeans(x, n, d, k, &o3, c2, NULL, NULL));
  CHECK_EQ_INT(usedall, n);
  free(lab);
  free(x);
  free(c1);
  free(c2);
  free(a1);
  free(a2);
}

/* the two-level k-means: every centroid placed (no empty list on separable blobs), the same
 * centroids and assignment at 1 and 3 threads, an objective close to flat Lloyd's, and the cap
 * and refinement counts reported */
static double objective(const float *x, size_t n, size_t d, const float *c, const uint32_t *as) {
  double s = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t e = 0; e < d; e++) {
      double v = (double)x[i * d + e] - (double)c[as[i] * d + e];
      s += v * v;
    }
  return s;
}

VF_TEST(kmeans_hierarchical) {
  rs = 21;
  size_t n = 12000, d = 16, k = 100;
  uint32_t *lab = malloc(n * sizeof *lab);
  float *x = blobs(n, d, 100, 0.5f, lab);
  float *c1 = malloc(k * d * sizeof *c1), *c2 = malloc(k * d * sizeof *c2), *cf = malloc(k * d * sizeof *cf);
  uint32_t *a1 = malloc(n * sizeof *a1), *a2 = malloc(n * sizeof *a2), *af = malloc(n * sizeof *af);
  int it1 = -1, it2 = -1;
  size_t used = 0;
  idx_kmeans_opts o1 = {.iters = 20, .seed = 5, .threads = 1, .hier_min_k = 64, .hier_refine = 2,
                        .max_per_centroid = 100, .iters_run = &it1, .rows_used = &used};
  idx_kmeans_opts o2 = o1;
  o2.threads = 3;
  o2.iters_run = &it2;
  CHECK_OK(idx_kmeans(x, n, d, k, &o1, c1, a1, NULL));
  CHECK_OK(idx_kmeans(x, n, d, k, &o2, c2, a2, NULL));
  CHECK(memcmp(c1, c2, k * d * sizeof *c1) == 0);
  CHECK(memcmp(a1, a2, n * sizeof *a1) == 0);
  CHECK_EQ_INT(used, 10000); /* 100 x 100 of the 12000 rows */
  CHECK_EQ_INT(it1, 2);      /* the refinement iterations */
  CHECK_EQ_INT(empty_clusters(a1, n, k), 0);
  /* flat Lloyd (k-means++ seeded) on the same rows: the two-level objective is within 20 % */
  idx_kmeans_opts of = {.iters = 20, .seed = 5, .threads = 1, .max_per_centroid = 100};
  CHECK_OK(idx_kmeans(x, n, d, k, &of, cf, af, NULL));
  double oh = objective(x, n, d, c1, a1), ofl = objective(x, n, d, cf, af);
  CHECK(oh <= 1.20 * ofl); /* 1.13 here: 100 separate blobs are the worst case for rounded
                             shares (a coarse cluster of 3.4 blobs gets 3 or 4 centroids) */
  /* below the threshold the flat path runs: the same result as without the option */
  o1.hier_min_k = 101;
  CHECK_OK(idx_kmeans(x, n, d, k, &o1, c2, a2, NULL));
  CHECK(memcmp(cf, c2, k * d * sizeof *cf) == 0);
  /* no refinement: the split centroids alone, still every one used */
  o1.hier_min_k = 64;
  o1.hier_refine = 0;
  CHECK_OK(idx_kmeans(x, n, d, k, &o1, c2, a2, NULL));
  CHECK_EQ_INT(it1, 0);
  CHECK(objective(x, n, d, c2, a2) <= 1.40 * ofl);
  free(lab);
  free(x);
  free(c1);
  free(c2);
  free(cf);
  free(a1);
  free(a2);
  free(af);
}
