/*
 * vforge dist — the same work split over an existing cluster engine (DESIGN.md module `dist`;
 * issue 9 "Scale-out").  vforge does not schedule anything itself: it plans shards, writes a
 * run directory, hands N workers to an engine (Slurm: one `sbatch --array` job; local: child
 * processes), watches them finish, resubmits failed ones and finalizes.
 *
 * Run directory  <runs dir>/<run_id>/   (runs dir: --runs-dir, default ~/.vforge/runs)
 *   manifest.json      kind, engine, files (uri, key, rows, shard), expected rows, per-shard
 *                      state / attempts / engine job ids / points / seconds, run state
 *                      (rewritten atomically after every change)
 *   config.json        the resolved config (vf_config_render_json: secrets masked)
 *   config.yaml        the resolved config as a loadable YAML (finalize reads it)
 *   shards/RRR.yaml    shard RRR's config: the same, with `datasource.file_list` = its files
 *   shards/RRR.args    shard RRR's worker command, one argument per line
 *   worker.sh          the batch script (fixed text, no user strings; see dist_worker_script())
 *   state/             prepare.json; state/RRR/ the worker's load checkpoints (--resume)
 *   out/RRR.json       a worker's stdout while it runs; done/RRR.json once it succeeded
 *   logs/              worker stderr (RRR.log), Slurm output (slurm-<job>_<task>.out)
 *
 * Credentials: no file above holds a secret.  A config value that is a secret (api_key, or a
 * value taken from a variable named *KEY*, *TOKEN*, *SECRET*, *PASSWORD*) is written as the
 * `${VAR}` reference it came from, and the worker reads VAR from its environment: the local
 * engine's children inherit it, and sbatch --export=ALL copies the submitting environment into
 * the job (Slurm keeps it in its own state directory, readable by root / SlurmUser only).
 * A secret written literally in the config, or taken from a `${VAR:-default}` whose VAR is
 * unset, is refused (it could reach the workers only through a file).
 *
 * Run states (manifest "state"): planned (written; --dry-run stops here) -> running ->
 * workers-done -> finalized, or failed.  dist_status() reads a run, dist_finalize() finalizes
 * one whose shards are done, dist_resume() drives one again (its driver ended, it failed, or a
 * dry run).
 *
 * Shards: the corpus files sorted by key, file i to shard i % N (the same assignment as
 * `load load --num-jobs N`).  A worker loads only its shard's files (so ids are the same as a
 * single-process load: they depend on the file key and physical row only); id expressions
 * that depend on the global row (`row`) or are random (`uuid()`) are refused.
 */
#ifndef VFORGE_DIST_H
#define VFORGE_DIST_H

#include "vforge/config.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DIST_MAX_SHARDS 10000
#define DIST_DEFAULT_MAX_ATTEMPTS 3

typedef enum dist_engine { DIST_ENGINE_SLURM = 0, DIST_ENGINE_LOCAL } dist_engine;

typedef enum dist_kind { DIST_KIND_LOAD = 0, DIST_KIND_BRUTE_FORCE } dist_kind;

typedef enum dist_state {
  DIST_PENDING = 0, /* planned, not submitted */
  DIST_SUBMITTED,   /* handed to the engine (queued) */
  DIST_RUNNING,     /* the engine says it runs */
  DIST_DONE,        /* its done marker exists */
  DIST_FAILED       /* ended without a done marker, attempts exhausted */
} dist_state;

/*! dist_state_name() : "pending", "submitted", "running", "done", "failed". */
const char *dist_state_name(dist_state s);

/*! dist_shard_of() : the shard of file `i` of the sorted file list: i % num_shards. */
static inline int dist_shard_of(size_t i, int num_shards) { return (int)(i % (size_t)num_shards); }

/*! dist_run_id() : "<name>-<UTC yyyymmddThhmmssZ>-<8 hex random>" into out (cap >= 128).
 *  @return : VF_EUSAGE when name is empty, longer than 64 bytes or has a character outside
 *            [A-Za-z0-9._-] (it becomes a directory name). */
vf_status dist_run_id(const char *name, char *out, size_t cap, vf_error *err);

/*! dist_idexpr_needs_global_row() : true when an id expression text uses the keyword `row`
 *  (any case, outside quotes): its ids depend on how files are split, so load-dist refuses it. */
bool dist_idexpr_needs_global_row(const char *expr);

/*! dist_shell_quote() : append `s` to `out` as one POSIX-shell word ('...' with ' as '\'');
 *  used only for showing commands (--dry-run), never to run them. */
vf_status dist_shell_quote(vf_buf *out, const char *s, vf_error *err);

/*! dist_worker_script() : the text of worker.sh (constant; see dist_worker.c for why it is safe). */
const char *dist_worker_script(void);

