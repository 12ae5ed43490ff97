/*
 * bench_results.c — the files a benchmark campaign keeps (issue 19): `--results FILE.jsonl`,
 * one self-describing JSON object per sweep point (the figures, the point's parameters, the
 * whole run configuration, the machine and the vforge version), `--per-query FILE.jsonl`, and
 * the reader that turns a results file back into a plot series.
 *
 * Why every line carries the config and the machine: results are compared across days, stores
 * and machines (`vforge plot a.jsonl b.jsonl`), and a figure without its CPU, BLAS core and
 * parameters cannot be compared with anything.  Lines stand alone, so files can be concatenated,
 * grepped and read by pandas / DuckDB (`read_json_auto`) without vforge.
 *
 * Nothing secret is written: the store URL loses its userinfo, the API key is never read here.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_internal.h"
#include "vforge/index.h"

#ifndef VFORGE_VERSION
#define VFORGE_VERSION "unknown"
#endif

#define BENCH_MAX_RESULTS_BYTES ((size_t)256 << 20)
#define BENCH_MAX_RESULTS_LINES ((size_t)1 << 16)

/* ------------------------------------------------------------------ machine */

static void copy_trim(char *dst, size_t cap, const char *src) {
  while (*src == ' ' || *src == '\t') src++;
  size_t n = strcspn(src, "\n");
  while (n && (src[n - 1] == ' ' || src[n - 1] == '\t' || src[n - 1] == '\r')) n--;
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

static void cpu_model(char *out, size_t cap) {
  snprintf(out, cap, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  /* x86: "model name"; arm64: "CPU part" is a number, "Model"/"Hardware" on some boards */
  static const char *const keys[] = {"model name", "Model", "Hardware", "cpu model"};
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    for (size_t k = 0; k < sizeof keys / sizeof keys[0] && !found; k++) {
      size_t kl = strlen(keys[k]);
      if (strncmp(line, keys[k], kl) != 0) continue;
      const char *c = strchr(line + kl, ':');
      if (!c || strspn(line + kl, " \t") != (size_t)(c - line - (long)kl)) continue;
      copy_trim(out, cap, c + 1);
      found = out[0] != 0;
    }
  }
  fclose(f);
  if (!out[0]) snprintf(out, cap, "unknown");
}

void bench_machine_get(bench_machine *m) {
  memset(m, 0, sizeof *m);
  if (gethostname(m->host, sizeof m->host - 1) != 0) snprintf(m->host, sizeof m->host, "unknown");
  struct utsname u;
  if (uname(&u) == 0) snprintf(m->os, sizeof m->os, "%s %s %s", u.sysname, u.release, u.machine);
  else snprintf(m->os, sizeof m->os, "unknown");
  cpu_model(m->cpu_model, sizeof m->cpu_model);
  long on = sysconf(_SC_NPROCESSORS_ONLN);
  m->cpus_online = on > 0 && on < 1 << 30 ? (int)on : 0;
  m->cpus_available = vf_cpu_available();
  m->threads = vf_threads();
  snprintf(m->simd, sizeof m->simd, "%s", idx_kernels_active()->name);
  /* the BLAS as loaded (util/blas.c); a bench that multiplied no matrix has not loaded it, and
   * is not made to (its threads would run beside the measurement) */
  vf_blas_info bi;
  const char *cfg = "not loaded", *core = "not loaded";
  if (vf_blas_loaded() && vf_blas_info_get(&bi, NULL) == VF_OK) {
    cfg = bi.config[0] ? bi.config : bi.library;
    core = bi.core;
  }
  copy_trim(m->blas, sizeof m->blas, cfg);
  copy_trim(m->blas_core, sizeof m->blas_core, core);
  snprintf(m->version, sizeof m->version, "%s", VFORGE_VERSION);
}

/* ------------------------------------------------------------------ writers */

/* `s` with the userinfo of a URL ("http://user:pw@host/") removed; other text unchanged */
static vf_status json_str_nouser(vf_buf *out, const char *s, vf_error *err) {
  if (!s) return vf_json_raw(out, "null", err);
  const char *sch = strstr(s, "://");
  if (sch) {
    const char *auth = sch + 3;
    size_t alen = strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *p = auth; p < auth + alen; p++)
      if (*p == '@') at = p;
    if (at) {
      size_t pre = (size_t)(auth - s);
      vf_buf tmp;
      VF_BUF_INIT(&tmp, VF_BUF_MAX_URL);
      vf_status st = VF_OK;
      VF_TRY(vf_buf_append(&tmp, s, pre, err));
      VF_TRY(vf_buf_append(&tmp, at + 1, strlen(at + 1), err));
      VF_TRY(vf_json_string(out, (const char *)tmp.data, tmp.len, err));
    out:
      vf_buf_free(&tmp);
      return st;
    }
  }
  return vf_json_string(out, s, strlen(s), err);
}

