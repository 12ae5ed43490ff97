/*
 * vforge bench CONFIG|--store local --path DIR --collection NAME --queries Q --ground-truth GT
 *   -k K [--concurrency C | --rps R] [--json]
 * A thin wrapper over include/vforge/bench.h (issue 5 "bench"; DESIGN.md "Command line"): the
 * store comes from the load config's `vectorstore` (or the --store options), the vector from
 * the config's `vectors` (--column picks one when there are several).  Human summary on stderr;
 * with --json exactly one JSON object {k, queries, recall, recall_min, recall_max, qps,
 * latency_ms: {p50, p95, p99, max}, errors} on stdout.
 * Sweeps (issue 19): --sweep NAME=v1,v2 (repeatable; the grid is their product) and list-valued
 * --concurrency / --rps run bench_sweep(); --json then prints {"points": [...]}; --results,
 * --per-query and --plot keep the campaign's figures.  `vforge plot` (cmd_plot.c) overlays
 * result files.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "vforge/bench.h"
#include "vforge/config.h"

static const cli_opt BENCH_OPTS[] = {
    {"queries", "Q", "queries parquet file (query_id + the vector column), e.g. <prefix>/eval/queries_1000.parquet; or an ann-benchmarks .hdf5 bundle (its 'test'), .npy or .fbin/.u8bin/.i8bin (query i has id \"i\"); or an ann-filtering-benchmark bundle (a directory or .tgz, or its tests.jsonl: each query with its conditions as filter)"},
    {"ground-truth", "GT", "exact top-K parquet (query_id, hit_ids, hit_scores), K >= k; or an .hdf5 bundle ('neighbors', 'distances') or a big-ann ground-truth file: neighbor row r is point id r (load with id_expression: row); default for an ann-filtering-benchmark bundle: its closest_ids"},
    {"k", "K", "neighbours per query (-k K; recall@k)"},
    {"concurrency", "C", "closed loop with C workers, each with its own store handle (default 1); with --rps: the workers serving the queue; a list C1,C2,... sweeps it (a throughput-latency curve)"},
    {"rps", "R", "open loop: query i is issued at t0 + i/R, latency counted from that time; a list R1,R2,... sweeps the offered rate"},
    {"max-outstanding", "N", "open loop: queued + in-flight bound; queries beyond it are dropped and counted as errors (default max(64, 4 x workers))"},
    {"column", "NAME", "the vector to search: a config vector's name or column, or with --store the queries column (default: the only dense vector)"},
    {"nprobe", "N", "local store: IVF lists probed per query (default: the index's; an error when the collection has no index)"},
    {"hnsw-ef", "N", "qdrant stores: the search's hnsw_ef (default: the collection's)"},
    {"exact", NULL, "qdrant stores: exact (brute-force) search instead of the HNSW index"},
    {"oversampling", "X", "qdrant stores: quantization oversampling (>= 1)"},
    {"rescore", "BOOL", "qdrant stores: quantization rescore, true or false"},
    {"sweep", "NAME=V,...", "run once per value: NAME is nprobe, hnsw-ef, oversampling, rescore, exact, concurrency or rps; repeat for a grid (every combination)"},
    {"warmup", "N", "run N queries (untimed, unscored) before timing each run (default 0)"},
    {"per-query", "FILE", "write each query's latency and recall as JSON lines {point, params, query_id, latency_ms, recall, recall_max}"},
    {"results", "FILE", "write one JSON line per run/point: the figures, params, config, machine (CPU, cores, BLAS core) and vforge version"},
    {"plot", "FILE", "draw recall@k vs QPS (Pareto front) and latency percentiles into FILE.png or FILE.svg"},
    {"label", "NAME", "the series name in --results and --plot (default: STORE:COLLECTION)"},
    {"store", "TYPE", "without CONFIG: the store type (local)"},
    {"path", "DIR", "with --store local: the store's root directory (default ./vforge-data)"},
    {"collection", "NAME", "with --store: the collection to search"},
    {"filter", "JSON|@FILE", "search every query with this Qdrant filter (the one its ground truth was computed with); a queries file's __filter__ column filters per query instead"},
    {"json", NULL, "print one JSON object {k, queries, recall, recall_min, recall_max, qps, latency_ms: {p50, p95, p99, max}, errors} on stdout; with a sweep {\"points\": [{params, ...}]}"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_BENCH = {
    "bench",
    "CONFIG|--store local --path DIR --collection NAME --queries Q --ground-truth GT -k K "
    "[--concurrency C | --rps R] [--sweep NAME=V,...]... [--results F] [--plot F] [--json]",
    "Run every query once against the store and report recall@k against the exact ground\n"
    "truth, latency p50/p95/p99/max (ms, exact nearest-rank over all queries), QPS and errors.\n"
    "Recall counts returned ids found in the truth's top k (recall, recall_min); when scores tie\n"
    "at the cutoff an equally near point the truth file did not keep also counts (recall_max:\n"
    "a returned score equal to the truth's k-th within 1e-6 relative).  The store is the\n"
    "CONFIG's vectorstore (a load config: local or qdrant) or --store local --path DIR\n"
    "--collection NAME.  Qdrant support is tested against a stand-in that checks every\n"
    "request against Qdrant's OpenAPI schema (no Qdrant server could be installed).\n"
    "A sweep (--sweep NAME=V,..., or a list for --concurrency / --rps) runs the whole bench once\n"
    "per point of the grid, each with fresh handles and its own warm-up; `vforge plot` overlays\n"
    "--results files of several runs.\n"
    "Filtered queries (a __filter__ column, or --filter) are searched with their filter; recall\n"
    "is over min(k, the query's true hits), and queries without any true hit are counted and\n"
    "left out of the means.",
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
  cli_summary("bench: %zu queries, k = %zu, vector %s, ", r->queries, r->k, vector ? vector : "(the dense one)");
  if (r->open_loop) cli_summary("open loop at %.6g queries/s (%d workers)\n", r->rps, r->workers);
  else cli_summary("closed loop, %d worker%s\n", r->workers, r->workers == 1 ? "" : "s");
  cli_summary("  recall@%zu   %.4f", r->k, r->recall);
  if (r->recall_max != r->recall_min)
    cli_summary("  (ties at the cutoff: range [%.4f, %.4f])", r->recall_min, r->recall_max);
  cli_summary("\n  throughput %.1f queries/s (%zu answered in %.3f s)\n", r->qps, r->answered, r->seconds);
  cli_summary("  latency ms p50 %.3f  p95 %.3f  p99 %.3f  max %.3f\n", r->p50_ms, r->p95_ms,
          r->p99_ms, r->max_ms);
  cli_summary("  errors     %zu", r->errors);
  if (r->dropped) cli_summary(" (%zu dropped at the outstanding bound)", r->dropped);
  cli_summary("\n");
  if (r->first_error_status != VF_OK) cli_summary("  first error: %s\n", r->first_error);
  if (r->filtered)
    cli_summary("  filtered   %zu queries; %zu without any true hit (left out of recall)\n",
                r->filtered, r->no_truth);
}

/* a fixed value of a sweepable flag (--oversampling 2, --rescore false) */
static vf_status knob_flag(const cli_args *a, const char *name, bench_knob k, double *out, vf_error *err) {
  vf_status st = bench_knob_value(k, cli_get(&CLI_BENCH, a, name), out, err);
  if (st != VF_OK) return vf_error_prefix(err, "--");
  return VF_OK;
}

