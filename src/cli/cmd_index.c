/*
 * vforge index build|search|info — IVF index files (include/vforge/ivf.h).
 *
 * build:  discover the corpus, sum the rows from the footers (so the training sample is
 *         stratified over the whole input), read the dense vector column and the point ids one
 *         row group at a time and stream them into ivf_builder; print the build report.
 * search: the queries file (generate-queries layout) through ivf_search, written in the
 *         brute-force output schema (query_id, hit_ids, hit_scores) by the eval writer;
 *         optionally recall@k against a ground-truth file.
 * info:   the header and list statistics of an index file.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vforge/bench.h"
#include "vforge/eval.h"
#include "vforge/ivf.h"
#include "vforge/store.h"

/* ------------------------------------------------------------------ build */

static const cli_opt BUILD_OPTS[] = {
    {"output", "FILE", "index file to write (required; written atomically)"},
    {"type", "T", "list codes: flat, sq8, pq or rabitq (required)"},
    {"nlist", "N", "inverted lists (default: about 4*sqrt(rows))"},
    {"pq-m", "M", "pq: sub-quantizers, a divisor of the dimension (default: dim/4)"},
    {"pq-nbits", "B", "pq: bits per code, 8 (default) or 4 (SIMD fast scan; pair with --rerank)"},
    {"rabitq-bits", "B", "rabitq: bits per dimension, 1..8 (default 1)"},
    {"rerank", "R", "keep float32 vectors and re-rank the best R*k candidates exactly (default 0: off)"},
    {"metric", "M", "cosine (default), dot or euclid"},
    {"seed", "S", "seed of the training sample, k-means and rotation (default 1234)"},
    {"max-train", "N", "training sample rows (default max(train-per-centroid*nlist, 65536))"},
    {"train-per-centroid", "N", "k-means runs on at most N*nlist rows of the sample (default 128)"},
    {"iterations", "N", "most k-means iterations (default 20)"},
    {"kmeans-stop", "F", "stop k-means after an iteration in which at most this fraction of its "
     "rows changed list (default 0.01), or which lowered the objective by at most 0.1 %; 0: run "
     "every iteration"},
    {"column", "NAME", "the dense vector column (needed only when several exist)"},
    {"id-expression", "E", "point ids (default vf_point_id(filename, file_row_number))"},
    {"id-root", "DIR", "local files: strip DIR from the path to form the id key"},
    {"spill-dir", "DIR", "where spill files go (default: beside the output file)"},
    {"json", NULL, "print the build report as one JSON object on stdout"},
    {NULL, NULL, NULL}};

static const cli_cmd CLI_INDEX_BUILD = {
    "index build", "URI|CONFIG|VECFILE --output FILE --type flat|sq8|pq|rabitq [--nlist N] [--pq-m M] "
    "[--pq-nbits 4|8] [--rabitq-bits B] "
    "[--rerank R] [--metric M] [--seed S] [--iterations N] [--kmeans-stop F] [--train-per-centroid N] "
    "[--column NAME] [--id-expression E] [--json]",
    "Build an IVF index file from the dense vector column of a corpus.  The rows are streamed\n"
    "once (one row group at a time) and spilled compressed beside the output; the coarse\n"
    "quantizer and the codes are trained on a seeded sample stratified over the whole corpus\n"
    "(one random row per equal slice of the rows, counted from the file footers), so a part of\n"
    "the corpus that sits only at its end or in a few files is represented in proportion.\n"
    "--memory-budget bounds every buffer of the build.  Same rows, parameters and seed: the\n"
    "same file, whatever --threads.  --json keys: rows, nlist, type, training_rows_seen,\n"
    "training_rows_retained, kmeans_rows, kmeans_iterations, kmeans_max_iterations, source_bytes, spill_bytes, seconds, peak_rss_bytes,\n"
    "list_max_over_mean, list_balance, seconds_read, seconds_train, seconds_assign,\n"
    "seconds_write, dim, metric, files, output.\n"
    "The corpus may also be a YAML config (its datasource, e.g. a component dataset of .npy/.fbin\n"
    "parts, its vector (--column picks one of several), id_expression and distance) or a single\n"
    "vector file (.npy, .fbin, .hdf5 `train`; ids are row numbers).",
    BUILD_OPTS, 1, 1};

