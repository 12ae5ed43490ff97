/*
 * dist_engine.c — the worker script and the two engines that run it: `slurm` (one sbatch
 * --array job per submission, polled with squeue) and `local` (child processes).
 *
 * No shell ever sees a user-controlled string: sbatch, squeue and scontrol are run with
 * fork + execvp and an argv; worker.sh is constant text (below) whose only input is the run
 * directory (its argument) and shards/RRR.args (one argument per line, passed on as "$@").
 *
 * A shard is done when its done marker (done/RRR.json) exists — Slurm forgets finished jobs
 * after MinJobAge and has no accounting here, so squeue / scontrol are only hints: a task that
 * the engine no longer lists (two polls in a row, so a marker written just before the task
 * ended is seen) and that left no marker has failed, whatever Slurm says.  A failed shard is
 * resubmitted (the worker command carries --resume, so it continues from its checkpoint) until
 * it has had max_attempts attempts.
 *
 * Zombies: the driver makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so processes a
 * worker leaves behind are re-parented to it rather than to an init that does not reap, and it
 * reaps every child that ends (waitpid(-1, WNOHANG)) while it polls.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static const char WORKER_SH[] =
    "#!/bin/sh\n"
    "# vforge distributed worker, written by vforge load-dist / brute-force-dist (do not edit).\n"
    "#\n"
    "# Safe with any path or config value: this text is constant and holds no user-supplied\n"
    "# string.  Its one argument is the run directory; shard R's command is read from\n"
    "# \"$run/shards/R.args\", one argument per line, and run as \"$@\" - never through eval or a\n"
    "# command line that a shell parses.  Credentials are in no file: the worker inherits them as\n"
    "# environment variables (sbatch --export=ALL, or the local engine's environment).\n"
    "#\n"
    "# Test hook (used by tests/dist only): VFORGE_DIST_TEST_FAIL_SHARD=R kills the first attempt\n"
    "# of shard R with SIGKILL after VFORGE_DIST_TEST_FAIL_AFTER seconds (default 0).\n"
    "set -u\n"
    "run=${1:?usage: worker.sh RUN_DIR}\n"
    "t=${SLURM_ARRAY_TASK_ID:?SLURM_ARRAY_TASK_ID is not set}\n"
    "case $t in ''|*[!0-9]*) echo \"worker.sh: bad task id\" >&2; exit 2 ;; esac\n"
    "r=$(printf '%03d' \"$t\")\n"
    "args=\"$run/shards/$r.args\"\n"
    "[ -r \"$args\" ] || { echo \"worker.sh: cannot read $args\" >&2; exit 2; }\n"
    "set --\n"
    "while IFS= read -r a; do set -- \"$@\" \"$a\"; done < \"$args\"\n"
    "out=\"$run/out/$r.json\"\n"
    "log=\"$run/logs/$r.log\"\n"
    "echo \"worker.sh: shard $r starts on $(hostname) at $(date -u +%FT%TZ)\" >> \"$log\"\n"
    "if [ \"${VFORGE_DIST_TEST_FAIL_SHARD:-}\" = \"$t\" ] && mkdir \"$run/out/$r.test-killed\" 2>/dev/null; then\n"
    "  \"$@\" > \"$out\" 2>> \"$log\" &\n"
    "  p=$!\n"
    "  sleep \"${VFORGE_DIST_TEST_FAIL_AFTER:-0}\"\n"
    "  kill -KILL \"$p\" 2>/dev/null\n"
    "  wait \"$p\"\n"
    "  echo \"worker.sh: test hook killed shard $r\" >> \"$log\"\n"
    "  exit 137\n"
    "fi\n"
    "\"$@\" > \"$out\" 2>> \"$log\" || exit $?\n"
    "mv -f \"$out\" \"$run/done/$r.json\"\n";

const char *dist_worker_script(void) { return WORKER_SH; }

vf_status de_write_worker(const dist_manifest *m, char *const *const *argvs, vf_error *err) {
  char *p = dm_path(m, "worker.sh");
  if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
  vf_status st = VF_OK;
  vf_buf b;
  VF_BUF_INIT(&b, DIST_MAX_COMMAND);
  char *ap = NULL;
  VF_TRY(vf_atomic_write_file(p, WORKER_SH, strlen(WORKER_SH), err));
  if (chmod(p, 0700) != 0) VF_FAIL(vf_error_set(err, VF_EIO, "%s: chmod: %s", p, VF_STRERROR(errno)));
  for (int s = 0; s < m->num_shards; s++) {
    vf_buf_reset(&b);
    for (size_t i = 0; argvs[s][i]; i++) {
      const char *a = argvs[s][i];
      if (strchr(a, '\n') || strchr(a, '\r'))
        VF_FAIL(vf_error_set(err, VF_EUSAGE, "shard %d: argument '%.80s' holds a line break, which a "
                             "worker command cannot carry", s, a));
      VF_TRY(vf_buf_printf(&b, err, "%s\n", a));
    }
    ap = dm_shard_path(m, "shards", s, ".args");
    if (!ap) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    VF_TRY(vf_atomic_write_file(ap, b.data ? (const char *)b.data : "", b.len, err));
    free(ap);
    ap = NULL;
  }
out:
  free(ap);
  free(p);
  vf_buf_free(&b);
  return st;
}

/* ------------------------------------------------------------- processes */

