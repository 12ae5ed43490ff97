/* config_internal.h — shared by src/corpus/config*.c (not part of the public API).
 *
 * config_yaml.c turns YAML text into a small node tree (scalars keep their raw, unexpanded text
 * and line); config.c (with config_datasource.c, through the getters of config_get.c) checks
 * the tree against the schema and fills a vf_config, expanding variables as it reads each value
 * (so every error knows the key path); config_render.c renders the resolved struct as JSON
 * and implements `load inspect`. */
#ifndef VFORGE_CONFIG_INTERNAL_H
#define VFORGE_CONFIG_INTERNAL_H

#include "vforge/config.h"

#define CFG_MAX_DEPTH 64         /* nesting of mappings/sequences */
#define CFG_MAX_NODES 100000     /* nodes in one config */
#define CFG_MAX_VALUE (1u << 20) /* bytes of one scalar after variable expansion */
#define CFG_PATH_MAX 512         /* key paths in messages (longer ones are truncated) */

typedef enum cfg_kind { CFG_SCALAR = 0, CFG_MAP, CFG_SEQ } cfg_kind;

typedef struct cfg_node {
  cfg_kind kind;
  int line;   /* 1-based line of the node's start */
  bool plain; /* plain (unquoted, untagged or !!int/!!bool/...) scalar: its type is inferred */
  char *text; /* SCALAR: raw text as written (no NUL bytes inside), NUL-terminated */
  size_t len;
  struct cfg_node **items; /* SEQ: values; MAP: key at [2i], value at [2i+1] */
  size_t n;                /* SEQ: item count; MAP: pair count */
  size_t cap;              /* allocated entries in items */
  bool pending_key;        /* MAP while building: a key waits for its value */
} cfg_node;

/* YAML text -> tree.  One document whose root is returned (NULL for an empty document).
 * VF_ECONFIG "<name>:<line>: ..." on syntax errors, aliases, unsupported tags, non-scalar or
 * duplicate keys, NUL bytes, too deep or too many nodes. */
vf_status cfg_tree_parse(const char *text, size_t len, const char *name, cfg_node **root,
                         vf_error *err);
void cfg_node_free(cfg_node *n);

/* `${VAR}`, `${VAR:-default}` and `$$` expansion of a scalar's text.  *secret is set when a
 * variable whose name contains KEY/TOKEN/SECRET/PASSWORD was referenced.  Errors name `name`,
 * the node's line and `path`, never a value. */
vf_status cfg_expand(const char *name, const cfg_node *scalar, const char *path, char **out,
                     bool *secret, vf_error *err);

struct vf_cfg_internal {
  char **secret_paths; /* key paths whose value is a secret */
  bool *secret_userinfo; /* per path: secret only for the userinfo of its URL (a password in
                          * "http://user:pw@host"): rendered with the userinfo masked */
  size_t nsecret, cap;
  char *params_json_masked; /* vectorstore.params with secret scalars masked */
};

/* true when `path` (or a key path above it) holds a secret */
bool cfg_path_is_secret(const vf_config *cfg, const char *path);
/* true when the secret at `path` is only the userinfo of a URL (see secret_userinfo) */
bool cfg_path_secret_is_userinfo(const vf_config *cfg, const char *path);

/* ---------------------------------------------- checking the tree (config*.c: config_get.c) */

/* what every check of config.c / config_datasource.c carries: the config's name for messages,
 * the error to fill and the config being filled */
typedef struct cctx {
  const char *name;
  vf_error *err;
  vf_config *cfg;
} cctx;

vf_status cfg_cerr(cctx *c, int line, const char *fmt, ...) VF_PRINTF(3, 4);
vf_status cfg_oom(cctx *c, int line);
void cfg_path_join(char *dst, const char *parent, const char *key);
void cfg_path_index(char *dst, const char *parent, size_t i);
vf_status cfg_mark_secret_kind(cctx *c, const char *path, bool userinfo, int line);
vf_status cfg_mark_secret(cctx *c, const char *path, int line);
bool cfg_scalar_is_null(const cfg_node *v);
const char *cfg_kind_name(const cfg_node *v);
const cfg_node *cfg_map_get(const cfg_node *map, const char *key, int *key_line);
bool cfg_map_has(const cfg_node *map, const char *key, int *key_line);
vf_status cfg_expect_map(cctx *c, const cfg_node *v, const char *path);
vf_status cfg_check_keys(cctx *c, const cfg_node *map, const char *path,
                         const char *const *allowed);
vf_status cfg_get_text(cctx *c, const cfg_node *v, const char *path, char **out, bool *secret);
const char *cfg_shown(const char *val, bool secret);
vf_status cfg_get_str(cctx *c, const cfg_node *v, const char *path, bool allow_empty, char **out);
vf_status cfg_get_int(cctx *c, const cfg_node *v, const char *path, int64_t lo, int64_t hi,
                      int64_t *out);
vf_status cfg_get_bool(cctx *c, const cfg_node *v, const char *path, bool *out);
vf_status cfg_get_enum(cctx *c, const cfg_node *v, const char *path, const char *const *names,
                       int *out);
vf_status cfg_get_str_list(cctx *c, const cfg_node *v, const char *path, char ***out, size_t *n);
vf_status cfg_scalar_json(cctx *c, const cfg_node *v, const char *path, vf_buf *real);
vf_status cfg_node_json(cctx *c, const cfg_node *v, const char *path, vf_buf *real,
                        vf_buf *masked);

/* ------------------------------------------------------ datasource (config_datasource.c) */

vf_status cfg_parse_datasource(cctx *c, const cfg_node *v);

/* the value tables config.c and config_datasource.c both check against (config.c) */
extern const char *const CFG_FORMATS[];
extern const char *const CFG_CACHES[];

#endif
