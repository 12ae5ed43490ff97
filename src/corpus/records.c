/*
 * Record batches from parquet files: the points (id, named vectors, payload, provenance) of one
 * row group at a time, for the load runner (issue "Loading": ids from id_expression, payload
 * from payload_fields, named vectors from vectors; DESIGN.md "Vectors in parquet", "Point ids").
 *
 * Why per row group: it is the unit parquet lets us fetch and decode independently (one ranged
 * read per column chunk), so memory is one row group of the configured columns whatever the file
 * size; every buffer (decoded leaves, staging, the caller's batch) is reused across calls.
 *
 * Vectors are checked row by row, because one bad row must be reported by its physical row (or
 * dropped, with skip_bad_rows) without disturbing any other row's id:
 *   - dense: pqt_dense_from_leaf is the fast path: for float32 lists it only checks the levels
 *     and the decoded values are handed to the batch as they are (fill_vector swaps buffers, no
 *     copy), other element types are converted in one pass; when it rejects the row group, a
 *     level walk classifies each row (null vector, empty vector, null element, dimension), so
 *     skipping works and messages name the vector and its column;
 *   - sparse: struct{indices: list<int>, values: list<float|double>}: both lists walked, per row
 *     equal lengths and indices in [0, 2^32);
 *   - multi: list<list<float>>: a two-level walk (parquet-format "Nested Encoding": rep 0 starts
 *     a point, rep 1 a vector, rep 2 an element), every inner vector of the same dimension.
 * Every accepted value is finite (NaN/±inf make the row bad).  The dimension of a dense or multi
 * vector is inferred from the first non-null row of the first row group this reader decodes and
 * then checked on every row of the file.
 *
 * Payload: one JSON object per row with the configured keys in spec order.  Each payload column
 * is rendered by its own single-column pqt_rows (Dremel assembly) and its `"column":` prefix is
 * replaced by the key; nulls are omitted; a flat string/JSON column whose value is a JSON object
 * text (checked strictly by vf_json_is_object) is inserted as that object.  Values render as
 * `cat` prints them: binary without a string annotation as base64 (datasource.binary_as_string:
 * lossy text), VARIANT columns as the JSON of their value.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "dataset.h"
#include "internal.h"

typedef enum el_kind { EL_F32 = 0, EL_F64, EL_F16 } el_kind;

/* row states produced by the level walks */
enum {
  RS_OK = 0,
  RS_NULL,      /* no vector (null list or null struct) */
  RS_EMPTY,     /* an empty (outer) list */
  RS_NULL_ELEM, /* null element at pos (multi: in vector aux) */
  RS_NULL_VEC,  /* multi: inner vector aux is null */
  RS_DIM        /* multi: inner vector aux has pos elements */
};

/* Per-row results of a level walk over one leaf of the current row group. */
typedef struct walk_rows {
  uint8_t *state;
  int64_t *start; /* index of the row's first value in the leaf's packed values */
  int64_t *count; /* elements (dense, sparse) or inner vectors (multi) */
  int64_t *pos;   /* RS_NULL_ELEM: element position; RS_DIM: the inner vector's length */
  int64_t *aux;   /* multi: the inner vector index of RS_NULL_ELEM / RS_NULL_VEC / RS_DIM */
  size_t cap;
} walk_rows;

typedef struct rec_vec {
  const corpus_vec_source *src;
  int top;
  int leaf_a, leaf_b; /* dense/multi: the float leaf in a; sparse: indices in a, values in b */
  int data_a, data_b; /* their slots in corpus_records.data */
  el_kind el;         /* the float leaf's element type */
  bool flba;          /* dense stored as a top-level FIXED_LEN_BYTE_ARRAY */
  bool idx_unsigned;  /* sparse: indices annotated unsigned */
  int16_t d_list, d_rep, d_inner, d_inner_rep; /* definition levels of the list nodes */
  int16_t d_list_b, d_rep_b;                   /* sparse: the values list */
  int32_t dim;                                 /* dense/multi: 0 until inferred */
  /* staging for the current row group */
  const float *vals; /* dense: rows x dim matrix; sparse/multi: the leaf's values as floats */
  bool vals_matrix;  /* vals is row-major rows x dim (dense) rather than packed values */
  pqt_dense dense;   /* dense fast path (per vector: batches are filled after every vector) */
  bool leaf_owned;   /* dense float32 list whose leaf no other vector, payload or id reads: its
                        decoded values may be handed to the batch (fill_vector) */
  bool vals_leaf;    /* vals points into the leaf's decoded values (no copy was made) */
  float *conv;       /* converted values (owned) */
  size_t conv_cap;
  walk_rows wa, wb;
} rec_vec;

typedef struct rec_pay {
  const corpus_payload_source *src;
  int top;
  pqt_rows *rows;
  char *prefix; /* "\"column\":" as pqt_rows renders it */
  size_t prefix_len;
  char *key; /* "\"key\":" */
  size_t key_len;
  int str_leaf; /* >= 0: a flat string/JSON column whose object texts are unpacked */
  int str_data;
  int64_t *vidx; /* per row value index (-1 null) of str_leaf, NULL when it has no nulls */
  size_t vidx_cap;
} rec_pay;

struct corpus_records {
  const corpus_records_source *src; /* every call forwards to it: parquet below, or a dataset part */
  void *impl;                       /* the source's state: this reader itself for parquet */
  const corpus_file *file;
  corpus_record_spec spec;
  uint64_t global_row_base;
  pqt_file *f;
  uint64_t *rg_first; /* physical row of each row group's first row, nrow_groups+1 */
  rec_vec *vecs;
  rec_pay *pays;
  corpus_idcols ids;
  int *leaf_ids; /* leaves decoded per row group (vectors, payload, ids; no duplicates) */
  int nleaves;
  int *leaf_slot; /* schema leaf -> slot in data, -1 */
  pqt_leaf_data *data;
  uint8_t *bad; /* per row of the current row group */
  size_t bad_cap;
  int64_t first_bad; /* first bad row (in the row group) at or after the start, -1 none */
  vf_error bad_err;
  vf_buf tmp;
};

/* ------------------------------------------------------------------ helpers */

static vf_status grow(void **p, size_t *cap, size_t need, size_t elem, vf_error *err) {
  if (need <= *cap && *p) return VF_OK;
  size_t n = need ? need : 1;
  void *q = vf_realloc(*p, n * elem);
  if (!q || n > SIZE_MAX / elem)
    return vf_error_set(err, VF_ENOMEM, "out of memory for %zu elements of %zu bytes", n, elem);
  *p = q;
  *cap = n;
  return VF_OK;
}

/* Bytes usable at p (a malloc'd block or NULL); 0 where the C library cannot tell, which
 * makes the callers reallocate as if the block were empty. */
static size_t block_bytes(void *p) {
#if defined(__GLIBC__)
  return p ? malloc_usable_size(p) : 0;
#else
  (void)p;
  return 0;
#endif
}

/* Resize a batch-owned array to exactly `n` elements (n may be 0: one element is kept). */
static vf_status resize(void **p, size_t n, size_t elem, vf_error *err) {
  size_t cnt = n ? n : 1;
  if (cnt > SIZE_MAX / elem) return vf_error_set(err, VF_ENOMEM, "batch array too large");
  void *q = vf_realloc(*p, cnt * elem);
  if (!q) return vf_error_set(err, VF_ENOMEM, "out of memory for a batch of %zu rows", n);
  *p = q;
  return VF_OK;
}

static void walk_rows_free(walk_rows *w) {
  free(w->state);
  free(w->start);
  free(w->count);
  free(w->pos);
  free(w->aux);
  memset(w, 0, sizeof *w);
}

static vf_status walk_rows_reserve(walk_rows *w, int64_t rows, vf_error *err) {
  size_t n = (size_t)rows + 1;
  if (n <= w->cap && w->state) return VF_OK;
  size_t c1 = w->cap, c2 = w->cap, c3 = w->cap, c4 = w->cap, c5 = w->cap;
  vf_status st = grow((void **)&w->state, &c1, n, 1, err);
  if (st != VF_OK) return st;
  if ((st = grow((void **)&w->start, &c2, n, sizeof(int64_t), err)) != VF_OK) return st;
  if ((st = grow((void **)&w->count, &c3, n, sizeof(int64_t), err)) != VF_OK) return st;
  if ((st = grow((void **)&w->pos, &c4, n, sizeof(int64_t), err)) != VF_OK) return st;
  if ((st = grow((void **)&w->aux, &c5, n, sizeof(int64_t), err)) != VF_OK) return st;
  w->cap = n;
  return VF_OK;
}

