/*
 * bench_check.c — ground truth that cannot measure the store is refused before a query runs
 * (issue 14; the rules are in bench.h "Ground truth that cannot measure the store").
 *
 * Why: recall against truth of another corpus is 0, against truth of another metric a number
 * that looks plausible (0.374), against a half-loaded collection a lower one — all printed with
 * exit 0.  Every side now records what it was made from (the truth file its vforge.bf.* metadata,
 * the collection its corpus record, an index file its header), and where both records exist they
 * must agree.  Where one is missing (truth from other tools, ann-benchmarks neighbors, stores and
 * indexes written before the records existed) the truth's own hits are looked up — a truth none
 * of whose neighbours exist belongs to something else; some missing means the recall cannot
 * reach 1, which is worth a warning, not a refusal (a partial load is a legitimate thing to
 * measure).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vforge/bench.h"
#include "vforge/corpus.h"
#include "vforge/index.h"
#include "vforge/ivf.h"

/* -------------------------------------------------------------- the hits */

/* The truth hits of the first BENCH_CHECK_QUERIES queries (the first k of each), as ids and as
 * texts.  Hits that are neither an integer nor a UUID cannot be point ids of any store: they are
 * counted as missing (`unparsed`). */
typedef struct ck_hits {
  corpus_id *ids;
  const char **text;
  size_t n, unparsed, queries;
} ck_hits;

static vf_status ck_hits_get(const bench_truth *t, const size_t *rows, size_t nq, size_t k,
                             ck_hits *h, vf_error *err) {
  memset(h, 0, sizeof *h);
  h->queries = nq < BENCH_CHECK_QUERIES ? nq : BENCH_CHECK_QUERIES;
  size_t cap = 0;
  for (size_t i = 0; i < h->queries; i++) cap += t->counts[rows[i]] < k ? t->counts[rows[i]] : k;
  h->ids = vf_mallocarray(cap + 1, sizeof *h->ids);
  h->text = vf_mallocarray(cap + 1, sizeof *h->text);
  if (!h->ids || !h->text) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (size_t i = 0; i < h->queries; i++) {
    size_t r = rows[i], c = t->counts[r] < k ? t->counts[r] : k;
    for (size_t j = 0; j < c; j++) {
      const char *id = t->hit_ids[r * t->k + j];
      if (!id) continue;
      if (!store_id_parse(id, strlen(id), &h->ids[h->n])) {
        h->unparsed++;
        continue;
      }
      h->text[h->n++] = id;
    }
  }
  return VF_OK;
}

static void ck_hits_free(ck_hits *h) {
  free(h->ids);
  free(h->text);
}

/* none found: refuse; some missing: warn */
static vf_status ck_verdict(size_t found, const ck_hits *h, const char *where, const char *gt,
                            vf_error *err) {
  size_t total = h->n + h->unparsed;
  if (total == 0) return VF_OK;
  if (found == 0)
    return vf_error_set(err, VF_EUSAGE,
                        "none of the %zu ground-truth neighbours of the first %zu queries in %s is "
                        "in %s: the ground truth belongs to another corpus (or to other point ids, "
                        "e.g. another id_expression); recall against it would be 0",
                        total, h->queries, gt, where);
  if (found < total)
    vf_log(VF_LOG_WARN, "%zu of the %zu ground-truth neighbours of the first %zu queries in %s are "
           "not in %s: recall cannot reach 1 (a partial load, or ground truth of a larger corpus)",
           total - found, total, h->queries, gt, where);
  return VF_OK;
}

/* ------------------------------------------------------------- the records */

static vf_status ck_metric(const bench_truth *t, corpus_distance have, const char *what,
                           const char *gt, vf_error *err) {
  corpus_distance m;
  if (!t->metric[0] || !idx_metric_parse(t->metric, &m) || m == have) return VF_OK;
  return vf_error_set(err, VF_EUSAGE,
                      "the ground truth %s was computed with %s, but %s is searched by %s: recall "
                      "against it means nothing; compute it with brute-force --metric %s",
                      gt, t->metric, what, idx_metric_name(have), idx_metric_name(have));
}

