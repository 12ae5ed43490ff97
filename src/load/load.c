/*
 * load.c — the load subcommands: prepare, load, finalize, run (issue 3 "The runner";
 * DESIGN.md "Configuration", "Point ids").
 *
 * Everything a subcommand needs from the config is resolved once (ld_setup): the sorted file
 * list, every file's row count from its footer (prefix sums give the corpus-wide row base of
 * each file, so the `row` id expression does not depend on how files are split over workers),
 * the vector dimensions (read from the first file, because a store needs them at open), the
 * record spec and the store config.  A caller that runs several stages in one process passes its
 * plan of the config's files (ld_options.plan; load-dist's driver plans once for the run
 * directory, prepare and finalize), and the setup reads and completes that one instead of
 * resolving and planning the files again.  This worker's files are file i of the sorted list for
 * i % num_jobs == job_rank, and --offset / -n cut this worker's row stream.
 *
 * The expected point count of finalize comes from the workers' state files (each records the
 * points it sent for rows before its checkpoint, counted once across resumes), and prepare
 * records in prepare.json whether it found the collection empty — only then can finalize
 * demand equality rather than >=.
 *
 * Prepare also records the corpus in the store (store_set_record: the files md5 and the id
 * expression, "load in progress"; an empty identity when the collection already held points of
 * another corpus) and finalize marks the load finished, so `bench` can refuse ground truth of
 * another corpus and warn about a collection whose load never finished (issue 14).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "vforge/format.h"

#define LD_DEFAULT_CHECKPOINT_BATCHES 1024
#define LD_DEFAULT_CHECKPOINT_SECONDS 5.0

void ld_options_default(ld_options *o) {
  memset(o, 0, sizeof *o);
  o->num_jobs = 1;
  o->manage_indexing = true;
  o->skip_bad_rows = -1;
  o->wait_timeout_s = 3600; /* finalize gives up waiting for a ready (green) index after an hour */
}

/* ------------------------------------------------------------------- setup */

typedef struct ld_setup {
  corpus_files own_files; /* resolved here when the caller passed no plan */
  corpus_plan own_plan;
  const corpus_files *files; /* &own_files, or the files of the caller's plan (ld_options.plan) */
  corpus_plan *plan;     /* rows per file, empty files skipped, where dimensions come from:
                            &own_plan, or the caller's (borrowed) */
  uint64_t *rows, *base; /* per file (when rows were read; rows is plan->rows) */
  uint64_t total_rows;
  store_vector_spec *vspec;
  corpus_vec_source *vsrc;
  int nvec;
  corpus_payload_source *psrc;
  int npay;
  corpus_idexpr *idexpr;
  const char *id_text;
  corpus_record_spec rspec;
  store_config scfg;
  char *state_dir;
  const char **vparams;         /* issue 18: per vector, the config's store parameters */
  store_payload_field *pkinds;  /* issue 18: what the payload columns hold (payload indexes) */
} ld_setup;

static void setup_free(ld_setup *s) {
  corpus_plan_free(&s->own_plan);
  corpus_files_free(&s->own_files);
  free(s->base);
  free(s->vspec);
  free(s->vsrc);
  free(s->psrc);
  free(s->vparams);
  free(s->pkinds);
  corpus_idexpr_free(s->idexpr);
  free(s->state_dir);
  memset(s, 0, sizeof *s);
}

static char *state_dir_of(const vf_config *cfg, const ld_options *o) {
  if (o->state_dir) return vf_strdup(o->state_dir);
  const char *root = cfg->vectorstore.path ? cfg->vectorstore.path : VF_CONFIG_DEFAULT_STORE_PATH;
  size_t n = strlen(root) + strlen(cfg->vectorstore.collection_name) + 16;
  char *d = vf_malloc(n);
  if (d) snprintf(d, n, "%s/%s/_load", root, cfg->vectorstore.collection_name);
  return d;
}

