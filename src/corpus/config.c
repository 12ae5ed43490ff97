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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config_internal.h"

typedef struct cctx {
  const char *name;
  vf_error *err;
  vf_config *cfg;
} cctx;

static vf_status cerr(cctx *c, int line, const char *fmt, ...) VF_PRINTF(3, 4);
static vf_status cerr(cctx *c, int line, const char *fmt, ...) {
  char msg[VF_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return vf_error_set(c->err, VF_ECONFIG, "%s:%d: %s", c->name, line, msg);
}

static vf_status oom(cctx *c, int line) {
  return vf_error_set(c->err, VF_ENOMEM, "%s:%d: out of memory", c->name, line);
}

/* Key paths for messages and secret marks; silently truncated at CFG_PATH_MAX - 1 bytes. */
static void path_put(char *dst, size_t *n, const char *s) {
  size_t m = strlen(s);
  if (m > CFG_PATH_MAX - 1 - *n) m = CFG_PATH_MAX - 1 - *n;
  memcpy(dst + *n, s, m);
  *n += m;
  dst[*n] = 0;
}

static void path_join(char *dst, const char *parent, const char *key) {
  size_t n = 0;
  dst[0] = 0;
  path_put(dst, &n, parent ? parent : "");
  if (n) path_put(dst, &n, ".");
  path_put(dst, &n, key);
}

static void path_index(char *dst, const char *parent, size_t i) {
  char idx[32];
  snprintf(idx, sizeof idx, "[%zu]", i);
  size_t n = 0;
  dst[0] = 0;
  path_put(dst, &n, parent);
  path_put(dst, &n, idx);
}

/* Record `path` as a secret; userinfo: only the userinfo of the URL it holds is.  A path
 * marked before keeps its first kind. */
static vf_status mark_secret_kind(cctx *c, const char *path, bool userinfo, int line) {
  vf_cfg_internal *in = c->cfg->internal;
  for (size_t i = 0; i < in->nsecret; i++)
    if (strcmp(in->secret_paths[i], path) == 0) return VF_OK;
  if (in->nsecret == in->cap) {
    size_t ncap = in->cap ? in->cap * 2 : 8;
    char **np = vf_realloc(in->secret_paths, ncap * sizeof *np);
    if (!np) return oom(c, line);
    in->secret_paths = np;
    bool *nu = vf_realloc(in->secret_userinfo, ncap * sizeof *nu);
    if (!nu) return oom(c, line);
    in->secret_userinfo = nu;
    in->cap = ncap;
  }
  in->secret_paths[in->nsecret] = vf_strdup(path);
  if (!in->secret_paths[in->nsecret]) return oom(c, line);
  in->secret_userinfo[in->nsecret] = userinfo;
  in->nsecret++;
  return VF_OK;
}

static vf_status mark_secret(cctx *c, const char *path, int line) {
  return mark_secret_kind(c, path, false, line);
}

/* index of the secret path covering `path`, -1 when none */
static int secret_index(const vf_config *cfg, const char *path) {
  if (!cfg->internal) return -1;
  for (size_t i = 0; i < cfg->internal->nsecret; i++) {
    const char *s = cfg->internal->secret_paths[i];
    size_t n = strlen(s);
    if (strncmp(s, path, n) == 0 && (path[n] == 0 || path[n] == '.' || path[n] == '['))
      return (int)i;
  }
  return -1;
}

bool cfg_path_is_secret(const vf_config *cfg, const char *path) {
  return secret_index(cfg, path) >= 0;
}

bool cfg_path_secret_is_userinfo(const vf_config *cfg, const char *path) {
  int i = secret_index(cfg, path);
  return i >= 0 && cfg->internal->secret_userinfo[i];
}

/* ------------------------------------------------------------ tree access */

static bool scalar_is_null(const cfg_node *v) {
  if (v->kind != CFG_SCALAR || !v->plain) return false;
  return v->len == 0 || strcmp(v->text, "~") == 0 || strcmp(v->text, "null") == 0 ||
         strcmp(v->text, "Null") == 0 || strcmp(v->text, "NULL") == 0;
}

static const char *kind_name(const cfg_node *v) {
  switch (v->kind) {
  case CFG_MAP: return "a mapping";
  case CFG_SEQ: return "a list";
  default: return "a single value";
  }
}

/* The value of `key` in `map`, NULL when absent or null; *key_line gets the key's line. */
static const cfg_node *map_get(const cfg_node *map, const char *key, int *key_line) {
  for (size_t i = 0; i < map->n; i++) {
    const cfg_node *k = map->items[2 * i];
    if (strcmp(k->text, key) == 0) {
      if (key_line) *key_line = k->line;
      const cfg_node *v = map->items[2 * i + 1];
      return scalar_is_null(v) ? NULL : v;
    }
  }
  return NULL;
}

static bool map_has(const cfg_node *map, const char *key, int *key_line) {
  return map_get(map, key, key_line) != NULL;
}

static vf_status expect_map(cctx *c, const cfg_node *v, const char *path) {
  if (v->kind != CFG_MAP)
    return cerr(c, v->line, "%s: expected a mapping of keys, got %s", path, kind_name(v));
  return VF_OK;
}

static vf_status check_keys(cctx *c, const cfg_node *map, const char *path,
                            const char *const *allowed) {
  for (size_t i = 0; i < map->n; i++) {
    const cfg_node *k = map->items[2 * i];
    bool ok = false;
    for (const char *const *a = allowed; *a; a++)
      if (strcmp(*a, k->text) == 0) ok = true;
    if (ok) continue;
    char list[600];
    size_t len = 0;
    list[0] = 0;
    for (const char *const *a = allowed; *a; a++) {
      int w = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", *a);
      if (w < 0 || (size_t)w >= sizeof list - len) break;
      len += (size_t)w;
    }
    return cerr(c, k->line, "unknown key '%s%s%.100s' (expected one of: %s)", path,
                *path ? "." : "", k->text, list);
  }
  return VF_OK;
}

/* ---------------------------------------------------------------- getters */

/* Expanded text of a scalar; records the path as secret when it is one. */
static vf_status get_text(cctx *c, const cfg_node *v, const char *path, char **out, bool *secret) {
  *out = NULL;
  if (v->kind != CFG_SCALAR)
    return cerr(c, v->line, "%s: expected a single value, got %s", path, kind_name(v));
  vf_status st = cfg_expand(c->name, v, path, out, secret, c->err);
  if (st != VF_OK) return st;
  size_t ua, un;
  bool userinfo = !*secret && vf_url_userinfo(*out, &ua, &un); /* a password in a URL */
  if (*secret || userinfo) {
    *secret = true;
    st = mark_secret_kind(c, path, userinfo, v->line);
    if (st != VF_OK) {
      free(*out);
      *out = NULL;
    }
  }
  return st;
}

/* What to print for a rejected value: never a secret, never more than 80 bytes. */
static const char *shown(const char *val, bool secret) {
  return secret ? VF_CONFIG_SECRET_MASK : val;
}

static vf_status get_str(cctx *c, const cfg_node *v, const char *path, bool allow_empty,
                         char **out) {
  bool secret;
  vf_status st = get_text(c, v, path, out, &secret);
  if (st != VF_OK) return st;
  if (!allow_empty && !**out) {
    free(*out);
    *out = NULL;
    return cerr(c, v->line, "%s: must not be empty", path);
  }
  return VF_OK;
}

/* Decimal integer with optional sign and '_' between digits (YAML 1.1). */
static bool parse_int(const char *s, int64_t *out) {
  const char *p = s;
  bool neg = false;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  if (!(*p >= '0' && *p <= '9')) return false;
  uint64_t v = 0;
  bool prev_digit = false;
  for (; *p; p++) {
    if (*p == '_' && prev_digit && p[1] >= '0' && p[1] <= '9') {
      prev_digit = false;
      continue;
    }
    if (!(*p >= '0' && *p <= '9')) return false;
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
    prev_digit = true;
  }
  if (neg) {
    if (v > (uint64_t)INT64_MAX + 1) return false;
    *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
  } else {
    if (v > (uint64_t)INT64_MAX) return false;
    *out = (int64_t)v;
  }
  return true;
}

static vf_status get_int(cctx *c, const cfg_node *v, const char *path, int64_t lo, int64_t hi,
                         int64_t *out) {
  char *t;
  bool secret;
  vf_status st = get_text(c, v, path, &t, &secret);
  if (st != VF_OK) return st;
  int64_t x;
  if (!parse_int(t, &x) || x < lo || x > hi) {
    st = cerr(c, v->line, "%s: expected an integer from %lld to %lld, got '%.80s'", path,
              (long long)lo, (long long)hi, shown(t, secret));
  } else {
    *out = x;
  }
  free(t);
  return st;
}

static int parse_bool(const char *t) {
  static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                   "NO",    "off",   "Off",   "OFF"};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
    if (strcmp(t, yes[i]) == 0) return 1;
    if (strcmp(t, no[i]) == 0) return 0;
  }
  return -1;
}