/* bench_check_truth(): see bench.h. */
vf_status bench_check_truth(const bench_options *o, const bench_truth *t, const size_t *rows,
                            size_t nq, const char *gt, vf_error *err) {
  const store_vector_spec *v = NULL;
  int ndense = 0;
  for (int i = 0; i < o->store.nvectors; i++) {
    const store_vector_spec *c = &o->store.vectors[i];
    if (o->vector ? strcmp(c->name, o->vector) == 0 : c->kind == CORPUS_VEC_DENSE) {
      v = c;
      ndense++;
    }
  }
  char where[600];
  snprintf(where, sizeof where, "collection '%s'", o->store.collection_name);
  char what[700];
  snprintf(what, sizeof what, "vector '%s' of %s", v && ndense == 1 ? v->name : "?", where);
  vf_status st = v && ndense == 1 ? ck_metric(t, v->distance, what, gt, err) : VF_OK;
  if (st != VF_OK) return st;
  store *h = NULL;
  if ((st = store_open(&o->store, &h, err)) != VF_OK) return st;
  ck_hits hs;
  memset(&hs, 0, sizeof hs);
  bool *in = NULL;
  store_record rec;
  bool found = false;
  st = store_get_record(h, &rec, &found, err);
  bool verified = false;
  if (st == VF_EUNSUPPORTED) {
    st = VF_OK;
  } else if (st != VF_OK) {
    goto out;
  } else if (found) {
    if (!rec.load_finished)
      vf_log(VF_LOG_WARN, "%s: its load has not been finalized (interrupted, or still running): "
             "recall is measured against the points loaded so far", where);
    if (rec.files_md5[0] && t->files_md5[0] && strcmp(rec.files_md5, t->files_md5) != 0)
      VF_FAIL(vf_error_set(err, VF_EUSAGE,
                           "the ground truth %s was computed for another corpus than the one loaded "
                           "into %s (corpus file lists differ: md5 %s in the ground truth, %s "
                           "recorded by load prepare over %llu files)",
                           gt, where, t->files_md5, rec.files_md5, (unsigned long long)rec.files));
    if (rec.files_md5[0] && t->id_expression &&
        !corpus_id_expression_same(t->id_expression, rec.id_expression))
      VF_FAIL(vf_error_set(err, VF_EUSAGE,
                           "the ground truth %s names points by '%s', but the points of %s were "
                           "loaded with id_expression '%s': no hit can match",
                           gt, t->id_expression, where, rec.id_expression));
    /* both records agree and the load finished: nothing to look up (an unfinished load is
     * looked up too, so the warning can say how much of the truth is missing) */
    verified = rec.load_finished && rec.files_md5[0] && t->files_md5[0] && t->id_expression;
  }
  if (!verified) { /* a side records nothing: look the truth's hits up */
    VF_TRY(ck_hits_get(t, rows, nq, o->k, &hs, err));
    in = vf_calloc(hs.n + 1, sizeof *in);
    if (!in) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    st = store_contains(h, hs.ids, hs.n, in, err);
    if (st == VF_EUNSUPPORTED) {
      vf_log(VF_LOG_INFO, "%s: the store cannot look ids up, so the ground truth is not checked",
             where);
      st = VF_OK;
    } else if (st != VF_OK) {
      goto out;
    } else {
      size_t n = 0;
      for (size_t i = 0; i < hs.n; i++) n += in[i];
      st = ck_verdict(n, &hs, where, gt, err);
    }
  }
out:
  free(in);
  ck_hits_free(&hs);
  store_close(h);
  return st;
}

/* ------------------------------------------------------------- an index */

static uint64_t ck_fnv(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
  return h;
}

typedef struct ck_key {
  uint64_t h;
  size_t i;
} ck_key;

static int ck_key_cmp(const void *a, const void *b) {
  const ck_key *x = a, *y = b;
  return x->h < y->h ? -1 : x->h > y->h;
}

/* bench_check_index(): see bench.h. */
vf_status bench_check_index(const ivf_index *ix, const char *index_path, const bench_truth *t,
                            const size_t *rows, size_t nq, size_t k, const char *gt,
                            vf_error *err) {
  ivf_info in;
  ivf_info_get(ix, &in);
  char where[600];
  snprintf(where, sizeof where, "the index %s", index_path);
  vf_status st = ck_metric(t, in.metric, where, gt, err);
  if (st != VF_OK) return st;
  if (in.has_corpus_id && t->files_md5[0] && t->id_expression) {
    uint8_t want[16];
    corpus_identity(t->files_md5, t->id_expression, want, NULL);
    if (memcmp(want, in.corpus_id, 16) == 0) return VF_OK;
    return vf_error_set(err, VF_EUSAGE,
                        "the ground truth %s was computed for another corpus (or other point ids) "
                        "than %s was built from: their corpus identities differ", gt, where);
  }
  /* look the truth's hits up in the id table: one pass over the index's ids */
  ck_hits hs;
  ck_key *keys = NULL;
  bool *seen = NULL;
  VF_TRY(ck_hits_get(t, rows, nq, k, &hs, err)); /* sets hs first, on failure too */
  keys = vf_mallocarray(hs.n + 1, sizeof *keys);
  seen = vf_calloc(hs.n + 1, sizeof *seen);
  if (!keys || !seen) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (size_t i = 0; i < hs.n; i++) keys[i] = (ck_key){ck_fnv(hs.text[i], strlen(hs.text[i])), i};
  qsort(keys, hs.n, sizeof *keys, ck_key_cmp);
  vf_stage sg;
  vf_stage_begin(&sg, "index search", "check ground truth ids", NULL, in.rows);
  for (uint64_t r = 0; r < in.rows; r++) {
    if ((r & 0xffff) == 0) {
      st = vf_check_cancel(err);
      vf_stage_update(&sg, r, NULL);
      if (st != VF_OK) goto out;
    }
    size_t len = 0;
    const char *id = ivf_id(ix, (int64_t)r, &len);
    ck_key probe = {ck_fnv(id, len), 0};
    const ck_key *e = bsearch(&probe, keys, hs.n, sizeof *keys, ck_key_cmp);
    if (!e) continue;
    while (e > keys && e[-1].h == probe.h) e--;
    for (; e < keys + hs.n && e->h == probe.h; e++)
      if (strlen(hs.text[e->i]) == len && memcmp(hs.text[e->i], id, len) == 0) seen[e->i] = true;
  }
  size_t n = 0;
  for (size_t i = 0; i < hs.n; i++) n += seen[i];
  st = ck_verdict(n, &hs, where, gt, err);
out:
  free(keys);
  free(seen);
  ck_hits_free(&hs);
  return st;
}