static vf_status check_common(const vf_config *cfg, const ld_options *o, vf_error *err) {
  if (!cfg->vectorstore.collection_name || !cfg->vectorstore.collection_name[0])
    return vf_error_set(err, VF_ECONFIG, "%s: vectorstore.collection_name is required to load",
                        cfg->name ? cfg->name : "config");
  if (strchr(cfg->vectorstore.collection_name, '/'))
    return vf_error_set(err, VF_ECONFIG, "%s: vectorstore.collection_name '%s' must not contain '/'",
                        cfg->name ? cfg->name : "config", cfg->vectorstore.collection_name);
  if (o->num_jobs < 1 || o->job_rank < 0 || o->job_rank >= o->num_jobs)
    return vf_error_set(err, VF_EUSAGE, "--job-rank must be in 0..%d (--num-jobs %d), got %d",
                        o->num_jobs - 1, o->num_jobs, o->job_rank);
  if (!o->store_type && cfg->vectorstore.type == VF_CFG_STORE_QDRANT &&
      (!cfg->vectorstore.url || !cfg->vectorstore.url[0]))
    return vf_error_set(err, VF_ECONFIG, "%s: vectorstore.url is required for type qdrant",
                        cfg->name ? cfg->name : "config");
  const vf_cfg_loader *L = &cfg->loader;
  if (L->batch_size < 1 || L->prefetch_size < 1 || L->concurrency < 1 || L->concurrency > 1024 ||
      L->retries < 0)
    return vf_error_set(err, VF_ECONFIG, "%s: loader settings out of range (batch_size, "
                        "prefetch_size >= 1, concurrency 1..1024, retries >= 0)",
                        cfg->name ? cfg->name : "config");
  return VF_OK;
}

/* Rows of every file (the plan measures them: footers, dataset parts as measured) and the
 * corpus-wide row base of each (for the `row` id expression). */
static vf_status read_rows(ld_setup *s, vf_error *err) {
  size_t n = s->files->n;
  vf_status st = corpus_plan_measure(s->plan, err);
  if (st != VF_OK) return st;
  s->rows = s->plan->rows;
  s->base = vf_calloc(n + 1, sizeof *s->base);
  if (!s->base) return vf_error_set(err, VF_ENOMEM, "out of memory");
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    s->base[i] = total;
    total += s->rows[i];
  }
  s->total_rows = total;
  return VF_OK;
}

