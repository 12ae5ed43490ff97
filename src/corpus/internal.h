/* internal.h — helpers shared by the src/corpus sources (not part of the public API). */
#ifndef VFORGE_CORPUS_INTERNAL_H
#define VFORGE_CORPUS_INTERNAL_H

#include <sys/stat.h>

#include "vforge/corpus.h"

/* lexically normalised copy of an absolute path ("//", ".", ".." removed); NULL on OOM */
char *corpus_normalize_abs(const char *abs);
/* absolute, normalised form of a local path (relative -> joined to the cwd, symlinks kept) */
vf_status corpus_abs_path(const char *path, char **out, vf_error *err);
/* `abs` with the directory `id_root` and the following '/' removed; VF_ECONFIG if not under it */
vf_status corpus_strip_root(const char *abs, const char *id_root, char **out, vf_error *err);
/* md5(key + suffix) as a point id, where suffix is ":<decimal row>" */
void corpus_point_id_text(const char *key, size_t key_len, const char *suffix, size_t suffix_len,
                          char out[37]);
/* 16 bytes -> lowercase 8-4-4-4-12 */
void corpus_uuid_format(const uint8_t d[16], char out[37]);

#endif
