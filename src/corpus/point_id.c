/*
 * point_id.c — bare keys and point ids (DESIGN.md "Point ids") over the URI parts io_uri_parse
 * gives (src/io/uri.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* Strip `id_root` (a local directory) from the absolute path `abs`. */
vf_status corpus_strip_root(const char *abs, const char *id_root, char **out, vf_error *err) {
  *out = NULL;
  char *root = NULL;
  vf_status st = io_abs_path(id_root, &root, err);
  if (st != VF_OK) return vf_error_prefix(err, "id_root: ");
  size_t rl = strlen(root);
  const char *rel = NULL;
  if (rl == 1) /* root "/" */
    rel = abs + 1;
  else if (strncmp(abs, root, rl) == 0 && abs[rl] == '/')
    rel = abs + rl + 1;
  if (!rel || !*rel) {
    st = vf_error_set(err, VF_ECONFIG, "%s: file is not under id_root %s", abs, root);
    free(root);
    return st;
  }
  free(root);
  *out = vf_strdup(rel);
  return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "%s: out of memory", abs);
}

/* corpus_bare_key(): see corpus.h.  id_root applies to local and file:// URIs only; remote keys
 * are always the key inside the container. */
vf_status corpus_bare_key(const char *uri, const char *id_root, char **out, vf_error *err) {
  *out = NULL;
  io_uri u;
  vf_status st = io_uri_parse(uri, &u, err);
  if (st != VF_OK) return st;
  if ((u.scheme == IO_URI_LOCAL || u.scheme == IO_URI_FILE) && id_root && *id_root) {
    st = corpus_strip_root(u.path, id_root, out, err);
  } else {
    *out = u.path;
    u.path = NULL;
  }
  io_uri_free(&u);
  return st;
}

/* corpus_id_suffix(): see internal.h.  The bytes snprintf's ":%" PRIu64 writes (point ids hash
 * them; this runs once per point, so it skips the printf machinery); length <= 22. */
int corpus_id_suffix(char out[24], bool neg, uint64_t v) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  int o = 0;
  out[o++] = ':';
  if (neg) out[o++] = '-';
  while (n) out[o++] = digits[--n];
  out[o] = '\0';
  return o;
}

/* corpus_point_id(): see corpus.h. */
void corpus_point_id(const char *key, size_t key_len, uint64_t row, char out[37]) {
  char num[24];
  int nl = corpus_id_suffix(num, false, row);
  corpus_point_id_text(key, key_len, num, (size_t)nl, out);
}

/* md5(key + suffix) as a point id; suffix is ":<decimal>". */
void corpus_point_id_text(const char *key, size_t key_len, const char *suffix, size_t suffix_len,
                          char out[37]) {
  vf_md5_ctx c;
  uint8_t d[16];
  vf_md5_init(&c);
  vf_md5_update(&c, key, key_len);
  vf_md5_update(&c, suffix, suffix_len);
  vf_md5_final(&c, d);
  corpus_uuid_format(d, out);
}

/* 16 bytes -> lowercase 8-4-4-4-12. */
void corpus_uuid_format(const uint8_t d[16], char out[37]) {
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = hex[d[i] >> 4];
    out[o++] = hex[d[i] & 15];
  }
  out[o] = '\0';
}