static float el_get(const uint8_t *src, int64_t i, el_kind k) {
  if (k == EL_F32) {
    float v;
    memcpy(&v, src + 4 * i, 4);
    return v;
  }
  if (k == EL_F64) {
    double v;
    memcpy(&v, src + 8 * i, 8);
    return (float)v;
  }
  return pqt_half_to_float((uint16_t)(src[2 * i] | (src[2 * i + 1] << 8)));
}

static size_t el_width(el_kind k) {
  return k == EL_F32 ? 4 : k == EL_F64 ? 8 : 2;
}

/* The values of a float leaf as float32 (into v->conv), checked against the leaf's width. */
static vf_status convert_values(const corpus_records *r, rec_vec *v, const pqt_leaf_data *d,
                                vf_error *err) {
  size_t w = el_width(v->el);
  if ((size_t)d->width != w || d->nvalues < 0 || d->values.len < (uint64_t)d->nvalues * w)
    return vf_error_set(err, VF_EUSAGE, "%s: leaf data of column %s does not match its schema",
                        pqt_name(r->f), v->src->column);
  vf_status st = grow((void **)&v->conv, &v->conv_cap, (size_t)d->nvalues, sizeof(float), err);
  if (st != VF_OK) return st;
  if (v->el == EL_F32) {
    if (d->nvalues > 0) memcpy(v->conv, d->values.data, (size_t)d->nvalues * sizeof(float));
  } else {
    for (int64_t i = 0; i < d->nvalues; i++)
      v->conv[i] = el_get(d->values.data, i, v->el);
  }
  v->vals = v->conv;
  v->vals_matrix = false;
  return VF_OK;
}

/* Whether x[0..n) holds a non-finite value: the exponent bits of each float, or-reduced in
 * fixed blocks the compiler vectorises (an exponent of all ones carries into bit 31 when
 * 0x00800000 is added to it), so the common all-finite matrix costs one streaming pass. */
static bool any_nonfinite(const float *x, size_t n) {
  enum { BLOCK = 64 };
  size_t i = 0;
  for (; i + BLOCK <= n; i += BLOCK) {
    uint32_t acc = 0;
    for (size_t j = 0; j < BLOCK; j++) {
      uint32_t b;
      memcpy(&b, &x[i + j], 4);
      acc |= (b & 0x7f800000u) + 0x00800000u;
    }
    if (acc & 0x80000000u) return true;
  }
  for (; i < n; i++) {
    uint32_t b;
    memcpy(&b, &x[i], 4);
    if ((b & 0x7f800000u) == 0x7f800000u) return true;
  }
  return false;
}

/* First non-finite value of x[0..n), -1 if none.  Tests the exponent bits directly. */
static int64_t first_nonfinite(const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t b;
    memcpy(&b, &x[i], 4);
    if ((b & 0x7f800000u) == 0x7f800000u) return i;
  }
  return -1;
}

static const char *nonfinite_name(float x) {
  return isnan(x) ? "NaN" : x > 0 ? "+inf" : "-inf";
}

/* Mark row `row` (of the current row group) bad; keep the message of the first bad row at or
 * after `start` ("file: row R: vector 'name' (column c) <what>"). */
static void mark_bad(corpus_records *r, const rec_vec *v, int64_t row, int64_t rg_first,
                     const char *fmt, ...) VF_PRINTF(5, 6);
static void mark_bad(corpus_records *r, const rec_vec *v, int64_t row, int64_t rg_first,
                     const char *fmt, ...) {
  if (r->bad[row]) return;
  r->bad[row] = 1;
  if (r->first_bad >= 0 && r->first_bad <= row) return;
  r->first_bad = row;
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  vf_error_set(&r->bad_err, VF_ECORRUPT, "%s: row %" PRId64 ": vector '%s' (column %s) %s",
               pqt_name(r->f), rg_first + row, v->src->name, v->src->column, what);
}

static vf_status levels_corrupt(const corpus_records *r, const rec_vec *v, int64_t row,
                                int64_t rg_first, const char *why, vf_error *err) {
  return vf_error_set(err, VF_ECORRUPT, "%s: row %" PRId64 ": column %s: %s", pqt_name(r->f),
                      rg_first + (row < 0 ? 0 : row), v->src->column, why);
}

/* ------------------------------------------------------------- level walks */

/* One-level list leaf (dense list, sparse indices/values): per row its state, first value
 * index and element count.  `list_def`: def level at which the list (and every enclosing
 * optional group) is present; `rep_def`: at which an element exists; max_def: element non-null. */
static vf_status walk_list(const corpus_records *r, const rec_vec *v, const pqt_leaf_data *d,
                           int16_t list_def, int16_t rep_def, int16_t max_def, int64_t rows,
                           int64_t rg_first, walk_rows *w, vf_error *err) {
  vf_status st = walk_rows_reserve(w, rows, err);
  if (st != VF_OK) return st;
  if (d->nrows != rows || (d->nlevels > 0 && !d->rep))
    return levels_corrupt(r, v, 0, rg_first, "levels do not match the row group's row count", err);
  const uint8_t *rep = d->rep, *def = d->def;
  int64_t row = -1, val = 0;
  for (int64_t i = 0; i < d->nlevels; i++) {
    int dv = def ? def[i] : max_def;
    if (rep[i] == 0) {
      if (++row >= rows) return levels_corrupt(r, v, row, rg_first, "more rows than counted", err);
      w->start[row] = val;
      w->count[row] = 0;
      if (dv < list_def) {
        w->state[row] = RS_NULL;
        continue;
      }
      if (dv < rep_def) {
        w->state[row] = RS_EMPTY;
        continue;
      }
      w->state[row] = RS_OK;
    } else if (rep[i] == 1 && row >= 0) {
      if (w->state[row] == RS_NULL && dv < list_def) continue; /* DuckDB's null fixed arrays */
      if (w->state[row] == RS_NULL || w->state[row] == RS_EMPTY || dv < rep_def)
        return levels_corrupt(r, v, row, rg_first, "an element inside a null or empty list", err);
    } else {
      return levels_corrupt(r, v, row, rg_first, "unexpected repetition level", err);
    }
    if (dv < max_def) {
      if (w->state[row] == RS_OK) {
        w->state[row] = RS_NULL_ELEM;
        w->pos[row] = w->count[row];
      }
    } else if (val++ >= d->nvalues) {
      return levels_corrupt(r, v, row, rg_first, "more defined levels than values", err);
    }
    w->count[row]++;
  }
  if (row + 1 != rows) return levels_corrupt(r, v, row, rg_first, "fewer rows than counted", err);
  return VF_OK;
}

/* Two-level list leaf (multivectors): per row its state, first value index and vector count;
 * infers v->dim from the first complete inner vector of a good row. */
