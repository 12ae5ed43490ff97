/*
 * vforge CLI — argument parsing, subcommands and rendering.  The CLI holds no logic the
 * library lacks: each command parses its options, calls the library, and renders the result
 * (data on stdout, progress/logs/summaries on stderr).
 */
#ifndef VFORGE_CLI_H
#define VFORGE_CLI_H

#include <stdio.h>

#include "vforge/config.h"
#include "vforge/util.h"

#define CLI_MAX_OPTS 32
#define CLI_MAX_POS 4096
#define CLI_MAX_OCC 256 /* command options per command line, counted with repeats */
/* a rendering that lists every file of a corpus in one piece (load inspect): about 300 bytes a
 * file, so 16 GiB holds 50 million files (inspect streams its listing out every 1 MiB) */
#define CLI_MAX_LISTING ((size_t)16 << 30)

typedef struct cli_opt {
  const char *name;    /* long name without dashes */
  const char *metavar; /* NULL for flags */
  const char *help;
} cli_opt;

typedef struct cli_cmd {
  const char *name;
  const char *synopsis; /* after "vforge NAME " */
  const char *summary;
  const cli_opt *opts;  /* command options, terminated by {NULL} */
  int min_pos, max_pos; /* positional argument counts */
} cli_cmd;

typedef struct cli_args {
  const char *val[CLI_MAX_OPTS]; /* value (or "" for a set flag) per command option, NULL if unset */
  const char *pos[CLI_MAX_POS];
  int npos;
  struct {
    int opt;         /* index into the command's options */
    const char *val;
  } occ[CLI_MAX_OCC]; /* every command option in command-line order, repeats included */
  int nocc;
} cli_args;

/* Parse argv (after the command name).  Handles global options itself (--threads,
 * --memory-budget, --quiet), --help (prints and exits 0).  Returns VF_EUSAGE with a message. */
vf_status cli_parse(const cli_cmd *cmd, int argc, char **argv, cli_args *out, vf_error *err);
void cli_print_help(const cli_cmd *cmd, FILE *to);
/* index of an option of cmd by name (for reading cli_args.val) */
int cli_opt_index(const cli_cmd *cmd, const char *name);
const char *cli_get(const cli_cmd *cmd, const cli_args *a, const char *name);
/* every value of a repeatable option (--sweep a=1 --sweep b=2), in command-line order, into
 * out[0..max); returns how many were given (val[] keeps only the last) */
int cli_get_all(const cli_cmd *cmd, const cli_args *a, const char *name, const char **out, int max);
/* "--limit N": unsigned integer option; VF_EUSAGE naming the option when malformed */
vf_status cli_get_u64(const cli_cmd *cmd, const cli_args *a, const char *name, uint64_t dflt,
                      uint64_t *out, vf_error *err);
/*! cli_job_opts() : --num-jobs N [--job-rank R], shared by every command that splits work: without
 *  --num-jobs *num_jobs is 0 (and --job-rank is refused); else N in 1..max_jobs and *rank from
 *  --job-rank or, without it, from the environment (vf_job_rank: a Slurm array task, a SkyPilot
 *  job), logged; nothing naming it is VF_EUSAGE. */
vf_status cli_job_opts(const cli_cmd *cmd, const cli_args *a, int max_jobs, int *num_jobs,
                       int *rank, vf_error *err);
/* "a,b,c" split on commas (blanks around items dropped) */
typedef struct cli_list {
  char *buf;
  char **items;
  int n;
} cli_list;
bool cli_list_split(const char *s, cli_list *out);
void cli_list_free(cli_list *l);

/* stdout writer used by commands that stream data */
vf_status cli_write_stdout(void *user, const void *data, size_t len, vf_error *err);
/*! cli_write_json() : write one --json object to stdout with "peak_rss_bytes" (the process's
 *  peak resident set so far, getrusage ru_maxrss in bytes) added as its last key.  Every
 *  command's --json goes through here. */
vf_status cli_write_json(const void *data, size_t len, vf_error *err);
/*! cli_peak_rss_bytes() : getrusage(RUSAGE_SELF) ru_maxrss in bytes (0 when unavailable). */
uint64_t cli_peak_rss_bytes(void);

int cmd_inspect(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_load(int argc, char **argv);

extern const cli_cmd CLI_INSPECT, CLI_CAT, CLI_SCAN, CLI_CONVERT, CLI_LOAD;

/* vforge generate-queries / brute-force / brute-force-merge (src/cli/cmd_eval.c) */
int cmd_generate_queries(int argc, char **argv);
int cmd_brute_force(int argc, char **argv);
int cmd_brute_force_merge(int argc, char **argv);
extern const cli_cmd CLI_GENERATE_QUERIES, CLI_BRUTE_FORCE, CLI_BRUTE_FORCE_MERGE;

/* vforge bench (src/cli/cmd_bench.c) */
int cmd_bench(int argc, char **argv);
extern const cli_cmd CLI_BENCH;

/* vforge plot (src/cli/cmd_plot.c) */
int cmd_plot(int argc, char **argv);
extern const cli_cmd CLI_PLOT;

/* vforge load-dist / brute-force-dist (src/cli/cmd_dist.c) */
int cmd_load_dist(int argc, char **argv);
int cmd_brute_force_dist(int argc, char **argv);
extern const cli_cmd CLI_LOAD_DIST, CLI_BRUTE_FORCE_DIST;

/* vforge index build|search|info (src/cli/cmd_index.c) */
int cmd_index(int argc, char **argv);

/* The corpus a command's URI argument names: corpus_source_open() (include/vforge/config.h). */
typedef corpus_source cli_corpus;
static inline vf_status cli_corpus_open(const char *uri, const char *id_root, const char *column,
                                        cli_corpus *out, vf_error *err) {
  corpus_source_opts o = {.id_root = id_root, .column = column};
  return corpus_source_open(uri, &o, out, err);
}
static inline void cli_corpus_close(cli_corpus *c) { corpus_source_close(c); }

/*! cli_summary() : the human summary of a command (printf-style) on stderr, after the progress
 *  bar's line is cleared; nothing under --quiet (which keeps warnings, errors and stdout data). */
void cli_summary(const char *fmt, ...) VF_PRINTF(1, 2);
/*! cli_quiet() : --quiet was given. */
bool cli_quiet(void);

/* report an error on stderr and return the exit code for its status; VF_ECANCELED prints the
 * cli_on_interrupt() line and returns 128 + the signal */
int cli_fail(vf_status st, const vf_error *err);
/* what an interruption of the running command stopped and how to resume it, printed as
 * "vforge: interrupted (SIGINT): <text>" (main.c) */
void cli_on_interrupt(const char *fmt, ...) VF_PRINTF(1, 2);
/* clear the progress line (call before printing a summary on stderr) */
void cli_progress_end(void);

/*! cli_text_arg() : an option value that is text or @FILE (read whole, at most `max` bytes):
 *  *out is a copy of the text (caller frees).  `opt` names the option in messages.
 *  @return : VF_EUSAGE naming the file when it cannot be read or is too large. */
vf_status cli_text_arg(const char *opt, const char *value, size_t max, char **out, vf_error *err);

#endif
