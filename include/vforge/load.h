/*
 * vforge load — the load runner: a corpus described by a vf_config streamed into a vector store
 * (issue 3 "The runner"; DESIGN.md module `load`).
 *
 *   reader thread:  whole row groups (corpus_records_read) until about `prefetch_size` rows are
 *                   buffered -> slices of `batch_size` rows (corpus_batch_slice) -> a queue
 *   `concurrency` upsert workers, each with its own store handle (handles are single-threaded),
 *                   retrying VF_ENET/VF_EIO failures with exponential backoff and jitter
 *   checkpoints:    every batch has a sequence number; a worker flushes its handle every few
 *                   batches / seconds and then marks what it upserted durable; the durable
 *                   watermark (every batch up to it durable) is written to a JSON state file,
 *                   so `resume` restarts each file at the first row not known to be durable.
 *
 * Memory is bounded by prefetch_size rows (plus at most one row group beyond it) whatever the
 * corpus size: the reader waits until upserted slices release their row group.
 *
 * Subcommands: prepare (open, ensure the collection, defer indexing), load (this worker's files:
 * file i of the sorted list goes to rank i % num_jobs), finalize (enable indexing — the local
 * store compacts so each id is stored once — wait, and verify the exact count against the rows
 * sent, read from the workers' state files), run (all three in one process).
 */
#ifndef VFORGE_LOAD_H
#define VFORGE_LOAD_H

#include "vforge/config.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ld_options {
  int num_jobs;               /* workers splitting the files (>= 1) */
  int job_rank;               /* this worker, 0 .. num_jobs-1 */
  bool resume;                /* continue from the state file (absent state: start fresh) */
  uint64_t offset;            /* rows of this worker's row stream to skip */
  uint64_t limit;             /* at most this many rows of the stream after offset; 0 = all */
  bool manage_indexing;       /* `load`: ensure the collection + defer indexing first, and enable
                                 indexing at the end when num_jobs == 1 (default true) */
  int skip_bad_rows;          /* -1: the config's loader.skip_bad_rows; 0 / 1 override it */
  const char *state_dir;      /* NULL: <vectorstore.path>/<collection>/_load */
  const char *store_type;     /* NULL: the config's store; "discard" measures the pipeline */
  int64_t checkpoint_batches; /* flush + checkpoint after about this many batches (0: 1024) */
  double checkpoint_seconds;  /* ... or this many seconds (0: 5) */
  double wait_timeout_s;      /* finalize: store_wait_indexed timeout (default 3600 s; 0: none) */
  struct corpus_plan *plan;   /* NULL: each call resolves the config's files and plans them; else
                                 a plan (corpus.h) over the files vf_config_files() gives for this
                                 config, measured or not, which the call reads and completes
                                 instead (borrowed: the caller frees it), so a process running
                                 several stages plans the corpus once (load-dist's driver) */
} ld_options;

/* What a subcommand did.  points: points sent to the store by this call (rows re-sent after a
 * resume are counted again); files: files this call finished; bytes_read: bytes fetched from
 * the corpus; retries: upserts retried; skipped_rows: bad rows dropped (skip_bad_rows). */
typedef struct ld_report {
  uint64_t points;
  uint64_t files;
  uint64_t bytes_read;
  double seconds;
  double points_per_s;        /* run: points / (seconds - finalize_seconds), the loading rate */
  double finalize_seconds;    /* finalize: compaction, index build, wait and count */
  uint64_t retries;
  uint64_t skipped_rows;
  uint64_t empty_files;       /* corpus files with no rows, skipped (corpus_plan) */
  /* finalize */
  bool verified;              /* store_count was checked against `expected` */
  uint64_t stored;            /* store_count(exact) after finalize */
  uint64_t expected;          /* points the state files say were loaded */
} ld_report;

/*! ld_options_default() : num_jobs 1, rank 0, manage_indexing, skip_bad_rows from config. */
void ld_options_default(ld_options *o);

/*! ld_state_path() : the state file of this worker: <state dir>/rank<RRR>-of-<NNN>.json.
 *  Caller frees *out.  @return : VF_ECONFIG when the config has no collection_name. */
vf_status ld_state_path(const vf_config *cfg, const ld_options *o, char **out, vf_error *err);

/*! ld_prepare() : store_open + store_ensure_collection + store_defer_indexing.  The vector
 *  dimensions are read from the first corpus file.  Records whether the collection was empty
 *  (so finalize can demand an exact count) in <state dir>/prepare.json.
 *  @return : VF_ECONFIG for a config the store cannot take; store and corpus errors. */
vf_status ld_prepare(const vf_config *cfg, const ld_options *o, ld_report *rep, vf_error *err);

/*! ld_load() : load this worker's files.  Without `resume` an existing state file is
 *  VF_EUSAGE (pass --resume or remove it); with it, completed files are skipped and the file in
 *  progress restarts at its checkpoint row (uuid() ids are refused: VF_EUSAGE).
 *  @return : VF_ECORRUPT naming file and row for a bad row (unless skip_bad_rows); the store's
 *            error for a batch that still fails after loader.retries retries. */
vf_status ld_load(const vf_config *cfg, const ld_options *o, ld_report *rep, vf_error *err);

/*! ld_finalize() : store_enable_indexing + store_wait_indexed + store_count(exact), verified
 *  against the points recorded by the workers' state files (>=; exactly equal when prepare
 *  found the collection empty and no rows were skipped).  A verified load's state files are
 *  removed, so the next run starts fresh.
 *  @return : VF_EIO naming both numbers on a mismatch; VF_EUSAGE when a worker's state says it
 *            has not finished. */
vf_status ld_finalize(const vf_config *cfg, const ld_options *o, ld_report *rep, vf_error *err);

/*! ld_run() : ld_prepare + ld_load + ld_finalize in one process (num_jobs must be 1).  The
 *  report is the load's, with the finalize fields filled in and seconds covering all three. */
vf_status ld_run(const vf_config *cfg, const ld_options *o, ld_report *rep, vf_error *err);

/*! ld_report_json() : append {points, files, bytes_read, seconds, points_per_s, retries,
 *  skipped_rows} (one JSON object, no newline). */
vf_status ld_report_json(const ld_report *rep, vf_buf *out, vf_error *err);

/*! ld_reindex() : `vforge load reindex` (issue 18): patch the config's hnsw / quantization /
 *  optimizers (vectorstore.params and vectors.<name>) onto the existing Qdrant collection and
 *  wait until it is green (o->wait_timeout_s).  The corpus is not read.
 *  @return : VF_EUSAGE for a store that is not Qdrant; VF_ENOTFOUND without the collection;
 *            VF_ECONFIG when the config sets none of those settings. */
vf_status ld_reindex(const vf_config *cfg, const ld_options *o, vf_error *err);

typedef struct ld_drop_report {
  bool existed, dropped;
  uint64_t points;  /* points the collection held */
  char where[512];  /* the server or directory */
} ld_drop_report;

/*! ld_delete() : `vforge load delete` (issue 18): drop the collection and this config's load
 *  states.  Without `yes` nothing is changed and the call fails with VF_EUSAGE saying what
 *  would be dropped.  A missing collection is not an error (rep->existed false). */
vf_status ld_delete(const vf_config *cfg, const ld_options *o, bool yes, ld_drop_report *rep,
                    vf_error *err);

#ifdef __cplusplus
}
#endif
#endif
