/*
 * blas.c — the BLAS, loaded on first use, on kernels that match the CPU, checked before use.
 *
 * Why dlopen and not a link dependency: OpenBLAS's library constructor starts its server
 * threads the moment the library is mapped, and they spin in sched_yield before they sleep, so
 * linking it made every command — scan, cat, inspect, which never multiply a matrix — pay for
 * them.  Opened here on the first vf_blas_require()/vf_sgemm_nt(), only brute force, k-means,
 * index builds and RaBitQ index loads map it.  The library is found by VFORGE_BLAS_LIB (a name,
 * a path, or "builtin" for vforge's own sgemm) or the first of LIB_NAMES that loads.
 *
 * Threads: OPENBLAS_NUM_THREADS is set to 1 for the dlopen call only, so OpenBLAS's constructor
 * starts no server thread; once the kernels are chosen and checked, openblas_set_num_threads()
 * starts them: vf_threads() of them, fewer when the user set OPENBLAS_NUM_THREADS /
 * GOTO_NUM_THREADS / OMP_NUM_THREADS lower (read as OpenBLAS reads them), never more than the
 * CPUs this process may use (a 64-core host would otherwise start 63).  vf_set_threads() only
 * ever lowers the count.  Why not start them at load: a server thread's first
 * blas_memory_alloc() runs gotoblas_dynamic_init() itself, and one that does so while the kernels
 * are being re-selected (below) races it: on a CPU OpenBLAS does not know, its detection stores
 * NULL for a moment, and the re-selection calls through it (SEGV in gotoblas_dynamic_init, seen
 * under ASan in CI).
 *
 * Kernels: OpenBLAS picks its kernels from a table of CPU models; a model it does not know runs
 * on generic ones — Debian's 0.3.21 runs a Sapphire/Emerald Rapids Xeon (family 6, model 207)
 * as "Prescott", SSE3, 5x slower than its AVX-512 kernels.  After loading, the core OpenBLAS
 * chose (openblas_get_corename) is compared with what CPUID says the CPU runs; when it is a
 * narrower instruction set and the CPU has at least AVX2 + FMA, and the user did not choose the
 * core with OPENBLAS_CORETYPE, the kernels are re-selected with OpenBLAS's own mechanism —
 * OPENBLAS_CORETYPE set to the best matching core this build has (gotoblas_<CORE> is exported
 * for each), then gotoblas_dynamic_quit() + gotoblas_dynamic_init(), exactly what its
 * constructor does at load, before any GEMM ran and while no server thread exists (a library
 * some other part of the process loaded first is shared as it is, never re-selected: its server
 * threads run; on a generic core vforge's own sgemm is used instead).  Why not set OPENBLAS_CORETYPE before every
 * load: OpenBLAS's detection is right on the CPUs it knows and newer releases know cores this
 * table does not (a forced name would downgrade them); switching only on a detected fallback
 * keeps those.  Without the DYNAMIC_ARCH entry points (a single-target build) a generic core
 * cannot be switched, and vforge's own sgemm (blas_own.c) is used.  One info line is logged when
 * the choice changes.
 *
 * Self-check: the chosen sgemm must match a double-precision reference on two fixed products
 * before first use; if it does not, vforge's own sgemm is used (a warning names the error).
 *
 * Environment changes happen only in the once-only load, around the dlopen / re-selection
 * calls, and are undone at once (the caller's environment is left as it was); getenv() racing
 * with that in another thread of an embedding program is the usual setenv caveat.  Tests:
 * VFORGE_BLAS_TEST_PRETEND_CORE=NAME loads OpenBLAS with OPENBLAS_CORETYPE=NAME but treats the
 * result as OpenBLAS's own detection — the fallback this machine's CPU does not produce.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define BLAS_X86 1
#endif

#include "util/blas_internal.h"

/* CBLAS (cblas.h): enums are passed as int; Debian's and most distributions' libopenblas use
 * 32-bit integers (the 64-bit-integer builds export suffixed names and are not used here). */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*cblas_sgemm_fn)(int order, int transa, int transb, int m, int n, int k,
                               float alpha, const float *a, int lda, const float *b, int ldb,
                               float beta, float *c, int ldc);

