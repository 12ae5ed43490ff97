/*
 * qdrant_internal.h — pieces of the Qdrant store shared by its files, its tests and
 * bench/qdrant-serialize: a small JSON reader for Qdrant's responses and the config's params,
 * the float32 formatter and the points serializer.
 */
#ifndef VFORGE_QDRANT_INTERNAL_H
#define VFORGE_QDRANT_INTERNAL_H

#include "vforge/store.h"

/* ------------------------------------------------------------ JSON reader */

typedef enum qj_type { QJ_NULL = 0, QJ_BOOL, QJ_NUM, QJ_STR, QJ_ARR, QJ_OBJ } qj_type;

typedef struct qj_val {
  qj_type t;
  const char *raw; /* the value's text in the parsed source (borrowed) */
  size_t raw_len;
  bool b;
  double num;
  char *str;      /* QJ_STR: decoded, NUL-terminated (owned) */
  size_t n;       /* QJ_ARR / QJ_OBJ: entries */
  struct qj_val *items;
  char **keys;    /* QJ_OBJ: decoded keys (owned) */
} qj_val;

/*! qj_parse() : parse exactly one JSON value from text[0..len) (RFC 8259; nesting <= 64, at most
 *  `len` entries overall).  `text` must outlive `out` (raw spans point into it).
 *  @return : VF_ECORRUPT naming `what` and the byte offset on bad JSON; VF_ENOMEM. */
vf_status qj_parse(const char *text, size_t len, const char *what, qj_val *out, vf_error *err);
void qj_free(qj_val *v);
/*! qj_get() : the member `key` of an object (NULL when v is not an object or lacks it). */
const qj_val *qj_get(const qj_val *v, const char *key);
/*! qj_path() : members along a dotted path ("result.config.params"); NULL when any is absent. */
const qj_val *qj_path(const qj_val *v, const char *dotted);

/* --------------------------------------------------- the corpus record (store.h) */

struct store_record;
/*! store_record_json() : append the record as a JSON object {"files_md5", "id_expression",
 *  "files", "rows"} (the load state is kept beside it by each backend). */
vf_status store_record_json(vf_buf *b, const struct store_record *r, vf_error *err);
/*! store_record_from_json() : fill `r` from such an object; false when it is not one. */
bool store_record_from_json(const qj_val *v, struct store_record *r);

/* ------------------------------------------------------- serialization */

#define QD_F32_MAX_CHARS 16

/*! qd_fmt_f32() : a finite float32 as a JSON number with at most 9 significant digits
 *  (trailing zeros dropped), which reads back as the same float32.  Writes at most
 *  QD_F32_MAX_CHARS bytes (no NUL); returns the count.  The caller checks isfinite. */
size_t qd_fmt_f32(char *out, float v);

/*! qd_points_json() : append the points [from, to) of batch `b` as the elements of a
 *  PointsList "points" array (comma-separated PointStruct objects, no brackets) to `out`.
 *  `map[j]` is the batch vector of collection vector j (store_check_batch).  The payload text
 *  of each row is spliced in verbatim (an empty payload is omitted).  `*first` tells whether a
 *  comma is needed and is cleared.
 *  @return : VF_ECORRUPT naming the row and vector for a NaN/infinite value; VF_ENOMEM. */
vf_status qd_points_json(const store *s, const corpus_batch *b, const int *map, size_t from,
                         size_t to, bool *first, vf_buf *out, vf_error *err);

#endif