static const cli_opt SEARCH_OPTS[] = {
    {"queries", "Q", "queries parquet file (query_id + a dense vector column; required)"},
    {"k", "K", "neighbours per query (required)"},
    {"nprobe", "P", "lists scanned per query (default max(16, nlist/16); capped at nlist)"},
    {"rerank", "R", "override the file's re-rank factor (needs an index built with --rerank; "
     "a 4-bit pq index without it re-scores R*k candidates by float ADC)"},
    {"column", "NAME", "the vector column of the queries file (needed only when several exist)"},
    {"output", "FILE", "results file (default: <dir of Q>/ivf_<name of Q>_k<K>.parquet)"},
    {"ground-truth", "GT", "also report recall@k against this brute-force file"},
    {"filter", "JSON|@FILE", "search every query with this Qdrant filter (a queries file's __filter__ column filters per query instead); needs --corpus"},
    {"corpus", "URI|CONFIG", "with filters: the corpus (or load config) the index was built from, whose payload the filters read"},
    {"json", NULL, "print {queries, k, nprobe, seconds, qps, output[, recall, recall_max]} on stdout"},
    {NULL, NULL, NULL}};

static const cli_cmd CLI_INDEX_SEARCH = {
    "index search", "FILE --queries Q -k K [--nprobe P] [--output F] [--ground-truth GT] [--filter JSON|@FILE --corpus URI|CONFIG] [--json]",
    "Search an IVF index with every query of a queries file (as written by generate-queries)\n"
    "and write query_id, hit_ids (list<string>), hit_scores (list<float>), best first — the\n"
    "brute-force output schema; larger score = nearer (cosine, dot, -L2).  With --ground-truth\n"
    "the summary adds recall@k (strict, and counting ties at the cutoff).\n"
    "Filters (a __filter__ column of the queries file, or --filter) read the payload of --corpus,\n"
    "matched to the index rows by point id; the filter is applied inside the list scan and\n"
    "nprobe widens until k matching hits are found or every list was scanned.  Recall of a\n"
    "filtered query is over min(k, its true hits); queries with none are left out of it.",
    SEARCH_OPTS, 1, 1};

static const cli_opt INFO_OPTS[] = {
    {"json", NULL, "print the information as one JSON object on stdout"},
    {NULL, NULL, NULL}};

static const cli_cmd CLI_INDEX_INFO = {
    "index info", "FILE [--json]",
    "Print an index file's parameters (type, metric, dim, nlist, pq_m, pq_nbits, rabitq_bits,\n"
    "rerank, seed, version), its rows and size, and the list sizes (min, max, max/mean,\n"
    "balance).\n"
    "Opening checks every section bound and the file checksum.",
    INFO_OPTS, 1, 1};

static vf_status get_u32(const cli_cmd *c, const cli_args *a, const char *name, uint32_t *out,
                         vf_error *err) {
  uint64_t v = 0;
  vf_status st = cli_get_u64(c, a, name, 0, &v, err);
  *out = (uint32_t)v;
  if (st != VF_OK) return st;
  if (v > UINT32_MAX)
    return vf_error_set(err, VF_EUSAGE, "--%s must be at most %u", name, UINT32_MAX);
  return VF_OK;
}

/* an option that, when given, must be at least 1 (0 is not "the default") */
static vf_status get_u32_pos(const cli_cmd *c, const cli_args *a, const char *name, uint32_t *out,
                             vf_error *err) {
  vf_status st = get_u32(c, a, name, out, err);
  if (st != VF_OK) return st;
  if (cli_get(c, a, name) && *out == 0)
    return vf_error_set(err, VF_EUSAGE, "%s: --%s must be at least 1 (leave it out for the default)",
                        c->name, name);
  return VF_OK;
}