static const char *const LIB_NAMES[] = {"libopenblas.so.0", "libopenblas.so",
                                        "libopenblasp.so.0", "libopenblaso.so.0"};

static struct {
  pthread_once_t once;
  atomic_bool loaded;
  vf_status st;
  char msg[VF_ERROR_MSG_MAX];
  cblas_sgemm_fn sgemm; /* NULL: vforge's own sgemm (own) */
  blas_own_variant own;
  void (*set_threads)(int);
  int (*get_threads)(void);
  char *(*corename)(void);
  char *(*config)(void);
  void (*dyn_init)(void);
  void (*dyn_quit)(void);
  char library[PATH_MAX];
  char core[64];
  char config_s[256];
  const char *source;
  char note[640];
} g_blas = {.once = PTHREAD_ONCE_INIT, .source = "builtin"};

/* ------------------------------------------------------------------- CPU */

/* blas_cpu_detect(): see blas_internal.h.  __builtin_cpu_supports checks the OS state (XCR0)
 * too, so AVX-512 disabled by the kernel or a hypervisor counts as absent. */
void blas_cpu_detect(blas_cpu *out) {
  memset(out, 0, sizeof *out);
  out->isa = BLAS_ISA_SSE;
#ifdef BLAS_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx")) out->isa = BLAS_ISA_AVX;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out->isa = BLAS_ISA_AVX2;
  if (out->isa == BLAS_ISA_AVX2 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    out->isa = BLAS_ISA_AVX512;
  unsigned a, b, c, d;
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = '\0';
    out->amd = strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0;
    unsigned maxleaf = a;
    if (maxleaf >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
      out->amx = (d >> 24) & 1u;
      unsigned sub = a;
      if (sub >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) out->bf16 = (a >> 5) & 1u;
    }
  }
  if (out->isa != BLAS_ISA_AVX512) out->bf16 = out->amx = false;
#endif
}

const char *blas_isa_name(blas_isa isa) {
  switch (isa) {
  case BLAS_ISA_SSE: return "sse";
  case BLAS_ISA_AVX: return "avx";
  case BLAS_ISA_AVX2: return "avx2";
  case BLAS_ISA_AVX512: return "avx512";
  default: return "unknown";
  }
}

/* OpenBLAS's x86-64 core names (driver/others/dynamic.c) by the widest instruction set their
 * sgemm kernels use. */
static const struct {
  const char *name;
  blas_isa isa;
} CORES[] = {
    {"Katmai", BLAS_ISA_SSE},       {"Coppermine", BLAS_ISA_SSE},  {"Northwood", BLAS_ISA_SSE},
    {"Prescott", BLAS_ISA_SSE},     {"Banias", BLAS_ISA_SSE},      {"Atom", BLAS_ISA_SSE},
    {"Core2", BLAS_ISA_SSE},        {"Penryn", BLAS_ISA_SSE},      {"Dunnington", BLAS_ISA_SSE},
    {"Nehalem", BLAS_ISA_SSE},      {"Athlon", BLAS_ISA_SSE},      {"Opteron", BLAS_ISA_SSE},
    {"Opteron_SSE3", BLAS_ISA_SSE}, {"Barcelona", BLAS_ISA_SSE},   {"Nano", BLAS_ISA_SSE},
    {"Bobcat", BLAS_ISA_SSE},       {"Generic", BLAS_ISA_SSE},     {"Unknown", BLAS_ISA_SSE},
    {"Sandybridge", BLAS_ISA_AVX},  {"Bulldozer", BLAS_ISA_AVX},   {"Piledriver", BLAS_ISA_AVX},
    {"Steamroller", BLAS_ISA_AVX},  {"Haswell", BLAS_ISA_AVX2},    {"Zen", BLAS_ISA_AVX2},
    {"Excavator", BLAS_ISA_AVX2},   {"SkylakeX", BLAS_ISA_AVX512}, {"Cooperlake", BLAS_ISA_AVX512},
    {"SapphireRapids", BLAS_ISA_AVX512}};

/* blas_core_isa(): see blas_internal.h. */
blas_isa blas_core_isa(const char *core) {
  if (!core) return BLAS_ISA_UNKNOWN;
  for (size_t i = 0; i < sizeof CORES / sizeof CORES[0]; i++)
    if (strcasecmp(core, CORES[i].name) == 0) return CORES[i].isa;
  return BLAS_ISA_UNKNOWN;
}