static vf_status setup_init(const vf_config *cfg, const ld_options *o, bool need_rows,
                            ld_setup *s, vf_error *err) {
  memset(s, 0, sizeof *s);
  vf_status st = check_common(cfg, o, err);
  if (st != VF_OK) return st;
  s->state_dir = state_dir_of(cfg, o);
  if (!s->state_dir) return vf_error_set(err, VF_ENOMEM, "out of memory");
  /* state-file temporaries of killed loads on this host */
  if ((st = vf_temp_sweep(s->state_dir, NULL, NULL, err)) != VF_OK) return st;
  if (o->plan) { /* the caller's plan of cfg's files (load-dist's driver): nothing resolved again */
    s->files = o->plan->files;
    s->plan = o->plan;
  } else {
    s->files = &s->own_files;
    s->plan = &s->own_plan;
    st = vf_config_files(cfg, &s->own_files, err);
    if (st != VF_OK) return st;
  }
  if (s->files->n == 0) return vf_error_set(err, VF_ENOTFOUND, "%s: the datasource has no files", cfg->name);
  if (!o->plan) {
    st = corpus_plan_init(&s->own_plan, &s->own_files, err);
    if (st != VF_OK) return st;
  }
  s->id_text = cfg->datasource.id_expression ? cfg->datasource.id_expression
                                             : VF_CONFIG_DEFAULT_ID_EXPRESSION;
  st = corpus_idexpr_parse(s->id_text, &s->idexpr, err);
  if (st != VF_OK) return st;
  if (o->resume && !corpus_idexpr_deterministic(s->idexpr))
    return vf_error_set(err, VF_EUSAGE, "--resume needs deterministic ids, but id_expression '%s' "
                        "makes random ones (uuid())", s->id_text);
  if (cfg->nvectors > 1000 || cfg->datasource.npayload_fields > 100000)
    return vf_error_set(err, VF_ECONFIG, "%s: too many vectors or payload fields", cfg->name);
  s->nvec = (int)cfg->nvectors;
  s->npay = (int)cfg->datasource.npayload_fields;
  s->vspec = vf_calloc((size_t)s->nvec + 1, sizeof *s->vspec);
  s->vsrc = vf_calloc((size_t)s->nvec + 1, sizeof *s->vsrc);
  s->psrc = vf_calloc((size_t)s->npay + 1, sizeof *s->psrc);
  if (!s->vspec || !s->vsrc || !s->psrc) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (int i = 0; i < s->npay; i++) {
    s->psrc[i].key = cfg->datasource.payload_fields[i].key;
    s->psrc[i].column = cfg->datasource.payload_fields[i].column;
  }
  for (int i = 0; i < s->nvec; i++) {
    const vf_cfg_vector *v = &cfg->vectors[i];
    if (!v->column && v->source != VF_CFG_COMPONENT_VECTORS)
      return vf_error_set(err, VF_ECONFIG, "%s:%d: vector '%s' needs a column", cfg->name, v->line, v->name);
    corpus_distance dist = vf_config_vector_distance(cfg, v);
    s->vsrc[i] = (corpus_vec_source){v->name, v->kind, dist, v->column};
    s->vspec[i] = (store_vector_spec){v->name, v->kind, dist, 0};
    if (v->kind == CORPUS_VEC_DENSE || v->kind == CORPUS_VEC_MULTI)
      st = corpus_plan_probe_dim(s->plan, &s->vsrc[i], &s->vspec[i].dim, err);
    if (st != VF_OK) {
      vf_error_prefix(err, "%s: ", cfg->name);
      return st;
    }
  }
  s->rspec.vectors = s->vsrc;
  s->rspec.nvectors = s->nvec;
  s->rspec.payload = s->psrc;
  s->rspec.npayload = s->npay;
  s->rspec.id = s->idexpr;
  s->rspec.skip_bad_rows = o->skip_bad_rows < 0 ? cfg->loader.skip_bad_rows : o->skip_bad_rows != 0;
  s->rspec.binary_as_string = cfg->datasource.binary_as_string;
  store_config_from(cfg, &s->scfg); /* type, path, url, api_key, params, transport, ... */
  if (o->store_type) s->scfg.type = o->store_type;
  s->scfg.vectors = s->vspec;
  s->scfg.nvectors = s->nvec;
  /* issue 18: per-vector parameters, payload column kinds (for payload indexes) */
  s->vparams = vf_calloc((size_t)s->nvec + 1, sizeof *s->vparams);
  if (!s->vparams) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (int i = 0; i < s->nvec; i++)
    s->vparams[i] = cfg->vectors[i].params_json;
  s->scfg.vector_params_json = s->vparams;
  if (cfg->vectorstore.type == VF_CFG_STORE_QDRANT && s->npay > 0 && cfg->vectorstore.params_json &&
      strstr(cfg->vectorstore.params_json, "\"payload_indexes\"")) {
    s->pkinds = vf_calloc((size_t)s->npay, sizeof *s->pkinds);
    if (!s->pkinds) return vf_error_set(err, VF_ENOMEM, "out of memory");
    st = store_payload_kinds(&s->files->files[0], s->psrc, s->npay, s->pkinds, err);
    if (st != VF_OK) return st;
    s->scfg.payload_fields = s->pkinds;
    s->scfg.npayload_fields = s->npay;
  }
  /* everything the config names is checked before any command touches the store: the
   * vectors' columns were read by the probe; the payload and id columns are checked on the
   * first file with rows (the plan found it) */
  for (size_t i = 0; i < s->files->n; i++) {
    if (s->plan->rows[i] == CORPUS_PLAN_UNMEASURED || s->plan->rows[i] == 0) continue;
    corpus_records *r = NULL;
    st = corpus_records_open(&s->files->files[i], &s->rspec, 0, &r, err);
    corpus_records_close(r);
    if (st != VF_OK) {
      vf_error_prefix(err, "%s: ", cfg->name);
      return st;
    }
    break;
  }
  if (need_rows) {
    st = read_rows(s, err);
    if (st != VF_OK) return st;
  }
  if (need_rows && o->offset > 0) {
    uint64_t stream = 0; /* this worker's rows */
    for (size_t i = 0; i < s->files->n; i++)
      if (i % (size_t)o->num_jobs == (size_t)o->job_rank) stream += s->rows[i];
    if (o->offset >= stream)
      return vf_error_set(err, VF_EUSAGE, "--offset %" PRIu64 " is past the end: this worker's "
                          "files hold %" PRIu64 " rows (rows 0..%" PRIu64 ")", o->offset, stream,
                          stream ? stream - 1 : 0);
  }
  return VF_OK;
}

static char *state_file(const char *dir, int rank, int num_jobs) {
  size_t n = strlen(dir) + 48;
  char *p = vf_malloc(n);
  if (p) snprintf(p, n, "%s/rank%03d-of-%03d.json", dir, rank, num_jobs);
  return p;
}

vf_status ld_state_path(const vf_config *cfg, const ld_options *o, char **out, vf_error *err) {
  *out = NULL;
  vf_status st = check_common(cfg, o, err);
  if (st != VF_OK) return st;
  char *dir = state_dir_of(cfg, o);
  *out = dir ? state_file(dir, o->job_rank, o->num_jobs) : NULL;
  free(dir);
  return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
}