static vf_status get_bool(cctx *c, const cfg_node *v, const char *path, bool *out) {
  char *t;
  bool secret;
  vf_status st = get_text(c, v, path, &t, &secret);
  if (st != VF_OK) return st;
  int b = parse_bool(t);
  if (b < 0)
    st = cerr(c, v->line, "%s: expected true or false, got '%.80s'", path, shown(t, secret));
  else
    *out = b == 1;
  free(t);
  return st;
}

static vf_status get_enum(cctx *c, const cfg_node *v, const char *path, const char *const *names,
                          int *out) {
  char *t;
  bool secret;
  vf_status st = get_text(c, v, path, &t, &secret);
  if (st != VF_OK) return st;
  for (int i = 0; names[i]; i++) {
    if (strcmp(names[i], t) == 0) {
      *out = i;
      free(t);
      return VF_OK;
    }
  }
  char list[300];
  size_t len = 0;
  list[0] = 0;
  for (int i = 0; names[i]; i++) {
    int w = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
    if (w < 0 || (size_t)w >= sizeof list - len) break;
    len += (size_t)w;
  }
  st = cerr(c, v->line, "%s: '%.80s' is not one of: %s", path, shown(t, secret), list);
  free(t);
  return st;
}

static vf_status get_str_list(cctx *c, const cfg_node *v, const char *path, char ***out,
                              size_t *n) {
  if (v->kind != CFG_SEQ)
    return cerr(c, v->line, "%s: expected a list, got %s", path, kind_name(v));
  *out = NULL;
  *n = 0;
  if (v->n == 0) return VF_OK;
  char **list = vf_calloc(v->n, sizeof *list);
  if (!list) return oom(c, v->line);
  *out = list;
  for (size_t i = 0; i < v->n; i++) {
    char p[CFG_PATH_MAX];
    path_index(p, path, i);
    vf_status st = get_str(c, v->items[i], p, false, &list[i]);
    if (st != VF_OK) return st;
    (*n)++;
  }
  return VF_OK;
}

/* A JSON literal for a scalar: plain scalars by YAML type inference (null, bool, integer,
 * finite float), everything else as a string.  NaN/inf are refused (JSON has none). */
static vf_status scalar_json(cctx *c, const cfg_node *v, const char *path, vf_buf *real) {
  char *t;
  bool secret;
  vf_status st = get_text(c, v, path, &t, &secret);
  if (st != VF_OK) return st;
  int64_t iv = 0;
  int bv = -1;
  bool is_null = false, is_int = false, is_float = false;
  double dv = 0;
  if (v->plain) {
    is_null =
        !*t || !strcmp(t, "~") || !strcmp(t, "null") || !strcmp(t, "Null") || !strcmp(t, "NULL");
    bv = is_null ? -1 : parse_bool(t);
    is_int = !is_null && bv < 0 && parse_int(t, &iv);
    if (!is_null && bv < 0 && !is_int) {
      bool numeric = strspn(t, "0123456789.eE+-") == strlen(t) && strpbrk(t, "0123456789");
      const char *lower_inf[] = {".inf",  "+.inf", "-.inf", ".nan", ".Inf", "-.Inf",
                                 "+.Inf", ".INF",  "-.INF", ".NaN", ".NAN"};
      for (size_t i = 0; i < sizeof lower_inf / sizeof *lower_inf; i++)
        if (strcmp(t, lower_inf[i]) == 0) {
          st = cerr(c, v->line, "%s: infinite or NaN values cannot be sent to a store", path);
          goto out;
        }
      if (numeric) {
        char *end;
        errno = 0;
        dv = strtod(t, &end);
        is_float = *end == 0 && errno == 0;
      }
    }
  }
  if (is_null) {
    st = vf_json_raw(real, "null", c->err);
  } else if (bv >= 0) {
    st = vf_json_raw(real, bv ? "true" : "false", c->err);
  } else if (is_int) {
    st = vf_json_i64(real, iv, c->err);
  } else if (is_float) {
    st = vf_json_f64(real, dv, c->err);
  } else {
    st = vf_json_string(real, t, strlen(t), c->err);
  }
out:
  free(t);
  return st;
}

/* Subtree -> JSON text, into `real` and (with secrets masked) into `masked`. */
static vf_status node_json(cctx *c, const cfg_node *v, const char *path, vf_buf *real,
                           vf_buf *masked) {
  vf_status st = VF_OK;
  if (v->kind == CFG_SCALAR) {
    size_t before = real->len;
    st = scalar_json(c, v, path, real);
    if (st != VF_OK) return st;
    if (cfg_path_is_secret(c->cfg, path))
      return vf_json_string(masked, VF_CONFIG_SECRET_MASK, strlen(VF_CONFIG_SECRET_MASK), c->err);
    return vf_buf_append(masked, real->data + before, real->len - before, c->err);
  }
  bool map = v->kind == CFG_MAP;
  st = vf_json_raw(real, map ? "{" : "[", c->err);
  if (st == VF_OK) st = vf_json_raw(masked, map ? "{" : "[", c->err);
  for (size_t i = 0; st == VF_OK && i < v->n; i++) {
    char p[CFG_PATH_MAX];
    if (i) {
      st = vf_json_raw(real, ",", c->err);
      if (st == VF_OK) st = vf_json_raw(masked, ",", c->err);
      if (st != VF_OK) break;
    }
    const cfg_node *item;
    if (map) {
      const cfg_node *k = v->items[2 * i];
      item = v->items[2 * i + 1];
      path_join(p, path, k->text);
      st = vf_json_string(real, k->text, k->len, c->err);
      if (st == VF_OK) st = vf_json_string(masked, k->text, k->len, c->err);
      if (st == VF_OK) st = vf_json_raw(real, ":", c->err);
      if (st == VF_OK) st = vf_json_raw(masked, ":", c->err);
      if (st != VF_OK) break;
    } else {
      item = v->items[i];
      path_index(p, path, i);
    }
    st = node_json(c, item, p, real, masked);
  }
  if (st == VF_OK) st = vf_json_raw(real, map ? "}" : "]", c->err);
  if (st == VF_OK) st = vf_json_raw(masked, map ? "}" : "]", c->err);
  return st;
}

/* ------------------------------------------------------------------ vectors */

static const char *const VEC_TYPES[] = {"dense", "sparse", "multivector", NULL};
static const char *const DISTANCES[] = {"cosine", "dot", "euclid", "manhattan", NULL};
static const char *const COMPARATORS[] = {"max_sim", NULL};
static const char *const SOURCES[] = {"vectors", "payload", NULL};
static const char *const FORMATS[] = {"parquet", "npy", "fbin", "hdf5", "jsonl", NULL};
static const char *const CACHES[] = {"keep", "evict", NULL};

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
  if ((st = expect_map(c, x, path)) != VF_OK) return st;
  if ((st = check_keys(c, x, path, QUANT_KEYS)) != VF_OK) return st;
  if (x->n != 1)
    return cerr(c, x->line, "%s: expected exactly one of: scalar, product, binary, turbo", path);
  char p[CFG_PATH_MAX];
  path_join(p, path, x->items[0]->text);
  return expect_map(c, x->items[1], p);
}
static vf_status parse_vector_params(cctx *c, const cfg_node *v, const char *path,
                                     vf_cfg_vector *out);