/* The grid of --sweep flags plus list-valued --concurrency / --rps; a knob both fixed by its
 * flag and swept is refused (which value would the points have?). */
static vf_status build_grid(const cli_args *a, const char *conc_list, const char *rps_list,
                            bench_grid *g, vf_error *err) {
  const char *specs[CLI_MAX_OCC];
  int n = cli_get_all(&CLI_BENCH, a, "sweep", specs, CLI_MAX_OCC);
  vf_status st = VF_OK;
  for (int i = 0; i < n; i++) VF_TRY(bench_grid_add(g, specs[i], err));
  if (conc_list) VF_TRY(bench_grid_add_list(g, BENCH_KNOB_CONCURRENCY, conc_list, err));
  if (rps_list) VF_TRY(bench_grid_add_list(g, BENCH_KNOB_RPS, rps_list, err));
  for (int i = 0; i < g->naxes; i++) {
    bench_knob k = g->axes[i].knob;
    const char *name = bench_knob_name(k);
    bool listed = (k == BENCH_KNOB_CONCURRENCY && conc_list) || (k == BENCH_KNOB_RPS && rps_list);
    if (!listed && cli_get(&CLI_BENCH, a, name))
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "--%s and --sweep %s=...: give the value once (a fixed flag "
                           "or a sweep)", name, name));
  }
