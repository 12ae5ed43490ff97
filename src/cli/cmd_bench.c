/*
 * vforge bench CONFIG|--store local --path DIR --collection NAME --queries Q --ground-truth GT
 *   -k K [--concurrency C | --rps R] [--json]
 * A thin wrapper over include/vforge/bench.h (issue 5 "bench"; DESIGN.md "Command line"): the
 * store comes from the load config's `vectorstore` (or the --store options), the vector from
 * the config's `vectors` (--column picks one when there are several).  Human summary on stderr;
 * with --json exactly one JSON object {k, queries, recall, recall_min, recall_max, qps,
 * latency_ms: {p50, p95, p99, max}, errors} on stdout.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vforge/bench.h"
#include "vforge/config.h"

static const cli_opt BENCH_OPTS[] = {
    {"queries", "Q", "queries parquet file (query_id + the vector column), e.g. <prefix>/eval/queries_1000.parquet; or an ann-benchmarks .hdf5 bundle (its 'test'), .npy or .fbin/.u8bin/.i8bin (query i has id \"i\")"},
    {"ground-truth", "GT", "exact top-K parquet (query_id, hit_ids, hit_scores), K >= k; or an .hdf5 bundle ('neighbors', 'distances') or a big-ann ground-truth file: neighbor row r is point id r (load with id_expression: row)"},
    {"k", "K", "neighbours per query (-k K; recall@k)"},
    {"concurrency", "C", "closed loop with C workers, each with its own store handle (default 1); with --rps: the workers serving the queue"},
    {"rps", "R", "open loop: query i is issued at t0 + i/R, latency counted from that time"},
    {"max-outstanding", "N", "open loop: queued + in-flight bound; queries beyond it are dropped and counted as errors (default max(64, 4 x workers))"},
    {"column", "NAME", "the vector to search: a config vector's name or column, or with --store the queries column (default: the only dense vector)"},
    {"hnsw-ef", "N", "qdrant stores: the search's hnsw_ef (default: the collection's)"},
    {"exact", NULL, "qdrant stores: exact (brute-force) search instead of the HNSW index"},
    {"store", "TYPE", "without CONFIG: the store type (local)"},
    {"path", "DIR", "with --store local: the store's root directory (default ./vforge-data)"},
    {"collection", "NAME", "with --store: the collection to search"},
    {"json", NULL, "print one JSON object {k, queries, recall, recall_min, recall_max, qps, latency_ms: {p50, p95, p99, max}, errors} on stdout"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_BENCH = {
    "bench",
    "CONFIG|--store local --path DIR --collection NAME --queries Q --ground-truth GT -k K "
    "[--concurrency C | --rps R] [--json]",
    "Run every query once against the store and report recall@k against the exact ground\n"
    "truth, latency p50/p95/p99/max (ms, exact nearest-rank over all queries), QPS and errors.\n"
    "Recall counts returned ids found in the truth's top k (recall, recall_min); when scores tie\n"
    "at the cutoff an equally near point the truth file did not keep also counts (recall_max:\n"
    "a returned score equal to the truth's k-th within 1e-6 relative).  The store is the\n"
    "CONFIG's vectorstore (a load config: local or qdrant) or --store local --path DIR\n"
    "--collection NAME.  Qdrant support is tested against a stand-in that checks every\n"
    "request against Qdrant's OpenAPI schema (no Qdrant server could be installed).",
    BENCH_OPTS, 0, 1};

static vf_status get_int(const cli_args *a, const char *name, int dflt, int lo, int hi, int *out,
                         vf_error *err) {
  uint64_t v;
  vf_status st = cli_get_u64(&CLI_BENCH, a, name, (uint64_t)dflt, &v, err);
  if (st != VF_OK) return st;
  if (v < (uint64_t)lo || v > (uint64_t)hi)
    return vf_error_set(err, VF_EUSAGE, "--%s must be in %d..%d, got %llu", name, lo, hi,
                        (unsigned long long)v);
  *out = (int)v;
  return VF_OK;
}

static vf_status get_rate(const char *s, double *out, vf_error *err) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (!*s || *end || errno || !(v > 0) || isinf(v) || v > 1e9)
    return vf_error_set(err, VF_EUSAGE, "--rps expects a positive number of queries per second, got '%s'", s);
  *out = v;
  return VF_OK;
}

/* The config's vector to search: --column (a vector name or column) or the only dense one. */
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