static bool path_exists(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0;
}

/* The lock a running worker holds on its state: <state>.lock, flock'ed for the whole load and
 * holding "pid P on host H".  The kernel drops it when the process ends (kill -9 included), so
 * only a load that still runs blocks a second one of the same worker — which is then told
 * which process holds it instead of being sent to --resume into a running load.  *fd (>= 0)
 * is the lock; close it to release. */
static vf_status lock_state(const char *dir, const char *state_path, int *fd, vf_error *err) {
  *fd = -1;
  vf_status st = vf_mkdir_p(dir, 0777, err);
  if (st != VF_OK) return st;
  size_t n = strlen(state_path) + 8;
  char *lp = vf_malloc(n);
  if (!lp) return vf_error_set(err, VF_ENOMEM, "out of memory");
  snprintf(lp, n, "%s.lock", state_path);
  int f = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (f < 0) {
    st = vf_error_set(err, VF_EIO, "%s: %s", lp, VF_STRERROR(errno));
  } else if (flock(f, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char who[128] = "";
    ssize_t r = pread(f, who, sizeof who - 1, 0);
    who[r > 0 ? r : 0] = 0;
    who[strcspn(who, "\n")] = 0;
    st = e == EWOULDBLOCK
             ? vf_error_set(err, VF_EUSAGE, "%s: this worker's load is running now (%s holds %s): "
                            "wait for it to finish, or stop it and then continue with --resume",
                            state_path, who[0] ? who : "another process", lp)
             : vf_error_set(err, VF_EIO, "%s: flock: %s", lp, VF_STRERROR(e));
    close(f);
  } else {
    char host[256] = "?", who[320];
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = 0;
    int wl = snprintf(who, sizeof who, "pid %ld on host %s\n", (long)getpid(), host);
    if (ftruncate(f, 0) != 0 || pwrite(f, who, (size_t)wl, 0) != wl)
      vf_log(VF_LOG_DEBUG, "%s: cannot record this process in the lock: %s", lp, VF_STRERROR(errno));
    *fd = f;
  }
  free(lp);
  return st;
}

/* ------------------------------------------------------------------- prepare */

/* The corpus record of a prepared collection (store.h): this corpus when the collection is empty
 * or already records it, else an unknown identity (points of several corpora). */
static vf_status record_corpus(const ld_setup *s, store *h, uint64_t stored, vf_error *err) {
  store_record have, rec;
  memset(&rec, 0, sizeof rec);
  bool found = false;
  vf_status st = store_get_record(h, &have, &found, err);
  if (st == VF_EUNSUPPORTED) return VF_OK; /* discard */
  if (st != VF_OK) return st;
  corpus_files_md5(s->files, rec.files_md5);
  snprintf(rec.id_expression, sizeof rec.id_expression, "%s", s->id_text);
  rec.files = s->files->n;
  rec.rows = s->total_rows;
  if (stored > 0 && !(found && strcmp(have.files_md5, rec.files_md5) == 0 &&
                      corpus_id_expression_same(have.id_expression, rec.id_expression))) {
    vf_log(VF_LOG_INFO, "collection '%s' already holds %" PRIu64 " points of another or an unknown "
           "corpus: it records no single corpus (bench checks ground truth by looking its ids up)",
           s->scfg.collection_name, stored);
    rec.files_md5[0] = 0;
  }
  rec.load_finished = false;
  return store_set_record(h, &rec, err);
}

/* finalize: mark the recorded load finished (nothing when the collection records none) */
static vf_status record_finished(store *h, vf_error *err) {
  store_record rec;
  bool found = false;
  vf_status st = store_get_record(h, &rec, &found, err);
  if (st == VF_EUNSUPPORTED) return VF_OK;
  if (st != VF_OK || !found || rec.load_finished) return st;
  rec.load_finished = true;
  return store_set_record(h, &rec, err);
}

static vf_status prepare_with(const ld_setup *s, bool recreate, ld_report *rep, vf_error *err) {
  double t0 = vf_now();
  store_config sc = s->scfg;
  sc.recreate = recreate;
  store *h = NULL;
  char *p = NULL;
  uint64_t before = 0;
  vf_status st = VF_OK;
  VF_TRY(store_open(&sc, &h, err));
  VF_TRY(store_ensure_collection(h, err));
  VF_TRY(store_count(h, true, &before, err));
  VF_TRY(store_defer_indexing(h, err));
  VF_TRY(record_corpus(s, h, before, err));
  store_close(h);
  h = NULL;
  VF_TRY(vf_mkdir_p(s->state_dir, 0777, err));
  /* prepare.json: whether the collection was empty (finalize may then demand equality) */
  size_t n = strlen(s->state_dir) + 16;
  p = vf_malloc(n);
  char text[64];
  int tl = snprintf(text, sizeof text, "{\"empty\":%s}\n", before == 0 ? "true" : "false");
  if (!p) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  snprintf(p, n, "%s/prepare.json", s->state_dir);
  VF_TRY(vf_atomic_write_file(p, text, (size_t)tl, err));
out:
  store_close(h);
  free(p);
  if (rep) {
    rep->seconds = vf_now() - t0;
    rep->stored = before;
  }
  if (st == VF_OK) /* after the report's time, as it always was */
    vf_log(VF_LOG_INFO, "collection '%s' ready (%" PRIu64 " points stored), indexing deferred",
           s->scfg.collection_name, before);
  return st;
}

vf_status ld_prepare(const vf_config *cfg, const ld_options *o, ld_report *rep, vf_error *err) {
  ld_setup s;
  memset(rep, 0, sizeof *rep);
  vf_status st = VF_OK;
  VF_TRY(setup_init(cfg, o, false, &s, err)); /* s is set up (to free) even when it fails */
  VF_TRY(prepare_with(&s, s.scfg.recreate, rep, err));
out:
  setup_free(&s);
  return st;
}

/* ---------------------------------------------------------------------- load */

static bool in_list(char *const *list, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i], key) == 0) return true;
  return false;
}