typedef struct dist_options {
  int num_shards;            /* 0: the config's dispatch.num_shards, else 1 */
  int engine;                /* -1: the config's dispatch.engine; else a dist_engine */
  const char *runs_dir;      /* NULL: $HOME/.vforge/runs */
  const char *run_name;      /* NULL: dispatch.run_name, else "load" / "bf" */
  const char *config_path;   /* the CONFIG file (where `${VAR}` references of secrets are read) */
  const char *vforge_bin;    /* the vforge binary workers run (NULL: /proc/self/exe) */
  bool dry_run;              /* write the run directory, print the submit command, submit nothing */
  int max_attempts;          /* per shard, first try included (0: DIST_DEFAULT_MAX_ATTEMPTS) */
  int parallel;              /* local engine: concurrent workers (0: vf_cpu_available()) */
  double poll_s;             /* seconds between polls (0: 1) */
  double wait_timeout_s;     /* finalize: store_wait_indexed timeout (0: 3600) */
} dist_options;

/*! dist_options_default() : zeroes, engine -1. */
void dist_options_default(dist_options *o);

typedef struct dist_shard_info {
  dist_state state;
  int attempts;
  uint64_t files, rows;   /* planned */
  uint64_t points;        /* load: points the worker reported (done shards) */
  double seconds;         /* the worker's own time (load) or submit-to-done (brute force) */
  char *job_ids;          /* every engine job id, comma-separated ("" when none) */
} dist_shard_info;

typedef struct dist_report {
  char *run_id;
  char *run_dir;
  dist_kind kind;
  dist_engine engine;
  char *run_state;        /* "planned", "running", "workers-done", "finalized", "failed" */
  char *submit_command;   /* the (first) submit command, shell-quoted for display */
  int nshards;
  dist_shard_info *shards;
  uint64_t files, expected_rows;
  uint64_t stored;        /* load: the collection's exact count after finalize */
  bool verified;          /* stored == expected_rows */
  uint64_t retries;       /* resubmissions */
  double seconds;         /* submit to finalized */
  double points_per_s;    /* expected_rows / seconds */
  char *output;           /* brute force: the merged file */
} dist_report;

void dist_report_free(dist_report *r);

/*! dist_load() : `vforge load-dist`: plan the config's corpus into shards, write the run
 *  directory, prepare the collection (indexing deferred), submit the workers, poll until each
 *  has a done marker (resubmitting failed ones with --resume up to max_attempts), then finalize
 *  (enable indexing, wait, exact count == corpus rows).  With dry_run it stops after writing the
 *  run directory (nothing is prepared or submitted) and rep->submit_command holds the command.
 *  @return : VF_EUSAGE / VF_ECONFIG for options and configs it cannot distribute (row / uuid()
 *            ids, a secret that is not a ${VAR} reference, a dataset datasource); VF_EIO when a
 *            shard failed max_attempts times or the final count differs, naming them; engine
 *            errors (sbatch's message) as VF_EIO. */
vf_status dist_load(const vf_config *cfg, const dist_options *o, dist_report *rep, vf_error *err);

/*! dist_status() : the run `run` (an id under runs_dir, or a run directory path) as recorded
 *  in its manifest, with done markers written since taken into account.  Touches nothing. */
vf_status dist_status(const char *runs_dir, const char *run, dist_report *rep, vf_error *err);

/*! dist_finalize() : finalize an existing load run whose shards are all done (rereads
 *  config.yaml, so the secrets' variables must be set): enable indexing, wait, verify the
 *  exact count equals the corpus rows.
 *  @return : VF_EUSAGE naming unfinished shards; VF_EIO naming both numbers on a mismatch. */
vf_status dist_finalize(const char *runs_dir, const char *run, const dist_options *o,
                        dist_report *rep, vf_error *err);

/*! dist_resume() : drive an existing run again — after its driver ended (killed, a lost
 *  login), after a failed run, or to submit a --dry-run: Slurm tasks still queued or running are
 *  watched rather than submitted again, every other unfinished shard is submitted with
 *  max_attempts fresh attempts (workers carry --resume, so they continue from their
 *  checkpoints), then the run is finalized.  A finalized run is left as it is.
 *  @return : as dist_load(); VF_EUSAGE when a local worker of the earlier driver still runs. */
vf_status dist_resume(const char *runs_dir, const char *run, const dist_options *o,
                      dist_report *rep, vf_error *err);

typedef struct dist_bf_options {
  const char *uri;        /* the corpus */
  const char *queries;    /* the queries file */
  uint32_t k;
  const char *metric;     /* NULL: brute-force's default */
  const char *column;     /* NULL: as brute-force */
  const char *id_root;    /* NULL: none */
  const char *output;     /* the merged file (NULL: the eval/ layout path) */
} dist_bf_options;

/*! dist_brute_force() : `vforge brute-force-dist`: N workers each run `vforge brute-force URI
 *  --num-jobs N --job-rank R` (file i to job i % N), then the partials are merged in this
 *  process (eval_brute_force_merge) into the same bytes a single-process brute-force writes.
 *  o->num_shards >= 1 is required, o->engine >= 0.
 *  @return : as dist_load(), and the merge's errors. */
vf_status dist_brute_force(const dist_bf_options *bf, const dist_options *o, dist_report *rep,
                           vf_error *err);

/*! dist_report_json() : append one JSON object: {run_id, run_dir, kind, engine, state, files,
 *  expected_rows, stored, verified, retries, seconds, points_per_s, output, shards: [{shard,
 *  state, attempts, files, rows, points, seconds, job_ids}]} (no newline). */
vf_status dist_report_json(const dist_report *r, vf_buf *out, vf_error *err);

#ifdef __cplusplus
}
#endif
#endif