static void summary(const bench_report *r, const char *vector) {
  fprintf(stderr, "bench: %zu queries, k = %zu, vector %s, ", r->queries, r->k, vector ? vector : "(the dense one)");
  if (r->open_loop) fprintf(stderr, "open loop at %.6g queries/s (%d workers)\n", r->rps, r->workers);
  else fprintf(stderr, "closed loop, %d worker%s\n", r->workers, r->workers == 1 ? "" : "s");
  fprintf(stderr, "  recall@%zu   %.4f", r->k, r->recall);
  if (r->recall_max != r->recall_min)
    fprintf(stderr, "  (ties at the cutoff: range [%.4f, %.4f])", r->recall_min, r->recall_max);
  fprintf(stderr, "\n  throughput %.1f queries/s (%zu answered in %.3f s)\n", r->qps, r->answered, r->seconds);
  fprintf(stderr, "  latency ms p50 %.3f  p95 %.3f  p99 %.3f  max %.3f\n", r->p50_ms, r->p95_ms,
          r->p99_ms, r->max_ms);
  fprintf(stderr, "  errors     %zu", r->errors);
  if (r->dropped) fprintf(stderr, " (%zu dropped at the outstanding bound)", r->dropped);
  fputc('\n', stderr);
  if (r->first_error_status != VF_OK) fprintf(stderr, "  first error: %s\n", r->first_error);
}