static vf_status load_with(const vf_config *cfg, const ld_options *o, const ld_setup *s,
                           ld_report *rep, vf_error *err) {
  memset(rep, 0, sizeof *rep);
  const vf_cfg_loader *L = &cfg->loader;
  char *path = state_file(s->state_dir, o->job_rank, o->num_jobs);
  if (!path) return vf_error_set(err, VF_ENOMEM, "out of memory");
  ld_state prev;
  memset(&prev, 0, sizeof prev);
  /* this worker's files and the row range of each (rep->empty_files counts the files of this
   * plan with no rows, also when the load fails, and then before the plan is filled) */
  size_t nmine = 0;
  for (size_t i = 0; i < s->files->n; i++) nmine += i % (size_t)o->num_jobs == (size_t)o->job_rank;
  ld_plan_file *plan = vf_calloc(nmine + 1, sizeof *plan);
  vf_status st = ld_state_read(path, &prev, err);
  bool have_prev = true;
  if (st == VF_ENOTFOUND) { /* a first run */
    have_prev = false;
    st = VF_OK;
    vf_error_clear(err);
  }
  if (st != VF_OK) goto out;
  if (have_prev && !o->resume)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: a load state exists (an earlier load of this worker did "
                         "not finish or was not finalized): pass --resume to continue it, or remove "
                         "the file to start over", path));
  if (have_prev &&
      (prev.num_jobs != o->num_jobs || prev.job_rank != o->job_rank || prev.offset != o->offset ||
       prev.limit != o->limit || strcmp(prev.id_expression, s->id_text) != 0))
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: the load state was written with different settings "
                         "(num_jobs %d, job_rank %d, offset %" PRIu64 ", limit %" PRIu64
                         ", id_expression '%s'): resume with the same ones, or remove the file",
                         path, prev.num_jobs, prev.job_rank, prev.offset, prev.limit, prev.id_expression));
  if (!plan) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  uint64_t stream = 0, rows_total = 0;
  uint64_t lo = o->offset, hi = o->limit ? o->offset + o->limit : UINT64_MAX;
  if (hi < lo) hi = UINT64_MAX;
  size_t k = 0;
  bool current_found = !have_prev || !prev.current_key;
  for (size_t i = 0; i < s->files->n; i++) {
    if (i % (size_t)o->num_jobs != (size_t)o->job_rank) continue;
    ld_plan_file *pf = &plan[k++];
    pf->file = &s->files->files[i];
    pf->global_base = s->base[i];
    pf->rows = s->rows[i];
    uint64_t b = lo > stream ? lo - stream : 0;
    uint64_t e = hi - stream < pf->rows ? hi - stream : pf->rows;
    if (hi <= stream) e = 0;
    if (b > pf->rows) b = pf->rows;
    if (e < b) e = b;
    pf->row_begin = b;
    pf->row_end = e;
    stream += pf->rows;
    if (have_prev && in_list(prev.completed, prev.ncompleted, pf->file->key)) {
      pf->completed = true;
    } else if (have_prev && prev.current_key && strcmp(prev.current_key, pf->file->key) == 0) {
      current_found = true;
      if (prev.current_row > pf->row_begin) pf->row_begin = prev.current_row;
      if (pf->row_begin > pf->row_end) pf->row_begin = pf->row_end;
    }
    if (!pf->completed) rows_total += pf->row_end - pf->row_begin;
  }
  if (!current_found)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: the file in progress, %s, is not among this worker's "
                         "files any more (did the corpus change?); remove the state to start over",
                         path, prev.current_key));
  if (have_prev) {
    size_t ndone = 0;
    for (size_t i = 0; i < nmine; i++) ndone += plan[i].completed;
    vf_log(VF_LOG_INFO, "resuming: %zu of %zu files done%s%s at row %" PRIu64 ", %" PRIu64
           " points loaded before", ndone, nmine, prev.current_key ? ", " : "",
           prev.current_key ? prev.current_key : "", prev.current_row, prev.points);
  }
  ld_state tmpl;
  memset(&tmpl, 0, sizeof tmpl);
  tmpl.num_jobs = o->num_jobs;
  tmpl.job_rank = o->job_rank;
  tmpl.offset = o->offset;
  tmpl.limit = o->limit;
  tmpl.id_expression = (char *)s->id_text;
  tmpl.files_total = nmine;
  if (have_prev) {
    tmpl.points = prev.points;
    tmpl.skipped_rows = prev.skipped_rows;
    tmpl.current_key = prev.current_key;
    tmpl.current_row = prev.current_row;
  }
  VF_TRY(vf_mkdir_p(s->state_dir, 0777, err));
  /* write the state before the first upsert: from here on a rerun must say --resume */
  if (!have_prev) VF_TRY(ld_state_write(path, &tmpl, err));
  {
    ld_pipeline_cfg pc;
    memset(&pc, 0, sizeof pc);
    pc.store = &s->scfg;
    store_config wcfg = s->scfg;
    wcfg.recreate = false; /* workers never drop the collection */
    pc.store = &wcfg;
    pc.spec = &s->rspec;
    pc.files = plan;
    pc.nfiles = nmine;
    pc.batch_size = L->batch_size;
    pc.prefetch_size = L->prefetch_size > L->batch_size ? L->prefetch_size : L->batch_size;
    pc.concurrency = L->concurrency;
    pc.retries = L->retries;
    pc.checkpoint_batches = o->checkpoint_batches > 0 ? o->checkpoint_batches
                                                      : LD_DEFAULT_CHECKPOINT_BATCHES;
    pc.checkpoint_seconds = o->checkpoint_seconds > 0 ? o->checkpoint_seconds
                                                      : LD_DEFAULT_CHECKPOINT_SECONDS;
    pc.state_path = path;
    pc.state = &tmpl;
    pc.rows_total = rows_total;
    VF_TRY(ld_pipeline_run(&pc, rep, err));
  }
