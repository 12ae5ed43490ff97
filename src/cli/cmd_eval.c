/* vforge generate-queries / brute-force / brute-force-merge: thin wrappers over eval.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vforge/eval.h"
#include "vforge/filter.h"
#include "vforge/index.h"

static const cli_opt GQ_OPTS[] = {
    {"n", "N", "number of query rows to sample (required)"},
    {"seed", "S", "sampling seed (default 42); the same seed gives the same file"},
    {"columns", "a,b", "payload columns to copy (strings/integers as they are, others as JSON text)"},
    {"column", "VEC", "the vector column: dense, multivector or sparse (needed only when several exist); "
                      "for a CONFIG, the `vectors:` entry"},
    {"output", "FILE", "output file (default <prefix>/eval/queries_<N>.parquet)"},
    {"id-root", "DIR", "local files: strip DIR from the path to form the id key"},
    {"filter-template", "T|@FILE", "a Qdrant filter per query in a __filter__ column: the string "
                                   "\"$key\" becomes the query row's own payload value, \"$~key\" a value "
                                   "drawn from the corpus; output queries_<N>_f<h>.parquet"},
    {"json", NULL, "print one JSON object {rows, corpus_rows, dim, row_groups_read, empty_files, "
                   "seconds, output} on stdout"},
    {NULL, NULL, NULL}};

#define CORPUS_ARG_HELP                                                                            \
  "The corpus is a parquet URI, a load CONFIG (*.yaml: its datasource - uri, file_list or a\n"    \
  "`type: dataset` with parts - its `vectors:` entry, --column NAME among several, and its\n"      \
  "id_expression, which must follow from file and row) or a VECFILE (.npy, .fbin/.u8bin/.i8bin,\n"  \
  ".hdf5 `train`: ids are row numbers, as `load` with `id_expression: row`).  Outputs go under\n"  \
  "the config's corpus prefix (its uri, or the directory of its first file or part) or the\n"      \
  "vector file's directory."

const cli_cmd CLI_GENERATE_QUERIES = {
    "generate-queries", "URI|CONFIG|VECFILE -n N [--seed S] [--columns a,b] [--column VEC] [--filter-template T] [--output FILE] [--json]",
    "Sample N rows uniformly over the whole corpus (seeded, deterministic) and write them as a\n"
    "queries file: query_id (the row's point id), __source_file__, __source_row__, the vector\n"
    "column and the chosen payload columns (--columns: parquet URIs only).\n"
    CORPUS_ARG_HELP,
    GQ_OPTS, 1, 1};

static const cli_opt BF_OPTS[] = {
    {"queries", "Q", "queries parquet file (from generate-queries) or vector file (.npy, .fbin, "
                     "an ann-benchmarks .hdf5's `test`; query i is \"<i>\"); required"},
    {"k", "K", "neighbours per query (required)"},
    {"metric", "M", "cosine (default; a CONFIG: the vector's distance; an .hdf5 bundle: its "
                    "distance), dot, euclid or manhattan; multivector: cosine or dot (max_sim); sparse: dot"},
    {"column", "VEC", "the vector column: dense, multivector or sparse (needed only when several exist); "
                      "for a CONFIG, the `vectors:` entry"},
    {"num-jobs", "N", "split the corpus files over N jobs (file i goes to job i % N)"},
    {"job-rank", "R", "with --num-jobs: this job's rank (0..N-1; default: from SLURM_ARRAY_TASK_ID or SKYPILOT_JOB_RANK); writes a partial result"},
    {"output", "FILE", "output file (default: the eval/ layout path)"},
    {"id-root", "DIR", "local files: strip DIR from the path to form the id key"},
    {"filter", "JSON|@FILE", "exact filtered ground truth: only rows whose payload matches this "
                             "Qdrant filter are hits (a queries file's __filter__ column filters "
                             "per query instead; giving both is an error)"},
    {"json", NULL, "print one JSON object {queries, k, metric, rows_scanned, rows_skipped, files, "
                   "empty_files, rescored, seconds, output} on stdout"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_BRUTE_FORCE = {
    "brute-force", "URI|CONFIG|VECFILE --queries Q -k K [--metric M] [--filter JSON|@FILE] [--num-jobs N --job-rank R] [--output FILE] [--json]",
    "Exact top-K of every query over the corpus (streamed once, one row group at a time):\n"
    "<prefix>/eval/brute_force_queries_<N>_k<K>.parquet with query_id, hit_ids, hit_scores\n"
    "(best first; cosine similarity, dot, -L2 or -L1; ties by point id).  Output is byte-identical\n"
    "whatever --threads or the number of jobs.  With --num-jobs/--job-rank a partial result goes\n"
    "to eval/_bf_partial_queries_<N>_k<K>/rank<NNN>.parquet for brute-force-merge.\n"
    "A multivector column (list<list<float>>) is scored with max_sim: the sum over the query's\n"
    "vectors of the best cosine/dot similarity to any of the row's vectors; a sparse column\n"
    "(struct{indices, values}) by the dot product over shared indices (rows sharing none are\n"
    "not hits).  Rows without a usable vector are skipped and counted.  --memory-budget:\n"
    "refused (exit 1) when the queries, K hits each and two row groups of the column cannot fit.\n"
    "With --num-jobs a dataset is split by parts (part i goes to job i % N).\n"
    "Filters (--filter, or a __filter__ column of the queries file, JSON text per query): Qdrant's\n"
    "filter language over the payload (the config's payload_fields, or the columns of a parquet\n"
    "corpus, JSON-object columns unpacked); a query may get fewer than K hits.  Filtered outputs are\n"
    "named ..._f<h>_k<K> (<h>: 8 hex digits of md5 of the filter or of the queries' template).\n"
    CORPUS_ARG_HELP,
    BF_OPTS, 1, 1};

static const cli_opt BFM_OPTS[] = {
    {"queries", "Q", "the queries file the partials were computed for (required)"},
    {"k", "K", "neighbours per query (required)"},
    {"column", "VEC", "the vector column of the queries file (needed only when several exist)"},
    {"output", "FILE", "output file (default: the eval/ layout path)"},
    {"id-root", "DIR", "local files: strip DIR from the path to form the id key"},
    {"filter", "JSON|@FILE", "the --filter the partials were computed with"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_BRUTE_FORCE_MERGE = {
    "brute-force-merge", "URI|CONFIG|VECFILE --queries Q -k K [--output FILE]",
    "Merge every partial of `brute-force --num-jobs N` into the final ground-truth file\n"
    "(identical to a single-job run).  Refuses a missing rank or partials computed for another\n"
    "queries file, K, metric, vector column or corpus, naming what differs.  The corpus argument\n"
    "is the one given to brute-force (a parquet URI, CONFIG or VECFILE).",
    BFM_OPTS, 1, 1};

int cmd_generate_queries(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  cli_list cols = {0};
  cli_corpus cc;
  memset(&cc, 0, sizeof cc);
  eval_queries_opts o = {0};
  eval_queries_result r = {0};
  const cli_cmd *c = &CLI_GENERATE_QUERIES;
  char *tmpl = NULL;
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  VF_TRY(cli_parse(c, argc, argv, &a, &err));
  if (!cli_get(c, &a, "n")) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "generate-queries: -n N is required"));
  VF_TRY(cli_get_u64(c, &a, "n", 0, &o.n, &err));
  VF_TRY(cli_get_u64(c, &a, "seed", 42, &o.seed, &err));
  const char *cs = cli_get(c, &a, "columns");
  if (cs) {
    if (!cli_list_split(cs, &cols)) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
    o.columns = (const char *const *)cols.items;
    o.ncolumns = cols.n;
  }
  if (cli_get(c, &a, "filter-template")) {
    VF_TRY(cli_text_arg("filter-template", cli_get(c, &a, "filter-template"), FLT_MAX_TEXT, &tmpl, &err));
    o.filter_template = tmpl;
  }
  cli_on_interrupt("generate-queries stopped before writing its output (nothing was written); run "
                   "it again");
  o.column = cli_get(c, &a, "column");
  o.output = cli_get(c, &a, "output");
  VF_TRY(cli_corpus_open(a.pos[0], cli_get(c, &a, "id-root"), o.column, &cc, &err));
  if (cc.records) o.records = &cc.spec;
  double t0 = vf_now();
  VF_TRY(eval_generate_queries(&cc.files, &o, &r, &err));
  double secs = vf_now() - t0;
  cli_progress_end();
  cli_summary("generate-queries: %" PRIu64 " of %" PRIu64 " rows (dim %d, %" PRIu64 " row groups "
              "read%s) -> %s\n", r.rows, r.corpus_rows, r.dim, r.row_groups_read,
              r.empty_files ? "; empty files skipped" : "", r.path);
  if (cli_get(c, &a, "json")) {
    VF_TRY(vf_buf_printf(&b, &err, "{\"rows\":%" PRIu64 ",\"corpus_rows\":%" PRIu64 ",\"dim\":%d,"
                         "\"row_groups_read\":%" PRIu64 ",\"empty_files\":%" PRIu64 ",\"seconds\":",
                         r.rows, r.corpus_rows, r.dim, r.row_groups_read, r.empty_files));
    VF_TRY(vf_json_f64(&b, secs, &err));
    VF_TRY(vf_json_raw(&b, ",\"output\":", &err));
    VF_TRY(vf_json_string(&b, r.path, strlen(r.path), &err));
    VF_TRY(vf_json_raw(&b, "}\n", &err));
    VF_TRY(cli_write_json(b.data, b.len, &err));
  }
out:
  vf_buf_free(&b);
  free(r.path);
  free(tmpl);
  cli_corpus_close(&cc);
  cli_list_free(&cols);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}

static vf_status bf_common_opts(const cli_cmd *c, const cli_args *a, eval_bf_opts *o,
                                char **filter, vf_error *err) {
  uint64_t k = 0;
  const char *fv = cli_get(c, a, "filter");
  if (fv) {
    vf_status st = cli_text_arg("filter", fv, FLT_MAX_TEXT, filter, err);
    if (st != VF_OK) return st;
    o->filter = *filter;
  }
  o->queries = cli_get(c, a, "queries");
  if (!o->queries) return vf_error_set(err, VF_EUSAGE, "%s: --queries Q is required", c->name);
  if (!cli_get(c, a, "k")) return vf_error_set(err, VF_EUSAGE, "%s: -k K is required", c->name);
  vf_status st = cli_get_u64(c, a, "k", 0, &k, err);
  if (st != VF_OK) return st;
  if (k < 1 || k > 100000) return vf_error_set(err, VF_EUSAGE, "%s: -k must be 1..100000", c->name);
  o->k = (uint32_t)k;
  o->column = cli_get(c, a, "column");
  o->output = cli_get(c, a, "output");
  return VF_OK;
}

int cmd_brute_force(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  cli_corpus cc;
  memset(&cc, 0, sizeof cc);
  eval_bf_opts o = {0};
  eval_bf_result r = {0};
  char *filter = NULL;
  const cli_cmd *c = &CLI_BRUTE_FORCE;
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  VF_TRY(cli_parse(c, argc, argv, &a, &err));
  VF_TRY(bf_common_opts(c, &a, &o, &filter, &err));
  const char *m = cli_get(c, &a, "metric");
  if (m && !idx_metric_parse(m, &o.metric))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "brute-force: unknown --metric '%s' (cosine, dot, euclid, manhattan)", m));
  int nj = 0, jr = 0;
  VF_TRY(cli_job_opts(c, &a, 100000, &nj, &jr, &err));
  o.num_jobs = (uint32_t)nj;
  o.job_rank = (uint32_t)jr;
  o.threads = vf_threads();
  cli_on_interrupt("brute-force stopped before writing its %s (nothing was written); run it again",
                   o.num_jobs ? "partial" : "ground truth");
  VF_TRY(cli_corpus_open(a.pos[0], cli_get(c, &a, "id-root"), o.column, &cc, &err));
  if (cc.records) {
    o.records = &cc.spec;
    o.id_expression = cc.id_text;
    if (!m) o.metric = cc.distance; /* the configured distance unless --metric */
  }
  VF_TRY(eval_brute_force(&cc.files, &o, &r, &err));
  cli_progress_end();
  cli_summary("brute-force: %" PRIu64 " queries x %" PRIu64 " rows (%" PRIu64 " files%s), k %u, %s, "
          "%" PRIu64 " re-scored, %" PRIu64 " rows skipped, %.3f s -> %s\n", r.queries,
          r.rows_scanned, r.files, r.empty_files ? "; empty files skipped" : "", o.k,
          idx_metric_name(o.metric), r.rescored, r.rows_skipped, r.seconds, r.path);
  if (r.queries_filtered)
    cli_summary("brute-force: %" PRIu64 " of %" PRIu64 " queries filtered; %" PRIu64
                " with fewer than %u hits\n", r.queries_filtered, r.queries, r.queries_short, o.k);
  if (cli_get(c, &a, "json")) {
    const char *mn = idx_metric_name(o.metric);
    VF_TRY(vf_buf_printf(&b, &err, "{\"queries\":%" PRIu64 ",\"k\":%u,\"metric\":\"%s\","
                         "\"rows_scanned\":%" PRIu64 ",\"rows_skipped\":%" PRIu64 ",\"files\":%" PRIu64
                         ",\"empty_files\":%" PRIu64 ",\"rescored\":%" PRIu64 ",\"seconds\":",
                         r.queries, o.k, mn, r.rows_scanned, r.rows_skipped, r.files, r.empty_files,
                         r.rescored));
    VF_TRY(vf_json_f64(&b, r.seconds, &err));
    VF_TRY(vf_json_raw(&b, ",\"output\":", &err));
    VF_TRY(vf_json_string(&b, r.path, strlen(r.path), &err));
    if (r.queries_filtered)
      VF_TRY(vf_buf_printf(&b, &err, ",\"queries_filtered\":%" PRIu64 ",\"queries_short\":%" PRIu64,
                           r.queries_filtered, r.queries_short));
    VF_TRY(vf_json_raw(&b, "}\n", &err));
    VF_TRY(cli_write_json(b.data, b.len, &err));
  }
