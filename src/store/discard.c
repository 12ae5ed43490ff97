/*
 * discard.c — the `discard` store: checks each batch against the collection like any store,
 * counts its points, and drops it.
 *
 * Why: issue 3 measures the load pipeline itself (read, decode, ids, payload, batching) with
 * `bench/load` into a store that costs nothing; the checks stay so that a benchmark cannot
 * look fast by skipping work a real store would refuse.  There is no collection to keep, so
 * count() returns the points accepted through this handle (not distinct ids) and search is
 * refused.
 */
#include <stdlib.h>

#include "store/internal.h"

typedef struct discard_store {
  store base;
  int *map;
  uint64_t points;
} discard_store;

static vf_status ds_ok(store *s, vf_error *err) {
  (void)s;
  (void)err;
  return VF_OK;
}

static vf_status ds_wait(store *s, double timeout_s, vf_error *err) {
  (void)s;
  (void)timeout_s;
  (void)err;
  return VF_OK;
}

static vf_status ds_upsert(store *s, const corpus_batch *b, vf_error *err) {
  discard_store *d = (discard_store *)s;
  vf_status st = store_check_batch(s, b, d->map, err);
  if (st != VF_OK) return st;
  d->points += b->n;
  return VF_OK;
}

static vf_status ds_count(store *s, bool exact, uint64_t *out, vf_error *err) {
  (void)exact;
  (void)err;
  *out = ((discard_store *)s)->points;
  return VF_OK;
}

static vf_status ds_search(store *s, const char *vector, const float *queries, size_t nq,
                           int32_t dim, size_t k, store_results *out, vf_error *err) {
  (void)vector;
  (void)queries;
  (void)nq;
  (void)dim;
  (void)k;
  (void)out;
  return vf_error_set(err, VF_EUNSUPPORTED,
                      "collection '%s': the discard store keeps no points and cannot search",
                      s->collection);
}

static void ds_close(store *s) {
  discard_store *d = (discard_store *)s;
  if (!d) return;
  store_head_free(s);
  free(d->map);
  free(d);
}

static const store_vtable discard_vt = {"discard", ds_ok, ds_ok,    ds_ok,     ds_wait,
                                        ds_upsert, ds_ok, ds_count, ds_search, ds_close,
                                        NULL /* no filtered search */, NULL, NULL, NULL};

/* store_discard_open(): see store.h. */
vf_status store_discard_open(const store_config *cfg, store **out, vf_error *err) {
  *out = NULL;
  discard_store *d = vf_calloc(1, sizeof *d);
  if (!d) return vf_error_set(err, VF_ENOMEM, "discard store: out of memory");
  vf_status st = VF_OK;
  VF_TRY(store_head_init(&d->base, &discard_vt, cfg, err));
  if (!(d->map = vf_calloc((size_t)d->base.nvectors, sizeof *d->map)))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "discard store: out of memory"));
  *out = &d->base;
out:
  if (st != VF_OK) ds_close(&d->base);
  return st;
}
