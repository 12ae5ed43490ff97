/*
 * config.c — the YAML load configuration checked against its schema (DESIGN.md "Configuration")
 * and resolved into a vf_config with every default applied.
 *
 * Shape of the code: one function per section (vectors, datasource, components, vectorstore,
 * params, loader, dispatch, resources), each first rejecting unknown keys against its key table
 * (so a typo is reported with the expected keys), then reading each value through a typed getter
 * (string, integer in a range, bool, enum, list) that expands variables and names the file, line
 * and key path on any error.  An explicit `null` (or an empty value) means "not given".
 *
 * Secrets: the key path of every value that came from a secret variable (and vectorstore.api_key)
 * is recorded in cfg->internal, so the renderer can mask it; so is every value holding a URL with
 * userinfo ("http://user:PASSWORD@host", marked as a userinfo secret: the renderer masks only
 * the userinfo).  A getter that rejects a secret value prints "****" in place of the value.
 *
 * Compatibility with the existing loader configs: the older split datasource forms (`type: s3,
 * bucket, prefix`, `type: huggingface, repo_id, subdir`, `type: local, path`) resolve into `uri`;
 * `payload_fields` may be a list of column names (each kept under its own name) as well as a
 * mapping; booleans accept YAML 1.1 spellings (yes/no/on/off), integers `_` separators.
 *
 * Files: this one holds the vectors, vectorstore/params, loader, dispatch and resources sections
 * and the API; config_datasource.c the datasource section; config_get.c the typed getters and
 * tree access they all read through (config_internal.h declares what they share).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config_internal.h"

/* ------------------------------------------------------------------ vectors */

static const char *const VEC_TYPES[] = {"dense", "sparse", "multivector", NULL};
static const char *const DISTANCES[] = {"cosine", "dot", "euclid", "manhattan", NULL};
static const char *const COMPARATORS[] = {"max_sim", NULL};
static const char *const SOURCES[] = {"vectors", "payload", NULL};
const char *const CFG_FORMATS[] = {"parquet", "npy", "fbin", "hdf5", "jsonl", NULL};
const char *const CFG_CACHES[] = {"keep", "evict", NULL};

#define CFG_MAX_VECTORS 64

static const char *const HNSW_KEYS[] = {
    "m",       "ef_construct", "full_scan_threshold", "max_indexing_threads",
    "on_disk", "memory",       "payload_m",           "inline_storage",
    NULL};
static const char *const OPTIMIZER_KEYS[] = {"deleted_threshold",      "vacuum_min_vector_number",
                                             "default_segment_number", "max_segment_size",
                                             "memmap_threshold",       "indexing_threshold",
                                             "flush_interval_sec",     "max_optimization_threads",
                                             "prevent_unoptimized",    NULL};
static const char *const QUANT_KEYS[] = {"scalar", "product", "binary", "turbo", NULL};

/* {scalar|product|binary|turbo: {...}}: exactly one kind */
static vf_status check_quantization(cctx *c, const cfg_node *x, const char *path) {
  vf_status st;
  if ((st = cfg_expect_map(c, x, path)) != VF_OK) return st;
  if ((st = cfg_check_keys(c, x, path, QUANT_KEYS)) != VF_OK) return st;
  if (x->n != 1)
    return cfg_cerr(c, x->line, "%s: expected exactly one of: scalar, product, binary, turbo",
                    path);
  char p[CFG_PATH_MAX];
  cfg_path_join(p, path, x->items[0]->text);
  return cfg_expect_map(c, x->items[1], p);
}
static vf_status parse_vector_params(cctx *c, const cfg_node *v, const char *path,
                                     vf_cfg_vector *out);

