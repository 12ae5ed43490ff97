/*
 * config_render.c — the resolved config as JSON (secrets masked), the datasource's files, part
 * templates, and `vforge load inspect` (DESIGN.md "Configuration", "Command line").
 *
 * Why render from the struct and not from the YAML: what users need to see is what vforge will
 * do — defaults applied, split forms folded into a URI, variables expanded — and the struct is
 * that.  Masking is by key path: config.c records the path of every value that came from a secret
 * variable (plus vectorstore.api_key); the renderer asks for each value it prints.
 *
 * inspect reads only parquet footers (one ranged read each) and writes nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config_internal.h"
#include "dataset.h"
#include "vforge/format.h"

#define RW_MAX_DEPTH 16

typedef struct rw {
  vf_buf *b;
  vf_error *err;
  const vf_config *cfg;
  vf_status st;
  bool first[RW_MAX_DEPTH];
  int depth;
} rw;

/* The writer's calls are sticky: after a failure each is a no-op and w->st keeps the first. */
static void r_raw(rw *w, const char *s) {
  if (w->st != VF_OK) return;
  w->st = vf_json_raw(w->b, s, w->err);
}

static void r_json_str(rw *w, const char *s) {
  if (w->st != VF_OK) return;
  w->st = vf_json_string(w->b, s, strlen(s), w->err);
}

static void r_u64(rw *w, uint64_t v) {
  if (w->st != VF_OK) return;
  w->st = vf_json_u64(w->b, v, w->err);
}

static void r_sep(rw *w) {
  if (w->depth > 0) {
    if (!w->first[w->depth - 1]) r_raw(w, ",");
    w->first[w->depth - 1] = false;
  }
}

static void r_open(rw *w, const char *key, const char *brace) {
  r_sep(w);
  if (key) {
    r_json_str(w, key);
    r_raw(w, ":");
  }
  r_raw(w, brace);
  if (w->depth < RW_MAX_DEPTH) w->first[w->depth] = true;
  w->depth++;
}

static void r_close(rw *w, const char *brace) {
  w->depth--;
  r_raw(w, brace);
}

static void r_key(rw *w, const char *key) {
  r_sep(w);
  if (key) {
    r_json_str(w, key);
    r_raw(w, ":");
  }
}

static bool secret(const rw *w, const char *path) {
  return path && cfg_path_is_secret(w->cfg, path);
}

static void r_mask(rw *w) {
  r_json_str(w, VF_CONFIG_SECRET_MASK);
}

/* A string with the userinfo of its URL masked ("user:pw@host" becomes "****@host"). */
static void r_redacted(rw *w, const char *val) {
  if (w->st != VF_OK) return;
  char *r = vf_url_redact_dup(val);
  if (!r) {
    w->st = vf_error_set(w->err, VF_ENOMEM, "out of memory");
    return;
  }
  r_json_str(w, r);
  free(r);
}

/* key may be NULL inside arrays; path names the value for the secret check. */
static void r_str(rw *w, const char *key, const char *path, const char *val) {
  r_key(w, key);
  if (!val)
    r_raw(w, "null");
  else if (secret(w, path) && cfg_path_secret_is_userinfo(w->cfg, path))
    r_redacted(w, val);
  else if (secret(w, path))
    r_mask(w);
  else
    r_json_str(w, val);
}

/* Integers where 0 means "not set" pass zero_is_null. */
static void r_int(rw *w, const char *key, const char *path, int64_t v, bool zero_is_null) {
  r_key(w, key);
  if (zero_is_null && v == 0)
    r_raw(w, "null");
  else if (secret(w, path))
    r_mask(w);
  else if (w->st != VF_OK)
    return;
  else
    w->st = vf_json_i64(w->b, v, w->err);
}

static void r_bool(rw *w, const char *key, const char *path, bool v) {
  r_key(w, key);
  if (secret(w, path))
    r_mask(w);
  else
    r_raw(w, v ? "true" : "false");
}