static vf_status parse_vector(cctx *c, const cfg_node *kn, const cfg_node *v, vf_cfg_vector *out) {
  static const char *const keys[] = {"type",    "column", "distance",     "comparator",
                                     "source",  "datatype", "on_disk",    "hnsw",
                                     "quantization", "modifier", "index", NULL};
  char path[CFG_PATH_MAX], p[CFG_PATH_MAX];
  path_join(path, "vectors", kn->text);
  out->line = kn->line;
  out->name = vf_strdup(kn->text);
  if (!out->name) return oom(c, kn->line);
  if (!*kn->text) return cerr(c, kn->line, "vectors: a vector name must not be empty");
  if (!v || scalar_is_null(v))
    return cerr(c, kn->line, "%s: needs at least 'column' (or 'source' for a dataset)", path);
  vf_status st = expect_map(c, v, path);
  if (st == VF_OK) st = check_keys(c, v, path, keys);
  if (st != VF_OK) return st;
  const vf_cfg_datasource *ds = &c->cfg->datasource;
  const cfg_node *x;
  int kl = v->line, e;
  if ((x = map_get(v, "type", &kl))) {
    path_join(p, path, "type");
    if ((st = get_enum(c, x, p, VEC_TYPES, &e)) != VF_OK) return st;
    out->kind = (corpus_vec_kind)e;
  }
  out->distance = out->kind == CORPUS_VEC_SPARSE ? CORPUS_DOT : CORPUS_COSINE;
  if ((x = map_get(v, "distance", &kl))) {
    path_join(p, path, "distance");
    if ((st = get_enum(c, x, p, DISTANCES, &e)) != VF_OK) return st;
    out->distance = (corpus_distance)e;
    out->distance_given = true;
    if (out->kind == CORPUS_VEC_SPARSE && out->distance != CORPUS_DOT)
      return cerr(c, x->line, "%s: sparse vectors are compared by dot product only", p);
  }
  out->max_sim = out->kind == CORPUS_VEC_MULTI;
  if ((x = map_get(v, "comparator", &kl))) {
    path_join(p, path, "comparator");
    if ((st = get_enum(c, x, p, COMPARATORS, &e)) != VF_OK) return st;
    if (out->kind != CORPUS_VEC_MULTI)
      return cerr(c, x->line, "%s: a comparator applies to multivector vectors only", p);
  }
  if ((x = map_get(v, "column", &kl))) {
    path_join(p, path, "column");
    if ((st = get_str(c, x, p, false, &out->column)) != VF_OK) return st;
  }
  int src_line = v->line;
  if ((x = map_get(v, "source", &src_line))) {
    path_join(p, path, "source");
    if (ds->form != VF_CFG_DS_DATASET)
      return cerr(c, x->line, "%s: 'source' applies to 'datasource: {type: dataset}' only", p);
    if ((st = get_enum(c, x, p, SOURCES, &e)) != VF_OK) return st;
    out->source = e == 0 ? VF_CFG_COMPONENT_VECTORS : VF_CFG_COMPONENT_PAYLOAD;
  } else if (ds->form == VF_CFG_DS_DATASET) {
    out->source = VF_CFG_COMPONENT_VECTORS;
  }
  if ((st = parse_vector_params(c, v, path, out)) != VF_OK) return st;
  if (ds->form != VF_CFG_DS_DATASET) {
    if (!out->column) return cerr(c, v->line, "%s: missing required key 'column'", path);
    return VF_OK;
  }
  if (out->source == VF_CFG_COMPONENT_PAYLOAD) {
    if (!ds->payload.present)
      return cerr(c, src_line, "%s.source: payload, but the datasource has no 'payload' component",
                  path);
    if (!out->column)
      return cerr(c, v->line, "%s: missing required key 'column' (the payload column)", path);
    return VF_OK;
  }
  vf_cfg_format f = ds->vectors.format;
  if (f == VF_CFG_FORMAT_PARQUET && !out->column)
    return cerr(c, v->line, "%s: missing required key 'column' (the vectors component is parquet)",
                path);
  if ((f == VF_CFG_FORMAT_NPY || f == VF_CFG_FORMAT_FBIN) && out->column)
    return cerr(c, v->line, "%s.column: %s files have no columns", path, FORMATS[f]);
  if ((f == VF_CFG_FORMAT_NPY || f == VF_CFG_FORMAT_FBIN) && out->kind != CORPUS_VEC_DENSE)
    return cerr(c, v->line, "%s.type: %s files hold dense vectors only", path, FORMATS[f]);
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
    if ((x = map_get(v, *k, &kl)))
      return cerr(c, kl, "%s.%s: applies to %s vectors only", path, *k,
                  sparse ? "dense and multivector" : "sparse");
  int e;
  bool b;
  if ((x = map_get(v, "datatype", &kl))) {
    path_join(p, path, "datatype");
    if ((st = get_enum(c, x, p, DATATYPES, &e)) != VF_OK) return st;
  }
  if ((x = map_get(v, "on_disk", &kl))) {
    path_join(p, path, "on_disk");
    if ((st = get_bool(c, x, p, &b)) != VF_OK) return st;
  }
  if ((x = map_get(v, "hnsw", &kl))) {
    path_join(p, path, "hnsw");
    if ((st = expect_map(c, x, p)) != VF_OK || (st = check_keys(c, x, p, HNSW_KEYS)) != VF_OK)
      return st;
  }
  if ((x = map_get(v, "quantization", &kl))) {
    path_join(p, path, "quantization");
    if ((st = check_quantization(c, x, p)) != VF_OK) return st;
  }
  if ((x = map_get(v, "modifier", &kl))) {
    path_join(p, path, "modifier");
    if ((st = get_enum(c, x, p, MODIFIERS, &e)) != VF_OK) return st;
  }
  if ((x = map_get(v, "index", &kl))) {
    path_join(p, path, "index");
    if ((st = expect_map(c, x, p)) != VF_OK || (st = check_keys(c, x, p, SPARSE_INDEX_KEYS)) != VF_OK)
      return st;
    const cfg_node *y;
    char q[CFG_PATH_MAX];
    if ((y = map_get(x, "datatype", &kl))) {
      path_join(q, p, "datatype");
      if ((st = get_enum(c, y, q, DATATYPES, &e)) != VF_OK) return st;
    }
    if ((y = map_get(x, "on_disk", &kl))) {
      path_join(q, p, "on_disk");
      if ((st = get_bool(c, y, q, &b)) != VF_OK) return st;
    }
    if ((y = map_get(x, "full_scan_threshold", &kl))) {
      int64_t iv;
      path_join(q, p, "full_scan_threshold");
      if ((st = get_int(c, y, q, 0, INT64_MAX, &iv)) != VF_OK) return st;
    }
  }
  /* the given keys as one JSON object, in the order above */
  vf_buf real, masked;
  vf_buf_init(&real, 16u << 20);
  vf_buf_init(&masked, 16u << 20);
  bool any = false;
  st = vf_buf_append(&real, "{", 1, c->err);
  if (st == VF_OK) st = vf_buf_append(&masked, "{", 1, c->err);
  for (const char *const *k = all; *k && st == VF_OK; k++) {
    if (!(x = map_get(v, *k, &kl))) continue;
    path_join(p, path, *k);
    if (any) st = vf_buf_append(&real, ",", 1, c->err);
    if (st == VF_OK && any) st = vf_buf_append(&masked, ",", 1, c->err);
    any = true;
    if (st == VF_OK) st = vf_json_string(&real, *k, strlen(*k), c->err);
    if (st == VF_OK) st = vf_buf_append(&real, ":", 1, c->err);
    if (st == VF_OK) st = vf_json_string(&masked, *k, strlen(*k), c->err);
    if (st == VF_OK) st = vf_buf_append(&masked, ":", 1, c->err);
    if (st == VF_OK) st = node_json(c, x, p, &real, &masked);
  }
  if (st == VF_OK) st = vf_buf_append(&real, "}", 2, c->err); /* with the NUL */
  if (st == VF_OK) st = vf_buf_append(&masked, "}", 2, c->err);
  if (st == VF_OK && (real.len != masked.len || memcmp(real.data, masked.data, real.len) != 0))
    st = cerr(c, v->line, "%s: a secret variable in the vector's store parameters is not "
              "supported", path);
  vf_buf_free(&masked);
  if (st == VF_OK && any) {
    size_t n;
    out->params_json = (char *)vf_buf_take(&real, &n);
  }
  vf_buf_free(&real);
  return st;
}