out:
  /* a knob given both as a list and in --sweep (bench_grid_add*: "swept twice") */
  if (st != VF_OK && (conc_list || rps_list) && strstr(err->msg, "swept twice"))
    st = vf_error_set(err, VF_EUSAGE, "give --concurrency / --rps values either as a list or in "
                      "--sweep, not both");
  return st;
}

/* What bench_sweep()'s callback writes to: the open --results / --per-query files. */
typedef struct bench_campaign {
  bench_run_info info;
  bench_machine machine;
  const bench_queries *q;
  const char *vector;
  bool sweep;
  vf_atomic_file *results, *per_query;
  vf_buf line;
} bench_campaign;

static void sweep_header(const bench_options *o, const bench_queries *q, const bench_grid *g) {
  cli_summary("bench: %zu queries, k = %zu, vector %s, sweep of %zu points:", q->n, o->k,
          o->vector ? o->vector : "(the dense one)", bench_grid_size(g));
  for (int i = 0; i < g->naxes; i++) {
    cli_summary(" %s=", bench_knob_name(g->axes[i].knob));
    for (size_t j = 0; j < g->axes[i].n; j++) {
      double v = g->axes[i].values[j];
      bool b = g->axes[i].knob == BENCH_KNOB_RESCORE || g->axes[i].knob == BENCH_KNOB_EXACT;
      if (b) cli_summary("%s%s", j ? "," : "", v != 0 ? "true" : "false");
      else cli_summary("%s%.6g", j ? "," : "", v);
    }
  }
  cli_summary("\n");
}

static vf_status on_point(void *user, const bench_point *p, size_t i, size_t n, vf_error *err) {
  bench_campaign *c = user;
  const bench_report *r = &p->rep;
  cli_progress_end(); /* a point's lines start their own line */
  if (!c->sweep) {
    summary(r, c->vector);
  } else {
    char params[256];
    bench_point_params(p, params, sizeof params);
    cli_summary("  point %zu/%zu %s: recall@%zu %.4f", i + 1, n, params, r->k, r->recall);
    if (r->recall_max != r->recall_min) cli_summary(" [%.4f, %.4f]", r->recall_min, r->recall_max);
    cli_summary("  %.1f q/s  p50 %.3f  p95 %.3f  p99 %.3f ms  errors %zu\n", r->qps, r->p50_ms,
            r->p95_ms, r->p99_ms, r->errors);
    if (r->first_error_status != VF_OK) cli_summary("    first error: %s\n", r->first_error);
  }
  vf_status st = VF_OK;
  if (c->results) {
    vf_buf_reset(&c->line);
    VF_TRY(bench_results_json(p, i, n, &c->info, &c->machine, &c->line, err));
    VF_TRY(vf_atomic_write(c->results, c->line.data, c->line.len, err));
  }
  if (c->per_query) {
    vf_buf_reset(&c->line);
    VF_TRY(bench_per_query_json(p, i, c->q, &c->line, err));
    VF_TRY(vf_atomic_write(c->per_query, c->line.data, c->line.len, err));
  }
out:
  return st;
}

/* commit an output file holding `done` of `total` points (none: it is not created) */
static vf_status finish_file(vf_atomic_file **f, const char *path, size_t done, size_t total,
                             vf_error *err) {
  if (!*f) return VF_OK;
  vf_atomic_file *x = *f;
  *f = NULL;
  if (done == 0) {
    vf_atomic_abort(x);
    return VF_OK;
  }
  vf_status st = vf_atomic_commit(x, err);
  if (st != VF_OK) return st;
  if (done < total)
    fprintf(stderr, "bench: %s holds the %zu of %zu points measured before the failure\n", path, done, total);
  return VF_OK;
}

/* commit the --results / --per-query files of `done` points, the first failure in *err (NULL:
 * ignored, after the run failed) */
static vf_status finish_files(bench_campaign *c, const char *results_path, const char *perq_path,
                              size_t done, size_t total, vf_error *err) {
  vf_error ferr;
  vf_error_clear(&ferr);
  vf_status fst = finish_file(&c->results, results_path, done, total, &ferr);
  vf_status pst = finish_file(&c->per_query, perq_path, done, total, fst == VF_OK ? &ferr : NULL);
  if (err && (fst != VF_OK || pst != VF_OK)) *err = ferr;
  return fst != VF_OK ? fst : pst;
}