static void r_str_list(rw *w, const char *key, const char *path, char **l, size_t n) {
  if (!l) {
    r_key(w, key);
    r_raw(w, "null");
    return;
  }
  r_open(w, key, "[");
  for (size_t i = 0; i < n; i++) {
    char p[CFG_PATH_MAX];
    snprintf(p, sizeof p, "%.400s[%zu]", path, i);
    r_str(w, NULL, p, l[i]);
  }
  r_close(w, "]");
}

static const char *const VEC_TYPE_NAMES[] = {"dense", "sparse", "multivector"};
static const char *const DISTANCE_NAMES[] = {"cosine", "dot", "euclid", "manhattan"};
static const char *const FORMAT_NAMES[] = {"parquet", "npy", "fbin", "hdf5", "jsonl"}; /* vf_cfg_format */
static const char *const CACHE_NAMES[] = {"keep", "evict"};
static const char *const FORM_NAMES[] = {"uri", "s3", "huggingface", "local", "dataset"};

static void r_component(rw *w, const char *key, const char *path,
                        const vf_cfg_dataset_component *c) {
  char p[CFG_PATH_MAX];
  if (!c->present) {
    r_key(w, key);
    r_raw(w, "null");
    return;
  }
  r_open(w, key, "{");
  r_str(w, "format", NULL, FORMAT_NAMES[c->format]);
  snprintf(p, sizeof p, "%.400s.path", path);
  r_str(w, "path", p, c->path);
  if (c->has_parts) {
    char pp[CFG_PATH_MAX];
    snprintf(p, sizeof p, "%.400s.parts", path);
    r_open(w, "parts", "{");
    snprintf(pp, sizeof pp, "%.400s.count", p);
    r_int(w, "count", pp, c->parts.count, false);
    snprintf(pp, sizeof pp, "%.400s.start", p);
    r_int(w, "start", pp, c->parts.start, false);
    snprintf(pp, sizeof pp, "%.400s.path", p);
    r_str(w, "path", pp, c->parts.path);
    snprintf(pp, sizeof pp, "%.400s.link", p);
    r_str(w, "link", pp, c->parts.link);
    r_close(w, "}");
  } else {
    r_key(w, "parts");
    r_raw(w, "null");
  }
  snprintf(p, sizeof p, "%.400s.columns", path);
  r_str_list(w, "columns", p, c->columns, c->ncolumns);
  snprintf(p, sizeof p, "%.400s.exclude", path);
  r_str_list(w, "exclude", p, c->exclude, c->nexclude);
  snprintf(p, sizeof p, "%.400s.fill_null", path);
  r_key(w, "fill_null");
  if (!c->fill_null_json)
    r_raw(w, "null");
  else if (secret(w, p))
    r_mask(w);
  else
    r_raw(w, c->fill_null_json);
  r_str(w, "cache", NULL, CACHE_NAMES[c->cache]);
  r_close(w, "}");
}

