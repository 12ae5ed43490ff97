/* Option values given as text or as @FILE (--filter JSON|@FILE, --filter-template T|@FILE). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* cli_text_arg(): see cli.h. */
vf_status cli_text_arg(const char *opt, const char *value, size_t max, char **out, vf_error *err) {
  *out = NULL;
  if (value[0] != '@') {
    if (strlen(value) > max)
      return vf_error_set(err, VF_EUSAGE, "--%s: more than %zu bytes", opt, max);
    *out = vf_strdup(value);
    return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  const char *path = value + 1;
  FILE *fp = fopen(path, "rb");
  if (!fp) return vf_error_set(err, VF_EUSAGE, "--%s @%s: cannot open: %s", opt, path, VF_STRERROR(errno));
  vf_buf b;
  vf_buf_init(&b, max + 1);
  vf_status st = VF_OK;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
    if (b.len + n > max) VF_FAIL(vf_error_set(err, VF_EUSAGE, "--%s @%s: more than %zu bytes", opt, path, max));
    VF_TRY(vf_buf_append(&b, chunk, n, err));
  }
  if (ferror(fp)) VF_FAIL(vf_error_set(err, VF_EUSAGE, "--%s @%s: read error", opt, path));
  VF_TRY(vf_buf_append(&b, "", 1, err));
  size_t len;
  *out = (char *)vf_buf_take(&b, &len);
out:
  fclose(fp);
  if (st != VF_OK) vf_buf_free(&b);
  return st;
}
