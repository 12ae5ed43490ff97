/* Unit tests of the bench plots (bench_plot(), bench_series_read(); issue 19), checked the way a
 * person checks a picture:
 *  - the PNG is read back with Cairo: its size, that it is not blank (share of non-white pixels,
 *    distinct colours) and that each series' colour is on it;
 *  - the SVG carries the axis labels: each label is rendered here, on its own, through Cairo with
 *    the same font, size and rotation, and its sequence of glyph outlines must occur in the
 *    plot's SVG (Cairo's SVG holds text as glyph outlines, not <text>, so this is the text a
 *    reader sees);
 *  - one marker per point: the SVG's circles (paths of Bezier arcs only), grouped by colour, are
 *    the points of each series plus its legend swatch;
 *  - result files: labels, points, k, and errors naming file and line. */
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "vf_test.h"
#include "vforge/bench.h"

static char *path_in(const char *name) {
  static char buf[8][1024];
  static int i;
  char *p = buf[i++ % 8];
  snprintf(p, 1024, "%s/%s", vf_test_tmpdir(), name);
  return p;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  fclose(f);
  if (s) s[n] = 0;
  if (len) *len = (size_t)n;
  return s;
}

static void spit(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

/* two series: a 5-point nprobe sweep (one point dominated, one with a tie range) and 3 points */
static void make_series(bench_series s[2]) {
  static bench_plot_point a[5] = {
      {0.40, 0.40, 0.40, 9000, 0.10, 0.15, 0.30, "nprobe=1"},
      {0.62, 0.62, 0.62, 7000, 0.13, 0.20, 0.35, "nprobe=2"},
      {0.55, 0.55, 0.55, 5000, 0.18, 0.30, 0.50, "nprobe=3"}, /* dominated by nprobe=2 */
      {0.86, 0.85, 0.88, 3000, 0.30, 0.45, 0.90, "nprobe=8"},
      {1.00, 1.00, 1.00, 900, 1.00, 1.50, 2.50, "nprobe=64"}};
  static bench_plot_point b[3] = {{0.70, 0.70, 0.70, 20000, 0.05, 0.08, 0.12, "hnsw-ef=16"},
                                  {0.90, 0.90, 0.90, 12000, 0.08, 0.12, 0.20, "hnsw-ef=64"},
                                  {0.99, 0.99, 0.99, 4000, 0.25, 0.40, 0.70, "hnsw-ef=256"}};
  s[0] = (bench_series){"local sq8", 10, 5, a};
  s[1] = (bench_series){"qdrant hnsw", 10, 3, b};
}

VF_TEST(png_size_and_not_blank) {
  bench_series s[2];
  make_series(s);
  vf_error err;
  const char *png = path_in("p.png");
  CHECK_OK(bench_plot(s, 2, NULL, png, &err));
  cairo_surface_t *img = cairo_image_surface_create_from_png(png);
  CHECK(cairo_surface_status(img) == CAIRO_STATUS_SUCCESS);
  if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) return;
  int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
  CHECK_EQ_INT(w, BENCH_PLOT_WIDTH);
  CHECK_EQ_INT(h, BENCH_PLOT_HEIGHT);
  cairo_surface_flush(img);
  const unsigned char *px = cairo_image_surface_get_data(img);
  int stride = cairo_image_surface_get_stride(img);
  size_t inked = 0, colour_a = 0, colour_b = 0;
  /* distinct colours, 12 bits each, in a bitmap */
  static unsigned char seen[4096];
  memset(seen, 0, sizeof seen);
  size_t distinct = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint32_t v = *(const uint32_t *)(px + (size_t)y * (size_t)stride + (size_t)x * 4) & 0xffffff;
      int r = (int)(v >> 16), g = (int)(v >> 8 & 255), b = (int)(v & 255);
      if (r < 245 || g < 245 || b < 245) inked++;
      unsigned q = (unsigned)((r >> 4) << 8 | (g >> 4) << 4 | (b >> 4));
      if (!seen[q]) seen[q] = 1, distinct++;
      /* the first two palette colours (tab10 blue and orange) at full strength */
      if (abs(r - 31) + abs(g - 119) + abs(b - 180) <= 3) colour_a++;
      if (abs(r - 255) + abs(g - 127) + abs(b - 14) <= 3) colour_b++;
    }
  double share = (double)inked / ((double)w * h);
  if (!(share > 0.02 && share < 0.5)) vf_test_fail(__FILE__, __LINE__, "inked share %.4f", share);
  if (distinct < 20) vf_test_fail(__FILE__, __LINE__, "only %zu distinct colours", distinct);
  if (colour_a < 100 || colour_b < 60)
    vf_test_fail(__FILE__, __LINE__, "series colours: %zu / %zu pixels", colour_a, colour_b);
  cairo_surface_destroy(img);
  /* a different picture for different data: one series only */
  const char *png1 = path_in("p1.png");
  CHECK_OK(bench_plot(s, 1, "one", png1, &err));
  size_t l0, l1;
  char *d0 = slurp(png, &l0), *d1 = slurp(png1, &l1);
  CHECK(d0 && d1 && (l0 != l1 || memcmp(d0, d1, l0) != 0));
  free(d0);
  free(d1);
}

