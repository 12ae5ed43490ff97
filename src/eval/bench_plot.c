/*
 * bench_plot.c — the recall–throughput picture of a benchmark campaign (issue 19), drawn with
 * Cairo into PNG or SVG: `bench --plot FILE` for the sweep just run, `vforge plot a.jsonl
 * b.jsonl --output cmp.svg` to overlay result files.
 *
 * The left panel is the ann-benchmarks plot people already read: recall@k on x, queries/s on a
 * log y axis, and per series the Pareto front (the points that no other point of the series
 * beats in both recall and QPS) as a line through filled markers; dominated points stay visible
 * as hollow markers, because a sweep's losers are information too.  A horizontal bar through a
 * marker shows the recall's tie range (recall_min..recall_max) when ties at the cutoff make it
 * one.  The right panel shows what the left hides: latency p50 / p95 / p99 against the same
 * throughput (a --concurrency or --rps list makes it the throughput–latency curve).
 *
 * Why Cairo: antialiased lines, real fonts through fontconfig and byte-exact SVG and PNG writers
 * from one drawing code path; nothing here encodes an image format.  Text goes through Cairo's
 * toy font API (DejaVu Sans, Debian fonts-dejavu-core), so the SVG holds the glyph outlines
 * rather than <text> elements — it renders the same everywhere.
 * The file is written through vf_atomic_* (temp + fsync + rename), like every vforge output.
 */
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bench_internal.h"

#define PLOT_FONT "DejaVu Sans"
#define PLOT_TITLE_SIZE 18.0
#define PLOT_LABEL_SIZE 13.0 /* axis labels and panel titles */
#define PLOT_TICK_SIZE 11.0
#define PLOT_NOTE_SIZE 9.0
#define PLOT_MARKER_R 4.5
#define PLOT_MAX_NOTES 24 /* points of a series above which the markers are not labelled */

typedef struct rgb {
  double r, g, b;
} rgb;

/* matplotlib's tab10 and six more: distinct in colour and in grey */
static const rgb PALETTE[BENCH_MAX_SERIES] = {
    {0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173}, {0.839, 0.153, 0.157},
    {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}, {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498},
    {0.737, 0.741, 0.133}, {0.090, 0.745, 0.812}, {0.000, 0.000, 0.502}, {0.502, 0.000, 0.000},
    {0.000, 0.502, 0.502}, {0.502, 0.502, 0.000}, {0.333, 0.000, 0.502}, {0.000, 0.333, 0.000}};

typedef struct axis {
  double lo, hi; /* data range (log axes: the values, not their logs) */
  bool log;
  double p0, p1; /* pixel range */
} axis;

typedef struct panel {
  double x0, y0, x1, y1; /* plot area in pixels */
  axis x, y;
} panel;

static double ax_map(const axis *a, double v) {
  double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
                    : (v - a->lo) / (a->hi - a->lo);
  return a->p0 + t * (a->p1 - a->p0);
}

