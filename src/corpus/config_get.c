/*
 * config_get.c — reading the config tree for config.c and config_datasource.c: the error and
 * key-path helpers every section uses, secret marks, tree access (map lookups, the unknown-key
 * check) and the typed getters (string, integer in a range, bool, enum, list, JSON) that expand
 * variables and name the file, line and key path on any error.  Split out of config.c, whose
 * header comment describes the whole; the getters' shared declarations are config_internal.h's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "config_internal.h"

vf_status cfg_cerr(cctx *c, int line, const char *fmt, ...) {
  char msg[VF_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return vf_error_set(c->err, VF_ECONFIG, "%s:%d: %s", c->name, line, msg);
}

vf_status cfg_oom(cctx *c, int line) {
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

void cfg_path_join(char *dst, const char *parent, const char *key) {
  size_t n = 0;
  dst[0] = 0;
  path_put(dst, &n, parent ? parent : "");
  if (n) path_put(dst, &n, ".");
  path_put(dst, &n, key);
}

void cfg_path_index(char *dst, const char *parent, size_t i) {
  char idx[32];
  snprintf(idx, sizeof idx, "[%zu]", i);
  size_t n = 0;
  dst[0] = 0;
  path_put(dst, &n, parent);
  path_put(dst, &n, idx);
}

/* Record `path` as a secret; userinfo: only the userinfo of the URL it holds is.  A path
 * marked before keeps its first kind. */
vf_status cfg_mark_secret_kind(cctx *c, const char *path, bool userinfo, int line) {
  vf_cfg_internal *in = c->cfg->internal;
  for (size_t i = 0; i < in->nsecret; i++)
    if (strcmp(in->secret_paths[i], path) == 0) return VF_OK;
  if (in->nsecret == in->cap) {
    size_t ncap = in->cap ? in->cap * 2 : 8;
    char **np = vf_realloc(in->secret_paths, ncap * sizeof *np);
    if (!np) return cfg_oom(c, line);
    in->secret_paths = np;
    bool *nu = vf_realloc(in->secret_userinfo, ncap * sizeof *nu);
    if (!nu) return cfg_oom(c, line);
    in->secret_userinfo = nu;
    in->cap = ncap;
  }
  in->secret_paths[in->nsecret] = vf_strdup(path);
  if (!in->secret_paths[in->nsecret]) return cfg_oom(c, line);
  in->secret_userinfo[in->nsecret] = userinfo;
  in->nsecret++;
  return VF_OK;
}

vf_status cfg_mark_secret(cctx *c, const char *path, int line) {
  return cfg_mark_secret_kind(c, path, false, line);
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

bool cfg_scalar_is_null(const cfg_node *v) {
  if (v->kind != CFG_SCALAR || !v->plain) return false;
  return v->len == 0 || strcmp(v->text, "~") == 0 || strcmp(v->text, "null") == 0 ||
         strcmp(v->text, "Null") == 0 || strcmp(v->text, "NULL") == 0;
}

const char *cfg_kind_name(const cfg_node *v) {
  switch (v->kind) {
  case CFG_MAP: return "a mapping";
  case CFG_SEQ: return "a list";
  default: return "a single value";
  }
}

/* The value of `key` in `map`, NULL when absent or null; *key_line gets the key's line. */
const cfg_node *cfg_map_get(const cfg_node *map, const char *key, int *key_line) {
  for (size_t i = 0; i < map->n; i++) {
    const cfg_node *k = map->items[2 * i];
    if (strcmp(k->text, key) == 0) {
      if (key_line) *key_line = k->line;
      const cfg_node *v = map->items[2 * i + 1];
      return cfg_scalar_is_null(v) ? NULL : v;
    }
  }
  return NULL;
}

bool cfg_map_has(const cfg_node *map, const char *key, int *key_line) {
  return cfg_map_get(map, key, key_line) != NULL;
}

vf_status cfg_expect_map(cctx *c, const cfg_node *v, const char *path) {
  if (v->kind != CFG_MAP)
    return cfg_cerr(c, v->line, "%s: expected a mapping of keys, got %s", path, cfg_kind_name(v));
  return VF_OK;
}

vf_status cfg_check_keys(cctx *c, const cfg_node *map, const char *path,
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
    return cfg_cerr(c, k->line, "unknown key '%s%s%.100s' (expected one of: %s)", path,
                    *path ? "." : "", k->text, list);
  }
  return VF_OK;
}

/* ---------------------------------------------------------------- getters */

/* Expanded text of a scalar; records the path as secret when it is one. */
vf_status cfg_get_text(cctx *c, const cfg_node *v, const char *path, char **out, bool *secret) {
  *out = NULL;
  if (v->kind != CFG_SCALAR)
    return cfg_cerr(c, v->line, "%s: expected a single value, got %s", path, cfg_kind_name(v));
  vf_status st = cfg_expand(c->name, v, path, out, secret, c->err);
  if (st != VF_OK) return st;
  size_t ua, un;
  bool userinfo = !*secret && vf_url_userinfo(*out, &ua, &un); /* a password in a URL */
  if (*secret || userinfo) {
    *secret = true;
    st = cfg_mark_secret_kind(c, path, userinfo, v->line);
    if (st != VF_OK) {
      free(*out);
      *out = NULL;
    }
  }
  return st;
}