void de_argv_free(char **argv) {
  for (size_t i = 0; argv && argv[i]; i++) free(argv[i]);
  free(argv);
}

char *de_argv_show(char *const *argv) {
  vf_buf b;
  VF_BUF_INIT(&b, DIST_MAX_COMMAND);
  vf_error e;
  vf_status st = VF_OK;
  for (size_t i = 0; argv[i]; i++) {
    if (i) VF_TRY(vf_buf_append(&b, " ", 1, &e));
    VF_TRY(dist_shell_quote(&b, argv[i], &e));
  }
  VF_TRY(vf_buf_append(&b, "", 1, &e));
out:
  if (st != VF_OK) {
    vf_buf_free(&b);
    return NULL;
  }
  size_t n;
  return (char *)vf_buf_take(&b, &n);
}

/* Run argv (execvp), capturing stdout and stderr (each at most 1 MiB kept); *rc = exit status
 * (128 + signal when killed; 127 when it could not be started). */
static vf_status run_capture(char *const *argv, vf_buf *out, vf_buf *errb, int *rc, vf_error *err) {
  int po[2], pe[2];
  if (pipe(po) != 0) return vf_error_set(err, VF_EIO, "pipe: %s", VF_STRERROR(errno));
  if (pipe(pe) != 0) {
    close(po[0]);
    close(po[1]);
    return vf_error_set(err, VF_EIO, "pipe: %s", VF_STRERROR(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
    return vf_error_set(err, VF_EIO, "fork: %s", VF_STRERROR(errno));
  }
  if (pid == 0) {
    int dn = open("/dev/null", O_RDONLY);
    if (dn >= 0) dup2(dn, 0);
    dup2(po[1], 1);
    dup2(pe[1], 2);
    close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
    execvp(argv[0], argv);
    dprintf(2, "cannot run %s: %s", argv[0], VF_STRERROR(errno));
    _exit(127);
  }
  close(po[1]);
  close(pe[1]);
  struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
  int open_fds = 2;
  char chunk[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, chunk, sizeof chunk);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
        continue;
      }
      vf_buf *b = i == 0 ? out : errb;
      vf_error ignore;
      if (b->len < ((size_t)1 << 20)) (void)vf_buf_append(b, chunk, (size_t)n, &ignore);
    }
  }
  for (int i = 0; i < 2; i++)
    if (fds[i].fd >= 0) close(fds[i].fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  vf_error ignore;
  (void)vf_buf_append(out, "", 1, &ignore);
  out->len--;
  (void)vf_buf_append(errb, "", 1, &ignore);
  errb->len--;
  return VF_OK;
}