static vf_status parse_vectors(cctx *c, const cfg_node *v) {
  vf_status st = expect_map(c, v, "vectors");
  if (st != VF_OK) return st;
  if (v->n == 0) return cerr(c, v->line, "vectors: at least one vector is required");
  if (v->n > CFG_MAX_VECTORS)
    return cerr(c, v->line, "vectors: more than %d vectors", CFG_MAX_VECTORS);
  c->cfg->vectors = vf_calloc(v->n, sizeof *c->cfg->vectors);
  if (!c->cfg->vectors) return oom(c, v->line);
  for (size_t i = 0; i < v->n; i++) {
    c->cfg->nvectors++;
    const cfg_node *val = v->items[2 * i + 1];
    st = parse_vector(c, v->items[2 * i], scalar_is_null(val) ? NULL : val, &c->cfg->vectors[i]);
    if (st != VF_OK) return st;
  }
  return VF_OK;
}

/* ---------------------------------------------------------------- datasource */

/* Checks a `{i}` template; *placeholders gets the number of placeholders. */
static bool template_ok(const char *t, int *placeholders) {
  *placeholders = 0;
  for (const char *p = t; *p; p++) {
    if (*p == '{' && p[1] == '{') {
      p++;
    } else if (*p == '}' && p[1] == '}') {
      p++;
    } else if (*p == '{') {
      if (p[1] != 'i') return false;
      if (p[2] == '}') {
        p += 2;
      } else if (p[2] == ':' && p[3] == '0') {
        const char *q = p + 4;
        int digits = 0, width = 0;
        while (*q >= '0' && *q <= '9' && digits < 3)
          width = width * 10 + (*q++ - '0'), digits++;
        if (digits == 0 || width < 1 || width > 20 || q[0] != 'd' || q[1] != '}') return false;
        p = q + 1;
      } else {
        return false;
      }
      (*placeholders)++;
    } else if (*p == '}') {
      return false;
    }
  }
  return true;
}

static vf_status get_template(cctx *c, const cfg_node *v, const char *path, int64_t count,
                              char **out) {
  vf_status st = get_str(c, v, path, false, out);
  if (st != VF_OK) return st;
  int n;
  if (!template_ok(*out, &n))
    return cerr(
        c, v->line,
        "%s: bad placeholder; use {i} or {i:0Nd} for the part number ({{ and }} for braces)", path);
  if (n == 0 && count > 1)
    return cerr(c, v->line, "%s: %lld parts need an {i} placeholder in the path", path,
                (long long)count);
  return VF_OK;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int format_from_path(const char *p) {
  if (ends_with(p, ".parquet")) return VF_CFG_FORMAT_PARQUET;
  if (ends_with(p, ".npy")) return VF_CFG_FORMAT_NPY;
  if (ends_with(p, ".fbin")) return VF_CFG_FORMAT_FBIN;
  if (ends_with(p, ".hdf5") || ends_with(p, ".h5")) return VF_CFG_FORMAT_HDF5;
  if (ends_with(p, ".jsonl")) return VF_CFG_FORMAT_JSONL;
  return -1;
}

static vf_status parse_component(cctx *c, const cfg_node *v, const char *path, bool is_payload,
                                 vf_cfg_dataset_component *out) {
  static const char *const keys[] = {"format",  "path",      "parts", "columns",
                                     "exclude", "fill_null", "cache", NULL};
  static const char *const part_keys[] = {"count", "start", "path", "link", NULL};
  char p[CFG_PATH_MAX], pp[CFG_PATH_MAX];
  vf_status st = expect_map(c, v, path);
  if (st == VF_OK) st = check_keys(c, v, path, keys);
  if (st != VF_OK) return st;
  out->present = true;
  out->cache = c->cfg->datasource.cache;
  const cfg_node *x;
  int kl = v->line, e, fmt = -1;
  int path_line = 0, parts_line = 0;
  const cfg_node *pathn = map_get(v, "path", &path_line);
  const cfg_node *parts = map_get(v, "parts", &parts_line);
  if (pathn && parts)
    return cerr(c, parts_line, "%s: give either 'path' (one file) or 'parts', not both", path);
  if (!pathn && !parts) return cerr(c, v->line, "%s: missing required key 'path' or 'parts'", path);
  if (pathn) {
    path_join(p, path, "path");
    if ((st = get_str(c, pathn, p, false, &out->path)) != VF_OK) return st;
  } else {
    path_join(p, path, "parts");
    if ((st = expect_map(c, parts, p)) != VF_OK) return st;
    if ((st = check_keys(c, parts, p, part_keys)) != VF_OK) return st;
    out->has_parts = true;
    if (!(x = map_get(parts, "count", &kl)))
      return cerr(c, parts->line, "%s: missing required key 'count'", p);
    path_join(pp, p, "count");
    if ((st = get_int(c, x, pp, 1, 10000000, &out->parts.count)) != VF_OK) return st;
    if ((x = map_get(parts, "start", &kl))) {
      path_join(pp, p, "start");
      if ((st = get_int(c, x, pp, 0, INT64_C(1) << 40, &out->parts.start)) != VF_OK) return st;
    }
    if (!(x = map_get(parts, "path", &kl)))
      return cerr(c, parts->line, "%s: missing required key 'path'", p);
    path_join(pp, p, "path");
    if ((st = get_template(c, x, pp, out->parts.count, &out->parts.path)) != VF_OK) return st;
    if ((x = map_get(parts, "link", &kl))) {
      path_join(pp, p, "link");
      if ((st = get_template(c, x, pp, out->parts.count, &out->parts.link)) != VF_OK) return st;
    }
  }
  if ((x = map_get(v, "format", &kl))) {
    path_join(p, path, "format");
    if ((st = get_enum(c, x, p, FORMATS, &fmt)) != VF_OK) return st;
  } else {
    fmt = format_from_path(out->path ? out->path : out->parts.path);
    if (fmt < 0)
      return cerr(c, v->line,
                  "%s: missing 'format' (npy, parquet, fbin or hdf5), and the file "
                  "name does not tell",
                  path);
  }
  out->format = (vf_cfg_format)fmt;
  if (is_payload && out->format != VF_CFG_FORMAT_PARQUET && out->format != VF_CFG_FORMAT_JSONL)
    return cerr(c, x ? x->line : v->line, "%s.format: a payload component must be parquet or jsonl", path);
  if (!is_payload && out->format == VF_CFG_FORMAT_JSONL)
    return cerr(c, x ? x->line : v->line, "%s.format: jsonl holds payloads, not vectors", path);
  if ((x = map_get(v, "columns", &kl))) {
    path_join(p, path, "columns");
    if ((st = get_str_list(c, x, p, &out->columns, &out->ncolumns)) != VF_OK) return st;
  }
  if ((x = map_get(v, "exclude", &kl))) {
    path_join(p, path, "exclude");
    if ((st = get_str_list(c, x, p, &out->exclude, &out->nexclude)) != VF_OK) return st;
  }
  if ((x = map_get(v, "fill_null", &kl))) {
    path_join(p, path, "fill_null");
    if (x->kind != CFG_SCALAR)
      return cerr(c, x->line, "%s: expected a single value, got %s", p, kind_name(x));
    vf_buf jb;
    vf_buf_init(&jb, CFG_MAX_VALUE * 2 + 16);
    st = scalar_json(c, x, p, &jb);
    if (st == VF_OK) st = vf_buf_append(&jb, "", 1, c->err);
    if (st != VF_OK) {
      vf_buf_free(&jb);
      return st;
    }
    size_t n;
    out->fill_null_json = (char *)vf_buf_take(&jb, &n);
  }
  if ((x = map_get(v, "cache", &kl))) {
    path_join(p, path, "cache");
    if ((st = get_enum(c, x, p, CACHES, &e)) != VF_OK) return st;
    out->cache = (vf_cfg_cache)e;
  }
  return VF_OK;
}

/* URI check with a secret-safe message. */
static vf_status check_uri(cctx *c, const cfg_node *v, const char *path, const char *uri,
                           bool secret, io_scheme *scheme) {
  io_uri u;
  vf_error e2;
  vf_status st = io_uri_parse(uri, &u, &e2);
  if (st != VF_OK) {
    if (secret) return cerr(c, v->line, "%s: not a valid corpus URI", path);
    return cerr(c, v->line, "%s: %s", path, e2.msg);
  }
  if (scheme) *scheme = u.scheme;
  io_uri_free(&u);
  return VF_OK;
}

enum { F_URI = 1, F_S3 = 2, F_HF = 4, F_LOCAL = 8, F_DATASET = 16, F_ALL = 31 };

typedef struct dup_item {
  const char *s;
  size_t index;
} dup_item;

static int dup_cmp(const void *a, const void *b) {
  const dup_item *x = a, *y = b;
  int c = strcmp(x->s, y->s);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* The first repeated string in document order: *later is its position and *first the earlier
 * one; false when all differ.  Sorting keeps this O(n log n) for long file lists.  On
 * allocation failure *oom is set. */
static bool find_duplicate(const char *(*get)(const void *, size_t), const void *arr, size_t n,
                           size_t *first, size_t *later, bool *oom_out) {
  *oom_out = false;
  if (n < 2) return false;
  dup_item *it = vf_mallocarray(n, sizeof *it);
  if (!it) {
    *oom_out = true;
    return false;
  }
  for (size_t i = 0; i < n; i++)
    it[i] = (dup_item){get(arr, i), i};
  qsort(it, n, sizeof *it, dup_cmp);
  bool found = false;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && strcmp(it[j].s, it[i].s) == 0)
      j++;
    /* a run of equal strings, ordered by position: its second member repeats the first */
    if (j - i >= 2 && (!found || it[i + 1].index < *later)) {
      *first = it[i].index;
      *later = it[i + 1].index;
      found = true;
    }
    i = j;
  }
  free(it);
  return found;
}