static vf_status parse_vector(cctx *c, const cfg_node *kn, const cfg_node *v, vf_cfg_vector *out) {
  static const char *const keys[] = {"type",    "column", "distance",     "comparator",
                                     "source",  "datatype", "on_disk",    "hnsw",
                                     "quantization", "modifier", "index", NULL};
  char path[CFG_PATH_MAX], p[CFG_PATH_MAX];
  cfg_path_join(path, "vectors", kn->text);
  out->line = kn->line;
  out->name = vf_strdup(kn->text);
  if (!out->name) return cfg_oom(c, kn->line);
  if (!*kn->text) return cfg_cerr(c, kn->line, "vectors: a vector name must not be empty");
  if (!v || cfg_scalar_is_null(v))
    return cfg_cerr(c, kn->line, "%s: needs at least 'column' (or 'source' for a dataset)", path);
  vf_status st = cfg_expect_map(c, v, path);
  if (st != VF_OK) return st;
  if ((st = cfg_check_keys(c, v, path, keys)) != VF_OK) return st;
  const vf_cfg_datasource *ds = &c->cfg->datasource;
  const cfg_node *x;
  int kl = v->line, e;
  if ((x = cfg_map_get(v, "type", &kl))) {
    cfg_path_join(p, path, "type");
    if ((st = cfg_get_enum(c, x, p, VEC_TYPES, &e)) != VF_OK) return st;
    out->kind = (corpus_vec_kind)e;
  }
  out->distance = out->kind == CORPUS_VEC_SPARSE ? CORPUS_DOT : CORPUS_COSINE;
  if ((x = cfg_map_get(v, "distance", &kl))) {
    cfg_path_join(p, path, "distance");
    if ((st = cfg_get_enum(c, x, p, DISTANCES, &e)) != VF_OK) return st;
    out->distance = (corpus_distance)e;
    out->distance_given = true;
    if (out->kind == CORPUS_VEC_SPARSE && out->distance != CORPUS_DOT)
      return cfg_cerr(c, x->line, "%s: sparse vectors are compared by dot product only", p);
  }
  out->max_sim = out->kind == CORPUS_VEC_MULTI;
  if ((x = cfg_map_get(v, "comparator", &kl))) {
    cfg_path_join(p, path, "comparator");
    if ((st = cfg_get_enum(c, x, p, COMPARATORS, &e)) != VF_OK) return st;
    if (out->kind != CORPUS_VEC_MULTI)
      return cfg_cerr(c, x->line, "%s: a comparator applies to multivector vectors only", p);
  }
  if ((x = cfg_map_get(v, "column", &kl))) {
    cfg_path_join(p, path, "column");
    if ((st = cfg_get_str(c, x, p, false, &out->column)) != VF_OK) return st;
  }
  int src_line = v->line;
  if ((x = cfg_map_get(v, "source", &src_line))) {
    cfg_path_join(p, path, "source");
    if (ds->form != VF_CFG_DS_DATASET)
      return cfg_cerr(c, x->line, "%s: 'source' applies to 'datasource: {type: dataset}' only", p);
    if ((st = cfg_get_enum(c, x, p, SOURCES, &e)) != VF_OK) return st;
    out->source = e == 0 ? VF_CFG_COMPONENT_VECTORS : VF_CFG_COMPONENT_PAYLOAD;
  } else if (ds->form == VF_CFG_DS_DATASET) {
    out->source = VF_CFG_COMPONENT_VECTORS;
  }
  if ((st = parse_vector_params(c, v, path, out)) != VF_OK) return st;
  if (ds->form != VF_CFG_DS_DATASET) {
    if (!out->column) return cfg_cerr(c, v->line, "%s: missing required key 'column'", path);
    return VF_OK;
  }
  if (out->source == VF_CFG_COMPONENT_PAYLOAD) {
    if (!ds->payload.present)
      return cfg_cerr(c, src_line,
                      "%s.source: payload, but the datasource has no 'payload' component", path);
    if (!out->column)
      return cfg_cerr(c, v->line, "%s: missing required key 'column' (the payload column)", path);
    return VF_OK;
  }
  vf_cfg_format f = ds->vectors.format;
  if (f == VF_CFG_FORMAT_PARQUET && !out->column)
    return cfg_cerr(c, v->line,
                    "%s: missing required key 'column' (the vectors component is parquet)", path);
  if ((f == VF_CFG_FORMAT_NPY || f == VF_CFG_FORMAT_FBIN) && out->column)
    return cfg_cerr(c, v->line, "%s.column: %s files have no columns", path, CFG_FORMATS[f]);
  if ((f == VF_CFG_FORMAT_NPY || f == VF_CFG_FORMAT_FBIN) && out->kind != CORPUS_VEC_DENSE)
    return cfg_cerr(c, v->line, "%s.type: %s files hold dense vectors only", path, CFG_FORMATS[f]);
  return VF_OK;
}

/* issue 18: vectors.<name>.datatype / on_disk / hnsw / quantization (dense, multivector) and
 * modifier / index (sparse), kept as one JSON object for the store. */
static const char *const DATATYPES[] = {"float32", "float16", "uint8", NULL};
static const char *const MODIFIERS[] = {"none", "idf", NULL};
static const char *const SPARSE_INDEX_KEYS[] = {"on_disk", "datatype", "full_scan_threshold", NULL};