out:
  for (size_t i = 0; plan && i < nmine; i++) rep->empty_files += plan[i].rows == 0;
  free(plan);
  ld_state_free(&prev);
  free(path);
  return st;
}

/* Open the collection (never recreated: other workers may be writing), make sure it exists, and
 * defer its indexing or enable it again. */
static vf_status set_indexing(const ld_setup *s, bool enable, vf_error *err) {
  store_config sc = s->scfg;
  sc.recreate = false;
  store *h = NULL;
  vf_status st = VF_OK;
  VF_TRY(store_open(&sc, &h, err));
  VF_TRY(store_ensure_collection(h, err));
  VF_TRY(enable ? store_enable_indexing(h, err) : store_defer_indexing(h, err));
out:
  store_close(h);
  return st;
}

vf_status ld_load(const vf_config *cfg, const ld_options *o, ld_report *rep, vf_error *err) {
  ld_setup s;
  memset(rep, 0, sizeof *rep);
  int lock = -1;
  char *path = NULL;
  vf_status st = VF_OK;
  VF_TRY(setup_init(cfg, o, true, &s, err)); /* s is set up (to free) even when it fails */
  path = state_file(s.state_dir, o->job_rank, o->num_jobs);
  if (!path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(lock_state(s.state_dir, path, &lock, err));
  /* ensure the collection exists and indexing is deferred */
  if (o->manage_indexing) VF_TRY(set_indexing(&s, false, err));
  VF_TRY(load_with(cfg, o, &s, rep, err));
  if (o->manage_indexing && o->num_jobs == 1) VF_TRY(set_indexing(&s, true, err));
out:
  if (lock >= 0) close(lock);
  free(path);
  setup_free(&s);
  return st;
}

/* ------------------------------------------------------------------ finalize */

static bool rank_name(const char *n, int *rank, int *of) {
  int r, j, used = 0;
  if (sscanf(n, "rank%3d-of-%3d.json%n", &r, &j, &used) != 2 || (size_t)used != strlen(n) || r < 0 ||
      j < 1 || r >= j)
    return false;
  *rank = r;
  *of = j;
  return true;
}

/* sum the points of every worker's state; *found = number of state files */
static vf_status read_states(const char *dir, uint64_t *points, uint64_t *skipped, int *found,
                             vf_error *err) {
  *points = *skipped = 0;
  *found = 0;
  DIR *d = opendir(dir);
  if (!d) return errno == ENOENT ? VF_OK : vf_error_set(err, VF_EIO, "%s: %s", dir, VF_STRERROR(errno));
  struct dirent *de;
  int of_all = -1;
  vf_status st = VF_OK;
  char *p = NULL; /* the state file read now, and what it holds */
  ld_state s;
  memset(&s, 0, sizeof s);
  while ((de = readdir(d)) != NULL) {
    int rank, of;
    if (!rank_name(de->d_name, &rank, &of)) continue;
    size_t n = strlen(dir) + strlen(de->d_name) + 2;
    p = vf_malloc(n);
    if (!p) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    snprintf(p, n, "%s/%s", dir, de->d_name);
    VF_TRY(ld_state_read(p, &s, err));
    if (of_all >= 0 && of != of_all)
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: state files of different --num-jobs (%d and %d) in %s; "
                           "remove the stale ones", p, of_all, of, dir));
    if (!s.done)
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: worker %d of %d has not finished its load (run "
                           "`vforge load load --num-jobs %d --job-rank %d --resume` first)",
                           p, rank, of, of, rank));
    of_all = of;
    *points += s.points;
    *skipped += s.skipped_rows;
    (*found)++;
    ld_state_free(&s);
    free(p);
    p = NULL;
  }
  if (*found > 0 && *found != of_all)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: only %d of %d workers left a load state; load the "
                         "missing ranks before finalize", dir, *found, of_all));
