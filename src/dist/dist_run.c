/*
 * dist_run.c — load-dist and brute-force-dist: plan, write the run directory, prepare, drive
 * the engine (dist_engine.c), finalize; --status and --finalize of an existing run.
 *
 * Shard configs are written from the resolved config (every default applied, paths made
 * absolute so a worker's working directory does not matter), as YAML the config parser reads
 * back: strings double-quoted with `$` written `$$` (the parser expands variables in every
 * value), and each secret written as the `${VAR}` reference it was read from (see dist.h).
 * Every config written is parsed back before anything is submitted.
 *
 * The driver plans the corpus once (issue 15): one corpus_plan of the config's files gives the
 * manifest's rows and shards and then serves prepare (ld_options.plan) and the finalize count,
 * so each footer is read once by the driver and once by the worker whose share holds the file.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "vforge/eval.h"
#include "vforge/format.h"
#include "vforge/index.h"
#include "vforge/load.h"
#include "vforge/store.h"

/* ------------------------------------------------------------ shard YAML */

typedef struct yw {
  const vf_config *cfg;
  char *text; /* the CONFIG file's text (raw `${VAR}` references), NULL when unknown */
  size_t len;
  const char *const *secrets;
  size_t nsecret;
  bool *handled;
  vf_buf *b;
  vf_error *err;
} yw;

/* index of the secret path that covers `path` (equal, or a key path above it), -1 if none */
static int secret_of(const yw *w, const char *path) {
  for (size_t i = 0; i < w->nsecret; i++) {
    size_t n = strlen(w->secrets[i]);
    if (strncmp(path, w->secrets[i], n) == 0 && (path[n] == 0 || path[n] == '.' || path[n] == '['))
      return (int)i;
  }
  return -1;
}

/* `raw` is exactly `${NAME}` or `${NAME:-...}`: NAME into name[] */
static bool var_ref(const char *raw, char *name, size_t cap) {
  if (!raw || raw[0] != '$' || raw[1] != '{') return false;
  size_t i = 2, n = 0;
  if (!((raw[i] >= 'A' && raw[i] <= 'Z') || (raw[i] >= 'a' && raw[i] <= 'z') || raw[i] == '_')) return false;
  while ((raw[i] >= 'A' && raw[i] <= 'Z') || (raw[i] >= 'a' && raw[i] <= 'z') || raw[i] == '_' ||
         (raw[i] >= '0' && raw[i] <= '9')) {
    if (n + 1 >= cap) return false;
    name[n++] = raw[i++];
  }
  name[n] = 0;
  size_t len = strlen(raw);
  if (raw[i] == '}') return i + 1 == len;
  return raw[i] == ':' && raw[i + 1] == '-' && raw[len - 1] == '}';
}

static vf_status yq(yw *w, const char *s, bool expand_escape) {
  vf_status st = VF_OK;
  VF_TRY(vf_buf_append(w->b, "\"", 1, w->err));
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      VF_TRY(vf_buf_printf(w->b, w->err, "\\%c", *p));
    else if (*p < 0x20 || *p == 0x7f)
      VF_TRY(vf_buf_printf(w->b, w->err, "\\x%02x", *p));
    else if (*p == '$' && expand_escape)
      VF_TRY(vf_buf_append(w->b, "$$", 2, w->err));
    else
      VF_TRY(vf_buf_append(w->b, p, 1, w->err));
  }
  VF_TRY(vf_buf_append(w->b, "\"", 1, w->err));
out:
  return st;
}

/* `<indent>key: value\n`, the value a string at config key path `path` */
static vf_status ystr(yw *w, int indent, const char *key, const char *path, const char *v) {
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(w->b, w->err, "%*s", indent, ""));
  if (key) VF_TRY(yq(w, key, false));
  VF_TRY(vf_buf_append(w->b, key ? ": " : "- ", 2, w->err));
  int si = secret_of(w, path);
  if (si >= 0) {
    char *raw = NULL;
    char name[256];
    if (w->text) VF_TRY(vf_config_raw_scalar(w->text, w->len, w->cfg->name, path, &raw, w->err));
    const char *env = raw && var_ref(raw, name, sizeof name) ? getenv(name) : NULL;
    bool ok = env && strcmp(env, v) == 0;
    free(raw);
    size_t ua, un;
    if (!ok)
      VF_FAIL(vf_error_set(w->err, VF_ECONFIG, "%s: %s is a secret%s, and load-dist passes a secret "
                           "to its workers only by reference: write it as a whole `${VAR}` value "
                           "(e.g. api_key: ${QDRANT_API_KEY}) with VAR set in the environment",
                           w->cfg->name, path,
                           vf_url_userinfo(v, &ua, &un) ? " (a URL with a password)" : ""));
    w->handled[si] = true;
    VF_TRY(vf_buf_printf(w->b, w->err, "\"${%s}\"\n", name));
  } else {
    VF_TRY(yq(w, v, true));
    VF_TRY(vf_buf_append(w->b, "\n", 1, w->err));
  }
out:
  return st;
}

static const char *kind_name(corpus_vec_kind k) {
  return k == CORPUS_VEC_SPARSE ? "sparse" : k == CORPUS_VEC_MULTI ? "multivector" : "dense";
}