int cmd_bench(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
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
  bench_report rep;
  memset(&rep, 0, sizeof rep);
  uint64_t k = 0;
  const char *qcol = NULL;
  bool have_spec = false;

  vf_status st = cli_parse(&CLI_BENCH, argc, argv, &a, &err);
  const char *qpath = st == VF_OK ? cli_get(&CLI_BENCH, &a, "queries") : NULL;
  const char *gpath = st == VF_OK ? cli_get(&CLI_BENCH, &a, "ground-truth") : NULL;
  const char *stype = st == VF_OK ? cli_get(&CLI_BENCH, &a, "store") : NULL;
  const char *column = st == VF_OK ? cli_get(&CLI_BENCH, &a, "column") : NULL;
  const char *rps = st == VF_OK ? cli_get(&CLI_BENCH, &a, "rps") : NULL;
  if (st == VF_OK && (!qpath || !gpath || !cli_get(&CLI_BENCH, &a, "k")))
    st = vf_error_set(&err, VF_EUSAGE, "vforge bench: --queries, --ground-truth and -k are required "
                      "(usage: vforge bench %s)", CLI_BENCH.synopsis);
  if (st == VF_OK && (a.npos == 1) == (stype != NULL))
    st = vf_error_set(&err, VF_EUSAGE, "vforge bench: give either a CONFIG or --store local --path DIR "
                      "--collection NAME");
  if (st == VF_OK && a.npos == 1 && (cli_get(&CLI_BENCH, &a, "path") || cli_get(&CLI_BENCH, &a, "collection")))
    st = vf_error_set(&err, VF_EUSAGE, "vforge bench: --path and --collection go with --store, not with a CONFIG");
  if (st == VF_OK) st = cli_get_u64(&CLI_BENCH, &a, "k", 0, &k, &err);
  if (st == VF_OK && (k < 1 || k > BENCH_MAX_K))
    st = vf_error_set(&err, VF_EUSAGE, "-k must be in 1..%zu", (size_t)BENCH_MAX_K);
  if (st == VF_OK) st = get_int(&a, "concurrency", 1, 1, 1024, &o.concurrency, &err);
  if (st == VF_OK && cli_get(&CLI_BENCH, &a, "max-outstanding"))
    st = get_int(&a, "max-outstanding", 0, 1, 1 << 20, &o.max_outstanding, &err);
  if (st == VF_OK && cli_get(&CLI_BENCH, &a, "max-outstanding") && !rps)
    st = vf_error_set(&err, VF_EUSAGE, "--max-outstanding applies to the open loop (--rps) only");
  if (st == VF_OK && rps) st = get_rate(rps, &o.rps, &err);
  o.k = (size_t)k;

  /* the store and the vector */
  if (st == VF_OK && a.npos == 1) {
    const vf_cfg_vector *v = NULL;
    st = vf_config_load(a.pos[0], &cfg, &err);
    if (st == VF_OK) st = pick_vector(&cfg, column, &v, &err);
    if (st == VF_OK) {
      qcol = v->column ? v->column : v->name;
      o.vector = v->name;
      o.store.collection_name = cfg.vectorstore.collection_name;
      o.store.params_json = cfg.vectorstore.params_json;
      if (!o.store.collection_name)
        st = vf_error_set(&err, VF_ECONFIG, "%s: vectorstore.collection_name is required", cfg.name);
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
    if (strcmp(stype, "local") != 0)
      st = vf_error_set(&err, VF_EUSAGE, "--store %s: bench takes --store local (other stores: give "
                        "their load CONFIG)", stype);
    else if (!cli_get(&CLI_BENCH, &a, "collection"))
      st = vf_error_set(&err, VF_EUSAGE, "--store local needs --collection NAME");
    o.store.type = "local";
    o.store.path = cli_get(&CLI_BENCH, &a, "path");
    if (!o.store.path) o.store.path = VF_CONFIG_DEFAULT_STORE_PATH;
    o.store.collection_name = cli_get(&CLI_BENCH, &a, "collection");
    qcol = column;
  }
  if (st == VF_OK) st = bench_read_queries(qpath, qcol, &q, &err);
  if (st == VF_OK) st = bench_read_truth(gpath, &t, &err);
  if (st == VF_OK && o.k > t.k)
    st = vf_error_set(&err, VF_EUSAGE,
                      "-k %zu exceeds the %zu hits per query of the ground truth %s (compute it "
                      "with -k %zu or more)",
                      o.k, t.k, gpath, o.k);
  if (st == VF_OK) st = bench_align(&q, &t, &rows, &err);
  if (st == VF_OK && strcmp(o.store.type, "local") == 0) {
    st = bench_local_spec(o.store.path, o.store.collection_name, &spec, &nspec, &err);
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
  store_qdrant_search_opts qopts = {0, false, -1, 0};
  bool qset = st == VF_OK && (cli_get(&CLI_BENCH, &a, "hnsw-ef") || cli_get(&CLI_BENCH, &a, "exact"));
  if (qset && strcmp(o.store.type, "qdrant") != 0)
    st = vf_error_set(&err, VF_EUSAGE, "--hnsw-ef and --exact apply to qdrant stores (this store is %s)",
                      o.store.type);
  if (qset && st == VF_OK) {
    int ef = 0;
    if (cli_get(&CLI_BENCH, &a, "hnsw-ef")) st = get_int(&a, "hnsw-ef", 0, 1, 1 << 24, &ef, &err);
    qopts.hnsw_ef = ef;
    qopts.exact = cli_get(&CLI_BENCH, &a, "exact") != NULL;
    o.qdrant = &qopts;
  }
  cli_on_interrupt("bench stopped before every query ran (no report); run it again");
  if (st == VF_OK && have_spec) st = bench_check_truth(&o, &t, rows, q.n, gpath, &err);
  if (st == VF_OK && have_spec) st = bench_run(&o, &q, &t, rows, &rep, &err);
  cli_progress_end();
  if (st == VF_OK) {
    summary(&rep, o.vector);
    if (cli_get(&CLI_BENCH, &a, "json")) {
      vf_buf b;
      vf_buf_init(&b, 0);
      st = bench_report_json(&rep, &b, &err);
      if (st == VF_OK) st = cli_write_stdout(NULL, b.data, b.len, &err);
      vf_buf_free(&b);
    }
  }
  bench_spec_free(spec, nspec);
  free(rows);
  bench_truth_free(&t);
  bench_queries_free(&q);
  vf_config_free(&cfg);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}
