/*
 * vforge load run|prepare|load|finalize|inspect CONFIG — a thin wrapper over the load runner
 * (include/vforge/load.h) and vf_config_inspect().  Progress arrives as "load" progress events
 * (rendered by main.c); the human summary goes to stderr and, with --json, exactly one JSON
 * object {points, files, bytes_read, seconds, points_per_s, retries, skipped_rows} to stdout.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "vforge/config.h"
#include "vforge/load.h"

static const cli_opt LOAD_OPTS[] = {
    {"num-jobs", "N", "split the files over N workers (file i goes to rank i % N)"},
    {"job-rank", "R", "this worker's rank, 0..N-1 (default: from SLURM_ARRAY_TASK_ID or SKYPILOT_JOB_RANK)"},
    {"resume", NULL, "continue from this worker's load state (checkpoint)"},
    {"offset", "N", "skip the first N rows of this worker's rows"},
    {"limit", "N", "load at most N rows (-n N)"},
    {"no-manage-indexing", NULL, "load: do not create the collection / defer and enable indexing"},
    {"skip-bad-rows", NULL, "drop bad rows (wrong dimension, NaN/inf, null vector) and count them"},
    {"state-dir", "DIR", "where load states live (default <store path>/<collection>/_load)"},
    {"checkpoint-batches", "N", "flush the store and checkpoint about every N batches (default 1024; also every 5 s)"},
    {"store", "TYPE", "override vectorstore.type: local | discard (discard measures the pipeline)"},
    {"yes", NULL, "delete: really drop the collection (without it, say what would be dropped)"},
    {"json", NULL, "print one JSON object {points, files, bytes_read, seconds, points_per_s, finalize_seconds, "
                   "retries, skipped_rows} on stdout"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_LOAD = {
    "load", "run|prepare|load|finalize|inspect|reindex|delete CONFIG [--num-jobs N --job-rank R] "
            "[--resume] [--offset N] [-n N] [--yes] [--json]",
    "Load a corpus into a vector store as the config says.\n"
    "  run       prepare + load + finalize in one process\n"
    "  prepare   create (or verify) the collection and defer indexing\n"
    "  load      load this worker's files (--num-jobs N --job-rank R); checkpoints as it goes\n"
    "  finalize  enable indexing (local: compact so each id is stored once), wait, and verify\n"
    "            the point count against what the workers sent\n"
    "  inspect   print the resolved config, the files with row counts and the collection\n"
    "            as one JSON object (Qdrant: also the transport, rest or grpc), writing nothing\n"
    "  reindex   Qdrant: apply the config's hnsw / quantization / optimizers to the existing\n"
    "            collection and wait until it is green\n"
    "  delete    drop the collection and its load states (--yes; without it, say what would\n"
    "            be dropped and exit 2)\n"
    "A killed load continues with --resume (ids are deterministic, re-sent points replace).",
    LOAD_OPTS, 2, 2};

static vf_status get_int(const cli_args *a, const char *name, int dflt, int lo, int hi, int *out,
                         vf_error *err) {
  uint64_t v;
  vf_status st = cli_get_u64(&CLI_LOAD, a, name, (uint64_t)dflt, &v, err);
  if (st != VF_OK) return st;
  if (v < (uint64_t)lo || v > (uint64_t)hi)
    return vf_error_set(err, VF_EUSAGE, "--%s must be in %d..%d, got %" PRIu64, name, lo, hi, v);
  *out = (int)v;
  return VF_OK;
}

static void summary(const char *sub, const ld_report *r) {
  cli_summary(
          "load %s: %" PRIu64 " points, %" PRIu64 " files, %.1f MB read in %.2f s (%.0f points/s "
          "loading; finalize %.2f s), %" PRIu64 " retries, %" PRIu64 " skipped rows, %" PRIu64
          " empty files skipped\n",
          sub, r->points, r->files, (double)r->bytes_read / 1e6, r->seconds, r->points_per_s,
          r->finalize_seconds, r->retries, r->skipped_rows, r->empty_files);
}

int cmd_load(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  vf_config cfg;
  memset(&cfg, 0, sizeof cfg);
  ld_options o;
  ld_options_default(&o);
  ld_report rep;
  memset(&rep, 0, sizeof rep);
  vf_buf out;
  VF_BUF_INIT(&out, CLI_MAX_LISTING);
  ld_drop_report drop = {0};
  vf_status st = VF_OK;
  VF_TRY(cli_parse(&CLI_LOAD, argc, argv, &a, &err));
  const char *sub = a.pos[0];
  static const char *const subs[] = {"run", "prepare", "load", "finalize", "inspect",
                                     "reindex", "delete"};
  int which = -1;
  for (int i = 0; i < 7; i++)
    if (strcmp(sub, subs[i]) == 0) which = i;
  if (which < 0)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "vforge load: unknown subcommand '%s' (run, prepare, load, "
                         "finalize, inspect, reindex, delete)", sub));
  if (cli_get(&CLI_LOAD, &a, "yes") && which != 6)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "--yes goes with `load delete`"));
  if (which == 2) { /* only `load load` reads a rank's share of the files */
    VF_TRY(cli_job_opts(&CLI_LOAD, &a, 999, &o.num_jobs, &o.job_rank, &err));
    if (o.num_jobs == 0) o.num_jobs = 1;
  } else {
    VF_TRY(get_int(&a, "num-jobs", 1, 1, 999, &o.num_jobs, &err));
    VF_TRY(get_int(&a, "job-rank", 0, 0, 998, &o.job_rank, &err));
    if (o.job_rank >= o.num_jobs)
      VF_FAIL(vf_error_set(&err, VF_EUSAGE, "--job-rank %d must be below --num-jobs %d", o.job_rank,
                           o.num_jobs));
  }
  uint64_t ckb = 0;
  VF_TRY(cli_get_u64(&CLI_LOAD, &a, "checkpoint-batches", 0, &ckb, &err));
  if (ckb > 1000000)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "--checkpoint-batches must be at most 1000000"));
  o.checkpoint_batches = (int64_t)ckb;
  VF_TRY(cli_get_u64(&CLI_LOAD, &a, "offset", 0, &o.offset, &err));
  VF_TRY(cli_get_u64(&CLI_LOAD, &a, "limit", 0, &o.limit, &err));
  if (cli_get(&CLI_LOAD, &a, "limit") && o.limit == 0)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "-n / --limit must be at least 1"));
  o.resume = cli_get(&CLI_LOAD, &a, "resume") != NULL;
  o.manage_indexing = cli_get(&CLI_LOAD, &a, "no-manage-indexing") == NULL;
  if (cli_get(&CLI_LOAD, &a, "skip-bad-rows")) o.skip_bad_rows = 1;
  o.state_dir = cli_get(&CLI_LOAD, &a, "state-dir");
  o.store_type = cli_get(&CLI_LOAD, &a, "store");
  if (o.store_type && strcmp(o.store_type, "local") != 0 && strcmp(o.store_type, "discard") != 0)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "--store must be local or discard, got '%s'", o.store_type));
  VF_TRY(vf_config_load(a.pos[1], &cfg, &err));
  bool json = cli_get(&CLI_LOAD, &a, "json") != NULL;
  { /* the subcommand, under its interruption message */
    char jobs[64] = "";
    if (o.num_jobs > 1)
      snprintf(jobs, sizeof jobs, " --num-jobs %d --job-rank %d", o.num_jobs, o.job_rank);
    if (which == 0 || which == 2)
      cli_on_interrupt("load %s of %s stopped (the points up to its last checkpoint are kept, "
                       "partial segments and index files were removed); resume with: vforge load "
                       "%s %s%s --resume", sub, a.pos[1], sub, a.pos[1], jobs);
    else if (which == 3)
      cli_on_interrupt("load finalize of %s stopped (the collection stays consistent); run "
                       "vforge load finalize %s again", a.pos[1], a.pos[1]);
    else
      cli_on_interrupt("load %s of %s stopped; run it again", sub, a.pos[1]);
    switch (which) {
      case 0: st = ld_run(&cfg, &o, &rep, &err); break;
      case 1: st = ld_prepare(&cfg, &o, &rep, &err); break;
      case 2: st = ld_load(&cfg, &o, &rep, &err); break;
      case 3: st = ld_finalize(&cfg, &o, &rep, &err); break;
      case 5: st = ld_reindex(&cfg, &o, &err); break;
      case 6: st = ld_delete(&cfg, &o, cli_get(&CLI_LOAD, &a, "yes") != NULL, &drop, &err); break;
      default: st = vf_config_inspect(&cfg, &out, &err); break;
    }
    if (st != VF_OK) goto out;
  }
  cli_progress_end();
  if (which >= 5) { /* reindex, delete */
    const char *c = cfg.vectorstore.collection_name;
    if (which == 5)
      fprintf(stderr, "load reindex: collection '%s' updated and green\n", c);
    else if (drop.existed)
      fprintf(stderr, "load delete: dropped collection '%s' (%" PRIu64 " points) at %s\n", c,
              drop.points, drop.where);
    else
      fprintf(stderr, "load delete: collection '%s' does not exist at %s\n", c, drop.where);
    if (json) {
      if (which == 5)
        VF_TRY(vf_buf_printf(&out, &err, "{\"collection\":"));
      else
        VF_TRY(vf_buf_printf(&out, &err, "{\"existed\":%s,\"dropped\":%s,\"points\":%" PRIu64
                             ",\"collection\":", drop.existed ? "true" : "false",
                             drop.dropped ? "true" : "false", drop.points));
      VF_TRY(vf_json_string(&out, c, strlen(c), &err));
      VF_TRY(vf_buf_append(&out, "}\n", 2, &err));
      VF_TRY(cli_write_json(out.data, out.len, &err));
    }
  } else if (which == 4) {
    if (out.len == 0 || out.data[out.len - 1] != '\n') VF_TRY(vf_buf_append(&out, "\n", 1, &err));
    VF_TRY(cli_write_stdout(NULL, out.data, out.len, &err));
  } else {
    if (which == 0 || which == 2) summary(sub, &rep);
    if (which == 0 || which == 3) {
      if (rep.verified)
        cli_summary("load %s: collection '%s' holds %" PRIu64 " points (the load sent %" PRIu64
                ")\n", sub, cfg.vectorstore.collection_name, rep.stored, rep.expected);
      else
        cli_summary("load %s: collection '%s' holds %" PRIu64 " points\n", sub,
                cfg.vectorstore.collection_name, rep.stored);
    }
    if (which == 1)
      cli_summary("load prepare: collection '%s' ready, %" PRIu64 " points stored\n",
              cfg.vectorstore.collection_name, rep.stored);
    if (json) {
      VF_TRY(ld_report_json(&rep, &out, &err));
      VF_TRY(vf_buf_append(&out, "\n", 1, &err));
      VF_TRY(cli_write_json(out.data, out.len, &err));
    }
  }
out:
  vf_buf_free(&out);
  vf_config_free(&cfg);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}
