/*
 * dist_run.c — load-dist and brute-force-dist: plan, write the run directory, prepare, drive
 * the engine (dist_engine.c), finalize; --status and --finalize of an existing run.
 *
 * Shard configs are written from the resolved config (every default applied, paths made
 * absolute so a worker's working directory does not matter), as YAML the config parser reads
 * back: strings double-quoted with `$` written `$$` (the parser expands variables in every
 * value), and each secret written as the `${VAR}` reference it was read from (see dist.h).
 * Every config written is parsed back before anything is submitted.
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
  vf_status st = vf_buf_append(w->b, "\"", 1, w->err);
  for (const unsigned char *p = (const unsigned char *)s; st == VF_OK && *p; p++) {
    if (*p == '"' || *p == '\\')
      st = vf_buf_printf(w->b, w->err, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f)
      st = vf_buf_printf(w->b, w->err, "\\x%02x", *p);
    else if (*p == '$' && expand_escape)
      st = vf_buf_append(w->b, "$$", 2, w->err);
    else
      st = vf_buf_append(w->b, p, 1, w->err);
  }
  if (st == VF_OK) st = vf_buf_append(w->b, "\"", 1, w->err);
  return st;
}

/* `<indent>key: value\n`, the value a string at config key path `path` */
static vf_status ystr(yw *w, int indent, const char *key, const char *path, const char *v) {
  vf_status st = vf_buf_printf(w->b, w->err, "%*s", indent, "");
  if (st == VF_OK && key) st = yq(w, key, false);
  if (st == VF_OK) st = vf_buf_append(w->b, key ? ": " : "- ", 2, w->err);
  if (st != VF_OK) return st;
  int si = secret_of(w, path);
  if (si >= 0) {
    char *raw = NULL;
    char name[256];
    if (w->text) st = vf_config_raw_scalar(w->text, w->len, w->cfg->name, path, &raw, w->err);
    if (st != VF_OK) return st;
    const char *env = raw && var_ref(raw, name, sizeof name) ? getenv(name) : NULL;
    bool ok = env && strcmp(env, v) == 0;
    free(raw);
    size_t ua, un;
    if (!ok)
      return vf_error_set(w->err, VF_ECONFIG, "%s: %s is a secret%s, and load-dist passes a secret "
                          "to its workers only by reference: write it as a whole `${VAR}` value "
                          "(e.g. api_key: ${QDRANT_API_KEY}) with VAR set in the environment",
                          w->cfg->name, path,
                          vf_url_userinfo(v, &ua, &un) ? " (a URL with a password)" : "");
    w->handled[si] = true;
    st = vf_buf_printf(w->b, w->err, "\"${%s}\"\n", name);
    return st;
  }
  st = yq(w, v, true);
  if (st == VF_OK) st = vf_buf_append(w->b, "\n", 1, w->err);
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
  vf_status st = vf_buf_printf(w->b, w->err,
                               "# vforge run %s: %s%d of %d. Written by vforge; secrets are ${VAR}\n"
                               "# references, read from the worker's environment.\nvectors:\n",
                               m->run_id, shard < 0 ? "every shard, " : "shard ",
                               shard < 0 ? m->num_shards : shard, m->num_shards);
  for (size_t i = 0; st == VF_OK && i < c->nvectors; i++) {
    const vf_cfg_vector *v = &c->vectors[i];
    st = vf_buf_append(w->b, "  ", 2, w->err);
    if (st == VF_OK) st = yq(w, v->name, false);
    if (st == VF_OK)
      st = vf_buf_printf(w->b, w->err, ":\n    type: %s\n    distance: %s\n", kind_name(v->kind),
                         idx_metric_name(v->distance));
    if (st == VF_OK && v->kind == CORPUS_VEC_MULTI && v->max_sim)
      st = vf_buf_printf(w->b, w->err, "    comparator: max_sim\n");
    snprintf(path, sizeof path, "vectors.%s.column", v->name);
    if (st == VF_OK && v->column) st = ystr(w, 4, "column", path, v->column);
  }
  if (st == VF_OK) st = vf_buf_printf(w->b, w->err, "datasource:\n  file_list:\n");
  for (size_t i = 0; st == VF_OK && i < m->nfiles; i++) {
    if (shard >= 0 && dist_shard_of(i, m->num_shards) != shard) continue;
    st = ystr(w, 4, NULL, "datasource.file_list", m->files[i].uri);
  }
  const char *idx = c->datasource.id_expression ? c->datasource.id_expression : VF_CONFIG_DEFAULT_ID_EXPRESSION;
  if (st == VF_OK) st = ystr(w, 2, "id_expression", "datasource.id_expression", idx);
  if (st == VF_OK && c->datasource.npayload_fields > 0)
    st = vf_buf_printf(w->b, w->err, "  payload_fields:\n");
  for (size_t i = 0; st == VF_OK && i < c->datasource.npayload_fields; i++) {
    snprintf(path, sizeof path, "datasource.payload_fields.%s", c->datasource.payload_fields[i].key);
    st = ystr(w, 4, c->datasource.payload_fields[i].key, path, c->datasource.payload_fields[i].column);
  }
  if (st == VF_OK && id_root) st = ystr(w, 2, "id_root", "datasource.id_root", id_root);
  if (st == VF_OK && c->datasource.binary_as_string)
    st = vf_buf_printf(w->b, w->err, "  binary_as_string: true\n");
  const vf_cfg_vectorstore *vs = &c->vectorstore;
  if (st == VF_OK)
    st = vf_buf_printf(w->b, w->err, "vectorstore:\n  type: %s\n",
                       vs->type == VF_CFG_STORE_QDRANT ? "qdrant" : "local");
  if (st == VF_OK && store_path) st = ystr(w, 2, "path", "vectorstore.path", store_path);
  if (st == VF_OK && vs->url) st = ystr(w, 2, "url", "vectorstore.url", vs->url);
  if (st == VF_OK && vs->api_key) st = ystr(w, 2, "api_key", "vectorstore.api_key", vs->api_key);
  if (st == VF_OK) st = ystr(w, 2, "collection_name", "vectorstore.collection_name", vs->collection_name);
  if (st == VF_OK && vs->type == VF_CFG_STORE_QDRANT) /* issue 18: the workers' transport */
    st = vf_buf_printf(w->b, w->err, "  prefer_grpc: %s\n  grpc_port: %" PRId64
                       "\n  grpc_max_message_mb: %" PRId64 "\n",
                       vs->prefer_grpc ? "true" : "false", vs->grpc_port, vs->grpc_max_message_mb);
  if (st == VF_OK && vs->params_json && strcmp(vs->params_json, "{}") != 0) {
    if (strchr(vs->params_json, '$'))
      return vf_error_set(w->err, VF_ECONFIG, "%s: vectorstore.params holds a '$', which load-dist "
                          "cannot write into a worker config", c->name);
    if (secret_of(w, "vectorstore.params") >= 0)
      return vf_error_set(w->err, VF_ECONFIG, "%s: vectorstore.params holds a secret, which "
                          "load-dist cannot pass to its workers", c->name);
    /* a JSON object is a YAML flow mapping */
    st = vf_buf_printf(w->b, w->err, "  params: %s\n", vs->params_json);
  }
  const vf_cfg_loader *L = &c->loader;
  if (st == VF_OK)
    st = vf_buf_printf(w->b, w->err,
                       "loader:\n  batch_size: %" PRId64 "\n  prefetch_size: %" PRId64
                       "\n  concurrency: %" PRId64 "\n  retries: %" PRId64 "\n  wait: %s\n"
                       "  skip_bad_rows: %s\n",
                       L->batch_size, L->prefetch_size, L->concurrency, L->retries,
                       L->wait ? "true" : "false", L->skip_bad_rows ? "true" : "false");
  return st;
}