/* the first line of a tool's stderr, trimmed, for messages */
static const char *first_line(vf_buf *b, char *dst, size_t cap) {
  size_t n = 0;
  const char *s = b->data ? (const char *)b->data : "";
  while (s[n] && s[n] != '\n' && n + 1 < cap) {
    dst[n] = s[n];
    n++;
  }
  dst[n] = 0;
  return dst;
}

static void reap_orphans(void) {
  int status;
  while (waitpid(-1, &status, WNOHANG) > 0) {
  }
}

/* sleep, in steps of at most 0.2 s so that a cancellation (SIGINT/SIGTERM) is seen at once */
static void sleep_s(double s) {
  double end = vf_now() + s;
  for (double left = s; left > 0 && !vf_cancelled(); left = end - vf_now()) {
    double step = left < 0.2 ? left : 0.2;
    struct timespec t = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
  }
}

/* --------------------------------------------------------------- progress */

static void progress(const dist_manifest *m, double t0) {
  vf_progress p = {0};
  p.phase = m->kind == DIST_KIND_LOAD ? "load-dist" : "brute-force-dist";
  for (int s = 0; s < m->num_shards; s++) {
    p.files_total += m->shards[s].files;
    p.rows_total += m->shards[s].rows;
    if (m->shards[s].state == DIST_DONE) {
      p.files_done += m->shards[s].files;
      p.rows_done += m->shards[s].rows;
    }
  }
  p.elapsed_s = vf_now() - t0;
  vf_progress_emit(&p);
}

static int count_state(const dist_manifest *m, dist_state st) {
  int n = 0;
  for (int s = 0; s < m->num_shards; s++) n += m->shards[s].state == st;
  return n;
}

static void shard_done(dist_manifest *m, int s) {
  dm_shard *h = &m->shards[s];
  h->state = DIST_DONE;
  if (m->kind != DIST_KIND_LOAD || h->seconds <= 0) h->seconds = vf_now() - h->started;
  if (m->kind == DIST_KIND_LOAD)
    vf_log(VF_LOG_INFO, "shard %d/%d done: %" PRIu64 " points in %.2f s (attempt %d, job %s); %d of %d done",
           s, m->num_shards, h->points, h->seconds, h->attempts, h->job ? h->job : "?",
           count_state(m, DIST_DONE), m->num_shards);
  else
    vf_log(VF_LOG_INFO, "shard %d/%d done in %.2f s (attempt %d, job %s); %d of %d done", s,
           m->num_shards, h->seconds, h->attempts, h->job ? h->job : "?", count_state(m, DIST_DONE),
           m->num_shards);
}

/* A shard's attempt ended without a done marker: queue it again or give up.  true = retry. */
static bool shard_failed(dist_manifest *m, int s, const char *why) {
  dm_shard *h = &m->shards[s];
  if (h->attempts < m->max_attempts) {
    m->retries++;
    h->state = DIST_PENDING;
    vf_log(VF_LOG_WARN, "shard %d (job %s) ended without a done marker (%s); resubmitting with "
           "--resume, attempt %d of %d", s, h->job ? h->job : "?", why, h->attempts + 1, m->max_attempts);
    return true;
  }
  h->state = DIST_FAILED;
  vf_log(VF_LOG_ERROR, "shard %d (job %s) failed (%s) after %d attempts; its log: %s/logs/%03d.log",
         s, h->job ? h->job : "?", why, h->attempts, m->run_dir, s);
  return false;
}

/* ------------------------------------------------------------------ local */

