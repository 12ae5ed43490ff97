/*
 * Dense vectors from one decoded leaf (DESIGN.md "Vectors in parquet").
 *
 * Shapes: a LIST (any spelling the schema builder recognises; node->element is the value
 * node) of FLOAT, DOUBLE or FLOAT16 (FIXED_LEN_BYTE_ARRAY(2) annotated FLOAT16); or a top-level
 * FIXED_LEN_BYTE_ARRAY of 4*dim bytes (float32 little-endian) or 2*dim bytes annotated FLOAT16.
 *
 * Rows come from the repetition levels (rep == 0 starts a row; parquet-format "Nested
 * Encoding").  Writers store fixed-size vectors as plain LISTs, so the dimension is inferred
 * from the first non-null row and every other row is checked against it.  The common case
 * (no nulls, every row the same length) is recognised with one tight pass over the repetition
 * levels and then the values are copied in one memcpy; anything else takes the general walk,
 * which names the row of any dimension mismatch, empty vector or null element.
 */
#include <inttypes.h>
#include <stdlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "format/pqt_internal.h"

typedef enum { VEC_F32, VEC_F64, VEC_F16 } vec_kind;

static vf_status ensure_data(pqt_dense *out, int64_t rows, int32_t dim, vf_error *err) {
  uint64_t n = (uint64_t)rows * (uint64_t)dim;
  if (rows > 0 && dim > 0 && n / (uint64_t)dim != (uint64_t)rows)
    return vf_error_set(err, VF_ENOMEM, "vector matrix of %" PRId64 " x %d overflows", rows, dim);
  uint64_t budget = vf_memory_budget();
  if (budget && n * sizeof(float) > budget)
    return vf_error_set(err, VF_ENOMEM,
                        "vector matrix of %" PRId64 " x %d floats is over the memory budget", rows,
                        dim);
  if (n > out->cap || !out->data) {
    if (n > SIZE_MAX / sizeof(float))
      return vf_error_set(err, VF_ENOMEM, "vector matrix too large");
    float *p = realloc(out->data, n ? (size_t)n * sizeof(float) : sizeof(float));
    if (!p)
      return vf_error_set(err, VF_ENOMEM, "out of memory for %" PRId64 " x %d floats", rows, dim);
    out->data = p;
    out->cap = (size_t)n;
  }
  out->rows = rows;
  out->dim = dim;
  return VF_OK;
}

static vf_status mark_null(pqt_dense *out, int64_t row, vf_error *err) {
  if (!out->null_rows) {
    uint8_t *p = vf_calloc(out->rows > 0 ? (size_t)out->rows : 1, 1);
    if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
    out->null_rows = p;
    out->null_cap = (size_t)out->rows;
  }
  out->null_rows[row] = 1;
  return VF_OK;
}

static void convert(float *dst, const uint8_t *src, size_t n, vec_kind k) {
  if (k == VEC_F32) {
    memcpy(dst, src, n * sizeof(float));
  } else if (k == VEC_F64) {
    for (size_t i = 0; i < n; i++) {
      double v;
      memcpy(&v, src + 8 * i, 8);
      dst[i] = (float)v;
    }
  } else {
    for (size_t i = 0; i < n; i++)
      dst[i] = pqt_half_to_float((uint16_t)(src[2 * i] | (src[2 * i + 1] << 8)));
  }
}

/* non-zero unless every byte of p[0..n) is 1 (SSE2, baseline on x86-64: 32 bytes a step; else 8) */
static uint64_t not_all_ones(const uint8_t *p, size_t n) {
  const uint64_t ones = 0x0101010101010101ull;
  uint64_t acc = 0;
  size_t i = 0;
#if defined(__SSE2__)
  if (n >= 32) {
    const __m128i o = _mm_set1_epi8(1);
    __m128i a = _mm_setzero_si128(), b = _mm_setzero_si128();
    for (; i + 32 <= n; i += 32) {
      a = _mm_or_si128(
          a, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + i)), o));
      b = _mm_or_si128(
          b, _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + i + 16)), o));
    }
    acc = (uint64_t)(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_or_si128(a, b), _mm_setzero_si128())) ^
                     0xffff);
  }
