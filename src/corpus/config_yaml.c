/*
 * config_yaml.c — YAML text to a small node tree, and `${VAR}` expansion (DESIGN.md
 * "Configuration").
 *
 * Why libyaml's event API and an own tree instead of yaml_document_t: the document API shares
 * aliased nodes, so a few lines of anchors can describe an exponentially large tree ("billion
 * laughs"); with events we see every alias and refuse it, and we cap depth and node count while
 * building.  The tree keeps each scalar's raw text and line; expansion of variables happens later,
 * when the schema walker (config.c) reads a value and knows its key path, so an unset variable is
 * reported as "config.yaml:7: vectorstore.url: environment variable 'QDRANT_URL' is not set".
 *
 * Duplicate keys are found when a mapping ends (sort the keys, compare neighbours: O(n log n), so
 * a hostile 100k-key mapping stays cheap) and reported at the later occurrence.
 *
 * Secrets: a variable whose name contains KEY, TOKEN, SECRET or PASSWORD (any case) marks the
 * value as secret; no function here ever copies a variable's value into an error message.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

#include "config_internal.h"

#define CFG_MAX_EXPAND_DEPTH 8 /* ${A:-${B:-${C}}} nesting */

typedef struct builder {
  const char *name;
  vf_error *err;
  cfg_node *stack[CFG_MAX_DEPTH];
  int depth;
  cfg_node *root;
  size_t nodes;
  int documents;
} builder;

void cfg_node_free(cfg_node *n) {
  if (!n) return;
  size_t count = n->kind == CFG_MAP ? 2 * n->n + (n->pending_key ? 1 : 0) : n->n;
  for (size_t i = 0; i < count; i++)
    cfg_node_free(n->items[i]);
  free(n->items);
  free(n->text);
  free(n);
}

static int mark_line(const yaml_mark_t *m) {
  return m->line >= (size_t)INT32_MAX ? INT32_MAX : (int)m->line + 1;
}

/* Key path of the container on top of the stack (for messages): each ancestor mapping
 * contributes the key of its last pair, each sequence the index of its last item. */
static void stack_path(const builder *b, char *out, size_t cap) {
  size_t len = 0;
  out[0] = 0;
  for (int d = 0; d + 1 < b->depth; d++) {
    const cfg_node *p = b->stack[d];
    int w;
    if (p->kind == CFG_MAP) {
      const cfg_node *k = p->items[2 * (p->n - 1)];
      w = snprintf(out + len, cap - len, "%s%.*s", len ? "." : "",
                   (int)(k->len > 128 ? 128 : k->len), k->text);
    } else {
      w = snprintf(out + len, cap - len, "[%zu]", p->n - 1);
    }
    if (w < 0 || (size_t)w >= cap - len) return; /* truncated: good enough for a message */
    len += (size_t)w;
  }
}

static vf_status node_new(builder *b, cfg_kind kind, int line, cfg_node **out) {
  if (++b->nodes > CFG_MAX_NODES)
    return vf_error_set(b->err, VF_ECONFIG, "%s:%d: config has more than %d nodes", b->name, line,
                        CFG_MAX_NODES);
  cfg_node *n = vf_calloc(1, sizeof *n);
  if (!n) return vf_error_set(b->err, VF_ENOMEM, "%s:%d: out of memory", b->name, line);
  n->kind = kind;
  n->line = line;
  *out = n;
  return VF_OK;
}

/* Append `n` to the open container (or make it the root).  Takes ownership of n. */
static vf_status attach(builder *b, cfg_node *n) {
  if (b->depth == 0) {
    if (b->root) { /* cannot happen with one document, but never leak */
      cfg_node_free(n);
      return vf_error_set(b->err, VF_ECONFIG, "%s:%d: more than one root node", b->name, n->line);
    }
    b->root = n;
    return VF_OK;
  }
  cfg_node *p = b->stack[b->depth - 1];
  /* In a mapping, items alternate key, value; `n` counts complete pairs. */
  bool is_key = p->kind == CFG_MAP && !p->pending_key;
  size_t used = p->kind == CFG_MAP ? 2 * p->n + (p->pending_key ? 1 : 0) : p->n;
  if (is_key && n->kind != CFG_SCALAR) {
    char path[CFG_PATH_MAX];
    int line = n->line;
    cfg_node_free(n);
    stack_path(b, path, sizeof path);
    return vf_error_set(b->err, VF_ECONFIG,
                        "%s:%d: %s%smapping keys must be plain values, not a mapping or a list",
                        b->name, line, path, *path ? ": " : "");
  }
  if (used == p->cap) {
    size_t ncap = p->cap ? p->cap * 2 : 8;
    cfg_node **ni = vf_realloc(p->items, ncap * sizeof *ni);
    if (!ni) {
      int line = n->line;
      cfg_node_free(n);
      return vf_error_set(b->err, VF_ENOMEM, "%s:%d: out of memory", b->name, line);
    }
    p->items = ni;
    p->cap = ncap;
  }
  p->items[used] = n;
  if (p->kind == CFG_SEQ) {
    p->n++;
  } else if (is_key) {
    p->pending_key = true;
  } else {
    p->pending_key = false;
    p->n++;
  }
  return VF_OK;
}

