/* idx_kmeans(): separable blobs are found, the result does not depend on the thread count,
 * degenerate inputs (duplicates -> empty clusters, n < k) are handled. */
#include <stdlib.h>

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
    size_t *cnt = calloc(k, sizeof *cnt);
    for (size_t i = 0; i < n; i++)
      cnt[a1[i]]++;
    size_t empty = 0;
    for (size_t j = 0; j < k; j++)
      empty += cnt[j] == 0;
    if (k == 50) CHECK_EQ_INT(empty, 0);
    free(cnt);
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
