/*
 * sys.c — how many CPUs and how much memory this process may use.
 *
 * Why not just sysconf(_SC_NPROCESSORS_ONLN): in containers and batch schedulers the machine's
 * core count is a lie.  The usable count is the minimum of the affinity mask (taskset, numactl),
 * the cgroup CPU quota (Docker/Kubernetes --cpus: cgroup v2 cpu.max, v1 cpu.cfs_quota_us over
 * cpu.cfs_period_us, rounded up) and SLURM_CPUS_PER_TASK.  Oversubscribing a quota makes every
 * thread stall on throttling, so the thread pool and OpenBLAS are both capped to it.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/blas_internal.h"

static atomic_int g_threads;
static _Atomic uint64_t g_mem_budget;

/* CPUs from a quota/period pair, rounded up; 0 when unlimited or unparsable. */
static int quota_cpus(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return 0;
  long long n = (quota + period - 1) / period;
  if (n < 1) n = 1;
  if (n > INT_MAX) n = INT_MAX;
  return (int)n;
}

/* cgroup v2 "cpu.max": "<quota|max> <period>". */
static int cgroup2_file_cpus(const char *file) {
  FILE *fp = fopen(file, "re");
  if (!fp) return 0;
  char q[64] = {0};
  long long period = 0;
  int r = fscanf(fp, "%63s %lld", q, &period);
  fclose(fp);
  if (r != 2 || strcmp(q, "max") == 0) return 0;
  char *end;
  errno = 0;
  long long quota = strtoll(q, &end, 10);
  if (errno || *end) return 0;
  return quota_cpus(quota, period);
}

static int min_positive(int a, int b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return a < b ? a : b;
}

/* The cgroup v2 quota: the tightest cpu.max from this process's cgroup up to the root. */
static int cgroup2_cpus(void) {
  int best = cgroup2_file_cpus("/sys/fs/cgroup/cpu.max");
  FILE *fp = fopen("/proc/self/cgroup", "re");
  if (!fp) return best;
  char line[4096];
  char rel[4096] = {0};
  while (fgets(line, sizeof line, fp)) {
    if (strncmp(line, "0::", 3) == 0) {
      size_t n = strcspn(line + 3, "\n");
      if (n < sizeof rel) {
        memcpy(rel, line + 3, n);
        rel[n] = '\0';
      }
      break;
    }
  }
  fclose(fp);
  /* walk rel upwards: /a/b/c, /a/b, /a */
  while (rel[0] == '/' && rel[1]) {
    char file[4200];
    snprintf(file, sizeof file, "/sys/fs/cgroup%s/cpu.max", rel);
    best = min_positive(best, cgroup2_file_cpus(file));
    char *slash = strrchr(rel, '/');
    if (!slash) break;
    *slash = '\0';
  }
  return best;
}

static long long read_ll(const char *file, bool *ok) {
  *ok = false;
  FILE *fp = fopen(file, "re");
  if (!fp) return 0;
  long long v = 0;
  if (fscanf(fp, "%lld", &v) == 1) *ok = true;
  fclose(fp);
  return v;
}

static int cgroup1_cpus(void) {
  static const char *const dirs[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct",
                                     "/sys/fs/cgroup/cpuacct,cpu"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    char qf[256], pf[256];
    snprintf(qf, sizeof qf, "%s/cpu.cfs_quota_us", dirs[i]);
    snprintf(pf, sizeof pf, "%s/cpu.cfs_period_us", dirs[i]);
    bool okq, okp;
    long long q = read_ll(qf, &okq), p = read_ll(pf, &okp);
    if (okq && okp) return quota_cpus(q, p);
  }
  return 0;
}

static int slurm_cpus(void) {
  const char *s = getenv("SLURM_CPUS_PER_TASK");
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v <= 0) return 0;
  return v > INT_MAX ? INT_MAX : (int)v;
}

/* vf_cpu_available(): see util.h. */
int vf_cpu_available(void) {
  int n = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    n = c > 0 ? (c > INT_MAX ? INT_MAX : (int)c) : 1;
  }
  n = min_positive(n, cgroup2_cpus());
  n = min_positive(n, cgroup1_cpus());
  n = min_positive(n, slurm_cpus());
  return n >= 1 ? n : 1;
}

/* vf_set_threads(): see util.h.  n <= 0 means vf_cpu_available(). */
void vf_set_threads(int n) {
  if (n <= 0) n = vf_cpu_available();
  atomic_store(&g_threads, n);
  /* Only ever lower the BLAS's count, and only once it is loaded (blas.c caps it to
   * vf_threads() when it loads): raising it would start server threads that spin in
   * sched_yield before they sleep.  Code that runs BLAS sets its own count. */
  blas_cap_threads(n);
}

/* vf_threads(): the configured thread count, vf_cpu_available() until vf_set_threads(). */
int vf_threads(void) {
  int n = atomic_load(&g_threads);
  return n > 0 ? n : vf_cpu_available();
}

/* An integer environment variable: 1 when set and valid, 0 when unset, -1 when malformed. */
static int env_long(const char *name, long *out) {
  const char *s = getenv(name);
  if (!s || !*s) return 0;
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < 0 || v > INT_MAX) return -1;
  *out = v;
  return 1;
}