static vf_status walk_multi(const corpus_records *r, rec_vec *v, const pqt_leaf_data *d,
                            int16_t max_def, int64_t rows, int64_t rg_first, vf_error *err) {
  walk_rows *w = &v->wa;
  vf_status st = walk_rows_reserve(w, rows, err);
  if (st != VF_OK) return st;
  if (d->nrows != rows || (d->nlevels > 0 && !d->rep))
    return levels_corrupt(r, v, 0, rg_first, "levels do not match the row group's row count", err);
  const uint8_t *rep = d->rep, *def = d->def;
  int64_t row = -1, val = 0, len = 0;
  bool in_vec = false, vec_null = false;
  for (int64_t i = 0; i <= d->nlevels; i++) {
    int rp = i < d->nlevels ? rep[i] : 0;
    int dv = i < d->nlevels ? (def ? def[i] : max_def) : 0;
    if (row >= 0 && rp <= 1 && in_vec) { /* close the current inner vector */
      if (w->state[row] == RS_OK && !vec_null) {
        if (v->dim == 0 && len > 0 && len <= INT32_MAX) v->dim = (int32_t)len;
        if (len == 0 || len != v->dim) {
          w->state[row] = RS_DIM;
          w->aux[row] = w->count[row] - 1;
          w->pos[row] = len;
        }
      }
      in_vec = false;
    }
    if (i == d->nlevels) break;
    if (rp == 0) {
      if (++row >= rows) return levels_corrupt(r, v, row, rg_first, "more rows than counted", err);
      w->start[row] = val;
      w->count[row] = 0;
      w->state[row] = RS_OK;
      if (dv < v->d_list) {
        w->state[row] = RS_NULL;
        continue;
      }
      if (dv < v->d_rep) {
        w->state[row] = RS_EMPTY;
        continue;
      }
    } else if (row < 0 || rp > 2) {
      return levels_corrupt(r, v, row, rg_first, "unexpected repetition level", err);
    } else if (w->state[row] == RS_NULL && dv < v->d_list) {
      continue; /* entries inside a null list that define nothing */
    } else if (w->state[row] == RS_NULL || w->state[row] == RS_EMPTY || dv < v->d_rep) {
      return levels_corrupt(r, v, row, rg_first, "an element inside a null or empty list", err);
    }
    if (rp <= 1) { /* a new inner vector */
      w->count[row]++;
      in_vec = true;
      len = 0;
      vec_null = dv < v->d_inner;
      if (vec_null) {
        if (w->state[row] == RS_OK) {
          w->state[row] = RS_NULL_VEC;
          w->aux[row] = w->count[row] - 1;
        }
        continue;
      }
      if (dv < v->d_inner_rep) continue; /* an empty inner vector: length 0 */
    } else if (!in_vec || vec_null || dv < v->d_inner_rep) {
      return levels_corrupt(r, v, row, rg_first, "an element inside a null or empty vector", err);
    }
    if (dv < max_def) {
      if (w->state[row] == RS_OK) {
        w->state[row] = RS_NULL_ELEM;
        w->aux[row] = w->count[row] - 1;
        w->pos[row] = len;
      }
    } else if (val++ >= d->nvalues) {
      return levels_corrupt(r, v, row, rg_first, "more defined levels than values", err);
    }
    len++;
  }
  if (row + 1 != rows) return levels_corrupt(r, v, row, rg_first, "fewer rows than counted", err);
  return VF_OK;
}

/* ------------------------------------------------------------ vector kinds */

/* Dense: fast path through pqt_dense_from_leaf, level walk when it rejects the row group. */
static vf_status read_dense(corpus_records *r, rec_vec *v, int64_t rows, int64_t start,
                            int64_t rg_first, vf_error *err) {
  const pqt_leaf_data *d = &r->data[v->data_a];
  int32_t dim = v->dim;
  vf_error derr;
  vf_error_clear(&derr);
  v->vals_leaf = false;
  /* float32 lists: only check the levels; the values are used where the decoder left them */
  v->dense.check_only = v->el == EL_F32 && !v->flba;
  /* a failure here is recovered below (the level walk), so it is not forwarded */
  vf_status fast = pqt_dense_from_leaf(r->f, v->top, d, rg_first, &dim, &v->dense, &derr);
  if (fast == VF_OK && (v->dense.rows != rows))
    return levels_corrupt(r, v, 0, rg_first, "vector rows do not match the row group", err);
  if (fast == VF_OK) {
    if (dim > 0) v->dim = dim;
    v->vals = v->dense.data;
    v->vals_matrix = true;
    /* no nulls and every row `dim` values: the packed leaf values are the row-major matrix
     * (always so when check_only returned early without filling v->dense) */
    if (v->dense.check_only && !d->def && !v->dense.null_rows && dim > 0 &&
        d->nvalues == d->nlevels && d->nlevels == rows * (int64_t)dim &&
        d->values.len >= (uint64_t)d->nvalues * sizeof(float)) {
      v->vals = (const float *)(const void *)d->values.data;
      v->vals_leaf = true;
    } else if (v->dense.check_only &&
               (!v->dense.data || v->dense.cap < (size_t)rows * (size_t)dim)) {
      return levels_corrupt(r, v, 0, rg_first, "vector values were not decoded", err);
    }
    size_t from = (size_t)start * (size_t)(dim > 0 ? dim : 0);
    bool clean = !v->dense.null_rows && dim > 0 &&
                 !any_nonfinite(v->vals + from, (size_t)(rows - start) * (size_t)dim);
    for (int64_t row = start; !clean && row < rows; row++) {
      if (v->dense.null_rows && v->dense.null_rows[row]) {
        mark_bad(r, v, row, rg_first, "is null");
        continue;
      }
      const float *x = v->vals + (size_t)row * (size_t)dim;
      int64_t bad = first_nonfinite(x, dim);
      if (bad >= 0)
        mark_bad(r, v, row, rg_first, "has %s at position %" PRId64, nonfinite_name(x[bad]), bad);
    }
    return VF_OK;
  }
  vf_status st = fast;
  if (st != VF_ECORRUPT) {
    if (err) *err = derr;
    return st;
  }
  if (v->flba) { /* fixed width: only a dimension different from earlier row groups fails */
    const pqt_leaf *lf = &pqt_schema_of(r->f)->leaves[v->leaf_a];
    int32_t vd = (int32_t)((size_t)lf->type_length / el_width(v->el));
    if (d->nlevels != rows) {
      if (err) *err = derr;
      return st;
    }
    for (int64_t row = start; row < rows; row++) {
      if (d->def && d->def[row] != lf->max_def)
        mark_bad(r, v, row, rg_first, "is null");
      else
        mark_bad(r, v, row, rg_first, "has dimension %d, expected %d", vd, v->dim);
    }
    v->vals = NULL;
    return VF_OK;
  }
  const pqt_leaf *lf = &pqt_schema_of(r->f)->leaves[v->leaf_a];
  if ((st = convert_values(r, v, d, err)) != VF_OK) return st;
  st = walk_list(r, v, d, v->d_list, v->d_rep, lf->max_def, rows, rg_first, &v->wa, err);
  if (st != VF_OK) return st;
  walk_rows *w = &v->wa;
  if (v->dim == 0) { /* the first non-null, non-empty row */
    for (int64_t row = 0; row < rows && v->dim == 0; row++)
      if (w->state[row] != RS_NULL && w->count[row] > 0 && w->count[row] <= INT32_MAX)
        v->dim = (int32_t)w->count[row];
  }
  for (int64_t row = start; row < rows; row++) {
    switch (w->state[row]) {
    case RS_NULL: mark_bad(r, v, row, rg_first, "is null"); continue;
    case RS_NULL_ELEM:
      mark_bad(r, v, row, rg_first, "has a null element at position %" PRId64, w->pos[row]);
      continue;
    default: break;
    }
    if (w->count[row] != v->dim || v->dim == 0) {
      mark_bad(r, v, row, rg_first, "has dimension %" PRId64 ", expected %d", w->count[row],
               v->dim);
      continue;
    }
    const float *x = v->conv + w->start[row];
    int64_t bad = first_nonfinite(x, v->dim);
    if (bad >= 0)
      mark_bad(r, v, row, rg_first, "has %s at position %" PRId64, nonfinite_name(x[bad]), bad);
  }
  return VF_OK;
}

static vf_status read_multi(corpus_records *r, rec_vec *v, int64_t rows, int64_t start,
                            int64_t rg_first, vf_error *err) {
  const pqt_leaf_data *d = &r->data[v->data_a];
  const pqt_leaf *lf = &pqt_schema_of(r->f)->leaves[v->leaf_a];
  vf_status st = convert_values(r, v, d, err);
  if (st != VF_OK) return st;
  if ((st = walk_multi(r, v, d, lf->max_def, rows, rg_first, err)) != VF_OK) return st;
  walk_rows *w = &v->wa;
  for (int64_t row = start; row < rows; row++) {
    switch (w->state[row]) {
    case RS_NULL: mark_bad(r, v, row, rg_first, "is null"); continue;
    case RS_EMPTY: mark_bad(r, v, row, rg_first, "has no vectors"); continue;
    case RS_NULL_VEC:
      mark_bad(r, v, row, rg_first, "has a null vector at index %" PRId64, w->aux[row]);
      continue;
    case RS_NULL_ELEM:
      mark_bad(r, v, row, rg_first, "has a null element at position %" PRId64 " of vector %" PRId64,
               w->pos[row], w->aux[row]);
      continue;
    case RS_DIM:
      mark_bad(r, v, row, rg_first, "vector %" PRId64 " has dimension %" PRId64 ", expected %d",
               w->aux[row], w->pos[row], v->dim);
      continue;
    default: break;
    }
    const float *x = v->conv + w->start[row];
    int64_t n = w->count[row] * (int64_t)v->dim;
    int64_t bad = first_nonfinite(x, n);
    if (bad >= 0)
      mark_bad(r, v, row, rg_first, "vector %" PRId64 " has %s at position %" PRId64, bad / v->dim,
               nonfinite_name(x[bad]), bad % v->dim);
  }
  return VF_OK;
}