static vf_status json_key(vf_buf *out, const char *key, vf_error *err) {
  vf_status st = vf_json_string(out, key, strlen(key), err);
  if (st != VF_OK) return st;
  return vf_json_raw(out, ":", err);
}

static vf_status json_str(vf_buf *out, const char *s, vf_error *err) {
  return s ? vf_json_string(out, s, strlen(s), err) : vf_json_raw(out, "null", err);
}

static void default_label(const bench_options *o, char *out, size_t cap) {
  snprintf(out, cap, "%s:%s", o->store.type && *o->store.type ? o->store.type : "local",
           o->store.collection_name ? o->store.collection_name : "?");
}

vf_status bench_results_json(const bench_point *p, size_t i, size_t n,
                             const bench_run_info *info, const bench_machine *m, vf_buf *out,
                             vf_error *err) {
  const bench_options *o = &p->o;
  const store_qdrant_search_opts *qd = o->qdrant;
  char label[256], when[32];
  if (info && info->label) snprintf(label, sizeof label, "%s", info->label);
  else default_label(o, label, sizeof label);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  size_t start = out->len;
  vf_status st = VF_OK;
  VF_TRY(bench_point_json(p, out, err));
  out->len--; /* reopen the object: drop its '}' */
  VF_TRY(vf_json_raw(out, ",\"label\":", err));
  VF_TRY(json_str(out, label, err));
  VF_TRY(vf_buf_printf(out, err, ",\"point\":%zu,\"points\":%zu,\"time\":\"%s\",", i, n, when));
  VF_TRY(json_key(out, "vforge_version", err));
  VF_TRY(json_str(out, m->version, err));
  /* config */
  VF_TRY(vf_json_raw(out, ",\"config\":{\"store\":", err));
  VF_TRY(json_str(out, o->store.type && *o->store.type ? o->store.type : "local", err));
  VF_TRY(vf_json_raw(out, ",\"collection\":", err));
  VF_TRY(json_str(out, o->store.collection_name, err));
  VF_TRY(vf_json_raw(out, ",\"url\":", err));
  VF_TRY(json_str_nouser(out, o->store.url, err));
  VF_TRY(vf_json_raw(out, ",\"vector\":", err));
  VF_TRY(json_str(out, o->vector, err));
  VF_TRY(vf_buf_printf(out, err, ",\"k\":%zu,\"queries\":", o->k));
  VF_TRY(json_str_nouser(out, info ? info->queries_path : NULL, err));
  VF_TRY(vf_json_raw(out, ",\"ground_truth\":", err));
  VF_TRY(json_str_nouser(out, info ? info->truth_path : NULL, err));
  VF_TRY(vf_buf_printf(out, err, ",\"nqueries\":%zu,\"warmup\":%zu,\"concurrency\":%d,\"rps\":",
                       p->rep.queries, o->warmup, o->concurrency));
  VF_TRY(o->rps > 0 ? vf_json_f64(out, o->rps, err) : vf_json_raw(out, "null", err));
  VF_TRY(vf_json_raw(out, ",\"max_outstanding\":", err));
  VF_TRY(p->rep.max_outstanding ? vf_json_u64(out, p->rep.max_outstanding, err) : vf_json_raw(out, "null", err));
  VF_TRY(vf_json_raw(out, ",\"nprobe\":", err));
  VF_TRY(o->nprobe ? vf_json_i64(out, o->nprobe, err) : vf_json_raw(out, "null", err));
  VF_TRY(vf_json_raw(out, ",\"hnsw_ef\":", err));
  VF_TRY(qd && qd->hnsw_ef > 0 ? vf_json_i64(out, qd->hnsw_ef, err) : vf_json_raw(out, "null", err));
  VF_TRY(vf_json_raw(out, ",\"oversampling\":", err));
  VF_TRY(qd && qd->oversampling > 0 ? vf_json_f64(out, qd->oversampling, err) : vf_json_raw(out, "null", err));
  VF_TRY(vf_json_raw(out, ",\"rescore\":", err));
  VF_TRY(vf_json_raw(out, qd && qd->rescore >= 0 ? (qd->rescore ? "true" : "false") : "null", err));
  VF_TRY(vf_json_raw(out, ",\"exact\":", err));
  VF_TRY(vf_json_raw(out, qd ? (qd->exact ? "true" : "false") : "null", err));
  /* machine */
  VF_TRY(vf_json_raw(out, "},\"machine\":{\"host\":", err));
  VF_TRY(json_str(out, m->host, err));
  VF_TRY(vf_json_raw(out, ",\"os\":", err));
  VF_TRY(json_str(out, m->os, err));
  VF_TRY(vf_json_raw(out, ",\"cpu_model\":", err));
  VF_TRY(json_str(out, m->cpu_model, err));
  VF_TRY(vf_buf_printf(out, err, ",\"cpus_online\":%d,\"cpus_available\":%d,\"threads\":%d,\"simd\":",
                       m->cpus_online, m->cpus_available, m->threads));
  VF_TRY(json_str(out, m->simd, err));
  VF_TRY(vf_json_raw(out, ",\"blas\":", err));
  VF_TRY(json_str(out, m->blas, err));
  VF_TRY(vf_json_raw(out, ",\"blas_core\":", err));
  VF_TRY(json_str(out, m->blas_core, err));
  VF_TRY(vf_json_raw(out, "}}\n", err));
out:
  if (st != VF_OK) out->len = start;
  return st;
}