/* The config as YAML with `files` as its file_list (all: NULL/-1 shard). */
static vf_status shard_yaml(yw *w, const dist_manifest *m, int shard, const char *store_path,
                            const char *id_root) {
  const vf_config *c = w->cfg;
  char path[1024];
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(w->b, w->err,
                       "# vforge run %s: %s%d of %d. Written by vforge; secrets are ${VAR}\n"
                       "# references, read from the worker's environment.\nvectors:\n",
                       m->run_id, shard < 0 ? "every shard, " : "shard ",
                       shard < 0 ? m->num_shards : shard, m->num_shards));
  for (size_t i = 0; i < c->nvectors; i++) {
    const vf_cfg_vector *v = &c->vectors[i];
    VF_TRY(vf_buf_append(w->b, "  ", 2, w->err));
    VF_TRY(yq(w, v->name, false));
    VF_TRY(vf_buf_printf(w->b, w->err, ":\n    type: %s\n    distance: %s\n", kind_name(v->kind),
                         idx_metric_name(v->distance)));
    if (v->kind == CORPUS_VEC_MULTI && v->max_sim)
      VF_TRY(vf_buf_printf(w->b, w->err, "    comparator: max_sim\n"));
    snprintf(path, sizeof path, "vectors.%s.column", v->name);
    if (v->column) VF_TRY(ystr(w, 4, "column", path, v->column));
  }
  VF_TRY(vf_buf_printf(w->b, w->err, "datasource:\n  file_list:\n"));
  for (size_t i = 0; i < m->nfiles; i++) {
    if (shard >= 0 && dist_shard_of(i, m->num_shards) != shard) continue;
    VF_TRY(ystr(w, 4, NULL, "datasource.file_list", m->files[i].uri));
  }
  const char *idx = c->datasource.id_expression ? c->datasource.id_expression : VF_CONFIG_DEFAULT_ID_EXPRESSION;
  VF_TRY(ystr(w, 2, "id_expression", "datasource.id_expression", idx));
  if (c->datasource.npayload_fields > 0) VF_TRY(vf_buf_printf(w->b, w->err, "  payload_fields:\n"));
  for (size_t i = 0; i < c->datasource.npayload_fields; i++) {
    snprintf(path, sizeof path, "datasource.payload_fields.%s", c->datasource.payload_fields[i].key);
    VF_TRY(ystr(w, 4, c->datasource.payload_fields[i].key, path, c->datasource.payload_fields[i].column));
  }
  if (id_root) VF_TRY(ystr(w, 2, "id_root", "datasource.id_root", id_root));
  if (c->datasource.binary_as_string) VF_TRY(vf_buf_printf(w->b, w->err, "  binary_as_string: true\n"));
  const vf_cfg_vectorstore *vs = &c->vectorstore;
  VF_TRY(vf_buf_printf(w->b, w->err, "vectorstore:\n  type: %s\n",
                       vs->type == VF_CFG_STORE_QDRANT ? "qdrant" : "local"));
  if (store_path) VF_TRY(ystr(w, 2, "path", "vectorstore.path", store_path));
  if (vs->url) VF_TRY(ystr(w, 2, "url", "vectorstore.url", vs->url));
  if (vs->api_key) VF_TRY(ystr(w, 2, "api_key", "vectorstore.api_key", vs->api_key));
  VF_TRY(ystr(w, 2, "collection_name", "vectorstore.collection_name", vs->collection_name));
  if (vs->type == VF_CFG_STORE_QDRANT) /* issue 18: the workers' transport */
    VF_TRY(vf_buf_printf(w->b, w->err, "  prefer_grpc: %s\n  grpc_port: %" PRId64
                         "\n  grpc_max_message_mb: %" PRId64 "\n",
                         vs->prefer_grpc ? "true" : "false", vs->grpc_port, vs->grpc_max_message_mb));
  if (vs->params_json && strcmp(vs->params_json, "{}") != 0) {
    if (strchr(vs->params_json, '$'))
      VF_FAIL(vf_error_set(w->err, VF_ECONFIG, "%s: vectorstore.params holds a '$', which load-dist "
                           "cannot write into a worker config", c->name));
    if (secret_of(w, "vectorstore.params") >= 0)
      VF_FAIL(vf_error_set(w->err, VF_ECONFIG, "%s: vectorstore.params holds a secret, which "
                           "load-dist cannot pass to its workers", c->name));
    /* a JSON object is a YAML flow mapping */
    VF_TRY(vf_buf_printf(w->b, w->err, "  params: %s\n", vs->params_json));
  }
  const vf_cfg_loader *L = &c->loader;
  VF_TRY(vf_buf_printf(w->b, w->err,
                       "loader:\n  batch_size: %" PRId64 "\n  prefetch_size: %" PRId64
                       "\n  concurrency: %" PRId64 "\n  retries: %" PRId64 "\n  wait: %s\n"
                       "  skip_bad_rows: %s\n",
                       L->batch_size, L->prefetch_size, L->concurrency, L->retries,
                       L->wait ? "true" : "false", L->skip_bad_rows ? "true" : "false"));
out:
  return st;
}

/* ------------------------------------------------------------------ helpers */

/* The manifest's files and shards, from the corpus plan (`plan`, over `files`: measured here,
 * kept by the caller for the stages that follow).  A load run leaves the files without rows out
 * (no shard gets only empty files, and no worker reads them), a brute-force run keeps them (its
 * workers split the whole discovered list themselves). */