static vf_status parse_vector_params(cctx *c, const cfg_node *v, const char *path,
                                     vf_cfg_vector *out) {
  static const char *const dense_only[] = {"datatype", "on_disk", "hnsw", "quantization", NULL};
  static const char *const sparse_only[] = {"modifier", "index", NULL};
  static const char *const all[] = {"datatype", "on_disk", "hnsw", "quantization",
                                    "modifier", "index", NULL};
  char p[CFG_PATH_MAX];
  const cfg_node *x;
  int kl;
  vf_status st = VF_OK;
  bool sparse = out->kind == CORPUS_VEC_SPARSE;
  for (const char *const *k = sparse ? dense_only : sparse_only; *k; k++)
    if ((x = cfg_map_get(v, *k, &kl)))
      return cfg_cerr(c, kl, "%s.%s: applies to %s vectors only", path, *k,
                      sparse ? "dense and multivector" : "sparse");
  int e;
  bool b;
  if ((x = cfg_map_get(v, "datatype", &kl))) {
    cfg_path_join(p, path, "datatype");
    if ((st = cfg_get_enum(c, x, p, DATATYPES, &e)) != VF_OK) return st;
  }
  if ((x = cfg_map_get(v, "on_disk", &kl))) {
    cfg_path_join(p, path, "on_disk");
    if ((st = cfg_get_bool(c, x, p, &b)) != VF_OK) return st;
  }
  if ((x = cfg_map_get(v, "hnsw", &kl))) {
    cfg_path_join(p, path, "hnsw");
    if ((st = cfg_expect_map(c, x, p)) != VF_OK ||
        (st = cfg_check_keys(c, x, p, HNSW_KEYS)) != VF_OK)
      return st;
  }
  if ((x = cfg_map_get(v, "quantization", &kl))) {
    cfg_path_join(p, path, "quantization");
    if ((st = check_quantization(c, x, p)) != VF_OK) return st;
  }
  if ((x = cfg_map_get(v, "modifier", &kl))) {
    cfg_path_join(p, path, "modifier");
    if ((st = cfg_get_enum(c, x, p, MODIFIERS, &e)) != VF_OK) return st;
  }
  if ((x = cfg_map_get(v, "index", &kl))) {
    cfg_path_join(p, path, "index");
    if ((st = cfg_expect_map(c, x, p)) != VF_OK ||
        (st = cfg_check_keys(c, x, p, SPARSE_INDEX_KEYS)) != VF_OK)
      return st;
    const cfg_node *y;
    char q[CFG_PATH_MAX];
    if ((y = cfg_map_get(x, "datatype", &kl))) {
      cfg_path_join(q, p, "datatype");
      if ((st = cfg_get_enum(c, y, q, DATATYPES, &e)) != VF_OK) return st;
    }
    if ((y = cfg_map_get(x, "on_disk", &kl))) {
      cfg_path_join(q, p, "on_disk");
      if ((st = cfg_get_bool(c, y, q, &b)) != VF_OK) return st;
    }
    if ((y = cfg_map_get(x, "full_scan_threshold", &kl))) {
      int64_t iv;
      cfg_path_join(q, p, "full_scan_threshold");
      if ((st = cfg_get_int(c, y, q, 0, INT64_MAX, &iv)) != VF_OK) return st;
    }
  }
  /* the given keys as one JSON object, in the order above */
  vf_buf real, masked;
  vf_buf_init(&real, 16u << 20);
  vf_buf_init(&masked, 16u << 20);
  bool any = false;
  VF_TRY(vf_buf_append(&real, "{", 1, c->err));
  VF_TRY(vf_buf_append(&masked, "{", 1, c->err));
  for (const char *const *k = all; *k; k++) {
    if (!(x = cfg_map_get(v, *k, &kl))) continue;
    cfg_path_join(p, path, *k);
    if (any) {
      VF_TRY(vf_buf_append(&real, ",", 1, c->err));
      VF_TRY(vf_buf_append(&masked, ",", 1, c->err));
    }
    any = true;
    VF_TRY(vf_json_string(&real, *k, strlen(*k), c->err));
    VF_TRY(vf_buf_append(&real, ":", 1, c->err));
    VF_TRY(vf_json_string(&masked, *k, strlen(*k), c->err));
    VF_TRY(vf_buf_append(&masked, ":", 1, c->err));
    VF_TRY(cfg_node_json(c, x, p, &real, &masked));
  }
  VF_TRY(vf_buf_append(&real, "}", 2, c->err)); /* with the NUL */
  VF_TRY(vf_buf_append(&masked, "}", 2, c->err));
  if (real.len != masked.len || memcmp(real.data, masked.data, real.len) != 0)
    VF_FAIL(cfg_cerr(c, v->line,
                     "%s: a secret variable in the vector's store parameters is not "
                     "supported",
                     path));
  if (any) {
    size_t n;
    out->params_json = (char *)vf_buf_take(&real, &n);
  }
out:
  vf_buf_free(&masked);
  vf_buf_free(&real);
  return st;
}

static vf_status parse_vectors(cctx *c, const cfg_node *v) {
  vf_status st = cfg_expect_map(c, v, "vectors");
  if (st != VF_OK) return st;
  if (v->n == 0) return cfg_cerr(c, v->line, "vectors: at least one vector is required");
  if (v->n > CFG_MAX_VECTORS)
    return cfg_cerr(c, v->line, "vectors: more than %d vectors", CFG_MAX_VECTORS);
  c->cfg->vectors = vf_calloc(v->n, sizeof *c->cfg->vectors);
  if (!c->cfg->vectors) return cfg_oom(c, v->line);
  for (size_t i = 0; i < v->n; i++) {
    c->cfg->nvectors++;
    const cfg_node *val = v->items[2 * i + 1];
    st =
        parse_vector(c, v->items[2 * i], cfg_scalar_is_null(val) ? NULL : val, &c->cfg->vectors[i]);
    if (st != VF_OK) return st;
  }
  return VF_OK;
}

/* --------------------------------------------------------------- vectorstore */