static void print_build_human(const ivf_build_report *r, const char *out, int32_t dim,
                              corpus_distance metric, double seconds) {
  cli_summary(
          "index build: %" PRIu64 " rows x %d (%s), %s, nlist %u -> %s\n"
          "  training: %" PRIu64 " rows seen, %" PRIu64 " retained; k-means on %" PRIu64 " rows, %d of "
          "at most %d iterations; source %.1f MiB, spill %.1f MiB\n"
          "  lists: max/mean %.2f, balance %.3f; peak RSS %.1f MiB\n"
          "  time: %.2f s (read %.2f, train %.2f, assign %.2f, write %.2f)\n",
          r->rows, (int)dim, idx_metric_name(metric), ivf_code_name(r->type), r->nlist, out,
          r->training_rows_seen, r->training_rows_retained, r->kmeans_rows, r->kmeans_iterations,
          r->kmeans_max_iterations, (double)r->source_bytes / 1048576.0,
          (double)r->spill_bytes / 1048576.0, r->list_max_over_mean, r->list_balance,
          (double)r->peak_rss_bytes / 1048576.0, seconds, r->seconds_read, r->seconds_train,
          r->seconds_assign, r->seconds_write);
}

static vf_status print_build_json(const ivf_build_report *r, const char *out, int32_t dim,
                                  corpus_distance metric, size_t nfiles, vf_error *err) {
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  VF_TRY(ivf_build_report_json(r, out, dim, metric, nfiles, &b, err));
  VF_TRY(vf_buf_append(&b, "\n", 1, err));
  VF_TRY(cli_write_json(b.data, b.len, err));
out:
  vf_buf_free(&b);
  return st;
}

static int index_build(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  const cli_cmd *c = &CLI_INDEX_BUILD;
  cli_args a;
  cli_corpus cc;
  memset(&cc, 0, sizeof cc);
  corpus_idexpr *idx = NULL;
  ivf_params p;
  memset(&p, 0, sizeof p);
  p.metric = CORPUS_COSINE;
  ivf_build_report rep;
  memset(&rep, 0, sizeof rep);
  vf_status st = VF_OK;
  VF_TRY(cli_parse(c, argc, argv, &a, &err));
  const char *out = cli_get(c, &a, "output");
  const char *type = cli_get(c, &a, "type");
  if (!out) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index build: --output FILE is required"));
  if (!type)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index build: --type is required (flat, sq8, pq or rabitq)"));
  if (!ivf_code_parse(type, &p.type))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE,
                         "index build: unknown --type '%s' (flat, sq8, pq or rabitq)", type));
  const char *m = cli_get(c, &a, "metric");
  if (m && (!idx_metric_parse(m, &p.metric) || p.metric == CORPUS_MANHATTAN))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE,
                         "index build: --metric '%s': expected cosine, dot or euclid", m));
  VF_TRY(get_u32_pos(c, &a, "nlist", &p.nlist, &err));
  VF_TRY(get_u32_pos(c, &a, "pq-m", &p.pq_m, &err));
  VF_TRY(get_u32(c, &a, "pq-nbits", &p.pq_nbits, &err));
  if (cli_get(c, &a, "pq-nbits") && p.pq_nbits != 4 && p.pq_nbits != 8)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index build: --pq-nbits must be 4 or 8 (got %s)",
                         cli_get(c, &a, "pq-nbits")));
  VF_TRY(get_u32(c, &a, "rabitq-bits", &p.rabitq_bits, &err));
  VF_TRY(get_u32(c, &a, "rerank", &p.rerank, &err));
  VF_TRY(cli_get_u64(c, &a, "seed", 1234, &p.seed, &err));
  VF_TRY(cli_get_u64(c, &a, "max-train", 0, &p.max_train, &err));
  VF_TRY(get_u32_pos(c, &a, "train-per-centroid", &p.train_per_centroid, &err));
  uint32_t iters = 0;
  VF_TRY(get_u32_pos(c, &a, "iterations", &iters, &err));
  if (iters > 1000000)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index build: --iterations must be at most 1000000"));
  p.kmeans_iters = (int)iters;
  const char *ks = cli_get(c, &a, "kmeans-stop");
  if (ks) {
    char *end = NULL;
    double v = strtod(ks, &end);
    if (end == ks || *end || !(v >= 0 && v <= 1))
      VF_FAIL(vf_error_set(&err, VF_EUSAGE,
                           "index build: --kmeans-stop '%s': expected a fraction in 0..1", ks));
    p.kmeans_stop = v == 0 ? -1.0 : v;
  }
  if (cli_get(c, &a, "pq-m") && p.type != IVF_PQ)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index build: --pq-m needs --type pq"));
  if (cli_get(c, &a, "pq-nbits") && p.type != IVF_PQ)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index build: --pq-nbits needs --type pq"));
  if (cli_get(c, &a, "rabitq-bits") && p.type != IVF_RABITQ)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index build: --rabitq-bits needs --type rabitq"));
  p.threads = vf_threads();
  p.memory_budget = vf_memory_budget();
  p.spill_dir = cli_get(c, &a, "spill-dir");
  const char *ie = cli_get(c, &a, "id-expression");
  if (ie) {
    VF_TRY(corpus_idexpr_parse(ie, &idx, &err));
    if (!corpus_idexpr_deterministic(idx))
      VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index build: --id-expression '%s' is not deterministic "
                           "(an index must map rows to the same ids on every build)", ie));
  }
  /* a parquet corpus URI, or a YAML config / vector file (component datasets, issue 8) */
  VF_TRY(cli_corpus_open(a.pos[0], cli_get(c, &a, "id-root"), cli_get(c, &a, "column"), &cc, &err));
  cli_on_interrupt("index build of %s stopped; its spill and temporary files were removed and "
                   "nothing was written; run the command again", out);
  ivf_source_opts so = {.column = cli_get(c, &a, "column"), .id = idx, .id_text = ie,
                        .metric_given = m != NULL};
  VF_TRY(ivf_build_source(&cc, &so, &p, out, &rep, &err));
  cli_progress_end(); /* on failure cli_fail ends it */
  print_build_human(&rep, out, p.dim, p.metric, rep.seconds);
  if (cli_get(c, &a, "json")) VF_TRY(print_build_json(&rep, out, p.dim, p.metric, cc.files.n, &err));
