/*
 * vforge entry point: global options, the subcommand table, stderr rendering of library log and
 * progress events, and interruption.
 *
 * Progress (issue 14): on a terminal one status line, redrawn at most 10 times a second and cut
 * to the terminal's width (TIOCGWINSZ, else $COLUMNS, else 80) so it never wraps and leaves
 * stale lines; otherwise (a pipe, a log file) one line every VFORGE_PROGRESS_INTERVAL seconds
 * (default 10) of wall-clock time while events arrive.  cli_progress_end() clears the status
 * line before a summary, a log line or an error is printed, so those start on their own line.
 * The library only emits events (vf_progress: phase, stage, counts, detail); this file renders.
 *
 * Interruption: SIGINT and SIGTERM only call vf_cancel_request(); the long library calls poll
 * the flag, remove their temporaries and return VF_ECANCELED, and the command prints one line
 * saying what was interrupted and how to resume (cli_on_interrupt) and exits 128 + the signal
 * (130, 143).  A second signal, or VFORGE_CANCEL_GRACE seconds (default 30) without the call
 * returning, ends the process at once with the same code (what it leaves is swept by the next
 * run: util.h "Temporary names").  A signal ignored at start-up (a shell's background job) stays
 * ignored, as the shell intended.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "vforge/format.h"
#include "vforge/index.h"

#ifndef VFORGE_VERSION
#define VFORGE_VERSION "0.1.0"
#endif

static int g_quiet;
static int g_tty;
static pthread_mutex_t g_render_mu = PTHREAD_MUTEX_INITIALIZER;
static double g_last_line;   /* wall clock of the last piped progress line */
static double g_last_draw;   /* wall clock of the last terminal redraw */
static double g_interval = 10.0;
static int g_bar_shown;

/* caller holds g_render_mu */
static void bar_clear_locked(void) {
  if (g_bar_shown) {
    fputs("\r\033[K", stderr);
    g_bar_shown = 0;
  }
}

void cli_progress_end(void) {
  pthread_mutex_lock(&g_render_mu);
  bar_clear_locked();
  fflush(stderr);
  pthread_mutex_unlock(&g_render_mu);
}

static void render_log(void *user, vf_log_level level, const char *msg) {
  (void)user;
  static const char *names[] = {"debug", "info", "warning", "error"};
  if (g_quiet && level < VF_LOG_WARN) return;
  if (level == VF_LOG_DEBUG && !getenv("VFORGE_DEBUG")) return;
  pthread_mutex_lock(&g_render_mu);
  bar_clear_locked();
  fprintf(stderr, "vforge: %s: %s\n", names[level], msg);
  pthread_mutex_unlock(&g_render_mu);
}

/* the width of the terminal on stderr */
static int term_width(void) {
  struct winsize ws;
  if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  const char *c = getenv("COLUMNS");
  long v = c ? strtol(c, NULL, 10) : 0;
  return v > 0 && v < 10000 ? (int)v : 80;
}

static void fmt_secs(double s, char *out, size_t n) {
  if (!(s >= 0)) s = 0;
  if (s < 100) snprintf(out, n, "%.0fs", s);
  else if (s < 6000) snprintf(out, n, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
  else snprintf(out, n, "%.0fh%02.0fm", floor(s / 3600), fmod(floor(s / 60), 60));
}

static void appendf(char *b, size_t cap, size_t *len, const char *fmt, ...) VF_PRINTF(4, 5);
static void appendf(char *b, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len >= cap - 1) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (n > 0) *len = *len + (size_t)n < cap - 1 ? *len + (size_t)n : cap - 1;
}

/* "<phase>[ <stage>]: <done>[/<total>] <unit> (<pct>%, ETA <t>), <rate> <unit>/s, files a/b,
 * <elapsed>[, <detail>]" */