/* ----------------------------------------------------------- SVG reading */

typedef struct glyphs {
  char **ids, **paths;
  size_t n;
} glyphs;

static char *dup_span(const char *a, const char *b) {
  char *s = malloc((size_t)(b - a) + 1);
  memcpy(s, a, (size_t)(b - a));
  s[b - a] = 0;
  return s;
}

/* Cairo's <symbol id="glyphF-N"><path d="..."/></symbol> */
static void read_glyphs(const char *svg, glyphs *g) {
  memset(g, 0, sizeof *g);
  for (const char *p = svg; (p = strstr(p, "<symbol ")) != NULL;) {
    const char *id = strstr(p, "id=\""), *end = strstr(p, "</symbol>");
    if (!id || !end) break;
    const char *d = strstr(p, " d=\"");
    g->ids = realloc(g->ids, (g->n + 1) * sizeof *g->ids);
    g->paths = realloc(g->paths, (g->n + 1) * sizeof *g->paths);
    g->ids[g->n] = dup_span(id + 4, strchr(id + 4, '"'));
    g->paths[g->n] = d && d < end ? dup_span(d + 4, strchr(d + 4, '"')) : strdup("");
    g->n++;
    p = end;
  }
}

static void glyphs_free(glyphs *g) {
  for (size_t i = 0; i < g->n; i++) free(g->ids[i]), free(g->paths[i]);
  free(g->ids);
  free(g->paths);
}

static const char *glyph_path(const glyphs *g, const char *id, size_t len) {
  for (size_t i = 0; i < g->n; i++)
    if (strlen(g->ids[i]) == len && strncmp(g->ids[i], id, len) == 0) return g->paths[i];
  return NULL;
}

/* the text runs: each <g ...> of <use xlink:href="#glyph..."> as its outlines joined by '|' */
static size_t read_runs(const char *svg, const glyphs *g, char ***out) {
  size_t n = 0;
  *out = NULL;
  const char *body = strstr(svg, "</defs>");
  for (const char *p = body ? body : svg; (p = strstr(p, "<g ")) != NULL;) {
    const char *end = strstr(p, "</g>");
    const char *u = strstr(p, "<use ");
    if (!end) break;
    if (!u || u > end) {
      p += 3;
      continue;
    }
    size_t cap = 64, len = 0;
    char *run = malloc(cap);
    run[0] = 0;
    for (; u && u < end; u = strstr(u + 1, "<use ")) {
      const char *h = strstr(u, "href=\"#");
      if (!h) break;
      h += 7;
      const char *q = strchr(h, '"');
      const char *path = glyph_path(g, h, (size_t)(q - h));
      size_t pl = path ? strlen(path) : 1;
      if (len + pl + 2 > cap) run = realloc(run, cap = 2 * (len + pl + 2));
      memcpy(run + len, path ? path : "?", pl);
      len += pl;
      run[len++] = '|';
      run[len] = 0;
    }
    *out = realloc(*out, (n + 1) * sizeof **out);
    (*out)[n++] = run;
    p = end;
  }
  return n;
}