out:
  corpus_idexpr_free(idx);
  cli_corpus_close(&cc);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}

/* ----------------------------------------------------------------- search */

/* <dir of Q>/ivf_<Q's file name without .parquet>_k<K>.parquet */
static char *default_output(const char *q, const char *tag, uint64_t k, vf_error *err) {
  const char *slash = strrchr(q, '/');
  const char *name = slash ? slash + 1 : q;
  size_t dl = slash ? (size_t)(slash - q) : 0, nl = strlen(name);
  if (nl > 8 && strcmp(name + nl - 8, ".parquet") == 0) nl -= 8;
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_URL);
  vf_status st = VF_OK;
  VF_TRY(slash ? vf_buf_printf(&b, err, "%.*s/ivf_%.*s%s_k%" PRIu64 ".parquet", (int)dl, q, (int)nl, name, tag, k)
               : vf_buf_printf(&b, err, "ivf_%.*s%s_k%" PRIu64 ".parquet", (int)nl, name, tag, k));
  VF_TRY(vf_buf_append(&b, "", 1, err)); /* the NUL */
out:
  if (st != VF_OK) vf_buf_free(&b);
  return (char *)vf_buf_take(&b, NULL);
}

/* The ground truth of --ground-truth, read and matched to the queries before the search: truth
 * of another metric or corpus is refused before any work (bench.h "Ground truth that cannot
 * measure the store"). */
static vf_status search_truth(const char *gt, const ev_queries *q, size_t k, const ivf_index *ix,
                              const char *index_path, bench_truth *t, size_t **rows,
                              vf_error *err) {
  vf_status st = bench_read_truth(gt, t, err);
  if (st != VF_OK) return st;
  if (k > t->k)
    return vf_error_set(err, VF_EUSAGE, "index search: -k %zu exceeds the %zu hits per query of %s",
                        k, t->k, gt);
  bench_queries bq = {.n = (size_t)q->n, .dim = q->dim, .ids = q->ids};
  st = bench_align(&bq, t, rows, err);
  if (st != VF_OK) return st;
  return bench_check_index(ix, index_path, t, *rows, bq.n, k, gt, err);
}

