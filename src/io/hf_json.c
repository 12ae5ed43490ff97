/*
 * hf_json.c — the Hub's tree listing (GET /api/{datasets,buckets}/.../tree/...) as a list of
 * files.  Untrusted bytes from the network: the JSON is parsed by util's strict DOM reader
 * (vf_json_parse, src/util/json_read.c: RFC 8259 grammar, nesting and entry counts
 * capped) — one JSON reader in the library instead of two — and this file checks the shape:
 *
 *   [ {"type": "file", "path": "a/b.parquet", "size": 123, ...},
 *     {"type": "directory", "path": "a", ...}, ... ]
 *
 * Files need a non-empty relative path without "." / ".." segments, empty segments, control
 * bytes, backslashes or NUL, and an integral size in [0, 2^53]; directories are skipped; any
 * other shape (not an array, an entry without type/path, a file without a size, an unknown
 * type) is VF_ECORRUPT naming the listing and the entry index.  Extra members (oid, lfs,
 * xetHash, mtime, ...) are ignored.
 */
#include <math.h>
#include <stdlib.h>

#include "io/remote_internal.h"

void io_hf_tree_free(io_hf_tree *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++)
    free(t->items[i].path);
  free(t->items);
  t->items = NULL;
  t->n = 0;
}

/* A path that names an object inside the repo and cannot climb out of it. */
static bool hf_path_ok(const vf_json_val *v) {
  if (!v || v->t != VF_JSON_STR || !v->str || !v->str[0]) return false;
  for (size_t i = 0; i + 1 < v->raw_len; i++) /* an escaped NUL would truncate the string */
    if (v->raw[i] == '\\' && v->raw[i + 1] == 'u' && i + 5 < v->raw_len &&
        memcmp(v->raw + i + 2, "0000", 4) == 0)
      return false;
  const char *p = v->str;
  if (*p == '/') return false;
  while (*p) {
    const char *s = p;
    while (*p && *p != '/') {
      if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\') return false;
      p++;
    }
    size_t n = (size_t)(p - s);
    if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return false;
    if (*p == '/') {
      p++;
      if (!*p) return false; /* trailing slash */
    }
  }
  return true;
}

/* io_hf_parse_tree(): see remote_internal.h. */
vf_status io_hf_parse_tree(const char *text, size_t len, const char *what, io_hf_tree *out,
                           vf_error *err) {
  memset(out, 0, sizeof *out);
  vf_json_val doc;
  memset(&doc, 0, sizeof doc);
  vf_status st = vf_json_parse(text, len, what, &doc, err);
  if (st != VF_OK) return st;
  if (doc.t != VF_JSON_ARR) {
    st = vf_error_set(err, VF_ECORRUPT, "%s: expected a JSON array of entries", what);
    goto out;
  }
  if (doc.n) {
    out->items = vf_mallocarray(doc.n, sizeof *out->items);
    if (!out->items) {
      st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
      goto out;
    }
  }
  for (size_t i = 0; i < doc.n; i++) {
    const vf_json_val *e = &doc.items[i];
    const vf_json_val *type = vf_json_get(e, "type"), *path = vf_json_get(e, "path"), *size = vf_json_get(e, "size");
    if (e->t != VF_JSON_OBJ || !type || type->t != VF_JSON_STR) {
      st = vf_error_set(err, VF_ECORRUPT, "%s: entry %zu is not an object with a \"type\"", what,
                        i);
      goto out;
    }
    bool is_file = strcmp(type->str, "file") == 0;
    if (!is_file && strcmp(type->str, "directory") != 0) {
      st = vf_error_set(err, VF_ECORRUPT, "%s: entry %zu has type \"%.40s\" (expected \"file\" "
                        "or \"directory\")", what, i, type->str);
      goto out;
    }
    if (!hf_path_ok(path)) {
      st = vf_error_set(err, VF_ECORRUPT, "%s: entry %zu has no valid relative \"path\"", what, i);
      goto out;
    }
    if (!is_file) continue;
    if (!size || size->t != VF_JSON_NUM || !(size->num >= 0) || size->num > 9007199254740992.0 ||
        size->num != floor(size->num)) {
      st = vf_error_set(err, VF_ECORRUPT, "%s: file entry %zu (%.200s) has no valid \"size\"",
                        what, i, path->str);
      goto out;
    }
    out->items[out->n].path = vf_strdup(path->str);
    if (!out->items[out->n].path) {
      st = vf_error_set(err, VF_ENOMEM, "%s: out of memory", what);
      goto out;
    }
    out->items[out->n].size = (uint64_t)size->num;
    out->n++;
  }
out:
  vf_json_free(&doc);
  if (st != VF_OK) io_hf_tree_free(out);
  return st;
}