#endif
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    acc |= w ^ ones;
  }
  for (; i < n; i++)
    acc |= (uint64_t)(p[i] ^ 1u);
  return acc;
}

static size_t kind_width(vec_kind k) {
  return k == VEC_F32 ? 4 : k == VEC_F64 ? 8 : 2;
}

static vf_status not_vector(const pqt_file *f, const pqt_node *n, const char *why, vf_error *err) {
  return vf_error_set(err, VF_ECORRUPT, "%s: column %s is not a dense vector column: %s",
                      pqt_name(f), n->name ? n->name : "?", why);
}

static vf_status dim_mismatch(const pqt_file *f, const pqt_node *n, int64_t row, int64_t first_row,
                              int64_t got, int32_t want, vf_error *err) {
  return vf_error_set(err, VF_ECORRUPT,
                      "%s: row %" PRId64 " (file row %" PRId64
                      "): vector column %s has dimension %" PRId64 ", expected %d",
                      pqt_name(f), row, first_row + row, n->name ? n->name : "?", got, want);
}

/* Top-level FIXED_LEN_BYTE_ARRAY vectors: one value per row. */
static vf_status dense_flba(const pqt_file *f, const pqt_node *n, const pqt_leaf *lf,
                            const pqt_leaf_data *d, int64_t first_row, int32_t *dim, pqt_dense *out,
                            vf_error *err) {
  const pqt_schema_elem *e = &pqt_meta(f)->schema[n->elem];
  vec_kind k = e->logical == PQT_LT_FLOAT16 ? VEC_F16 : VEC_F32;
  size_t kw = kind_width(k);
  if (lf->max_rep != 0 || lf->type_length <= 0 || (size_t)lf->type_length % kw != 0)
    return not_vector(f, n, "FIXED_LEN_BYTE_ARRAY length is not a multiple of the float size", err);
  int32_t vd = (int32_t)((size_t)lf->type_length / kw);
  if (*dim && *dim != vd) return dim_mismatch(f, n, 0, first_row, vd, *dim, err);
  if (d->width != lf->type_length || d->nvalues > d->nlevels ||
      pqt_leaf_values_len(d) < (uint64_t)d->nvalues * (uint64_t)lf->type_length)
    return vf_error_set(err, VF_EUSAGE, "%s: leaf data of %s does not match its schema",
                        pqt_name(f), lf->path);
  vf_status st = ensure_data(out, d->nlevels, vd, err);
  if (st != VF_OK) return st;
  *dim = vd;
  if (!d->def) {
    if (d->nvalues != d->nlevels)
      return vf_error_set(err, VF_EUSAGE, "%s: leaf data of %s does not match its schema",
                          pqt_name(f), lf->path);
    convert(out->data, pqt_leaf_values(d), (size_t)d->nlevels * (size_t)vd, k);
    return VF_OK;
  }
  int64_t v = 0;
  for (int64_t r = 0; r < d->nlevels; r++) {
    float *dst = out->data + (size_t)r * (size_t)vd;
    if (d->def[r] == lf->max_def) {
      if (v >= d->nvalues)
        return vf_error_set(err, VF_ECORRUPT, "%s: column %s: more levels than values", pqt_name(f),
                            lf->path);
      convert(dst, pqt_leaf_values(d) + (size_t)v * (size_t)lf->type_length, (size_t)vd, k);
      v++;
    } else {
      memset(dst, 0, (size_t)vd * sizeof(float));
      if ((st = mark_null(out, r, err)) != VF_OK) return st;
    }
  }
  return VF_OK;
}