/* recall@k of the answers against the ground truth (bench.h rules) */
static vf_status search_recall(const bench_truth *t, const size_t *rows, const ev_queries *q,
                               size_t k, const idx_hit *hits, const size_t *counts,
                               const ivf_index *ix, double *strict, double *tie, vf_error *err) {
  store_hit *sh = vf_mallocarray(k, sizeof *sh);
  if (!sh) return vf_error_set(err, VF_ENOMEM, "out of memory");
  size_t nq = (size_t)q->n;
  double s1 = 0, s2 = 0;
  size_t scored = 0;
  for (size_t i = 0; i < nq; i++) {
    size_t n = 0;
    for (size_t h = 0; h < counts[i]; h++) {
      size_t len = 0;
      const char *id = ivf_id(ix, hits[i * k + h].key, &len);
      if (!store_id_parse(id, len, &sh[n].id)) continue; /* an id no truth file can hold */
      sh[n++].score = hits[i * k + h].score;
    }
    double a = 0, b = 0;
    if (!bench_recall_one(t, rows[i], k, sh, n, &a, &b)) continue; /* no true hit */
    scored++;
    s1 += a;
    s2 += b;
  }
  *strict = scored ? s1 / (double)scored : 0;
  *tie = scored ? s2 / (double)scored : 0;
  free(sh);
  return VF_OK;
}

/* the hits as the eval writer takes them: a 36-byte id each (a longer one is a corrupt index) */
static vf_status search_copy_hits(const ivf_index *ix, const char *index_path, const idx_hit *hits,
                                  const size_t *counts, size_t nq, size_t k, ev_hit *eh,
                                  uint32_t *nh, vf_error *err) {
  for (size_t i = 0; i < nq; i++) {
    nh[i] = (uint32_t)counts[i];
    for (size_t h = 0; h < counts[i]; h++) {
      size_t len = 0;
      const char *id = ivf_id(ix, hits[i * k + h].key, &len);
      ev_hit *e = &eh[i * k + h];
      if (len > 36)
        return vf_error_set(err, VF_ECORRUPT, "%s: the id of row %lld is longer than 36 bytes",
                            index_path, (long long)hits[i * k + h].key);
      memcpy(e->id, id, len);
      e->id[len] = 0;
      e->score = hits[i * k + h].score;
    }
  }
  return VF_OK;
}

/* {queries, k, nprobe, seconds, qps, output[, recall, recall_max]} on stdout */
static vf_status print_search_json(size_t nq, uint64_t k, uint64_t np, double secs, double qps,
                                   bool recall, double rs, double rt, const char *out,
                                   vf_error *err) {
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(&b, err, "{\"queries\":%zu,\"k\":%" PRIu64 ",\"nprobe\":%" PRIu64 ",\"seconds\":",
                       nq, k, np));
  VF_TRY(vf_json_f64(&b, secs, err));
  VF_TRY(vf_json_raw(&b, ",\"qps\":", err));
  VF_TRY(vf_json_f64(&b, qps, err));
  if (recall) {
    VF_TRY(vf_json_raw(&b, ",\"recall\":", err));
    VF_TRY(vf_json_f64(&b, rs, err));
    VF_TRY(vf_json_raw(&b, ",\"recall_max\":", err));
    VF_TRY(vf_json_f64(&b, rt, err));
  }
  VF_TRY(vf_json_raw(&b, ",\"output\":", err));
  VF_TRY(vf_json_string(&b, out, strlen(out), err));
  VF_TRY(vf_json_raw(&b, "}\n", err));
  VF_TRY(cli_write_json(b.data, b.len, err));
out:
  vf_buf_free(&b);
  return st;
}

