/* dist internal: the run manifest in memory, run-directory paths, and the engines. */
#ifndef VFORGE_DIST_INTERNAL_H
#define VFORGE_DIST_INTERNAL_H

#include <sys/types.h>

#include "vforge/dist.h"

/* the run manifest and the run's config.yaml (both list every file of the corpus) */
#define DIST_MAX_MANIFEST ((size_t)1 << 30)
/* a worker's argument list or its shell-quoted command line (Linux's ARG_MAX is 2 MiB unless the
 * stack limit is raised) */
#define DIST_MAX_COMMAND ((size_t)8 << 20)
/* an engine tool's stdout or stderr (sbatch, squeue, scontrol): run_capture stops appending
 * after 1 MiB, so at most 1 MiB, one 4 KiB read and the NUL */
#define DIST_MAX_CAPTURE ((size_t)2 << 20)

typedef struct dm_shard {
  dist_state state;
  int attempts;
  uint64_t files, rows, points;
  double seconds;
  char **job_ids; /* every attempt's engine job id */
  size_t njob_ids;
  /* live only (not persisted) */
  pid_t pid;          /* local engine: the worker's pid, 0 when none */
  char *job;          /* current engine job id */
  double started;     /* vf_now() at submission */
  int gone_polls;     /* polls that found the task ended without a done marker */
} dm_shard;

typedef struct dm_file {
  char *uri, *key;
  uint64_t rows;
} dm_file;

typedef struct dist_manifest {
  char *run_id, *run_dir, *created;
  dist_kind kind;
  dist_engine engine;
  int num_shards, max_attempts;
  char *state; /* planned | running | workers-done | finalized | failed */
  dm_file *files;
  size_t nfiles;
  uint64_t expected_rows;
  dm_shard *shards;
  uint64_t retries;
  char *submit_command;
  /* slurm resources (sbatch options), kept for resubmissions by --resume */
  int64_t res_cpus, res_memory_gb;
  char *res_partition, *res_time;
  /* load */
  char *collection, *store;
  uint64_t stored;
  bool verified;
  double seconds;
  /* brute force */
  char *bf_uri, *bf_queries, *bf_metric, *bf_column, *bf_id_root, *bf_output;
  uint32_t bf_k;
} dist_manifest;

void dm_free(dist_manifest *m);
/* "<run_dir>/<rel>" (caller frees; NULL on OOM) */
char *dm_path(const dist_manifest *m, const char *rel);
/* "<run_dir>/<dir>/<RRR><ext>" */
char *dm_shard_path(const dist_manifest *m, const char *dir, int shard, const char *ext);
vf_status dm_write(const dist_manifest *m, vf_error *err);
vf_status dm_read(const char *run_dir, dist_manifest *m, vf_error *err);
vf_status dm_set_state(dist_manifest *m, const char *state, vf_error *err);
vf_status dm_add_job(dm_shard *s, const char *job, vf_error *err);
/* the run directory of `run`: a path (contains '/') or an id under runs_dir */
char *dm_resolve(const char *runs_dir, const char *run, vf_error *err, vf_status *st);
char *dm_default_runs_dir(void);
vf_status dm_to_report(const dist_manifest *m, dist_report *r, vf_error *err);
/* the done marker of a shard exists: read its JSON summary (load: points, seconds) */
bool dm_done_marker(dist_manifest *m, int shard);
char *dm_abs_path(const char *p);
char *dm_self_exe(void);

/* ------------------------------------------------------------------ engines */

/* Write worker.sh and shards/RRR.args (argv[i] per line; no argument may hold a newline). */
vf_status de_write_worker(const dist_manifest *m, char *const *const *argvs, vf_error *err);

typedef struct de_resources {
  int64_t cpus, memory_gb;
  const char *partition, *time;
} de_resources;

/* The sbatch argv for `shards` (count n) -> *argv (NULL-terminated, caller frees with
 * de_argv_free). */
vf_status de_sbatch_argv(const dist_manifest *m, const de_resources *res, const int *shards,
                         int n, char ***argv, vf_error *err);
void de_argv_free(char **argv);
/* argv as a shell-quoted line for display */
char *de_argv_show(char *const *argv);

/* Drive every shard that is not done to done: submit, poll, resubmit failed ones.  The
 * manifest is written after every change.  VF_OK when all shards are done.  `resume`: the run
 * was driven before (by a driver that ended): Slurm tasks it submitted are polled rather than
 * submitted again, and every unfinished shard gets max_attempts fresh attempts; a local worker
 * of the old driver that still runs is VF_EUSAGE. */
vf_status de_drive(dist_manifest *m, const de_resources *res, int parallel, double poll_s,
                   bool resume, vf_error *err);

#endif