static vf_status read_sparse(corpus_records *r, rec_vec *v, int64_t rows, int64_t start,
                             int64_t rg_first, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(r->f);
  const pqt_leaf_data *di = &r->data[v->data_a], *dv = &r->data[v->data_b];
  vf_status st = convert_values(r, v, dv, err);
  if (st != VF_OK) return st;
  st = walk_list(r, v, di, v->d_list, v->d_rep, sc->leaves[v->leaf_a].max_def, rows, rg_first,
                 &v->wa, err);
  if (st != VF_OK) return st;
  st = walk_list(r, v, dv, v->d_list_b, v->d_rep_b, sc->leaves[v->leaf_b].max_def, rows, rg_first,
                 &v->wb, err);
  if (st != VF_OK) return st;
  size_t iw = di->type == PQT_INT32 ? 4 : 8;
  if ((size_t)di->width != iw || di->values.len < (uint64_t)di->nvalues * iw)
    return vf_error_set(err, VF_EUSAGE, "%s: leaf data of column %s does not match its schema",
                        pqt_name(r->f), v->src->column);
  const walk_rows *a = &v->wa, *b = &v->wb;
  for (int64_t row = start; row < rows; row++) {
    if (a->state[row] == RS_NULL || b->state[row] == RS_NULL) {
      mark_bad(r, v, row, rg_first,
               a->state[row] == RS_NULL && b->state[row] == RS_NULL ? "is null"
               : a->state[row] == RS_NULL                           ? "has null indices"
                                                                    : "has null values");
      continue;
    }
    if (a->state[row] == RS_NULL_ELEM || b->state[row] == RS_NULL_ELEM) {
      bool in_idx = a->state[row] == RS_NULL_ELEM;
      mark_bad(r, v, row, rg_first, "has a null %s at position %" PRId64,
               in_idx ? "index" : "value", in_idx ? a->pos[row] : b->pos[row]);
      continue;
    }
    if (a->count[row] != b->count[row]) {
      mark_bad(r, v, row, rg_first, "has %" PRId64 " indices and %" PRId64 " values", a->count[row],
               b->count[row]);
      continue;
    }
    for (int64_t k = 0; k < a->count[row]; k++) {
      int64_t vi = a->start[row] + k;
      bool ok;
      long long shown;
      if (iw == 4) {
        int32_t x;
        memcpy(&x, di->values.data + 4 * vi, 4);
        ok = v->idx_unsigned || x >= 0;
        shown = v->idx_unsigned ? (long long)(uint32_t)x : (long long)x;
      } else {
        int64_t x;
        memcpy(&x, di->values.data + 8 * vi, 8);
        ok = v->idx_unsigned ? (uint64_t)x <= UINT32_MAX : (x >= 0 && x <= (int64_t)UINT32_MAX);
        shown = (long long)x;
      }
      if (!ok) {
        if (v->idx_unsigned && iw == 8)
          mark_bad(r, v, row, rg_first,
                   "has index %llu at position %" PRId64 " (indices must be below 2^32)",
                   (unsigned long long)shown, k);
        else
          mark_bad(r, v, row, rg_first,
                   "has index %lld at position %" PRId64 " (indices must be in [0, 2^32))", shown,
                   k);
        break;
      }
    }
    if (r->bad[row]) continue;
    const float *x = v->conv + b->start[row];
    int64_t bad = first_nonfinite(x, b->count[row]);
    if (bad >= 0)
      mark_bad(r, v, row, rg_first, "has %s at position %" PRId64, nonfinite_name(x[bad]), bad);
  }
  return VF_OK;
}

/* ------------------------------------------------------------ schema checks */

static bool float_leaf(const pqt_file *f, int leaf, el_kind *k) {
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_leaf *lf = &sc->leaves[leaf];
  const pqt_schema_elem *e = &pqt_meta(f)->schema[sc->nodes[lf->node].elem];
  if (lf->type == PQT_FLOAT)
    *k = EL_F32;
  else if (lf->type == PQT_DOUBLE)
    *k = EL_F64;
  else if (lf->type == PQT_FIXED_LEN_BYTE_ARRAY && lf->type_length == 2 &&
           e->logical == PQT_LT_FLOAT16)
    *k = EL_F16;
  else
    return false;
  return true;
}

/* A one-level list node whose element is the leaf itself: fills its def levels. */
static bool simple_list(const pqt_schema *sc, int node, int16_t *d_list, int16_t *d_rep) {
  const pqt_node *n = &sc->nodes[node];
  if (n->kind != PQT_NODE_LIST || n->element < 0 || n->repeated < 0 || n->nleaves != 1)
    return false;
  const pqt_node *en = &sc->nodes[n->element];
  if (en->leaf < 0 || sc->leaves[en->leaf].max_rep != sc->nodes[n->repeated].rep_level ||
      sc->nodes[n->repeated].rep_level != n->rep_level + 1)
    return false;
  *d_list = n->def_level;
  *d_rep = sc->nodes[n->repeated].def_level;
  return true;
}

static vf_status bad_type(const pqt_file *f, const corpus_vec_source *s, const char *want,
                          vf_error *err) {
  return vf_error_set(err, VF_ECONFIG, "%s: vector '%s': column %s cannot hold a %s", pqt_name(f),
                      s->name, s->column, want);
}

static vf_status vec_resolve(const pqt_file *f, const corpus_vec_source *s, rec_vec *v,
                             vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  memset(v, 0, sizeof *v);
  v->src = s;
  v->leaf_b = -1;
  v->top = pqt_find_top(f, s->column);
  if (v->top < 0) return corpus_missing_column(f, s->column, err);
  const pqt_node *n = &sc->nodes[v->top];
  if (s->kind == CORPUS_VEC_DENSE) {
    const char *want = "dense vector (list<float|double|float16> or FIXED_LEN_BYTE_ARRAY)";
    if (n->nleaves != 1) return bad_type(f, s, want, err);
    v->leaf_a = n->first_leaf;
    const pqt_leaf *lf = &sc->leaves[v->leaf_a];
    if (n->kind == PQT_NODE_PRIMITIVE) {
      const pqt_schema_elem *e = &pqt_meta(f)->schema[n->elem];
      if (lf->type != PQT_FIXED_LEN_BYTE_ARRAY || lf->type_length <= 0 || lf->max_rep != 0)
        return bad_type(f, s, want, err);
      v->flba = true;
      v->el = e->logical == PQT_LT_FLOAT16 ? EL_F16 : EL_F32;
      if (e->logical != PQT_LT_NONE && e->logical != PQT_LT_FLOAT16)
        return bad_type(f, s, want, err);
      if ((size_t)lf->type_length % el_width(v->el) != 0) return bad_type(f, s, want, err);
      return VF_OK;
    }
    if (!simple_list(sc, v->top, &v->d_list, &v->d_rep) || lf->max_rep != 1 ||
        !float_leaf(f, v->leaf_a, &v->el))
      return bad_type(f, s, want, err);
    return VF_OK;
  }
  if (s->kind == CORPUS_VEC_MULTI) {
    const char *want = "multivector (list<list<float|double|float16>>)";
    if (n->kind != PQT_NODE_LIST || n->nleaves != 1 || n->element < 0 || n->repeated < 0)
      return bad_type(f, s, want, err);
    const pqt_node *in = &sc->nodes[n->element];
    if (in->kind != PQT_NODE_LIST || in->repeated < 0 || in->element < 0)
      return bad_type(f, s, want, err);
    v->leaf_a = n->first_leaf;
    const pqt_leaf *lf = &sc->leaves[v->leaf_a];
    if (sc->nodes[in->element].leaf != v->leaf_a || lf->max_rep != 2 ||
        sc->nodes[n->repeated].rep_level != 1 || sc->nodes[in->repeated].rep_level != 2 ||
        !float_leaf(f, v->leaf_a, &v->el))
      return bad_type(f, s, want, err);
    v->d_list = n->def_level;
    v->d_rep = sc->nodes[n->repeated].def_level;
    v->d_inner = in->def_level;
    v->d_inner_rep = sc->nodes[in->repeated].def_level;
    return VF_OK;
  }
  if (s->kind == CORPUS_VEC_SPARSE) {
    const char *want = "sparse vector (struct{indices: list<int32|uint32|int64>, values: "
                       "list<float|double>})";
    if (n->kind != PQT_NODE_STRUCT) return bad_type(f, s, want, err);
    int ni = -1, nv = -1;
    for (int c = 0; c < n->nchildren; c++) {
      const char *nm = sc->nodes[n->children[c]].name;
      if (nm && strcmp(nm, "indices") == 0)
        ni = n->children[c];
      else if (nm && strcmp(nm, "values") == 0)
        nv = n->children[c];
    }
    if (ni < 0 || nv < 0 || !simple_list(sc, ni, &v->d_list, &v->d_rep) ||
        !simple_list(sc, nv, &v->d_list_b, &v->d_rep_b))
      return bad_type(f, s, want, err);
    v->leaf_a = sc->nodes[ni].first_leaf;
    v->leaf_b = sc->nodes[nv].first_leaf;
    const pqt_leaf *li = &sc->leaves[v->leaf_a];
    const pqt_schema_elem *ei = &pqt_meta(f)->schema[sc->nodes[li->node].elem];
    if ((li->type != PQT_INT32 && li->type != PQT_INT64) || li->max_rep != 1 ||
        sc->leaves[v->leaf_b].max_rep != 1 || !float_leaf(f, v->leaf_b, &v->el))
      return bad_type(f, s, want, err);
    v->idx_unsigned = (ei->logical == PQT_LT_INTEGER && !ei->lt_signed) ||
                      (ei->converted_type >= PQT_CT_UINT_8 && ei->converted_type <= PQT_CT_UINT_64);
    return VF_OK;
  }
  return vf_error_set(err, VF_ECONFIG, "vector '%s': unknown vector kind %d", s->name,
                      (int)s->kind);
}

