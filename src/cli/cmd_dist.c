/*
 * vforge load-dist / brute-force-dist — thin wrappers over include/vforge/dist.h.  Per-shard
 * progress arrives as log lines and "load-dist" progress events (rendered by main.c); the
 * report goes to stderr and, with --json, exactly one JSON object to stdout.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vforge/config.h"
#include "vforge/dist.h"

#define COMMON_OPTS                                                                               \
  {"engine", "E", "slurm (sbatch --array; the default) or local (child processes on this machine)"}, \
  {"dry-run", NULL, "write the run directory and print the submit command; submit nothing"},      \
  {"runs-dir", "DIR", "where run directories are made (default ~/.vforge/runs)"},                 \
  {"run-name", "NAME", "the run id's prefix (default dispatch.run_name, else load / bf)"},        \
  {"max-attempts", "N", "attempts per shard before the run fails (default 3)"},                   \
  {"parallel", "N", "local engine: workers at a time (default: the CPUs available)"},             \
  {"poll", "SECONDS", "slurm engine: seconds between squeue polls (default 1)"},                  \
  {"json", NULL, "print the run report as one JSON object on stdout"}

static const cli_opt LD_OPTS[] = {
    {"num-shards", "N", "split the files into N shards (file i of the sorted list to shard i % N; "
                        "default dispatch.num_shards, else 1)"},
    COMMON_OPTS,
    {"status", "RUN_ID", "print the shards' state of an existing run (id, or its directory)"},
    {"finalize", "RUN_ID", "finalize an existing run whose shards are all done"},
    {"resume", "RUN_ID", "drive an existing run again (its driver ended, it failed, or a --dry-run): "
                         "watch queued tasks, resubmit unfinished shards, finalize"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_LOAD_DIST = {
    "load-dist",
    "CONFIG [--num-shards N] [--engine slurm|local] [--dry-run] | --status|--finalize|--resume RUN_ID",
    "Load a corpus with N workers run by a cluster engine.  The sorted corpus files go to N\n"
    "shards round-robin; a run directory (~/.vforge/runs/<run_id>/) gets the resolved config,\n"
    "one config per shard, the worker script and manifest.json; the collection is prepared once\n"
    "(indexing deferred); the workers (`vforge load load <shard config> --no-manage-indexing\n"
    "--resume`) run as one `sbatch --array=0-(N-1)` job (resources: cpus -> --cpus-per-task,\n"
    "memory -> --mem=<N>G, partition, time) or as local processes.  A shard is done when its\n"
    "worker left done/<shard>.json; one that ended without it is resubmitted (it resumes from its\n"
    "checkpoint) up to --max-attempts times.  Finally indexing is enabled and the collection's\n"
    "exact point count must equal the corpus rows (exit 1 otherwise).\n"
    "Credentials are never written to the run directory: secrets stay `${VAR}` references that\n"
    "workers read from their environment (sbatch --export=ALL).",
    LD_OPTS, 0, 1};

static const cli_opt BFD_OPTS[] = {
    {"queries", "Q", "queries parquet file (required)"},
    {"k", "K", "neighbours per query (required)"},
    {"num-shards", "N", "partial jobs (required; file i goes to job i % N)"},
    {"metric", "M", "cosine (default), dot, euclid or manhattan"},
    {"column", "VEC", "the vector column (needed only when several exist)"},
    {"id-root", "DIR", "local files: strip DIR from the path to form the id key"},
    {"output", "FILE", "the merged file (default: the eval/ layout path)"},
    COMMON_OPTS,
    {"status", "RUN_ID", "print the shards' state of an existing run"},
    {"finalize", "RUN_ID", "merge the partials of an existing run whose shards are all done"},
    {"resume", "RUN_ID", "drive an existing run again: watch queued tasks, resubmit unfinished "
                         "shards, merge"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_BRUTE_FORCE_DIST = {
    "brute-force-dist",
    "URI --queries Q -k K --num-shards N [--engine slurm|local] [--dry-run] | "
    "--status|--finalize|--resume RUN_ID",
    "Exact ground truth with N workers run by a cluster engine: each runs `vforge brute-force URI\n"
    "--num-jobs N --job-rank R` (a partial result), failed ones are resubmitted, then the\n"
    "partials are merged here into the same bytes a single-process brute-force writes.",
    BFD_OPTS, 0, 1};

static vf_status int_opt(const cli_cmd *c, const cli_args *a, const char *name, int lo, int hi,
                         int *out, vf_error *err) {
  if (!cli_get(c, a, name)) return VF_OK;
  uint64_t v;
  vf_status st = cli_get_u64(c, a, name, 0, &v, err);
  if (st != VF_OK) return st;
  if (v < (uint64_t)lo || v > (uint64_t)hi)
    return vf_error_set(err, VF_EUSAGE, "--%s must be in %d..%d, got %" PRIu64, name, lo, hi, v);
  *out = (int)v;
  return VF_OK;
}

static vf_status common(const cli_cmd *c, const cli_args *a, dist_options *o, vf_error *err) {
  const char *e = cli_get(c, a, "engine");
  vf_status st = VF_OK;
  if (e) {
    if (strcmp(e, "slurm") == 0)
      o->engine = DIST_ENGINE_SLURM;
    else if (strcmp(e, "local") == 0)
      o->engine = DIST_ENGINE_LOCAL;
    else
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "--engine must be slurm or local, got '%s'", e));
  }
  o->dry_run = cli_get(c, a, "dry-run") != NULL;
  o->runs_dir = cli_get(c, a, "runs-dir");
  o->run_name = cli_get(c, a, "run-name");
  VF_TRY(int_opt(c, a, "num-shards", 1, DIST_MAX_SHARDS, &o->num_shards, err));
  VF_TRY(int_opt(c, a, "max-attempts", 1, 100, &o->max_attempts, err));
  VF_TRY(int_opt(c, a, "parallel", 1, 4096, &o->parallel, err));
  const char *poll = cli_get(c, a, "poll");
  if (poll) {
    char *end = NULL;
    o->poll_s = strtod(poll, &end);
    if (!*poll || *end || !(o->poll_s >= 0.1 && o->poll_s <= 3600))
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "--poll expects seconds in 0.1..3600, got '%s'", poll));
  }
out:
  return st;
}

static void print_report(const char *cmd, const dist_report *r, bool status_only) {
  cli_summary("%s: run %s (%s engine) %s\n  run directory: %s\n", cmd, r->run_id,
          r->engine == DIST_ENGINE_SLURM ? "slurm" : "local", r->run_state, r->run_dir);
  if (r->submit_command && strcmp(r->run_state, "planned") == 0)
    cli_summary("  submit command (not run): %s\n", r->submit_command);
  int done = 0;
  for (int s = 0; s < r->nshards; s++) done += r->shards[s].state == DIST_DONE;
  cli_summary("  %" PRIu64 " files, %" PRIu64 " rows, %d shards (%d done), %" PRIu64 " resubmissions\n",
          r->files, r->expected_rows, r->nshards, done, r->retries);
  for (int s = 0; s < r->nshards; s++) {
    const dist_shard_info *h = &r->shards[s];
    cli_summary("  shard %3d: %-9s attempts %d, %" PRIu64 " files, %" PRIu64 " rows", s,
            dist_state_name(h->state), h->attempts, h->files, h->rows);
    if (h->state == DIST_DONE) {
      if (r->kind == DIST_KIND_LOAD) cli_summary(", %" PRIu64 " points sent", h->points);
      cli_summary(", %.2f s", h->seconds);
    }
    cli_summary("%s%s\n", h->job_ids && h->job_ids[0] ? ", jobs " : "", h->job_ids ? h->job_ids : "");
  }
  if (!status_only && (strcmp(r->run_state, "failed") == 0 || strcmp(r->run_state, "workers-done") == 0 ||
                       strcmp(r->run_state, "running") == 0))
    cli_summary("  to try again: vforge %s --resume %s%s\n", cmd, r->run_dir,
            strcmp(r->run_state, "workers-done") == 0 ? " (or --finalize)" : "");
  if (status_only) return;
  if (r->kind == DIST_KIND_LOAD && strcmp(r->run_state, "finalized") == 0)
    cli_summary("%s: %" PRIu64 " points verified (= corpus rows) in %.2f s = %.0f points/s\n", cmd,
            r->stored, r->seconds, r->points_per_s);
  if (r->kind == DIST_KIND_BRUTE_FORCE && r->output && strcmp(r->run_state, "finalized") == 0)
    cli_summary("%s: merged %d partials in %.2f s -> %s\n", cmd, r->nshards, r->seconds, r->output);
}

static vf_status write_report_json(const dist_report *r, vf_error *err) {
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  VF_TRY(dist_report_json(r, &b, err));
  VF_TRY(vf_buf_append(&b, "\n", 1, err));
  VF_TRY(cli_write_json(b.data, b.len, err));
out:
  vf_buf_free(&b);
  return st;
}

static int finish(const char *cmd, vf_status st, vf_error *err, dist_report *r, bool json,
                  bool status_only) {
  vf_error e2;
  vf_status js = VF_OK;
  if (r->run_id) print_report(cmd, r, status_only);
  if (json && r->run_id) js = write_report_json(r, &e2);
  dist_report_free(r);
  if (st != VF_OK) return cli_fail(st, err); /* the first failure wins */
  if (js != VF_OK) return cli_fail(js, &e2);
  return 0;
}

