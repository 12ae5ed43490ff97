/* Private to src/load: the checkpoint state file and the threaded pipeline. */
#ifndef VFORGE_LOAD_INTERNAL_H
#define VFORGE_LOAD_INTERNAL_H

#include "vforge/config.h"
#include "vforge/corpus.h"
#include "vforge/load.h"
#include "vforge/store.h"

#define LD_STATE_MAX_BYTES ((size_t)64 << 20) /* a state file larger than this is refused */
#define LD_STATE_VERSION 1

/* One worker's progress, as stored in rank<RRR>-of-<NNN>.json.  Files are processed in order,
 * so the completed keys plus the position inside the current file say exactly which rows are
 * durable in the store. */
typedef struct ld_state {
  int num_jobs, job_rank;
  uint64_t offset, limit;
  char *id_expression;
  uint64_t files_total;   /* this worker's files */
  bool done;              /* every file of this worker is durable */
  uint64_t points;        /* points sent for the rows before the checkpoint (counted once) */
  uint64_t skipped_rows;  /* bad rows dropped before the checkpoint */
  char **completed;       /* bare keys of finished files */
  size_t ncompleted;
  char *current_key;      /* the file in progress, NULL when none */
  uint64_t current_row;   /* every row of it before this physical row is durable */
} ld_state;

void ld_state_free(ld_state *s);
/*! ld_state_read() : parse a state file.  @return : VF_ENOTFOUND when it does not exist;
 *  VF_ECORRUPT naming the file and offset for anything malformed. */
vf_status ld_state_read(const char *path, ld_state *out, vf_error *err);
/*! ld_state_write() : write `s` to `path` atomically (temp + fsync + rename). */
vf_status ld_state_write(const char *path, const ld_state *s, vf_error *err);

/* One file of this worker: the rows [row_begin, row_end) are to be loaded. */
typedef struct ld_plan_file {
  const corpus_file *file;
  uint64_t global_base; /* corpus-wide row number of its first row */
  uint64_t rows;
  uint64_t row_begin, row_end;
  bool completed;       /* nothing left to do (resume, or an empty offset/limit range) */
} ld_plan_file;

typedef struct ld_pipeline_cfg {
  const store_config *store;
  const corpus_record_spec *spec;
  ld_plan_file *files;
  size_t nfiles;
  int64_t batch_size, prefetch_size, concurrency, retries;
  int64_t checkpoint_batches;
  double checkpoint_seconds;
  const char *state_path;  /* NULL: no checkpoints */
  ld_state *state;         /* template for the state file (identity fields, counters so far) */
  uint64_t rows_total;     /* rows planned (for progress) */
} ld_pipeline_cfg;

/*! ld_pipeline_run() : the reader thread, the upsert workers and the checkpoints (see load.h).
 *  Fills points, files, bytes_read, retries, skipped_rows of `rep`; on success the state file
 *  says done. */
vf_status ld_pipeline_run(const ld_pipeline_cfg *pc, ld_report *rep, vf_error *err);

#endif