static vf_status pay_resolve(const pqt_file *f, const corpus_payload_source *s,
                             bool binary_as_string, rec_pay *p, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  memset(p, 0, sizeof *p);
  p->src = s;
  p->str_leaf = -1;
  p->top = pqt_find_top(f, s->column);
  if (p->top < 0) return corpus_missing_column(f, s->column, err);
  const pqt_node *n = &sc->nodes[p->top];
  if (n->kind == PQT_NODE_PRIMITIVE && n->leaf >= 0 && sc->leaves[n->leaf].type == PQT_BYTE_ARRAY) {
    const pqt_schema_elem *e = &pqt_meta(f)->schema[n->elem];
    if (e->logical == PQT_LT_STRING || e->logical == PQT_LT_JSON ||
        e->converted_type == PQT_CT_UTF8 || e->converted_type == PQT_CT_JSON)
      p->str_leaf = n->leaf;
  }
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_TEXT); /* a quoted column name or key and ':' */
  vf_status st = VF_OK;
  VF_TRY(vf_json_string(&b, s->column, strlen(s->column), err));
  VF_TRY(vf_buf_append(&b, ":", 1, err));
  p->prefix_len = b.len;
  p->prefix = (char *)vf_buf_take(&b, &p->prefix_len);
  VF_TRY(vf_json_string(&b, s->key, strlen(s->key), err));
  VF_TRY(vf_buf_append(&b, ":", 1, err));
  p->key = (char *)vf_buf_take(&b, &p->key_len);
  VF_TRY(pqt_rows_create(f, &p->top, 1, &p->rows, err));
  pqt_rows_set_binary_as_string(p->rows, binary_as_string);
out:
  vf_buf_free(&b);
  return st;
}

static void pay_free(rec_pay *p) {
  pqt_rows_free(p->rows);
  free(p->prefix);
  free(p->key);
  free(p->vidx);
  memset(p, 0, sizeof *p);
}

static vf_status add_leaf(corpus_records *r, int leaf, int *slot, vf_error *err) {
  if (r->leaf_slot[leaf] < 0) {
    int *p = vf_realloc(r->leaf_ids, sizeof(int) * (size_t)(r->nleaves + 1));
    if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
    r->leaf_ids = p;
    r->leaf_ids[r->nleaves] = leaf;
    r->leaf_slot[leaf] = r->nleaves++;
  }
  if (slot) *slot = r->leaf_slot[leaf];
  return VF_OK;
}

/* ------------------------------------------------------------------- open */

static vf_status records_open(const corpus_file *file, const corpus_record_spec *spec,
                              uint64_t global_row_base, const pqt_open_opts *opts,
                              corpus_records **out, vf_error *err);
static const corpus_records_source pq_records_source;

/* rec_vec.leaf_owned: a dense float32 list vector whose leaf slot nothing else decodes from
 * (another vector of the same column, a payload field or an id column keeps reading it after
 * fill_vector, so its values must stay where they are). */
static vf_status mark_owned_leaves(corpus_records *r, vf_error *err) {
  int *uses = vf_calloc((size_t)r->nleaves + 1, sizeof *uses);
  if (!uses) return vf_error_set(err, VF_ENOMEM, "out of memory");
  const pqt_schema *sc = pqt_schema_of(r->f);
  for (int i = 0; i < r->spec.nvectors; i++) {
    uses[r->vecs[i].data_a]++;
    if (r->vecs[i].leaf_b >= 0) uses[r->vecs[i].data_b]++;
  }
  for (int i = 0; i < r->spec.npayload; i++) {
    const pqt_node *n = &sc->nodes[r->pays[i].top];
    for (int l = n->first_leaf; l < n->first_leaf + n->nleaves; l++)
      uses[r->leaf_slot[l]]++;
  }
  for (int i = 0; i < r->ids.ncols; i++)
    uses[r->leaf_slot[r->ids.cols[i].leaf]]++;
  for (int i = 0; i < r->spec.nvectors; i++) {
    rec_vec *v = &r->vecs[i];
    v->leaf_owned = v->src->kind == CORPUS_VEC_DENSE && v->el == EL_F32 && !v->flba &&
                    uses[v->data_a] == 1;
  }
  free(uses);
  return VF_OK;
}

/*! corpus_records_open() : see corpus.h.  `file` and `spec` (and everything they point to) are
 *  borrowed and must outlive the reader; batches borrow file->key and the vector names. */
vf_status corpus_records_open(const corpus_file *file, const corpus_record_spec *spec,
                              uint64_t global_row_base, corpus_records **out, vf_error *err) {
  return records_open(file, spec, global_row_base, NULL, out, err);
}

/* corpus_records_open() with the parquet open options (NULL: defaults) */
static vf_status records_open(const corpus_file *file, const corpus_record_spec *spec,
                              uint64_t global_row_base, const pqt_open_opts *opts,
                              corpus_records **out, vf_error *err) {
  *out = NULL;
  if (spec->nvectors < 0 || spec->npayload < 0 || (spec->nvectors && !spec->vectors) ||
      (spec->npayload && !spec->payload))
    return vf_error_set(err, VF_EUSAGE, "record spec: bad vector/payload counts");
  corpus_records *r = vf_calloc(1, sizeof *r);
  if (!r) return vf_error_set(err, VF_ENOMEM, "out of memory");
  r->file = file;
  r->spec = *spec;
  r->global_row_base = global_row_base;
  r->first_bad = -1;
  VF_BUF_INIT(&r->tmp, VF_BUF_MAX_RECORD); /* one payload member of one row (render_payload) */
  r->src = file->dataset ? &ds_records_source : &pq_records_source;
  vf_status st = r->src->open(r, opts, &r->impl, err);
  if (st != VF_OK) {
    corpus_records_close(r);
    return st;
  }
  *out = r;
  return VF_OK;
}