/* issue 18: payload_indexes: {mode: all|none|specific, fields: [...], field_types: {f: type}} */
static vf_status check_payload_indexes(cctx *c, const cfg_node *x) {
  static const char *const keys[] = {"mode", "fields", "field_types", NULL};
  static const char *const MODES[] = {"none", "all", "specific", NULL};
  static const char *const TYPES[] = {"keyword", "integer", "float", "bool",
                                      "geo",     "text",    "datetime", "uuid", NULL};
  const char *path = "vectorstore.params.payload_indexes";
  vf_status st = cfg_expect_map(c, x, path);
  if (st != VF_OK) return st;
  if ((st = cfg_check_keys(c, x, path, keys)) != VF_OK) return st;
  const cfg_node *y;
  int kl = x->line, mode = 0, e;
  if ((y = cfg_map_get(x, "mode", &kl)) &&
      (st = cfg_get_enum(c, y, "vectorstore.params.payload_indexes.mode", MODES, &mode)) != VF_OK)
    return st;
  char **fields = NULL;
  size_t nf = 0;
  int fl = x->line;
  if ((y = cfg_map_get(x, "fields", &fl))) {
    st = cfg_get_str_list(c, y, "vectorstore.params.payload_indexes.fields", &fields, &nf);
    for (size_t i = 0; i < nf; i++)
      free(fields[i]);
    free(fields);
    if (st != VF_OK) return st;
    if (mode != 2)
      return cfg_cerr(c, fl,
                      "vectorstore.params.payload_indexes.fields: applies to mode: specific "
                      "(mode is %s)",
                      MODES[mode]);
  }
  if (mode == 2 && nf == 0)
    return cfg_cerr(c, kl,
                    "vectorstore.params.payload_indexes: mode: specific needs a non-empty "
                    "'fields' list");
  if ((y = cfg_map_get(x, "field_types", &kl))) {
    if ((st = cfg_expect_map(c, y, "vectorstore.params.payload_indexes.field_types")) != VF_OK)
      return st;
    if (mode == 0 && y->n > 0)
      return cfg_cerr(c, kl,
                      "vectorstore.params.payload_indexes.field_types: applies to mode: all "
                      "or specific (mode is none)");
    for (size_t i = 0; i < y->n; i++) {
      char p[CFG_PATH_MAX];
      cfg_path_join(p, "vectorstore.params.payload_indexes.field_types", y->items[2 * i]->text);
      if ((st = cfg_get_enum(c, y->items[2 * i + 1], p, TYPES, &e)) != VF_OK) return st;
    }
  }
  return VF_OK;
}

static vf_status parse_params(cctx *c, const cfg_node *v) {
  static const char *const keys[] = {"hnsw",
                                     "quantization",
                                     "optimizers",
                                     "shard_number",
                                     "replication_factor",
                                     "write_consistency_factor",
                                     "on_disk_payload",
                                     "recreate",
                                     "index", /* local store: checked by the store itself */
                                     "payload_indexes", /* issue 18 (qdrant) */
                                     "defer",
                                     NULL};
  const char *path = "vectorstore.params";
  vf_cfg_vectorstore *vs = &c->cfg->vectorstore;
  vf_status st = cfg_expect_map(c, v, path);
  if (st != VF_OK) return st;
  if ((st = cfg_check_keys(c, v, path, keys)) != VF_OK) return st;
  const cfg_node *x;
  int kl, e;
  if ((x = cfg_map_get(v, "hnsw", &kl))) {
    if ((st = cfg_expect_map(c, x, "vectorstore.params.hnsw")) != VF_OK) return st;
    if ((st = cfg_check_keys(c, x, "vectorstore.params.hnsw", HNSW_KEYS)) != VF_OK) return st;
  }
  if ((x = cfg_map_get(v, "optimizers", &kl))) {
    if ((st = cfg_expect_map(c, x, "vectorstore.params.optimizers")) != VF_OK) return st;
    if ((st = cfg_check_keys(c, x, "vectorstore.params.optimizers", OPTIMIZER_KEYS)) != VF_OK)
      return st;
  }
  if ((x = cfg_map_get(v, "quantization", &kl)) &&
      (st = check_quantization(c, x, "vectorstore.params.quantization")) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "shard_number", &kl)) &&
      (st = cfg_get_int(c, x, "vectorstore.params.shard_number", 1, 65536, &vs->shard_number)) !=
          VF_OK)
    return st;
  if ((x = cfg_map_get(v, "replication_factor", &kl)) &&
      (st = cfg_get_int(c, x, "vectorstore.params.replication_factor", 1, 1024,
                        &vs->replication_factor)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "write_consistency_factor", &kl)) &&
      (st = cfg_get_int(c, x, "vectorstore.params.write_consistency_factor", 1, 1024,
                        &vs->write_consistency_factor)) != VF_OK)
    return st;
  bool b;
  if ((x = cfg_map_get(v, "on_disk_payload", &kl))) {
    if ((st = cfg_get_bool(c, x, "vectorstore.params.on_disk_payload", &b)) != VF_OK) return st;
    vs->on_disk_payload = b ? 1 : 0;
  }
  if ((x = cfg_map_get(v, "recreate", &kl)) &&
      (st = cfg_get_bool(c, x, "vectorstore.params.recreate", &vs->recreate)) != VF_OK)
    return st;
  static const char *const DEFERS[] = {"indexing_threshold", "hnsw_m", "none", NULL};
  if ((x = cfg_map_get(v, "defer", &kl)) &&
      (st = cfg_get_enum(c, x, "vectorstore.params.defer", DEFERS, &e)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "payload_indexes", &kl)) && (st = check_payload_indexes(c, x)) != VF_OK)
    return st;
  /* the whole subtree as JSON (after the typed reads so secret marks are known) */
  vf_buf real, masked;
  vf_buf_init(&real, 64u << 20);
  vf_buf_init(&masked, 64u << 20);
  VF_TRY(cfg_node_json(c, v, path, &real, &masked));
  VF_TRY(vf_buf_append(&real, "", 1, c->err));
  VF_TRY(vf_buf_append(&masked, "", 1, c->err));
  size_t n;
  free(vs->params_json);
  vs->params_json = (char *)vf_buf_take(&real, &n);
  c->cfg->internal->params_json_masked = (char *)vf_buf_take(&masked, &n);
