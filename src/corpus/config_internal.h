/* config_internal.h — shared by src/corpus/config*.c (not part of the public API).
 *
 * config_yaml.c turns YAML text into a small node tree (scalars keep their raw, unexpanded text
 * and line); config.c checks the tree against the schema and fills a vf_config, expanding
 * variables as it reads each value (so every error knows the key path); config_render.c renders
 * the resolved struct as JSON and implements `load inspect`. */
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

#endif