/* the config object, under `key` when inside another object */
static void render(rw *w, const char *key) {
  const vf_config *cfg = w->cfg;
  char p[CFG_PATH_MAX];
  r_open(w, key, "{");
  r_open(w, "vectors", "{");
  for (size_t i = 0; i < cfg->nvectors; i++) {
    const vf_cfg_vector *v = &cfg->vectors[i];
    r_open(w, v->name, "{");
    r_str(w, "type", NULL, VEC_TYPE_NAMES[v->kind]);
    snprintf(p, sizeof p, "vectors.%.400s.column", v->name);
    r_str(w, "column", p, v->column);
    r_str(w, "distance", NULL, DISTANCE_NAMES[v->distance]);
    r_str(w, "comparator", NULL, v->max_sim ? "max_sim" : NULL);
    r_str(w, "source", NULL,
          v->source == VF_CFG_COMPONENT_VECTORS   ? "vectors"
          : v->source == VF_CFG_COMPONENT_PAYLOAD ? "payload"
                                                  : NULL);
    if (v->params_json) { /* issue 18: datatype, on_disk, hnsw, quantization, modifier, index */
      r_key(w, "params");
      r_raw(w, v->params_json);
    }
    r_close(w, "}");
  }
  r_close(w, "}");

  const vf_cfg_datasource *d = &cfg->datasource;
  r_open(w, "datasource", "{");
  r_str(w, "type", NULL, FORM_NAMES[d->form]);
  r_str(w, "uri", "datasource.uri", d->uri);
  r_str_list(w, "file_list", "datasource.file_list", d->file_list, d->nfiles);
  r_str(w, "id_expression", "datasource.id_expression", d->id_expression);
  r_open(w, "payload_fields", "{");
  for (size_t i = 0; i < d->npayload_fields; i++) {
    snprintf(p, sizeof p, "datasource.payload_fields.%.400s", d->payload_fields[i].key);
    r_str(w, d->payload_fields[i].key, p, d->payload_fields[i].column);
  }
  r_close(w, "}");
  r_str(w, "id_root", "datasource.id_root", d->id_root);
  r_bool(w, "binary_as_string", "datasource.binary_as_string", d->binary_as_string);
  switch (d->form) {
  case VF_CFG_DS_S3:
    r_str(w, "bucket", "datasource.bucket", d->bucket);
    r_str(w, "prefix", "datasource.prefix", d->prefix);
    break;
  case VF_CFG_DS_HUGGINGFACE:
    r_str(w, "repo_id", "datasource.repo_id", d->repo_id);
    r_str(w, "subdir", "datasource.subdir", d->subdir);
    break;
  case VF_CFG_DS_LOCAL: r_str(w, "path", "datasource.path", d->path); break;
  case VF_CFG_DS_DATASET:
    r_component(w, "vectors", "datasource.vectors", &d->vectors);
    r_component(w, "payload", "datasource.payload", &d->payload);
    r_str(w, "cache", NULL, CACHE_NAMES[d->cache]);
    break;
  case VF_CFG_DS_URI: break;
  }
  r_close(w, "}");

  const vf_cfg_vectorstore *s = &cfg->vectorstore;
  r_open(w, "vectorstore", "{");
  r_str(w, "type", NULL, s->type == VF_CFG_STORE_QDRANT ? "qdrant" : "local");
  r_str(w, "path", "vectorstore.path", s->path);
  r_str(w, "url", "vectorstore.url", s->url);
  r_str(w, "api_key", "vectorstore.api_key", s->api_key ? VF_CONFIG_SECRET_MASK : NULL);
  r_str(w, "collection_name", "vectorstore.collection_name", s->collection_name);
  if (s->type == VF_CFG_STORE_QDRANT) { /* issue 18 */
    r_bool(w, "prefer_grpc", "vectorstore.prefer_grpc", s->prefer_grpc);
    r_int(w, "grpc_port", "vectorstore.grpc_port", s->grpc_port, false);
    r_int(w, "grpc_max_message_mb", "vectorstore.grpc_max_message_mb", s->grpc_max_message_mb,
          false);
  }
  r_key(w, "params");
  const char *params =
      cfg->internal && cfg->internal->params_json_masked ? cfg->internal->params_json_masked : "{}";
  r_raw(w, params);
  r_close(w, "}");

  const vf_cfg_loader *l = &cfg->loader;
  r_open(w, "loader", "{");
  r_int(w, "batch_size", "loader.batch_size", l->batch_size, false);
  r_int(w, "prefetch_size", "loader.prefetch_size", l->prefetch_size, false);
  r_int(w, "concurrency", "loader.concurrency", l->concurrency, false);
  r_int(w, "retries", "loader.retries", l->retries, false);
  r_bool(w, "wait", "loader.wait", l->wait);
  r_bool(w, "skip_bad_rows", "loader.skip_bad_rows", l->skip_bad_rows);
  r_close(w, "}");

  r_open(w, "dispatch", "{");
  r_int(w, "num_shards", "dispatch.num_shards", cfg->dispatch.num_shards, true);
  r_str(w, "engine", NULL, cfg->dispatch.engine == VF_CFG_ENGINE_LOCAL ? "local" : "slurm");
  r_str(w, "run_name", "dispatch.run_name", cfg->dispatch.run_name);
  r_close(w, "}");

  r_open(w, "resources", "{");
  r_int(w, "cpus", "resources.cpus", cfg->resources.cpus, true);
  r_int(w, "memory", "resources.memory", cfg->resources.memory_gb, true);
  r_str(w, "partition", "resources.partition", cfg->resources.partition);
  r_str(w, "time", "resources.time", cfg->resources.time);
  r_close(w, "}");
  r_close(w, "}");
}