/* blas_core_targets(): see blas_internal.h. */
size_t blas_core_targets(const blas_cpu *cpu, const char **out, size_t cap) {
  const char *t[6];
  size_t n = 0;
  if (cpu->isa >= BLAS_ISA_AVX512) {
    if (cpu->amx && cpu->bf16) t[n++] = "SapphireRapids";
    if (cpu->bf16) t[n++] = "Cooperlake";
    t[n++] = "SkylakeX";
  }
  if (cpu->isa >= BLAS_ISA_AVX2) {
    if (cpu->amd) t[n++] = "Zen";
    t[n++] = "Haswell";
  }
  if (n > cap) n = cap;
  memcpy(out, t, n * sizeof *out);
  return n;
}

/* vf_cpu_model(): see util.h.  Read once. */
static char g_cpu_model[128] = "unknown";
static pthread_once_t g_cpu_once = PTHREAD_ONCE_INIT;

static void trim_copy(char *dst, size_t cap, const char *src) {
  while (*src == ' ' || *src == '\t') src++;
  size_t n = strcspn(src, "\n");
  while (n && (src[n - 1] == ' ' || src[n - 1] == '\t')) n--;
  if (n >= cap) n = cap - 1;
  if (n == 0) return;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void cpu_model_read(void) {
#ifdef BLAS_X86
  unsigned r[12];
  if (__get_cpuid(0x80000000u, &r[0], &r[1], &r[2], &r[3]) && r[0] >= 0x80000004u) {
    for (unsigned l = 0; l < 3; l++)
      __get_cpuid(0x80000002u + l, &r[4 * l], &r[4 * l + 1], &r[4 * l + 2], &r[4 * l + 3]);
    char s[49];
    memcpy(s, r, 48);
    s[48] = '\0';
    trim_copy(g_cpu_model, sizeof g_cpu_model, s);
    if (strcmp(g_cpu_model, "unknown") != 0) return;
  }
#endif
  FILE *fp = fopen("/proc/cpuinfo", "re");
  if (!fp) return;
  char line[512];
  while (fgets(line, sizeof line, fp)) {
    if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Model", 5) == 0) {
      const char *colon = strchr(line, ':');
      if (colon) trim_copy(g_cpu_model, sizeof g_cpu_model, colon + 1);
      break;
    }
  }
  fclose(fp);
}

const char *vf_cpu_model(void) {
  pthread_once(&g_cpu_once, cpu_model_read);
  return g_cpu_model;
}

/* ------------------------------------------------------------- the loader */

static bool env_given(const char *name) {
  const char *v = getenv(name);
  return v && *v;
}

/* the variables this load set, with the values they had (NULL: unset), to put back right after */
typedef struct env_undo {
  const char *names[2];
  char *old[2];
  int n;
} env_undo;

static void env_push(env_undo *u, const char *name, const char *value) {
  const char *o = getenv(name);
  char *copy = o ? vf_strdup(o) : NULL;
  if ((o && !copy) || setenv(name, value, 1) != 0) {
    free(copy);
    return;
  }
  u->names[u->n] = name;
  u->old[u->n++] = copy;
}

static void env_pop(env_undo *u) {
  while (u->n > 0) {
    u->n--;
    if (u->old[u->n]) setenv(u->names[u->n], u->old[u->n], 1);
    else unsetenv(u->names[u->n]);
    free(u->old[u->n]);
  }
}

static void lib_nt(void *ctx, size_t m, size_t n, size_t k, const float *a, size_t lda,
                   const float *b, size_t ldb, float *c, size_t ldc) {
  (void)ctx;
  g_blas.sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS, (int)m, (int)n, (int)k, 1.0f, a,
               (int)lda, b, (int)ldb, 0.0f, c, (int)ldc);
}

static void own_nt(void *ctx, size_t m, size_t n, size_t k, const float *a, size_t lda,
                   const float *b, size_t ldb, float *c, size_t ldc) {
  blas_own_sgemm_nt(*(const blas_own_variant *)ctx, m, n, k, a, lda, b, ldb, c, ldc);
}