static int index_search(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  const cli_cmd *c = &CLI_INDEX_SEARCH;
  cli_args a;
  ivf_index *ix = NULL;
  ev_queries q;
  memset(&q, 0, sizeof q);
  idx_hit *hits = NULL;
  size_t *counts = NULL;
  ev_hit *eh = NULL;
  uint32_t *nh = NULL;
  char *out = NULL;
  uint64_t k = 0, nprobe = 0, rerank = 0;
  ev_filters flt;
  memset(&flt, 0, sizeof flt);
  ev_ivf_filter xf;
  memset(&xf, 0, sizeof xf);
  cli_corpus cc;
  memset(&cc, 0, sizeof cc);
  char *ftext = NULL;
  uint8_t *abuf = NULL, **allow = NULL;
  bench_truth truth;
  memset(&truth, 0, sizeof truth);
  size_t *trows = NULL;
  vf_status st = VF_OK;
  VF_TRY(cli_parse(c, argc, argv, &a, &err));
  const char *qpath = cli_get(c, &a, "queries");
  if (!qpath) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index search: --queries Q is required"));
  if (!cli_get(c, &a, "k")) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index search: -k K is required"));
  VF_TRY(cli_get_u64(c, &a, "k", 0, &k, &err));
  if (k < 1 || k > 100000) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index search: -k must be 1..100000"));
  VF_TRY(cli_get_u64(c, &a, "nprobe", 0, &nprobe, &err));
  if (cli_get(c, &a, "nprobe") && (nprobe < 1 || nprobe > UINT32_MAX))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index search: --nprobe must be at least 1"));
  VF_TRY(cli_get_u64(c, &a, "rerank", 0, &rerank, &err));
  if (rerank > UINT32_MAX) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index search: --rerank is too large"));
  VF_TRY(ivf_open(a.pos[0], &ix, &err));
  ivf_info info;
  memset(&info, 0, sizeof info);
  ivf_info_get(ix, &info);
  if (nprobe == 0) nprobe = ivf_default_nprobe(info.nlist); /* the store's rule */
  if (rerank && !info.rerank && !(info.type == IVF_PQ && info.pq_nbits == 4))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index search: --rerank needs an index built with --rerank "
                         "(%s keeps no float32 vectors)", a.pos[0]));
  VF_TRY(ev_queries_read(qpath, cli_get(c, &a, "column"), &q, &err));
  if (q.kind != CORPUS_VEC_DENSE)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "%s: column '%s' is not a dense vector column", qpath,
                         q.vec_name));
  if (q.dim != info.dim)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "%s: queries have dimension %d, the index %s has %d", qpath,
                         (int)q.dim, a.pos[0], (int)info.dim));
  /* filters: --filter or the queries' __filter__ column, over the payload of --corpus */
  if (cli_get(c, &a, "filter"))
    VF_TRY(cli_text_arg("filter", cli_get(c, &a, "filter"), FLT_MAX_TEXT, &ftext, &err));
  VF_TRY(ev_filters_init(&flt, q.n, q.filters, q.fhash, ftext, qpath, &err));
  if (flt.any && !cli_get(c, &a, "corpus"))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "index search: the queries are filtered; give --corpus URI|CONFIG "
                         "(the corpus %s was built from: its payload is what the filters read)", a.pos[0]));
  if (flt.any) VF_TRY(cli_corpus_open(cli_get(c, &a, "corpus"), NULL, NULL, &cc, &err));
  if (flt.any)
    VF_TRY(ev_ivf_filter_open(&xf, ix, &cc.files, cc.records ? &cc.spec : NULL, &flt, &err));
  if (xf.unmatched)
    vf_log(VF_LOG_WARN, "index search: %" PRIu64 " of %" PRIu64 " index rows have ids that are not in %s "
           "(never returned by a filtered query)", xf.unmatched, xf.rows, cli_get(c, &a, "corpus"));
  const char *gt = cli_get(c, &a, "ground-truth");
  if (gt) VF_TRY(search_truth(gt, &q, (size_t)k, ix, a.pos[0], &truth, &trows, &err));
  size_t nq = (size_t)q.n;
  /* allow masks of a chunk of queries at a time (at most 256 MiB) */
  size_t chunk = nq ? nq : 1;
  if (flt.any && xf.rows) {
    chunk = ((size_t)256 << 20) / xf.rows;
    if (chunk < 1) chunk = 1;
    if (chunk > nq) chunk = nq ? nq : 1;
    abuf = vf_malloc(chunk * xf.rows);
    allow = vf_calloc(chunk, sizeof *allow);
    if (!abuf || !allow)
      VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory for the filters' masks"));
  }
  hits = vf_mallocarray(nq ? nq * (size_t)k : 1, sizeof *hits);
  counts = vf_calloc(nq ? nq : 1, sizeof *counts);
  eh = vf_mallocarray(nq ? nq * (size_t)k : 1, sizeof *eh);
  nh = vf_calloc(nq ? nq : 1, sizeof *nh);
  if (!hits || !counts || !eh || !nh)
    VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory for %zu x %" PRIu64 " hits", nq, k));
  ivf_search_opts so = {.nprobe = (uint32_t)nprobe, .threads = vf_threads(), .rerank = (uint32_t)rerank};
  double ts = vf_now();
  for (size_t q0 = 0; q0 < nq; q0 += chunk) {
    size_t qn = nq - q0 < chunk ? nq - q0 : chunk;
    for (size_t i = 0; flt.any && i < qn; i++)
      allow[i] = ev_ivf_filter_allow(&xf, q0 + i, abuf + i * xf.rows) ? abuf + i * xf.rows : NULL;
    so.allow = flt.any ? (const uint8_t *const *)allow : NULL;
    VF_TRY(ivf_search(ix, q.vecs + q0 * (size_t)q.dim, qn, q.dim, (size_t)k, &so, hits + q0 * (size_t)k,
                      counts + q0, &err));
  }
  double secs = vf_now() - ts;
  VF_TRY(search_copy_hits(ix, a.pos[0], hits, counts, nq, (size_t)k, eh, nh, &err));
  const char *o = cli_get(c, &a, "output");
  /* a --filter run is named apart (a __filter__ queries file already is) */
  out = o ? vf_strdup(o) : default_output(qpath, ftext ? flt.tag : "", k, &err);
  if (!out) VF_FAIL(o ? vf_error_set(&err, VF_ENOMEM, "out of memory") : err.code);
  char np_text[24], kk[24];
  snprintf(np_text, sizeof np_text, "%" PRIu64, nprobe < info.nlist ? nprobe : (uint64_t)info.nlist);
  snprintf(kk, sizeof kk, "%" PRIu64, k);
  const char *kv[] = {"vforge.index.file", a.pos[0], "vforge.index.type", ivf_code_name(info.type),
                      "vforge.index.metric", idx_metric_name(info.metric), "vforge.index.nprobe", np_text,
                      "vforge.index.k", kk, "vforge.index.queries", q.md5};
  VF_TRY(ev_results_write(out, &q, (uint32_t)k, eh, nh, kv, 12, &err));
  double rs = 0, rt = 0;
  if (gt) VF_TRY(search_recall(&truth, trows, &q, (size_t)k, hits, counts, ix, &rs, &rt, &err));
  uint64_t np = nprobe < info.nlist ? nprobe : info.nlist;
  double qps = secs > 0 ? (double)nq / secs : 0;
  cli_summary("index search: %zu queries, k %" PRIu64 ", nprobe %" PRIu64 " of %u lists (%s), "
          "%.3f s, %.0f queries/s -> %s\n", nq, k, np, info.nlist, ivf_code_name(info.type), secs, qps, out);
  if (gt) cli_summary("  recall@%" PRIu64 ": %.4f (ties at the cutoff counted: %.4f)\n", k, rs, rt);
  if (cli_get(c, &a, "json"))
    VF_TRY(print_search_json(nq, k, np, secs, qps, gt != NULL, rs, rt, out, &err));