/* vf_config_render_json(): see config.h. */
vf_status vf_config_render_json(const vf_config *cfg, vf_buf *out, vf_error *err) {
  rw w = {.b = out, .err = err, .cfg = cfg};
  render(&w, NULL);
  return w.st;
}

/* ------------------------------------------------------------------- files */

static int file_key_cmp(const void *a, const void *b) {
  const corpus_file *x = a, *y = b;
  return strcmp(x->key, y->key);
}

/* vf_config_files(): see config.h. */
vf_status vf_config_files(const vf_config *cfg, corpus_files *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  const vf_cfg_datasource *d = &cfg->datasource;
  if (d->form == VF_CFG_DS_DATASET) return ds_files(cfg, out, err); /* one file per part */
  if (!d->file_list) return corpus_discover(d->uri, d->id_root, out, err);
  vf_status st = VF_OK;
  size_t cap = 0;
  for (size_t i = 0; i < d->nfiles; i++) {
    corpus_files one;
    st = corpus_discover(d->file_list[i], d->id_root, &one, err);
    if (st != VF_OK) {
      char p[CFG_PATH_MAX];
      snprintf(p, sizeof p, "datasource.file_list[%zu]", i);
      if (cfg_path_is_secret(cfg, p))
        vf_error_set(err, st, "%s: %s: cannot list this file", cfg->name, p);
      else
        vf_error_prefix(err, "%s: %s: ", cfg->name, p);
      goto out;
    }
    if (out->n + one.n > cap) {
      size_t ncap = (out->n + one.n) * 2;
      corpus_file *nf = vf_realloc(out->files, ncap * sizeof *nf);
      if (!nf) {
        corpus_files_free(&one);
        VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory listing files", cfg->name));
      }
      out->files = nf;
      cap = ncap;
    }
    memcpy(out->files + out->n, one.files, one.n * sizeof *one.files);
    out->n += one.n;
    if (!out->prefix) {
      out->prefix = one.prefix;
      one.prefix = NULL;
    }
    free(one.files); /* entries moved */
    free(one.prefix);
  }
  qsort(out->files, out->n, sizeof *out->files, file_key_cmp);
  for (size_t i = 1; i < out->n; i++)
    if (strcmp(out->files[i].key, out->files[i - 1].key) == 0)
      VF_FAIL(vf_error_set(err, VF_ECONFIG,
                           "%s: datasource.file_list: %s is listed more than once (same key)",
                           cfg->name,
                           cfg_path_is_secret(cfg, "datasource.file_list") ? VF_CONFIG_SECRET_MASK
                                                                           : out->files[i].key));
out:
  if (st != VF_OK) corpus_files_free(out);
  return st;
}

/* ------------------------------------------------------------ part templates */

/* vf_config_part_path(): see config.h.  Templates were checked by config.c; anything else is
 * copied literally. */