/* vforge's own sgemm from now on: the best variant that passes the self-check */
static void use_own(const char *source) {
  g_blas.sgemm = NULL;
  g_blas.own = blas_own_best();
  char why[256];
  if (g_blas.own == BLAS_OWN_AVX2 && !blas_self_check(own_nt, &g_blas.own, why, sizeof why)) {
    vf_log(VF_LOG_WARN, "BLAS: vforge's own AVX2 sgemm failed its self-check (%s); using the "
                        "scalar one", why);
    g_blas.own = BLAS_OWN_SCALAR;
  }
  snprintf(g_blas.library, sizeof g_blas.library, "builtin");
  snprintf(g_blas.core, sizeof g_blas.core, "%s", blas_own_name(g_blas.own));
  g_blas.config_s[0] = '\0';
  g_blas.source = source;
}

/* the one line that says vforge changed the choice: kept for vf_blas_info, and logged */
static void VF_PRINTF(2, 3) note(vf_log_level level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_blas.note, sizeof g_blas.note, fmt, ap);
  va_end(ap);
  vf_log(level, "%s", g_blas.note);
}

static void copy_core(void) {
  const char *c = g_blas.corename ? g_blas.corename() : NULL;
  snprintf(g_blas.core, sizeof g_blas.core, "%s", c && *c ? c : "unknown");
  /* drop trailing blanks some builds leave */
  size_t n = strlen(g_blas.core);
  while (n && isspace((unsigned char)g_blas.core[n - 1])) g_blas.core[--n] = '\0';
}

/* does this OpenBLAS build carry kernels for `core`?  (gotoblas_<CORE> per compiled core;
 * true when the build does not export them: then only trying tells) */
static bool build_has_core(void *h, const char *core) {
  if (!dlsym(h, "gotoblas_HASWELL") && !dlsym(h, "gotoblas_PRESCOTT")) return true;
  char sym[64] = "gotoblas_";
  size_t o = strlen(sym);
  for (const char *p = core; *p && o + 1 < sizeof sym; p++)
    sym[o++] = (char)toupper((unsigned char)*p);
  sym[o] = '\0';
  return dlsym(h, sym) != NULL;
}

/* OpenBLAS's kernel selection again, with OPENBLAS_CORETYPE = core (NULL: unset, its own
 * detection); true when the core it reports afterwards is `core` */
static bool reselect(const char *core) {
  env_undo u = {.n = 0};
  if (core) env_push(&u, "OPENBLAS_CORETYPE", core);
  g_blas.dyn_quit();
  g_blas.dyn_init();
  env_pop(&u);
  copy_core();
  return core && strcasecmp(g_blas.core, core) == 0;
}

/* The detected core against the CPU: switch a generic one (see the top of the file).  `user`:
 * the user chose the core with OPENBLAS_CORETYPE; `pretend`: the test hook's core (to restore
 * the "detected" state when no switch works). */
static void core_fit(void *h, const blas_cpu *cpu, bool user, bool shared, const char *pretend) {
  blas_isa have = blas_core_isa(g_blas.core);
  if (cpu->isa < BLAS_ISA_AVX2 || have == BLAS_ISA_UNKNOWN || have >= cpu->isa) return;
  if (user) {
    note(VF_LOG_INFO,
         "BLAS: OPENBLAS_CORETYPE=%s (set in the environment) runs %s kernels on this %s CPU; "
         "kept",
         g_blas.core, blas_isa_name(have), blas_isa_name(cpu->isa));
    return;
  }
  char detected[64], lib[PATH_MAX];
  snprintf(detected, sizeof detected, "%s", g_blas.core);
  snprintf(lib, sizeof lib, "%s", g_blas.library);
  /* re-selection only in a library this load opened, before its server threads exist */
  bool alone = !shared && g_blas.get_threads && g_blas.get_threads() == 1;
  if (g_blas.dyn_init && g_blas.dyn_quit && alone) {
    const char *targets[6];
    size_t nt = blas_core_targets(cpu, targets, 6);
    for (size_t i = 0; i < nt; i++) {
      if (!build_has_core(h, targets[i])) continue;
      if (reselect(targets[i])) {
        g_blas.source = "vforge";
        note(VF_LOG_INFO,
             "BLAS: OpenBLAS chose its %s kernels (%s) on this %s CPU (%s); switched to its %s "
             "kernels (set OPENBLAS_CORETYPE to choose them yourself)",
             detected, blas_isa_name(have), blas_isa_name(cpu->isa), vf_cpu_model(), targets[i]);
        return;
      }
    }
    reselect(pretend); /* back to what was detected */
  }
  use_own("fallback");
  note(VF_LOG_INFO,
       "BLAS: %s runs its %s kernels (%s) on this %s CPU and cannot switch them (%s); using "
       "vforge's own sgemm (%s)",
       lib, detected, blas_isa_name(have), blas_isa_name(cpu->isa),
       shared ? "the program loaded it first and its threads may be running"
              : "no DYNAMIC_ARCH core matching the CPU",
       g_blas.core);
}