vf_status bench_per_query_json(const bench_point *p, size_t i, const bench_queries *q,
                               vf_buf *out, vf_error *err) {
  const bench_report *r = &p->rep;
  if (!r->query_ms || r->queries != q->n)
    return vf_error_set(err, VF_EUSAGE, "bench: the point has no per-query results (set per_query)");
  /* the params object once, reused on every line */
  vf_buf params;
  VF_BUF_INIT(&params, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  size_t plen = 0;
  VF_TRY(bench_point_json(p, &params, err)); /* {"params":{...},"k":...} */
  /* keep "{"params":{...}" */
  const char *s = (const char *)params.data;
  const char *e = strstr(s, "},\"k\":");
  plen = e ? (size_t)(e - s) + 1 : 0;
  if (!plen) VF_FAIL(vf_error_set(err, VF_EINTERNAL, "bench: unexpected point JSON"));
  for (size_t j = 0; j < q->n; j++) {
    VF_TRY(vf_buf_printf(out, err, "{\"point\":%zu,", i));
    VF_TRY(vf_buf_append(out, params.data + 1, plen - 1, err));
    VF_TRY(vf_json_raw(out, ",\"query_id\":", err));
    VF_TRY(json_str(out, q->ids[j], err));
    if (r->query_ms[j] < 0) {
      VF_TRY(vf_json_raw(out, ",\"latency_ms\":null,\"recall\":null,\"recall_max\":null}\n", err));
      continue;
    }
    VF_TRY(vf_json_raw(out, ",\"latency_ms\":", err));
    VF_TRY(vf_json_f64(out, r->query_ms[j], err));
    VF_TRY(vf_json_raw(out, ",\"recall\":", err));
    VF_TRY(vf_json_f64(out, r->query_recall[j], err));
    VF_TRY(vf_json_raw(out, ",\"recall_max\":", err));
    VF_TRY(vf_json_f64(out, r->query_recall_max[j], err));
    VF_TRY(vf_json_raw(out, "}\n", err));
  }
out:
  vf_buf_free(&params);
  return st;
}

/* ------------------------------------------------------------------ series */

void bench_series_free(bench_series *s) {
  if (!s) return;
  free(s->label);
  free(s->pts);
  memset(s, 0, sizeof *s);
}

vf_status bench_series_from_points(const bench_point *p, size_t n, const char *label,
                                   bench_series *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  char dl[256];
  if (!label && n) default_label(&p[0].o, dl, sizeof dl);
  out->label = vf_strdup(label ? label : n ? dl : "bench");
  out->pts = vf_calloc(n ? n : 1, sizeof *out->pts);
  if (!out->label || !out->pts) {
    bench_series_free(out);
    return vf_error_set(err, VF_ENOMEM, "plot: out of memory");
  }
  out->n = n;
  out->k = n ? p[0].rep.k : 0;
  for (size_t i = 0; i < n; i++) {
    const bench_report *r = &p[i].rep;
    out->pts[i] = (bench_plot_point){r->recall, r->recall_min, r->recall_max, r->qps,
                                     r->p50_ms,  r->p95_ms,     r->p99_ms,     ""};
    bench_point_params(&p[i], out->pts[i].params, sizeof out->pts[i].params);
  }
  return VF_OK;
}

static vf_status read_text(const char *path, char **out, size_t *len, vf_error *err) {
  *out = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "%s: cannot open the results "
                        "file: %s", path, VF_STRERROR(errno));
  vf_buf b;
  vf_buf_init(&b, BENCH_MAX_RESULTS_BYTES);
  vf_status st = VF_OK;
  char chunk[65536];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    st = vf_buf_append(&b, chunk, got, err);
    if (st == VF_ENOMEM && b.len + sizeof chunk > BENCH_MAX_RESULTS_BYTES)
      st = vf_error_set(err, VF_ECORRUPT, "%s: larger than %zu MiB; not a results file", path,
                        BENCH_MAX_RESULTS_BYTES >> 20);
    if (st != VF_OK) goto out;
  }
  if (ferror(f)) VF_FAIL(vf_error_set(err, VF_EIO, "%s: read error", path));
  fclose(f);
  f = NULL;
  VF_TRY(vf_buf_append(&b, "", 1, err)); /* NUL */
  *len = b.len - 1;
  *out = (char *)vf_buf_take(&b, &got);
