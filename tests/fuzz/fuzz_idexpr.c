/* libFuzzer harness for the corpus parsers that take user text: id expressions (parsed and
 * evaluated against a synthetic row) and corpus URIs / bare keys. */
#include <stdlib.h>
#include <string.h>

#include "vforge/corpus.h"

static vf_status get_col(void *user, const char *column, corpus_value *out, vf_error *err) {
  (void)err;
  size_t n = strlen(column);
  memset(out, 0, sizeof *out);
  switch (n % 4) {
  case 0: out->kind = CORPUS_V_NULL; break;
  case 1: out->kind = CORPUS_V_INT; out->i = (int64_t)n - 3; break;
  case 2: out->kind = CORPUS_V_UINT; out->u = n; break;
  default:
    out->kind = CORPUS_V_STR;
    out->s = user ? (const char *)user : column;
    out->len = strlen(out->s);
  }
  return VF_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  vf_error err;
  corpus_idexpr *e = NULL;
  if (corpus_idexpr_parse(text, &e, &err) == VF_OK) {
    int n = 0;
    (void)corpus_idexpr_columns(e, &n);
    corpus_row_ctx ctx = {.file_key = "a/b.parquet", .file_key_len = 11, .file_row = 7,
                          .global_row = 9, .get_column = get_col,
                          .user = size % 2 ? "123e4567-e89b-12d3-a456-426614174000" : NULL};
    corpus_id id;
    (void)corpus_idexpr_eval(e, &ctx, &id, &err);
    corpus_idexpr_free(e);
  }
  io_uri u;
  if (io_uri_parse(text, &u, &err) == VF_OK) io_uri_free(&u);
  char *key = NULL;
  if (corpus_bare_key(text, size % 3 ? "/data" : NULL, &key, &err) == VF_OK) free(key);
  free(text);
  return 0;
}