/* the server-thread count the user asked OpenBLAS for, read as OpenBLAS reads it
 * (OPENBLAS_NUM_THREADS, else GOTO_NUM_THREADS, else OMP_NUM_THREADS; values < 1 ignored); 0:
 * none */
static int user_thread_count(void) {
  static const char *const names[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                      "OMP_NUM_THREADS"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const char *v = getenv(names[i]);
    if (!v || !*v) continue;
    long n = strtol(v, NULL, 10); /* OpenBLAS uses atoi: a leading number counts */
    if (n >= 1) return n > INT_MAX ? INT_MAX : (int)n;
  }
  return 0;
}

/* `*shared`: the library was already loaded (by the program vforge runs in); its threads and
 * kernels are left as they are */
static void *open_lib(const char *name, const char *pretend, bool *shared) {
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  *shared = h != NULL;
  if (h) {
    vf_log(VF_LOG_DEBUG, "BLAS: %s is already loaded in this process; sharing it", name);
    return h;
  }
  env_undo u = {.n = 0};
  env_push(&u, "OPENBLAS_NUM_THREADS", "1"); /* no server thread yet: see the top of the file */
  if (pretend) env_push(&u, "OPENBLAS_CORETYPE", pretend);
  h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  env_pop(&u);
  return h;
}