out:
  vf_buf_free(&real);
  vf_buf_free(&masked);
  return st;
}

static vf_status parse_vectorstore(cctx *c, const cfg_node *v) {
  static const char *const keys[] = {"type",   "path", "url", "api_key", "collection_name",
                                     "params", "prefer_grpc", "grpc_port",
                                     "grpc_max_message_mb", NULL};
  static const char *const types[] = {"local", "qdrant", NULL};
  vf_cfg_vectorstore *vs = &c->cfg->vectorstore;
  vf_status st = VF_OK;
  const cfg_node *x;
  int kl = 0, e;
  if (v) {
    st = cfg_expect_map(c, v, "vectorstore");
    if (st != VF_OK) return st;
    if ((st = cfg_check_keys(c, v, "vectorstore", keys)) != VF_OK) return st;
    if ((x = cfg_map_get(v, "type", &kl))) {
      if ((st = cfg_get_enum(c, x, "vectorstore.type", types, &e)) != VF_OK) return st;
      vs->type = (vf_cfg_store_type)e;
    }
    if ((x = cfg_map_get(v, "path", &kl)) &&
        (st = cfg_get_str(c, x, "vectorstore.path", true, &vs->path)) != VF_OK)
      return st;
    if ((x = cfg_map_get(v, "url", &kl)) &&
        (st = cfg_get_str(c, x, "vectorstore.url", true, &vs->url)) != VF_OK)
      return st;
    if ((x = cfg_map_get(v, "api_key", &kl))) {
      bool secret;
      if ((st = cfg_get_text(c, x, "vectorstore.api_key", &vs->api_key, &secret)) != VF_OK)
        return st;
      if ((st = cfg_mark_secret(c, "vectorstore.api_key", x->line)) != VF_OK) return st;
    }
    if ((x = cfg_map_get(v, "collection_name", &kl))) {
      if ((st = cfg_get_str(c, x, "vectorstore.collection_name", false, &vs->collection_name)) !=
          VF_OK)
        return st;
      const char *n = vs->collection_name;
      if (strchr(n, '/') || strchr(n, '\\') || !strcmp(n, ".") || !strcmp(n, "..") ||
          strlen(n) > 255)
        return cfg_cerr(c, x->line,
                        "vectorstore.collection_name: '%.80s' cannot be a collection name (no '/', "
                        "'\\', '.' or '..'; at most 255 bytes)",
                        cfg_shown(n, cfg_path_is_secret(c->cfg, "vectorstore.collection_name")));
    }
    if ((x = cfg_map_get(v, "params", &kl)) && (st = parse_params(c, x)) != VF_OK) return st;
    /* issue 18: the gRPC transport (the official Python client's key names) */
    if ((x = cfg_map_get(v, "prefer_grpc", &kl)) &&
        (st = cfg_get_bool(c, x, "vectorstore.prefer_grpc", &vs->prefer_grpc)) != VF_OK)
      return st;
    if ((x = cfg_map_get(v, "grpc_port", &kl)) &&
        (st = cfg_get_int(c, x, "vectorstore.grpc_port", 1, 65535, &vs->grpc_port)) != VF_OK)
      return st;
    if ((x = cfg_map_get(v, "grpc_max_message_mb", &kl)) &&
        (st = cfg_get_int(c, x, "vectorstore.grpc_max_message_mb", 1, 2047,
                          &vs->grpc_max_message_mb)) != VF_OK)
      return st;
    /* empty strings count as not given, so one template can switch type by a variable */
    char **opt[] = {&vs->path, &vs->url, &vs->api_key};
    for (size_t i = 0; i < sizeof opt / sizeof *opt; i++) {
      if (*opt[i] && !**opt[i]) {
        free(*opt[i]);
        *opt[i] = NULL;
      }
    }
    if (vs->type == VF_CFG_STORE_LOCAL) {
      if (vs->url && cfg_map_get(v, "url", &kl))
        return cfg_cerr(c, kl, "'vectorstore.url' applies to type: qdrant only (type is local)");
      if (vs->api_key && cfg_map_get(v, "api_key", &kl))
        return cfg_cerr(c, kl,
                        "'vectorstore.api_key' applies to type: qdrant only (type is local)");
      static const char *const grpc_keys[] = {"prefer_grpc", "grpc_port", "grpc_max_message_mb",
                                              NULL};
      for (const char *const *k = grpc_keys; *k; k++)
        if (cfg_map_get(v, *k, &kl))
          return cfg_cerr(c, kl, "'vectorstore.%s' applies to type: qdrant only (type is local)",
                          *k);
    } else {
      if (vs->path && cfg_map_get(v, "path", &kl))
        return cfg_cerr(c, kl, "'vectorstore.path' applies to type: local only (type is qdrant)");
      if (!vs->url) return cfg_cerr(c, v->line, "vectorstore: type: qdrant needs 'url'");
      if (strncmp(vs->url, "http://", 7) != 0 && strncmp(vs->url, "https://", 8) != 0) {
        cfg_map_get(v, "url", &kl);
        return cfg_cerr(c, kl, "vectorstore.url: expected an http:// or https:// URL, got '%.80s'",
                        cfg_shown(vs->url, cfg_path_is_secret(c->cfg, "vectorstore.url")));
      }
    }
  }
  if (vs->type == VF_CFG_STORE_LOCAL && !vs->path) {
    vs->path = vf_strdup(VF_CONFIG_DEFAULT_STORE_PATH);
    if (!vs->path) return cfg_oom(c, v ? v->line : 1);
  }
  if (!vs->params_json) {
    vs->params_json = vf_strdup("{}");
    c->cfg->internal->params_json_masked = vf_strdup("{}");
    if (!vs->params_json || !c->cfg->internal->params_json_masked)
      return cfg_oom(c, v ? v->line : 1);
  }
  return VF_OK;
}