out:
  ld_state_free(&s);
  free(p);
  closedir(d);
  return st;
}

static void remove_states(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    int rank, of;
    size_t nl = strlen(de->d_name);
    bool lock = nl > 5 && strncmp(de->d_name, "rank", 4) == 0 && strcmp(de->d_name + nl - 5, ".lock") == 0;
    if (!lock && !rank_name(de->d_name, &rank, &of) && strcmp(de->d_name, "prepare.json") != 0)
      continue;
    size_t n = strlen(dir) + strlen(de->d_name) + 2;
    char *p = vf_malloc(n);
    if (!p) break;
    snprintf(p, n, "%s/%s", dir, de->d_name);
    unlink(p);
    free(p);
  }
  closedir(d);
  rmdir(dir); /* only when empty */
}

static vf_status finalize_with(const ld_options *o, const ld_setup *s, ld_report *rep,
                               vf_error *err) {
  double t0 = vf_now();
  uint64_t expected = 0, skipped = 0;
  int found = 0;
  vf_status st = read_states(s->state_dir, &expected, &skipped, &found, err);
  if (st != VF_OK) return st;
  size_t n = strlen(s->state_dir) + 16;
  char *pp = vf_malloc(n);
  if (!pp) return vf_error_set(err, VF_ENOMEM, "out of memory");
  snprintf(pp, n, "%s/prepare.json", s->state_dir);
  bool was_empty = false;
  FILE *pf = fopen(pp, "r");
  if (pf) {
    char line[64] = {0};
    if (fgets(line, sizeof line, pf)) was_empty = strncmp(line, "{\"empty\":true}", 14) == 0;
    fclose(pf);
  }
  free(pp);
  store_config sc = s->scfg;
  sc.recreate = false;
  sc.must_exist = true; /* finalize never creates what it should verify */
  store *h = NULL;
  uint64_t count = 0;
  VF_TRY(store_open(&sc, &h, err));
  VF_TRY(store_ensure_collection(h, err));
  VF_TRY(store_enable_indexing(h, err));
  VF_TRY(store_wait_indexed(h, o->wait_timeout_s, err));
  VF_TRY(store_count(h, true, &count, err));
  bool discard = strcmp(store_type(h), "discard") == 0;
  /* the count verified below; only then is the recorded load marked finished */
  bool exact = was_empty && skipped == 0;
  bool count_ok = discard || found == 0 || !(count < expected || (exact && count != expected));
  if (count_ok) VF_TRY(record_finished(h, err));
  store_close(h);
  h = NULL;
  rep->stored = count;
  rep->expected = expected;
  if (discard) {
    vf_log(VF_LOG_INFO, "discard store: nothing to verify");
    remove_states(s->state_dir);
  } else if (found == 0) {
    vf_log(VF_LOG_WARN, "collection '%s' holds %" PRIu64 " points; no load state in %s, so the "
           "count is not verified", s->scfg.collection_name, count, s->state_dir);
  } else {
    if (!count_ok)
      VF_FAIL(vf_error_set(err, VF_EIO, "collection '%s' holds %" PRIu64 " points but the load sent %"
                           PRIu64 " (%s expected)%s", s->scfg.collection_name, count, expected,
                           exact ? "exactly that many" : "at least that many",
                           count < expected ? "; points were lost or ids repeat in the corpus" : ""));
    rep->verified = true;
    vf_log(VF_LOG_INFO, "collection '%s' holds %" PRIu64 " points (load sent %" PRIu64 ")",
           s->scfg.collection_name, count, expected);
    remove_states(s->state_dir);
  }
  rep->finalize_seconds = vf_now() - t0;
  rep->seconds += rep->finalize_seconds;
out:
  store_close(h);
  return st;
}