static vf_status local_spawn(dist_manifest *m, int s, vf_error *err) {
  char *script = dm_path(m, "worker.sh");
  char *shlog = dm_shard_path(m, "logs", s, ".sh.log");
  if (!script || !shlog) {
    free(script);
    free(shlog);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  char task[16];
  snprintf(task, sizeof task, "%d", s);
  pid_t pid = fork();
  if (pid < 0) {
    free(script);
    free(shlog);
    return vf_error_set(err, VF_EIO, "fork: %s", VF_STRERROR(errno));
  }
  if (pid == 0) {
    setenv("SLURM_ARRAY_TASK_ID", task, 1);
    int dn = open("/dev/null", O_RDONLY);
    if (dn >= 0) dup2(dn, 0);
    int lf = open(shlog, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (lf >= 0) {
      dup2(lf, 1);
      dup2(lf, 2);
    }
    char *const argv[] = {"sh", script, m->run_dir, NULL};
    execv("/bin/sh", argv);
    _exit(127);
  }
  free(script);
  free(shlog);
  dm_shard *h = &m->shards[s];
  char job[48];
  snprintf(job, sizeof job, "local:%ld", (long)pid);
  vf_status st = dm_add_job(h, job, err);
  h->pid = pid;
  h->attempts++;
  h->state = DIST_RUNNING;
  h->started = vf_now();
  return st;
}

static vf_status drive_local(dist_manifest *m, int parallel, vf_error *err) {
  double t0 = vf_now();
  int running = 0;
  vf_status st = VF_OK;
  for (;;) {
    bool changed = false;
    for (int s = 0; s < m->num_shards && running < parallel; s++) {
      if (m->shards[s].state != DIST_PENDING) continue;
      VF_TRY(local_spawn(m, s, err));
      running++;
      changed = true;
    }
    if (changed) VF_TRY(dm_write(m, err));
    if (running == 0) break;
    /* interrupted: stop the workers (below) instead of resubmitting the shards they leave */
    VF_TRY(vf_check_cancel(err));
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid == 0) {
      sleep_s(0.1);
      continue;
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      VF_FAIL(vf_error_set(err, VF_EINTERNAL, "waitpid: %s", VF_STRERROR(errno)));
    }
    int s = -1;
    for (int i = 0; i < m->num_shards; i++)
      if (m->shards[i].pid == pid) s = i;
    if (s < 0) continue; /* an orphan re-parented to us: reaped */
    running--;
    m->shards[s].pid = 0;
    if (vf_cancelled() && !dm_done_marker(m, s)) { /* ended by the same interruption */
      m->shards[s].state = DIST_PENDING;
      continue;
    }
    if (dm_done_marker(m, s)) {
      shard_done(m, s);
    } else {
      char why[64];
      if (WIFEXITED(status))
        snprintf(why, sizeof why, "exit status %d", WEXITSTATUS(status));
      else
        snprintf(why, sizeof why, "killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
      shard_failed(m, s, why);
    }
    progress(m, t0);
    VF_TRY(dm_write(m, err));
  }
out:
  if (st != VF_OK) { /* do not leave workers behind */
    for (int s = 0; s < m->num_shards; s++)
      if (m->shards[s].pid > 0) {
        kill(m->shards[s].pid, SIGTERM);
        waitpid(m->shards[s].pid, NULL, 0);
        m->shards[s].pid = 0;
      }
  }
  return st;
}

/* ------------------------------------------------------------------ slurm */

static vf_status add_arg(char ***argv, size_t *n, const char *fmt, const char *a, vf_error *err) {
  char **v = vf_realloc(*argv, (*n + 2) * sizeof *v);
  if (!v) return vf_error_set(err, VF_ENOMEM, "out of memory");
  *argv = v;
  size_t len = strlen(fmt) + (a ? strlen(a) : 0) + 1;
  char *s = vf_malloc(len);
  if (!s) return vf_error_set(err, VF_ENOMEM, "out of memory");
  snprintf(s, len, fmt, a ? a : "");
  v[(*n)++] = s;
  v[*n] = NULL;
  return VF_OK;
}

/* "0-3,5,7-8" */
static vf_status array_spec(const int *shards, int n, vf_buf *b, vf_error *err) {
  vf_status st = VF_OK;
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && shards[j + 1] == shards[j] + 1) j++;
    if (j > i)
      VF_TRY(vf_buf_printf(b, err, "%s%d-%d", i ? "," : "", shards[i], shards[j]));
    else
      VF_TRY(vf_buf_printf(b, err, "%s%d", i ? "," : "", shards[i]));
    i = j + 1;
  }
  VF_TRY(vf_buf_append(b, "", 1, err));
out:
  return st;
}

