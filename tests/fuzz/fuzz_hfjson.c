/* libFuzzer harness for the untrusted text of remote listings and HTTP headers: the Hub's tree
 * API JSON (io_hf_parse_tree), Content-Range and Link values (src/io/http.c), and {i} part
 * patterns.  Every accepted file entry must have a non-empty relative path without ".", ".."
 * or empty segments; an accepted Content-Range must be ordered. */
#include <stdlib.h>
#include <string.h>

#include "io/remote_internal.h"

/* true when some '/'-separated segment of p is "..", "." or empty */
static int bad_segment(const char *p) {
  for (;;) {
    size_t n = strcspn(p, "/");
    if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return 1;
    if (!p[n]) return 0;
    p += n + 1;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vf_error err;
  io_hf_tree t;
  if (io_hf_parse_tree((const char *)data, size, "fuzz", &t, &err) == VF_OK) {
    for (size_t i = 0; i < t.n; i++) {
      const char *p = t.items[i].path;
      if (!p[0] || p[0] == '/' || bad_segment(p)) abort();
    }
    io_hf_tree_free(&t);
  }
  int64_t a, b, tot;
  if (io_http_parse_content_range((const char *)data, size, &a, &b, &tot) && a >= 0 &&
      (b < a || (tot >= 0 && b >= tot)))
    abort();
  free(io_http_parse_link_next((const char *)data, size));
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = 0;
  free(io_http_part_url(s, 12345));
  free(s);
  return 0;
}