vf_status vf_config_part_path(const vf_cfg_parts *parts, const char *tmpl, int64_t i, char **out,
                              vf_error *err) {
  *out = NULL;
  if (!tmpl || i < parts->start || i - parts->start >= parts->count)
    return vf_error_set(err, VF_EUSAGE, "part %" PRId64 " is outside %" PRId64 "..%" PRId64, i,
                        parts->start, parts->start + parts->count - 1);
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_TEXT); /* one part's path */
  vf_status st = VF_OK;
  for (const char *p = tmpl; *p; p++) {
    if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
      VF_TRY(vf_buf_append(&b, p, 1, err));
      p++;
    } else if (p[0] == '{' && p[1] == 'i' && p[2] == '}') {
      VF_TRY(vf_buf_printf(&b, err, "%" PRId64, i));
      p += 2;
    } else if (p[0] == '{' && p[1] == 'i' && p[2] == ':' && p[3] == '0') {
      const char *q = p + 4;
      int width = 0;
      while (*q >= '0' && *q <= '9' && width < 100)
        width = width * 10 + (*q++ - '0');
      if (q[0] == 'd' && q[1] == '}' && width >= 1 && width <= 20) {
        VF_TRY(vf_buf_printf(&b, err, "%0*" PRId64, width, i));
        p = q + 1;
      } else {
        VF_TRY(vf_buf_append(&b, p, 1, err));
      }
    } else {
      VF_TRY(vf_buf_append(&b, p, 1, err));
    }
  }
  VF_TRY(vf_buf_append(&b, "", 1, err));
  size_t n;
  *out = (char *)vf_buf_take(&b, &n);
out:
  vf_buf_free(&b); /* empty after the take */
  return st;
}

/* ------------------------------------------------------------------ inspect */

static vf_status inspect_component(rw *w, const char *name, const vf_cfg_dataset_component *c,
                                   const char *id_root, bool count_rows, uint64_t *total,
                                   bool *total_known) {
  int64_t first = c->has_parts ? c->parts.start : 0;
  int64_t n = c->has_parts ? c->parts.count : 1;
  if (w->st != VF_OK) return w->st; /* the writer failed before */
  vf_status st = VF_OK;
  char *path = NULL, *key = NULL;
  for (int64_t i = first; i < first + n; i++) {
    if (c->has_parts) VF_TRY(vf_config_part_path(&c->parts, c->parts.path, i, &path, w->err));
    else if (!(path = vf_strdup(c->path))) VF_FAIL(vf_error_set(w->err, VF_ENOMEM, "out of memory"));
    io_uri u;
    bool local = false;
    vf_error e2;
    if (io_uri_parse(path, &u, &e2) != VF_OK) VF_FAIL(vf_error_set(w->err, VF_ECONFIG, "%s", e2.msg));
    local = u.scheme == IO_URI_LOCAL || u.scheme == IO_URI_FILE;
    struct stat sb;
    bool exists = local && stat(u.path, &sb) == 0 && S_ISREG(sb.st_mode);
    if (corpus_bare_key(path, local ? id_root : NULL, &key, &e2) != VF_OK) key = NULL;
    uint64_t rows = 0;
    bool have_rows = false;
    if (exists && c->format == VF_CFG_FORMAT_PARQUET) {
      corpus_file cf = {.uri = u.path, .key = key, .size = (uint64_t)sb.st_size};
      st = corpus_file_rows(&cf, &rows, w->err);
      if (st != VF_OK) {
        io_uri_free(&u);
        goto out;
      }
      have_rows = true;
    }
    r_open(w, NULL, "{");
    r_str(w, "component", NULL, name);
    r_str(w, "uri", NULL, u.path && local ? u.path : path);
    r_str(w, "key", NULL, key);
    r_bool(w, "exists", NULL, exists);
    r_key(w, "rows");
    if (have_rows) {
      r_u64(w, rows);
      if (count_rows) *total += rows;
    } else {
      r_raw(w, "null");
      if (count_rows) *total_known = false;
    }
    r_close(w, "}");
    io_uri_free(&u);
    free(path);
    free(key);
    path = key = NULL;
    VF_TRY(w->st); /* the writer's failure stops the listing */
  }
out:
  free(path);
  free(key);
  if (st != VF_OK) w->st = st;
  return w->st;
}