static void progress_text(const vf_progress *p, char *b, size_t cap) {
  size_t len = 0;
  b[0] = 0;
  const char *unit = p->unit ? p->unit : "rows";
  appendf(b, cap, &len, "%s%s%s: %" PRIu64, p->phase ? p->phase : "", p->stage ? " " : "",
          p->stage ? p->stage : "", p->rows_done);
  if (p->rows_total && p->unit) appendf(b, cap, &len, "/%" PRIu64, p->rows_total);
  appendf(b, cap, &len, " %s", unit);
  double frac = p->fraction > 0 ? p->fraction
                : p->rows_total ? (double)p->rows_done / (double)p->rows_total : 0;
  if (frac > 1) frac = 1;
  char t[32];
  if (frac > 0 && p->elapsed_s > 0) {
    fmt_secs(p->elapsed_s * (1 - frac) / frac, t, sizeof t);
    appendf(b, cap, &len, " (%.0f%%, ETA %s)", floor(100.0 * frac), t);
  } else if (frac > 0) {
    appendf(b, cap, &len, " (%.0f%%)", floor(100.0 * frac));
  }
  if (!p->unit && p->elapsed_s > 0)
    appendf(b, cap, &len, ", %.0f rows/s", (double)p->rows_done / p->elapsed_s);
  if (p->files_total)
    appendf(b, cap, &len, ", files %" PRIu64 "/%" PRIu64, p->files_done, p->files_total);
  fmt_secs(p->elapsed_s, t, sizeof t);
  appendf(b, cap, &len, ", %s", t);
  if (p->detail && *p->detail) appendf(b, cap, &len, ", %s", p->detail);
}

static void render_progress(void *user, const vf_progress *p) {
  (void)user;
  if (g_quiet) return;
  double now = vf_now();
  char text[512];
  pthread_mutex_lock(&g_render_mu);
  if (g_tty) {
    if (now - g_last_draw >= 0.1 || !g_bar_shown) {
      g_last_draw = now;
      progress_text(p, text, sizeof text);
      /* one column short of the width: writing the last column would wrap on some terminals */
      int w = term_width() - 1;
      if (w < 1) w = 1;
      size_t n = strlen(text);
      if (n > (size_t)w) {
        n = (size_t)w;
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80) n--; /* not inside a UTF-8 char */
      }
      fprintf(stderr, "\r%.*s\033[K", (int)n, text);
      fflush(stderr);
      g_bar_shown = 1;
    }
  } else if (now - g_last_line >= g_interval) {
    g_last_line = now;
    progress_text(p, text, sizeof text);
    fprintf(stderr, "vforge: %s\n", text);
  }
  pthread_mutex_unlock(&g_render_mu);
}

static void end_progress(void) {
  cli_progress_end();
}

/* ------------------------------------------------------------ interruption */

static char g_interrupt_what[512];
static int g_cancel_grace = 30;

void cli_on_interrupt(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_interrupt_what, sizeof g_interrupt_what, fmt, ap);
  va_end(ap);
}

static const char *signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

static volatile sig_atomic_t g_signals;

static void on_grace(int sig) {
  (void)sig;
  static const char msg[] = "vforge: interrupted: the run did not stop in time; exiting "
                            "(its temporaries are removed by the next run)\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  _exit(128 + vf_cancel_signal());
}

/* Only sets the flag (async-signal-safe); a second signal ends the process at once. */
static void on_signal(int sig) {
  if (g_signals++ > 0) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  vf_cancel_request(sig);
  if (g_cancel_grace > 0) alarm((unsigned)g_cancel_grace);
}

static void install_signals(void) {
  const char *g = getenv("VFORGE_CANCEL_GRACE");
  if (g && *g) { /* whole seconds, <= 0: none; a value that is not an integer is ignored */
    char *end = NULL;
    errno = 0;
    long v = strtol(g, &end, 10);
    if (end != g && *end == 0 && errno == 0 && v >= INT_MIN && v <= INT_MAX) g_cancel_grace = (int)v;
  }
  const char *iv = getenv("VFORGE_PROGRESS_INTERVAL");
  if (iv && *iv) {
    char *end = NULL;
    double v = strtod(iv, &end);
    if (end != iv && v > 0 && v < 1e9) g_interval = v;
  }
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  /* a signal ignored when vforge starts stays ignored (a shell's background job, nohup) */
  static const int sigs[] = {SIGINT, SIGTERM};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaction(sigs[i], &sa, NULL);
  sa.sa_handler = on_grace;
  sigaction(SIGALRM, &sa, NULL);
}