/* vf_job_rank(): see util.h. */
vf_status vf_job_rank(int num_jobs, int given, int *rank, const char **source, vf_error *err) {
  const char *src = "--job-rank";
  long r = given;
  *rank = 0;
  if (source) *source = src;
  if (num_jobs < 1) return vf_error_set(err, VF_EUSAGE, "--num-jobs must be at least 1");
  if (given < 0 && num_jobs == 1) return VF_OK; /* one job: rank 0, whatever the environment */
  if (given < 0) {
    long id, min = 0, sn = 0;
    int have_id = env_long("SLURM_ARRAY_TASK_ID", &id);
    int have_min = env_long("SLURM_ARRAY_TASK_MIN", &min);
    int have_sky = env_long("SKYPILOT_JOB_RANK", &r);
    int have_sn = env_long("SKYPILOT_NUM_JOBS", &sn);
    if (have_id < 0 || have_min < 0)
      return vf_error_set(err, VF_EUSAGE, "SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_MIN: expected "
                          "non-negative integers, got '%.40s' / '%.40s'",
                          getenv("SLURM_ARRAY_TASK_ID"),
                          getenv("SLURM_ARRAY_TASK_MIN") ? getenv("SLURM_ARRAY_TASK_MIN") : "");
    if (have_id > 0) {
      if (id < min)
        return vf_error_set(err, VF_EUSAGE, "SLURM_ARRAY_TASK_ID %ld is below SLURM_ARRAY_TASK_MIN "
                            "%ld", id, min);
      r = id - min;
      src = have_min > 0 ? "SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN" : "SLURM_ARRAY_TASK_ID";
    } else if (have_sky != 0) {
      if (have_sky < 0 || have_sn < 0)
        return vf_error_set(err, VF_EUSAGE, "SKYPILOT_JOB_RANK / SKYPILOT_NUM_JOBS: expected "
                            "non-negative integers");
      if (have_sn > 0 && sn != num_jobs)
        return vf_error_set(err, VF_EUSAGE, "--num-jobs %d, but SKYPILOT_NUM_JOBS is %ld: pass the "
                            "job count SkyPilot runs (or --job-rank explicitly)", num_jobs, sn);
      src = "SKYPILOT_JOB_RANK";
    } else {
      return vf_error_set(err, VF_EUSAGE, "--num-jobs %d needs this worker's rank: pass --job-rank "
                          "R (0..%d), or run as a Slurm array task (SLURM_ARRAY_TASK_ID) or a "
                          "SkyPilot job (SKYPILOT_JOB_RANK)", num_jobs, num_jobs - 1);
    }
  }
  if (r < 0 || r >= num_jobs)
    return vf_error_set(err, VF_EUSAGE, "rank %ld (from %s) must be in 0..%d (--num-jobs %d)", r, src,
                        num_jobs - 1, num_jobs);
  *rank = (int)r;
  if (source) *source = src;
  return VF_OK;
}

/* vf_parse_size(): see util.h.  Digits with an optional fraction, then an optional unit
 * (case-insensitive) K/M/G/T with optional "B", "i" or "iB"; all units are powers of 1024 and a
 * trailing "B" alone means bytes.  Fractions need a unit and are truncated to whole bytes.
 * Rejects signs, junk, an empty number and values above UINT64_MAX. */
bool vf_parse_size(const char *s, uint64_t *out) {
  if (!s) return false;
  const char *p = s;
  if (!isdigit((unsigned char)*p)) return false;
  uint64_t ip = 0;
  while (isdigit((unsigned char)*p)) {
    unsigned d = (unsigned)(*p - '0');
    if (ip > (UINT64_MAX - d) / 10) return false;
    ip = ip * 10 + d;
    p++;
  }
  uint64_t frac = 0, frac_scale = 1;
  bool has_frac = false;
  if (*p == '.') {
    p++;
    if (!isdigit((unsigned char)*p)) return false;
    has_frac = true;
    while (isdigit((unsigned char)*p)) {
      if (frac_scale < 1000000000000000000ull) { /* keep 18 digits, ignore the rest */
        frac = frac * 10 + (unsigned)(*p - '0');
        frac_scale *= 10;
      }
      p++;
    }
  }
  unsigned shift = 0;
  switch (toupper((unsigned char)*p)) {
  case 'K':
    shift = 10;
    p++;
    break;
  case 'M':
    shift = 20;
    p++;
    break;
  case 'G':
    shift = 30;
    p++;
    break;
  case 'T':
    shift = 40;
    p++;
    break;
  default: break;
  }
  if (shift && (*p == 'i' || *p == 'I')) p++; /* "GiB", or Kubernetes-style "Gi" */
  if (*p == 'B' || *p == 'b') p++;
  if (*p != '\0') return false;
  if (has_frac && shift == 0) return false;
  unsigned __int128 v = (unsigned __int128)ip << shift;
  v += ((unsigned __int128)frac << shift) / frac_scale;
  if (v > UINT64_MAX) return false;
  *out = (uint64_t)v;
  return true;
}

/* vf_set_memory_budget(): process-wide budget in bytes honoured by readers/builders; 0 = none. */
void vf_set_memory_budget(uint64_t bytes) {
  atomic_store(&g_mem_budget, bytes);
}

/* vf_memory_budget(): the budget set by vf_set_memory_budget() (0 = unlimited). */
uint64_t vf_memory_budget(void) {
  return atomic_load(&g_mem_budget);
}

/* vf_peak_rss_bytes(): see util.h.  0 when /proc/self/status is unavailable. */
uint64_t vf_peak_rss_bytes(void) {
  FILE *fp = fopen("/proc/self/status", "re");
  if (!fp) return 0;
  char line[256];
  uint64_t v = 0;
  while (fgets(line, sizeof line, fp)) {
    if (strncmp(line, "VmHWM:", 6) == 0) {
      unsigned long long kb = 0;
      if (sscanf(line + 6, "%llu", &kb) == 1) v = (uint64_t)kb * 1024u;
      break;
    }
  }
  fclose(fp);
  return v;
}
