/*
 * config_vars.c — what load-dist needs to pass secrets to its workers by reference instead of
 * by value: which key paths hold secrets, and the raw (unexpanded) text of a scalar, so a value
 * that came from `${QDRANT_API_KEY}` can be written back as that reference.
 * (Declared in include/vforge/config.h.)
 */
#include <stdlib.h>

#include "config_internal.h"

const char *const *vf_config_secret_paths(const vf_config *cfg, size_t *n) {
  if (!cfg || !cfg->internal) {
    *n = 0;
    return NULL;
  }
  *n = cfg->internal->nsecret;
  return (const char *const *)cfg->internal->secret_paths;
}

/* The node at `path` below map `m`: a key may itself contain dots, so every key that is a
 * prefix of the path ending at a dot (or the whole path) is tried. */
static const cfg_node *walk(const cfg_node *m, const char *path) {
  if (!m || m->kind != CFG_MAP) return NULL;
  for (size_t i = 0; i < m->n; i++) {
    const cfg_node *k = m->items[2 * i];
    if (!k || k->kind != CFG_SCALAR || strncmp(path, k->text, k->len) != 0) continue;
    const char *rest = path + k->len;
    if (*rest == 0) return m->items[2 * i + 1];
    if (*rest == '.') {
      const cfg_node *r = walk(m->items[2 * i + 1], rest + 1);
      if (r) return r;
    }
  }
  return NULL;
}

vf_status vf_config_raw_scalar(const char *text, size_t len, const char *name, const char *path,
                               char **out, vf_error *err) {
  *out = NULL;
  cfg_node *root = NULL;
  vf_status st = cfg_tree_parse(text, len, name ? name : "config", &root, err);
  if (st != VF_OK) return st;
  const cfg_node *v = walk(root, path);
  if (v && v->kind == CFG_SCALAR) {
    *out = vf_strndup(v->text, v->len);
    if (!*out) st = vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  cfg_node_free(root);
  return st;
}