/*! pqt_dense_from_leaf() : see format.h. */
vf_status pqt_dense_from_leaf(const pqt_file *f, int top, const pqt_leaf_data *leaf,
                              int64_t first_row, int32_t *dim, pqt_dense *out, vf_error *err) {
  const pqt_schema *s = pqt_schema_of(f);
  if (top < 0 || top >= s->nnodes)
    return vf_error_set(err, VF_EUSAGE, "%s: node %d does not exist", pqt_name(f), top);
  const pqt_node *n = &s->nodes[top];
  free(out->null_rows);
  out->null_rows = NULL;
  out->null_cap = 0;
  out->rows = 0;
  if (n->nleaves != 1 || leaf->leaf != n->first_leaf)
    return not_vector(
        f, n, n->nleaves != 1 ? "it has more than one leaf column" : "wrong leaf data", err);
  const pqt_leaf *lf = &s->leaves[n->first_leaf];
  if (*dim < 0) return vf_error_set(err, VF_EUSAGE, "negative expected dimension %d", *dim);
  if (n->leaf >= 0) {
    if (lf->type != PQT_FIXED_LEN_BYTE_ARRAY)
      return not_vector(f, n, "a flat column must be FIXED_LEN_BYTE_ARRAY of float32 (or float16)",
                        err);
    return dense_flba(f, n, lf, leaf, first_row, dim, out, err);
  }
  if (n->kind != PQT_NODE_LIST || n->element < 0 || n->repeated < 0)
    return not_vector(f, n, "not a LIST", err);
  const pqt_node *en = &s->nodes[n->element];
  const pqt_node *rn = &s->nodes[n->repeated];
  if (en->leaf < 0)
    return not_vector(f, n, "the list element is not a number (nested lists or structs)", err);
  const pqt_schema_elem *ee = &pqt_meta(f)->schema[en->elem];
  vec_kind k;
  if (lf->type == PQT_FLOAT)
    k = VEC_F32;
  else if (lf->type == PQT_DOUBLE)
    k = VEC_F64;
  else if (lf->type == PQT_FIXED_LEN_BYTE_ARRAY && lf->type_length == 2 &&
           ee->logical == PQT_LT_FLOAT16)
    k = VEC_F16;
  else
    return not_vector(f, n, "the list element is not FLOAT, DOUBLE or FLOAT16", err);
  if (lf->max_rep != rn->rep_level || lf->max_rep < 1)
    return not_vector(f, n, "the list is nested in another repeated field", err);
  size_t kw = kind_width(k);
  if ((size_t)leaf->width != kw || leaf->nvalues > leaf->nlevels ||
      pqt_leaf_values_len(leaf) < (uint64_t)leaf->nvalues * kw || (leaf->nlevels > 0 && !leaf->rep))
    return vf_error_set(err, VF_EUSAGE, "%s: leaf data of %s does not match its schema",
                        pqt_name(f), lf->path);
  const uint8_t *rep = leaf->rep;
  const uint8_t *def = leaf->def;
  int64_t nl = leaf->nlevels, rows = leaf->nrows;
  if (nl > 0 && rep[0] != 0)
    return vf_error_set(err, VF_ECORRUPT, "%s: column %s: first entry has repetition level %u",
                        pqt_name(f), lf->path, rep[0]);
  /* ---- fast path: no nulls, regular rows */
  if (!def && rows > 0 && nl % rows == 0) {
    int64_t d = nl / rows;
    if ((*dim == 0 || *dim == d) && d <= INT32_MAX && leaf->nvalues == nl) {
      uint64_t bad = 0;
      for (int64_t r = 0; r < rows && !bad; r++)
        bad = rep[r * d] | not_all_ones(rep + r * d + 1, (size_t)(d - 1));
      if (!bad && out->check_only) {
        out->rows = rows;
        out->dim = (int32_t)d;
        *dim = (int32_t)d;
        return VF_OK;
      }
      if (!bad) {
        vf_status st = ensure_data(out, rows, (int32_t)d, err);
        if (st != VF_OK) return st;
        convert(out->data, pqt_leaf_values(leaf), (size_t)nl, k);
        *dim = (int32_t)d;
        return VF_OK;
      }
    }
  }
  /* ---- general walk */
  int32_t want = *dim;
  int16_t list_def = n->def_level, rep_def = rn->def_level, max_def = lf->max_def;
  if (want == 0) { /* infer from the first non-null row */
    int64_t cnt = -1;
    for (int64_t i = 0; i < nl; i++) {
      if (rep[i] == 0) {
        if (cnt > 0) break;
        cnt = 0;
      }
      int dv = def ? def[i] : max_def;
      if (dv >= rep_def)
        cnt++;
      else if (dv >= list_def)
        cnt = 0; /* an empty list: dimension 0, reported below */
    }
    if (cnt > INT32_MAX) return dim_mismatch(f, n, 0, first_row, cnt, INT32_MAX, err);
    want = cnt > 0 ? (int32_t)cnt : 0;
  }
  vf_status st = ensure_data(out, rows, want, err);
  if (st != VF_OK) return st;
  int64_t row = -1, pos = 0, v = 0;
  bool null_row = false;
  for (int64_t i = 0; i <= nl; i++) {
    if (i == nl || rep[i] == 0) {
      if (row >= 0 && !null_row && pos != want)
        return dim_mismatch(f, n, row, first_row, pos, want, err);
      if (i == nl) break;
      row++;
      if (row >= rows)
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: column %s: more rows in the levels than the %" PRId64 " counted",
                            pqt_name(f), lf->path, rows);
      pos = 0;
      null_row = false;
    } else if (null_row && rep[i] == 1 && (def ? def[i] : max_def) < list_def) {
      continue; /* DuckDB writes a null fixed-size array as dim entries that define nothing */
    } else if (rep[i] != 1 || null_row) {
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: row %" PRId64 " (file row %" PRId64
                          "): column %s: unexpected repetition level %u",
                          pqt_name(f), row, first_row + row, lf->path, rep[i]);
    }
    int dv = def ? def[i] : max_def;
    float *dst = out->data + (size_t)row * (size_t)want;
    if (dv < list_def) {
      if (pos != 0)
        return vf_error_set(err, VF_ECORRUPT,
                            "%s: row %" PRId64 ": column %s: null inside a vector", pqt_name(f),
                            row, lf->path);
      memset(dst, 0, (size_t)want * sizeof(float));
      if ((st = mark_null(out, row, err)) != VF_OK) return st;
      null_row = true;
    } else if (dv < rep_def) {
      /* an empty list: dimension 0 */
      return dim_mismatch(f, n, row, first_row, 0, want, err);
    } else if (dv < max_def) {
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: row %" PRId64 " (file row %" PRId64
                          "): null element at position %" PRId64 " in vector column %s",
                          pqt_name(f), row, first_row + row, pos, n->name ? n->name : "?");
    } else {
      if (pos >= want) { /* report the row's real length, not where it passed `want` */
        int64_t got = pos + 1;
        for (int64_t j = i + 1; j < nl && rep[j] != 0; j++) got++;
        return dim_mismatch(f, n, row, first_row, got, want, err);
      }
      if (v >= leaf->nvalues)
        return vf_error_set(err, VF_ECORRUPT, "%s: column %s: more defined levels than values",
                            pqt_name(f), lf->path);
      convert(dst + pos, pqt_leaf_values(leaf) + (size_t)v * kw, 1, k);
      v++;
      pos++;
    }
  }
  if (row + 1 != rows)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: column %s: %" PRId64 " rows in the levels, %" PRId64 " counted",
                        pqt_name(f), lf->path, row + 1, rows);
  *dim = want;
  return VF_OK;
}

