/* Filtered search in the local store (store_search_filtered): the exact scan returns the top k of
 * the matching points only (checked against brute force over the payloads with flt_match_json),
 * keyword / integer / array / missing / has_id filters, fewer than k hits, a re-sent id whose new
 * payload no longer matches, unfiltered queries of a filtered batch, the same answers through the
 * IVF index at full probe and the discard store's refusal. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/filter.h"
#include "vforge/index.h"
#include "vforge/store.h"

#define N 600
#define D 8
#define K 10

static float g_v[N * D];
static char g_pay[N][96];

static void payload_of(size_t i, int version, char *out, size_t cap) {
  if (i % 11 == 0) snprintf(out, cap, "{\"n\": %zu}", i); /* no label */
  else snprintf(out, cap, "{\"label\": \"c%zu\", \"n\": %zu, \"tags\": [\"t%zu\", \"v%d\"]}", i % 4, i,
                i % 3, version);
}

static vf_status upsert(store *s, size_t from, size_t n, int version, vf_error *err) {
  corpus_id *ids = calloc(n, sizeof *ids);
  int64_t *po = calloc(n + 1, sizeof *po);
  vf_buf pl;
  vf_buf_init(&pl, 0);
  for (size_t i = 0; i < n; i++) {
    ids[i].num = from + i;
    payload_of(from + i, version, g_pay[from + i], sizeof g_pay[0]);
    vf_buf_append(&pl, g_pay[from + i], strlen(g_pay[from + i]), err);
    po[i + 1] = (int64_t)pl.len;
  }
  corpus_vec_batch v = {.name = "v", .kind = CORPUS_VEC_DENSE, .distance = CORPUS_EUCLID, .dim = D,
                        .dense = g_v + from * D};
  corpus_batch b = {.n = n, .ids = ids, .nvectors = 1, .vectors = &v, .payload = pl, .payload_offsets = po};
  vf_status st = store_upsert(s, &b, err);
  if (st == VF_OK) st = store_flush(s, err);
  free(ids);
  free(po);
  vf_buf_free(&pl);
  return st;
}

/* top k of the matching points by brute force: returns the count */
static size_t expected(const flt_filter *f, const float *q, idx_hit *out) {
  idx_topk t;
  vf_error err;
  idx_topk_init(&t, K, NULL, NULL, NULL);
  for (size_t i = 0; i < N; i++) {
    bool m = false;
    corpus_id id = {.num = i};
    flt_match_json(f, g_pay[i], strlen(g_pay[i]), &id, &m, &err);
    if (m) idx_topk_push(&t, -idx_l2(q, g_v + i * D, D), (int64_t)i);
  }
  size_t n = idx_topk_sorted(&t, out);
  idx_topk_free(&t);
  return n;
}

static void check_search(store *s, const char *const *ftexts, size_t nf, const float *q, const char *what) {
  vf_error err;
  flt_filter **fs = calloc(nf, sizeof *fs);
  for (size_t i = 0; i < nf; i++)
    if (ftexts[i]) CHECK_OK(flt_parse(ftexts[i], strlen(ftexts[i]), "t", &fs[i], &err));
  store_results r;
  vf_status st = store_search_filtered(s, "v", q, nf, D, K, (const flt_filter *const *)fs, &r, &err);
  if (st != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "%s: %s", what, err.msg);
    free(fs);
    return;
  }
  for (size_t i = 0; i < nf; i++) {
    idx_hit want[K];
    size_t nw;
    flt_filter *all = NULL;
    if (!fs[i]) CHECK_OK(flt_parse("{}", 2, "t", &all, &err));
    nw = expected(fs[i] ? fs[i] : all, q + i * D, want);
    flt_free(all);
    if (r.counts[i] != nw) {
      vf_test_fail(__FILE__, __LINE__, "%s: query %zu (%s): %zu hits, want %zu", what, i,
                   ftexts[i] ? ftexts[i] : "none", r.counts[i], nw);
      continue;
    }
    for (size_t h = 0; h < nw; h++)
      if (r.hits[i * K + h].id.num != (uint64_t)want[h].key ||
          fabsf(r.hits[i * K + h].score - want[h].score) > 1e-4f)
        vf_test_fail(__FILE__, __LINE__, "%s: query %zu hit %zu: id %llu, want %lld", what, i, h,
                     (unsigned long long)r.hits[i * K + h].id.num, (long long)want[h].key);
  }
  store_results_free(&r);
  for (size_t i = 0; i < nf; i++) flt_free(fs[i]);
  free(fs);
}

