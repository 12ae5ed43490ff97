/*
 * config_datasource.c — the `datasource:` section of the load config: the URI (and the older
 * split forms it resolves from), file templates, the dataset components and their payload
 * fields, duplicates among them.  Split out of config.c, whose header comment describes the
 * whole; it reads values through the getters of config_get.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "config_internal.h"

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
  vf_status st = cfg_get_str(c, v, path, false, out);
  if (st != VF_OK) return st;
  int n;
  if (!template_ok(*out, &n))
    return cfg_cerr(
        c, v->line,
        "%s: bad placeholder; use {i} or {i:0Nd} for the part number ({{ and }} for braces)", path);
  if (n == 0 && count > 1)
    return cfg_cerr(c, v->line, "%s: %lld parts need an {i} placeholder in the path", path,
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
  vf_status st = cfg_expect_map(c, v, path);
  if (st != VF_OK) return st;
  if ((st = cfg_check_keys(c, v, path, keys)) != VF_OK) return st;
  out->present = true;
  out->cache = c->cfg->datasource.cache;
  const cfg_node *x;
  int kl = v->line, e, fmt = -1;
  int path_line = 0, parts_line = 0;
  const cfg_node *pathn = cfg_map_get(v, "path", &path_line);
  const cfg_node *parts = cfg_map_get(v, "parts", &parts_line);
  if (pathn && parts)
    return cfg_cerr(c, parts_line, "%s: give either 'path' (one file) or 'parts', not both", path);
  if (!pathn && !parts)
    return cfg_cerr(c, v->line, "%s: missing required key 'path' or 'parts'", path);
  if (pathn) {
    cfg_path_join(p, path, "path");
    if ((st = cfg_get_str(c, pathn, p, false, &out->path)) != VF_OK) return st;
  } else {
    cfg_path_join(p, path, "parts");
    if ((st = cfg_expect_map(c, parts, p)) != VF_OK) return st;
    if ((st = cfg_check_keys(c, parts, p, part_keys)) != VF_OK) return st;
    out->has_parts = true;
    if (!(x = cfg_map_get(parts, "count", &kl)))
      return cfg_cerr(c, parts->line, "%s: missing required key 'count'", p);
    cfg_path_join(pp, p, "count");
    if ((st = cfg_get_int(c, x, pp, 1, 10000000, &out->parts.count)) != VF_OK) return st;
    if ((x = cfg_map_get(parts, "start", &kl))) {
      cfg_path_join(pp, p, "start");
      if ((st = cfg_get_int(c, x, pp, 0, INT64_C(1) << 40, &out->parts.start)) != VF_OK) return st;
    }
    if (!(x = cfg_map_get(parts, "path", &kl)))
      return cfg_cerr(c, parts->line, "%s: missing required key 'path'", p);
    cfg_path_join(pp, p, "path");
    if ((st = get_template(c, x, pp, out->parts.count, &out->parts.path)) != VF_OK) return st;
    if ((x = cfg_map_get(parts, "link", &kl))) {
      cfg_path_join(pp, p, "link");
      if ((st = get_template(c, x, pp, out->parts.count, &out->parts.link)) != VF_OK) return st;
    }
  }
  if ((x = cfg_map_get(v, "format", &kl))) {
    cfg_path_join(p, path, "format");
    if ((st = cfg_get_enum(c, x, p, CFG_FORMATS, &fmt)) != VF_OK) return st;
  } else {
    fmt = format_from_path(out->path ? out->path : out->parts.path);
    if (fmt < 0)
      return cfg_cerr(c, v->line,
                      "%s: missing 'format' (npy, parquet, fbin or hdf5), and the file "
                      "name does not tell",
                      path);
  }
  out->format = (vf_cfg_format)fmt;
  if (is_payload && out->format != VF_CFG_FORMAT_PARQUET && out->format != VF_CFG_FORMAT_JSONL)
    return cfg_cerr(c, x ? x->line : v->line,
                    "%s.format: a payload component must be parquet or jsonl", path);
  if (!is_payload && out->format == VF_CFG_FORMAT_JSONL)
    return cfg_cerr(c, x ? x->line : v->line, "%s.format: jsonl holds payloads, not vectors", path);
  if ((x = cfg_map_get(v, "columns", &kl))) {
    cfg_path_join(p, path, "columns");
    if ((st = cfg_get_str_list(c, x, p, &out->columns, &out->ncolumns)) != VF_OK) return st;
  }
  if ((x = cfg_map_get(v, "exclude", &kl))) {
    cfg_path_join(p, path, "exclude");
    if ((st = cfg_get_str_list(c, x, p, &out->exclude, &out->nexclude)) != VF_OK) return st;
  }
  if ((x = cfg_map_get(v, "fill_null", &kl))) {
    cfg_path_join(p, path, "fill_null");
    if (x->kind != CFG_SCALAR)
      return cfg_cerr(c, x->line, "%s: expected a single value, got %s", p, cfg_kind_name(x));
    vf_buf jb;
    vf_buf_init(&jb, CFG_MAX_VALUE * 2 + 16);
    if ((st = cfg_scalar_json(c, x, p, &jb)) != VF_OK || (st = vf_buf_append(&jb, "", 1, c->err)) != VF_OK) {
      vf_buf_free(&jb);
      return st;
    }
    size_t n;
    out->fill_null_json = (char *)vf_buf_take(&jb, &n);
  }
  if ((x = cfg_map_get(v, "cache", &kl))) {
    cfg_path_join(p, path, "cache");
    if ((st = cfg_get_enum(c, x, p, CFG_CACHES, &e)) != VF_OK) return st;
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
    if (secret) return cfg_cerr(c, v->line, "%s: not a valid corpus URI", path);
    return cfg_cerr(c, v->line, "%s: %s", path, e2.msg);
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
    return cfg_cerr(c, v->line, "%s: expected a mapping (payload key: column) or a list of columns",
                    path);
  size_t n = v->n;
  if (n == 0) return VF_OK;
  ds->payload_fields = vf_calloc(n, sizeof *ds->payload_fields);
  if (!ds->payload_fields) return cfg_oom(c, v->line);
  for (size_t i = 0; i < n; i++) {
    vf_cfg_field *f = &ds->payload_fields[i];
    char p[CFG_PATH_MAX];
    vf_status st;
    ds->npayload_fields++;
    if (v->kind == CFG_MAP) {
      const cfg_node *k = v->items[2 * i], *val = v->items[2 * i + 1];
      f->line = k->line;
      if (!*k->text) return cfg_cerr(c, k->line, "%s: a payload key must not be empty", path);
      f->key = vf_strdup(k->text);
      if (!f->key) return cfg_oom(c, k->line);
      cfg_path_join(p, path, k->text);
      if (cfg_scalar_is_null(val)) return cfg_cerr(c, val->line, "%s: expected a column name", p);
      if ((st = cfg_get_str(c, val, p, false, &f->column)) != VF_OK) return st;
    } else {
      const cfg_node *val = v->items[i];
      f->line = val->line;
      cfg_path_index(p, path, i);
      if ((st = cfg_get_str(c, val, p, false, &f->column)) != VF_OK) return st;
      f->key = vf_strdup(f->column);
      if (!f->key) return cfg_oom(c, val->line);
      /* the renderer shows the list as a mapping: keep the secret mark under that path */
      if (cfg_path_is_secret(c->cfg, p)) {
        char mp[CFG_PATH_MAX];
        cfg_path_join(mp, path, f->key);
        if ((st = cfg_mark_secret_kind(c, mp, cfg_path_secret_is_userinfo(c->cfg, p), val->line)) !=
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
    cfg_path_index(p, path, later);
    return cfg_cerr(
        c, v->items[later]->line, "%s: duplicate payload field '%.100s' (also entry %zu)", p,
        cfg_path_is_secret(c->cfg, p) ? VF_CONFIG_SECRET_MASK : ds->payload_fields[later].key,
        first);
  }
  if (nomem) return cfg_oom(c, v->line);
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
  VF_BUF_INIT(&u, VF_BUF_MAX_URL);
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(&u, c->err, "%s%s%s%s", scheme, container,
                       *tail || always_slash ? "/" : "", tail));
  VF_TRY(vf_buf_append(&u, "", 1, c->err));
  size_t n;
  *out = (char *)vf_buf_take(&u, &n);