static vf_status plan_files(dist_manifest *m, const corpus_files *files, corpus_plan *plan,
                            bool drop_empty, int *num_shards, vf_error *err) {
  if (files->n == 0) return vf_error_set(err, VF_ENOTFOUND, "the corpus has no files");
  vf_status st = VF_OK;
  VF_TRY(corpus_plan_measure(plan, err));
  size_t nkeep = files->n - (drop_empty ? plan->empty : 0);
  if (nkeep == 0)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "every file of the corpus (%zu) is empty: nothing to load",
                         files->n));
  if ((size_t)*num_shards > nkeep) {
    vf_log(VF_LOG_WARN, "%d shards requested but the corpus has %zu files%s: using %zu shards",
           *num_shards, nkeep, drop_empty && plan->empty ? " with rows" : "", nkeep);
    *num_shards = (int)nkeep;
  }
  m->files = vf_calloc(nkeep, sizeof *m->files);
  m->shards = vf_calloc((size_t)*num_shards, sizeof *m->shards);
  if (!m->files || !m->shards) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (size_t i = 0; i < files->n; i++) {
    if (drop_empty && corpus_plan_skips(plan, i)) continue;
    dm_file *f = &m->files[m->nfiles];
    f->uri = vf_strdup(files->files[i].uri);
    f->key = vf_strdup(files->files[i].key);
    f->rows = plan->rows[i];
    dm_shard *h = &m->shards[dist_shard_of(m->nfiles, *num_shards)];
    m->nfiles++; /* counted before the check: dm_free frees what it holds */
    h->files++;
    h->rows += f->rows;
    m->expected_rows += f->rows;
    if (!f->uri || !f->key) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
out:
  m->num_shards = *num_shards; /* also when planning failed, as it always was */
  return st;
}

/* Create <runs>/<run_id>/ and its subdirectories; fills m->run_id, run_dir, created. */
static vf_status make_run_dir(dist_manifest *m, const char *runs_dir, const char *name, vf_error *err) {
  char id[160];
  vf_status st = dist_run_id(name, id, sizeof id, err);
  if (st != VF_OK) return st;
  char *def = runs_dir ? NULL : dm_default_runs_dir();
  const char *base = runs_dir ? runs_dir : def;
  if (!base) return vf_error_set(err, VF_EUSAGE, "HOME is not set: pass --runs-dir DIR");
  char *abs = dm_abs_path(base);
  free(def);
  if (!abs) return vf_error_set(err, VF_ENOMEM, "out of memory");
  char *p = NULL;
  size_t n = strlen(abs) + strlen(id) + 2;
  m->run_dir = vf_malloc(n);
  m->run_id = vf_strdup(id);
  VF_TRY(vf_mkdir_p(abs, 0700, err));
  if (!m->run_dir || !m->run_id) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  snprintf(m->run_dir, n, "%s/%s", abs, id);
  if (mkdir(m->run_dir, 0700) != 0)
    VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot create the run directory: %s", m->run_dir, VF_STRERROR(errno)));
  static const char *const subs[] = {"shards", "state", "out", "done", "logs"};
  for (int i = 0; i < 5; i++) {
    p = dm_path(m, subs[i]);
    if (!p) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    if (mkdir(p, 0700) != 0) VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot create: %s", p, VF_STRERROR(errno)));
    free(p);
    p = NULL;
  }
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char ts[32];
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  m->created = vf_strdup(ts);
  m->state = vf_strdup("planned");
  if (!m->created || !m->state) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
out:
  free(p);
  free(abs);
  return st;
}

static vf_status write_text(const dist_manifest *m, const char *rel, const vf_buf *b, vf_error *err) {
  char *p = dm_path(m, rel);
  if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
  vf_status st = vf_atomic_write_file(p, b->data ? (const char *)b->data : "", b->len, err);
  free(p);
  return st;
}

static vf_status read_all(const char *path, char **out, size_t *len, vf_error *err) {
  *out = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return vf_error_set(err, VF_ENOTFOUND, "%s: cannot open: %s", path, VF_STRERROR(errno));
  vf_buf b;
  vf_buf_init(&b, VF_CONFIG_MAX_BYTES + 1);
  char chunk[65536];
  size_t n;
  vf_status st = VF_OK;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) VF_TRY(vf_buf_append(&b, chunk, n, err));
  VF_TRY(vf_buf_append(&b, "", 1, err));
  *len = b.len - 1;
  *out = (char *)vf_buf_take(&b, &n);
out:
  fclose(f);
  if (st != VF_OK) vf_buf_free(&b);
  return st;
}

static int resolve_engine(const vf_config *cfg, const dist_options *o) {
  if (o->engine >= 0) return o->engine;
  return cfg && cfg->dispatch.engine == VF_CFG_ENGINE_LOCAL ? DIST_ENGINE_LOCAL : DIST_ENGINE_SLURM;
}

static de_resources resources_of(const vf_config *cfg) {
  de_resources r = {0};
  if (cfg) {
    r.cpus = cfg->resources.cpus;
    r.memory_gb = cfg->resources.memory_gb;
    r.partition = cfg->resources.partition;
    r.time = cfg->resources.time;
  }
  return r;
}