/* ------------------------------------------------------------------ helpers */

/* The manifest's files and shards.  The corpus plan measures every file; a load run leaves the
 * files without rows out (no shard gets only empty files, and no worker reads them), a
 * brute-force run keeps them (its workers split the whole discovered list themselves). */
static vf_status plan_files(dist_manifest *m, const corpus_files *files, bool drop_empty,
                            int *num_shards, vf_error *err) {
  if (files->n == 0) return vf_error_set(err, VF_ENOTFOUND, "the corpus has no files");
  corpus_plan plan;
  vf_status st = corpus_plan_init(&plan, files, err);
  if (st == VF_OK) st = corpus_plan_measure(&plan, err);
  size_t nkeep = files->n - (drop_empty ? plan.empty : 0);
  if (st == VF_OK && nkeep == 0)
    st = vf_error_set(err, VF_ECORRUPT, "every file of the corpus (%zu) is empty: nothing to load",
                      files->n);
  if (st == VF_OK && (size_t)*num_shards > nkeep) {
    vf_log(VF_LOG_WARN, "%d shards requested but the corpus has %zu files%s: using %zu shards",
           *num_shards, nkeep, drop_empty && plan.empty ? " with rows" : "", nkeep);
    *num_shards = (int)nkeep;
  }
  m->num_shards = *num_shards;
  m->files = st == VF_OK ? vf_calloc(nkeep, sizeof *m->files) : NULL;
  m->shards = st == VF_OK ? vf_calloc((size_t)*num_shards, sizeof *m->shards) : NULL;
  if (st == VF_OK && (!m->files || !m->shards)) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  for (size_t i = 0; st == VF_OK && i < files->n; i++) {
    if (drop_empty && corpus_plan_skips(&plan, i)) continue;
    dm_file *f = &m->files[m->nfiles];
    f->uri = vf_strdup(files->files[i].uri);
    f->key = vf_strdup(files->files[i].key);
    f->rows = plan.rows[i];
    if (!f->uri || !f->key) st = vf_error_set(err, VF_ENOMEM, "out of memory");
    dm_shard *h = &m->shards[dist_shard_of(m->nfiles, *num_shards)];
    m->nfiles++;
    h->files++;
    h->rows += f->rows;
    m->expected_rows += f->rows;
  }
  corpus_plan_free(&plan);
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
  st = vf_mkdir_p(abs, 0700, err);
  size_t n = strlen(abs) + strlen(id) + 2;
  m->run_dir = vf_malloc(n);
  m->run_id = vf_strdup(id);
  if (st == VF_OK && (!m->run_dir || !m->run_id)) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  if (st == VF_OK) {
    snprintf(m->run_dir, n, "%s/%s", abs, id);
    if (mkdir(m->run_dir, 0700) != 0)
      st = vf_error_set(err, VF_EIO, "%s: cannot create the run directory: %s", m->run_dir, VF_STRERROR(errno));
  }
  free(abs);
  static const char *const subs[] = {"shards", "state", "out", "done", "logs"};
  for (int i = 0; st == VF_OK && i < 5; i++) {
    char *p = dm_path(m, subs[i]);
    if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
    if (mkdir(p, 0700) != 0) st = vf_error_set(err, VF_EIO, "%s: cannot create: %s", p, VF_STRERROR(errno));
    free(p);
  }
  if (st != VF_OK) return st;
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char ts[32];
  strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  m->created = vf_strdup(ts);
  m->state = vf_strdup("planned");
  if (st == VF_OK && (!m->created || !m->state)) st = vf_error_set(err, VF_ENOMEM, "out of memory");
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
  while (st == VF_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0) st = vf_buf_append(&b, chunk, n, err);
  fclose(f);
  if (st == VF_OK) st = vf_buf_append(&b, "", 1, err);
  if (st != VF_OK) {
    vf_buf_free(&b);
    return st;
  }
  *len = b.len - 1;
  *out = (char *)vf_buf_take(&b, &n);
  return VF_OK;
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

/* enable indexing, wait, count exactly; the collection must hold exactly the corpus rows */
static vf_status finalize_load(const vf_config *cfg, dist_manifest *m, double timeout_s, vf_error *err) {
  double t0 = vf_now();
  corpus_files files = {0};
  vf_status st = vf_config_files(cfg, &files, err);
  if (st == VF_OK && files.n == 0) st = vf_error_set(err, VF_ENOTFOUND, "%s: no files", cfg->name);
  corpus_plan plan = {0};
  if (st == VF_OK) st = corpus_plan_init(&plan, &files, err);
  size_t nv = cfg->nvectors;
  store_vector_spec *vspec = vf_calloc(nv + 1, sizeof *vspec);
  corpus_vec_source *vsrc = vf_calloc(nv + 1, sizeof *vsrc);
  if (st == VF_OK && (!vspec || !vsrc)) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  for (size_t i = 0; st == VF_OK && i < nv; i++) {
    const vf_cfg_vector *v = &cfg->vectors[i];
    corpus_distance dist = vf_config_vector_distance(cfg, v);
    vsrc[i] = (corpus_vec_source){v->name, v->kind, dist, v->column};
    vspec[i] = (store_vector_spec){v->name, v->kind, dist, 0};
    if (v->kind == CORPUS_VEC_DENSE || v->kind == CORPUS_VEC_MULTI)
      st = corpus_plan_probe_dim(&plan, &vsrc[i], &vspec[i].dim, err);
  }
  store_config sc;
  store_config_from(cfg, &sc);
  sc.recreate = false;
  sc.vectors = vspec;
  sc.nvectors = (int)nv;
  sc.must_exist = true; /* prepared by the driver: finalize only verifies */
  store *h = NULL;
  uint64_t count = 0;
  if (st == VF_OK) st = store_open(&sc, &h, err);
  if (st == VF_OK) st = store_ensure_collection(h, err);
  if (st == VF_OK) st = store_enable_indexing(h, err);
  if (st == VF_OK) st = store_wait_indexed(h, timeout_s > 0 ? timeout_s : 3600, err);
  if (st == VF_OK) st = store_count(h, true, &count, err);
  store_close(h);
  free(vspec);
  free(vsrc);
  corpus_plan_free(&plan);
  corpus_files_free(&files);
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
  vf_status st = corpus_discover(m->bf_uri, m->bf_id_root, &files, err);
  eval_bf_opts o = {0};
  o.queries = m->bf_queries;
  o.k = m->bf_k;
  o.column = m->bf_column;
  o.output = m->bf_output;
  eval_bf_result r = {0};
  if (st == VF_OK) st = eval_brute_force_merge(&files, &o, &r, err);
  corpus_files_free(&files);
  if (st == VF_OK) {
    free(m->bf_output);
    m->bf_output = r.path;
    r.path = NULL;
    m->seconds += vf_now() - t0;
    st = dm_set_state(m, "finalized", err);
  }
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
                             const char *cfg_name, const corpus_files *files, int num_shards,
                             vf_error *err) {
  int ns = num_shards;
  vf_status st = make_run_dir(m, o->runs_dir, o->run_name ? o->run_name : cfg_name ? cfg_name : dflt_name, err);
  if (st == VF_OK) st = plan_files(m, files, m->kind == DIST_KIND_LOAD, &ns, err);
  m->max_attempts = o->max_attempts > 0 ? o->max_attempts : DIST_DEFAULT_MAX_ATTEMPTS;
  return st;
}

static vf_status write_configs(dist_manifest *m, const vf_config *cfg, const dist_options *o,
                               char ****argvs_out, vf_error *err) {
  yw w = {0};
  w.cfg = cfg;
  w.err = err;
  w.secrets = vf_config_secret_paths(cfg, &w.nsecret);
  w.handled = vf_calloc(w.nsecret + 1, sizeof *w.handled);
  vf_status st = w.handled ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
  if (st == VF_OK && o->config_path) st = read_all(o->config_path, &w.text, &w.len, err);
  const vf_cfg_vectorstore *vs = &cfg->vectorstore;
  char *store_path = NULL, *id_root = NULL;
  if (st == VF_OK && vs->type == VF_CFG_STORE_LOCAL) {
    store_path = dm_abs_path(vs->path ? vs->path : VF_CONFIG_DEFAULT_STORE_PATH);
    if (!store_path) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  if (st == VF_OK && cfg->datasource.id_root) {
    id_root = strstr(cfg->datasource.id_root, "://") ? vf_strdup(cfg->datasource.id_root)
                                                     : dm_abs_path(cfg->datasource.id_root);
    if (!id_root) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  vf_buf b;
  VF_BUF_INIT(&b, DIST_MAX_MANIFEST);
  w.b = &b;
  /* config.json: the resolved config, secrets masked */
  if (st == VF_OK) st = vf_config_render_json(cfg, &b, err);
  if (st == VF_OK) st = vf_buf_append(&b, "\n", 1, err);
  if (st == VF_OK) st = write_text(m, "config.json", &b, err);
  vf_buf_reset(&b);
  if (st == VF_OK) st = shard_yaml(&w, m, -1, store_path, id_root);
  if (st == VF_OK) st = write_text(m, "config.yaml", &b, err);
  for (size_t i = 0; st == VF_OK && i < w.nsecret; i++)
    if (!w.handled[i] && strncmp(w.secrets[i], "dispatch", 8) != 0)
      st = vf_error_set(err, VF_ECONFIG, "%s: %s holds a secret that load-dist would have to write "
                        "into the run directory (only vectorstore values given as a whole `${VAR}` "
                        "reach workers, by reference)", cfg->name, w.secrets[i]);
  char *bin = st == VF_OK ? (o->vforge_bin ? vf_strdup(o->vforge_bin) : dm_self_exe()) : NULL;
  if (st == VF_OK && !bin) st = vf_error_set(err, VF_EIO, "cannot find the vforge binary (/proc/self/exe)");
  char ***argvs = st == VF_OK ? vf_calloc((size_t)m->num_shards + 1, sizeof *argvs) : NULL;
  if (st == VF_OK && !argvs) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  for (int s = 0; st == VF_OK && s < m->num_shards; s++) {
    vf_buf_reset(&b);
    st = shard_yaml(&w, m, s, store_path, id_root);
    char rel[64], stdir[64];
    snprintf(rel, sizeof rel, "shards/%03d.yaml", s);
    snprintf(stdir, sizeof stdir, "state/%03d", s);
    if (st == VF_OK) st = write_text(m, rel, &b, err);
    char *yaml = dm_path(m, rel), *sd = dm_path(m, stdir);
    /* parse it back now, not in a worker */
    vf_config check;
    memset(&check, 0, sizeof check);
    if (st == VF_OK && (!yaml || !sd)) st = vf_error_set(err, VF_ENOMEM, "out of memory");
    if (st == VF_OK) st = vf_config_load(yaml, &check, err);
    if (st != VF_OK && st != VF_ENOMEM)
      vf_error_prefix(err, "internal: the shard config vforge wrote does not load: ");
    vf_config_free(&check);
    argvs[s] = vf_calloc(12, sizeof *argvs[s]);
    const char *a[] = {bin, "load", "load", yaml, "--resume", "--no-manage-indexing", "--state-dir", sd, "--json"};
    for (size_t i = 0; st == VF_OK && argvs[s] && i < sizeof a / sizeof a[0]; i++)
      if (!(argvs[s][i] = vf_strdup(a[i]))) st = vf_error_set(err, VF_ENOMEM, "out of memory");
    if (st == VF_OK && !argvs[s]) st = vf_error_set(err, VF_ENOMEM, "out of memory");
    free(yaml);
    free(sd);
  }
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

vf_status dist_load(const vf_config *cfg, const dist_options *o, dist_report *rep, vf_error *err) {
  double t0 = vf_now();
  dist_manifest m;
  memset(&m, 0, sizeof m);
  m.kind = DIST_KIND_LOAD;
  vf_status st = check_distributable(cfg, err);
  int ns = o->num_shards > 0 ? o->num_shards : cfg->dispatch.num_shards > 0 ? (int)cfg->dispatch.num_shards : 1;
  if (st == VF_OK && (ns < 1 || ns > DIST_MAX_SHARDS))
    st = vf_error_set(err, VF_EUSAGE, "the number of shards must be 1..%d, got %d", DIST_MAX_SHARDS, ns);
  m.engine = (dist_engine)resolve_engine(cfg, o);
  corpus_files files = {0};
  if (st == VF_OK) st = vf_config_files(cfg, &files, err);
  if (st == VF_OK)
    st = init_common(&m, o, "load", cfg->dispatch.run_name, &files, ns, err);
  corpus_files_free(&files);
  if (st == VF_OK) {
    m.collection = vf_strdup(cfg->vectorstore.collection_name);
    m.store = vf_strdup(cfg->vectorstore.type == VF_CFG_STORE_QDRANT ? "qdrant" : "local");
  }
  char ***argvs = NULL;
  if (st == VF_OK) st = write_configs(&m, cfg, o, &argvs, err);
  if (st == VF_OK) st = de_write_worker(&m, (char *const *const *)argvs, err);
  argvs_free(argvs, m.num_shards);
  de_resources res = resources_of(cfg);
  m.res_cpus = res.cpus;
  m.res_memory_gb = res.memory_gb;
  m.res_partition = res.partition ? vf_strdup(res.partition) : NULL;
  m.res_time = res.time ? vf_strdup(res.time) : NULL;
  if (st == VF_OK) st = submit_command(&m, &res, err);
  if (st == VF_OK) st = dm_write(&m, err);
  if (st != VF_OK) discard_run_dir(&m);
  if (st == VF_OK && !o->dry_run && (st = check_engine(&m, err)) != VF_OK) discard_run_dir(&m);
  if (st == VF_OK && !o->dry_run) {
    vf_log(VF_LOG_INFO, "run %s: %zu files, %" PRIu64 " rows in %d shards (%s engine)", m.run_dir,
           m.nfiles, m.expected_rows, m.num_shards, m.engine == DIST_ENGINE_SLURM ? "slurm" : "local");
    ld_options lo;
    ld_options_default(&lo);
    char *sd = dm_path(&m, "state");
    lo.state_dir = sd;
    ld_report lr;
    st = sd ? ld_prepare(cfg, &lo, &lr, err) : vf_error_set(err, VF_ENOMEM, "out of memory");
    free(sd);
    free(m.submit_command); /* the real command replaces the preview */
    m.submit_command = NULL;
    if (st == VF_OK) st = dm_set_state(&m, "running", err);
    if (st == VF_OK) st = de_drive(&m, &res, parallel_of(o), o->poll_s, false, err);
    m.seconds = vf_now() - t0;
    if (st == VF_OK) st = dm_set_state(&m, "workers-done", err);
    else {
      vf_error e2;
      (void)dm_set_state(&m, "failed", &e2);
    }
    if (st == VF_OK) st = finalize_load(cfg, &m, o->wait_timeout_s, err);
    m.seconds = vf_now() - t0;
    vf_error e3;
    (void)dm_write(&m, &e3);
  }
  if (m.run_id && m.state && m.shards) {
    vf_error e4;
    (void)dm_to_report(&m, rep, &e4);
  }
  dm_free(&m);
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
  vf_status st = open_run(runs_dir, run, &m, err);
  if (st == VF_OK) st = dm_to_report(&m, rep, err);
  dm_free(&m);
  return st;
}

vf_status dist_finalize(const char *runs_dir, const char *run, const dist_options *o,
                        dist_report *rep, vf_error *err) {
  dist_manifest m;
  vf_status st = open_run(runs_dir, run, &m, err);
  if (st != VF_OK) return st;
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
    st = vf_error_set(err, VF_EUSAGE, "run %s: %d of %d shards have no done marker: %s", m.run_dir,
                      missing, m.num_shards, b.data ? (const char *)b.data : "");
  vf_buf_free(&b);
  if (st == VF_OK && m.kind == DIST_KIND_LOAD) {
    char *yaml = dm_path(&m, "config.yaml");
    vf_config cfg;
    memset(&cfg, 0, sizeof cfg);
    st = yaml ? vf_config_load(yaml, &cfg, err) : vf_error_set(err, VF_ENOMEM, "out of memory");
    if (st == VF_OK) st = finalize_load(&cfg, &m, o ? o->wait_timeout_s : 0, err);
    vf_config_free(&cfg);
    free(yaml);
  } else if (st == VF_OK) {
    st = finalize_bf(&m, err);
  }
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
  vf_config cfg;
  memset(&cfg, 0, sizeof cfg);
  if (o && o->max_attempts > 0) m.max_attempts = o->max_attempts;
  if (m.max_attempts < 1) m.max_attempts = DIST_DEFAULT_MAX_ATTEMPTS;
  bool finalized = m.state && strcmp(m.state, "finalized") == 0;
  if (finalized) vf_log(VF_LOG_INFO, "run %s is already finalized", m.run_dir);
  if (!finalized && m.kind == DIST_KIND_LOAD) {
    /* the secrets' variables must be set now, not after the workers ran */
    char *yaml = dm_path(&m, "config.yaml");
    st = yaml ? vf_config_load(yaml, &cfg, err) : vf_error_set(err, VF_ENOMEM, "out of memory");
    free(yaml);
  }
  if (!finalized && st == VF_OK) st = check_engine(&m, err);
  if (!finalized && st == VF_OK && m.kind == DIST_KIND_LOAD && m.state && strcmp(m.state, "planned") == 0) {
    /* a --dry-run (or a driver that ended before preparing): prepare now */
    ld_options lo;
    ld_options_default(&lo);
    char *sd = dm_path(&m, "state");
    lo.state_dir = sd;
    ld_report lr;
    st = sd ? ld_prepare(&cfg, &lo, &lr, err) : vf_error_set(err, VF_ENOMEM, "out of memory");
    free(sd);
  }
  if (!finalized && st == VF_OK) {
    de_resources res = {m.res_cpus, m.res_memory_gb, m.res_partition, m.res_time};
    free(m.submit_command); /* the real command replaces a dry run's preview */
    m.submit_command = NULL;
    st = dm_set_state(&m, "running", err);
    if (st == VF_OK) st = de_drive(&m, &res, o ? parallel_of(o) : 1, o ? o->poll_s : 1, true, err);
    m.seconds = before + vf_now() - t0;
    if (st == VF_OK) st = dm_set_state(&m, "workers-done", err);
    else {
      vf_error e2;
      (void)dm_set_state(&m, "failed", &e2);
    }
    if (st == VF_OK)
      st = m.kind == DIST_KIND_LOAD ? finalize_load(&cfg, &m, o ? o->wait_timeout_s : 0, err) : finalize_bf(&m, err);
    m.seconds = before + vf_now() - t0;
    vf_error e3;
    (void)dm_write(&m, &e3);
  }
  vf_config_free(&cfg);
  vf_error e4;
  (void)dm_to_report(&m, rep, &e4);
  dm_free(&m);
  return st;
}

/* ------------------------------------------------------------------ brute force */

vf_status dist_brute_force(const dist_bf_options *bf, const dist_options *o, dist_report *rep,
                           vf_error *err) {
  double t0 = vf_now();
  dist_manifest m;
  memset(&m, 0, sizeof m);
  m.kind = DIST_KIND_BRUTE_FORCE;
  m.engine = o->engine == DIST_ENGINE_LOCAL ? DIST_ENGINE_LOCAL : DIST_ENGINE_SLURM;
  vf_status st = VF_OK;
  int ns = o->num_shards;
  if (ns < 1 || ns > DIST_MAX_SHARDS)
    st = vf_error_set(err, VF_EUSAGE, "--num-shards must be 1..%d, got %d", DIST_MAX_SHARDS, ns);
  corpus_distance metric;
  if (st == VF_OK && bf->metric && !idx_metric_parse(bf->metric, &metric))
    st = vf_error_set(err, VF_EUSAGE, "unknown --metric '%s' (cosine, dot, euclid, manhattan)", bf->metric);
  if (st == VF_OK && (bf->k < 1 || bf->k > 100000)) st = vf_error_set(err, VF_EUSAGE, "-k must be 1..100000");
  bool local_uri = bf->uri && !strstr(bf->uri, "://");
  m.bf_uri = local_uri ? dm_abs_path(bf->uri) : vf_strdup(bf->uri ? bf->uri : "");
  m.bf_queries = dm_abs_path(bf->queries ? bf->queries : "");
  m.bf_k = bf->k;
  m.bf_metric = bf->metric ? vf_strdup(bf->metric) : NULL;
  m.bf_column = bf->column ? vf_strdup(bf->column) : NULL;
  m.bf_id_root = bf->id_root ? dm_abs_path(bf->id_root) : NULL;
  m.bf_output = bf->output ? dm_abs_path(bf->output) : NULL;
  if (st == VF_OK && (!m.bf_uri || !m.bf_queries)) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  if (st == VF_OK && access(m.bf_queries, R_OK) != 0)
    st = vf_error_set(err, VF_ENOTFOUND, "%s: cannot read the queries file: %s", m.bf_queries, VF_STRERROR(errno));
  corpus_files files = {0};
  if (st == VF_OK) st = corpus_discover(m.bf_uri, m.bf_id_root, &files, err);
  if (st == VF_OK) st = init_common(&m, o, "bf", NULL, &files, ns, err);
  corpus_files_free(&files);
  char *bin = st == VF_OK ? (o->vforge_bin ? vf_strdup(o->vforge_bin) : dm_self_exe()) : NULL;
  if (st == VF_OK && !bin) st = vf_error_set(err, VF_EIO, "cannot find the vforge binary (/proc/self/exe)");
  char ***argvs = st == VF_OK ? vf_calloc((size_t)m.num_shards + 1, sizeof *argvs) : NULL;
  if (st == VF_OK && !argvs) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  for (int s = 0; st == VF_OK && s < m.num_shards; s++) {
    char k[16], n[16], r[16];
    snprintf(k, sizeof k, "%" PRIu32, bf->k);
    snprintf(n, sizeof n, "%d", m.num_shards);
    snprintf(r, sizeof r, "%d", s);
    const char *a[20];
    size_t na = 0;
    a[na++] = bin, a[na++] = "brute-force", a[na++] = m.bf_uri, a[na++] = "--queries";
    a[na++] = m.bf_queries, a[na++] = "-k", a[na++] = k, a[na++] = "--num-jobs", a[na++] = n;
    a[na++] = "--job-rank", a[na++] = r;
    if (m.bf_metric) a[na++] = "--metric", a[na++] = m.bf_metric;
    if (m.bf_column) a[na++] = "--column", a[na++] = m.bf_column;
    if (m.bf_id_root) a[na++] = "--id-root", a[na++] = m.bf_id_root;
    argvs[s] = vf_calloc(na + 1, sizeof *argvs[s]);
    if (!argvs[s]) st = vf_error_set(err, VF_ENOMEM, "out of memory");
    for (size_t i = 0; st == VF_OK && i < na; i++)
      if (!(argvs[s][i] = vf_strdup(a[i]))) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  free(bin);
  if (st == VF_OK) st = de_write_worker(&m, (char *const *const *)argvs, err);
  argvs_free(argvs, m.num_shards);
  de_resources res = {0};
  if (st == VF_OK) st = submit_command(&m, &res, err);
  if (st == VF_OK) st = dm_write(&m, err);
  if (st != VF_OK) discard_run_dir(&m);
  if (st == VF_OK && !o->dry_run && (st = check_engine(&m, err)) != VF_OK) discard_run_dir(&m);
  if (st == VF_OK && !o->dry_run) {
    free(m.submit_command);
    m.submit_command = NULL;
    st = dm_set_state(&m, "running", err);
    if (st == VF_OK) st = de_drive(&m, &res, parallel_of(o), o->poll_s, false, err);
    m.seconds = vf_now() - t0;
    if (st == VF_OK) st = dm_set_state(&m, "workers-done", err);
    else {
      vf_error e2;
      (void)dm_set_state(&m, "failed", &e2);
    }
    if (st == VF_OK) st = finalize_bf(&m, err);
    m.seconds = vf_now() - t0;
    vf_error e3;
    (void)dm_write(&m, &e3);
  }
  if (m.run_id && m.state && m.shards) {
    vf_error e4;
    (void)dm_to_report(&m, rep, &e4);
  }
  dm_free(&m);
  return st;
}
