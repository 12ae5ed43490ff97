/* The `local` store: create, upsert (with re-sent ids), exact count, compaction, exact search
 * against a brute force computed here, reopen, concurrent writers, schema mismatch; and the
 * `discard` store.  With VF_STORE_EXPORT=<dir>, `export_for_duckdb` writes a compacted store
 * (dense + multivector + sparse + payload) and <dir>/expected.jsonl for test_duckdb.sh. */
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vf_test.h"
#include "vforge/format.h"
#include "vforge/index.h"
#include "vforge/store.h"

enum { D = 13, DM = 3 };

static uint64_t rs = 0x1234567887654321ull;
static float frnd(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (float)((double)(rs >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

/* A hand-built batch: ids from `ids`, a dense vector "dense" (values from gen), optionally a
 * multivector "colbert" (row i has i%3 vectors) and a sparse "sparse" (row i has i%4 entries),
 * payload {"i":<id>,"v":<version>} (none for version 0). */
typedef struct tbatch {
  corpus_batch b;
  corpus_vec_batch v[3];
  float *dense, *multi, *values;
  int64_t *moffs, *soffs;
  uint32_t *indices;
  corpus_id *ids;
  int64_t *poffs;
} tbatch;

static void make_id(uint64_t k, corpus_id *id) {
  memset(id, 0, sizeof *id);
  if (k % 5 == 4) { /* every fifth point has a UUID id */
    char key[32];
    snprintf(key, sizeof key, "k%llu", (unsigned long long)k);
    corpus_point_id(key, strlen(key), k, id->uuid);
    id->is_uuid = true;
  } else {
    id->num = k % 7 == 3 ? UINT64_MAX - k : k; /* some beyond INT64_MAX */
  }
}

static void tb_make(tbatch *t, const uint64_t *keys, size_t n, int version, bool extra,
                    corpus_distance dist) {
  memset(t, 0, sizeof *t);
  t->ids = calloc(n, sizeof *t->ids);
  t->dense = malloc(n * D * sizeof(float));
  t->poffs = calloc(n + 1, sizeof *t->poffs);
  vf_buf_init(&t->b.payload, 0);
  for (size_t i = 0; i < n; i++) {
    make_id(keys[i], &t->ids[i]);
    for (int j = 0; j < D; j++)
      t->dense[i * D + j] = frnd();
    if (version > 0) {
      vf_buf_printf(&t->b.payload, NULL, "{\"i\":%llu,\"v\":%d}", (unsigned long long)keys[i],
                    version);
    }
    t->poffs[i + 1] = (int64_t)t->b.payload.len;
  }
  t->v[0] = (corpus_vec_batch){
      .name = "dense", .kind = CORPUS_VEC_DENSE, .distance = dist, .dim = D, .dense = t->dense};
  t->b.nvectors = 1;
  if (extra) {
    t->moffs = calloc(n + 1, sizeof *t->moffs);
    t->soffs = calloc(n + 1, sizeof *t->soffs);
    for (size_t i = 0; i < n; i++) {
      t->moffs[i + 1] = t->moffs[i] + (int64_t)(i % 3);
      t->soffs[i + 1] = t->soffs[i] + (int64_t)(i % 4);
    }
    t->multi = malloc((size_t)(t->moffs[n] * DM + 1) * sizeof(float));
    for (int64_t i = 0; i < t->moffs[n] * DM; i++)
      t->multi[i] = frnd();
    t->indices = malloc((size_t)(t->soffs[n] + 1) * sizeof(uint32_t));
    t->values = malloc((size_t)(t->soffs[n] + 1) * sizeof(float));
    for (int64_t i = 0; i < t->soffs[n]; i++) {
      t->indices[i] = (uint32_t)(i * 7 + 1);
      t->values[i] = frnd();
    }
    t->v[1] = (corpus_vec_batch){.name = "colbert",
                                 .kind = CORPUS_VEC_MULTI,
                                 .distance = CORPUS_COSINE,
                                 .dim = DM,
                                 .offsets = t->moffs,
                                 .multi = t->multi};
    t->v[2] = (corpus_vec_batch){.name = "sparse",
                                 .kind = CORPUS_VEC_SPARSE,
                                 .distance = CORPUS_DOT,
                                 .offsets = t->soffs,
                                 .indices = t->indices,
                                 .values = t->values};
    t->b.nvectors = 3;
  }
  t->b.n = n;
  t->b.ids = t->ids;
  t->b.vectors = t->v;
  t->b.payload_offsets = t->poffs;
  t->b.file_key = "test";
}

static void tb_free(tbatch *t) {
  free(t->ids);
  free(t->dense);
  free(t->multi);
  free(t->values);
  free(t->indices);
  free(t->moffs);
  free(t->soffs);
  free(t->poffs);
  vf_buf_free(&t->b.payload);
}

static store_vector_spec g_specs[3];
static store_config make_cfg(const char *path, const char *name, corpus_distance dist, bool extra) {
  g_specs[0] = (store_vector_spec){"dense", CORPUS_VEC_DENSE, dist, D};
  g_specs[1] = (store_vector_spec){"colbert", CORPUS_VEC_MULTI, CORPUS_COSINE, DM};
  g_specs[2] = (store_vector_spec){"sparse", CORPUS_VEC_SPARSE, CORPUS_DOT, 0};
  store_config c;
  memset(&c, 0, sizeof c);
  c.type = "local";
  c.path = path;
  c.collection_name = name;
  c.vectors = g_specs;
  c.nvectors = extra ? 3 : 1;
  c.segment_rows = 50;         /* several segments per writer */
  c.row_group_bytes = 16 * 64; /* several row groups per segment */
  return c;
}

/* the model: newest dense vector per key */
typedef struct model {
  size_t nkeys;
  float *vec; /* nkeys * D */
  uint8_t *has;
} model;

static void model_apply(model *m, const uint64_t *keys, size_t n, const float *dense) {
  for (size_t i = 0; i < n; i++) {
    memcpy(m->vec + keys[i] * D, dense + i * D, D * sizeof(float));
    m->has[keys[i]] = 1;
  }
}

static size_t model_count(const model *m) {
  size_t c = 0;
  for (size_t k = 0; k < m->nkeys; k++)
    c += m->has[k];
  return c;
}

typedef struct bf_hit {
  double score;
  corpus_id id;
} bf_hit;

static int bf_cmp(const void *x, const void *y) {
  const bf_hit *a = x, *b = y;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return store_id_cmp(&a->id, &b->id);
}

static double ref_score(corpus_distance dist, const float *q, const float *x) {
  double dot = 0, qq = 0, xx = 0, l2 = 0, l1 = 0;
  for (int j = 0; j < D; j++) {
    dot += (double)q[j] * x[j];
    qq += (double)q[j] * q[j];
    xx += (double)x[j] * x[j];
    l2 += ((double)q[j] - x[j]) * ((double)q[j] - x[j]);
    l1 += fabs((double)q[j] - x[j]);
  }
  switch (dist) {
  case CORPUS_COSINE: return dot / sqrt(qq * xx);
  case CORPUS_DOT: return dot;
  case CORPUS_EUCLID: return -sqrt(l2);
  case CORPUS_MANHATTAN: return -l1;
  }
  return 0;
}

static void check_search(store *s, const model *m, corpus_distance dist, size_t k) {
  enum { NQ = 6 };
  float q[NQ * D];
  for (int i = 0; i < NQ * D; i++)
    q[i] = frnd();
  store_results res;
  vf_error err;
  vf_status st = store_search(s, "dense", q, NQ, D, k, &res, &err);
  CHECK_OK(st);
  if (st != VF_OK) {
    fprintf(stderr, "  %s\n", err.msg);
    return;
  }
  bf_hit *all = malloc(m->nkeys * sizeof *all);
  for (size_t qi = 0; qi < NQ; qi++) {
    size_t n = 0;
    for (size_t key = 0; key < m->nkeys; key++) {
      if (!m->has[key]) continue;
      all[n].score = ref_score(dist, q + qi * D, m->vec + key * D);
      make_id(key, &all[n].id);
      n++;
    }
    qsort(all, n, sizeof *all, bf_cmp);
    size_t want = n < k ? n : k;
    CHECK_EQ_INT(res.counts[qi], want);
    for (size_t i = 0; i < want && i < res.counts[qi]; i++) {
      const store_hit *h = &res.hits[qi * k + i];
      if (store_id_cmp(&h->id, &all[i].id) != 0 || fabs(h->score - all[i].score) > 1e-4) {
        char a[37], b[37];
        store_id_format(&h->id, a);
        store_id_format(&all[i].id, b);
        vf_test_fail(__FILE__, __LINE__, "%s q%zu rank %zu: got %s %.7g want %s %.7g",
                     idx_metric_name(dist), qi, i, a, h->score, b, all[i].score);
        break;
      }
    }
  }
  free(all);
  store_results_free(&res);
}

/* rows stored in every segment of a collection, and each id's occurrences */
static size_t count_rows_on_disk(const char *dir, size_t *distinct) {
  DIR *d = opendir(dir);
  size_t rows = 0;
  corpus_id *seen = NULL;
  size_t nseen = 0;
  struct dirent *de;
  while (d && (de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, "seg-", 4) != 0 || !strstr(de->d_name, ".parquet") ||
        strstr(de->d_name, ".tmp"))
      continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
    io_source *src;
    pqt_file *f;
    vf_error err;
    CHECK_OK(io_open_local(p, &src, &err));
    CHECK_OK(pqt_open(src, NULL, &f, &err));
    int leaf = pqt_find_leaf(f, "id");
    pqt_leaf_data ld;
    pqt_leaf_data_init(&ld);
    for (int g = 0; g < pqt_meta(f)->nrow_groups; g++) {
      CHECK_OK(pqt_read_leaves(f, g, &leaf, 1, &ld, &err));
      for (int64_t r = 0; r < ld.nvalues; r++) {
        corpus_id id;
        CHECK(store_id_parse((const char *)ld.values.data + ld.offsets[r],
                             (size_t)(ld.offsets[r + 1] - ld.offsets[r]), &id));
        seen = realloc(seen, (nseen + 1) * sizeof *seen);
        seen[nseen++] = id;
      }
    }
    rows += (size_t)pqt_meta(f)->num_rows;
    pqt_leaf_data_free(&ld);
    pqt_close(f);
  }
  if (d) closedir(d);
  size_t dist = 0;
  for (size_t i = 0; i < nseen; i++) {
    bool dup = false;
    for (size_t j = 0; j < i && !dup; j++)
      dup = store_id_cmp(&seen[i], &seen[j]) == 0;
    dist += !dup;
  }
  free(seen);
  *distinct = dist;
  return rows;
}

static void upsert_keys(store *s, model *m, uint64_t k0, size_t n, int version,
                        corpus_distance dist, bool extra) {
  uint64_t *keys = malloc(n * sizeof *keys);
  for (size_t i = 0; i < n; i++)
    keys[i] = k0 + i;
  tbatch t;
  tb_make(&t, keys, n, version, extra, dist);
  vf_error err;
  vf_status st = store_upsert(s, &t.b, &err);
  CHECK_OK(st);
  if (st != VF_OK) fprintf(stderr, "  %s\n", err.msg);
  if (m) model_apply(m, keys, n, t.dense);
  tb_free(&t);
  free(keys);
}

VF_TEST(local_upsert_count_compact_search_reopen) {
  const corpus_distance metrics[] = {CORPUS_COSINE, CORPUS_DOT, CORPUS_EUCLID, CORPUS_MANHATTAN};
  for (int mi = 0; mi < 4; mi++) {
    corpus_distance dist = metrics[mi];
    char name[32];
    snprintf(name, sizeof name, "c_%s", idx_metric_name(dist));
    store_config cfg = make_cfg(vf_test_tmpdir(), name, dist, mi == 0);
    store *s;
    vf_error err;
    CHECK_OK(store_open(&cfg, &s, &err));
    CHECK_OK(store_ensure_collection(s, &err));
    CHECK_OK(store_defer_indexing(s, &err));
    model m = {200, calloc(200 * D, sizeof(float)), calloc(200, 1)};
    upsert_keys(s, &m, 0, 40, 1, dist, mi == 0);
    upsert_keys(s, &m, 40, 40, 1, dist, mi == 0);
    upsert_keys(s, &m, 80, 40, 1, dist, mi == 0);
    upsert_keys(s, &m, 10, 20, 2, dist, mi == 0); /* re-sent in the same segment run */
    CHECK_OK(store_flush(s, &err));
    upsert_keys(s, &m, 100, 30, 3, dist, mi == 0); /* re-sent after a flush */
    upsert_keys(s, &m, 115, 10, 4, dist, mi == 0); /* twice in a row */
    CHECK_OK(store_flush(s, &err));
    uint64_t c = 0;
    CHECK_OK(store_count(s, true, &c, &err));
    CHECK_EQ_INT(c, 130);
    CHECK_EQ_INT(model_count(&m), 130);
    check_search(s, &m, dist, 10);
    check_search(s, &m, dist, 1);
    check_search(s, &m, dist, 500); /* k > points */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", vf_test_tmpdir(), name);
    size_t distinct = 0;
    size_t rows = count_rows_on_disk(dir, &distinct);
    CHECK(rows > 130); /* duplicates before finalize */
    CHECK_EQ_INT(distinct, 130);
    CHECK_OK(store_enable_indexing(s, &err));
    CHECK_OK(store_wait_indexed(s, 10, &err));
    rows = count_rows_on_disk(dir, &distinct);
    CHECK_EQ_INT(rows, 130); /* each id stored exactly once */
    CHECK_EQ_INT(distinct, 130);
    CHECK_OK(store_count(s, true, &c, &err));
    CHECK_EQ_INT(c, 130);
    check_search(s, &m, dist, 10); /* the newest vectors survived compaction */
    store_close(s);
    /* reopen from disk */
    CHECK_OK(store_open(&cfg, &s, &err));
    CHECK_OK(store_ensure_collection(s, &err));
    CHECK_OK(store_count(s, true, &c, &err));
    CHECK_EQ_INT(c, 130);
    check_search(s, &m, dist, 7);
    /* more points after reopening, then a second compaction */
    upsert_keys(s, &m, 125, 20, 5, dist, mi == 0);
    CHECK_OK(store_enable_indexing(s, &err));
    CHECK_OK(store_count(s, true, &c, &err));
    CHECK_EQ_INT(c, 145);
    check_search(s, &m, dist, 10);
    rows = count_rows_on_disk(dir, &distinct);
    CHECK_EQ_INT(rows, 145);
    store_close(s);
    free(m.vec);
    free(m.has);
  }
}

/* Equal scores are ordered by point id: integers ascending, then UUIDs by their text; the
 * cut at k follows the same order, and a re-sent id is one candidate, not two. */
VF_TEST(local_search_ties_ordered_by_id) {
  store_config cfg = make_cfg(vf_test_tmpdir(), "ties", CORPUS_DOT, false);
  store *s;
  vf_error err;
  CHECK_OK(store_open(&cfg, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  const char *texts[] = {"f0000000-0000-0000-0000-000000000000", "5", "18446744073709551615",
                         "0a000000-0000-0000-0000-000000000001", "3", "77"};
  enum { N = 6 };
  for (int pass = 0; pass < 2; pass++) { /* the second pass re-sends every id */
    corpus_id ids[N];
    float dense[N * D];
    for (int i = 0; i < N; i++) {
      CHECK(store_id_parse(texts[i], strlen(texts[i]), &ids[i]));
      for (int j = 0; j < D; j++)
        dense[i * D + j] = j == 0 ? 1.0f : 0.0f;
    }
    corpus_vec_batch v = {.name = "dense", .kind = CORPUS_VEC_DENSE, .dim = D, .dense = dense};
    corpus_batch b = {.n = N, .ids = ids, .nvectors = 1, .vectors = &v};
    CHECK_OK(store_upsert(s, &b, &err));
    CHECK_OK(store_flush(s, &err));
  }
  float q[D] = {2.0f};
  store_results r;
  CHECK_OK(store_search(s, NULL, q, 1, D, 4, &r, &err));
  const char *want[] = {"3", "5", "77", "18446744073709551615"};
  CHECK_EQ_INT(r.counts[0], 4);
  for (size_t i = 0; i < r.counts[0] && i < 4; i++) {
    char t[37];
    store_id_format(&r.hits[i].id, t);
    CHECK_EQ_STR(t, want[i]);
    CHECK(r.hits[i].score == 2.0f);
  }
  store_results_free(&r);
  CHECK_OK(store_search(s, NULL, q, 1, D, 10, &r, &err));
  CHECK_EQ_INT(r.counts[0], N);
  char t[37];
  store_id_format(&r.hits[4].id, t);
  CHECK_EQ_STR(t, "0a000000-0000-0000-0000-000000000001");
  store_id_format(&r.hits[5].id, t);
  CHECK_EQ_STR(t, "f0000000-0000-0000-0000-000000000000");
  store_results_free(&r);
  /* a malformed UUID id is refused before anything is written */
  corpus_id bad;
  memset(&bad, 0, sizeof bad);
  bad.is_uuid = true;
  memcpy(bad.uuid, "not-a-uuid", 11);
  float one[D] = {1.0f};
  corpus_vec_batch v = {.name = "dense", .kind = CORPUS_VEC_DENSE, .dim = D, .dense = one};
  corpus_batch b = {.n = 1, .ids = &bad, .nvectors = 1, .vectors = &v};
  CHECK_STATUS(store_upsert(s, &b, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "not-a-uuid") != NULL);
  store_close(s);
}

/* ------------------------------------------------ search: the per-handle vector cache */

static void model_copy(model *dst, const model *src) {
  memcpy(dst->vec, src->vec, src->nkeys * D * sizeof(float));
  memcpy(dst->has, src->has, src->nkeys);
}

/* One handle interleaves upserts, flushes, a compaction and searches: every search sees
 * exactly the committed points (re-sent ids: the newest vector), never a stale cache and never
 * an unflushed point. */
VF_TEST(local_search_cache_follows_upserts_on_one_handle) {
  const corpus_distance metrics[] = {CORPUS_COSINE, CORPUS_DOT, CORPUS_EUCLID, CORPUS_MANHATTAN};
  for (int mi = 0; mi < 4; mi++) {
    corpus_distance dist = metrics[mi];
    char name[32];
    snprintf(name, sizeof name, "cache1_%s", idx_metric_name(dist));
    store_config cfg = make_cfg(vf_test_tmpdir(), name, dist, false);
    store *s;
    vf_error err;
    CHECK_OK(store_open(&cfg, &s, &err));
    CHECK_OK(store_ensure_collection(s, &err));
    model m = {100, calloc(100 * D, sizeof(float)), calloc(100, 1)};
    upsert_keys(s, &m, 0, 60, 1, dist, false);
    CHECK_OK(store_flush(s, &err));
    check_search(s, &m, dist, 10); /* loads the cache */
    check_search(s, &m, dist, 3);  /* reuses it */
    upsert_keys(s, &m, 20, 20, 2, dist, false); /* re-sent ids */
    CHECK_OK(store_flush(s, &err));
    check_search(s, &m, dist, 10);
    upsert_keys(s, &m, 60, 30, 3, dist, false); /* new ids */
    CHECK_OK(store_flush(s, &err));
    check_search(s, &m, dist, 10);
    uint64_t c = 0;
    CHECK_OK(store_count(s, true, &c, &err));
    CHECK_EQ_INT(c, 90);
    CHECK_OK(store_enable_indexing(s, &err)); /* rewrites segments in place */
    check_search(s, &m, dist, 10);
    upsert_keys(s, &m, 0, 10, 4, dist, false);
    CHECK_OK(store_flush(s, &err));
    check_search(s, &m, dist, 90);
    upsert_keys(s, NULL, 0, 45, 5, dist, false); /* never flushed (< segment_rows): invisible */
    check_search(s, &m, dist, 10);
    store_close(s);
    free(m.vec);
    free(m.has);
  }
}

/* A searching handle sees what another handle flushes, and survives a compaction made by a
 * third one; both handles' searches agree with the brute force. */
VF_TEST(local_search_cache_two_handles) {
  store_config cfg = make_cfg(vf_test_tmpdir(), "cache2", CORPUS_EUCLID, false);
  store *a, *b;
  vf_error err;
  CHECK_OK(store_open(&cfg, &a, &err));
  CHECK_OK(store_ensure_collection(a, &err));
  CHECK_OK(store_open(&cfg, &b, &err));
  CHECK_OK(store_ensure_collection(b, &err));
  model m = {100, calloc(100 * D, sizeof(float)), calloc(100, 1)};
  model p = {100, calloc(100 * D, sizeof(float)), calloc(100, 1)};
  upsert_keys(b, &p, 0, 50, 1, CORPUS_EUCLID, false);
  CHECK_OK(store_flush(b, &err));
  model_copy(&m, &p);
  check_search(a, &m, CORPUS_EUCLID, 10);
  check_search(b, &m, CORPUS_EUCLID, 10);
  upsert_keys(b, &p, 10, 30, 2, CORPUS_EUCLID, false); /* re-sent through the other handle */
  CHECK_OK(store_flush(b, &err));
  model_copy(&m, &p);
  check_search(a, &m, CORPUS_EUCLID, 10);
  upsert_keys(b, &p, 45, 30, 3, CORPUS_EUCLID, false); /* not yet flushed */
  check_search(a, &m, CORPUS_EUCLID, 10);
  check_search(b, &m, CORPUS_EUCLID, 10);
  CHECK_OK(store_flush(b, &err));
  model_copy(&m, &p);
  check_search(a, &m, CORPUS_EUCLID, 10);
  check_search(b, &m, CORPUS_EUCLID, 75);
  store_close(b);
  store *c;
  CHECK_OK(store_open(&cfg, &c, &err));
  CHECK_OK(store_enable_indexing(c, &err)); /* compacts the segments a has cached */
  store_close(c);
  check_search(a, &m, CORPUS_EUCLID, 10);
  uint64_t n = 0;
  CHECK_OK(store_count(a, true, &n, &err));
  CHECK_EQ_INT(n, 75);
  store_close(a);
  free(m.vec);
  free(m.has);
  free(p.vec);
  free(p.has);
}

static int g_budget_logs;
static void count_budget_logs(void *user, vf_log_level level, const char *msg) {
  (void)user;
  (void)level;
  if (strstr(msg, "memory budget")) g_budget_logs++;
}

/* The cached scan gives bit-identical results to the streaming scan (the memory-budget
 * fallback, which is the search before the cache existed): a large dimension splits each row
 * group (103 rows, not a multiple of 4) into several kernel blocks, with superseded rows and
 * null vectors in between, for several queries at once and one at a time. */
VF_TEST(local_search_cache_matches_streaming_scan) {
  enum { DB = 1000, NB = 300, NQB = 5, KB = 25 };
  const corpus_distance metrics[] = {CORPUS_COSINE, CORPUS_DOT, CORPUS_EUCLID, CORPUS_MANHATTAN};
  float *dense = malloc((size_t)NB * DB * sizeof(float));
  float *q = malloc((size_t)NQB * DB * sizeof(float));
  corpus_id *ids = calloc(NB, sizeof *ids);
  uint8_t *nulls = calloc(NB, 1);
  for (int mi = 0; mi < 4; mi++) {
    corpus_distance dist = metrics[mi];
    store_vector_spec spec = {"v", CORPUS_VEC_DENSE, dist, DB};
    char name[32];
    snprintf(name, sizeof name, "cache3_%s", idx_metric_name(dist));
    store_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.type = "local";
    cfg.path = vf_test_tmpdir();
    cfg.collection_name = name;
    cfg.vectors = &spec;
    cfg.nvectors = 1;
    cfg.row_group_bytes = 103 * (64 + 256 + DB * 4); /* 103 rows per row group */
    store *s;
    vf_error err;
    CHECK_OK(store_open(&cfg, &s, &err));
    CHECK_OK(store_ensure_collection(s, &err));
    for (int pass = 0; pass < 2; pass++) { /* pass 1 re-sends every third id */
      size_t n = 0;
      for (size_t i = 0; i < NB; i++) {
        if (pass == 1 && i % 3) continue;
        make_id(i, &ids[n]);
        nulls[n] = i % 17 == 5;
        for (size_t j = 0; j < DB; j++) /* integer-valued: plenty of exact ties */
          dense[n * DB + j] = (float)((int)(frnd() * 4.0f));
        n++;
      }
      corpus_vec_batch v = {.name = "v", .kind = CORPUS_VEC_DENSE, .distance = dist, .dim = DB,
                            .dense = dense, .null_rows = nulls};
      corpus_batch bt = {.n = n, .ids = ids, .nvectors = 1, .vectors = &v};
      CHECK_OK(store_upsert(s, &bt, &err));
      CHECK_OK(store_flush(s, &err));
    }
    for (size_t i = 0; i < (size_t)NQB * DB; i++)
      q[i] = (float)((int)(frnd() * 4.0f));
    store_results r[2][1], one[2][NQB]; /* [streaming?]: nq = NQB at once; one at a time */
    for (int stream = 0; stream < 2; stream++) {
      vf_set_memory_budget(stream ? (uint64_t)1 << 20 : 0); /* a row group fits, the cache not */
      g_budget_logs = 0;
      vf_set_log_handler(count_budget_logs, NULL);
      CHECK_OK(store_search(s, "v", q, NQB, DB, KB, &r[stream][0], &err));
      for (int qi = 0; qi < NQB; qi++)
        CHECK_OK(store_search(s, "v", q + (size_t)qi * DB, 1, DB, KB, &one[stream][qi], &err));
      vf_set_log_handler(NULL, NULL);
      CHECK_EQ_INT(g_budget_logs, (stream ? 1 : 0)); /* the fallback is logged once per handle */
    }
    vf_set_memory_budget(0);
    for (int qi = 0; qi < NQB; qi++) {
      const store_results *x = &r[0][0], *y = &r[1][0];
      CHECK_EQ_INT(x->counts[qi], y->counts[qi]);
      CHECK_EQ_INT(x->counts[qi], KB);
      CHECK_EQ_INT(one[0][qi].counts[0], x->counts[qi]);
      CHECK_EQ_INT(one[1][qi].counts[0], x->counts[qi]);
      for (size_t i = 0; i < x->counts[qi] && i < y->counts[qi]; i++) {
        const store_hit *h[4] = {&x->hits[qi * KB + i], &y->hits[qi * KB + i],
                                 &one[0][qi].hits[i], &one[1][qi].hits[i]};
        for (int t = 1; t < 4; t++)
          if (store_id_cmp(&h[0]->id, &h[t]->id) != 0 ||
              memcmp(&h[0]->score, &h[t]->score, sizeof(float)) != 0) {
            char a[37], b[37];
            store_id_format(&h[0]->id, a);
            store_id_format(&h[t]->id, b);
            vf_test_fail(__FILE__, __LINE__, "%s q%d rank %zu: cached %s %.9g, variant %d: %s %.9g",
                         idx_metric_name(dist), qi, i, a, h[0]->score, t, b, h[t]->score);
            break;
          }
      }
    }
    for (int t = 0; t < 2; t++) {
      store_results_free(&r[t][0]);
      for (int qi = 0; qi < NQB; qi++)
        store_results_free(&one[t][qi]);
    }
    store_close(s);
  }
  free(dense);
  free(q);
  free(ids);
  free(nulls);
}

typedef struct writer_arg {
  store_config cfg;
  uint64_t k0;
  size_t n;
  vf_status st;
} writer_arg;

static void *writer_main(void *p) {
  writer_arg *a = p;
  store *s;
  vf_error err;
  a->st = store_open(&a->cfg, &s, &err);
  if (a->st != VF_OK) return NULL;
  for (size_t done = 0; done < a->n && a->st == VF_OK; done += 25) {
    uint64_t keys[25];
    for (size_t i = 0; i < 25; i++)
      keys[i] = a->k0 + done + i;
    tbatch t;
    tb_make(&t, keys, 25, 1, false, CORPUS_DOT);
    a->st = store_upsert(s, &t.b, &err);
    if (a->st == VF_OK && done % 100 == 75) a->st = store_flush(s, &err);
    tb_free(&t);
  }
  if (a->st == VF_OK) a->st = store_flush(s, &err);
  if (a->st != VF_OK) fprintf(stderr, "  writer: %s\n", err.msg);
  store_close(s);
  return NULL;
}

VF_TEST(local_concurrent_writers_do_not_collide) {
  store_config cfg = make_cfg(vf_test_tmpdir(), "conc", CORPUS_DOT, false);
  store *s;
  vf_error err;
  CHECK_OK(store_open(&cfg, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  enum { NW = 4 };
  pthread_t th[NW];
  writer_arg args[NW];
  for (int i = 0; i < NW; i++) {
    args[i] = (writer_arg){cfg, (uint64_t)i * 300, 400, VF_OK}; /* overlapping key ranges */
    pthread_create(&th[i], NULL, writer_main, &args[i]);
  }
  for (int i = 0; i < NW; i++) {
    pthread_join(th[i], NULL);
    CHECK_OK(args[i].st);
  }
  uint64_t c = 0;
  CHECK_OK(store_count(s, true, &c, &err));
  CHECK_EQ_INT(c, 3 * 300 + 400);
  CHECK_OK(store_enable_indexing(s, &err));
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/conc", vf_test_tmpdir());
  size_t distinct;
  CHECK_EQ_INT(count_rows_on_disk(dir, &distinct), 1300);
  CHECK_EQ_INT(distinct, 1300);
  store_close(s);
}

/* Separate processes (what `load --num-jobs N` runs): each child writes through its own
 * handle; segment names never collide and the union has every id once. */
VF_TEST(local_concurrent_processes_do_not_collide) {
  store_config cfg = make_cfg(vf_test_tmpdir(), "procs", CORPUS_DOT, false);
  store *s;
  vf_error err;
  CHECK_OK(store_open(&cfg, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  enum { NP = 3 };
  pid_t pids[NP];
  for (int i = 0; i < NP; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      writer_arg a = {cfg, (uint64_t)i * 200, 300, VF_OK};
      writer_main(&a);
      _exit(a.st == VF_OK ? 0 : 1);
    }
    CHECK(pids[i] > 0);
  }
  for (int i = 0; i < NP; i++) {
    int status = 0;
    CHECK(waitpid(pids[i], &status, 0) == pids[i]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  uint64_t c = 0;
  CHECK_OK(store_count(s, true, &c, &err));
  CHECK_EQ_INT(c, 2 * 200 + 300);
  CHECK_OK(store_enable_indexing(s, &err));
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/procs", vf_test_tmpdir());
  size_t distinct;
  CHECK_EQ_INT(count_rows_on_disk(dir, &distinct), 700);
  CHECK_EQ_INT(distinct, 700);
  store_close(s);
}

VF_TEST(local_compaction_waits_for_other_writers) {
  store_config cfg = make_cfg(vf_test_tmpdir(), "busy", CORPUS_DOT, false);
  store *a, *b;
  vf_error err;
  CHECK_OK(store_open(&cfg, &a, &err));
  CHECK_OK(store_ensure_collection(a, &err));
  CHECK_OK(store_open(&cfg, &b, &err));
  upsert_keys(b, NULL, 0, 10, 1, CORPUS_DOT, false); /* b holds an open segment */
  CHECK_STATUS(store_enable_indexing(a, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "another writer") != NULL);
  store_config rc = cfg;
  rc.recreate = true;
  store *r;
  CHECK_OK(store_open(&rc, &r, &err));
  CHECK_STATUS(store_ensure_collection(r, &err), VF_EUSAGE); /* recreate would drop b's file */
  store_close(r);
  uint64_t c = 1;
  CHECK_OK(store_count(a, true, &c, &err));
  CHECK_EQ_INT(c, 0); /* b's points are not visible before its flush */
  CHECK_OK(store_flush(b, &err));
  CHECK_OK(store_count(a, true, &c, &err));
  CHECK_EQ_INT(c, 10);
  CHECK_OK(store_enable_indexing(a, &err));
  store_close(b);
  store_close(a);
}

/* A collection.json that is not the JSON vforge writes is corrupt (VF_ECORRUPT naming the file),
 * never "a different vector schema"; a missing collection under must_exist is VF_ENOTFOUND and
 * nothing is created (issue 14). */
VF_TEST(local_corrupt_collection_json) {
  store_config cfg = make_cfg(vf_test_tmpdir(), "corrupt", CORPUS_COSINE, false);
  store *s;
  vf_error err;
  char dir[1024], json[1100];
  snprintf(dir, sizeof dir, "%s/corrupt", vf_test_tmpdir());
  snprintf(json, sizeof json, "%s/collection.json", dir);
  cfg.must_exist = true;
  CHECK_OK(store_open(&cfg, &s, &err));
  CHECK_STATUS(store_ensure_collection(s, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "does not exist") != NULL);
  store_close(s);
  struct stat sb;
  CHECK(stat(dir, &sb) != 0); /* not even the directory */
  cfg.must_exist = false;
  CHECK_OK(store_open(&cfg, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  store_close(s);
  static const char *const bad[] = {"{\"format\": \"vforge-local\", \"vers", "not json at all",
                                    "{\"format\": \"other\", \"vectors\": []}",
                                    "{\"format\": \"vforge-local\", \"vectors\": [{\"name\": 1}]}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    FILE *fp = fopen(json, "wb");
    CHECK(fp != NULL);
    if (!fp) return;
    fputs(bad[i], fp);
    fclose(fp);
    CHECK_OK(store_open(&cfg, &s, &err));
    CHECK_STATUS(store_ensure_collection(s, &err), VF_ECORRUPT);
    CHECK(strstr(err.msg, "collection.json is corrupt") != NULL);
    CHECK(strstr(err.msg, "different vector schema") == NULL);
    store_close(s);
  }
}

VF_TEST(local_schema_mismatch_is_an_error) {
  store_config cfg = make_cfg(vf_test_tmpdir(), "schema", CORPUS_COSINE, false);
  store *s;
  vf_error err;
  CHECK_OK(store_open(&cfg, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  upsert_keys(s, NULL, 0, 10, 1, CORPUS_COSINE, false);
  CHECK_OK(store_flush(s, &err));
  store_close(s);
  /* same name, other dimension */
  store_vector_spec other = {"dense", CORPUS_VEC_DENSE, CORPUS_COSINE, D + 1};
  store_config c2 = cfg;
  c2.vectors = &other;
  CHECK_OK(store_open(&c2, &s, &err));
  CHECK_STATUS(store_ensure_collection(s, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "different vector schema") != NULL);
  CHECK(strstr(err.msg, "vector 'dense' is dense, dim 13, cosine there but dense, dim 14, cosine in "
                        "the config") != NULL);
  uint64_t c;
  CHECK_STATUS(store_count(s, true, &c, &err), VF_ECONFIG);
  store_close(s);
  /* other distance */
  other.dim = D;
  other.distance = CORPUS_DOT;
  CHECK_OK(store_open(&c2, &s, &err));
  CHECK_STATUS(store_ensure_collection(s, &err), VF_ECONFIG);
  store_close(s);
  /* recreate drops it */
  c2.recreate = true;
  CHECK_OK(store_open(&c2, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  CHECK_OK(store_count(s, true, &c, &err));
  CHECK_EQ_INT(c, 0);
  store_close(s);
  /* and now the original spec is the mismatch */
  CHECK_OK(store_open(&cfg, &s, &err));
  CHECK_STATUS(store_ensure_collection(s, &err), VF_ECONFIG);
  store_close(s);
}

VF_TEST(local_bad_batches_and_config) {
  store_config cfg = make_cfg(vf_test_tmpdir(), "bad", CORPUS_COSINE, false);
  store *s;
  vf_error err;
  CHECK_OK(store_open(&cfg, &s, &err));
  /* no collection yet */
  uint64_t key = 1;
  tbatch t;
  tb_make(&t, &key, 1, 1, false, CORPUS_COSINE);
  CHECK_STATUS(store_upsert(s, &t.b, &err), VF_ENOTFOUND);
  CHECK_OK(store_ensure_collection(s, &err));
  t.v[0].dim = D + 1;
  CHECK_STATUS(store_upsert(s, &t.b, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "dimension") != NULL);
  t.v[0].dim = D;
  t.v[0].name = "nope";
  CHECK_STATUS(store_upsert(s, &t.b, &err), VF_EUSAGE);
  t.v[0].name = "dense";
  CHECK_OK(store_upsert(s, &t.b, &err));
  tb_free(&t);
  store_results r;
  float q[D] = {0};
  CHECK_STATUS(store_search(s, "dense", q, 1, D - 1, 3, &r, &err), VF_EUSAGE);
  CHECK_STATUS(store_search(s, "other", q, 1, D, 3, &r, &err), VF_EUSAGE);
  CHECK_STATUS(store_search(s, "dense", q, 1, D, 0, &r, &err), VF_EUSAGE);
  store_close(s); /* the unflushed point is abandoned */
  CHECK_OK(store_open(&cfg, &s, &err));
  uint64_t c = 9;
  CHECK_OK(store_count(s, true, &c, &err));
  CHECK_EQ_INT(c, 0);
  store_close(s);
  /* config errors */
  store_config bad = cfg;
  bad.collection_name = "../x";
  CHECK_STATUS(store_open(&bad, &s, &err), VF_ECONFIG);
  bad = cfg;
  bad.type = "nosuch";
  CHECK_STATUS(store_open(&bad, &s, &err), VF_ECONFIG);
  store_vector_spec v0 = {"payload", CORPUS_VEC_DENSE, CORPUS_DOT, 4};
  bad = cfg;
  bad.vectors = &v0;
  CHECK_STATUS(store_open(&bad, &s, &err), VF_ECONFIG);
  v0.name = "v";
  v0.dim = 0;
  CHECK_STATUS(store_open(&bad, &s, &err), VF_ECONFIG);
}

VF_TEST(ids_text_round_trip_and_order) {
  corpus_id a, b;
  char t[37];
  CHECK(store_id_parse("18446744073709551615", 20, &a));
  CHECK(!a.is_uuid && a.num == UINT64_MAX);
  store_id_format(&a, t);
  CHECK_EQ_STR(t, "18446744073709551615");
  CHECK(!store_id_parse("18446744073709551616", 20, &a));
  CHECK(!store_id_parse("", 0, &a));
  CHECK(!store_id_parse("12a", 3, &a));
  CHECK(store_id_parse("0E984725-C51C-4BF4-9960-E1C80E27ABA0", 36, &b));
  CHECK(b.is_uuid);
  CHECK_EQ_STR(b.uuid, "0e984725-c51c-4bf4-9960-e1c80e27aba0");
  CHECK(!store_id_parse("0e984725-c51c-4bf4-9960+e1c80e27aba0", 36, &a));
  CHECK(store_id_parse("18446744073709551615", 20, &a));
  CHECK(store_id_cmp(&a, &b) < 0); /* integers before UUIDs */
  CHECK(store_id_cmp(&b, &a) > 0);
}

VF_TEST(discard_counts_and_checks) {
  store_config cfg = make_cfg(NULL, "d", CORPUS_DOT, false);
  cfg.type = "discard";
  store *s;
  vf_error err;
  CHECK_OK(store_open(&cfg, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  upsert_keys(s, NULL, 0, 30, 1, CORPUS_DOT, false);
  upsert_keys(s, NULL, 0, 30, 1, CORPUS_DOT, false);
  uint64_t c = 0;
  CHECK_OK(store_count(s, true, &c, &err));
  CHECK_EQ_INT(c, 60);
  uint64_t key = 0;
  tbatch t;
  tb_make(&t, &key, 1, 1, false, CORPUS_DOT);
  t.v[0].dim = 3;
  CHECK_STATUS(store_upsert(s, &t.b, &err), VF_EUSAGE);
  tb_free(&t);
  store_results r;
  float q[D] = {0};
  CHECK_STATUS(store_search(s, NULL, q, 1, D, 3, &r, &err), VF_EUNSUPPORTED);
  store_close(s);
}

/* Writes a compacted collection with every column kind, and the expected rows as JSON lines,
 * for test_duckdb.sh. */
VF_TEST(export_for_duckdb) {
  const char *dir = getenv("VF_STORE_EXPORT");
  if (!dir) {
    vf_test_skip("VF_STORE_EXPORT not set (run by test_duckdb.sh)");
    return;
  }
  store_config cfg = make_cfg(dir, "ex", CORPUS_COSINE, true);
  cfg.recreate = true;
  store *s;
  vf_error err;
  CHECK_OK(store_open(&cfg, &s, &err));
  CHECK_OK(store_ensure_collection(s, &err));
  enum { NK = 60 };
  /* expected final state per key: keep the last batch's row */
  char *expect[NK] = {0};
  for (int round = 0; round < 3; round++) {
    uint64_t keys[40];
    size_t n = 0;
    for (uint64_t k = (uint64_t)round * 10; k < (uint64_t)round * 10 + 40 && k < NK; k++)
      keys[n++] = k;
    tbatch t;
    tb_make(&t, keys, n, round, true, CORPUS_COSINE); /* round 0: no payload */
    if (round == 1) {                                 /* some null dense vectors */
      uint8_t *nulls = calloc(n, 1);
      for (size_t i = 0; i < n; i += 6)
        nulls[i] = 1;
      t.v[0].null_rows = nulls;
    }
    CHECK_OK(store_upsert(s, &t.b, &err));
    for (size_t i = 0; i < n; i++) {
      vf_buf b;
      vf_buf_init(&b, 0);
      char id[37];
      store_id_format(&t.ids[i], id);
      vf_buf_printf(&b, NULL, "{\"id\":\"%s\",\"dense\":", id);
      if (t.v[0].null_rows && t.v[0].null_rows[i]) {
        vf_json_raw(&b, "null", NULL);
      } else {
        vf_json_raw(&b, "[", NULL);
        for (int j = 0; j < D; j++) {
          if (j) vf_json_raw(&b, ",", NULL);
          vf_json_f32(&b, t.dense[i * D + j], NULL);
        }
        vf_json_raw(&b, "]", NULL);
      }
      vf_json_raw(&b, ",\"colbert\":[", NULL);
      for (int64_t e = t.moffs[i] * DM; e < t.moffs[i + 1] * DM; e++) {
        if (e > t.moffs[i] * DM) vf_json_raw(&b, ",", NULL);
        vf_json_f32(&b, t.multi[e], NULL);
      }
      vf_json_raw(&b, "],\"sparse\":{\"indices\":[", NULL);
      for (int64_t e = t.soffs[i]; e < t.soffs[i + 1]; e++)
        vf_buf_printf(&b, NULL, "%s%u", e > t.soffs[i] ? "," : "", t.indices[e]);
      vf_json_raw(&b, "],\"values\":[", NULL);
      for (int64_t e = t.soffs[i]; e < t.soffs[i + 1]; e++) {
        if (e > t.soffs[i]) vf_json_raw(&b, ",", NULL);
        vf_json_f32(&b, t.values[e], NULL);
      }
      vf_json_raw(&b, "]},\"payload\":", NULL);
      if (t.poffs[i + 1] > t.poffs[i])
        vf_json_string(&b, (const char *)t.b.payload.data + t.poffs[i],
                       (size_t)(t.poffs[i + 1] - t.poffs[i]), NULL);
      else
        vf_json_raw(&b, "null", NULL);
      vf_json_raw(&b, "}", NULL);
      vf_buf_append(&b, "", 1, NULL);
      free(expect[keys[i]]);
      expect[keys[i]] = (char *)vf_buf_take(&b, NULL);
    }
    free(t.v[0].null_rows);
    tb_free(&t);
    if (round == 1) CHECK_OK(store_flush(s, &err));
  }
  CHECK_OK(store_enable_indexing(s, &err));
  uint64_t c;
  CHECK_OK(store_count(s, true, &c, &err));
  CHECK_EQ_INT(c, NK);
  store_close(s);
  char p[4096];
  snprintf(p, sizeof p, "%s/expected.jsonl", dir);
  FILE *fp = fopen(p, "w");
  CHECK(fp != NULL);
  for (int k = 0; fp && k < NK; k++)
    fprintf(fp, "%s\n", expect[k]);
  if (fp) fclose(fp);
  for (int k = 0; k < NK; k++)
    free(expect[k]);
}