/* a path for sbatch --output: '%' is Slurm's pattern character, written '%%' */
static char *pct_escape(const char *s) {
  size_t n = strlen(s), extra = 0;
  for (size_t i = 0; i < n; i++) extra += s[i] == '%';
  char *r = vf_malloc(n + extra + 1);
  if (!r) return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    r[k++] = s[i];
    if (s[i] == '%') r[k++] = '%';
  }
  r[k] = 0;
  return r;
}

vf_status de_sbatch_argv(const dist_manifest *m, const de_resources *res, const int *shards,
                         int n, char ***argv, vf_error *err) {
  *argv = NULL;
  size_t na = 0;
  vf_buf spec;
  VF_BUF_INIT(&spec, VF_BUF_MAX_TEXT);
  char num[32];
  char *logs = pct_escape(m->run_dir);
  char *script = dm_path(m, "worker.sh");
  vf_status st = VF_OK;
  if (!logs || !script) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(array_spec(shards, n, &spec, err));
  VF_TRY(add_arg(argv, &na, "sbatch", NULL, err));
  VF_TRY(add_arg(argv, &na, "--parsable", NULL, err));
  VF_TRY(add_arg(argv, &na, "--export=ALL", NULL, err));
  VF_TRY(add_arg(argv, &na, "--job-name=vforge-%s", m->run_id, err));
  VF_TRY(add_arg(argv, &na, "--array=%s", (const char *)spec.data, err));
  VF_TRY(add_arg(argv, &na, "--output=%s/logs/slurm-%%A_%%a.out", logs, err));
  if (res->cpus > 0) {
    snprintf(num, sizeof num, "%" PRId64, res->cpus);
    VF_TRY(add_arg(argv, &na, "--cpus-per-task=%s", num, err));
  }
  if (res->memory_gb > 0) {
    snprintf(num, sizeof num, "%" PRId64, res->memory_gb);
    VF_TRY(add_arg(argv, &na, "--mem=%sG", num, err));
  }
  if (res->partition) VF_TRY(add_arg(argv, &na, "--partition=%s", res->partition, err));
  if (res->time) VF_TRY(add_arg(argv, &na, "--time=%s", res->time, err));
  VF_TRY(add_arg(argv, &na, "%s", script, err));
  VF_TRY(add_arg(argv, &na, "%s", m->run_dir, err));
out:
  free(logs);
  free(script);
  vf_buf_free(&spec);
  if (st != VF_OK) {
    de_argv_free(*argv);
    *argv = NULL;
  }
  return st;
}

