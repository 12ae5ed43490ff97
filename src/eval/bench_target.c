/*
 * bench_execute(): one `vforge bench` run from its inputs — the store and vector named by a load
 * config (its vectorstore and `vectors:`) or by --store local --path --collection, the queries
 * and ground-truth files — through bench_read_queries / bench_read_truth / bench_align /
 * bench_run.  The CLI and the Python front end (vforge.bench) both call it, so the two give the
 * same report.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* bench_is_bundle(): see bench.h. */
bool bench_is_bundle(const char *path) {
  size_t n = strlen(path);
  struct stat sb;
  return (n > 6 && strcmp(path + n - 6, ".jsonl") == 0) || (n > 4 && strcmp(path + n - 4, ".tgz") == 0) ||
         (n > 7 && strcmp(path + n - 7, ".tar.gz") == 0) || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
}

/* What a bench_target owns besides its public parts. */
struct bench_target_own {
  vf_config cfg;
  store_vector_spec *spec;
  int nspec;
  store_vector_spec one;
};

/* bench_target_open(): see bench.h. */
vf_status bench_target_open(const bench_request *rq, bench_target *tg, vf_error *err) {
  memset(tg, 0, sizeof *tg);
  struct bench_target_own *own = vf_calloc(1, sizeof *own);
  if (!own) return vf_error_set(err, VF_ENOMEM, "out of memory");
  tg->own = own;
  bench_options *o = &tg->o;
  const char *qcol = NULL;
  vf_status st = VF_OK;
  if (!rq->queries || !rq->ground_truth || rq->k < 1 || rq->k > BENCH_MAX_K)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "bench: queries, ground truth and k in 1..%zu are required",
                         (size_t)BENCH_MAX_K));
  if ((rq->config != NULL) == (rq->store_type != NULL))
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "bench: give either a CONFIG or --store local --path DIR "
                         "--collection NAME"));
  o->k = rq->k;
  o->concurrency = rq->concurrency;
  o->rps = rq->rps;
  o->max_outstanding = rq->max_outstanding;
  /* the store and the vector */
  if (rq->config) {
    const vf_cfg_vector *v = NULL;
    VF_TRY(vf_config_load(rq->config, &own->cfg, err));
    VF_TRY(pick_vector(&own->cfg, rq->column, &v, err));
    st = bench_query_column(rq->queries, v->name, v->column, &qcol, err); /* name, else column */
    o->vector = v->name;
    o->store.collection_name = own->cfg.vectorstore.collection_name;
    o->store.params_json = own->cfg.vectorstore.params_json;
    if (!o->store.collection_name) /* this message before bench_query_column's */
      VF_FAIL(vf_error_set(err, VF_ECONFIG, "%s: vectorstore.collection_name is required", own->cfg.name));
    if (st != VF_OK) goto out;
    if (own->cfg.vectorstore.type == VF_CFG_STORE_LOCAL) {
      o->store.type = "local";
      o->store.path = own->cfg.vectorstore.path ? own->cfg.vectorstore.path : VF_CONFIG_DEFAULT_STORE_PATH;
    } else {
      o->store.type = "qdrant";
      o->store.url = own->cfg.vectorstore.url;
      o->store.api_key = own->cfg.vectorstore.api_key;
      o->store.prefer_grpc = own->cfg.vectorstore.prefer_grpc; /* issue 18: Points/QueryBatch */
      o->store.grpc_port = (int)own->cfg.vectorstore.grpc_port;
      o->store.grpc_max_message_bytes = own->cfg.vectorstore.grpc_max_message_mb << 20;
    }
  } else {
    if (strcmp(rq->store_type, "local") != 0)
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "--store %s: bench takes --store local (other stores: give "
                           "their load CONFIG)", rq->store_type));
    if (!rq->collection) VF_FAIL(vf_error_set(err, VF_EUSAGE, "--store local needs --collection NAME"));
    o->store.type = "local";
    o->store.path = rq->path ? rq->path : VF_CONFIG_DEFAULT_STORE_PATH;
    o->store.collection_name = rq->collection;
    qcol = rq->column;
  }
  VF_TRY(bench_read_queries(rq->queries, qcol, &tg->q, err));
  VF_TRY(bench_queries_filter(&tg->q, rq->filter, rq->queries, err));
  VF_TRY(bench_read_truth(rq->ground_truth, &tg->t, err));
  if (o->k > tg->t.k)
    VF_FAIL(vf_error_set(err, VF_EUSAGE,
                         "-k %zu exceeds the %zu hits per query of the ground truth %s (compute it "
                         "with -k %zu or more)",
                         o->k, tg->t.k, rq->ground_truth, o->k));
  VF_TRY(bench_align(&tg->q, &tg->t, &tg->rows, err));
  if (strcmp(o->store.type, "local") == 0) {
    VF_TRY(bench_local_spec(o->store.path, o->store.collection_name, &own->spec, &own->nspec, err));
    if (!o->vector) /* --store: the vector named like the queries column, if any */
      for (int i = 0; i < own->nspec; i++)
        if (own->spec[i].kind == CORPUS_VEC_DENSE && strcmp(own->spec[i].name, tg->q.column) == 0)
          o->vector = own->spec[i].name;
    o->store.vectors = own->spec;
    o->store.nvectors = own->nspec;
  } else { /* a remote store: the one vector searched, as the config says */
    const vf_cfg_vector *v = vf_config_find_vector(&own->cfg, o->vector);
    own->one = (store_vector_spec){o->vector, CORPUS_VEC_DENSE,
                                   v ? vf_config_vector_distance(&own->cfg, v) : CORPUS_COSINE, tg->q.dim};
    o->store.vectors = &own->one;
    o->store.nvectors = 1;
  }
  if (rq->qdrant && strcmp(o->store.type, "qdrant") != 0)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "--hnsw-ef, --exact, --oversampling and --rescore apply to "
                         "qdrant stores (this store is %s)", o->store.type));
  o->qdrant = rq->qdrant;
  /* truth of another metric or corpus is refused before a query runs (issue 14) */
  VF_TRY(bench_check_truth(o, &tg->t, tg->rows, tg->q.n, rq->ground_truth, err));
out:
  if (st != VF_OK) bench_target_free(tg);
  return st;
}

/* bench_target_free(): see bench.h. */
void bench_target_free(bench_target *tg) {
  if (!tg) return;
  if (tg->own) {
    bench_spec_free(tg->own->spec, tg->own->nspec);
    vf_config_free(&tg->own->cfg);
    free(tg->own);
  }
  free(tg->rows);
  bench_truth_free(&tg->t);
  bench_queries_free(&tg->q);
  memset(tg, 0, sizeof *tg);
}

/* bench_execute(): see bench.h. */
vf_status bench_execute(const bench_request *rq, bench_report *rep, char **vector, vf_error *err) {
  bench_target tg;
  memset(rep, 0, sizeof *rep);
  if (vector) *vector = NULL;
  vf_status st = bench_target_open(rq, &tg, err);
  if (st != VF_OK) return st;
  VF_TRY(bench_run(&tg.o, &tg.q, &tg.t, tg.rows, rep, err));
  if (vector && tg.o.vector && !(*vector = vf_strdup(tg.o.vector)))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
out:
  bench_target_free(&tg);
  return st;
}