static void blas_load(void) {
  blas_cpu cpu;
  blas_cpu_detect(&cpu);
  const char *want = getenv("VFORGE_BLAS_LIB");
  if (want && strcmp(want, "builtin") == 0) {
    use_own("builtin");
    g_blas.st = VF_OK;
    atomic_store(&g_blas.loaded, true);
    return;
  }
  bool user_core = env_given("OPENBLAS_CORETYPE");
  int user_threads = user_thread_count();
  const char *pretend = getenv("VFORGE_BLAS_TEST_PRETEND_CORE");
  if (user_core || (pretend && !*pretend)) pretend = NULL;
  const char *const *names = LIB_NAMES;
  size_t nnames = sizeof LIB_NAMES / sizeof LIB_NAMES[0];
  if (want && *want) {
    names = &want;
    nnames = 1;
  }
  char tried[768] = "";
  size_t tl = 0;
  void *h = NULL;
  bool shared = false;
  for (size_t i = 0; i < nnames && !g_blas.sgemm; i++) {
    h = open_lib(names[i], pretend, &shared);
    const char *why = NULL;
    if (!h) {
      why = dlerror();
      if (!why) why = "cannot be loaded";
    } else if (!(g_blas.sgemm = (cblas_sgemm_fn)dlsym(h, "cblas_sgemm")))
      why = "no cblas_sgemm in it";
    if (why && tl + 8 < sizeof tried) {
      int w = snprintf(tried + tl, sizeof tried - tl, "%s%s (%s)", tl ? "; " : "", names[i], why);
      if (w > 0) tl += (size_t)w < sizeof tried - tl ? (size_t)w : sizeof tried - tl - 1;
    }
  }
  if (!g_blas.sgemm) {
    g_blas.st = want && *want ? VF_ECONFIG : VF_EIO;
    snprintf(g_blas.msg, sizeof g_blas.msg,
             "%s: %s; install OpenBLAS (Debian/Ubuntu: apt-get install libopenblas0), point "
             "VFORGE_BLAS_LIB at a CBLAS library, or set VFORGE_BLAS_LIB=builtin for vforge's own "
             "(slower) sgemm",
             want && *want ? "BLAS: VFORGE_BLAS_LIB cannot be used" : "BLAS: no BLAS library found",
             tried);
    g_blas.own = blas_own_best();
    atomic_store(&g_blas.loaded, true);
    return;
  }
  Dl_info di;
  char real[PATH_MAX];
  if (dladdr((void *)g_blas.sgemm, &di) && di.dli_fname) /* the file behind any symlinks */
    snprintf(g_blas.library, sizeof g_blas.library, "%s",
             realpath(di.dli_fname, real) ? real : di.dli_fname);
  else
    snprintf(g_blas.library, sizeof g_blas.library, "%s", want && *want ? want : "libopenblas");
  g_blas.set_threads = (void (*)(int))dlsym(h, "openblas_set_num_threads");
  g_blas.get_threads = (int (*)(void))dlsym(h, "openblas_get_num_threads");
  if (!g_blas.set_threads || !g_blas.get_threads) {
    g_blas.set_threads = NULL;
    g_blas.get_threads = NULL;
  }
  g_blas.corename = (char *(*)(void))dlsym(h, "openblas_get_corename");
  g_blas.config = (char *(*)(void))dlsym(h, "openblas_get_config");
  g_blas.dyn_init = (void (*)(void))dlsym(h, "gotoblas_dynamic_init");
  g_blas.dyn_quit = (void (*)(void))dlsym(h, "gotoblas_dynamic_quit");
  int cap = vf_threads(), cpus = vf_cpu_available();
  if (cap > cpus) cap = cpus;
  if (user_threads > 0 && user_threads < cap) cap = user_threads;
  if (g_blas.get_threads && shared && g_blas.get_threads() > cap) g_blas.set_threads(cap);
  copy_core();
  g_blas.source = user_core ? "environment" : "detected";
  if (g_blas.corename) core_fit(h, &cpu, user_core, shared, pretend);
  if (g_blas.sgemm) {
    char why[256];
    if (!blas_self_check(lib_nt, NULL, why, sizeof why)) {
      char lib[PATH_MAX], core[64];
      memcpy(lib, g_blas.library, sizeof lib);
      memcpy(core, g_blas.core, sizeof core);
      use_own("fallback");
      note(VF_LOG_WARN,
           "BLAS: %s (core %s) failed the sgemm self-check (%s); using vforge's own sgemm (%s)",
           lib, core, why, g_blas.core);
    }
  }
  /* the kernels are final: now the server threads (see the top of the file) */
  if (g_blas.sgemm && g_blas.get_threads && !shared && g_blas.get_threads() != cap)
    g_blas.set_threads(cap);
  if (g_blas.sgemm && g_blas.config) {
    const char *c = g_blas.config();
    snprintf(g_blas.config_s, sizeof g_blas.config_s, "%s", c ? c : "");
    size_t n = strlen(g_blas.config_s);
    while (n && isspace((unsigned char)g_blas.config_s[n - 1])) g_blas.config_s[--n] = '\0';
  }
  g_blas.st = VF_OK;
  atomic_store(&g_blas.loaded, true);
}

/* ------------------------------------------------------------ public API */

/* vf_blas_require(): see util.h. */
vf_status vf_blas_require(vf_error *err) {
  pthread_once(&g_blas.once, blas_load);
  if (g_blas.st != VF_OK) return vf_error_set(err, g_blas.st, "%s", g_blas.msg);
  return VF_OK;
}

bool vf_blas_loaded(void) {
  return atomic_load(&g_blas.loaded);
}

/* vf_blas_info_get(): see util.h. */
vf_status vf_blas_info_get(vf_blas_info *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  vf_status st = vf_blas_require(err);
  if (st != VF_OK) return st;
  out->library = g_blas.library;
  out->core = g_blas.core;
  out->config = g_blas.config_s;
  out->source = g_blas.source;
  out->note = g_blas.note;
  out->threads = g_blas.sgemm && g_blas.get_threads ? g_blas.get_threads() : 1;
  return VF_OK;
}

/* vf_sgemm_nt(): see util.h.  A dimension over INT_MAX (never one of vforge's blocks) goes to
 * vforge's own sgemm, which takes size_t. */