static void set_rgb(cairo_t *cr, rgb c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

static void font(cairo_t *cr, double size, bool bold) {
  cairo_select_font_face(cr, PLOT_FONT, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

/* text anchored at (x, y): ha 0 left, 0.5 centre, 1 right; va 0 top, 0.5 middle, 1 baseline */
static void text_at(cairo_t *cr, double x, double y, const char *s, double ha, double va) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  double dy = va == 1 ? 0 : va == 0 ? fe.ascent : fe.ascent / 2 - fe.descent / 4;
  cairo_move_to(cr, x - ha * e.x_advance, y + dy);
  cairo_show_text(cr, s);
  cairo_new_path(cr);
}

/* a vertical label centred at (x, y), reading bottom to top */
static void text_vertical(cairo_t *cr, double x, double y, const char *s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_rotate(cr, -M_PI / 2);
  cairo_move_to(cr, -e.x_advance / 2, 0);
  cairo_show_text(cr, s);
  cairo_new_path(cr);
  cairo_restore(cr);
}

/* 1, 10, 100, 1k, 10k, ..., 1M; below 1: 0.1, 0.01 */
static void fmt_decade(double v, char *out, size_t cap) {
  if (v >= 1e9) snprintf(out, cap, "%gG", v / 1e9);
  else if (v >= 1e6) snprintf(out, cap, "%gM", v / 1e6);
  else if (v >= 1e3) snprintf(out, cap, "%gk", v / 1e3);
  else snprintf(out, cap, "%g", v);
}

/* [lo, hi] (values > 0) with a margin of 40 % either side, so no marker sits on the frame */
static void log_range(double lo, double hi, double *a, double *b) {
  if (!(lo > 0)) lo = hi > 0 ? hi : 1;
  if (!(hi > 0)) hi = lo;
  *a = lo / 1.4;
  *b = hi * 1.4;
}

/* a grid line across the panel at pixel `px` of axis `dim` (0: x), in grey `g`, and its tick
 * label outside the frame ("" for none) */
static void grid_tick(cairo_t *cr, const panel *p, int dim, double px, double g, const char *lab) {
  cairo_set_source_rgb(cr, g, g, g);
  if (dim == 0) {
    cairo_move_to(cr, px, p->y0);
    cairo_line_to(cr, px, p->y1);
  } else {
    cairo_move_to(cr, p->x0, px);
    cairo_line_to(cr, p->x1, px);
  }
  cairo_stroke(cr);
  if (!lab[0]) return;
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  font(cr, PLOT_TICK_SIZE, false);
  if (dim == 0) text_at(cr, px, p->y1 + 6, lab, 0.5, 0);
  else text_at(cr, p->x0 - 6, px, lab, 1, 0.5);
}

static void draw_frame(cairo_t *cr, const panel *p, const char *xlabel, const char *ylabel,
                       const char *title) {
  /* grid and ticks */
  cairo_set_line_width(cr, 1);
  for (int dim = 0; dim < 2; dim++) {
    const axis *a = dim == 0 ? &p->x : &p->y;
    if (a->log) {
      /* grid lines at m x 10^e; labels at 10^e, also at 2 and 5 x 10^e over three decades or
       * less, at every m within one decade */
      double decades = log10(a->hi / a->lo);
      for (double d = pow(10, floor(log10(a->lo))); d <= a->hi; d *= 10) {
        for (int m = 1; m < 10; m++) {
          double v = d * m;
          if (v > a->hi) break;
          if (v < a->lo) continue;
          char lab[32] = "";
          if (m == 1 || (decades <= 3 && (m == 2 || m == 5)) || decades < 1) fmt_decade(v, lab, sizeof lab);
          grid_tick(cr, p, dim, ax_map(a, v), m == 1 ? 0.82 : 0.93, lab);
        }
      }
    } else {
      double range = a->hi - a->lo, step = 0.1;
      if (range <= 0.1 + 1e-9) step = 0.01;
      else if (range <= 0.25 + 1e-9) step = 0.02;
      else if (range <= 0.5 + 1e-9) step = 0.05;
      for (double v = a->lo; v <= a->hi + 1e-9 && v <= 1 + 1e-9; v += step) {
        char lab[32];
        snprintf(lab, sizeof lab, step < 0.1 - 1e-9 ? "%.2f" : "%.1f", v);
        grid_tick(cr, p, dim, ax_map(a, v), 0.88, lab);
      }
    }
  }
  cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
  cairo_set_line_width(cr, 1.2);
  cairo_rectangle(cr, p->x0, p->y0, p->x1 - p->x0, p->y1 - p->y0);
  cairo_stroke(cr);
  font(cr, PLOT_LABEL_SIZE, false);
  text_at(cr, (p->x0 + p->x1) / 2, p->y1 + 26, xlabel, 0.5, 0);
  text_vertical(cr, p->x0 - 52, (p->y0 + p->y1) / 2, ylabel);
  font(cr, PLOT_LABEL_SIZE, true);
  text_at(cr, (p->x0 + p->x1) / 2, p->y0 - 10, title, 0.5, 1);
}

static void circle(cairo_t *cr, double x, double y, bool filled, rgb c) {
  cairo_new_path(cr);
  cairo_new_sub_path(cr);
  cairo_arc(cr, x, y, PLOT_MARKER_R, 0, 2 * M_PI);
  cairo_close_path(cr);
  set_rgb(cr, c);
  if (filled) {
    cairo_fill(cr);
  } else {
    cairo_set_line_width(cr, 1.5);
    cairo_stroke(cr);
  }
}

static void square(cairo_t *cr, double x, double y, rgb c) {
  cairo_new_path(cr);
  cairo_rectangle(cr, x - 3, y - 3, 6, 6);
  set_rgb(cr, c);
  cairo_fill(cr);
}

static int cmp_recall_desc(const void *a, const void *b) {
  const bench_plot_point *x = *(const bench_plot_point *const *)a, *y = *(const bench_plot_point *const *)b;
  if (x->recall != y->recall) return x->recall > y->recall ? -1 : 1;
  return x->qps > y->qps ? -1 : x->qps < y->qps;
}

static int cmp_qps_asc(const void *a, const void *b) {
  const bench_plot_point *x = *(const bench_plot_point *const *)a, *y = *(const bench_plot_point *const *)b;
  return x->qps < y->qps ? -1 : x->qps > y->qps;
}

/* the left panel's series: tie bars, the Pareto front, the markers, the labels */
static void draw_recall_series(cairo_t *cr, const panel *p, const bench_series *s, rgb c,
                               const bench_plot_point **ord, bool *front) {
  size_t m = 0;
  for (size_t i = 0; i < s->n; i++)
    if (s->pts[i].qps > 0) ord[m++] = &s->pts[i];
  qsort(ord, m, sizeof *ord, cmp_recall_desc);
  double best = -1;
  for (size_t i = 0; i < m; i++) {
    front[i] = ord[i]->qps > best;
    if (front[i]) best = ord[i]->qps;
  }
  /* tie ranges */
  cairo_set_line_width(cr, 1.2);
  for (size_t i = 0; i < m; i++) {
    if (!(ord[i]->recall_max > ord[i]->recall_min)) continue;
    double y = ax_map(&p->y, ord[i]->qps);
    set_rgb(cr, c);
    cairo_move_to(cr, ax_map(&p->x, ord[i]->recall_min), y);
    cairo_line_to(cr, ax_map(&p->x, ord[i]->recall_max), y);
    cairo_stroke(cr);
  }
  /* the front, in recall order */
  cairo_set_line_width(cr, 2);
  set_rgb(cr, c);
  bool started = false;
  for (size_t i = m; i-- > 0;) {
    if (!front[i]) continue;
    double x = ax_map(&p->x, ord[i]->recall), y = ax_map(&p->y, ord[i]->qps);
    if (!started) cairo_move_to(cr, x, y);
    else cairo_line_to(cr, x, y);
    started = true;
  }
  cairo_stroke(cr);
  for (size_t i = 0; i < m; i++)
    circle(cr, ax_map(&p->x, ord[i]->recall), ax_map(&p->y, ord[i]->qps), front[i], c);
  if (m > PLOT_MAX_NOTES) return;
  font(cr, PLOT_NOTE_SIZE, false);
  for (size_t i = 0; i < m; i++) {
    if (!ord[i]->params[0]) continue;
    cairo_set_source_rgb(cr, c.r * 0.7, c.g * 0.7, c.b * 0.7);
    double x = ax_map(&p->x, ord[i]->recall);
    bool right_edge = x > p->x1 - 90; /* label to the left of markers near the right edge */
    text_at(cr, right_edge ? x - 7 : x + 7, ax_map(&p->y, ord[i]->qps) - 5, ord[i]->params,
            right_edge ? 1 : 0, 1);
  }
}

static void draw_latency_series(cairo_t *cr, const panel *p, const bench_series *s, rgb c,
                                const bench_plot_point **ord) {
  size_t m = 0;
  for (size_t i = 0; i < s->n; i++)
    if (s->pts[i].qps > 0 && s->pts[i].p50_ms > 0) ord[m++] = &s->pts[i];
  qsort(ord, m, sizeof *ord, cmp_qps_asc);
  static const double dash[] = {6, 3}, dot[] = {1.5, 2.5};
  for (int pc = 0; pc < 3; pc++) {
    cairo_set_line_width(cr, 1.8);
    if (pc == 1) cairo_set_dash(cr, dash, 2, 0);
    if (pc == 2) cairo_set_dash(cr, dot, 2, 0);
    set_rgb(cr, c);
    bool started = false;
    for (size_t i = 0; i < m; i++) {
      double v = pc == 0 ? ord[i]->p50_ms : pc == 1 ? ord[i]->p95_ms : ord[i]->p99_ms;
      if (!(v > 0)) continue;
      double x = ax_map(&p->x, ord[i]->qps), y = ax_map(&p->y, v);
      if (!started) cairo_move_to(cr, x, y);
      else cairo_line_to(cr, x, y);
      started = true;
    }
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    for (size_t i = 0; i < m; i++) {
      double v = pc == 0 ? ord[i]->p50_ms : pc == 1 ? ord[i]->p95_ms : ord[i]->p99_ms;
      if (v > 0) square(cr, ax_map(&p->x, ord[i]->qps), ax_map(&p->y, v), c);
    }
  }
}

/* The legend row under the panels: one entry per series (its colour: a line and a filled
 * marker), then the latency panel's line styles (p50 solid, p95 dashed, p99 dotted). */
static void draw_legend(cairo_t *cr, const bench_series *s, size_t n, double y, double width) {
  static const double dash[] = {6, 3}, dot[] = {1.5, 2.5};
  static const char *const pnames[] = {"latency p50", "p95", "p99"};
  font(cr, PLOT_LABEL_SIZE, false);
  size_t ne = n + 3;
  double total = 0, w[BENCH_MAX_SERIES + 3];
  for (size_t i = 0; i < ne; i++) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, i < n ? s[i].label : pnames[i - n], &e);
    w[i] = 40 + e.x_advance + (i + 1 == n ? 48 : 24);
    total += w[i];
  }
  double x = total < width ? (width - total) / 2 : 10;
  for (size_t i = 0; i < ne; i++) {
    if (x + w[i] > width && x > 10) { /* wrap */
      x = 10;
      y += 20;
    }
    cairo_set_line_width(cr, 2);
    if (i < n) {
      set_rgb(cr, PALETTE[i]);
    } else {
      cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
      if (i == n + 1) cairo_set_dash(cr, dash, 2, 0);
      if (i == n + 2) cairo_set_dash(cr, dot, 2, 0);
    }
    cairo_move_to(cr, x, y);
    cairo_line_to(cr, x + 30, y);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    if (i < n) circle(cr, x + 15, y, true, PALETTE[i]);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text_at(cr, x + 40, y, i < n ? s[i].label : pnames[i - n], 0, 0.5);
    x += w[i];
  }
}