static const char *field_key_at(const void *arr, size_t i) {
  return ((const vf_cfg_field *)arr)[i].key;
}

static const char *str_at(const void *arr, size_t i) {
  return ((char *const *)arr)[i];
}

static vf_status parse_payload_fields(cctx *c, const cfg_node *v, const char *path) {
  vf_cfg_datasource *ds = &c->cfg->datasource;
  if (v->kind == CFG_SCALAR)
    return cerr(c, v->line, "%s: expected a mapping (payload key: column) or a list of columns",
                path);
  size_t n = v->n;
  if (n == 0) return VF_OK;
  ds->payload_fields = vf_calloc(n, sizeof *ds->payload_fields);
  if (!ds->payload_fields) return oom(c, v->line);
  for (size_t i = 0; i < n; i++) {
    vf_cfg_field *f = &ds->payload_fields[i];
    char p[CFG_PATH_MAX];
    vf_status st;
    ds->npayload_fields++;
    if (v->kind == CFG_MAP) {
      const cfg_node *k = v->items[2 * i], *val = v->items[2 * i + 1];
      f->line = k->line;
      if (!*k->text) return cerr(c, k->line, "%s: a payload key must not be empty", path);
      f->key = vf_strdup(k->text);
      if (!f->key) return oom(c, k->line);
      path_join(p, path, k->text);
      if (scalar_is_null(val)) return cerr(c, val->line, "%s: expected a column name", p);
      if ((st = get_str(c, val, p, false, &f->column)) != VF_OK) return st;
    } else {
      const cfg_node *val = v->items[i];
      f->line = val->line;
      path_index(p, path, i);
      if ((st = get_str(c, val, p, false, &f->column)) != VF_OK) return st;
      f->key = vf_strdup(f->column);
      if (!f->key) return oom(c, val->line);
      /* the renderer shows the list as a mapping: keep the secret mark under that path */
      if (cfg_path_is_secret(c->cfg, p)) {
        char mp[CFG_PATH_MAX];
        path_join(mp, path, f->key);
        if ((st = mark_secret_kind(c, mp, cfg_path_secret_is_userinfo(c->cfg, p), val->line)) !=
            VF_OK)
          return st;
      }
    }
  }
  size_t first, later;
  bool nomem = false;
  if (v->kind == CFG_SEQ && find_duplicate(field_key_at, ds->payload_fields, ds->npayload_fields,
                                           &first, &later, &nomem)) {
    char p[CFG_PATH_MAX];
    path_index(p, path, later);
    return cerr(
        c, v->items[later]->line, "%s: duplicate payload field '%.100s' (also entry %zu)", p,
        cfg_path_is_secret(c->cfg, p) ? VF_CONFIG_SECRET_MASK : ds->payload_fields[later].key,
        first);
  }
  if (nomem) return oom(c, v->line);
  return VF_OK;
}

/* scheme + container + "/" + path (leading '/' of path dropped; the '/' only before a
 * non-empty path unless always_slash) — the URI of a split datasource form. */
static vf_status build_uri(cctx *c, const char *scheme, const char *container, const char *path,
                           bool always_slash, char **out) {
  const char *tail = path ? path : "";
  while (*tail == '/')
    tail++;
  vf_buf u;
  vf_buf_init(&u, 0);
  vf_status st = vf_buf_printf(&u, c->err, "%s%s%s%s", scheme, container,
                               *tail || always_slash ? "/" : "", tail);
  if (st == VF_OK) st = vf_buf_append(&u, "", 1, c->err);
  if (st != VF_OK) {
    vf_buf_free(&u);
    return st;
  }
  size_t n;
  *out = (char *)vf_buf_take(&u, &n);
  return VF_OK;
}