out:
  if (f) fclose(f);
  if (st != VF_OK) vf_buf_free(&b);
  return st;
}

static bool num_of(const vf_json_val *v, double *out) {
  if (!v || v->t != VF_JSON_NUM || !isfinite(v->num)) return false;
  *out = v->num;
  return true;
}

/* "a=1 b=true" from a point's params object */
static void params_text(const vf_json_val *pv, char *out, size_t cap) {
  size_t len = 0;
  out[0] = 0;
  for (size_t i = 0; pv && pv->t == VF_JSON_OBJ && i < pv->n; i++) {
    const vf_json_val *v = &pv->items[i];
    const char *raw = v->t == VF_JSON_STR ? v->str : v->raw;
    int rl = v->t == VF_JSON_STR ? (int)strlen(v->str) : (int)v->raw_len;
    int w = snprintf(out + len, cap - len, "%s%s=%.*s", len ? " " : "", pv->keys[i], rl, raw);
    if (w < 0 || (size_t)w >= cap - len) {
      out[cap - 1] = 0;
      return;
    }
    len += (size_t)w;
  }
}

vf_status bench_series_read(const char *path, bench_series *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  char *text = NULL;
  size_t len = 0;
  vf_status st = read_text(path, &text, &len, err);
  if (st != VF_OK) return st;
  size_t cap = 0, line = 0;
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  for (char *p = text, *end = text + len; p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
    char *next = nl ? nl + 1 : end;
    line++;
    size_t blank = 0;
    while (blank < ll && (p[blank] == ' ' || p[blank] == '\t' || p[blank] == '\r')) blank++;
    if (blank == ll) {
      p = next;
      continue;
    }
    if (out->n >= BENCH_MAX_RESULTS_LINES)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: more than %zu points", path, BENCH_MAX_RESULTS_LINES));
    char what[64];
    snprintf(what, sizeof what, "line %zu", line);
    st = vf_json_parse(p, ll, what, &doc, err);
    if (st != VF_OK) {
      vf_error_prefix(err, "%s: ", path);
      goto out;
    }
    bench_plot_point pt;
    memset(&pt, 0, sizeof pt);
    double k = 0;
    bool ok = doc.t == VF_JSON_OBJ && num_of(vf_json_get(&doc, "recall"), &pt.recall) &&
              num_of(vf_json_get(&doc, "qps"), &pt.qps) &&
              num_of(vf_json_path(&doc, "latency_ms.p50"), &pt.p50_ms) &&
              num_of(vf_json_path(&doc, "latency_ms.p95"), &pt.p95_ms) &&
              num_of(vf_json_path(&doc, "latency_ms.p99"), &pt.p99_ms) &&
              num_of(vf_json_get(&doc, "k"), &k) && k >= 1 && k == floor(k) && k <= (double)BENCH_MAX_K;
    if (!ok)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: line %zu is not a bench result (a JSON object with "
                           "numbers recall, qps, latency_ms.p50/p95/p99 and k, as bench --results "
                           "writes)", path, line));
    if (out->n && (size_t)k != out->k)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: line %zu has k = %zu, earlier lines k = %zu (one "
                           "series is one k)", path, line, (size_t)k, out->k));
    if (!num_of(vf_json_get(&doc, "recall_min"), &pt.recall_min)) pt.recall_min = pt.recall;
    if (!num_of(vf_json_get(&doc, "recall_max"), &pt.recall_max)) pt.recall_max = pt.recall;
    params_text(vf_json_get(&doc, "params"), pt.params, sizeof pt.params);
    const vf_json_val *lab = vf_json_get(&doc, "label");
    if (!out->label && lab && lab->t == VF_JSON_STR && lab->str[0] && !(out->label = vf_strdup(lab->str)))
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "plot: out of memory"));
    if (out->n == cap) {
      size_t nc = cap ? 2 * cap : 16;
      bench_plot_point *np = vf_realloc(out->pts, nc * sizeof *np);
      if (!np) VF_FAIL(vf_error_set(err, VF_ENOMEM, "plot: out of memory"));
      out->pts = np;
      cap = nc;
    }
    out->pts[out->n++] = pt;
    out->k = (size_t)k;
    vf_json_free(&doc);
    p = next;
  }
  if (out->n == 0) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: no results in the file", path));
  if (!out->label) { /* the file name without directory and extension */
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    out->label = vf_strndup(b, dot && dot != b ? (size_t)(dot - b) : strlen(b));
    if (!out->label) VF_FAIL(vf_error_set(err, VF_ENOMEM, "plot: out of memory"));
  }
out:
  vf_json_free(&doc);
  free(text);
  if (st != VF_OK) bench_series_free(out);
  return st;
}