/* 1 when the URI itself or any file_list entry is secret: then file URIs are masked too; 2 when
 * those secrets are only the userinfo of URLs: then file URIs have their userinfo masked */
static int uris_secret(const vf_config *cfg) {
  if (!cfg->internal) return 0;
  int kind = 0;
  for (size_t i = 0; i < cfg->internal->nsecret; i++) {
    const char *s = cfg->internal->secret_paths[i];
    if (strcmp(s, "datasource.uri") == 0 || strncmp(s, "datasource.file_list", 20) == 0) {
      if (!cfg->internal->secret_userinfo[i]) return 1;
      kind = 2;
    }
  }
  return kind;
}

/* vf_config_inspect(): see config.h. */
vf_status vf_config_inspect(const vf_config *cfg, vf_buf *out_json, vf_error *err) {
  rw w = {.b = out_json, .err = err, .cfg = cfg};
  corpus_files files = {0};
  const vf_cfg_datasource *d = &cfg->datasource;
  uint64_t total = 0;
  bool total_known = true;
  int mask_uris = uris_secret(cfg);
  corpus_plan plan = {0};
  vf_status st = VF_OK;
  if (d->form != VF_CFG_DS_DATASET) VF_TRY(vf_config_files(cfg, &files, err));
  r_open(&w, NULL, "{");
  render(&w, "config");
  r_open(&w, "files", "[");
  if (d->form == VF_CFG_DS_DATASET) {
    /* rows of the pairing are the payload's when it exists (parquet footers), else unknown */
    inspect_component(&w, "vectors", &d->vectors, d->id_root, !d->payload.present, &total,
                      &total_known);
    if (d->payload.present)
      inspect_component(&w, "payload", &d->payload, d->id_root, true, &total, &total_known);
    if (!d->payload.present && d->vectors.format != VF_CFG_FORMAT_PARQUET) total_known = false;
  } else {
    VF_TRY(w.st);
    VF_TRY(corpus_plan_init(&plan, &files, err));
    for (size_t i = 0; i < files.n; i++) {
      uint64_t rows = 0;
      VF_TRY(corpus_file_rows(&files.files[i], &rows, err));
      corpus_plan_note_rows(&plan, i, rows);
      total += rows;
      r_open(&w, NULL, "{");
      if (mask_uris == 2) {
        r_key(&w, "uri");
        r_redacted(&w, files.files[i].uri);
      } else {
        r_str(&w, "uri", NULL, mask_uris ? VF_CONFIG_SECRET_MASK : files.files[i].uri);
      }
      r_str(&w, "key", NULL, files.files[i].key);
      r_key(&w, "rows");
      r_u64(&w, rows);
      r_close(&w, "}");
      VF_TRY(w.st);
    }
  }
  r_close(&w, "]");
  r_key(&w, "total_rows");
  if (total_known) r_u64(&w, total);
  else r_raw(&w, "null");
  r_key(&w, "empty_files");
  r_u64(&w, plan.empty);
  r_str(&w, "collection", "vectorstore.collection_name", cfg->vectorstore.collection_name);
  r_str(&w, "store", NULL, cfg->vectorstore.type == VF_CFG_STORE_QDRANT ? "qdrant" : "local");
  if (cfg->vectorstore.type == VF_CFG_STORE_QDRANT) { /* issue 18: the transport the load uses */
    char tr[96];
    if (cfg->vectorstore.prefer_grpc)
      snprintf(tr, sizeof tr, "grpc (port %lld)", (long long)cfg->vectorstore.grpc_port);
    else
      snprintf(tr, sizeof tr, "rest");
    r_str(&w, "transport", NULL, tr);
  }
  r_close(&w, "}");
  st = w.st;
out:
  corpus_plan_free(&plan);
  corpus_files_free(&files);
  return st;
}