/*! pqt_is_dense_vector() : see format.h. */
bool pqt_is_dense_vector(const pqt_file *f, int top) {
  const pqt_schema *sc = pqt_schema_of(f);
  if (top < 0 || top >= sc->nnodes) return false;
  const pqt_node *n = &sc->nodes[top];
  if (n->nleaves != 1) return false;
  const pqt_leaf *leaf = &sc->leaves[n->first_leaf];
  const pqt_schema_elem *e = &pqt_meta(f)->schema[sc->nodes[leaf->node].elem];
  if (n->kind == PQT_NODE_PRIMITIVE)
    return leaf->type == PQT_FIXED_LEN_BYTE_ARRAY && leaf->type_length > 0 &&
           leaf->type_length % 4 == 0 && e->logical == PQT_LT_NONE && e->converted_type < 0 &&
           leaf->max_rep == 0;
  if (n->kind != PQT_NODE_LIST || leaf->max_rep != 1 || n->element != leaf->node) return false;
  if (leaf->type == PQT_FLOAT || leaf->type == PQT_DOUBLE) return true;
  return leaf->type == PQT_FIXED_LEN_BYTE_ARRAY && leaf->type_length == 2 &&
         e->logical == PQT_LT_FLOAT16;
}

void pqt_dense_free(pqt_dense *d) {
  if (!d) return;
  free(d->data);
  free(d->null_rows);
  memset(d, 0, sizeof *d);
}