static void draw(cairo_t *cr, const bench_series *s, size_t n, const char *title,
                 const bench_plot_point **ord, bool *front) {
  const double W = BENCH_PLOT_WIDTH, H = BENCH_PLOT_HEIGHT;
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  double rmin = 1, qlo = INFINITY, qhi = 0, llo = INFINITY, lhi = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < s[i].n; j++) {
      const bench_plot_point *pt = &s[i].pts[j];
      if (!(pt->qps > 0)) continue;
      double r = pt->recall_min < pt->recall ? pt->recall_min : pt->recall;
      if (r < rmin) rmin = r;
      if (pt->qps < qlo) qlo = pt->qps;
      if (pt->qps > qhi) qhi = pt->qps;
      const double l[3] = {pt->p50_ms, pt->p95_ms, pt->p99_ms};
      for (int k = 0; k < 3; k++)
        if (l[k] > 0) {
          if (l[k] < llo) llo = l[k];
          if (l[k] > lhi) lhi = l[k];
        }
    }
  if (!(qhi > 0)) qlo = 1, qhi = 10;
  if (!(lhi > 0)) llo = 0.1, lhi = 1;
  panel left = {90, 70, 600, H - 120, {0, 1, false, 0, 0}, {0, 0, true, 0, 0}};
  panel right = {730, 70, W - 40, H - 120, {0, 0, true, 0, 0}, {0, 0, true, 0, 0}};
  left.x.lo = floor((rmin - 0.02) * 10) / 10;
  if (left.x.lo < 0) left.x.lo = 0;
  if (left.x.lo > 0.9) left.x.lo = 0.9;
  left.x.hi = 1 + (1 - left.x.lo) * 0.04; /* room for a marker at recall 1 */
  log_range(qlo, qhi, &left.y.lo, &left.y.hi);
  right.x.lo = left.y.lo;
  right.x.hi = left.y.hi;
  log_range(llo, lhi, &right.y.lo, &right.y.hi);
  left.x.p0 = left.x0, left.x.p1 = left.x1, left.y.p0 = left.y1, left.y.p1 = left.y0;
  right.x.p0 = right.x0, right.x.p1 = right.x1, right.y.p0 = right.y1, right.y.p1 = right.y0;

  char xl[64], pt1[96];
  snprintf(xl, sizeof xl, "recall@%zu", s[0].k);
  snprintf(pt1, sizeof pt1, "recall@%zu vs throughput (Pareto front)", s[0].k);
  cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
  font(cr, PLOT_TITLE_SIZE, true);
  char tt[160];
  if (!title) snprintf(tt, sizeof tt, "recall@%zu vs throughput", s[0].k);
  text_at(cr, W / 2, 32, title ? title : tt, 0.5, 1);
  draw_frame(cr, &left, xl, "queries/s (log scale)", pt1);
  draw_frame(cr, &right, "queries/s (log scale)", "latency ms (log scale)",
             "latency percentiles vs throughput");
  for (size_t i = 0; i < n; i++) {
    cairo_save(cr);
    cairo_rectangle(cr, left.x0, left.y0, left.x1 - left.x0, left.y1 - left.y0);
    cairo_clip(cr);
    draw_recall_series(cr, &left, &s[i], PALETTE[i], ord, front);
    cairo_restore(cr);
    cairo_save(cr);
    cairo_rectangle(cr, right.x0, right.y0, right.x1 - right.x0, right.y1 - right.y0);
    cairo_clip(cr);
    draw_latency_series(cr, &right, &s[i], PALETTE[i], ord);
    cairo_restore(cr);
  }
  draw_legend(cr, s, n, H - 36, W);
}