/* Build the display command of a dry run (or the local engine's equivalent). */
static vf_status submit_command(dist_manifest *m, const de_resources *res, vf_error *err) {
  free(m->submit_command);
  m->submit_command = NULL;
  if (m->engine == DIST_ENGINE_SLURM) {
    int *all = vf_calloc((size_t)m->num_shards, sizeof *all);
    if (!all) return vf_error_set(err, VF_ENOMEM, "out of memory");
    for (int s = 0; s < m->num_shards; s++) all[s] = s;
    char **argv = NULL;
    vf_status st = de_sbatch_argv(m, res, all, m->num_shards, &argv, err);
    free(all);
    if (st != VF_OK) return st;
    m->submit_command = de_argv_show(argv);
    de_argv_free(argv);
  } else {
    char *script = dm_path(m, "worker.sh");
    char *argv[] = {"sh", script, m->run_dir, NULL};
    char *shown = script ? de_argv_show(argv) : NULL;
    size_t n = shown ? strlen(shown) + 96 : 0;
    m->submit_command = shown ? vf_malloc(n) : NULL;
    if (m->submit_command)
      snprintf(m->submit_command, n, "SLURM_ARRAY_TASK_ID=<0..%d> %s  (local engine, one process per shard)",
               m->num_shards - 1, shown);
    free(shown);
    free(script);
  }
  return m->submit_command ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------ finalize */

/* enable indexing, wait, count exactly (into *count).  The vectors' dimensions come from `plan`
 * (the driver's plan of cfg's files) or, when NULL, from a plan of cfg's files made here. */
static vf_status count_indexed(const vf_config *cfg, corpus_plan *plan, double timeout_s,
                               uint64_t *count, vf_error *err) {
  corpus_files files = {0};
  corpus_plan own = {0};
  size_t nv = cfg->nvectors;
  store_vector_spec *vspec = NULL;
  corpus_vec_source *vsrc = NULL;
  store *h = NULL;
  vf_status st = VF_OK;
  if (!plan) {
    VF_TRY(vf_config_files(cfg, &files, err));
    if (files.n == 0) VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: no files", cfg->name));
    VF_TRY(corpus_plan_init(&own, &files, err));
    plan = &own;
  }
  vspec = vf_calloc(nv + 1, sizeof *vspec);
  vsrc = vf_calloc(nv + 1, sizeof *vsrc);
  if (!vspec || !vsrc) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (size_t i = 0; i < nv; i++) {
    const vf_cfg_vector *v = &cfg->vectors[i];
    corpus_distance dist = vf_config_vector_distance(cfg, v);
    vsrc[i] = (corpus_vec_source){v->name, v->kind, dist, v->column};
    vspec[i] = (store_vector_spec){v->name, v->kind, dist, 0};
    if (v->kind == CORPUS_VEC_DENSE || v->kind == CORPUS_VEC_MULTI)
      VF_TRY(corpus_plan_probe_dim(plan, &vsrc[i], &vspec[i].dim, err));
  }
  store_config sc;
  store_config_from(cfg, &sc);
  sc.recreate = false;
  sc.vectors = vspec;
  sc.nvectors = (int)nv;
  sc.must_exist = true; /* prepared by the driver: finalize only verifies */
  VF_TRY(store_open(&sc, &h, err));
  VF_TRY(store_ensure_collection(h, err));
  VF_TRY(store_enable_indexing(h, err));
  VF_TRY(store_wait_indexed(h, timeout_s > 0 ? timeout_s : 3600, err));
  VF_TRY(store_count(h, true, count, err));
out:
  store_close(h);
  free(vspec);
  free(vsrc);
  corpus_plan_free(&own);
  corpus_files_free(&files);
  return st;
}

/* count_indexed (over `plan`, or NULL); the collection must hold exactly the corpus rows */
static vf_status finalize_load(const vf_config *cfg, corpus_plan *plan, dist_manifest *m,
                               double timeout_s, vf_error *err) {
  double t0 = vf_now();
  uint64_t count = 0;
  vf_status st = count_indexed(cfg, plan, timeout_s, &count, err);
  if (st != VF_OK) return st;
  m->stored = count;
  m->seconds += vf_now() - t0;
  if (count != m->expected_rows) {
    m->verified = false;
    vf_error e2;
    (void)dm_set_state(m, "failed", &e2);
    return vf_error_set(err, VF_EIO, "collection '%s' holds %" PRIu64 " points but the corpus has %" PRIu64
                        " rows%s (run %s)", cfg->vectorstore.collection_name, count, m->expected_rows,
                        count < m->expected_rows ? ": points were lost, rows were skipped, or ids repeat "
                        "in the corpus" : ": the collection held other points before", m->run_dir);
  }
  m->verified = true;
  vf_log(VF_LOG_INFO, "collection '%s' holds %" PRIu64 " points = the corpus rows", cfg->vectorstore.collection_name, count);
  return dm_set_state(m, "finalized", err);
}

static vf_status finalize_bf(dist_manifest *m, vf_error *err) {
  double t0 = vf_now();
  corpus_files files = {0};
  eval_bf_opts o = {0};
  o.queries = m->bf_queries;
  o.k = m->bf_k;
  o.column = m->bf_column;
  o.output = m->bf_output;
  eval_bf_result r = {0};
  vf_status st = VF_OK;
  VF_TRY(corpus_discover(m->bf_uri, m->bf_id_root, &files, err));
  VF_TRY(eval_brute_force_merge(&files, &o, &r, err));
  free(m->bf_output);
  m->bf_output = r.path;
  r.path = NULL;
  m->seconds += vf_now() - t0;
  VF_TRY(dm_set_state(m, "finalized", err));
out:
  corpus_files_free(&files);
  free(r.path);
  return st;
}

/* ------------------------------------------------------------------ load */

static vf_status check_distributable(const vf_config *cfg, vf_error *err) {
  const char *name = cfg->name ? cfg->name : "config";
  if (cfg->datasource.form == VF_CFG_DS_DATASET)
    return vf_error_set(err, VF_EUNSUPPORTED, "%s: `type: dataset` datasources cannot be loaded by "
                        "this build (parquet corpora only)", name);
  if (!cfg->vectorstore.collection_name || !cfg->vectorstore.collection_name[0])
    return vf_error_set(err, VF_ECONFIG, "%s: vectorstore.collection_name is required to load", name);
  const char *idx = cfg->datasource.id_expression ? cfg->datasource.id_expression : VF_CONFIG_DEFAULT_ID_EXPRESSION;
  corpus_idexpr *e = NULL;
  vf_status st = corpus_idexpr_parse(idx, &e, err);
  if (st != VF_OK) return st;
  bool det = corpus_idexpr_deterministic(e);
  corpus_idexpr_free(e);
  if (!det)
    return vf_error_set(err, VF_EUSAGE, "%s: id_expression '%s' makes random ids (uuid()); load-dist "
                        "needs ids that a resubmitted worker makes again", name, idx);
  if (dist_idexpr_needs_global_row(idx))
    return vf_error_set(err, VF_EUSAGE, "%s: id_expression '%s' uses the global `row`, which depends "
                        "on how files are split; load-dist needs ids from the file and its rows "
                        "(e.g. vf_point_id(filename, file_row_number))", name, idx);
  return VF_OK;
}

static vf_status init_common(dist_manifest *m, const dist_options *o, const char *dflt_name,
                             const char *cfg_name, const corpus_files *files, corpus_plan *plan,
                             int num_shards, vf_error *err) {
  int ns = num_shards;
  m->max_attempts = o->max_attempts > 0 ? o->max_attempts : DIST_DEFAULT_MAX_ATTEMPTS;
  vf_status st = make_run_dir(m, o->runs_dir, o->run_name ? o->run_name : cfg_name ? cfg_name : dflt_name, err);
  if (st != VF_OK) return st;
  return plan_files(m, files, plan, m->kind == DIST_KIND_LOAD, &ns, err);
}

/* Shard s's config (written, then parsed back now rather than in a worker) and its worker's argv,
 * into *argv (the buffer w->b is reused). */
static vf_status write_shard(yw *w, const dist_manifest *m, int s, const char *store_path,
                             const char *id_root, const char *bin, char ***argv) {
  vf_error *err = w->err;
  char rel[64], stdir[64];
  snprintf(rel, sizeof rel, "shards/%03d.yaml", s);
  snprintf(stdir, sizeof stdir, "state/%03d", s);
  char *yaml = NULL, *sd = NULL;
  vf_config check;
  memset(&check, 0, sizeof check);
  vf_status st = VF_OK;
  vf_buf_reset(w->b);
  VF_TRY(shard_yaml(w, m, s, store_path, id_root));
  VF_TRY(write_text(m, rel, w->b, err));
  yaml = dm_path(m, rel);
  sd = dm_path(m, stdir);
  if (!yaml || !sd) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(vf_config_load(yaml, &check, err));
  *argv = vf_calloc(12, sizeof **argv);
  if (!*argv) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  const char *a[] = {bin, "load", "load", yaml, "--resume", "--no-manage-indexing", "--state-dir", sd, "--json"};
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
    if (!((*argv)[i] = vf_strdup(a[i]))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
out:
  if (st != VF_OK && st != VF_ENOMEM)
    vf_error_prefix(err, "internal: the shard config vforge wrote does not load: ");
  vf_config_free(&check);
  free(yaml);
  free(sd);
  return st;
}

static vf_status write_configs(dist_manifest *m, const vf_config *cfg, const dist_options *o,
                               char ****argvs_out, vf_error *err) {
  yw w = {0};
  w.cfg = cfg;
  w.err = err;
  w.secrets = vf_config_secret_paths(cfg, &w.nsecret);
  w.handled = vf_calloc(w.nsecret + 1, sizeof *w.handled);
  char *store_path = NULL, *id_root = NULL, *bin = NULL;
  char ***argvs = NULL;
  vf_buf b;
  VF_BUF_INIT(&b, DIST_MAX_MANIFEST);
  w.b = &b;
  vf_status st = VF_OK;
  if (!w.handled) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  if (o->config_path) VF_TRY(read_all(o->config_path, &w.text, &w.len, err));
  const vf_cfg_vectorstore *vs = &cfg->vectorstore;
  if (vs->type == VF_CFG_STORE_LOCAL) {
    store_path = dm_abs_path(vs->path ? vs->path : VF_CONFIG_DEFAULT_STORE_PATH);
    if (!store_path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
  if (cfg->datasource.id_root) {
    id_root = strstr(cfg->datasource.id_root, "://") ? vf_strdup(cfg->datasource.id_root)
                                                     : dm_abs_path(cfg->datasource.id_root);
    if (!id_root) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
  /* config.json: the resolved config, secrets masked */
  VF_TRY(vf_config_render_json(cfg, &b, err));
  VF_TRY(vf_buf_append(&b, "\n", 1, err));
  VF_TRY(write_text(m, "config.json", &b, err));
  vf_buf_reset(&b);
  VF_TRY(shard_yaml(&w, m, -1, store_path, id_root));
  VF_TRY(write_text(m, "config.yaml", &b, err));
  for (size_t i = 0; i < w.nsecret; i++)
    if (!w.handled[i] && strncmp(w.secrets[i], "dispatch", 8) != 0)
      VF_FAIL(vf_error_set(err, VF_ECONFIG, "%s: %s holds a secret that load-dist would have to write "
                           "into the run directory (only vectorstore values given as a whole `${VAR}` "
                           "reach workers, by reference)", cfg->name, w.secrets[i]));
  bin = o->vforge_bin ? vf_strdup(o->vforge_bin) : dm_self_exe();
  if (!bin) VF_FAIL(vf_error_set(err, VF_EIO, "cannot find the vforge binary (/proc/self/exe)"));
  argvs = vf_calloc((size_t)m->num_shards + 1, sizeof *argvs);
  if (!argvs) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (int s = 0; s < m->num_shards; s++) VF_TRY(write_shard(&w, m, s, store_path, id_root, bin, &argvs[s]));
out:
  vf_buf_free(&b);
  free(bin);
  free(store_path);
  free(id_root);
  free(w.text);
  free(w.handled);
  *argvs_out = argvs;
  return st;
}

static void argvs_free(char ***argvs, int n) {
  for (int s = 0; argvs && s < n; s++) de_argv_free(argvs[s]);
  free(argvs);
}

/* A run directory whose planning failed holds nothing worth keeping: remove what we made. */
static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static void discard_run_dir(dist_manifest *m) {
  if (m->run_dir && m->state) /* only a directory this call made completely */
    (void)nftw(m->run_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  free(m->run_id); /* no report of a run that is gone */
  m->run_id = NULL;
}

/* The slurm engine needs sbatch, squeue and scontrol on PATH: checked before anything is
 * prepared, so a machine without Slurm fails at once. */
static vf_status check_engine(const dist_manifest *m, vf_error *err) {
  if (m->engine != DIST_ENGINE_SLURM) return VF_OK;
  static const char *const tools[] = {"sbatch", "squeue", "scontrol"};
  const char *path = getenv("PATH");
  for (int t = 0; t < 3; t++) {
    bool found = false;
    for (const char *p = path ? path : ""; !found && *p;) {
      size_t n = strcspn(p, ":");
      char buf[4096];
      if (n > 0 && n + strlen(tools[t]) + 2 < sizeof buf) {
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, tools[t]);
        found = access(buf, X_OK) == 0;
      }
      p += n + (p[n] == ':');
    }
    if (!found)
      return vf_error_set(err, VF_EUSAGE, "the slurm engine needs `%s` on PATH (is Slurm installed "
                          "here?); use --engine local to run the workers on this machine", tools[t]);
  }
  return VF_OK;
}

static int parallel_of(const dist_options *o) {
  return o->parallel > 0 ? o->parallel : vf_cpu_available();
}

/* The workers of a planned (or resumed) run: `prepare` first when asked (load runs; the collection
 * of cfg, its dimensions from `plan`, the driver's plan of cfg's files, when not NULL), then
 * "running" and the engine.  m->seconds is set when they end; the manifest then says
 * "workers-done", or "failed" when they did not all finish. */
static vf_status drive_workers(dist_manifest *m, const vf_config *prepare, corpus_plan *plan,
                               const de_resources *res, const dist_options *o, bool resume,
                               double seconds0, double t0, vf_error *err) {
  char *sd = NULL;
  vf_status st = VF_OK;
  free(m->submit_command); /* the real command replaces a dry run's preview */
  m->submit_command = NULL;
  if (prepare) {
    ld_options lo;
    ld_options_default(&lo);
    sd = dm_path(m, "state");
    lo.state_dir = sd;
    lo.plan = plan;
    ld_report lr;
    if (!sd) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    VF_TRY(ld_prepare(prepare, &lo, &lr, err));
  }
  VF_TRY(dm_set_state(m, "running", err));
  VF_TRY(de_drive(m, res, o ? parallel_of(o) : 1, o ? o->poll_s : 1, resume, err));
out:
  free(sd);
  m->seconds = seconds0 + vf_now() - t0;
  if (st == VF_OK) return dm_set_state(m, "workers-done", err);
  vf_error e2;
  (void)dm_set_state(m, "failed", &e2);
  return st;
}

/* drive_workers, then finalize (a load run: the collection of cfg; a brute-force run: the merge);
 * the manifest is written at the end with the run's seconds, whatever happened.  `plan`: the
 * driver's one plan of cfg's files, which prepare and finalize read (NULL: each plans). */
static vf_status run_workers(dist_manifest *m, const vf_config *cfg, corpus_plan *plan,
                             bool prepare, const de_resources *res, const dist_options *o,
                             bool resume, double seconds0, double t0, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(drive_workers(m, prepare ? cfg : NULL, plan, res, o, resume, seconds0, t0, err));
  if (m->kind == DIST_KIND_LOAD) VF_TRY(finalize_load(cfg, plan, m, o ? o->wait_timeout_s : 0, err));
  else VF_TRY(finalize_bf(m, err));
out:
  m->seconds = seconds0 + vf_now() - t0;
  vf_error e3;
  (void)dm_write(m, &e3);
  return st;
}

/* A load run's directory: the manifest, the shard configs and the worker script, and the engine
 * checked unless it is a dry run.  A run directory it cannot complete is removed again.  The
 * config's files and their plan go to *files and *plan (zeroed by the caller; the caller frees
 * them), which the run's prepare and finalize then read: the driver plans once. */
static vf_status plan_load(const vf_config *cfg, const dist_options *o, const de_resources *res,
                           dist_manifest *m, corpus_files *files, corpus_plan *plan,
                           vf_error *err) {
  char ***argvs = NULL;
  vf_status st = VF_OK;
  int ns = o->num_shards > 0 ? o->num_shards : cfg->dispatch.num_shards > 0 ? (int)cfg->dispatch.num_shards : 1;
  m->engine = (dist_engine)resolve_engine(cfg, o);
  VF_TRY(check_distributable(cfg, err));
  if (ns < 1 || ns > DIST_MAX_SHARDS)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "the number of shards must be 1..%d, got %d", DIST_MAX_SHARDS, ns));
  VF_TRY(vf_config_files(cfg, files, err));
  if (files->n > 0) VF_TRY(corpus_plan_init(plan, files, err));
  VF_TRY(init_common(m, o, "load", cfg->dispatch.run_name, files, plan, ns, err));
  m->collection = vf_strdup(cfg->vectorstore.collection_name);
  m->store = vf_strdup(cfg->vectorstore.type == VF_CFG_STORE_QDRANT ? "qdrant" : "local");
  VF_TRY(write_configs(m, cfg, o, &argvs, err));
  VF_TRY(de_write_worker(m, (char *const *const *)argvs, err));
  m->res_cpus = res->cpus;
  m->res_memory_gb = res->memory_gb;
  m->res_partition = res->partition ? vf_strdup(res->partition) : NULL;
  m->res_time = res->time ? vf_strdup(res->time) : NULL;
  VF_TRY(submit_command(m, res, err));
  VF_TRY(dm_write(m, err));
  if (!o->dry_run) VF_TRY(check_engine(m, err));
out:
  argvs_free(argvs, m->num_shards);
  if (st != VF_OK) discard_run_dir(m);
  return st;
}

vf_status dist_load(const vf_config *cfg, const dist_options *o, dist_report *rep, vf_error *err) {
  double t0 = vf_now();
  dist_manifest m;
  memset(&m, 0, sizeof m);
  m.kind = DIST_KIND_LOAD;
  de_resources res = resources_of(cfg);
  corpus_files files = {0};
  corpus_plan plan = {0}; /* the run's one plan: run directory, prepare, finalize */
  vf_status st = VF_OK;
  VF_TRY(plan_load(cfg, o, &res, &m, &files, &plan, err));
  if (!o->dry_run) {
    vf_log(VF_LOG_INFO, "run %s: %zu files, %" PRIu64 " rows in %d shards (%s engine)", m.run_dir,
           m.nfiles, m.expected_rows, m.num_shards, m.engine == DIST_ENGINE_SLURM ? "slurm" : "local");
    VF_TRY(run_workers(&m, cfg, &plan, true, &res, o, false, 0, t0, err));
  }
out:
  if (m.run_id && m.state && m.shards) {
    vf_error e4;
    (void)dm_to_report(&m, rep, &e4);
  }
  dm_free(&m);
  corpus_plan_free(&plan);
  corpus_files_free(&files);
  return st;
}

/* ------------------------------------------------------------------ status / finalize */

static vf_status open_run(const char *runs_dir, const char *run, dist_manifest *m, vf_error *err) {
  vf_status st;
  char *dir = dm_resolve(runs_dir, run, err, &st);
  if (!dir) return st;
  st = dm_read(dir, m, err);
  free(dir);
  if (st != VF_OK) return st;
  for (int s = 0; s < m->num_shards; s++)
    if (m->shards[s].state != DIST_DONE && dm_done_marker(m, s)) m->shards[s].state = DIST_DONE;
  return VF_OK;
}

vf_status dist_status(const char *runs_dir, const char *run, dist_report *rep, vf_error *err) {
  dist_manifest m;
  memset(&m, 0, sizeof m); /* freed also when no manifest was read */
  vf_status st = VF_OK;
  VF_TRY(open_run(runs_dir, run, &m, err));
  VF_TRY(dm_to_report(&m, rep, err));
out:
  dm_free(&m);
  return st;
}

vf_status dist_finalize(const char *runs_dir, const char *run, const dist_options *o,
                        dist_report *rep, vf_error *err) {
  dist_manifest m;
  vf_status st = open_run(runs_dir, run, &m, err);
  if (st != VF_OK) return st;
  char *yaml = NULL;
  vf_config cfg;
  memset(&cfg, 0, sizeof cfg);
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_TEXT);
  int missing = 0;
  for (int s = 0; s < m.num_shards; s++)
    if (m.shards[s].state != DIST_DONE) {
      if (missing++ < 20) (void)vf_buf_printf(&b, err, "%s%d (%s)", missing > 1 ? ", " : "", s,
                                              dist_state_name(m.shards[s].state));
    }
  (void)vf_buf_append(&b, "", 1, err);
  if (missing)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "run %s: %d of %d shards have no done marker: %s", m.run_dir,
                         missing, m.num_shards, b.data ? (const char *)b.data : ""));
  if (m.kind == DIST_KIND_LOAD) {
    yaml = dm_path(&m, "config.yaml");
    if (!yaml) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    VF_TRY(vf_config_load(yaml, &cfg, err));
    VF_TRY(finalize_load(&cfg, NULL, &m, o ? o->wait_timeout_s : 0, err));
  } else {
    VF_TRY(finalize_bf(&m, err));
  }
out:
  vf_buf_free(&b);
  vf_config_free(&cfg);
  free(yaml);
  vf_error e2;
  if (m.run_id) (void)dm_to_report(&m, rep, &e2);
  dm_free(&m);
  return st;
}

