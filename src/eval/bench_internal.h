/*
 * bench_internal.h — what bench.c, bench_sweep.c, bench_results.c and bench_plot.c share
 * inside the eval module (not part of the public bench.h).
 */
#ifndef VFORGE_EVAL_BENCH_INTERNAL_H
#define VFORGE_EVAL_BENCH_INTERNAL_H

#include "vforge/bench.h"

/* bench_report_json()'s members without the braces: "k":..,...,"errors":N */
vf_status bench_report_members(const bench_report *r, vf_buf *out, vf_error *err);

#endif