/* the parquet source: open (the reader's file, leaves, vectors, payload and id columns) */
static vf_status pq_open(corpus_records *r, const pqt_open_opts *opts, void **impl,
                         vf_error *err) {
  const corpus_file *file = r->file;
  const corpus_record_spec *spec = &r->spec;
  *impl = r;
  vf_status st = corpus_open_parquet(file, opts, &r->f, err);
  if (st != VF_OK) return st;
  const pqt_file_meta *m = pqt_meta(r->f);
  const pqt_schema *sc = pqt_schema_of(r->f);
  r->rg_first = vf_calloc((size_t)m->nrow_groups + 1, sizeof *r->rg_first);
  r->leaf_slot = vf_mallocarray((size_t)sc->nleaves + 1, sizeof(int));
  r->vecs = vf_calloc((size_t)spec->nvectors + 1, sizeof *r->vecs);
  r->pays = vf_calloc((size_t)spec->npayload + 1, sizeof *r->pays);
  if (!r->rg_first || !r->leaf_slot || !r->vecs || !r->pays)
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (int g = 0; g < m->nrow_groups; g++) {
    if (m->row_groups[g].num_rows < 0)
      return vf_error_set(err, VF_ECORRUPT, "%s: row group %d has %" PRId64 " rows",
                          pqt_name(r->f), g, m->row_groups[g].num_rows);
    r->rg_first[g + 1] = r->rg_first[g] + (uint64_t)m->row_groups[g].num_rows;
  }
  for (int l = 0; l < sc->nleaves; l++)
    r->leaf_slot[l] = -1;
  for (int i = 0; i < spec->nvectors; i++) {
    rec_vec *v = &r->vecs[i];
    if ((st = vec_resolve(r->f, &spec->vectors[i], v, err)) != VF_OK) return st;
    if ((st = add_leaf(r, v->leaf_a, &v->data_a, err)) != VF_OK) return st;
    if (v->leaf_b >= 0 && (st = add_leaf(r, v->leaf_b, &v->data_b, err)) != VF_OK) return st;
  }
  for (int i = 0; i < spec->npayload; i++) {
    rec_pay *p = &r->pays[i];
    if ((st = pay_resolve(r->f, &spec->payload[i], spec->binary_as_string, p, err)) != VF_OK) return st;
    const pqt_node *n = &sc->nodes[p->top];
    for (int l = n->first_leaf; l < n->first_leaf + n->nleaves; l++)
      if ((st = add_leaf(r, l, NULL, err)) != VF_OK) return st;
    if (p->str_leaf >= 0) p->str_data = r->leaf_slot[p->str_leaf];
  }
  if (spec->id) {
    if ((st = corpus_idcols_resolve(r->f, spec->id, &r->ids, err)) != VF_OK) return st;
    for (int i = 0; i < r->ids.ncols; i++)
      if ((st = add_leaf(r, r->ids.cols[i].leaf, NULL, err)) != VF_OK) return st;
  }
  r->data = vf_calloc((size_t)r->nleaves + 1, sizeof *r->data);
  if (!r->data) return vf_error_set(err, VF_ENOMEM, "out of memory");
  if ((st = mark_owned_leaves(r, err)) != VF_OK) return st;
  for (int i = 0; i < r->nleaves; i++)
    pqt_leaf_data_init(&r->data[i]);
  return VF_OK; /* on failure the caller's corpus_records_close() frees what was made */
}

static int pq_row_groups(const void *impl) {
  const corpus_records *r = impl;
  return pqt_meta(r->f)->nrow_groups;
}

static uint64_t pq_rows(const void *impl) {
  const corpus_records *r = impl;
  return r->rg_first[pqt_meta(r->f)->nrow_groups];
}

static uint64_t pq_row_group_first(const void *impl, int rg) {
  const corpus_records *r = impl;
  int n = pqt_meta(r->f)->nrow_groups;
  if (rg < 0) return 0;
  return r->rg_first[rg > n ? n : rg];
}

static uint64_t pq_bytes_read(const void *impl) {
  const corpus_records *r = impl;
  return pqt_source(r->f)->bytes_read;
}

/*! corpus_records_row_groups() : row groups in the file. */
int corpus_records_row_groups(const corpus_records *r) {
  return r->src->row_groups(r->impl);
}

/*! corpus_records_rows() : rows in the file (sum of its row groups). */
uint64_t corpus_records_rows(const corpus_records *r) {
  return r->src->rows(r->impl);
}

/*! corpus_records_row_group_first() : physical row of row group rg's first row (rg may be the
 *  row group count: then the file's row count). */
uint64_t corpus_records_row_group_first(const corpus_records *r, int rg) {
  return r->src->row_group_first(r->impl, rg);
}

/*! corpus_records_bytes_read() : bytes fetched from the file so far (footer included). */
uint64_t corpus_records_bytes_read(const corpus_records *r) {
  return r->src->bytes_read(r->impl);
}

/* corpus_records_file() / corpus_records_spec() / corpus_records_row_base(): see internal.h. */
const corpus_file *corpus_records_file(const corpus_records *r) {
  return r->file;
}
const corpus_record_spec *corpus_records_spec(const corpus_records *r) {
  return &r->spec;
}
uint64_t corpus_records_row_base(const corpus_records *r) {
  return r->global_row_base;
}

/* The first dense vector whose decoded values may be handed over (NULL when none). */
static vf_buf *owned_values(corpus_records *r) {
  for (int i = 0; r && r->src == &pq_records_source && r->vecs && i < r->spec.nvectors; i++)
    if (r->vecs[i].leaf_owned) return &r->data[r->vecs[i].data_a].values;
  return NULL;
}

/*! corpus_records_keep_buffer() : see corpus.h. */
void corpus_records_keep_buffer(corpus_records *r, vf_buf *spare) {
  vf_buf *lv = owned_values(r);
  if (!lv || !lv->data) return;
  free(spare->data);
  spare->data = lv->data;
  spare->cap = lv->cap;
  spare->len = 0;
  lv->data = NULL;
  lv->cap = lv->len = 0;
}

/*! corpus_records_use_buffer() : see corpus.h. */
void corpus_records_use_buffer(corpus_records *r, vf_buf *spare) {
  vf_buf *lv = owned_values(r);
  if (!lv || lv->data || !spare->data) return;
  lv->data = spare->data;
  lv->cap = spare->cap;
  lv->len = 0;
  spare->data = NULL;
  spare->cap = spare->len = 0;
}

/*! corpus_records_close() : free the reader (NULL ok).  Batches it filled stay valid. */
void corpus_records_close(corpus_records *r) {
  if (!r) return;
  if (r->src) r->src->close(r->impl);
  vf_buf_free(&r->tmp);
  free(r);
}

/* the parquet source: close (everything pq_open made, also after a partial open) */
static void pq_close(void *impl) {
  corpus_records *r = impl;
  if (!r) return;
  for (int i = 0; r->vecs && i < r->spec.nvectors; i++) {
    free(r->vecs[i].conv);
    pqt_dense_free(&r->vecs[i].dense);
    walk_rows_free(&r->vecs[i].wa);
    walk_rows_free(&r->vecs[i].wb);
  }
  for (int i = 0; r->pays && i < r->spec.npayload; i++)
    pay_free(&r->pays[i]);
  for (int i = 0; r->data && i < r->nleaves; i++)
    pqt_leaf_data_free(&r->data[i]);
  corpus_idcols_free(&r->ids);
  pqt_close(r->f);
  free(r->rg_first);
  free(r->vecs);
  free(r->pays);
  free(r->leaf_ids);
  free(r->leaf_slot);
  free(r->data);
  free(r->bad);
}

/* ------------------------------------------------------------------- read */

/* Per-row value index of a flat string column (or NULL when it has no nulls). */
static vf_status pay_bind(corpus_records *r, rec_pay *p, vf_error *err) {
  if (p->str_leaf < 0) return VF_OK;
  const pqt_leaf_data *d = &r->data[p->str_data];
  if (d->nvalues > 0 && !d->offsets)
    return vf_error_set(err, VF_EUSAGE, "%s: column %s not decoded", pqt_name(r->f),
                        p->src->column);
  if (!d->def) {
    if (d->nvalues < d->nlevels)
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: column %s: %" PRId64 " values for %" PRId64 " rows", pqt_name(r->f),
                          p->src->column, d->nvalues, d->nlevels);
    free(p->vidx);
    p->vidx = NULL;
    p->vidx_cap = 0;
    return VF_OK;
  }
  vf_status st =
      grow((void **)&p->vidx, &p->vidx_cap, (size_t)d->nlevels + 1, sizeof(int64_t), err);
  if (st != VF_OK) return st;
  int16_t maxd = pqt_schema_of(r->f)->leaves[p->str_leaf].max_def;
  int64_t v = 0;
  for (int64_t i = 0; i < d->nlevels; i++)
    p->vidx[i] = d->def[i] == maxd ? v++ : -1;
  if (v > d->nvalues)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: column %s: %" PRId64 " defined rows, %" PRId64 " values",
                        pqt_name(r->f), p->src->column, v, d->nvalues);
  return VF_OK;
}