static const char *const FILTERS[] = {
    "{\"must\": [{\"key\": \"label\", \"match\": {\"value\": \"c1\"}}]}",
    "{\"must\": [{\"key\": \"n\", \"range\": {\"gte\": 100, \"lt\": 105}}]}",
    "{\"must\": [{\"key\": \"tags\", \"match\": {\"value\": \"t2\"}}, {\"key\": \"label\", \"match\": {\"any\": [\"c0\", \"c3\"]}}]}",
    "{\"must\": [{\"is_empty\": {\"key\": \"label\"}}]}",
    "{\"must\": [{\"has_id\": [3, 5, 7, 590]}]}",
    "{\"must\": [{\"key\": \"label\", \"match\": {\"value\": \"none\"}}]}",
    NULL, /* an unfiltered query of the batch */
    "{\"should\": [{\"key\": \"tags\", \"match\": {\"value\": \"v2\"}}, {\"key\": \"n\", \"range\": {\"lt\": 3}}]}",
};
#define NF (sizeof FILTERS / sizeof FILTERS[0])

VF_TEST(test_local_filtered) {
  uint64_t s0 = 11;
  for (size_t i = 0; i < N * D; i++) {
    s0 = s0 * 6364136223846793005ull + 1442695040888963407ull;
    g_v[i] = (float)((s0 >> 33) % 1000) / 1000.0f;
  }
  float q[NF * D];
  for (size_t i = 0; i < NF * D; i++) q[i] = g_v[(i * 37) % (N * D)] + 0.01f;
  store_vector_spec vs = {"v", CORPUS_VEC_DENSE, CORPUS_EUCLID, D};
  store_config cfg = {.type = "local", .path = vf_test_tmpdir(), .collection_name = "flt",
                      .vectors = &vs, .nvectors = 1};
  store *s = NULL;
  vf_error err;
  CHECK_OK(store_open(&cfg, &s, &err));
  if (!s) return;
  CHECK_OK(store_ensure_collection(s, &err));
  CHECK_OK(upsert(s, 0, N, 1, &err));
  check_search(s, FILTERS, NF, q, "exact scan");
  /* re-send ids 0..99 with a new payload (tags v2): the filter sees the newest payload */
  CHECK_OK(upsert(s, 0, 100, 2, &err));
  check_search(s, FILTERS, NF, q, "after re-sent ids");
  /* one query at a time (bench's call) */
  for (size_t i = 0; i < NF; i++) check_search(s, FILTERS + i, 1, q + i * D, "single query");
  store_close(s);
  /* through the IVF index (finalize builds it), at full probe the answers are the exact ones */
  cfg.params_json = "{\"index\": {\"type\": \"flat\", \"nlist\": 12, \"nprobe\": 12, \"min_rows\": 100}}";
  CHECK_OK(store_open(&cfg, &s, &err));
  if (!s) return;
  CHECK_OK(store_enable_indexing(s, &err));
  check_search(s, FILTERS, NF, q, "IVF index (full probe)");
  store_close(s);
  /* discard cannot filter */
  store_config dc = {.type = "discard", .collection_name = "d", .vectors = &vs, .nvectors = 1};
  CHECK_OK(store_open(&dc, &s, &err));
  flt_filter *f = NULL;
  CHECK_OK(flt_parse(FILTERS[0], strlen(FILTERS[0]), "t", &f, &err));
  store_results r;
  CHECK_STATUS(store_search_filtered(s, "v", q, 1, D, K, (const flt_filter *const *)&f, &r, &err), VF_EUNSUPPORTED);
  flt_free(f);
  store_close(s);
}