static int key_cmp(const void *a, const void *b) {
  const cfg_node *x = *(cfg_node *const *)a, *y = *(cfg_node *const *)b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->text, y->text, n);
  if (c) return c;
  if (x->len != y->len) return x->len < y->len ? -1 : 1;
  return (x->line > y->line) - (x->line < y->line);
}

static vf_status check_duplicates(builder *b, const cfg_node *map) {
  if (map->n < 2) return VF_OK;
  cfg_node **keys = vf_mallocarray(map->n, sizeof *keys);
  if (!keys) return vf_error_set(b->err, VF_ENOMEM, "%s:%d: out of memory", b->name, map->line);
  for (size_t i = 0; i < map->n; i++)
    keys[i] = map->items[2 * i];
  qsort(keys, map->n, sizeof *keys, key_cmp);
  vf_status st = VF_OK;
  for (size_t i = 1; i < map->n; i++) {
    if (keys[i]->len == keys[i - 1]->len &&
        memcmp(keys[i]->text, keys[i - 1]->text, keys[i]->len) == 0) {
      char path[CFG_PATH_MAX];
      stack_path(b, path, sizeof path);
      st = vf_error_set(b->err, VF_ECONFIG, "%s:%d: duplicate key '%s%s%.*s' (first at line %d)",
                        b->name, keys[i]->line, path, *path ? "." : "",
                        (int)(keys[i]->len > 128 ? 128 : keys[i]->len), keys[i]->text,
                        keys[i - 1]->line);
      break;
    }
  }
  free(keys);
  return st;
}

static bool tag_is(const yaml_char_t *tag, const char *what) {
  return tag && strcmp((const char *)tag, what) == 0;
}

static vf_status container_start(builder *b, cfg_kind kind, const yaml_char_t *tag, int line) {
  const char *want = kind == CFG_MAP ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq";
  if (tag && !tag_is(tag, want))
    return vf_error_set(b->err, VF_ECONFIG, "%s:%d: unsupported YAML tag '%.60s'", b->name, line,
                        (const char *)tag);
  if (b->depth >= CFG_MAX_DEPTH)
    return vf_error_set(b->err, VF_ECONFIG, "%s:%d: nested deeper than %d levels", b->name, line,
                        CFG_MAX_DEPTH);
  cfg_node *n;
  vf_status st = node_new(b, kind, line, &n);
  if (st != VF_OK) return st;
  st = attach(b, n);
  if (st != VF_OK) return st;
  b->stack[b->depth++] = n;
  return VF_OK;
}

static vf_status scalar_event(builder *b, const yaml_event_t *ev) {
  int line = mark_line(&ev->start_mark);
  const yaml_char_t *tag = ev->data.scalar.tag;
  bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  if (tag) {
    if (tag_is(tag, "tag:yaml.org,2002:str")) {
      plain = false;
    } else if (tag_is(tag, "tag:yaml.org,2002:int") || tag_is(tag, "tag:yaml.org,2002:float") ||
               tag_is(tag, "tag:yaml.org,2002:bool") || tag_is(tag, "tag:yaml.org,2002:null")) {
      plain = true;
    } else {
      return vf_error_set(b->err, VF_ECONFIG, "%s:%d: unsupported YAML tag '%.60s'", b->name, line,
                          (const char *)tag);
    }
  }
  size_t len = ev->data.scalar.length;
  const char *val = (const char *)ev->data.scalar.value;
  if (memchr(val, 0, len))
    return vf_error_set(b->err, VF_ECONFIG, "%s:%d: NUL character in a value", b->name, line);
  cfg_node *n;
  vf_status st = node_new(b, CFG_SCALAR, line, &n);
  if (st != VF_OK) return st;
  n->plain = plain;
  n->text = vf_strndup(val, len);
  n->len = len;
  if (!n->text) {
    cfg_node_free(n);
    return vf_error_set(b->err, VF_ENOMEM, "%s:%d: out of memory", b->name, line);
  }
  return attach(b, n);
}