vf_status dist_resume(const char *runs_dir, const char *run, const dist_options *o,
                      dist_report *rep, vf_error *err) {
  double t0 = vf_now();
  dist_manifest m;
  vf_status st = open_run(runs_dir, run, &m, err);
  if (st != VF_OK) return st;
  double before = m.seconds;
  char *yaml = NULL, *sd = NULL;
  vf_config cfg;
  memset(&cfg, 0, sizeof cfg);
  corpus_files files = {0};
  corpus_plan plan = {0}; /* a load run's one plan: prepare (when still to do) and finalize */
  if (o && o->max_attempts > 0) m.max_attempts = o->max_attempts;
  if (m.max_attempts < 1) m.max_attempts = DIST_DEFAULT_MAX_ATTEMPTS;
  if (m.state && strcmp(m.state, "finalized") == 0) {
    vf_log(VF_LOG_INFO, "run %s is already finalized", m.run_dir);
    goto out;
  }
  if (m.kind == DIST_KIND_LOAD) {
    /* the secrets' variables must be set now, not after the workers ran */
    yaml = dm_path(&m, "config.yaml");
    if (!yaml) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    VF_TRY(vf_config_load(yaml, &cfg, err));
  }
  VF_TRY(check_engine(&m, err));
  if (m.kind == DIST_KIND_LOAD && m.state && strcmp(m.state, "planned") == 0) {
    /* a --dry-run (or a driver that ended before preparing): prepare now, and finalize reads
     * the same plan */
    VF_TRY(vf_config_files(&cfg, &files, err));
    if (files.n > 0) VF_TRY(corpus_plan_init(&plan, &files, err));
    ld_options lo;
    ld_options_default(&lo);
    sd = dm_path(&m, "state");
    lo.state_dir = sd;
    lo.plan = plan.live ? &plan : NULL;
    ld_report lr;
    if (!sd) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    VF_TRY(ld_prepare(&cfg, &lo, &lr, err));
  }
  de_resources res = {m.res_cpus, m.res_memory_gb, m.res_partition, m.res_time};
  VF_TRY(run_workers(&m, &cfg, plan.live ? &plan : NULL, false, &res, o, true, before, t0, err));
out:
  free(yaml);
  free(sd);
  corpus_plan_free(&plan);
  corpus_files_free(&files);
  vf_config_free(&cfg);
  vf_error e4;
  (void)dm_to_report(&m, rep, &e4);
  dm_free(&m);
  return st;
}