/* ------------------------------------------------------- loader, dispatch, ... */

static vf_status parse_loader(cctx *c, const cfg_node *v) {
  static const char *const keys[] = {"batch_size", "prefetch_size", "concurrency", "retries",
                                     "wait",       "skip_bad_rows", NULL};
  vf_cfg_loader *l = &c->cfg->loader;
  vf_status st = cfg_expect_map(c, v, "loader");
  if (st != VF_OK) return st;
  if ((st = cfg_check_keys(c, v, "loader", keys)) != VF_OK) return st;
  const cfg_node *x;
  int kl;
  if ((x = cfg_map_get(v, "batch_size", &kl)) &&
      (st = cfg_get_int(c, x, "loader.batch_size", 1, 1000000, &l->batch_size)) != VF_OK)
    return st;
  const cfg_node *pf = cfg_map_get(v, "prefetch_size", &kl);
  if (pf &&
      (st = cfg_get_int(c, pf, "loader.prefetch_size", 1, 100000000, &l->prefetch_size)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "concurrency", &kl)) &&
      (st = cfg_get_int(c, x, "loader.concurrency", 1, 1024, &l->concurrency)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "retries", &kl)) &&
      (st = cfg_get_int(c, x, "loader.retries", 0, 100, &l->retries)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "wait", &kl)) &&
      (st = cfg_get_bool(c, x, "loader.wait", &l->wait)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "skip_bad_rows", &kl)) &&
      (st = cfg_get_bool(c, x, "loader.skip_bad_rows", &l->skip_bad_rows)) != VF_OK)
    return st;
  if (l->prefetch_size < l->batch_size) {
    if (pf)
      return cfg_cerr(c, pf->line,
                      "loader.prefetch_size: %lld is smaller than loader.batch_size %lld",
                      (long long)l->prefetch_size, (long long)l->batch_size);
    l->prefetch_size = l->batch_size;
  }
  return VF_OK;
}

static vf_status parse_dispatch(cctx *c, const cfg_node *v) {
  static const char *const keys[] = {"num_shards", "engine", "run_name", NULL};
  static const char *const engines[] = {"slurm", "local", NULL};
  vf_cfg_dispatch *d = &c->cfg->dispatch;
  vf_status st = cfg_expect_map(c, v, "dispatch");
  if (st != VF_OK) return st;
  if ((st = cfg_check_keys(c, v, "dispatch", keys)) != VF_OK) return st;
  const cfg_node *x;
  int kl, e;
  if ((x = cfg_map_get(v, "num_shards", &kl)) &&
      (st = cfg_get_int(c, x, "dispatch.num_shards", 1, 100000, &d->num_shards)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "engine", &kl))) {
    if ((st = cfg_get_enum(c, x, "dispatch.engine", engines, &e)) != VF_OK) return st;
    d->engine = (vf_cfg_engine)e;
  }
  if ((x = cfg_map_get(v, "run_name", &kl))) {
    if ((st = cfg_get_str(c, x, "dispatch.run_name", false, &d->run_name)) != VF_OK) return st;
    const char *r = d->run_name;
    if (r[0] == '.' ||
        strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789._-") != strlen(r) ||
        strlen(r) > 200)
      return cfg_cerr(c, x->line,
                      "dispatch.run_name: use letters, digits, '.', '_' and '-' (not first '.'), "
                      "at most 200");
  }
  return VF_OK;
}