static int offset_line(const char *text, size_t len, size_t off) {
  int line = 1;
  for (size_t i = 0; i < off && i < len; i++)
    if (text[i] == '\n' && line < INT32_MAX) line++;
  return line;
}

static vf_status parser_error(builder *b, const yaml_parser_t *p, const char *text, size_t len) {
  if (p->error == YAML_MEMORY_ERROR)
    return vf_error_set(b->err, VF_ENOMEM, "%s: out of memory parsing YAML", b->name);
  int line = p->error == YAML_READER_ERROR ? offset_line(text, len, p->problem_offset)
                                           : mark_line(&p->problem_mark);
  const char *problem = p->problem ? p->problem : "malformed YAML";
  /* `{a: ${VAR}}` and `{path: x_{i}.npy}` are the usual way into this: braces are flow
   * indicators, so such values must be quoted inside {...} (block style needs no quotes) */
  const char *hint = p->context && strstr(p->context, "flow")
                         ? " (inside {...} or [...], quote values that contain '{', '}', '[', "
                           "']' or ',', e.g. \"${VAR}\")"
                         : "";
  if (p->context)
    return vf_error_set(b->err, VF_ECONFIG, "%s:%d: YAML syntax error: %s %s%s", b->name, line,
                        p->context, problem, hint);
  return vf_error_set(b->err, VF_ECONFIG, "%s:%d: YAML syntax error: %s", b->name, line, problem);
}

static vf_status handle_event(builder *b, const yaml_event_t *ev, bool *done) {
  int line = mark_line(&ev->start_mark);
  switch (ev->type) {
  case YAML_STREAM_START_EVENT:
  case YAML_NO_EVENT: return VF_OK;
  case YAML_STREAM_END_EVENT: *done = true; return VF_OK;
  case YAML_DOCUMENT_START_EVENT:
    if (++b->documents > 1)
      return vf_error_set(b->err, VF_ECONFIG,
                          "%s:%d: more than one YAML document ('---'); a config is one document",
                          b->name, line);
    return VF_OK;
  case YAML_DOCUMENT_END_EVENT: return VF_OK;
  case YAML_ALIAS_EVENT:
    return vf_error_set(b->err, VF_ECONFIG,
                        "%s:%d: YAML aliases (*name) are not supported in a config", b->name, line);
  case YAML_SCALAR_EVENT: return scalar_event(b, ev);
  case YAML_MAPPING_START_EVENT:
    return container_start(b, CFG_MAP, ev->data.mapping_start.tag, line);
  case YAML_SEQUENCE_START_EVENT:
    return container_start(b, CFG_SEQ, ev->data.sequence_start.tag, line);
  case YAML_MAPPING_END_EVENT:
  case YAML_SEQUENCE_END_EVENT: {
    if (b->depth == 0)
      return vf_error_set(b->err, VF_EINTERNAL, "%s:%d: unbalanced YAML events", b->name, line);
    vf_status st = VF_OK;
    cfg_node *top = b->stack[b->depth - 1];
    if (top->kind == CFG_MAP) st = check_duplicates(b, top);
    b->depth--;
    return st;
  }
  }
  return VF_OK;
}

vf_status cfg_tree_parse(const char *text, size_t len, const char *name, cfg_node **root,
                         vf_error *err) {
  *root = NULL;
  builder b = {.name = name, .err = err};
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory starting the YAML parser", name);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
  vf_status st = VF_OK;
  bool done = false;
  while (!done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      st = parser_error(&b, &parser, text, len);
      break;
    }
    st = handle_event(&b, &ev, &done);
    yaml_event_delete(&ev);
    if (st != VF_OK) break;
  }
  yaml_parser_delete(&parser);
  if (st != VF_OK) {
    cfg_node_free(b.root);
    return st;
  }
  *root = b.root;
  return VF_OK;
}

/* ------------------------------------------------------------- expansion */

static bool name_is_secret(const char *v, size_t n) {
  static const char *const words[] = {"KEY", "TOKEN", "SECRET", "PASSWORD"};
  for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
    size_t wl = strlen(words[w]);
    for (size_t i = 0; i + wl <= n; i++) {
      size_t j = 0;
      while (j < wl && toupper((unsigned char)v[i + j]) == words[w][j])
        j++;
      if (j == wl) return true;
    }
  }
  return false;
}

typedef struct expander {
  const char *name;
  int line;
  const char *path;
  vf_error *err;
  bool secret;
} expander;

