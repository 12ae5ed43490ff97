/* libFuzzer harness for the Qdrant response reader (src/util/json_read.c): vf_json_parse() on
 * arbitrary bytes (responses come from the network), then every lookup the store makes on a
 * parsed document (collection info, optimizer status, count, batch query results) and a full
 * walk checking the tree's invariants: raw spans lie inside the input, strings and keys are
 * NUL-terminated at their decoded length, every object key is found by vf_json_get(). */
#include <stdlib.h>
#include <string.h>

#include "store/qdrant_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *g_lo, *g_hi;

static void walk(const vf_json_val *v, int depth) {
  if (depth > 70) abort(); /* the parser caps nesting at 64 */
  if (v->raw && (v->raw < g_lo || v->raw + v->raw_len > g_hi)) abort();
  switch (v->t) {
  case VF_JSON_STR:
    if (!v->str) abort();
    (void)strlen(v->str);
    break;
  case VF_JSON_ARR:
    for (size_t i = 0; i < v->n; i++)
      walk(&v->items[i], depth + 1);
    break;
  case VF_JSON_OBJ:
    for (size_t i = 0; i < v->n; i++) {
      if (!v->keys[i]) abort();
      const vf_json_val *m = vf_json_get(v, v->keys[i]);
      if (!m) abort(); /* a key of the object must be found (first match) */
      walk(&v->items[i], depth + 1);
    }
    break;
  default: break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size ? size : 1); /* exact size: reads past the end trip ASan */
  if (!text) return 0;
  if (size) memcpy(text, data, size);
  g_lo = text;
  g_hi = text + size;
  vf_json_val doc;
  vf_error err;
  memset(&doc, 0, sizeof doc);
  if (vf_json_parse(text, size, "fuzz", &doc, &err) == VF_OK) {
    walk(&doc, 0);
    static const char *const paths[] = {
        "result.config.params", "result.config.params.vectors",
        "result.config.params.sparse_vectors", "result.config.optimizer_config.indexing_threshold",
        "result.config.metadata.vforge_indexing_threshold", "result.optimizer_status",
        "result.status", "result.count", "result", "status.error", "", ".", "a..b"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
      const vf_json_val *p = vf_json_path(&doc, paths[i]);
      if (p) walk(p, 0);
    }
    const vf_json_val *res = vf_json_get(&doc, "result");
    if (res && res->t == VF_JSON_ARR) { /* batch query: result[i].points[j].{id,score} */
      for (size_t i = 0; i < res->n; i++) {
        const vf_json_val *pts = vf_json_get(&res->items[i], "points");
        for (size_t j = 0; pts && pts->t == VF_JSON_ARR && j < pts->n; j++) {
          (void)vf_json_get(&pts->items[j], "id");
          (void)vf_json_get(&pts->items[j], "score");
        }
      }
    }
  }
  vf_json_free(&doc);
  free(text);
  return 0;
}
