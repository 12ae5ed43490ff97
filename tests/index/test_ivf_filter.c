/* Filtered IVF search (ivf_search_opts.allow): a row that is not allowed is never returned, for
 * every code type (and re-rank); with nprobe 1 a selective filter widens the probe until k
 * allowed hits are found, so a flat index returns exactly the top k of the allowed rows (the
 * exact-search answer over them); a filter allowing fewer than k rows returns all of them; an
 * allow mask of NULL for one query of a batch leaves that query unfiltered (nprobe lists only). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/index.h"
#include "vforge/ivf.h"

#define N 4000
#define D 16
#define NQ 20
#define K 10

static uint64_t rs = 77;
static float frand(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (float)((double)(rs >> 11) / 9007199254740992.0) - 0.5f;
}

static float g_x[N * D], g_q[NQ * D];
static char *g_ids[N];
static size_t g_len[N];

static const char *build(ivf_code type, uint32_t rerank, const char *name) {
  static char path[4][512];
  static int k;
  char *p = path[k++ % 4];
  snprintf(p, 512, "%s/%s", vf_test_tmpdir(), name);
  ivf_params ip = {.type = type, .metric = CORPUS_EUCLID, .dim = D, .nlist = 40, .pq_m = 4,
                   .rerank = rerank, .seed = 3, .threads = 1};
  ivf_builder *b = NULL;
  vf_error err;
  CHECK_OK(ivf_builder_open(&ip, p, N, &b, &err));
  if (!b) return NULL;
  CHECK_OK(ivf_builder_add(b, g_x, N, (const char *const *)g_ids, g_len, &err));
  CHECK_OK(ivf_builder_finish(b, NULL, &err));
  return p;
}

/* the row of an index row key: ids are "r<row>" */
static long row_of(const ivf_index *ix, int64_t key) {
  size_t len = 0;
  const char *id = ivf_id(ix, key, &len);
  return strtol(id + 1, NULL, 10);
}

VF_TEST(test_allow_masks) {
  for (size_t i = 0; i < N * D; i++) g_x[i] = frand();
  for (size_t i = 0; i < NQ * D; i++) g_q[i] = frand();
  for (size_t i = 0; i < N; i++) {
    char b[16];
    g_len[i] = (size_t)snprintf(b, sizeof b, "r%zu", i);
    g_ids[i] = strdup(b);
  }
  static const ivf_code types[] = {IVF_FLAT, IVF_SQ8, IVF_PQ, IVF_RABITQ};
  for (int t = 0; t < 4; t++) {
    char name[32];
    snprintf(name, sizeof name, "f%d.ivf", t);
    const char *path = build(types[t], types[t] == IVF_FLAT ? 0 : 4, name);
    ivf_index *ix = NULL;
    vf_error err;
    CHECK_OK(ivf_open(path, &ix, &err));
    if (!ix) continue;
    ivf_info in;
    ivf_info_get(ix, &in);
    /* index rows are the order rows were added: build the masks over index rows via the ids */
    uint8_t *allow_mem = calloc((size_t)NQ * in.rows, 1);
    const uint8_t *allow[NQ];
    size_t nallowed[NQ];
    for (size_t q = 0; q < NQ; q++) {
      uint8_t *a = allow_mem + q * in.rows;
      nallowed[q] = 0;
      for (uint64_t r = 0; r < in.rows; r++) {
        long row = row_of(ix, (int64_t)r);
        /* query q allows a 0.2 % .. 2 % slice of the rows, query 3 only 4 rows */
        a[r] = (uint8_t)(q == 3 ? row % 1000 == 7 : (size_t)row % (50 + 25 * q) == q);
        nallowed[q] += a[r];
      }
      allow[q] = q == 5 ? NULL : a; /* query 5: unfiltered */
    }
    idx_hit hits[NQ * K];
    size_t counts[NQ];
    ivf_search_opts so = {.nprobe = 1, .threads = 2, .allow = allow};
    CHECK_OK(ivf_search(ix, g_q, NQ, D, K, &so, hits, counts, &err));
    for (size_t q = 0; q < NQ; q++) {
      size_t want = q == 5 ? counts[q] : (nallowed[q] < K ? nallowed[q] : K);
      if (counts[q] != want)
        vf_test_fail(__FILE__, __LINE__, "type %d query %zu: %zu hits, want %zu (%zu allowed)", t, q, counts[q], want, nallowed[q]);
      for (size_t i = 0; q != 5 && i < counts[q]; i++)
        if (!allow[q][hits[q * K + i].key])
          vf_test_fail(__FILE__, __LINE__, "type %d query %zu: hit %zu is not allowed", t, q, i);
    }
    if (types[t] == IVF_FLAT) {
      /* flat: widened until k allowed hits, the answer is the exact top k of the allowed rows,
       * unless a better allowed row sits in a list after the one where k were found (then it
       * is missed, as in any IVF search) -- so compare with nprobe = nlist */
      idx_hit full[NQ * K];
      size_t fc[NQ];
      ivf_search_opts all = {.nprobe = in.nlist, .threads = 1, .allow = allow};
      CHECK_OK(ivf_search(ix, g_q, NQ, D, K, &all, full, fc, &err));
      for (size_t q = 0; q < NQ; q++) {
        if (q == 5) continue;
        /* exact over the allowed rows */
        idx_topk tk;
        CHECK_OK(idx_topk_init(&tk, K, NULL, NULL, NULL));
        for (uint64_t r = 0; r < in.rows; r++) {
          if (!allow[q][r]) continue;
          long row = row_of(ix, (int64_t)r);
          idx_topk_push(&tk, -idx_l2(g_q + q * D, g_x + (size_t)row * D, D), (int64_t)r);
        }
        idx_hit ex[K];
        size_t ne = idx_topk_sorted(&tk, ex);
        idx_topk_free(&tk);
        CHECK_EQ_INT(fc[q], ne);
        for (size_t i = 0; i < ne && i < fc[q]; i++)
          if (fabsf(full[q * K + i].score - ex[i].score) > 1e-4f * (1 + fabsf(ex[i].score)))
            vf_test_fail(__FILE__, __LINE__, "flat query %zu hit %zu: score %g, exact %g", q, i,
                         (double)full[q * K + i].score, (double)ex[i].score);
      }
      /* the unfiltered query of the filtered batch equals an unfiltered search */
      idx_hit u[K];
      size_t uc;
      ivf_search_opts none = {.nprobe = 1, .threads = 1};
      CHECK_OK(ivf_search(ix, g_q + 5 * D, 1, D, K, &none, u, &uc, &err));
      CHECK_EQ_INT(uc, counts[5]);
      for (size_t i = 0; i < uc && i < counts[5]; i++) CHECK_EQ_INT(u[i].key, hits[5 * K + i].key);
    }
    free(allow_mem);
    ivf_close(ix);
  }
  for (size_t i = 0; i < N; i++) free(g_ids[i]);
}