out:
  vf_buf_free(&u);
  return st;
}

vf_status cfg_parse_datasource(cctx *c, const cfg_node *v) {
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
  vf_status st = cfg_expect_map(c, v, path);
  if (st != VF_OK) return st;
  if ((st = cfg_check_keys(c, v, path, keys)) != VF_OK) return st;
  const cfg_node *x;
  int kl = v->line, e;
  bool secret = false;
  ds->form = VF_CFG_DS_URI;
  if ((x = cfg_map_get(v, "type", &kl))) {
    if ((st = cfg_get_enum(c, x, "datasource.type", types, &e)) != VF_OK) return st;
    ds->form = (vf_cfg_ds_form)(e + 1);
  }
  int fbit = 1 << ds->form;
  for (int i = 0; keys[i]; i++) {
    if (!(applies[i] & fbit) && cfg_map_has(v, keys[i], &kl))
      return cfg_cerr(c, kl, "'datasource.%s' does not apply to %s", keys[i], form_names[ds->form]);
  }
  /* cache before components: they inherit it */
  if ((x = cfg_map_get(v, "cache", &kl))) {
    if ((st = cfg_get_enum(c, x, "datasource.cache", CFG_CACHES, &e)) != VF_OK) return st;
    ds->cache = (vf_cfg_cache)e;
  }
  io_scheme scheme = IO_URI_LOCAL;
  bool have_uri = false;
  switch (ds->form) {
  case VF_CFG_DS_URI:
    if ((x = cfg_map_get(v, "uri", &kl))) {
      if ((st = cfg_get_text(c, x, "datasource.uri", &ds->uri, &secret)) != VF_OK) return st;
      if (!*ds->uri) return cfg_cerr(c, x->line, "datasource.uri: must not be empty");
      if ((st = check_uri(c, x, "datasource.uri", ds->uri, secret, &scheme)) != VF_OK) return st;
      have_uri = true;
    }
    if ((x = cfg_map_get(v, "file_list", &kl))) {
      if ((st = cfg_get_str_list(c, x, "datasource.file_list", &ds->file_list, &ds->nfiles)) !=
          VF_OK)
        return st;
      if (ds->nfiles == 0) return cfg_cerr(c, x->line, "datasource.file_list: the list is empty");
      for (size_t i = 0; i < ds->nfiles; i++) {
        cfg_path_index(p, "datasource.file_list", i);
        bool fsecret = cfg_path_is_secret(c->cfg, p);
        io_scheme fs;
        if ((st = check_uri(c, x->items[i], p, ds->file_list[i], fsecret, &fs)) != VF_OK) return st;
        if (fs != IO_URI_LOCAL && fs != IO_URI_FILE) scheme = fs;
      }
      size_t first, later;
      bool nomem = false;
      if (find_duplicate(str_at, ds->file_list, ds->nfiles, &first, &later, &nomem)) {
        cfg_path_index(p, "datasource.file_list", later);
        return cfg_cerr(c, x->items[later]->line, "%s: the same file as entry %zu", p, first);
      }
      if (nomem) return cfg_oom(c, x->line);
      have_uri = true;
    }
    if (!have_uri)
      return cfg_cerr(c, v->line,
                      "datasource: missing required key 'uri' or 'file_list' (or type: s3, "
                      "huggingface, local or dataset)");
    break;
  case VF_CFG_DS_S3: {
    int bl = v->line;
    if (!(x = cfg_map_get(v, "bucket", &bl)))
      return cfg_cerr(c, v->line, "datasource: type: s3 needs 'bucket'");
    bool s1 = false, s2 = false;
    if ((st = cfg_get_text(c, x, "datasource.bucket", &ds->bucket, &s1)) != VF_OK) return st;
    if (!*ds->bucket || strchr(ds->bucket, '/'))
      return cfg_cerr(c, x->line, "datasource.bucket: expected a bucket name (no '/'), got '%.80s'",
                      cfg_shown(ds->bucket, s1));
    if ((x = cfg_map_get(v, "prefix", &kl)) &&
        (st = cfg_get_text(c, x, "datasource.prefix", &ds->prefix, &s2)) != VF_OK)
      return st;
    if ((st = build_uri(c, "s3://", ds->bucket, ds->prefix, true, &ds->uri)) != VF_OK) return st;
    secret = s1 || s2;
    if ((st = check_uri(c, v, "datasource", ds->uri, secret, &scheme)) != VF_OK) return st;
    break;
  }
  case VF_CFG_DS_HUGGINGFACE: {
    bool s1 = false, s2 = false;
    if (!(x = cfg_map_get(v, "repo_id", &kl)))
      return cfg_cerr(c, v->line, "datasource: type: huggingface needs 'repo_id'");
    if ((st = cfg_get_text(c, x, "datasource.repo_id", &ds->repo_id, &s1)) != VF_OK) return st;
    const char *slash = strchr(ds->repo_id, '/');
    if (!slash || slash == ds->repo_id || !slash[1] || strchr(slash + 1, '/'))
      return cfg_cerr(c, x->line, "datasource.repo_id: expected 'namespace/name', got '%.80s'",
                      cfg_shown(ds->repo_id, s1));
    if ((x = cfg_map_get(v, "subdir", &kl)) &&
        (st = cfg_get_text(c, x, "datasource.subdir", &ds->subdir, &s2)) != VF_OK)
      return st;
    if ((st = build_uri(c, "hf://datasets/", ds->repo_id, ds->subdir, false, &ds->uri)) != VF_OK)
      return st;
    secret = s1 || s2;
    if ((st = check_uri(c, v, "datasource", ds->uri, secret, &scheme)) != VF_OK) return st;
    break;
  }
  case VF_CFG_DS_LOCAL:
    if (!(x = cfg_map_get(v, "path", &kl)))
      return cfg_cerr(c, v->line, "datasource: type: local needs 'path'");
    if ((st = cfg_get_text(c, x, "datasource.path", &ds->path, &secret)) != VF_OK) return st;
    if (!*ds->path) return cfg_cerr(c, x->line, "datasource.path: must not be empty");
    if ((st = check_uri(c, x, "datasource.path", ds->path, secret, &scheme)) != VF_OK) return st;
    if (scheme != IO_URI_LOCAL && scheme != IO_URI_FILE)
      return cfg_cerr(c, x->line, "datasource.path: type: local needs a local path");
    ds->uri = vf_strdup(ds->path);
    if (!ds->uri) return cfg_oom(c, x->line);
    break;
  case VF_CFG_DS_DATASET:
    if (!(x = cfg_map_get(v, "vectors", &kl)))
      return cfg_cerr(c, v->line, "datasource: type: dataset needs a 'vectors' component");
    if ((st = parse_component(c, x, "datasource.vectors", false, &ds->vectors)) != VF_OK) return st;
    if ((x = cfg_map_get(v, "payload", &kl)) &&
        (st = parse_component(c, x, "datasource.payload", true, &ds->payload)) != VF_OK)
      return st;
    if (ds->payload.present && ds->vectors.has_parts != ds->payload.has_parts)
      return cfg_cerr(c, x->line,
                      "datasource.payload: pairs with the vectors by row, so both "
                      "components need 'parts' or both a single 'path'");
    if (ds->payload.present && ds->vectors.has_parts &&
        ds->payload.parts.count != ds->vectors.parts.count)
      return cfg_cerr(c, x->line,
                      "datasource.payload.parts.count: %lld, but the vectors have %lld parts",
                      (long long)ds->payload.parts.count, (long long)ds->vectors.parts.count);
    break;
  }
  if (secret && ds->uri && (st = cfg_mark_secret(c, "datasource.uri", v->line)) != VF_OK) return st;
  if ((x = cfg_map_get(v, "id_root", &kl))) {
    if ((st = cfg_get_str(c, x, "datasource.id_root", false, &ds->id_root)) != VF_OK) return st;
    if (scheme != IO_URI_LOCAL && scheme != IO_URI_FILE)
      return cfg_cerr(c, x->line, "datasource.id_root: applies to local corpora only");
    if (ds->id_root[0] != '/')
      return cfg_cerr(c, x->line, "datasource.id_root: expected an absolute directory");
  }
  if ((x = cfg_map_get(v, "id_expression", &kl))) {
    if ((st = cfg_get_str(c, x, "datasource.id_expression", false, &ds->id_expression)) != VF_OK)
      return st;
  } else {
    ds->id_expression = vf_strdup(VF_CONFIG_DEFAULT_ID_EXPRESSION);
    if (!ds->id_expression) return cfg_oom(c, v->line);
  }
  corpus_idexpr *ie = NULL;
  vf_error e2;
  if (corpus_idexpr_parse(ds->id_expression, &ie, &e2) != VF_OK)
    return cfg_cerr(c, x ? x->line : v->line, "datasource.id_expression: %s",
                    cfg_path_is_secret(c->cfg, "datasource.id_expression") ? "invalid id expression"
                                                                           : e2.msg);
  corpus_idexpr_free(ie);
  if ((x = cfg_map_get(v, "payload_fields", &kl)) &&
      (st = parse_payload_fields(c, x, "datasource.payload_fields")) != VF_OK)
    return st;
  if ((x = cfg_map_get(v, "binary_as_string", &kl)) &&
      (st = cfg_get_bool(c, x, "datasource.binary_as_string", &ds->binary_as_string)) != VF_OK)
    return st;
  return VF_OK;
}