/* ------------------------------------------------------------------ brute force */

/* A brute-force run's directory: the manifest and the worker script, and the engine checked
 * unless it is a dry run.  A run directory it cannot complete is removed again. */
static vf_status plan_bf(const dist_bf_options *bf, const dist_options *o, const de_resources *res,
                         dist_manifest *m, vf_error *err) {
  corpus_files files = {0};
  corpus_plan plan = {0}; /* the manifest's rows; the workers plan their own shares */
  char *bin = NULL;
  char ***argvs = NULL;
  vf_status st = VF_OK;
  int ns = o->num_shards;
  if (ns < 1 || ns > DIST_MAX_SHARDS)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "--num-shards must be 1..%d, got %d", DIST_MAX_SHARDS, ns));
  corpus_distance metric;
  if (bf->metric && !idx_metric_parse(bf->metric, &metric))
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "unknown --metric '%s' (cosine, dot, euclid, manhattan)", bf->metric));
  if (bf->k < 1 || bf->k > 100000) VF_FAIL(vf_error_set(err, VF_EUSAGE, "-k must be 1..100000"));
  bool local_uri = bf->uri && !strstr(bf->uri, "://");
  m->bf_uri = local_uri ? dm_abs_path(bf->uri) : vf_strdup(bf->uri ? bf->uri : "");
  m->bf_queries = dm_abs_path(bf->queries ? bf->queries : "");
  m->bf_k = bf->k;
  m->bf_metric = bf->metric ? vf_strdup(bf->metric) : NULL;
  m->bf_column = bf->column ? vf_strdup(bf->column) : NULL;
  m->bf_id_root = bf->id_root ? dm_abs_path(bf->id_root) : NULL;
  m->bf_output = bf->output ? dm_abs_path(bf->output) : NULL;
  if (!m->bf_uri || !m->bf_queries) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  if (access(m->bf_queries, R_OK) != 0)
    VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: cannot read the queries file: %s", m->bf_queries, VF_STRERROR(errno)));
  VF_TRY(corpus_discover(m->bf_uri, m->bf_id_root, &files, err));
  if (files.n > 0) VF_TRY(corpus_plan_init(&plan, &files, err));
  VF_TRY(init_common(m, o, "bf", NULL, &files, &plan, ns, err));
  bin = o->vforge_bin ? vf_strdup(o->vforge_bin) : dm_self_exe();
  if (!bin) VF_FAIL(vf_error_set(err, VF_EIO, "cannot find the vforge binary (/proc/self/exe)"));
  argvs = vf_calloc((size_t)m->num_shards + 1, sizeof *argvs);
  if (!argvs) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (int s = 0; s < m->num_shards; s++) {
    char k[16], n[16], r[16];
    snprintf(k, sizeof k, "%" PRIu32, bf->k);
    snprintf(n, sizeof n, "%d", m->num_shards);
    snprintf(r, sizeof r, "%d", s);
    const char *a[20];
    size_t na = 0;
    a[na++] = bin, a[na++] = "brute-force", a[na++] = m->bf_uri, a[na++] = "--queries";
    a[na++] = m->bf_queries, a[na++] = "-k", a[na++] = k, a[na++] = "--num-jobs", a[na++] = n;
    a[na++] = "--job-rank", a[na++] = r;
    if (m->bf_metric) a[na++] = "--metric", a[na++] = m->bf_metric;
    if (m->bf_column) a[na++] = "--column", a[na++] = m->bf_column;
    if (m->bf_id_root) a[na++] = "--id-root", a[na++] = m->bf_id_root;
    argvs[s] = vf_calloc(na + 1, sizeof *argvs[s]);
    if (!argvs[s]) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    for (size_t i = 0; i < na; i++)
      if (!(argvs[s][i] = vf_strdup(a[i]))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
  VF_TRY(de_write_worker(m, (char *const *const *)argvs, err));
  VF_TRY(submit_command(m, res, err));
  VF_TRY(dm_write(m, err));
  if (!o->dry_run) VF_TRY(check_engine(m, err));
out:
  corpus_plan_free(&plan);
  corpus_files_free(&files);
  free(bin);
  argvs_free(argvs, m->num_shards);
  if (st != VF_OK) discard_run_dir(m);
  return st;
}

vf_status dist_brute_force(const dist_bf_options *bf, const dist_options *o, dist_report *rep,
                           vf_error *err) {
  double t0 = vf_now();
  dist_manifest m;
  memset(&m, 0, sizeof m);
  m.kind = DIST_KIND_BRUTE_FORCE;
  m.engine = o->engine == DIST_ENGINE_LOCAL ? DIST_ENGINE_LOCAL : DIST_ENGINE_SLURM;
  de_resources res = {0};
  vf_status st = VF_OK;
  VF_TRY(plan_bf(bf, o, &res, &m, err));
  if (!o->dry_run) VF_TRY(run_workers(&m, NULL, NULL, false, &res, o, false, 0, t0, err));
out:
  if (m.run_id && m.state && m.shards) {
    vf_error e4;
    (void)dm_to_report(&m, rep, &e4);
  }
  dm_free(&m);
  return st;
}