static vf_status xerr(const expander *x, const char *what) {
  return vf_error_set(x->err, VF_ECONFIG, "%s:%d: %s: %s", x->name, x->line, x->path, what);
}

static vf_status put(const expander *x, vf_buf *out, const char *p, size_t n) {
  if (n > CFG_MAX_VALUE || out->len > CFG_MAX_VALUE - n)
    return xerr(x, "value longer than 1 MiB after variable expansion");
  vf_status st = vf_buf_append(out, p, n, x->err);
  if (st != VF_OK) return vf_error_prefix(x->err, "%s:%d: %s: ", x->name, x->line, x->path);
  return VF_OK;
}

/* Expand s[0..n) into out.  Grammar: "$$" -> "$"; "${" NAME "}" ; "${" NAME ":-" DEFAULT "}"
 * where DEFAULT may itself hold references; any other "$" is literal. */
static vf_status expand(expander *x, const char *s, size_t n, vf_buf *out, int depth) {
  size_t i = 0;
  while (i < n) {
    const char *dollar = memchr(s + i, '$', n - i);
    size_t lit = dollar ? (size_t)(dollar - (s + i)) : n - i;
    vf_status st = put(x, out, s + i, lit);
    if (st != VF_OK) return st;
    i += lit;
    if (i >= n) break;
    /* s[i] == '$' */
    if (i + 1 < n && s[i + 1] == '$') {
      st = put(x, out, "$", 1);
      if (st != VF_OK) return st;
      i += 2;
      continue;
    }
    if (i + 1 >= n || s[i + 1] != '{') {
      st = put(x, out, "$", 1);
      if (st != VF_OK) return st;
      i++;
      continue;
    }
    size_t j = i + 2, name0 = j;
    if (j < n && (isalpha((unsigned char)s[j]) || s[j] == '_')) {
      j++;
      while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))
        j++;
    }
    size_t nlen = j - name0;
    if (nlen == 0) return xerr(x, "bad variable reference: expected a name after '${'");
    if (nlen > 255) return xerr(x, "bad variable reference: variable name longer than 255");
    char var[256];
    memcpy(var, s + name0, nlen);
    var[nlen] = 0;
    bool has_default = false;
    size_t def0 = 0, def_end = 0;
    if (j < n && s[j] == '}') {
      i = j + 1;
    } else if (j + 1 < n && s[j] == ':' && s[j + 1] == '-') {
      has_default = true;
      def0 = j + 2;
      size_t k = def0;
      int open = 1;
      while (k < n) {
        if (s[k] == '$' && k + 1 < n && (s[k + 1] == '{' || s[k + 1] == '$')) {
          if (s[k + 1] == '{') open++;
          k += 2;
        } else if (s[k] == '}') {
          if (--open == 0) break;
          k++;
        } else {
          k++;
        }
      }
      if (k >= n) {
        char msg[320];
        snprintf(msg, sizeof msg, "unterminated '${%s:-' (missing '}')", var);
        return xerr(x, msg);
      }
      def_end = k;
      i = k + 1;
    } else {
      char msg[320];
      snprintf(msg, sizeof msg, "bad variable reference '${%s': expected '}' or ':-default}'", var);
      return xerr(x, msg);
    }
    if (name_is_secret(var, nlen)) x->secret = true;
    const char *val = getenv(var);
    if (has_default && (!val || !*val)) {
      if (depth >= CFG_MAX_EXPAND_DEPTH) return xerr(x, "variable defaults nested too deeply");
      st = expand(x, s + def0, def_end - def0, out, depth + 1);
    } else if (!val) {
      char msg[700];
      snprintf(msg, sizeof msg,
               "environment variable '%s' is not set (set it, or write ${%s:-default})", var, var);
      return xerr(x, msg);
    } else {
      st = put(x, out, val, strlen(val));
    }
    if (st != VF_OK) return st;
  }
  return VF_OK;
}

vf_status cfg_expand(const char *name, const cfg_node *scalar, const char *path, char **out,
                     bool *secret, vf_error *err) {
  *out = NULL;
  *secret = false;
  expander x = {name, scalar->line, path, err, false};
  vf_buf b;
  vf_buf_init(&b, CFG_MAX_VALUE + 1);
  vf_status st = VF_OK;
  VF_TRY(expand(&x, scalar->text, scalar->len, &b, 0));
  VF_TRY(put(&x, &b, "", 1)); /* NUL terminator */
  size_t n;
  *out = (char *)vf_buf_take(&b, &n);
out:
  *secret = x.secret;
  vf_buf_free(&b);
  return st;
}
