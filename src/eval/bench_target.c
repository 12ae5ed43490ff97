/*
 * bench_execute(): one `vforge bench` run from its inputs — the store and vector named by a load
 * config (its vectorstore and `vectors:`) or by --store local --path --collection, the queries
 * and ground-truth files — through bench_read_queries / bench_read_truth / bench_align /
 * bench_run.  The CLI and the Python front end (vforge.bench) both call it, so the two give the
 * same report.
 */
#include <stdlib.h>
#include <string.h>

#include "vforge/bench.h"
#include "vforge/config.h"

/* The config's vector to search: `want` (a vector name or column) or the only dense one. */
static vf_status pick_vector(const vf_config *cfg, const char *want, const vf_cfg_vector **out,
                             vf_error *err) {
  const vf_cfg_vector *found = NULL;
  int ndense = 0;
  for (size_t i = 0; i < cfg->nvectors; i++) {
    const vf_cfg_vector *v = &cfg->vectors[i];
    if (want) {
      if (strcmp(v->name, want) == 0 || (v->column && strcmp(v->column, want) == 0)) {
        found = v;
        break;
      }
    } else if (v->kind == CORPUS_VEC_DENSE) {
      found = v;
      ndense++;
    }
  }
  if (want && !found)
    return vf_error_set(err, VF_EUSAGE, "%s: no vector named or read from column '%s'", cfg->name, want);
  if (!want && ndense != 1)
    return vf_error_set(err, VF_EUSAGE, "%s: %d dense vectors; choose one with --column", cfg->name, ndense);
  if (found->kind != CORPUS_VEC_DENSE)
    return vf_error_set(err, VF_EUNSUPPORTED, "%s: vector '%s' is not dense; bench searches dense vectors",
                        cfg->name, found->name);
  *out = found;
  return VF_OK;
}

/* bench_execute(): see bench.h. */
vf_status bench_execute(const bench_request *rq, bench_report *rep, char **vector, vf_error *err) {
  vf_config cfg;
  memset(&cfg, 0, sizeof cfg);
  bench_queries q;
  memset(&q, 0, sizeof q);
  bench_truth t;
  memset(&t, 0, sizeof t);
  size_t *rows = NULL;
  store_vector_spec *spec = NULL;
  int nspec = 0;
  store_vector_spec one;
  bench_options o;
  memset(&o, 0, sizeof o);
  memset(rep, 0, sizeof *rep);
  if (vector) *vector = NULL;
  const char *qcol = NULL;
  bool have_spec = false;
  vf_status st = VF_OK;
  if (!rq->queries || !rq->ground_truth || rq->k < 1 || rq->k > BENCH_MAX_K)
    st = vf_error_set(err, VF_EUSAGE, "bench: queries, ground truth and k in 1..%zu are required",
                      (size_t)BENCH_MAX_K);
  if (st == VF_OK && (rq->config != NULL) == (rq->store_type != NULL))
    st = vf_error_set(err, VF_EUSAGE, "bench: give either a CONFIG or --store local --path DIR "
                      "--collection NAME");
  o.k = rq->k;
  o.concurrency = rq->concurrency;
  o.rps = rq->rps;
  o.max_outstanding = rq->max_outstanding;
  /* the store and the vector */
  if (st == VF_OK && rq->config) {
    const vf_cfg_vector *v = NULL;
    st = vf_config_load(rq->config, &cfg, err);
    if (st == VF_OK) st = pick_vector(&cfg, rq->column, &v, err);
    if (st == VF_OK) {
      qcol = v->column ? v->column : v->name;
      o.vector = v->name;
      o.store.collection_name = cfg.vectorstore.collection_name;
      o.store.params_json = cfg.vectorstore.params_json;
      if (!o.store.collection_name)
        st = vf_error_set(err, VF_ECONFIG, "%s: vectorstore.collection_name is required", cfg.name);
      if (cfg.vectorstore.type == VF_CFG_STORE_LOCAL) {
        o.store.type = "local";
        o.store.path = cfg.vectorstore.path ? cfg.vectorstore.path : VF_CONFIG_DEFAULT_STORE_PATH;
      } else {
        o.store.type = "qdrant";
        o.store.url = cfg.vectorstore.url;
        o.store.api_key = cfg.vectorstore.api_key;
      }
    }
  } else if (st == VF_OK) {
    if (strcmp(rq->store_type, "local") != 0)
      st = vf_error_set(err, VF_EUSAGE, "--store %s: bench takes --store local (other stores: give "
                        "their load CONFIG)", rq->store_type);
    else if (!rq->collection)
      st = vf_error_set(err, VF_EUSAGE, "--store local needs --collection NAME");
    o.store.type = "local";
    o.store.path = rq->path ? rq->path : VF_CONFIG_DEFAULT_STORE_PATH;
    o.store.collection_name = rq->collection;
    qcol = rq->column;
  }
  if (st == VF_OK) st = bench_read_queries(rq->queries, qcol, &q, err);
  if (st == VF_OK) st = bench_read_truth(rq->ground_truth, &t, err);
  if (st == VF_OK && o.k > t.k)
    st = vf_error_set(err, VF_EUSAGE,
                      "-k %zu exceeds the %zu hits per query of the ground truth %s (compute it "
                      "with -k %zu or more)",
                      o.k, t.k, rq->ground_truth, o.k);
  if (st == VF_OK) st = bench_align(&q, &t, &rows, err);
  if (st == VF_OK && strcmp(o.store.type, "local") == 0) {
    st = bench_local_spec(o.store.path, o.store.collection_name, &spec, &nspec, err);
    if (st == VF_OK && !o.vector) /* --store: the vector named like the queries column, if any */
      for (int i = 0; i < nspec; i++)
        if (spec[i].kind == CORPUS_VEC_DENSE && strcmp(spec[i].name, q.column) == 0) o.vector = spec[i].name;
    o.store.vectors = spec;
    o.store.nvectors = nspec;
    have_spec = st == VF_OK;
  } else if (st == VF_OK) { /* a remote store: the one vector searched, as the config says */
    const vf_cfg_vector *v = vf_config_find_vector(&cfg, o.vector);
    one = (store_vector_spec){o.vector, CORPUS_VEC_DENSE, v ? vf_config_vector_distance(&cfg, v) : CORPUS_COSINE, q.dim};
    o.store.vectors = &one;
    o.store.nvectors = 1;
    have_spec = true;
  }
  if (st == VF_OK && rq->qdrant && strcmp(o.store.type, "qdrant") != 0)
    st = vf_error_set(err, VF_EUSAGE, "--hnsw-ef and --exact apply to qdrant stores (this store is %s)",
                      o.store.type);
  o.qdrant = rq->qdrant;
  /* truth of another metric or corpus is refused before a query runs (issue 14) */
  if (st == VF_OK && have_spec) st = bench_check_truth(&o, &t, rows, q.n, rq->ground_truth, err);
  if (st == VF_OK && have_spec) st = bench_run(&o, &q, &t, rows, rep, err);
  if (st == VF_OK && vector && o.vector && !(*vector = vf_strdup(o.vector)))
    st = vf_error_set(err, VF_ENOMEM, "out of memory");
  bench_spec_free(spec, nspec);
  free(rows);
  bench_truth_free(&t);
  bench_queries_free(&q);
  vf_config_free(&cfg);
  return st;
}