/* ------------------------------------------------------------ output */

typedef struct sink {
  vf_atomic_file *f;
  vf_status st;
  vf_error err;
} sink;

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int len) {
  sink *k = closure;
  if (k->st != VF_OK) return CAIRO_STATUS_WRITE_ERROR; /* the first write error stays */
  k->st = vf_atomic_write(k->f, data, len, &k->err);
  return k->st != VF_OK ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcasecmp(s + a - b, suf) == 0;
}

vf_status bench_plot_check_path(const char *path, vf_error *err) {
  if (!ends_with(path, ".svg") && !ends_with(path, ".png"))
    return vf_error_set(err, VF_EUSAGE, "plot: %s: the file name must end in .png or .svg", path);
  const char *slash = strrchr(path, '/');
  char *dir = slash ? vf_strndup(path, slash == path ? 1 : (size_t)(slash - path)) : vf_strdup(".");
  if (!dir) return vf_error_set(err, VF_ENOMEM, "plot: out of memory");
  vf_status st = VF_OK;
  if (access(dir, W_OK) != 0)
    st = vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "plot: %s: cannot write into "
                      "the directory %s: %s", path, dir, VF_STRERROR(errno));
  free(dir);
  return st;
}

vf_status bench_plot(const bench_series *s, size_t n, const char *title, const char *path,
                     vf_error *err) {
  vf_status cst = bench_plot_check_path(path, err);
  if (cst != VF_OK) return cst;
  bool svg = ends_with(path, ".svg");
  if (n == 0 || n > BENCH_MAX_SERIES)
    return vf_error_set(err, VF_EUSAGE, "plot: %zu series (1..%d can be drawn together)", n, BENCH_MAX_SERIES);
  size_t most = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i].k != s[0].k)
      return vf_error_set(err, VF_EUSAGE, "plot: series '%s' has k = %zu, '%s' k = %zu: recall@k "
                          "of different k do not share an axis", s[0].label, s[0].k, s[i].label, s[i].k);
    if (s[i].n > most) most = s[i].n;
  }
  const bench_plot_point **ord = vf_calloc(most ? most : 1, sizeof *ord);
  bool *front = vf_calloc(most ? most : 1, sizeof *front);
  sink k = {NULL, VF_OK, {VF_OK, ""}};
  cairo_surface_t *surf = NULL;
  cairo_t *cr = NULL;
  vf_status st = VF_OK;
  if (!ord || !front) VF_FAIL(vf_error_set(err, VF_ENOMEM, "plot: out of memory"));
  VF_TRY(vf_atomic_open(path, &k.f, err));
  surf = svg ? cairo_svg_surface_create_for_stream(sink_write, &k, BENCH_PLOT_WIDTH, BENCH_PLOT_HEIGHT)
             : cairo_image_surface_create(CAIRO_FORMAT_RGB24, BENCH_PLOT_WIDTH, BENCH_PLOT_HEIGHT);
  if (svg) cairo_svg_surface_set_document_unit(surf, CAIRO_SVG_UNIT_PX);
  cr = cairo_create(surf);
  draw(cr, s, n, title, ord, front);
  cairo_status_t cs = cairo_status(cr);
  cairo_destroy(cr);
  cr = NULL;
  if (cs == CAIRO_STATUS_SUCCESS) {
    if (svg) cairo_surface_finish(surf);
    else cs = cairo_surface_write_to_png_stream(surf, sink_write, &k);
  }
  if (cs == CAIRO_STATUS_SUCCESS) cs = cairo_surface_status(surf);
  if (k.st != VF_OK) {
    st = k.st;
    if (err) *err = k.err;
    vf_error_prefix(err, "plot: ");
    goto out;
  }
  if (cs != CAIRO_STATUS_SUCCESS)
    VF_FAIL(vf_error_set(err, VF_EINTERNAL, "plot: %s: cairo: %s", path, cairo_status_to_string(cs)));
  st = vf_atomic_commit(k.f, err);
  k.f = NULL;
out:
  if (surf) cairo_surface_destroy(surf);
  vf_atomic_abort(k.f);
  free(ord);
  free(front);
  return st;
}