/* Append row `row`'s payload object to out->payload. */
static vf_status render_payload(corpus_records *r, int64_t row, vf_buf *out, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_buf_append(out, "{", 1, err));
  bool first = true;
  for (int i = 0; i < r->spec.npayload; i++) {
    rec_pay *p = &r->pays[i];
    vf_buf_reset(&r->tmp);
    VF_TRY(pqt_rows_next(p->rows, &r->tmp, err));
    if (r->tmp.len < p->prefix_len || memcmp(r->tmp.data, p->prefix, p->prefix_len) != 0)
      return vf_error_set(err, VF_EINTERNAL, "%s: column %s rendered without its name",
                          pqt_name(r->f), p->src->column);
    const char *val = (const char *)r->tmp.data + p->prefix_len;
    size_t vlen = r->tmp.len - p->prefix_len;
    if (vlen == 4 && memcmp(val, "null", 4) == 0) {
      if (!r->spec.payload_null_json) continue;
      val = r->spec.payload_null_json;
      vlen = strlen(val);
    }
    if (p->str_leaf >= 0) {
      const pqt_leaf_data *d = &r->data[p->str_data];
      int64_t vi = p->vidx ? p->vidx[row] : row;
      if (vi >= 0 && vi < d->nvalues) {
        const char *s = (const char *)d->values.data + d->offsets[vi];
        size_t n = (size_t)(d->offsets[vi + 1] - d->offsets[vi]);
        if (vf_json_is_object(s, n)) {
          val = s;
          vlen = n;
        }
      }
    }
    if (!first) VF_TRY(vf_buf_append(out, ",", 1, err));
    VF_TRY(vf_buf_append(out, p->key, p->key_len, err));
    VF_TRY(vf_buf_append(out, val, vlen, err));
    first = false;
  }
  VF_TRY(vf_buf_append(out, "}", 1, err));
out:
  return st;
}

/* corpus_batch_vectors_free(): see internal.h. */
void corpus_batch_vectors_free(corpus_batch *b) {
  for (int i = 0; b->vectors && i < b->nvectors; i++) {
    corpus_vec_batch *v = &b->vectors[i];
    free(v->dense);
    free(v->offsets);
    free(v->indices);
    free(v->values);
    free(v->multi);
    free(v->null_rows);
  }
  free(b->vectors);
  b->vectors = NULL;
  b->nvectors = 0;
}

/* Make the batch's vector array match the spec (freeing buffers of a different layout). */
static vf_status batch_vectors(corpus_batch *b, int nvectors, vf_error *err) {
  if (b->vectors && b->nvectors == nvectors) return VF_OK;
  corpus_batch_vectors_free(b);
  b->vectors = vf_calloc((size_t)nvectors + 1, sizeof *b->vectors);
  if (!b->vectors) return vf_error_set(err, VF_ENOMEM, "out of memory");
  b->nvectors = nvectors;
  return VF_OK;
}

/* The good rows' vectors of rec_vec v into the batch's vector slot.  Dense float32 rows that
 * are all good and all wanted are handed over, not copied: the leaf's decoded values buffer
 * becomes the batch's `dense` and the batch's previous buffer goes back to the leaf for the
 * decoder to fill next time (so a pipeline of reused batches cycles a fixed set of buffers). */
static vf_status fill_vector(corpus_records *r, const rec_vec *v, int64_t rows, int64_t start,
                             size_t m, corpus_vec_batch *o, vf_error *err) {
  const corpus_vec_source *s = v->src;
  o->name = s->name;
  o->kind = s->kind;
  o->distance = s->distance;
  o->dim = s->kind == CORPUS_VEC_SPARSE ? 0 : v->dim;
  free(o->null_rows);
  o->null_rows = NULL;
  vf_status st;
  size_t k = 0;
  if (s->kind == CORPUS_VEC_DENSE) {
    size_t dim = (size_t)(v->dim > 0 ? v->dim : 0);
    if (m && dim > SIZE_MAX / sizeof(float) / m)
      return vf_error_set(err, VF_ENOMEM, "batch of %zu x %zu floats too large", m, dim);
    if (v->vals_leaf && v->leaf_owned && start == 0 && m == (size_t)rows && m > 0) {
      vf_buf *lv = &r->data[v->data_a].values;
      uint8_t *old = (uint8_t *)o->dense;
      o->dense = (float *)(void *)lv->data;
      lv->data = old;
      lv->cap = block_bytes(old);
      lv->len = 0;
      return VF_OK;
    }
    if (block_bytes(o->dense) < m * dim * sizeof(float) &&
        (st = resize((void **)&o->dense, m * dim, sizeof(float), err)) != VF_OK)
      return st;
    for (int64_t row = start; row < rows; row++) {
      if (r->bad[row]) continue;
      const float *x = v->vals_matrix ? v->vals + (size_t)row * dim : v->vals + v->wa.start[row];
      memcpy(o->dense + k * dim, x, dim * sizeof(float));
      k++;
    }
    return VF_OK;
  }
  if ((st = resize((void **)&o->offsets, m + 1, sizeof(int64_t), err)) != VF_OK) return st;
  const walk_rows *w = &v->wa;
  int64_t total = 0;
  o->offsets[0] = 0;
  for (int64_t row = start; row < rows; row++) {
    if (r->bad[row]) continue;
    total += w->count[row];
    o->offsets[++k] = total;
  }
  if (s->kind == CORPUS_VEC_MULTI) {
    size_t dim = (size_t)v->dim;
    if (total > 0 && dim > SIZE_MAX / sizeof(float) / (size_t)total)
      return vf_error_set(err, VF_ENOMEM, "multivector batch too large");
    if ((st = resize((void **)&o->multi, (size_t)total * dim, sizeof(float), err)) != VF_OK)
      return st;
    for (int64_t row = start, j = 0; row < rows; row++) {
      if (r->bad[row]) continue;
      size_t n = (size_t)w->count[row] * dim;
      memcpy(o->multi + (size_t)o->offsets[j] * dim, v->vals + w->start[row], n * sizeof(float));
      j++;
    }
    return VF_OK;
  }
  /* sparse */
  if ((st = resize((void **)&o->indices, (size_t)total, sizeof(uint32_t), err)) != VF_OK ||
      (st = resize((void **)&o->values, (size_t)total, sizeof(float), err)) != VF_OK)
    return st;
  const pqt_leaf_data *di = &r->data[v->data_a];
  size_t kk = 0;
  for (int64_t row = start; row < rows; row++) {
    if (r->bad[row]) continue;
    int64_t a = v->wa.start[row], bstart = v->wb.start[row], n = w->count[row];
    for (int64_t e = 0; e < n; e++) {
      if (di->type == PQT_INT32) {
        uint32_t x;
        memcpy(&x, di->values.data + 4 * (a + e), 4);
        o->indices[kk + (size_t)e] = x;
      } else {
        uint64_t x;
        memcpy(&x, di->values.data + 8 * (a + e), 8);
        o->indices[kk + (size_t)e] = (uint32_t)x;
      }
    }
    memcpy(o->values + kk, v->vals + bstart, (size_t)n * sizeof(float));
    kk += (size_t)n;
  }
  return VF_OK;
}

/*! corpus_records_read() : see corpus.h.  `out` must be zeroed ({0}) before its first use and
 *  released with corpus_batch_free(); its buffers are resized in place on every call.
 *  Ids are evaluated for the returned rows only; a bad row's error (skip_bad_rows false) names
 *  the file, the physical row, the vector and its column. */
vf_status corpus_records_read(corpus_records *r, int rg, uint64_t from_row, corpus_batch *out,
                              uint64_t *skipped, vf_error *err) {
  return r->src->read(r->impl, rg, from_row, out, skipped, err);
}