static cairo_status_t to_buf(void *c, const unsigned char *d, unsigned int n) {
  vf_buf *b = c;
  return vf_buf_append(b, d, n, NULL) == VF_OK ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* `text` drawn alone in DejaVu Sans at `size`, rotated by `angle`: its outlines joined by '|' */
static char *reference_run(const char *text, double size, double angle) {
  vf_buf b;
  vf_buf_init(&b, 0);
  cairo_surface_t *s = cairo_svg_surface_create_for_stream(to_buf, &b, 400, 400);
  cairo_t *cr = cairo_create(s);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_translate(cr, 200, 200);
  cairo_rotate(cr, angle);
  cairo_move_to(cr, 0, 0);
  cairo_show_text(cr, text);
  cairo_destroy(cr);
  cairo_surface_finish(s);
  cairo_surface_destroy(s);
  vf_buf_append(&b, "", 1, NULL);
  glyphs g;
  read_glyphs((const char *)b.data, &g);
  char **runs;
  size_t n = read_runs((const char *)b.data, &g, &runs);
  char *r = n == 1 ? runs[0] : NULL;
  for (size_t i = 1; i < n; i++) free(runs[i]);
  if (n != 1 && n) free(runs[0]);
  free(runs);
  glyphs_free(&g);
  vf_buf_free(&b);
  return r;
}

/* circles (paths made of cubic arcs only, no line segment) by colour */
typedef struct colour_count {
  char colour[64];
  int filled, hollow;
} colour_count;

static int count_circles(const char *svg, colour_count *cc, int max) {
  int n = 0;
  const char *body = strstr(svg, "</defs>");
  for (const char *p = body ? body : svg; (p = strstr(p, "<path ")) != NULL; p++) {
    const char *end = strstr(p, "/>");
    const char *d = strstr(p, " d=\"");
    if (!end || !d || d > end) continue;
    int curves = 0, lines = 0;
    for (const char *c = d + 4; *c && *c != '"'; c++) curves += *c == 'C', lines += *c == 'L';
    if (curves < 2 || lines != 0) continue;
    const char *f = strstr(p, "fill:rgb(");
    const char *s = strstr(p, "stroke:rgb(");
    bool filled = f && f < d;
    const char *c = filled ? f + 5 : s && s < d ? s + 7 : NULL;
    if (!c) continue;
    char col[64];
    snprintf(col, sizeof col, "%.*s", (int)(strchr(c, ')') - c + 1), c);
    int i = 0;
    while (i < n && strcmp(cc[i].colour, col) != 0) i++;
    if (i == n && n < max) {
      snprintf(cc[n].colour, sizeof cc[n].colour, "%s", col);
      cc[n].filled = cc[n].hollow = 0;
      n++;
    }
    if (i < n) filled ? cc[i].filled++ : cc[i].hollow++;
  }
  return n;
}

VF_TEST(svg_labels_and_one_marker_per_point) {
  bench_series s[2];
  make_series(s);
  vf_error err;
  const char *path = path_in("p.svg");
  CHECK_OK(bench_plot(s, 2, "two stores", path, &err));
  char *svg = slurp(path, NULL);
  CHECK(svg != NULL);
  if (!svg) return;
  CHECK(strncmp(svg, "<?xml", 5) == 0 && strstr(svg, "width=\"1280px\"") && strstr(svg, "</svg>"));
  glyphs g;
  read_glyphs(svg, &g);
  char **runs;
  size_t nruns = read_runs(svg, &g, &runs);
  /* the labels a reader needs, as drawn: horizontal x labels, vertical y labels (13 px) */
  static const struct {
    const char *text;
    double angle;
  } labels[] = {{"recall@10", 0},
                {"queries/s (log scale)", 0},
                {"queries/s (log scale)", -M_PI / 2},
                {"latency ms (log scale)", -M_PI / 2},
                {"local sq8", 0},
                {"qdrant hnsw", 0},
                {"nprobe=64", 0}};
  for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
    double size = strncmp(labels[i].text, "nprobe", 6) == 0 ? 9.0 : 13.0;
    char *ref = reference_run(labels[i].text, size, labels[i].angle);
    bool found = false;
    for (size_t r = 0; ref && r < nruns && !found; r++) found = strstr(runs[r], ref) != NULL;
    if (!found) vf_test_fail(__FILE__, __LINE__, "label '%s' (angle %g) not in the SVG", labels[i].text, labels[i].angle);
    free(ref);
  }
  /* and a label that is not there is not found (the check can fail) */
  char *absent = reference_run("recall@100", 13.0, 0);
  bool found = false;
  for (size_t r = 0; absent && r < nruns; r++) found = found || strstr(runs[r], absent) != NULL;
  CHECK(absent && !found);
  free(absent);
  for (size_t r = 0; r < nruns; r++) free(runs[r]);
  free(runs);
  glyphs_free(&g);
  /* markers: per series colour, its points (the dominated one hollow) + one legend swatch */
  colour_count cc[8];
  int nc = count_circles(svg, cc, 8);
  CHECK_EQ_INT(nc, 2);
  int a = -1, b = -1;
  for (int i = 0; i < nc; i++) {
    if (cc[i].filled + cc[i].hollow == 6) a = i;
    if (cc[i].filled + cc[i].hollow == 4) b = i;
  }
  if (a < 0 || b < 0) {
    for (int i = 0; i < nc; i++) fprintf(stderr, "  %s: %d filled, %d hollow\n", cc[i].colour, cc[i].filled, cc[i].hollow);
    vf_test_fail(__FILE__, __LINE__, "expected 5 + 1 and 3 + 1 circles of two colours");
  } else {
    CHECK_EQ_INT(cc[a].hollow, 1); /* nprobe=3 is dominated by nprobe=2 */
    CHECK_EQ_INT(cc[b].hollow, 0);
  }
  free(svg);
}

