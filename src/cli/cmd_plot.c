/*
 * vforge plot RESULTS.jsonl... --output FILE.svg|FILE.png [--title T]
 * Overlays the --results files of several bench runs (one series per file: stores, index
 * types, machines) in the recall–QPS / latency picture of bench_plot() (issue 19).  A thin
 * wrapper over include/vforge/bench.h: read each file, draw, say where the picture went.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vforge/bench.h"

static const cli_opt PLOT_OPTS[] = {
    {"output", "FILE", "the picture: FILE.png or FILE.svg (required)"},
    {"title", "TEXT", "the title (default: recall@k vs throughput)"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_PLOT = {
    "plot",
    "RESULTS.jsonl... --output FILE.png|FILE.svg [--title TEXT]",
    "Draw the bench --results files given, one series (colour) per file, named by the runs'\n"
    "--label (else the file name): recall@k against queries/s (log scale) with each series'\n"
    "Pareto front (filled markers joined by a line; dominated points hollow; a bar for the\n"
    "recall's tie range), and latency p50/p95/p99 against queries/s.  All files must have the\n"
    "same k.  At most 16 files.",
    PLOT_OPTS, 1, BENCH_MAX_SERIES};

int cmd_plot(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  bench_series ser[BENCH_MAX_SERIES];
  memset(ser, 0, sizeof ser);
  size_t n = 0;
  vf_status st = VF_OK;
  VF_TRY(cli_parse(&CLI_PLOT, argc, argv, &a, &err));
  const char *out = cli_get(&CLI_PLOT, &a, "output");
  if (!out) VF_FAIL(vf_error_set(&err, VF_EUSAGE, "vforge plot: --output FILE.png|FILE.svg is required"));
  VF_TRY(bench_plot_check_path(out, &err));
  for (int i = 0; i < a.npos; i++) {
    VF_TRY(bench_series_read(a.pos[i], &ser[n], &err));
    n++;
  }
  VF_TRY(bench_plot(ser, n, cli_get(&CLI_PLOT, &a, "title"), out, &err));
  size_t pts = 0;
  for (size_t i = 0; i < n; i++) pts += ser[i].n;
  fprintf(stderr, "plot: %zu series, %zu points -> %s\n", n, pts, out);
out:
  for (size_t i = 0; i < n; i++) bench_series_free(&ser[i]);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}
