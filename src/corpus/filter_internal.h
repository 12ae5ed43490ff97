/*
 * filter_internal.h — what filter.c (compiling), filter_json.c (the JSON tape) and
 * filter_eval.c (payloads, matching, indexes) share.
 */
#ifndef VFORGE_FILTER_INTERNAL_H
#define VFORGE_FILTER_INTERNAL_H

#include "vforge/filter.h"

/* ------------------------------------------------------------ JSON tape */

/* One JSON value per node, in document order.  Arrays and objects are followed by their
 * contents (an object member is a key node, FJ_STR, then its value) and record in `end` the
 * index one past their last node, so a value is skipped in O(1).  Strings are decoded (escapes
 * resolved) into the tape's text buffer; `off`/`n` locate them there. */
enum { FJ_NULL = 0, FJ_FALSE, FJ_TRUE, FJ_NUM, FJ_STR, FJ_ARR, FJ_OBJ };

#define FJ_MAX_DEPTH 128
/* a path's index key ("K<len>:<key>" per key step, "I<n>" per index, "W" per wildcard): every
 * step costs at least one byte of the filter text, which filter.c caps at FLT_MAX_TEXT */
#define FLT_MAX_PATH_KEY (4 * FLT_MAX_TEXT)

typedef struct fj_node {
  uint8_t t;
  uint8_t isint; /* FJ_NUM: an integer literal that fits int64 (serde's as_i64) */
  uint32_t n;    /* FJ_STR: bytes; FJ_ARR: elements; FJ_OBJ: members */
  uint32_t end;  /* one past the last node of this value */
  uint64_t off;  /* FJ_STR: offset of the bytes in the text buffer */
  double d;      /* FJ_NUM */
  int64_t i;     /* FJ_NUM with isint */
} fj_node;

typedef struct fj_tape {
  fj_node *nodes;
  size_t n, cap;
  vf_buf text; /* the parsed texts, strings decoded in place */
} fj_tape;

void fj_init(fj_tape *t);
void fj_free(fj_tape *t);
void fj_clear(fj_tape *t);
/*! fj_parse() : append one JSON value (the whole of s[0..len), whitespace around allowed) to
 *  the tape; *root receives its node index.  `obj_only`: the value must be an object (an empty
 *  span then gives {}).  Errors: VF_ECORRUPT "<what>: invalid JSON at byte N: ..." */
vf_status fj_parse(fj_tape *t, const char *s, size_t len, bool obj_only, const char *what,
                   uint32_t *root, vf_error *err);
static inline const char *fj_str(const fj_tape *t, const fj_node *nd) {
  return (const char *)t->text.data + nd->off;
}
/*! fj_get() : the value of the last member `key` of object `obj` (node index), or 0 when absent
 *  (0 is never a member value: it is the first node of the tape, a top-level value). */
uint32_t fj_get(const fj_tape *t, uint32_t obj, const char *key, size_t klen);
/*! fj_write() : the value at node i as compact JSON. */
vf_status fj_write(const fj_tape *t, uint32_t i, vf_buf *out, vf_error *err);

/* --------------------------------------------------------- compiled filter */

typedef enum fp_kind { FP_KEY = 0, FP_INDEX, FP_WILD } fp_kind;

typedef struct fp_item {
  fp_kind kind;
  char *key; /* FP_KEY */
  size_t klen;
  uint64_t index; /* FP_INDEX */
} fp_item;

typedef struct fpath {
  fp_item *items; /* items[0] is always FP_KEY (the payload key) */
  size_t n;
} fpath;

typedef enum fc_kind { FC_FILTER = 0, FC_FIELD, FC_IS_EMPTY, FC_IS_NULL, FC_HAS_ID, FC_NESTED } fc_kind;

/* the parts of a field condition (a FieldCondition may hold several) */
enum {
  FF_MATCH = 1u << 0,
  FF_RANGE = 1u << 1,
  FF_DTRANGE = 1u << 2,
  FF_GEO_BOX = 1u << 3,
  FF_GEO_RADIUS = 1u << 4,
  FF_VCOUNT = 1u << 5,
  FF_IS_EMPTY = 1u << 6,
  FF_IS_NULL = 1u << 7
};

typedef enum fm_kind {
  FM_STR = 0, FM_INT, FM_BOOL,      /* match value */
  FM_TEXT, FM_TEXT_ANY, FM_PREFIX,  /* match text / phrase, text_any, prefix */
  FM_ANY, FM_EXCEPT                 /* match any / except (strs or ints) */
} fm_kind;

typedef struct fstr {
  const char *s;
  size_t n;
} fstr;

/* bounds: bit 0 lt, 1 gt, 2 lte, 3 gte */
typedef struct fbounds {
  unsigned has;
  double lt, gt, lte, gte;
} fbounds;

typedef struct fcond fcond;

struct fcond {
  fc_kind kind;
  fpath path; /* FIELD, IS_EMPTY, IS_NULL, NESTED (with [] appended) */
  /* FC_FIELD */
  unsigned parts;
  fm_kind mk;
  fstr mstr;            /* FM_STR, FM_TEXT, FM_PREFIX */
  int64_t mint;         /* FM_INT */
  bool mbool;           /* FM_BOOL */
  bool list_str;        /* FM_ANY/FM_EXCEPT: the list holds strings (else integers) */
  fstr *strs;           /* sorted, distinct; also FM_TEXT_ANY's tokens (unsorted) */
  size_t nstrs;
  int64_t *ints;        /* sorted, distinct */
  size_t nints;
  fbounds range;        /* FF_RANGE */
  int64_t dt[4];        /* FF_DTRANGE: lt, gt, lte, gte in microseconds; `dthas` bits */
  unsigned dthas;
  double box[4];        /* FF_GEO_BOX: top_left lon, lat; bottom_right lon, lat */
  double circle[3];     /* FF_GEO_RADIUS: lon, lat, radius (m) */
  uint64_t vc[4];       /* FF_VCOUNT: lt, gt, lte, gte; `vchas` bits */
  unsigned vchas;
  bool is_empty, is_null; /* FF_IS_EMPTY / FF_IS_NULL values */
  /* FC_FILTER */
  fcond *must, *should, *must_not, *min;
  size_t nmust, nshould, nmust_not, nmin;
  bool has_should;      /* a should list was given (an empty one matches nothing) */
  bool has_min;
  uint64_t min_count;
  /* FC_HAS_ID: sorted */
  corpus_id *ids;
  size_t nids;
  /* FC_NESTED */
  fcond *sub;           /* a FC_FILTER evaluated on each object at `path` */
};

struct flt_filter {
  fcond root;          /* FC_FILTER */
  char *json;          /* Qdrant Filter JSON */
  const char **keys;   /* distinct first key components */
  size_t nkeys;
  bool uses_id;
  bool empty;
};

/*! flt_eval() : the condition `c` over the object at node `obj` of `t` (filter_eval.c). */
bool flt_eval(const fcond *c, const fj_tape *t, uint32_t obj, const corpus_id *id);

#endif