VF_TEST(plot_refuses) {
  bench_series s[2];
  make_series(s);
  vf_error err;
  CHECK_STATUS(bench_plot(s, 2, NULL, path_in("p.jpg"), &err), VF_EUSAGE);
  CHECK(strstr(err.msg, ".png or .svg") != NULL);
  CHECK_STATUS(bench_plot(s, 0, NULL, path_in("p.png"), &err), VF_EUSAGE);
  s[1].k = 100;
  CHECK_STATUS(bench_plot(s, 2, NULL, path_in("k.png"), &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "k = 100") != NULL);
  struct stat sb;
  CHECK(stat(path_in("k.png"), &sb) != 0); /* nothing written */
  CHECK_STATUS(bench_plot_check_path(path_in("no/such/dir/p.svg"), &err), VF_ENOTFOUND);
}

VF_TEST(series_read) {
  const char *p = path_in("local-sq8.jsonl");
  spit(p, "{\"params\":{\"nprobe\":4},\"k\":10,\"queries\":5,\"recall\":0.5,\"recall_min\":0.5,\"recall_max\":0.6,"
          "\"qps\":100,\"latency_ms\":{\"p50\":1,\"p95\":2,\"p99\":3,\"max\":4},\"errors\":0}\n"
          "\n"
          "{\"params\":{\"nprobe\":8,\"exact\":true},\"k\":10,\"recall\":0.75,\"qps\":50,"
          "\"latency_ms\":{\"p50\":2,\"p95\":3,\"p99\":4}}\n");
  bench_series s;
  vf_error err;
  CHECK_OK(bench_series_read(p, &s, &err));
  CHECK_EQ_STR(s.label, "local-sq8"); /* no label: the file name */
  CHECK_EQ_INT(s.n, 2);
  CHECK_EQ_INT(s.k, 10);
  if (s.n == 2) {
    CHECK(s.pts[0].recall == 0.5 && s.pts[0].recall_max == 0.6 && s.pts[0].qps == 100 && s.pts[0].p99_ms == 3);
    CHECK_EQ_STR(s.pts[0].params, "nprobe=4");
    CHECK_EQ_STR(s.pts[1].params, "nprobe=8 exact=true");
    CHECK(s.pts[1].recall_min == 0.75 && s.pts[1].recall_max == 0.75); /* absent: the recall */
  }
  bench_series_free(&s);
  spit(p, "{\"label\":\"qdrant m16\",\"k\":10,\"recall\":1,\"qps\":5,\"latency_ms\":{\"p50\":1,\"p95\":1,\"p99\":1}}\n");
  CHECK_OK(bench_series_read(p, &s, &err));
  CHECK_EQ_STR(s.label, "qdrant m16");
  bench_series_free(&s);
  /* errors name the file and the line */
  spit(p, "{\"k\":10,\"recall\":1,\"qps\":5,\"latency_ms\":{\"p50\":1,\"p95\":1,\"p99\":1}}\n{\"k\":10,\"recall\":1}\n");
  CHECK_STATUS(bench_series_read(p, &s, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "local-sq8.jsonl: line 2 is not a bench result") != NULL);
  spit(p, "{\"k\":10,\"recall\":1,\"qps\":5,\"latency_ms\":{\"p50\":1,\"p95\":1,\"p99\":1}}\n{\"k\":100,\"recall\":1,\"qps\":5,\"latency_ms\":{\"p50\":1,\"p95\":1,\"p99\":1}}\n");
  CHECK_STATUS(bench_series_read(p, &s, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "line 2 has k = 100") != NULL);
  spit(p, "{\"k\":10,\"recall\":1,\n");
  CHECK_STATUS(bench_series_read(p, &s, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "local-sq8.jsonl: line 1") != NULL);
  spit(p, "\n\n");
  CHECK_STATUS(bench_series_read(p, &s, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "no results") != NULL);
  CHECK_STATUS(bench_series_read(path_in("absent.jsonl"), &s, &err), VF_ENOTFOUND);
}