static vf_status slurm_submit(dist_manifest *m, const de_resources *res, const int *shards, int n,
                              vf_error *err) {
  char **argv = NULL;
  vf_status st = de_sbatch_argv(m, res, shards, n, &argv, err);
  if (st != VF_OK) return st;
  vf_buf out, eb;
  VF_BUF_INIT(&out, DIST_MAX_CAPTURE);
  VF_BUF_INIT(&eb, DIST_MAX_CAPTURE);
  int rc = 0;
  VF_TRY(run_capture(argv, &out, &eb, &rc, err));
  if (!m->submit_command) m->submit_command = de_argv_show(argv);
  char line[512];
  /* --parsable: "<jobid>" or "<jobid>;<cluster>" */
  long long jobid = -1;
  if (rc == 0 && out.data) {
    char *end = NULL;
    jobid = strtoll((const char *)out.data, &end, 10);
    if (end == (char *)out.data || (*end && *end != ';' && *end != '\n')) jobid = -1;
  }
  if (rc != 0 || jobid < 0)
    VF_FAIL(vf_error_set(err, VF_EIO, "sbatch failed (exit %d): %s", rc,
                         eb.len ? first_line(&eb, line, sizeof line) : first_line(&out, line, sizeof line)));
  for (int i = 0; i < n; i++) {
    dm_shard *h = &m->shards[shards[i]];
    char job[64];
    snprintf(job, sizeof job, "%lld_%d", jobid, shards[i]);
    st = dm_add_job(h, job, err);
    h->attempts++;
    h->state = DIST_SUBMITTED;
    h->started = vf_now();
    h->gone_polls = 0;
    if (st != VF_OK) goto out;
  }
  vf_log(VF_LOG_INFO, "submitted %d shard%s as Slurm job %lld", n, n == 1 ? "" : "s", jobid);
out:
  de_argv_free(argv);
  vf_buf_free(&out);
  vf_buf_free(&eb);
  return st;
}

/* scontrol's view of a finished task, for the message only (it may be gone already) */
static void slurm_hint(const char *job, char *why, size_t cap) {
  char *const argv[] = {"scontrol", "-o", "show", "job", (char *)job, NULL};
  vf_buf out, eb;
  VF_BUF_INIT(&out, DIST_MAX_CAPTURE);
  VF_BUF_INIT(&eb, DIST_MAX_CAPTURE);
  int rc = 0;
  vf_error e;
  snprintf(why, cap, "Slurm no longer lists it");
  if (run_capture(argv, &out, &eb, &rc, &e) == VF_OK && rc == 0 && out.data) {
    const char *s = strstr((const char *)out.data, "JobState=");
    const char *x = strstr((const char *)out.data, "ExitCode=");
    if (s) {
      int a = (int)strcspn(s + 9, " \n"), b = x ? (int)strcspn(x + 9, " \n") : 0;
      snprintf(why, cap, "Slurm state %.*s, exit code %.*s", a, s + 9, b, x ? x + 9 : "");
    }
  }
  vf_buf_free(&out);
  vf_buf_free(&eb);
}

/* Poll squeue for the array job `jobid`: tasks[shard] = 1 listed (pending), 2 listed running.
 * *gone_all: squeue says the job id is unknown (purged).  VF_ENET on other squeue errors. */
static vf_status slurm_query(const char *jobid, int num_shards, int *tasks, vf_error *err) {
  char *const argv[] = {"squeue", "-h", "-r", "-j", (char *)jobid, "-o", "%i|%T", NULL};
  vf_buf out, eb;
  VF_BUF_INIT(&out, DIST_MAX_CAPTURE);
  VF_BUF_INIT(&eb, DIST_MAX_CAPTURE);
  int rc = 0;
  vf_status st = VF_OK;
  VF_TRY(run_capture(argv, &out, &eb, &rc, err));
  char line[512];
  if (rc != 0 && !(eb.data && strstr((const char *)eb.data, "Invalid job id")))
    VF_FAIL(vf_error_set(err, VF_ENET, "squeue failed (exit %d): %s", rc, first_line(&eb, line, sizeof line)));
  if (rc == 0 && out.data) {
    size_t jl = strlen(jobid);
    for (char *p = (char *)out.data; *p;) {
      char *nl = strchr(p, '\n');
      if (nl) *nl = 0;
      if (strncmp(p, jobid, jl) == 0 && p[jl] == '_') {
        char *end = NULL;
        long t = strtol(p + jl + 1, &end, 10);
        if (end && *end == '|' && t >= 0 && t < num_shards)
          tasks[t] = strncmp(end + 1, "RUNNING", 7) == 0 || strncmp(end + 1, "COMPLETING", 10) == 0 ? 2 : 1;
      }
      if (!nl) break;
      p = nl + 1;
    }
  }
out:
  vf_buf_free(&out);
  vf_buf_free(&eb);
  return st;
}