/* cli_summary(): see cli.h. */
void cli_summary(const char *fmt, ...) {
  if (g_quiet) return;
  end_progress();
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

bool cli_quiet(void) { return g_quiet != 0; }

int cli_fail(vf_status st, const vf_error *err) {
  end_progress();
  if (st == VF_ECANCELED) {
    int sig = vf_cancel_signal();
    fprintf(stderr, "vforge: interrupted (%s): %s\n", signal_name(sig),
            g_interrupt_what[0] ? g_interrupt_what : "stopped");
    return sig > 0 ? 128 + sig : 130;
  }
  fprintf(stderr, "vforge: error: %s\n", err && err->msg[0] ? err->msg : vf_status_name(st));
  return vf_status_exit_code(st);
}

vf_status cli_write_stdout(void *user, const void *data, size_t len, vf_error *err) {
  (void)user;
  if (fwrite(data, 1, len, stdout) != len)
    return vf_error_set(err, VF_EIO, "writing to stdout: %s", VF_STRERROR(errno));
  return VF_OK;
}

uint64_t cli_peak_rss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss < 0) return 0;
#if defined(__APPLE__)
  return (uint64_t)ru.ru_maxrss; /* bytes on macOS */
#else
  return (uint64_t)ru.ru_maxrss * 1024u; /* KiB on Linux and the BSDs */
#endif
}

vf_status cli_write_json(const void *data, size_t len, vf_error *err) {
  const char *s = data;
  size_t end = len; /* the object's closing brace: the last '}' */
  while (end > 0 && s[end - 1] != '}') end--;
  if (end == 0 || memmem(s, len, "\"peak_rss_bytes\"", 16)) /* index build reports its own */
    return cli_write_stdout(NULL, data, len, err);
  size_t prev = end - 1; /* the object's last character before '}', blanks skipped */
  while (prev > 0 && (s[prev - 1] == ' ' || s[prev - 1] == '\n')) prev--;
  bool empty = prev > 0 && s[prev - 1] == '{';
  bool spaced = memmem(s, len, "\": ", 3) != NULL; /* keep the object's own spacing */
  char key[80];
  snprintf(key, sizeof key, "%s\"peak_rss_bytes\":%s%" PRIu64, empty ? "" : spaced ? ", " : ",",
           spaced ? " " : "", cli_peak_rss_bytes());
  vf_status st = VF_OK;
  VF_TRY(cli_write_stdout(NULL, s, end - 1, err));
  VF_TRY(cli_write_stdout(NULL, key, strlen(key), err));
  VF_TRY(cli_write_stdout(NULL, s + end - 1, len - (end - 1), err));
out:
  return st;
}

/* ------------------------------------------------------------ option parsing */

static const cli_opt GLOBAL_OPTS[] = {
    {"threads", "N", "worker threads (default: the CPUs this process may use)"},
    {"memory-budget", "SIZE", "memory budget, e.g. 2G (default: unlimited)"},
    {"quiet", NULL, "only warnings and errors on stderr"},
    {"no-verify-crc", NULL, "do not check parquet page CRCs (for writers that store wrong ones)"},
    {"help", NULL, "show this help"},
    {NULL, NULL, NULL}};

int cli_opt_index(const cli_cmd *cmd, const char *name) {
  for (int i = 0; cmd->opts && cmd->opts[i].name; i++)
    if (strcmp(cmd->opts[i].name, name) == 0) return i;
  return -1;
}

