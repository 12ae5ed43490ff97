/* libFuzzer harness for the filter parser and evaluator (src/corpus/filter*.c): the input is
 * compiled as a filter (Qdrant's form or the conditions form) and, when it compiles, evaluated
 * over a few fixed payloads (nested objects, arrays, nulls, datetimes, geo points) and through
 * flt_docs_select; the input is also parsed as a payload and matched by fixed filters. */
#include <stdlib.h>
#include <string.h>

#include "vforge/filter.h"

static const char *const PAYLOADS[] = {
    ("{\"city\":\"London\",\"n\":3,\"a\":[{\"b\":\"x\"},{\"b\":[\"y\",null]}],\"c\":[],\"x\":null,"
     "\"d\":\"2021-02-03T04:05:06Z\",\"loc\":{\"lon\":1.0,\"lat\":2.0},\"t\":\"a b c\",\"q.k\":[[1,2],3]}"),
    "{\"diet\":[{\"food\":\"meat\",\"likes\":true},{\"food\":\"leaves\"}],\"y\":true,\"n\":9.5}",
    "",
    "{\"city\":[\"Berlin\",1,{\"x\":{}}],\"d\":\"2021-02-03 04:05\",\"y\":[1,2,3]}",
};

static const char *const FILTERS[] = {
    "{\"must\":[{\"key\":\"a\",\"values_count\":{\"gt\":0}}]}",
    "{\"should\":[{\"key\":\"b[].c\",\"match\":{\"any\":[1,2]}},{\"is_null\":{\"key\":\"z\"}}]}",
    "{\"must_not\":[{\"nested\":{\"key\":\"a\",\"filter\":{\"must\":[{\"key\":\"b\",\"match\":{\"value\":\"x\"}}]}}}]}",
};

static bool id_of(void *user, size_t row, corpus_id *out) {
  (void)user;
  memset(out, 0, sizeof *out);
  out->num = row + 1;
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  vf_error err;
  flt_filter *f = NULL;
  if (flt_parse(text, size, "fuzz", &f, &err) == VF_OK) {
    (void)flt_json(f);
    const char *const *keys;
    (void)flt_keys(f, &keys);
    flt_docs *d = NULL;
    if (flt_docs_create(&d, &err) == VF_OK) {
      int64_t off[5] = {0};
      size_t total = 0;
      char buf[1024];
      for (int i = 0; i < 4; i++) {
        size_t l = strlen(PAYLOADS[i]);
        memcpy(buf + total, PAYLOADS[i], l);
        total += l;
        off[i + 1] = (int64_t)total;
      }
      if (flt_docs_add(d, buf, off, 4, "fuzz", &err) == VF_OK) {
        uint8_t mask[4], skip[4] = {0, 0, 1, 0};
        corpus_id id = {.num = 1};
        for (size_t r = 0; r < 4; r++) (void)flt_match(f, d, r, &id);
        (void)flt_docs_select(d, f, skip, id_of, NULL, mask);
        (void)flt_docs_select(d, f, NULL, NULL, NULL, mask);
      }
      flt_docs_free(d);
    }
    flt_free(f);
  }
  for (int i = 0; i < 3; i++) {
    flt_filter *g = NULL;
    if (flt_parse(FILTERS[i], strlen(FILTERS[i]), "fixed", &g, &err) != VF_OK) continue;
    bool m;
    (void)flt_match_json(g, text, size, NULL, &m, &err);
    flt_free(g);
  }
  int64_t us;
  (void)flt_datetime_parse(text, size, &us);
  return 0;
}
