/* libFuzzer harness for the YAML config loader: vf_config_parse() on arbitrary text, then the
 * renderer and the part-template expander on whatever parsed.  Variables referenced by the input
 * are looked up in the real environment; the harness sets a few (one secret) so expansion paths
 * run.  Never touches the file system (no vf_config_inspect). */
#include <stdlib.h>
#include <string.h>

#include "vforge/config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setenv("A", "1", 1);
  setenv("B", "", 1);
  setenv("URL", "http://127.0.0.1:6333", 1);
  setenv("API_KEY", "fuzz-secret-value", 1);
  setenv("LONG", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 1);
  return 0;
}

static void parts(const vf_cfg_dataset_component *c) {
  if (!c->present || !c->has_parts) return;
  vf_error err;
  int64_t first = c->parts.start, n = c->parts.count < 3 ? c->parts.count : 3;
  for (int64_t i = first; i < first + n; i++) {
    char *p = NULL;
    if (vf_config_part_path(&c->parts, c->parts.path, i, &p, &err) == VF_OK) free(p);
    if (c->parts.link && vf_config_part_path(&c->parts, c->parts.link, i, &p, &err) == VF_OK)
      free(p);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vf_config cfg;
  vf_error err;
  /* the secret may only appear in output when the input spells it out itself */
  bool literal = memmem(data, size, "fuzz-secret-value", 17) != NULL;
  if (vf_config_parse((const char *)data, size, "fuzz.yaml", &cfg, &err) == VF_OK) {
    vf_buf b;
    vf_buf_init(&b, 0);
    if (vf_config_render_json(&cfg, &b, &err) == VF_OK && b.len && !literal &&
        memmem(b.data, b.len, "fuzz-secret-value", 17))
      __builtin_trap(); /* a secret reached rendered output */
    vf_buf_free(&b);
    parts(&cfg.datasource.vectors);
    parts(&cfg.datasource.payload);
    (void)vf_config_find_vector(&cfg, "dense");
  } else if (!literal && strstr(err.msg, "fuzz-secret-value")) {
    __builtin_trap(); /* a secret reached an error message */
  }
  vf_config_free(&cfg);
  return 0;
}