vf_status ld_finalize(const vf_config *cfg, const ld_options *o, ld_report *rep, vf_error *err) {
  ld_setup s;
  memset(rep, 0, sizeof *rep);
  vf_status st = VF_OK;
  VF_TRY(setup_init(cfg, o, false, &s, err)); /* s is set up (to free) even when it fails */
  VF_TRY(finalize_with(o, &s, rep, err));
out:
  setup_free(&s);
  return st;
}

/* ----------------------------------------------------------------------- run */

vf_status ld_run(const vf_config *cfg, const ld_options *o, ld_report *rep, vf_error *err) {
  memset(rep, 0, sizeof *rep);
  if (o->num_jobs != 1)
    return vf_error_set(err, VF_EUSAGE, "`load run` is one worker; with --num-jobs use `load "
                        "prepare`, `load load` per rank, then `load finalize`");
  double t0 = vf_now();
  ld_setup s;
  char *path = NULL;
  int lock = -1;
  vf_status st = VF_OK;
  VF_TRY(setup_init(cfg, o, true, &s, err)); /* s is set up (to free) even when it fails */
  path = state_file(s.state_dir, o->job_rank, o->num_jobs);
  if (!path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(lock_state(s.state_dir, path, &lock, err));
  bool have_state = path_exists(path);
  if (have_state && !o->resume)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: a load state exists (an earlier load did not finish or "
                         "was not finalized): pass --resume to continue it, or remove the file to "
                         "start over", path));
  /* a resumed run must not drop what the earlier one loaded */
  ld_report prep = {0};
  if (!(o->resume && have_state)) VF_TRY(prepare_with(&s, s.scfg.recreate, &prep, err));
  VF_TRY(load_with(cfg, o, &s, rep, err));
  VF_TRY(finalize_with(o, &s, rep, err));
out:
  rep->seconds = vf_now() - t0;
  double loading = rep->seconds - rep->finalize_seconds;
  rep->points_per_s = loading > 0 ? (double)rep->points / loading : 0;
  if (lock >= 0) close(lock);
  free(path);
  setup_free(&s);
  return st;
}

vf_status ld_report_json(const ld_report *r, vf_buf *out, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(out, err,
                       "{\"points\":%" PRIu64 ",\"files\":%" PRIu64 ",\"bytes_read\":%" PRIu64
                       ",\"seconds\":",
                       r->points, r->files, r->bytes_read));
  VF_TRY(vf_json_f64(out, r->seconds, err));
  VF_TRY(vf_json_raw(out, ",\"points_per_s\":", err));
  VF_TRY(vf_json_f64(out, r->points_per_s, err));
  VF_TRY(vf_json_raw(out, ",\"finalize_seconds\":", err));
  VF_TRY(vf_json_f64(out, r->finalize_seconds, err));
  VF_TRY(vf_buf_printf(out, err, ",\"retries\":%" PRIu64 ",\"skipped_rows\":%" PRIu64
                       ",\"empty_files\":%" PRIu64 "}",
                       r->retries, r->skipped_rows, r->empty_files));
out:
  return st;
}