static vf_status parse_resources(cctx *c, const cfg_node *v) {
  static const char *const keys[] = {"cpus", "memory", "partition", "time", NULL};
  vf_cfg_resources *r = &c->cfg->resources;
  vf_status st = cfg_expect_map(c, v, "resources");
  if (st != VF_OK) return st;
  if ((st = cfg_check_keys(c, v, "resources", keys)) != VF_OK) return st;
  const cfg_node *x;
  int kl;
  if ((x = cfg_map_get(v, "cpus", &kl)) &&
      (st = cfg_get_int(c, x, "resources.cpus", 1, 4096, &r->cpus)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "memory", &kl)) &&
      (st = cfg_get_int(c, x, "resources.memory", 1, 1048576, &r->memory_gb)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "partition", &kl)) &&
      (st = cfg_get_str(c, x, "resources.partition", false, &r->partition)) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "time", &kl)) &&
      (st = cfg_get_str(c, x, "resources.time", false, &r->time)) != VF_OK)
    return st;
  return VF_OK;
}

/* ---------------------------------------------------------------------- API */

static vf_status parse_root(cctx *c, const cfg_node *root) {
  static const char *const keys[] = {"vectors",  "datasource", "vectorstore", "loader",
                                     "dispatch", "resources",  NULL};
  if (!root || cfg_scalar_is_null(root))
    return cfg_cerr(c, 1, "empty config (expected a mapping with 'vectors' and 'datasource')");
  if (root->kind != CFG_MAP)
    return cfg_cerr(c, root->line,
                    "expected a mapping of sections (vectors, datasource, ...), got %s",
                    cfg_kind_name(root));
  vf_status st = cfg_check_keys(c, root, "", keys);
  if (st != VF_OK) return st;
  const cfg_node *x;
  int kl;
  const cfg_node *vectors = cfg_map_get(root, "vectors", &kl);
  if (!vectors) return cfg_cerr(c, root->line, "missing required key 'vectors'");
  const cfg_node *ds = cfg_map_get(root, "datasource", &kl);
  if (!ds) return cfg_cerr(c, root->line, "missing required key 'datasource'");
  if ((st = cfg_parse_datasource(c, ds)) != VF_OK) return st;
  if ((st = parse_vectors(c, vectors)) != VF_OK) return st;
  if ((st = parse_vectorstore(c, cfg_map_get(root, "vectorstore", &kl))) != VF_OK) return st;
  if ((x = cfg_map_get(root, "loader", &kl)) && (st = parse_loader(c, x)) != VF_OK) return st;
  if ((x = cfg_map_get(root, "dispatch", &kl)) && (st = parse_dispatch(c, x)) != VF_OK) return st;
  if ((x = cfg_map_get(root, "resources", &kl)) && (st = parse_resources(c, x)) != VF_OK) return st;
  return VF_OK;
}

/* The name, the secrets bookkeeping and the defaults of every section a config may leave out
 * (the loader's, the vectorstore's gRPC settings); zeroed on failure. */
static vf_status config_start(vf_config *cfg, const char *name, vf_error *err) {
  cfg->name = vf_strdup(name);
  cfg->internal = vf_calloc(1, sizeof *cfg->internal);
  if (!cfg->name || !cfg->internal) {
    vf_config_free(cfg);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", name);
  }
  cfg->loader = (vf_cfg_loader){.batch_size = 1000,
                                .prefetch_size = 10000,
                                .concurrency = 8,
                                .retries = 5,
                                .wait = false,
                                .skip_bad_rows = false};
  cfg->vectorstore.on_disk_payload = -1;
  cfg->vectorstore.grpc_port = 6334;
  cfg->vectorstore.grpc_max_message_mb = 64;
  return VF_OK;
}

/* vf_config_parse(): see config.h. */
vf_status vf_config_parse(const char *text, size_t len, const char *name, vf_config *cfg,
                          vf_error *err) {
  memset(cfg, 0, sizeof *cfg);
  if (!name) name = "config";
  if (len > VF_CONFIG_MAX_BYTES)
    return vf_error_set(err, VF_ECONFIG, "%s: larger than %zu bytes; not a config file", name,
                        VF_CONFIG_MAX_BYTES);
  vf_status st = config_start(cfg, name, err);
  if (st != VF_OK) return st;
  cctx c = {cfg->name, err, cfg};
  cfg_node *root = NULL;
  VF_TRY(cfg_tree_parse(text, len, cfg->name, &root, err));
  VF_TRY(parse_root(&c, root));
out:
  cfg_node_free(root);
  if (st != VF_OK) vf_config_free(cfg);
  return st;
}

/* vf_config_load(): see config.h. */
vf_status vf_config_load(const char *path, vf_config *cfg, vf_error *err) {
  memset(cfg, 0, sizeof *cfg);
  FILE *f = fopen(path, "rb");
  if (!f)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "%s: cannot open: %s", path,
                        VF_STRERROR(errno));
  vf_buf b;
  vf_buf_init(&b, VF_CONFIG_MAX_BYTES + 1);
  vf_status st = VF_OK;
  for (;;) {
    if (vf_buf_reserve(&b, 65536, err) != VF_OK)
      VF_FAIL(vf_error_set(err, VF_ECONFIG, "%s: larger than %zu bytes; not a config file", path,
                           VF_CONFIG_MAX_BYTES));
    size_t want = b.cap - b.len;
    if (want > VF_CONFIG_MAX_BYTES + 1 - b.len) want = VF_CONFIG_MAX_BYTES + 1 - b.len;
    size_t got = fread(b.data + b.len, 1, want, f);
    b.len += got;
    if (b.len > VF_CONFIG_MAX_BYTES)
      VF_FAIL(vf_error_set(err, VF_ECONFIG, "%s: larger than %zu bytes; not a config file", path,
                           VF_CONFIG_MAX_BYTES));
    if (got < want) {
      if (ferror(f)) VF_FAIL(vf_error_set(err, VF_EIO, "%s: read error", path));
      break;
    }
  }
  fclose(f);
  f = NULL;
  VF_TRY(vf_config_parse(b.data ? (const char *)b.data : "", b.len, path, cfg, err));