const char *cli_get(const cli_cmd *cmd, const cli_args *a, const char *name) {
  int i = cli_opt_index(cmd, name);
  return i < 0 ? NULL : a->val[i];
}

int cli_get_all(const cli_cmd *cmd, const cli_args *a, const char *name, const char **out, int max) {
  int i = cli_opt_index(cmd, name), n = 0;
  for (int j = 0; i >= 0 && j < a->nocc; j++)
    if (a->occ[j].opt == i) {
      if (n < max) out[n] = a->occ[j].val;
      n++;
    }
  return n;
}

vf_status cli_get_u64(const cli_cmd *cmd, const cli_args *a, const char *name, uint64_t dflt,
                      uint64_t *out, vf_error *err) {
  const char *v = cli_get(cmd, a, name);
  *out = dflt;
  if (!v) return VF_OK;
  char *end = NULL;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (!*v || *end || errno || v[0] == '-')
    return vf_error_set(err, VF_EUSAGE, "--%s expects a non-negative integer, got '%s'", name, v);
  *out = x;
  return VF_OK;
}

/* cli_job_opts(): see cli.h. */
vf_status cli_job_opts(const cli_cmd *cmd, const cli_args *a, int max_jobs, int *num_jobs,
                       int *rank, vf_error *err) {
  *num_jobs = 0;
  *rank = 0;
  uint64_t n = 0, r = 0;
  bool have_n = cli_get(cmd, a, "num-jobs") != NULL, have_r = cli_get(cmd, a, "job-rank") != NULL;
  vf_status st = cli_get_u64(cmd, a, "num-jobs", 0, &n, err);
  if (st != VF_OK) return st;
  st = cli_get_u64(cmd, a, "job-rank", 0, &r, err);
  if (st != VF_OK) return st;
  if (!have_n) {
    if (have_r)
      return vf_error_set(err, VF_EUSAGE, "%s: --job-rank needs --num-jobs N", cmd->name);
    return VF_OK;
  }
  if (n < 1 || n > (uint64_t)max_jobs)
    return vf_error_set(err, VF_EUSAGE, "%s: --num-jobs must be in 1..%d, got %" PRIu64, cmd->name,
                        max_jobs, n);
  if (have_r && r >= n)
    return vf_error_set(err, VF_EUSAGE,
                        "%s: --job-rank %" PRIu64 " must be below --num-jobs %" PRIu64, cmd->name, r,
                        n);
  const char *src = NULL;
  st = vf_job_rank((int)n, have_r ? (int)r : -1, rank, &src, err);
  if (st != VF_OK) return vf_error_prefix(err, "%s: ", cmd->name);
  *num_jobs = (int)n;
  if (!have_r)
    vf_log(VF_LOG_INFO, "%s: job rank %d of %d (from %s)", cmd->name, *rank, *num_jobs, src);
  return VF_OK;
}

static void print_opts(const cli_opt *o, FILE *to) {
  for (int i = 0; o && o[i].name; i++) {
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", o[i].name, o[i].metavar ? " " : "",
             o[i].metavar ? o[i].metavar : "");
    fprintf(to, "  %-24s %s\n", left, o[i].help);
  }
}

void cli_print_help(const cli_cmd *cmd, FILE *to) {
  fprintf(to, "usage: vforge %s %s\n\n%s\n\noptions:\n", cmd->name, cmd->synopsis, cmd->summary);
  print_opts(cmd->opts, to);
  fprintf(to, "\nglobal options:\n");
  print_opts(GLOBAL_OPTS, to);
}