/* --status / --finalize: shared by both commands */
static bool run_op(const cli_cmd *c, const cli_args *a, const dist_options *o, dist_report *r,
                   vf_status *st, vf_error *err, bool *status_only) {
  const char *status = cli_get(c, a, "status"), *fin = cli_get(c, a, "finalize"),
             *res = cli_get(c, a, "resume");
  int ops = (status != NULL) + (fin != NULL) + (res != NULL);
  if (ops == 0) return false;
  if (ops > 1)
    *st = vf_error_set(err, VF_EUSAGE, "%s: --status, --finalize and --resume go alone", c->name);
  else if (a->npos > 0)
    *st = vf_error_set(err, VF_EUSAGE, "%s: --%s RUN_ID takes no other argument ('%s')", c->name,
                       status ? "status" : fin ? "finalize" : "resume", a->pos[0]);
  else if (status)
    *st = dist_status(o->runs_dir, status, r, err);
  else if (fin)
    *st = dist_finalize(o->runs_dir, fin, o, r, err);
  else
    *st = dist_resume(o->runs_dir, res, o, r, err);
  *status_only = status != NULL;
  return true;
}

int cmd_load_dist(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  const cli_cmd *c = &CLI_LOAD_DIST;
  cli_args a;
  dist_options o;
  dist_options_default(&o);
  dist_report r;
  memset(&r, 0, sizeof r);
  vf_config cfg;
  memset(&cfg, 0, sizeof cfg);
  bool status_only = false;
  bool json = false;
  vf_status st = cli_parse(c, argc, argv, &a, &err);
  cli_on_interrupt("load-dist stopped (local workers were stopped, Slurm jobs keep running); "
                   "continue with the --resume command above");
  if (st != VF_OK) goto out;
  VF_TRY(common(c, &a, &o, &err));
  json = cli_get(c, &a, "json");
  if (!run_op(c, &a, &o, &r, &st, &err, &status_only)) {
    if (a.npos != 1)
      VF_FAIL(vf_error_set(&err, VF_EUSAGE, "load-dist: CONFIG is required (or --status / --finalize RUN_ID)"));
    VF_TRY(vf_config_load(a.pos[0], &cfg, &err));
    o.config_path = a.pos[0];
    VF_TRY(dist_load(&cfg, &o, &r, &err));
  }
out:
  vf_config_free(&cfg);
  return finish("load-dist", st, &err, &r, json, status_only);
}