out:
  if (f) fclose(f);
  vf_buf_free(&b);
  return st;
}

/* vf_config_vector_file(): see config.h.  What vf_config_parse() makes of
 *     vectors:
 *       vector: {type: dense, distance: D}
 *     datasource:
 *       type: dataset
 *       id_expression: row
 *       vectors: {format: F, path: P}
 *       payload: {format: jsonl, path: J}      (when J is given)
 * field for field (the vector's key is on line 2), without the YAML text: a path needs no
 * quoting, and `$` in it is no variable. */
vf_status vf_config_vector_file(const char *name, vf_cfg_format format, const char *path,
                                const char *payload_jsonl, corpus_distance distance,
                                vf_config *cfg, vf_error *err) {
  memset(cfg, 0, sizeof *cfg);
  vf_status st = config_start(cfg, name, err);
  if (st != VF_OK) return st;
  cctx c = {cfg->name, err, cfg};
  vf_cfg_datasource *ds = &cfg->datasource;
  ds->form = VF_CFG_DS_DATASET;
  ds->vectors = (vf_cfg_dataset_component){.present = true, .format = format};
  if (!(ds->vectors.path = vf_strdup(path)) || !(ds->id_expression = vf_strdup("row")))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", cfg->name));
  if (payload_jsonl) {
    ds->payload = (vf_cfg_dataset_component){.present = true, .format = VF_CFG_FORMAT_JSONL};
    if (!(ds->payload.path = vf_strdup(payload_jsonl)))
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", cfg->name));
  }
  if (!(cfg->vectors = vf_calloc(1, sizeof *cfg->vectors)))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", cfg->name));
  cfg->nvectors = 1;
  cfg->vectors[0] = (vf_cfg_vector){.kind = CORPUS_VEC_DENSE, .distance = distance,
                                    .distance_given = true, .source = VF_CFG_COMPONENT_VECTORS,
                                    .line = 2};
  if (!(cfg->vectors[0].name = vf_strdup("vector")))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", cfg->name));
  VF_TRY(parse_vectorstore(&c, NULL)); /* its defaults: the local store at ./vforge-data */
out:
  if (st != VF_OK) vf_config_free(cfg);
  return st;
}

static void free_list(char **l, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(l[i]);
  free(l);
}

static void free_component(vf_cfg_dataset_component *c) {
  free(c->path);
  free(c->parts.path);
  free(c->parts.link);
  free_list(c->columns, c->ncolumns);
  free_list(c->exclude, c->nexclude);
  free(c->fill_null_json);
}

/* vf_config_free(): see config.h. */
void vf_config_free(vf_config *cfg) {
  if (!cfg) return;
  for (size_t i = 0; i < cfg->nvectors; i++) {
    free(cfg->vectors[i].name);
    free(cfg->vectors[i].column);
    free(cfg->vectors[i].params_json);
  }
  free(cfg->vectors);
  vf_cfg_datasource *d = &cfg->datasource;
  free(d->uri);
  free_list(d->file_list, d->nfiles);
  free(d->id_expression);
  for (size_t i = 0; i < d->npayload_fields; i++) {
    free(d->payload_fields[i].key);
    free(d->payload_fields[i].column);
  }
  free(d->payload_fields);
  free(d->id_root);
  free(d->bucket);
  free(d->prefix);
  free(d->repo_id);
  free(d->subdir);
  free(d->path);
  free_component(&d->vectors);
  free_component(&d->payload);
  vf_cfg_vectorstore *v = &cfg->vectorstore;
  free(v->path);
  free(v->url);
  free(v->api_key);
  free(v->collection_name);
  free(v->params_json);
  free(cfg->dispatch.run_name);
  free(cfg->resources.partition);
  free(cfg->resources.time);
  if (cfg->internal) {
    free_list(cfg->internal->secret_paths, cfg->internal->nsecret);
    free(cfg->internal->secret_userinfo);
    free(cfg->internal->params_json_masked);
    free(cfg->internal);
  }
  free(cfg->name);
  memset(cfg, 0, sizeof *cfg);
}

/* vf_config_find_vector(): see config.h. */
const vf_cfg_vector *vf_config_find_vector(const vf_config *cfg, const char *name) {
  for (size_t i = 0; i < cfg->nvectors; i++)
    if (strcmp(cfg->vectors[i].name, name) == 0) return &cfg->vectors[i];
  return NULL;
}