static vf_status apply_global(const char *name, const char *val, vf_error *err) {
  if (strcmp(name, "threads") == 0) {
    char *end = NULL;
    long n = strtol(val, &end, 10);
    if (!*val || *end || n < 1 || n > 4096)
      return vf_error_set(err, VF_EUSAGE, "--threads expects an integer in 1..4096, got '%s'", val);
    vf_set_threads((int)n);
  } else if (strcmp(name, "memory-budget") == 0) {
    uint64_t b;
    if (!vf_parse_size(val, &b))
      return vf_error_set(err, VF_EUSAGE, "--memory-budget expects a size like 512M or 2G, got '%s'", val);
    if (b == 0)
      return vf_error_set(err, VF_EUSAGE, "--memory-budget must be more than 0 bytes (leave it out "
                          "for no limit), got '%s'", val);
    vf_set_memory_budget(b);
  } else if (strcmp(name, "quiet") == 0) {
    g_quiet = 1;
  } else if (strcmp(name, "no-verify-crc") == 0) {
    pqt_set_verify_crc_default(false);
  }
  return VF_OK;
}

/* "name=value" -> name (copied into buf, truncated at 63 bytes) and *val = "value"; plain
 * "name" -> name itself and *val = NULL. */
static const char *split_opt(const char *arg, char buf[64], const char **val) {
  const char *eq = strchr(arg, '=');
  *val = NULL;
  if (!eq) return arg;
  size_t l = (size_t)(eq - arg);
  if (l >= 64) l = 63;
  memcpy(buf, arg, l);
  buf[l] = 0;
  *val = eq + 1;
  return buf;
}

vf_status cli_parse(const cli_cmd *cmd, int argc, char **argv, cli_args *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  bool only_pos = false;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (only_pos || a[0] != '-' || a[1] == 0) {
      if (out->npos >= CLI_MAX_POS || out->npos >= cmd->max_pos)
        return vf_error_set(err, VF_EUSAGE, "vforge %s: unexpected argument '%s' (see vforge %s --help)",
                            cmd->name, a, cmd->name);
      out->pos[out->npos++] = a;
      continue;
    }
    if (strcmp(a, "--") == 0) {
      only_pos = true;
      continue;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      cli_print_help(cmd, stdout);
      exit(0);
    }
    char namebuf[64];
    const char *inline_val;
    const char *name = split_opt(a + (a[1] == '-' ? 2 : 1), namebuf, &inline_val);
    /* short aliases */
    if (strcmp(name, "n") == 0 && cli_opt_index(cmd, "n") < 0 && cli_opt_index(cmd, "limit") >= 0)
      name = "limit";
    int idx = cli_opt_index(cmd, name);
    const cli_opt *o = idx >= 0 ? &cmd->opts[idx] : NULL;
    int gidx = -1;
    if (!o) {
      for (int g = 0; GLOBAL_OPTS[g].name; g++)
        if (strcmp(GLOBAL_OPTS[g].name, name) == 0) gidx = g;
      if (gidx < 0)
        return vf_error_set(err, VF_EUSAGE, "vforge %s: unknown option '%s' (see vforge %s --help)",
                            cmd->name, a, cmd->name);
      o = &GLOBAL_OPTS[gidx];
    }
    const char *val = "";
    if (o->metavar) {
      if (inline_val) val = inline_val;
      else if (i + 1 < argc) val = argv[++i];
      else
        return vf_error_set(err, VF_EUSAGE, "vforge %s: option --%s needs a value (%s)", cmd->name,
                            o->name, o->metavar);
    } else if (inline_val) {
      return vf_error_set(err, VF_EUSAGE, "vforge %s: option --%s takes no value", cmd->name, o->name);
    }
    if (gidx >= 0) {
      vf_status st = apply_global(o->name, val, err);
      if (st != VF_OK) return st;
    } else {
      if (out->nocc >= CLI_MAX_OCC)
        return vf_error_set(err, VF_EUSAGE, "vforge %s: more than %d options", cmd->name, CLI_MAX_OCC);
      out->occ[out->nocc].opt = idx;
      out->occ[out->nocc++].val = val;
      out->val[idx] = val;
    }
  }
  if (out->npos < cmd->min_pos)
    return vf_error_set(err, VF_EUSAGE, "vforge %s: missing argument (usage: vforge %s %s)", cmd->name,
                        cmd->name, cmd->synopsis);
  return VF_OK;
}