int cmd_brute_force_dist(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  const cli_cmd *c = &CLI_BRUTE_FORCE_DIST;
  cli_args a;
  dist_options o;
  dist_options_default(&o);
  dist_report r;
  memset(&r, 0, sizeof r);
  bool status_only = false;
  bool json = false;
  vf_status st = cli_parse(c, argc, argv, &a, &err);
  cli_on_interrupt("brute-force-dist stopped (local workers were stopped, Slurm jobs keep "
                   "running); continue with the --resume command above");
  if (st != VF_OK) goto out;
  VF_TRY(common(c, &a, &o, &err));
  json = cli_get(c, &a, "json");
  if (!run_op(c, &a, &o, &r, &st, &err, &status_only)) {
    dist_bf_options bf = {0};
    uint64_t k = 0;
    if (a.npos != 1) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "brute-force-dist: URI is required"));
    if (!cli_get(c, &a, "queries"))
      VF_FAIL(vf_error_set(&err, VF_EUSAGE, "brute-force-dist: --queries Q is required"));
    if (!cli_get(c, &a, "k")) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "brute-force-dist: -k K is required"));
    if (!cli_get(c, &a, "num-shards"))
      VF_FAIL(vf_error_set(&err, VF_EUSAGE, "brute-force-dist: --num-shards N is required"));
    VF_TRY(cli_get_u64(c, &a, "k", 0, &k, &err));
    if (k < 1 || k > 100000) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "brute-force-dist: -k must be 1..100000"));
    bf.uri = a.pos[0];
    bf.queries = cli_get(c, &a, "queries");
    bf.k = (uint32_t)k;
    bf.metric = cli_get(c, &a, "metric");
    bf.column = cli_get(c, &a, "column");
    bf.id_root = cli_get(c, &a, "id-root");
    bf.output = cli_get(c, &a, "output");
    if (o.engine < 0) o.engine = DIST_ENGINE_SLURM;
    VF_TRY(dist_brute_force(&bf, &o, &r, &err));
  }
out:
  return finish("brute-force-dist", st, &err, &r, json, status_only);
}