void vf_sgemm_nt(size_t m, size_t n, size_t k, const float *a, size_t lda, const float *b,
                 size_t ldb, float *c, size_t ldc) {
  pthread_once(&g_blas.once, blas_load);
  if (m == 0 || n == 0) return;
  if (g_blas.sgemm && k > 0 && m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && lda <= INT_MAX &&
      ldb <= INT_MAX && ldc <= INT_MAX) {
    lib_nt(NULL, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  blas_own_sgemm_nt(g_blas.own, m, n, k, a, lda, b, ldb, c, ldc);
}

/* vf_blas_single_begin(): see util.h.  Never loads the BLAS. */
int vf_blas_single_begin(void) {
  if (!atomic_load(&g_blas.loaded) || !g_blas.sgemm || !g_blas.get_threads) return 0;
  int n = g_blas.get_threads();
  if (n != 1) g_blas.set_threads(1);
  return n;
}

void vf_blas_single_end(int saved) {
  if (saved > 1 && atomic_load(&g_blas.loaded) && g_blas.sgemm && g_blas.set_threads)
    g_blas.set_threads(saved);
}

/* blas_cap_threads(): see blas_internal.h. */
void blas_cap_threads(int n) {
  if (n < 1 || !atomic_load(&g_blas.loaded) || !g_blas.sgemm || !g_blas.get_threads) return;
  if (g_blas.get_threads() > n) g_blas.set_threads(n);
}

/* one timed product on fresh (deterministic) operands; seconds, or < 0 when out of memory */
typedef struct measure_buf {
  float *a, *b, *c;
} measure_buf;

static void measure_free(measure_buf *mb) {
  free(mb->a);
  free(mb->b);
  free(mb->c);
  memset(mb, 0, sizeof *mb);
}

static bool measure_alloc(measure_buf *mb, size_t m, size_t n, size_t k) {
  measure_free(mb);
  mb->a = vf_mallocarray(m * k, sizeof(float));
  mb->b = vf_mallocarray(n * k, sizeof(float));
  mb->c = vf_mallocarray(m * n, sizeof(float));
  if (!mb->a || !mb->b || !mb->c) return false;
  for (size_t i = 0; i < m * k; i++)
    mb->a[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  for (size_t i = 0; i < n * k; i++)
    mb->b[i] = (float)((i * 40503u) % 997) * 1e-3f - 0.5f;
  return true;
}

static double time_once(size_t m, size_t n, size_t k, const measure_buf *mb) {
  double t0 = vf_now();
  vf_sgemm_nt(m, n, k, mb->a, k, mb->b, k, mb->c, n);
  return vf_now() - t0;
}

/* vf_blas_measure(): see util.h. */
vf_status vf_blas_measure(int threads, size_t m, size_t n, size_t k, double seconds,
                          double *gflops, vf_error *err) {
  *gflops = 0;
  vf_status st = vf_blas_require(err);
  if (st != VF_OK) return st;
  bool pick = m == 0 || n == 0 || k == 0;
  if (pick) m = n = k = 256;
  measure_buf mb = {NULL, NULL, NULL};
  int saved = 0;
  if (g_blas.sgemm && g_blas.get_threads) {
    saved = g_blas.get_threads();
    g_blas.set_threads(threads < 1 ? 1 : threads);
  }
  double best = -1;
  for (;;) {
    if (!measure_alloc(&mb, m, n, k)) {
      st = vf_error_set(err, VF_ENOMEM, "sgemm measurement: out of memory for %zu x %zu x %zu",
                        m, n, k);
      goto out;
    }
    best = time_once(m, n, k, &mb); /* also the warm-up */
    if (!pick || best >= 0.01 || m >= 2048) break;
    m = n = k = m * 2;
  }
  double t0 = vf_now();
  for (int rep = 0; rep < 2 || vf_now() - t0 < seconds; rep++) {
    double t = time_once(m, n, k, &mb);
    if (t < best) best = t;
  }
  *gflops = best > 0 ? 2.0 * (double)m * (double)n * (double)k / best * 1e-9 : 0;
out:
  if (saved > 0) g_blas.set_threads(saved);
  measure_free(&mb);
  return st;
}