static vf_status drive_slurm(dist_manifest *m, const de_resources *res, double poll_s, vf_error *err) {
  double t0 = vf_now();
  int *list = vf_calloc((size_t)m->num_shards + 1, sizeof *list);
  int *tasks = vf_calloc((size_t)m->num_shards + 1, sizeof *tasks);
  char **seen = vf_calloc((size_t)m->num_shards + 1, sizeof *seen);
  vf_status st = VF_OK;
  if (!list || !tasks || !seen) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  int squeue_errors = 0, submissions = 0;
  for (;;) {
    int n = 0;
    for (int s = 0; s < m->num_shards; s++)
      if (m->shards[s].state == DIST_PENDING) list[n++] = s;
    if (n > 0) {
      /* the first submission fails at once (a bad partition, time or memory is not transient);
       * a resubmission is retried a few times, since the workers of other shards still run */
      for (int tries = 1; (st = slurm_submit(m, res, list, n, err)) != VF_OK && submissions > 0 && tries < 4;
           tries++) {
        vf_log(VF_LOG_WARN, "%s; retrying the submission in %d s", err->msg, 2 * tries);
        sleep_s(2.0 * tries);
      }
      submissions++;
      if (st != VF_OK) goto out;
      VF_TRY(dm_write(m, err));
    }
    int active = count_state(m, DIST_SUBMITTED) + count_state(m, DIST_RUNNING);
    if (active == 0) break;
    sleep_s(poll_s);
    /* interrupted: the submitted Slurm jobs keep running; --status / --resume follow them */
    VF_TRY(vf_check_cancel(err));
    reap_orphans();
    /* one squeue per array job id still active */
    memset(tasks, 0, (size_t)m->num_shards * sizeof *tasks);
    int nseen = 0;
    bool query_failed = false;
    for (int s = 0; s < m->num_shards && !query_failed; s++) {
      dm_shard *h = &m->shards[s];
      if ((h->state != DIST_SUBMITTED && h->state != DIST_RUNNING) || !h->job) continue;
      size_t jl = strcspn(h->job, "_");
      bool dup = false;
      for (int i = 0; i < nseen && !dup; i++) dup = strlen(seen[i]) == jl && strncmp(seen[i], h->job, jl) == 0;
      if (dup) continue;
      seen[nseen] = vf_strndup(h->job, jl);
      if (!seen[nseen]) {
        st = vf_error_set(err, VF_ENOMEM, "out of memory");
        break;
      }
      vf_error qe;
      vf_error_clear(&qe);
      if (slurm_query(seen[nseen], m->num_shards, tasks, &qe) != VF_OK) {
        query_failed = true;
        if (++squeue_errors >= 60)
          st = vf_error_set(err, VF_ENET, "%s (60 polls in a row); the run continues with "
                            "`vforge load-dist --status %s`", qe.msg, m->run_id);
        else
          vf_log(VF_LOG_WARN, "%s; polling again", qe.msg);
      }
      nseen++;
    }
    for (int i = 0; i < nseen; i++) {
      free(seen[i]);
      seen[i] = NULL;
    }
    if (st != VF_OK) goto out;
    if (query_failed) continue;
    squeue_errors = 0;
    bool changed = false;
    for (int s = 0; s < m->num_shards; s++) {
      dm_shard *h = &m->shards[s];
      if (h->state != DIST_SUBMITTED && h->state != DIST_RUNNING) continue;
      if (dm_done_marker(m, s)) {
        shard_done(m, s);
        changed = true;
      } else if (tasks[s]) {
        h->gone_polls = 0;
        if (tasks[s] == 2 && h->state != DIST_RUNNING) {
          h->state = DIST_RUNNING;
          changed = true;
        }
      } else if (++h->gone_polls >= 2) {
        char why[160];
        slurm_hint(h->job, why, sizeof why);
        shard_failed(m, s, why);
        changed = true;
      }
    }
    if (changed) {
      progress(m, t0);
      VF_TRY(dm_write(m, err));
    }
  }
out:
  free(list);
  free(tasks);
  free(seen);
  return st;
}