int cmd_bench(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  bench_request rq;
  memset(&rq, 0, sizeof rq);
  bench_target tg;
  memset(&tg, 0, sizeof tg);
  bench_grid grid;
  memset(&grid, 0, sizeof grid);
  uint64_t k = 0;
  char *filter = NULL;
  /* the campaign's files are opened (and their directories checked) before the run */
  bench_campaign cam;
  memset(&cam, 0, sizeof cam);
  VF_BUF_INIT(&cam.line, VF_BUF_MAX_ROWS_HELD);
  const char *results_path = NULL, *perq_path = NULL;
  bench_point *pts = NULL;
  size_t npts = 0;
  vf_buf jb;
  VF_BUF_INIT(&jb, VF_BUF_MAX_JSON_DOC);
  bench_series ser;
  memset(&ser, 0, sizeof ser);

  vf_status st = VF_OK;
  VF_TRY(cli_parse(&CLI_BENCH, argc, argv, &a, &err));
  const char *rps = cli_get(&CLI_BENCH, &a, "rps");
  rq.queries = cli_get(&CLI_BENCH, &a, "queries");
  rq.ground_truth = cli_get(&CLI_BENCH, &a, "ground-truth");
  rq.store_type = cli_get(&CLI_BENCH, &a, "store");
  rq.column = cli_get(&CLI_BENCH, &a, "column");
  rq.config = a.npos == 1 ? a.pos[0] : NULL;
  rq.path = cli_get(&CLI_BENCH, &a, "path");
  rq.collection = cli_get(&CLI_BENCH, &a, "collection");
  /* an ann-filtering-benchmark bundle (its tests.jsonl) holds its own ground truth */
  if (rq.queries && !rq.ground_truth && bench_is_bundle(rq.queries)) rq.ground_truth = rq.queries;
  if (cli_get(&CLI_BENCH, &a, "filter"))
    VF_TRY(cli_text_arg("filter", cli_get(&CLI_BENCH, &a, "filter"), FLT_MAX_TEXT, &filter, &err));
  rq.filter = filter;
  if (!rq.queries || !rq.ground_truth || !cli_get(&CLI_BENCH, &a, "k"))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "vforge bench: --queries, --ground-truth and -k are required "
                         "(usage: vforge bench %s)", CLI_BENCH.synopsis));
  if ((a.npos == 1) == (rq.store_type != NULL))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "vforge bench: give either a CONFIG or --store local --path DIR "
                         "--collection NAME"));
  if (a.npos == 1 && (rq.path || rq.collection))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "vforge bench: --path and --collection go with --store, not with a CONFIG"));
  VF_TRY(cli_get_u64(&CLI_BENCH, &a, "k", 0, &k, &err));
  if (k < 1 || k > BENCH_MAX_K) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "-k must be in 1..%zu", (size_t)BENCH_MAX_K));
  rq.k = (size_t)k;
  const char *conc = cli_get(&CLI_BENCH, &a, "concurrency");
  bool conc_list = conc && strchr(conc, ','), rps_list = rps && strchr(rps, ',');
  rq.concurrency = 1;
  if (!conc_list) VF_TRY(get_int(&a, "concurrency", 1, 1, 1024, &rq.concurrency, &err));
  if (cli_get(&CLI_BENCH, &a, "max-outstanding"))
    VF_TRY(get_int(&a, "max-outstanding", 0, 1, 1 << 20, &rq.max_outstanding, &err));
  /* --max-outstanding without an open loop: refused by bench_sweep() */
  if (rps && !rps_list) VF_TRY(get_rate(rps, &rq.rps, &err));
  uint32_t nprobe = 0;
  if (cli_get(&CLI_BENCH, &a, "nprobe")) {
    int np = 0;
    VF_TRY(get_int(&a, "nprobe", 0, 1, 1 << 24, &np, &err));
    nprobe = (uint32_t)np;
  }
  size_t warmup = 0;
  if (cli_get(&CLI_BENCH, &a, "warmup")) {
    uint64_t w = 0;
    VF_TRY(cli_get_u64(&CLI_BENCH, &a, "warmup", 0, &w, &err));
    if (w > BENCH_MAX_QUERIES)
      VF_FAIL(vf_error_set(&err, VF_EUSAGE, "--warmup must be at most %zu", (size_t)BENCH_MAX_QUERIES));
    warmup = (size_t)w;
  }
  /* the grid: --sweep NAME=..., list-valued --concurrency / --rps */
  VF_TRY(build_grid(&a, conc_list ? conc : NULL, rps_list ? rps : NULL, &grid, &err));
  results_path = cli_get(&CLI_BENCH, &a, "results");
  perq_path = cli_get(&CLI_BENCH, &a, "per-query");
  const char *plot_path = cli_get(&CLI_BENCH, &a, "plot");
  if (plot_path) VF_TRY(bench_plot_check_path(plot_path, &err));

  store_qdrant_search_opts qopts = {0, false, -1, 0};
  bool qset = cli_get(&CLI_BENCH, &a, "hnsw-ef") || cli_get(&CLI_BENCH, &a, "exact") ||
              cli_get(&CLI_BENCH, &a, "oversampling") || cli_get(&CLI_BENCH, &a, "rescore");
  if (qset) {
    int ef = 0;
    double v = 0;
    if (cli_get(&CLI_BENCH, &a, "hnsw-ef")) VF_TRY(get_int(&a, "hnsw-ef", 0, 1, 1 << 24, &ef, &err));
    qopts.hnsw_ef = ef;
    qopts.exact = cli_get(&CLI_BENCH, &a, "exact") != NULL;
    if (cli_get(&CLI_BENCH, &a, "oversampling"))
      VF_TRY(knob_flag(&a, "oversampling", BENCH_KNOB_OVERSAMPLING, &qopts.oversampling, &err));
    if (cli_get(&CLI_BENCH, &a, "rescore")) {
      VF_TRY(knob_flag(&a, "rescore", BENCH_KNOB_RESCORE, &v, &err));
      qopts.rescore = v != 0;
    }
    rq.qdrant = &qopts;
  }
  cli_on_interrupt("bench stopped before every query ran (no report); run it again");
  /* the store, the vector, the queries and the truth (bench_target_open, as vforge.bench) */
  VF_TRY(bench_target_open(&rq, &tg, &err));
  bench_options *o = &tg.o;
  o->nprobe = nprobe;
  o->warmup = warmup;
  o->per_query = perq_path != NULL;
  cam.info.label = cli_get(&CLI_BENCH, &a, "label");
  cam.info.queries_path = rq.queries;
  cam.info.truth_path = rq.ground_truth;
  cam.q = &tg.q;
  cam.sweep = grid.naxes > 0;
  cam.vector = o->vector;
  /* a results file describes the machine, the BLAS included: load it now, before the warmup,
   * rather than leave it out (a bench without --results never loads it) */
  if (results_path) vf_blas_require(NULL);
  bench_machine_get(&cam.machine);
  if (results_path) VF_TRY(vf_atomic_open(results_path, &cam.results, &err));
  if (perq_path) VF_TRY(vf_atomic_open(perq_path, &cam.per_query, &err));
  VF_TRY(bench_sweep_check(o, &grid, &err));
  if (cam.sweep) sweep_header(o, &tg.q, &grid);
  VF_TRY(bench_sweep(o, &grid, &tg.q, &tg.t, tg.rows, on_point, &cam, &pts, &npts, &err));
  VF_TRY(finish_files(&cam, results_path, perq_path, npts, bench_grid_size(&grid), &err));
  if (cli_get(&CLI_BENCH, &a, "json")) {
    VF_TRY(cam.sweep ? bench_points_json(pts, npts, &jb, &err) : bench_report_json(&pts[0].rep, &jb, &err));
    VF_TRY(cli_write_json(jb.data, jb.len, &err));
  }
  if (plot_path) {
    VF_TRY(bench_series_from_points(pts, npts, cam.info.label, &ser, &err));
    VF_TRY(bench_plot(&ser, 1, NULL, plot_path, &err));
    cli_summary("bench: plot written to %s\n", plot_path);
  }
out:
  /* points measured before a failure are kept in the files (each line says which point of how many) */
  (void)finish_files(&cam, results_path, perq_path, npts, bench_grid_size(&grid), NULL);
  vf_buf_free(&cam.line);
  vf_buf_free(&jb);
  bench_series_free(&ser);
  bench_points_free(pts, npts);
  bench_target_free(&tg);
  free(filter);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}
