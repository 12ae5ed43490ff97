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
  bench_request rq;
  memset(&rq, 0, sizeof rq);
  bench_report rep;
  memset(&rep, 0, sizeof rep);
  uint64_t k = 0;
  char *vector = NULL;

  vf_status st = cli_parse(&CLI_BENCH, argc, argv, &a, &err);
  const char *rps = st == VF_OK ? cli_get(&CLI_BENCH, &a, "rps") : NULL;
  if (st == VF_OK) {
    rq.queries = cli_get(&CLI_BENCH, &a, "queries");
    rq.ground_truth = cli_get(&CLI_BENCH, &a, "ground-truth");
    rq.store_type = cli_get(&CLI_BENCH, &a, "store");
    rq.column = cli_get(&CLI_BENCH, &a, "column");
    rq.config = a.npos == 1 ? a.pos[0] : NULL;
    rq.path = cli_get(&CLI_BENCH, &a, "path");
    rq.collection = cli_get(&CLI_BENCH, &a, "collection");
  }
  if (st == VF_OK && (!rq.queries || !rq.ground_truth || !cli_get(&CLI_BENCH, &a, "k")))
    st = vf_error_set(&err, VF_EUSAGE, "vforge bench: --queries, --ground-truth and -k are required "
                      "(usage: vforge bench %s)", CLI_BENCH.synopsis);
  if (st == VF_OK && (a.npos == 1) == (rq.store_type != NULL))
    st = vf_error_set(&err, VF_EUSAGE, "vforge bench: give either a CONFIG or --store local --path DIR "
                      "--collection NAME");
  if (st == VF_OK && a.npos == 1 && (rq.path || rq.collection))
    st = vf_error_set(&err, VF_EUSAGE, "vforge bench: --path and --collection go with --store, not with a CONFIG");
  if (st == VF_OK) st = cli_get_u64(&CLI_BENCH, &a, "k", 0, &k, &err);
  if (st == VF_OK && (k < 1 || k > BENCH_MAX_K))
    st = vf_error_set(&err, VF_EUSAGE, "-k must be in 1..%zu", (size_t)BENCH_MAX_K);
  if (st == VF_OK) st = get_int(&a, "concurrency", 1, 1, 1024, &rq.concurrency, &err);
  if (st == VF_OK && cli_get(&CLI_BENCH, &a, "max-outstanding"))
    st = get_int(&a, "max-outstanding", 0, 1, 1 << 20, &rq.max_outstanding, &err);
  if (st == VF_OK && cli_get(&CLI_BENCH, &a, "max-outstanding") && !rps)
    st = vf_error_set(&err, VF_EUSAGE, "--max-outstanding applies to the open loop (--rps) only");
  if (st == VF_OK && rps) st = get_rate(rps, &rq.rps, &err);
  rq.k = (size_t)k;
  store_qdrant_search_opts qopts = {0, false, -1, 0};
  if (st == VF_OK && (cli_get(&CLI_BENCH, &a, "hnsw-ef") || cli_get(&CLI_BENCH, &a, "exact"))) {
    int ef = 0;
    if (cli_get(&CLI_BENCH, &a, "hnsw-ef")) st = get_int(&a, "hnsw-ef", 0, 1, 1 << 24, &ef, &err);
    qopts.hnsw_ef = ef;
    qopts.exact = cli_get(&CLI_BENCH, &a, "exact") != NULL;
    rq.qdrant = &qopts;
  }
  cli_on_interrupt("bench stopped before every query ran (no report); run it again");
  if (st == VF_OK) st = bench_execute(&rq, &rep, &vector, &err);
  cli_progress_end();
  if (st == VF_OK) {
    summary(&rep, vector);
    if (cli_get(&CLI_BENCH, &a, "json")) {
      vf_buf b;
      vf_buf_init(&b, 0);
      st = bench_report_json(&rep, &b, &err);
      if (st == VF_OK) st = cli_write_stdout(NULL, b.data, b.len, &err);
      vf_buf_free(&b);
    }
  }
  free(vector);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}