/* What to print for a rejected value: never a secret, never more than 80 bytes. */
const char *cfg_shown(const char *val, bool secret) {
  return secret ? VF_CONFIG_SECRET_MASK : val;
}

vf_status cfg_get_str(cctx *c, const cfg_node *v, const char *path, bool allow_empty, char **out) {
  bool secret;
  vf_status st = cfg_get_text(c, v, path, out, &secret);
  if (st != VF_OK) return st;
  if (!allow_empty && !**out) {
    free(*out);
    *out = NULL;
    return cfg_cerr(c, v->line, "%s: must not be empty", path);
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

vf_status cfg_get_int(cctx *c, const cfg_node *v, const char *path, int64_t lo, int64_t hi,
                      int64_t *out) {
  char *t;
  bool secret;
  vf_status st = cfg_get_text(c, v, path, &t, &secret);
  if (st != VF_OK) return st;
  int64_t x;
  if (!parse_int(t, &x) || x < lo || x > hi) {
    st = cfg_cerr(c, v->line, "%s: expected an integer from %lld to %lld, got '%.80s'", path,
                  (long long)lo, (long long)hi, cfg_shown(t, secret));
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

vf_status cfg_get_bool(cctx *c, const cfg_node *v, const char *path, bool *out) {
  char *t;
  bool secret;
  vf_status st = cfg_get_text(c, v, path, &t, &secret);
  if (st != VF_OK) return st;
  int b = parse_bool(t);
  if (b < 0)
    st =
        cfg_cerr(c, v->line, "%s: expected true or false, got '%.80s'", path, cfg_shown(t, secret));
  else
    *out = b == 1;
  free(t);
  return st;
}

vf_status cfg_get_enum(cctx *c, const cfg_node *v, const char *path, const char *const *names,
                       int *out) {
  char *t;
  bool secret;
  vf_status st = cfg_get_text(c, v, path, &t, &secret);
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
  st = cfg_cerr(c, v->line, "%s: '%.80s' is not one of: %s", path, cfg_shown(t, secret), list);
  free(t);
  return st;
}

vf_status cfg_get_str_list(cctx *c, const cfg_node *v, const char *path, char ***out, size_t *n) {
  if (v->kind != CFG_SEQ)
    return cfg_cerr(c, v->line, "%s: expected a list, got %s", path, cfg_kind_name(v));
  *out = NULL;
  *n = 0;
  if (v->n == 0) return VF_OK;
  char **list = vf_calloc(v->n, sizeof *list);
  if (!list) return cfg_oom(c, v->line);
  *out = list;
  for (size_t i = 0; i < v->n; i++) {
    char p[CFG_PATH_MAX];
    cfg_path_index(p, path, i);
    vf_status st = cfg_get_str(c, v->items[i], p, false, &list[i]);
    if (st != VF_OK) return st;
    (*n)++;
  }
  return VF_OK;
}

/* A JSON literal for a scalar: plain scalars by YAML type inference (null, bool, integer,
 * finite float), everything else as a string.  NaN/inf are refused (JSON has none). */
vf_status cfg_scalar_json(cctx *c, const cfg_node *v, const char *path, vf_buf *real) {
  char *t;
  bool secret;
  vf_status st = cfg_get_text(c, v, path, &t, &secret);
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
          st = cfg_cerr(c, v->line, "%s: infinite or NaN values cannot be sent to a store", path);
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
vf_status cfg_node_json(cctx *c, const cfg_node *v, const char *path, vf_buf *real,
                        vf_buf *masked) {
  vf_status st = VF_OK;
  if (v->kind == CFG_SCALAR) {
    size_t before = real->len;
    st = cfg_scalar_json(c, v, path, real);
    if (st != VF_OK) return st;
    if (cfg_path_is_secret(c->cfg, path))
      return vf_json_string(masked, VF_CONFIG_SECRET_MASK, strlen(VF_CONFIG_SECRET_MASK), c->err);
    return vf_buf_append(masked, real->data + before, real->len - before, c->err);
  }
  bool map = v->kind == CFG_MAP;
  VF_TRY(vf_json_raw(real, map ? "{" : "[", c->err));
  VF_TRY(vf_json_raw(masked, map ? "{" : "[", c->err));
  for (size_t i = 0; i < v->n; i++) {
    char p[CFG_PATH_MAX];
    if (i) {
      VF_TRY(vf_json_raw(real, ",", c->err));
      VF_TRY(vf_json_raw(masked, ",", c->err));
    }
    const cfg_node *item;
    if (map) {
      const cfg_node *k = v->items[2 * i];
      item = v->items[2 * i + 1];
      cfg_path_join(p, path, k->text);
      VF_TRY(vf_json_string(real, k->text, k->len, c->err));
      VF_TRY(vf_json_string(masked, k->text, k->len, c->err));
      VF_TRY(vf_json_raw(real, ":", c->err));
      VF_TRY(vf_json_raw(masked, ":", c->err));
    } else {
      item = v->items[i];
      cfg_path_index(p, path, i);
    }
    VF_TRY(cfg_node_json(c, item, p, real, masked));
  }
  VF_TRY(vf_json_raw(real, map ? "}" : "]", c->err));
  VF_TRY(vf_json_raw(masked, map ? "}" : "]", c->err));
out:
  return st;
}
