/* Top-K selection against a full sort: many ties (quantised scores), random arrival order,
 * numeric and caller-provided (string id) tie orders, k larger than the candidate count. */
#include <stdlib.h>

#include "vf_test.h"
#include "vforge/index.h"

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return rs;
}

typedef struct {
  float score;
  int64_t key;
} cand;

static const char *const *g_names; /* for the string tie order */

static int by_name(const void *user, int64_t a, int64_t b) {
  const char *const *names = user;
  return strcmp(names[a], names[b]);
}

static int cmp_num(const void *x, const void *y) {
  const cand *a = x, *b = y;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_name(const void *x, const void *y) {
  const cand *a = x, *b = y;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return strcmp(g_names[a->key], g_names[b->key]);
}

static void run_case(size_t n, size_t k, int levels, bool names_order) {
  cand *c = malloc(n * sizeof *c);
  char **names = malloc(n * sizeof *names);
  float *scores = malloc(n * sizeof *scores);
  int64_t *keys = malloc(n * sizeof *keys);
  for (size_t i = 0; i < n; i++) {
    names[i] = malloc(16);
    snprintf(names[i], 16, "id-%08x", (unsigned)(rnd() & 0xffffff));
    c[i].key = (int64_t)i;
    c[i].score = (float)(rnd() % (uint64_t)levels) / 7.0f;
  }
  /* shuffle the arrival order */
  for (size_t i = n; i > 1; i--) {
    size_t j = rnd() % i;
    cand t = c[i - 1];
    c[i - 1] = c[j];
    c[j] = t;
  }
  for (size_t i = 0; i < n; i++) {
    scores[i] = c[i].score;
    keys[i] = c[i].key;
  }
  idx_topk t;
  vf_error err;
  g_names = (const char *const *)names;
  CHECK_OK(idx_topk_init(&t, k, names_order ? by_name : NULL, names, &err));
  /* half one by one, half batched */
  size_t half = n / 2;
  for (size_t i = 0; i < half; i++)
    idx_topk_push(&t, scores[i], keys[i]);
  idx_topk_push_batch(&t, scores + half, n - half, keys + half, 0, NULL);
  idx_hit *got = malloc(k * sizeof *got);
  size_t m = idx_topk_sorted(&t, got);
  qsort(c, n, sizeof *c, names_order ? cmp_name : cmp_num);
  size_t want = k < n ? k : n;
  CHECK_EQ_INT(m, want);
  for (size_t i = 0; i < m && i < want; i++)
    if (got[i].key != c[i].key || got[i].score != c[i].score) {
      vf_test_fail(__FILE__, __LINE__, "n=%zu k=%zu rank %zu: got (%g,%lld) want (%g,%lld)", n, k,
                   i, got[i].score, (long long)got[i].key, c[i].score, (long long)c[i].key);
      break;
    }
  CHECK_EQ_INT(t.n, 0); /* left empty, reusable */
  idx_topk_free(&t);
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
  free(c);
  free(scores);
  free(keys);
  free(got);
}

VF_TEST(topk_equals_full_sort) {
  size_t ns[] = {1, 2, 10, 100, 1000, 5000};
  size_t ks[] = {1, 3, 10, 100, 1000};
  for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
    for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++) {
      run_case(ns[a], ks[b], 5, false);       /* heavy ties */
      run_case(ns[a], ks[b], 1000000, false); /* few ties */
      run_case(ns[a], ks[b], 3, true);        /* ties by caller order */
    }
}

VF_TEST(topk_skip_mask_and_nan) {
  idx_topk t;
  vf_error err;
  CHECK_OK(idx_topk_init(&t, 3, NULL, NULL, &err));
  float s[6] = {5, NAN, 4, 9, 1, 9};
  uint8_t skip[6] = {0, 0, 0, 1, 0, 0};
  idx_topk_push_batch(&t, s, 6, NULL, 100, skip);
  idx_hit h[3];
  CHECK_EQ_INT(idx_topk_sorted(&t, h), 3);
  CHECK(h[0].score == 9 && h[0].key == 105);
  CHECK(h[1].score == 5 && h[1].key == 100);
  CHECK(h[2].score == 4 && h[2].key == 102);
  idx_topk_free(&t);
  CHECK_STATUS(idx_topk_init(&t, 0, NULL, NULL, &err), VF_EUSAGE);
}