/* true when `pid` runs this run's worker.sh (a local worker of an earlier driver) */
static bool local_worker_alive(const dist_manifest *m, const char *job) {
  if (!job || strncmp(job, "local:", 6) != 0) return false;
  long pid = strtol(job + 6, NULL, 10);
  if (pid <= 0) return false;
  char path[64], buf[8192];
  snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  for (size_t i = 0; i < n; i++)
    if (buf[i] == 0) buf[i] = ' ';
  buf[n] = 0;
  char want[4200];
  snprintf(want, sizeof want, "%s/worker.sh", m->run_dir);
  return strstr(buf, want) != NULL;
}

static vf_status resume_states(dist_manifest *m, vf_error *err) {
  for (int s = 0; s < m->num_shards; s++) {
    dm_shard *h = &m->shards[s];
    if (h->state == DIST_DONE) continue;
    bool in_flight = h->state == DIST_SUBMITTED || h->state == DIST_RUNNING;
    if (in_flight && m->engine == DIST_ENGINE_LOCAL && local_worker_alive(m, h->job))
      return vf_error_set(err, VF_EUSAGE, "shard %d's worker (%s) of the earlier driver still runs; "
                          "let it end (or kill it), then --resume again", s, h->job);
    if (in_flight && m->engine == DIST_ENGINE_SLURM && h->job) {
      h->state = DIST_SUBMITTED; /* polled: still queued or running, done, or ended */
      h->attempts = 1;
      h->started = vf_now();
      h->gone_polls = 0;
      vf_log(VF_LOG_INFO, "shard %d: watching job %s of the earlier driver", s, h->job);
    } else {
      h->state = DIST_PENDING;
      h->attempts = 0;
    }
  }
  return VF_OK;
}

vf_status de_drive(dist_manifest *m, const de_resources *res, int parallel, double poll_s,
                   bool resume, vf_error *err) {
  /* processes our workers leave behind become our children, and are reaped */
  (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  if (resume) {
    vf_status rs = resume_states(m, err);
    if (rs != VF_OK) return rs;
  } else {
    for (int s = 0; s < m->num_shards; s++)
      if (m->shards[s].state != DIST_DONE) m->shards[s].state = DIST_PENDING;
  }
  vf_status st = m->engine == DIST_ENGINE_LOCAL ? drive_local(m, parallel > 0 ? parallel : 1, err)
                                                : drive_slurm(m, res, poll_s > 0 ? poll_s : 1, err);
  reap_orphans();
  if (st != VF_OK) return st;
  int failed = count_state(m, DIST_FAILED);
  if (failed > 0) {
    vf_buf b;
    VF_BUF_INIT(&b, VF_BUF_MAX_TEXT);
    vf_error ignore;
    for (int s = 0, k = 0; s < m->num_shards && k < 20; s++)
      if (m->shards[s].state == DIST_FAILED) (void)vf_buf_printf(&b, &ignore, "%s%d", k++ ? ", " : "", s);
    (void)vf_buf_append(&b, "", 1, &ignore);
    st = vf_error_set(err, VF_EIO, "%d of %d shards failed after %d attempts each (shards %s); "
                      "their logs are %s/logs/RRR.log; `--resume %s` tries them again",
                      failed, m->num_shards, m->max_attempts, b.data ? (const char *)b.data : "",
                      m->run_dir, m->run_id ? m->run_id : m->run_dir);
    vf_buf_free(&b);
  }
  return st;
}