bool cli_list_split(const char *s, cli_list *out) {
  memset(out, 0, sizeof *out);
  out->buf = vf_strdup(s);
  if (!out->buf) return false;
  size_t cnt = 1;
  for (const char *p = s; *p; p++) cnt += *p == ',';
  out->items = vf_calloc(cnt + 1, sizeof *out->items);
  if (!out->items) {
    cli_list_free(out);
    return false;
  }
  char *save = NULL;
  for (char *tok = strtok_r(out->buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') tok++;
    size_t l = strlen(tok);
    while (l && tok[l - 1] == ' ') tok[--l] = 0;
    if (*tok) out->items[out->n++] = tok;
  }
  return true;
}

void cli_list_free(cli_list *l) {
  free(l->buf);
  free(l->items);
  memset(l, 0, sizeof *l);
}

/* ------------------------------------------------------------------- commands */

static const cli_opt VERSION_OPTS[] = {
    {"json", NULL,
     "print one JSON object {\"version\", \"blas\": {library, core, gflops, ...}, \"simd\", "
     "\"cpu\"} on stdout (loads the BLAS and measures sgemm for ~0.2 s at --threads)"},
    {NULL, NULL, NULL}};
static const cli_cmd CLI_VERSION = {"version", "[--json]", "Print the version.", VERSION_OPTS, 0,
                                    0};

static void json_str_key(vf_buf *b, const char *key, const char *v, vf_error *err) {
  vf_buf_printf(b, err, ",\"%s\":", key);
  vf_json_string(b, v, strlen(v), err);
}

/* {"version", "blas": {...}, "simd", "cpu"}: what this process computes with */
static vf_status version_json(vf_error *err) {
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_buf_printf(&b, err, "{\"version\":\"%s\",\"blas\":{", VFORGE_VERSION);
  vf_blas_info bi;
  vf_error berr;
  vf_error_clear(&berr);
  double gflops = 0;
  vf_status bst = vf_blas_info_get(&bi, &berr);
  if (bst == VF_OK) bst = vf_blas_measure(vf_threads(), 0, 0, 0, 0.15, &gflops, &berr);
  if (bst == VF_OK) {
    vf_blas_info_get(&bi, &berr); /* the thread count again, after the measurement */
    vf_json_raw(&b, "\"library\":", err);
    vf_json_string(&b, bi.library, strlen(bi.library), err);
    json_str_key(&b, "core", bi.core, err);
    vf_buf_printf(&b, err, ",\"gflops\":%.1f,\"threads\":%d", gflops, bi.threads);
    json_str_key(&b, "source", bi.source, err);
    json_str_key(&b, "config", bi.config, err);
    json_str_key(&b, "note", bi.note, err);
  } else {
    fprintf(stderr, "vforge: warning: %s\n", berr.msg);
    vf_json_raw(&b, "\"library\":null,\"core\":null,\"gflops\":null", err);
    json_str_key(&b, "error", berr.msg, err);
  }
  vf_json_raw(&b, "}", err);
  json_str_key(&b, "simd", idx_kernels_active()->name, err);
  json_str_key(&b, "cpu", vf_cpu_model(), err);
  vf_json_raw(&b, "}\n", err);
  vf_status st = err->code; /* the first failure while building it */
  if (st != VF_OK) goto out;
  VF_TRY(cli_write_json(b.data, b.len, err));
out:
  vf_buf_free(&b);
  return st;
}

static int cmd_version(int argc, char **argv) {
  cli_args a;
  vf_error err;
  vf_error_clear(&err);
  vf_status st = cli_parse(&CLI_VERSION, argc, argv, &a, &err);
  if (st != VF_OK) return cli_fail(st, &err);
  if (cli_get(&CLI_VERSION, &a, "json")) {
    st = version_json(&err);
    if (st != VF_OK) return cli_fail(st, &err);
    return 0;
  }
  printf("vforge %s\n", VFORGE_VERSION);
  return 0;
}

static const struct {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} COMMANDS[] = {
    {"inspect", cmd_inspect, "files, rows, schema, row groups, codecs, page index"},
    {"cat", cmd_cat, "rows as JSON lines"},
    {"scan", cmd_scan, "decode everything; rows, bytes, MB/s and a checksum"},
    {"convert", cmd_convert, "vector files (.npy, .fbin, .hdf5, IDX) -> parquet corpus"},
    {"load", cmd_load, "load a corpus into a vector store (run|prepare|load|finalize|inspect)"},
    {"generate-queries", cmd_generate_queries, "sample query rows into <prefix>/eval/queries_<N>.parquet"},
    {"brute-force", cmd_brute_force, "exact top-K ground truth for a queries file"},
    {"brute-force-merge", cmd_brute_force_merge, "merge the partials of brute-force --num-jobs runs"},
    {"bench", cmd_bench, "recall@k, latency and QPS of a store against exact ground truth"},
    {"plot", cmd_plot, "draw bench --results files: recall@k vs QPS (Pareto front), latency percentiles"},
    {"load-dist", cmd_load_dist, "load with N workers on Slurm or local processes (run directory, resubmission)"},
    {"brute-force-dist", cmd_brute_force_dist, "brute-force ground truth with N workers on Slurm or local processes"},
    {"index", cmd_index, "build, search and inspect IVF index files"},
    {"version", cmd_version, "print the version"},
};

static void usage(FILE *to) {
  fprintf(to, "usage: vforge COMMAND [options]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    fprintf(to, "  %-18s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
  fprintf(to, "\nglobal options:\n");
  print_opts(GLOBAL_OPTS, to);
  fprintf(to, "\n'vforge COMMAND --help' shows a command's options.\n"
              "exit codes: 0 success, 2 bad usage or invalid input data, 1 other failures,\n"
              "130 / 143 interrupted by SIGINT / SIGTERM.\n");
}

int main(int argc, char **argv) {
  g_tty = isatty(2);
  g_last_line = vf_now();
  install_signals();
  vf_set_log_handler(render_log, NULL);
  vf_set_progress_handler(render_progress, NULL);
  vf_set_threads(0);
  /* global options may come before the command */
  int i = 1;
  vf_error err;
  vf_error_clear(&err);
  while (i < argc && argv[i][0] == '-') {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(a, "--version") == 0) return cmd_version(0, NULL);
    char nb[64];
    const char *val;
    const char *name = split_opt(a + 2, nb, &val);
    int g = -1;
    for (int k = 0; GLOBAL_OPTS[k].name; k++)
      if (a[1] == '-' && strcmp(GLOBAL_OPTS[k].name, name) == 0) g = k;
    if (g < 0) {
      fprintf(stderr, "vforge: error: unknown option '%s' (see vforge --help)\n", a);
      return 2;
    }
    if (GLOBAL_OPTS[g].metavar && !val) {
      if (i + 1 >= argc) {
        fprintf(stderr, "vforge: error: option --%s needs a value\n", name);
        return 2;
      }
      val = argv[++i];
    }
    vf_status st = apply_global(GLOBAL_OPTS[g].name, val ? val : "", &err);
    if (st != VF_OK) return cli_fail(st, &err);
    i++;
  }
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  for (size_t c = 0; c < sizeof COMMANDS / sizeof COMMANDS[0]; c++) {
    if (strcmp(argv[i], COMMANDS[c].name) == 0) {
      int rc = COMMANDS[c].fn(argc - i - 1, argv + i + 1);
      end_progress();
      if (fflush(stdout) != 0) {
        fprintf(stderr, "vforge: error: writing to stdout: %s\n", VF_STRERROR(errno));
        return rc ? rc : 1;
      }
      return rc;
    }
  }
  fprintf(stderr, "vforge: error: unknown command '%s' (see vforge --help)\n", argv[i]);
  return 2;
}