/* the parquet source: read (corpus_records_read) */
static vf_status pq_read(void *impl, int rg, uint64_t from_row, corpus_batch *out,
                         uint64_t *skipped, vf_error *err) {
  corpus_records *r = impl;
  if (skipped) *skipped = 0;
  const pqt_file_meta *m = pqt_meta(r->f);
  if (rg < 0 || rg >= m->nrow_groups)
    return vf_error_set(err, VF_EUSAGE, "%s: no row group %d (the file has %d)", pqt_name(r->f), rg,
                        m->nrow_groups);
  uint64_t first = r->rg_first[rg], end = r->rg_first[rg + 1];
  if (from_row < first || from_row > end)
    return vf_error_set(err, VF_EUSAGE,
                        "%s: row %" PRIu64 " is not in row group %d (rows %" PRIu64 "..%" PRIu64
                        ")",
                        pqt_name(r->f), from_row, rg, first, end);
  int64_t rows = (int64_t)(end - first), start = (int64_t)(from_row - first);
  int64_t rg_first = (int64_t)first;
  vf_status st = batch_vectors(out, r->spec.nvectors, err);
  if (st != VF_OK) return st;
  out->n = 0;
  out->file_key = r->file->key;
  vf_buf_reset(&out->payload);
  if (start < rows) {
    st = pqt_read_leaves(r->f, rg, r->leaf_ids, r->nleaves, r->data, err);
    if (st != VF_OK) return st;
  }
  if ((st = grow((void **)&r->bad, &r->bad_cap, (size_t)rows + 1, 1, err)) != VF_OK) return st;
  memset(r->bad, 0, (size_t)rows + 1);
  r->first_bad = -1;
  vf_error_clear(&r->bad_err);
  for (int i = 0; start < rows && i < r->spec.nvectors; i++) {
    rec_vec *v = &r->vecs[i];
    switch (v->src->kind) {
    case CORPUS_VEC_DENSE: st = read_dense(r, v, rows, start, rg_first, err); break;
    case CORPUS_VEC_SPARSE: st = read_sparse(r, v, rows, start, rg_first, err); break;
    default: st = read_multi(r, v, rows, start, rg_first, err); break;
    }
    if (st != VF_OK) return st;
  }
  if (r->first_bad >= 0 && !r->spec.skip_bad_rows) {
    if (err) *err = r->bad_err;
    return VF_ECORRUPT;
  }
  size_t nbad = 0;
  for (int64_t row = start; row < rows; row++)
    nbad += r->bad[row];
  size_t n = (size_t)(rows - start) - nbad;
  if ((st = resize((void **)&out->ids, n, sizeof(corpus_id), err)) != VF_OK ||
      (st = resize((void **)&out->file_rows, n, sizeof(uint64_t), err)) != VF_OK ||
      (st = resize((void **)&out->payload_offsets, n + 1, sizeof(int64_t), err)) != VF_OK)
    return st;
  for (int i = 0; i < r->spec.nvectors; i++)
    if ((st = fill_vector(r, &r->vecs[i], rows, start, n, &out->vectors[i], err)) != VF_OK)
      return st;
  /* ids and payload, row by row */
  if (start < rows && r->ids.ncols &&
      (st = corpus_idcols_bind(&r->ids, r->data, r->leaf_ids, r->nleaves, err)) != VF_OK)
    return st;
  int npay = r->spec.payload_raw ? 0 : r->spec.npayload; /* raw: corpus_records_payload_view() */
  for (int i = 0; start < rows && i < npay; i++) {
    rec_pay *p = &r->pays[i];
    if ((st = pqt_rows_bind(p->rows, r->data, r->leaf_ids, r->nleaves, rows, err)) != VF_OK)
      return st;
    pqt_rows_set_first_row(p->rows, rg_first);
    if ((st = pqt_rows_skip(p->rows, start, err)) != VF_OK || (st = pay_bind(r, p, err)) != VF_OK)
      return st;
  }
  const char *key = r->file->key;
  size_t key_len = strlen(key);
  size_t k = 0;
  out->payload_offsets[0] = 0;
  for (int64_t row = start; row < rows; row++) {
    if (r->bad[row]) {
      for (int i = 0; i < npay; i++)
        if ((st = pqt_rows_skip(r->pays[i].rows, 1, err)) != VF_OK) return st;
      continue;
    }
    uint64_t file_row = first + (uint64_t)row;
    if (r->spec.id) {
      r->ids.row = row;
      corpus_row_ctx rc = {.file_key = key,
                           .file_key_len = key_len,
                           .file_row = file_row,
                           .global_row = r->global_row_base + file_row,
                           .get_column = corpus_idcols_get,
                           .user = &r->ids};
      if ((st = corpus_idexpr_eval(r->spec.id, &rc, &out->ids[k], err)) != VF_OK)
        return vf_error_prefix(err, "%s: row %" PRIu64 ": ", pqt_name(r->f), file_row);
    } else {
      memset(&out->ids[k], 0, sizeof out->ids[k]);
      out->ids[k].is_uuid = true;
      corpus_point_id(key, key_len, file_row, out->ids[k].uuid);
    }
    out->file_rows[k] = file_row;
    if (!r->spec.payload_raw && (st = render_payload(r, row, &out->payload, err)) != VF_OK)
      return st;
    out->payload_offsets[++k] = (int64_t)out->payload.len;
  }
  out->n = k;
  if (skipped) *skipped = nbad;
  return VF_OK;
}

/* corpus_records_payload_view(): see internal.h. */
bool corpus_records_payload_view(const corpus_records *r, corpus_payload_view *out) {
  memset(out, 0, sizeof *out);
  return r->src->payload(r->impl, out);
}

/* the parquet source: the payload view is this reader's own decoded leaves */
static bool pq_payload(const void *impl, corpus_payload_view *out) {
  const corpus_records *r = impl;
  out->f = r->f;
  out->data = r->data;
  out->leaf_ids = r->leaf_ids;
  out->nleaves = r->nleaves;
  out->payload = r->spec.payload;
  out->npayload = r->spec.npayload;
  return true;
}

static const corpus_records_source pq_records_source = {
    .open = pq_open,
    .row_groups = pq_row_groups,
    .rows = pq_rows,
    .row_group_first = pq_row_group_first,
    .read = pq_read,
    .bytes_read = pq_bytes_read,
    .payload = pq_payload,
    .close = pq_close,
};

/*! corpus_batch_slice() : see corpus.h.  vec_storage must hold b->nvectors entries and outlive
 *  the view; [off, off+n) is clamped to b's rows. */
void corpus_batch_slice(const corpus_batch *b, size_t off, size_t n, corpus_vec_batch *vec_storage,
                        corpus_batch *view) {
  if (off > b->n) off = b->n;
  if (n > b->n - off) n = b->n - off;
  *view = *b;
  view->n = n;
  view->ids = b->ids ? b->ids + off : NULL;
  view->file_rows = b->file_rows ? b->file_rows + off : NULL;
  view->payload_offsets = b->payload_offsets ? b->payload_offsets + off : NULL;
  view->vectors = vec_storage;
  for (int i = 0; i < b->nvectors; i++) {
    corpus_vec_batch v = b->vectors[i];
    if (v.kind == CORPUS_VEC_DENSE) {
      if (v.dense) v.dense += off * (size_t)(v.dim > 0 ? v.dim : 0);
    } else if (v.offsets) {
      v.offsets += off; /* offsets stay absolute into indices/values/multi */
    }
    if (v.null_rows) v.null_rows += off;
    vec_storage[i] = v;
  }
}

/*! corpus_batch_free() : free a batch filled by corpus_records_read (not a view); it is left
 *  zeroed and reusable. */
void corpus_batch_free(corpus_batch *b) {
  if (!b) return;
  corpus_batch_vectors_free(b);
  free(b->ids);
  free(b->file_rows);
  free(b->payload_offsets);
  vf_buf_free(&b->payload);
  memset(b, 0, sizeof *b);
}

enum { PROBE_SLICE = 1 << 20 };

/* corpus_records_probe_dim(): see corpus.h. */
vf_status corpus_records_probe_dim(const corpus_file *file, const corpus_vec_source *src,
                                   int32_t *dim, vf_error *err) {
  corpus_record_spec spec = {0};
  spec.vectors = src;
  spec.nvectors = 1;
  spec.skip_bad_rows = true;
  corpus_records *r = NULL;
  /* parquet row groups read as slices of about PROBE_SLICE bytes: the first slice with a valid
   * row answers (the dimension is inferred from the first non-null row the reader decodes,
   * which a whole row group and its first slices share), not a decode of a whole row group */
  pqt_open_opts po = {.verify_crc = pqt_verify_crc_default(), .slice_bytes = PROBE_SLICE};
  corpus_batch b = {0};
  *dim = 0;
  vf_status st = VF_OK;
  VF_TRY(records_open(file, &spec, 0, &po, &r, err));
  int nrg = corpus_records_row_groups(r);
  for (int rg = 0; rg < nrg && *dim == 0; rg++) {
    VF_TRY(corpus_records_read(r, rg, corpus_records_row_group_first(r, rg), &b, NULL, err));
    if (b.nvectors == 1 && b.n > 0) *dim = b.vectors[0].dim;
  }
  if (*dim <= 0)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: vector '%s' has no valid row to take its dimension from",
                         file->uri, src->name));
out:
  corpus_batch_free(&b);
  corpus_records_close(r);
  return st;
}