out:
  free(out);
  free(hits);
  free(counts);
  free(eh);
  free(nh);
  free(abuf);
  free(allow);
  free(ftext);
  ev_ivf_filter_close(&xf);
  ev_filters_free(&flt);
  cli_corpus_close(&cc);
  free(trows);
  bench_truth_free(&truth);
  ev_queries_free(&q);
  ivf_close(ix);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}

/* ------------------------------------------------------------------- info */

static vf_status print_info_json(const ivf_info *in, vf_error *err) {
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(&b, err, "{\"version\":%u,\"type\":\"%s\",\"metric\":\"%s\",\"dim\":%d,"
                       "\"nlist\":%u,\"pq_m\":%u,\"pq_nbits\":%u,\"rabitq_bits\":%u,\"rerank\":%u,"
                       "\"seed\":%" PRIu64
                       ",\"rows\":%" PRIu64 ",\"file_bytes\":%" PRIu64 ",\"list_min\":%u,\"list_max\":%u,"
                       "\"list_max_over_mean\":", in->version, ivf_code_name(in->type),
                       idx_metric_name(in->metric), (int)in->dim, in->nlist, in->pq_m, in->pq_nbits,
                       in->rabitq_bits,
                       in->rerank, in->seed, in->rows, in->file_bytes, in->list_min, in->list_max));
  VF_TRY(vf_json_f64(&b, in->list_max_over_mean, err));
  VF_TRY(vf_json_raw(&b, ",\"list_balance\":", err));
  VF_TRY(vf_json_f64(&b, in->list_balance, err));
  VF_TRY(vf_json_raw(&b, "}\n", err));
  VF_TRY(cli_write_json(b.data, b.len, err));