out:
  vf_buf_free(&b);
  free(r.path);
  free(filter);
  cli_corpus_close(&cc);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}

int cmd_brute_force_merge(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  cli_corpus cc;
  memset(&cc, 0, sizeof cc);
  eval_bf_opts o = {0};
  eval_bf_result r = {0};
  char *filter = NULL;
  const cli_cmd *c = &CLI_BRUTE_FORCE_MERGE;
  vf_status st = VF_OK;
  VF_TRY(cli_parse(c, argc, argv, &a, &err));
  VF_TRY(bf_common_opts(c, &a, &o, &filter, &err));
  cli_on_interrupt("brute-force-merge stopped before writing the merged file (the partials are "
                   "kept); run it again");
  VF_TRY(cli_corpus_open(a.pos[0], cli_get(c, &a, "id-root"), o.column, &cc, &err));
  if (cc.records) {
    o.records = &cc.spec;
    o.id_expression = cc.id_text;
  }
  VF_TRY(eval_brute_force_merge(&cc.files, &o, &r, &err));
  cli_progress_end();
  cli_summary("brute-force-merge: %" PRIu64 " queries from %" PRIu64 " partials, %.3f s -> %s\n",
          r.queries, r.files, r.seconds, r.path);
out:
  free(r.path);
  free(filter);
  cli_corpus_close(&cc);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}