static vf_status parse_datasource(cctx *c, const cfg_node *v) {
  static const char *const keys[] = {"type",           "uri",     "file_list", "id_expression",
                                     "payload_fields", "id_root", "bucket",    "prefix",
                                     "repo_id",        "subdir",  "path",      "vectors",
                                     "payload",        "cache",   "binary_as_string", NULL};
  static const int applies[] = {
      F_ALL, F_URI,   F_URI,     F_ALL,     F_ALL,    F_URI | F_LOCAL | F_DATASET, F_S3, F_S3, F_HF,
      F_HF,  F_LOCAL, F_DATASET, F_DATASET, F_DATASET, F_ALL};
  static const char *const types[] = {"s3", "huggingface", "local", "dataset", NULL};
  static const char *const form_names[] = {"a uri/file_list datasource", "type: s3",
                                           "type: huggingface", "type: local", "type: dataset"};
  const char *path = "datasource";
  char p[CFG_PATH_MAX];
  vf_cfg_datasource *ds = &c->cfg->datasource;
  vf_status st = expect_map(c, v, path);
  if (st == VF_OK) st = check_keys(c, v, path, keys);
  if (st != VF_OK) return st;
  const cfg_node *x;
  int kl = v->line, e;
  bool secret = false;
  ds->form = VF_CFG_DS_URI;
  if ((x = map_get(v, "type", &kl))) {
    if ((st = get_enum(c, x, "datasource.type", types, &e)) != VF_OK) return st;
    ds->form = (vf_cfg_ds_form)(e + 1);
  }
  int fbit = 1 << ds->form;
  for (int i = 0; keys[i]; i++) {
    if (!(applies[i] & fbit) && map_has(v, keys[i], &kl))
      return cerr(c, kl, "'datasource.%s' does not apply to %s", keys[i], form_names[ds->form]);
  }
  /* cache before components: they inherit it */
  if ((x = map_get(v, "cache", &kl))) {
    if ((st = get_enum(c, x, "datasource.cache", CACHES, &e)) != VF_OK) return st;
    ds->cache = (vf_cfg_cache)e;
  }
  io_scheme scheme = IO_URI_LOCAL;
  bool have_uri = false;
  switch (ds->form) {
  case VF_CFG_DS_URI:
    if ((x = map_get(v, "uri", &kl))) {
      if ((st = get_text(c, x, "datasource.uri", &ds->uri, &secret)) != VF_OK) return st;
      if (!*ds->uri) return cerr(c, x->line, "datasource.uri: must not be empty");
      if ((st = check_uri(c, x, "datasource.uri", ds->uri, secret, &scheme)) != VF_OK) return st;
      have_uri = true;
    }
    if ((x = map_get(v, "file_list", &kl))) {
      if ((st = get_str_list(c, x, "datasource.file_list", &ds->file_list, &ds->nfiles)) != VF_OK)
        return st;
      if (ds->nfiles == 0) return cerr(c, x->line, "datasource.file_list: the list is empty");
      for (size_t i = 0; i < ds->nfiles; i++) {
        path_index(p, "datasource.file_list", i);
        bool fsecret = cfg_path_is_secret(c->cfg, p);
        io_scheme fs;
        if ((st = check_uri(c, x->items[i], p, ds->file_list[i], fsecret, &fs)) != VF_OK) return st;
        if (fs != IO_URI_LOCAL && fs != IO_URI_FILE) scheme = fs;
      }
      size_t first, later;
      bool nomem = false;
      if (find_duplicate(str_at, ds->file_list, ds->nfiles, &first, &later, &nomem)) {
        path_index(p, "datasource.file_list", later);
        return cerr(c, x->items[later]->line, "%s: the same file as entry %zu", p, first);
      }
      if (nomem) return oom(c, x->line);
      have_uri = true;
    }
    if (!have_uri)
      return cerr(c, v->line,
                  "datasource: missing required key 'uri' or 'file_list' (or type: s3, "
                  "huggingface, local or dataset)");
    break;
  case VF_CFG_DS_S3: {
    int bl = v->line;
    if (!(x = map_get(v, "bucket", &bl)))
      return cerr(c, v->line, "datasource: type: s3 needs 'bucket'");
    bool s1 = false, s2 = false;
    if ((st = get_text(c, x, "datasource.bucket", &ds->bucket, &s1)) != VF_OK) return st;
    if (!*ds->bucket || strchr(ds->bucket, '/'))
      return cerr(c, x->line, "datasource.bucket: expected a bucket name (no '/'), got '%.80s'",
                  shown(ds->bucket, s1));
    if ((x = map_get(v, "prefix", &kl)) &&
        (st = get_text(c, x, "datasource.prefix", &ds->prefix, &s2)) != VF_OK)
      return st;
    if ((st = build_uri(c, "s3://", ds->bucket, ds->prefix, true, &ds->uri)) != VF_OK) return st;
    secret = s1 || s2;
    if ((st = check_uri(c, v, "datasource", ds->uri, secret, &scheme)) != VF_OK) return st;
    break;
  }
  case VF_CFG_DS_HUGGINGFACE: {
    bool s1 = false, s2 = false;
    if (!(x = map_get(v, "repo_id", &kl)))
      return cerr(c, v->line, "datasource: type: huggingface needs 'repo_id'");
    if ((st = get_text(c, x, "datasource.repo_id", &ds->repo_id, &s1)) != VF_OK) return st;
    const char *slash = strchr(ds->repo_id, '/');
    if (!slash || slash == ds->repo_id || !slash[1] || strchr(slash + 1, '/'))
      return cerr(c, x->line, "datasource.repo_id: expected 'namespace/name', got '%.80s'",
                  shown(ds->repo_id, s1));
    if ((x = map_get(v, "subdir", &kl)) &&
        (st = get_text(c, x, "datasource.subdir", &ds->subdir, &s2)) != VF_OK)
      return st;
    if ((st = build_uri(c, "hf://datasets/", ds->repo_id, ds->subdir, false, &ds->uri)) != VF_OK)
      return st;
    secret = s1 || s2;
    if ((st = check_uri(c, v, "datasource", ds->uri, secret, &scheme)) != VF_OK) return st;
    break;
  }
  case VF_CFG_DS_LOCAL:
    if (!(x = map_get(v, "path", &kl)))
      return cerr(c, v->line, "datasource: type: local needs 'path'");
    if ((st = get_text(c, x, "datasource.path", &ds->path, &secret)) != VF_OK) return st;
    if (!*ds->path) return cerr(c, x->line, "datasource.path: must not be empty");
    if ((st = check_uri(c, x, "datasource.path", ds->path, secret, &scheme)) != VF_OK) return st;
    if (scheme != IO_URI_LOCAL && scheme != IO_URI_FILE)
      return cerr(c, x->line, "datasource.path: type: local needs a local path");
    ds->uri = vf_strdup(ds->path);
    if (!ds->uri) return oom(c, x->line);
    break;
  case VF_CFG_DS_DATASET:
    if (!(x = map_get(v, "vectors", &kl)))
      return cerr(c, v->line, "datasource: type: dataset needs a 'vectors' component");
    if ((st = parse_component(c, x, "datasource.vectors", false, &ds->vectors)) != VF_OK) return st;
    if ((x = map_get(v, "payload", &kl)) &&
        (st = parse_component(c, x, "datasource.payload", true, &ds->payload)) != VF_OK)
      return st;
    if (ds->payload.present && ds->vectors.has_parts != ds->payload.has_parts)
      return cerr(c, x->line,
                  "datasource.payload: pairs with the vectors by row, so both "
                  "components need 'parts' or both a single 'path'");
    if (ds->payload.present && ds->vectors.has_parts &&
        ds->payload.parts.count != ds->vectors.parts.count)
      return cerr(c, x->line,
                  "datasource.payload.parts.count: %lld, but the vectors have %lld parts",
                  (long long)ds->payload.parts.count, (long long)ds->vectors.parts.count);
    break;
  }
  if (secret && ds->uri && (st = mark_secret(c, "datasource.uri", v->line)) != VF_OK) return st;
  if ((x = map_get(v, "id_root", &kl))) {
    if ((st = get_str(c, x, "datasource.id_root", false, &ds->id_root)) != VF_OK) return st;
    if (scheme != IO_URI_LOCAL && scheme != IO_URI_FILE)
      return cerr(c, x->line, "datasource.id_root: applies to local corpora only");
    if (ds->id_root[0] != '/')
      return cerr(c, x->line, "datasource.id_root: expected an absolute directory");
  }
  if ((x = map_get(v, "id_expression", &kl))) {
    if ((st = get_str(c, x, "datasource.id_expression", false, &ds->id_expression)) != VF_OK)
      return st;
  } else {
    ds->id_expression = vf_strdup(VF_CONFIG_DEFAULT_ID_EXPRESSION);
    if (!ds->id_expression) return oom(c, v->line);
  }
  corpus_idexpr *ie = NULL;
  vf_error e2;
  if (corpus_idexpr_parse(ds->id_expression, &ie, &e2) != VF_OK)
    return cerr(c, x ? x->line : v->line, "datasource.id_expression: %s",
                cfg_path_is_secret(c->cfg, "datasource.id_expression") ? "invalid id expression"
                                                                       : e2.msg);
  corpus_idexpr_free(ie);
  if ((x = map_get(v, "payload_fields", &kl)) &&
      (st = parse_payload_fields(c, x, "datasource.payload_fields")) != VF_OK)
    return st;
  if ((x = map_get(v, "binary_as_string", &kl)) &&
      (st = get_bool(c, x, "datasource.binary_as_string", &ds->binary_as_string)) != VF_OK)
    return st;
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
  vf_status st = expect_map(c, x, path);
  if (st == VF_OK) st = check_keys(c, x, path, keys);
  if (st != VF_OK) return st;
  const cfg_node *y;
  int kl = x->line, mode = 0, e;
  if ((y = map_get(x, "mode", &kl)) &&
      (st = get_enum(c, y, "vectorstore.params.payload_indexes.mode", MODES, &mode)) != VF_OK)
    return st;
  char **fields = NULL;
  size_t nf = 0;
  int fl = x->line;
  if ((y = map_get(x, "fields", &fl))) {
    st = get_str_list(c, y, "vectorstore.params.payload_indexes.fields", &fields, &nf);
    for (size_t i = 0; i < nf; i++)
      free(fields[i]);
    free(fields);
    if (st != VF_OK) return st;
    if (mode != 2)
      return cerr(c, fl, "vectorstore.params.payload_indexes.fields: applies to mode: specific "
                  "(mode is %s)", MODES[mode]);
  }
  if (mode == 2 && nf == 0)
    return cerr(c, kl, "vectorstore.params.payload_indexes: mode: specific needs a non-empty "
                "'fields' list");
  if ((y = map_get(x, "field_types", &kl))) {
    if ((st = expect_map(c, y, "vectorstore.params.payload_indexes.field_types")) != VF_OK)
      return st;
    if (mode == 0 && y->n > 0)
      return cerr(c, kl, "vectorstore.params.payload_indexes.field_types: applies to mode: all "
                  "or specific (mode is none)");
    for (size_t i = 0; i < y->n; i++) {
      char p[CFG_PATH_MAX];
      path_join(p, "vectorstore.params.payload_indexes.field_types", y->items[2 * i]->text);
      if ((st = get_enum(c, y->items[2 * i + 1], p, TYPES, &e)) != VF_OK) return st;
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
  vf_status st = expect_map(c, v, path);
  if (st == VF_OK) st = check_keys(c, v, path, keys);
  if (st != VF_OK) return st;
  const cfg_node *x;
  int kl, e;
  if ((x = map_get(v, "hnsw", &kl))) {
    if ((st = expect_map(c, x, "vectorstore.params.hnsw")) != VF_OK) return st;
    if ((st = check_keys(c, x, "vectorstore.params.hnsw", HNSW_KEYS)) != VF_OK) return st;
  }
  if ((x = map_get(v, "optimizers", &kl))) {
    if ((st = expect_map(c, x, "vectorstore.params.optimizers")) != VF_OK) return st;
    if ((st = check_keys(c, x, "vectorstore.params.optimizers", OPTIMIZER_KEYS)) != VF_OK)
      return st;
  }
  if ((x = map_get(v, "quantization", &kl)) &&
      (st = check_quantization(c, x, "vectorstore.params.quantization")) != VF_OK)
    return st;
  if ((x = map_get(v, "shard_number", &kl)) &&
      (st = get_int(c, x, "vectorstore.params.shard_number", 1, 65536, &vs->shard_number)) != VF_OK)
    return st;
  if ((x = map_get(v, "replication_factor", &kl)) &&
      (st = get_int(c, x, "vectorstore.params.replication_factor", 1, 1024,
                    &vs->replication_factor)) != VF_OK)
    return st;
  if ((x = map_get(v, "write_consistency_factor", &kl)) &&
      (st = get_int(c, x, "vectorstore.params.write_consistency_factor", 1, 1024,
                    &vs->write_consistency_factor)) != VF_OK)
    return st;
  bool b;
  if ((x = map_get(v, "on_disk_payload", &kl))) {
    if ((st = get_bool(c, x, "vectorstore.params.on_disk_payload", &b)) != VF_OK) return st;
    vs->on_disk_payload = b ? 1 : 0;
  }
  if ((x = map_get(v, "recreate", &kl)) &&
      (st = get_bool(c, x, "vectorstore.params.recreate", &vs->recreate)) != VF_OK)
    return st;
  static const char *const DEFERS[] = {"indexing_threshold", "hnsw_m", "none", NULL};
  if ((x = map_get(v, "defer", &kl)) &&
      (st = get_enum(c, x, "vectorstore.params.defer", DEFERS, &e)) != VF_OK)
    return st;
  if ((x = map_get(v, "payload_indexes", &kl)) && (st = check_payload_indexes(c, x)) != VF_OK)
    return st;
  /* the whole subtree as JSON (after the typed reads so secret marks are known) */
  vf_buf real, masked;
  vf_buf_init(&real, 64u << 20);
  vf_buf_init(&masked, 64u << 20);
  st = node_json(c, v, path, &real, &masked);
  if (st == VF_OK) st = vf_buf_append(&real, "", 1, c->err);
  if (st == VF_OK) st = vf_buf_append(&masked, "", 1, c->err);
  if (st != VF_OK) {
    vf_buf_free(&real);
    vf_buf_free(&masked);
    return st;
  }
  size_t n;
  free(vs->params_json);
  vs->params_json = (char *)vf_buf_take(&real, &n);
  c->cfg->internal->params_json_masked = (char *)vf_buf_take(&masked, &n);
  return VF_OK;
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
    st = expect_map(c, v, "vectorstore");
    if (st == VF_OK) st = check_keys(c, v, "vectorstore", keys);
    if (st != VF_OK) return st;
    if ((x = map_get(v, "type", &kl))) {
      if ((st = get_enum(c, x, "vectorstore.type", types, &e)) != VF_OK) return st;
      vs->type = (vf_cfg_store_type)e;
    }
    if ((x = map_get(v, "path", &kl)) &&
        (st = get_str(c, x, "vectorstore.path", true, &vs->path)) != VF_OK)
      return st;
    if ((x = map_get(v, "url", &kl)) &&
        (st = get_str(c, x, "vectorstore.url", true, &vs->url)) != VF_OK)
      return st;
    if ((x = map_get(v, "api_key", &kl))) {
      bool secret;
      if ((st = get_text(c, x, "vectorstore.api_key", &vs->api_key, &secret)) != VF_OK) return st;
      if ((st = mark_secret(c, "vectorstore.api_key", x->line)) != VF_OK) return st;
    }
    if ((x = map_get(v, "collection_name", &kl))) {
      if ((st = get_str(c, x, "vectorstore.collection_name", false, &vs->collection_name)) != VF_OK)
        return st;
      const char *n = vs->collection_name;
      if (strchr(n, '/') || strchr(n, '\\') || !strcmp(n, ".") || !strcmp(n, "..") ||
          strlen(n) > 255)
        return cerr(c, x->line,
                    "vectorstore.collection_name: '%.80s' cannot be a collection name (no '/', "
                    "'\\', '.' or '..'; at most 255 bytes)",
                    shown(n, cfg_path_is_secret(c->cfg, "vectorstore.collection_name")));
    }
    if ((x = map_get(v, "params", &kl)) && (st = parse_params(c, x)) != VF_OK) return st;
    /* issue 18: the gRPC transport (the official Python client's key names) */
    if ((x = map_get(v, "prefer_grpc", &kl)) &&
        (st = get_bool(c, x, "vectorstore.prefer_grpc", &vs->prefer_grpc)) != VF_OK)
      return st;
    if ((x = map_get(v, "grpc_port", &kl)) &&
        (st = get_int(c, x, "vectorstore.grpc_port", 1, 65535, &vs->grpc_port)) != VF_OK)
      return st;
    if ((x = map_get(v, "grpc_max_message_mb", &kl)) &&
        (st = get_int(c, x, "vectorstore.grpc_max_message_mb", 1, 2047,
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
      if (vs->url && map_get(v, "url", &kl))
        return cerr(c, kl, "'vectorstore.url' applies to type: qdrant only (type is local)");
      if (vs->api_key && map_get(v, "api_key", &kl))
        return cerr(c, kl, "'vectorstore.api_key' applies to type: qdrant only (type is local)");
      static const char *const grpc_keys[] = {"prefer_grpc", "grpc_port", "grpc_max_message_mb",
                                              NULL};
      for (const char *const *k = grpc_keys; *k; k++)
        if (map_get(v, *k, &kl))
          return cerr(c, kl, "'vectorstore.%s' applies to type: qdrant only (type is local)", *k);
    } else {
      if (vs->path && map_get(v, "path", &kl))
        return cerr(c, kl, "'vectorstore.path' applies to type: local only (type is qdrant)");
      if (!vs->url) return cerr(c, v->line, "vectorstore: type: qdrant needs 'url'");
      if (strncmp(vs->url, "http://", 7) != 0 && strncmp(vs->url, "https://", 8) != 0) {
        map_get(v, "url", &kl);
        return cerr(c, kl, "vectorstore.url: expected an http:// or https:// URL, got '%.80s'",
                    shown(vs->url, cfg_path_is_secret(c->cfg, "vectorstore.url")));
      }
    }
  }
  if (vs->type == VF_CFG_STORE_LOCAL && !vs->path) {
    vs->path = vf_strdup(VF_CONFIG_DEFAULT_STORE_PATH);
    if (!vs->path) return oom(c, v ? v->line : 1);
  }
  if (!vs->params_json) {
    vs->params_json = vf_strdup("{}");
    c->cfg->internal->params_json_masked = vf_strdup("{}");
    if (!vs->params_json || !c->cfg->internal->params_json_masked) return oom(c, v ? v->line : 1);
  }
  return VF_OK;
}

/* ------------------------------------------------------- loader, dispatch, ... */

static vf_status parse_loader(cctx *c, const cfg_node *v) {
  static const char *const keys[] = {"batch_size", "prefetch_size", "concurrency", "retries",
                                     "wait",       "skip_bad_rows", NULL};
  vf_cfg_loader *l = &c->cfg->loader;
  vf_status st = expect_map(c, v, "loader");
  if (st == VF_OK) st = check_keys(c, v, "loader", keys);
  if (st != VF_OK) return st;
  const cfg_node *x;
  int kl;
  if ((x = map_get(v, "batch_size", &kl)) &&
      (st = get_int(c, x, "loader.batch_size", 1, 1000000, &l->batch_size)) != VF_OK)
    return st;
  const cfg_node *pf = map_get(v, "prefetch_size", &kl);
  if (pf && (st = get_int(c, pf, "loader.prefetch_size", 1, 100000000, &l->prefetch_size)) != VF_OK)
    return st;
  if ((x = map_get(v, "concurrency", &kl)) &&
      (st = get_int(c, x, "loader.concurrency", 1, 1024, &l->concurrency)) != VF_OK)
    return st;
  if ((x = map_get(v, "retries", &kl)) &&
      (st = get_int(c, x, "loader.retries", 0, 100, &l->retries)) != VF_OK)
    return st;
  if ((x = map_get(v, "wait", &kl)) && (st = get_bool(c, x, "loader.wait", &l->wait)) != VF_OK)
    return st;
  if ((x = map_get(v, "skip_bad_rows", &kl)) &&
      (st = get_bool(c, x, "loader.skip_bad_rows", &l->skip_bad_rows)) != VF_OK)
    return st;
  if (l->prefetch_size < l->batch_size) {
    if (pf)
      return cerr(c, pf->line, "loader.prefetch_size: %lld is smaller than loader.batch_size %lld",
                  (long long)l->prefetch_size, (long long)l->batch_size);
    l->prefetch_size = l->batch_size;
  }
  return VF_OK;
}

static vf_status parse_dispatch(cctx *c, const cfg_node *v) {
  static const char *const keys[] = {"num_shards", "engine", "run_name", NULL};
  static const char *const engines[] = {"slurm", "local", NULL};
  vf_cfg_dispatch *d = &c->cfg->dispatch;
  vf_status st = expect_map(c, v, "dispatch");
  if (st == VF_OK) st = check_keys(c, v, "dispatch", keys);
  if (st != VF_OK) return st;
  const cfg_node *x;
  int kl, e;
  if ((x = map_get(v, "num_shards", &kl)) &&
      (st = get_int(c, x, "dispatch.num_shards", 1, 100000, &d->num_shards)) != VF_OK)
    return st;
  if ((x = map_get(v, "engine", &kl))) {
    if ((st = get_enum(c, x, "dispatch.engine", engines, &e)) != VF_OK) return st;
    d->engine = (vf_cfg_engine)e;
  }
  if ((x = map_get(v, "run_name", &kl))) {
    if ((st = get_str(c, x, "dispatch.run_name", false, &d->run_name)) != VF_OK) return st;
    const char *r = d->run_name;
    if (r[0] == '.' ||
        strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789._-") != strlen(r) ||
        strlen(r) > 200)
      return cerr(c, x->line,
                  "dispatch.run_name: use letters, digits, '.', '_' and '-' (not first '.'), "
                  "at most 200");
  }
  return VF_OK;
}

static vf_status parse_resources(cctx *c, const cfg_node *v) {
  static const char *const keys[] = {"cpus", "memory", "partition", "time", NULL};
  vf_cfg_resources *r = &c->cfg->resources;
  vf_status st = expect_map(c, v, "resources");
  if (st == VF_OK) st = check_keys(c, v, "resources", keys);
  if (st != VF_OK) return st;
  const cfg_node *x;
  int kl;
  if ((x = map_get(v, "cpus", &kl)) &&
      (st = get_int(c, x, "resources.cpus", 1, 4096, &r->cpus)) != VF_OK)
    return st;
  if ((x = map_get(v, "memory", &kl)) &&
      (st = get_int(c, x, "resources.memory", 1, 1048576, &r->memory_gb)) != VF_OK)
    return st;
  if ((x = map_get(v, "partition", &kl)) &&
      (st = get_str(c, x, "resources.partition", false, &r->partition)) != VF_OK)
    return st;
  if ((x = map_get(v, "time", &kl)) &&
      (st = get_str(c, x, "resources.time", false, &r->time)) != VF_OK)
    return st;
  return VF_OK;
}

/* ---------------------------------------------------------------------- API */

static vf_status parse_root(cctx *c, const cfg_node *root) {
  static const char *const keys[] = {"vectors",  "datasource", "vectorstore", "loader",
                                     "dispatch", "resources",  NULL};
  if (!root || scalar_is_null(root))
    return cerr(c, 1, "empty config (expected a mapping with 'vectors' and 'datasource')");
  if (root->kind != CFG_MAP)
    return cerr(c, root->line, "expected a mapping of sections (vectors, datasource, ...), got %s",
                kind_name(root));
  vf_status st = check_keys(c, root, "", keys);
  if (st != VF_OK) return st;
  const cfg_node *x;
  int kl;
  const cfg_node *vectors = map_get(root, "vectors", &kl);
  if (!vectors) return cerr(c, root->line, "missing required key 'vectors'");
  const cfg_node *ds = map_get(root, "datasource", &kl);
  if (!ds) return cerr(c, root->line, "missing required key 'datasource'");
  if ((st = parse_datasource(c, ds)) != VF_OK) return st;
  if ((st = parse_vectors(c, vectors)) != VF_OK) return st;
  if ((st = parse_vectorstore(c, map_get(root, "vectorstore", &kl))) != VF_OK) return st;
  if ((x = map_get(root, "loader", &kl)) && (st = parse_loader(c, x)) != VF_OK) return st;
  if ((x = map_get(root, "dispatch", &kl)) && (st = parse_dispatch(c, x)) != VF_OK) return st;
  if ((x = map_get(root, "resources", &kl)) && (st = parse_resources(c, x)) != VF_OK) return st;
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
  cctx c = {cfg->name, err, cfg};
  cfg_node *root = NULL;
  vf_status st = cfg_tree_parse(text, len, cfg->name, &root, err);
  if (st == VF_OK) st = parse_root(&c, root);
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
    if ((st = vf_buf_reserve(&b, 65536, err)) != VF_OK) {
      st = vf_error_set(err, VF_ECONFIG, "%s: larger than %zu bytes; not a config file", path,
                        VF_CONFIG_MAX_BYTES);
      break;
    }
    size_t want = b.cap - b.len;
    if (want > VF_CONFIG_MAX_BYTES + 1 - b.len) want = VF_CONFIG_MAX_BYTES + 1 - b.len;
    size_t got = fread(b.data + b.len, 1, want, f);
    b.len += got;
    if (b.len > VF_CONFIG_MAX_BYTES) {
      st = vf_error_set(err, VF_ECONFIG, "%s: larger than %zu bytes; not a config file", path,
                        VF_CONFIG_MAX_BYTES);
      break;
    }
    if (got < want) {
      if (ferror(f)) st = vf_error_set(err, VF_EIO, "%s: read error", path);
      break;
    }
  }
  fclose(f);
  if (st == VF_OK) st = vf_config_parse(b.data ? (const char *)b.data : "", b.len, path, cfg, err);
  vf_buf_free(&b);
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