out:
  vf_buf_free(&b);
  return st;
}

static int index_info(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  const cli_cmd *c = &CLI_INDEX_INFO;
  cli_args a;
  ivf_index *ix = NULL;
  vf_status st = VF_OK;
  VF_TRY(cli_parse(c, argc, argv, &a, &err));
  VF_TRY(ivf_open(a.pos[0], &ix, &err));
  ivf_info in;
  ivf_info_get(ix, &in);
  if (cli_get(c, &a, "json")) {
    VF_TRY(print_info_json(&in, &err));
  } else {
    printf("file:        %s\nversion:     %u\ntype:        %s\nmetric:      %s\ndim:         %d\n"
           "rows:        %" PRIu64 "\nnlist:       %u\n", a.pos[0], in.version, ivf_code_name(in.type),
           idx_metric_name(in.metric), (int)in.dim, in.rows, in.nlist);
    if (in.type == IVF_PQ) printf("pq_m:        %u\npq_nbits:    %u\n", in.pq_m, in.pq_nbits);
    if (in.type == IVF_RABITQ) printf("rabitq_bits: %u\n", in.rabitq_bits);
    printf("rerank:      %u%s\nseed:        %" PRIu64 "\nfile bytes:  %" PRIu64 "\n"
           "lists:       min %u, max %u, max/mean %.3f, balance %.3f\n", in.rerank,
           in.rerank ? " (float32 vectors kept)" : " (off)", in.seed, in.file_bytes, in.list_min,
           in.list_max, in.list_max_over_mean, in.list_balance);
  }
out:
  ivf_close(ix);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}

/* ---------------------------------------------------------------- dispatch */

static void index_usage(FILE *to) {
  fprintf(to, "usage: vforge index build|search|info ...\n\n"
              "  build URI --output FILE --type flat|sq8|pq|rabitq   build an IVF index file\n"
              "  search FILE --queries Q -k K [--nprobe P]           search it with a queries file\n"
              "  info FILE [--json]                                  parameters and list sizes\n\n"
              "'vforge index SUBCOMMAND --help' shows its options.\n");
}

int cmd_index(int argc, char **argv) {
  if (argc < 1) {
    index_usage(stderr);
    return 2;
  }
  if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
    index_usage(stdout);
    return 0;
  }
  if (strcmp(argv[0], "build") == 0) return index_build(argc - 1, argv + 1);
  if (strcmp(argv[0], "search") == 0) return index_search(argc - 1, argv + 1);
  if (strcmp(argv[0], "info") == 0) return index_info(argc - 1, argv + 1);
  fprintf(stderr, "vforge: error: vforge index: unknown subcommand '%s' (build, search, info)\n", argv[0]);
  return 2;
}
