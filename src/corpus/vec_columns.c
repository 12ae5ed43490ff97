/*
 * Which top-level columns of a parquet file hold vectors (DESIGN.md "Vectors in parquet"): the
 * shapes only — list<float|double|float16> or FLBA (dense), list<list<float>> (multivector),
 * struct{indices, values} (sparse).  The record reader (records.c) validates the rest while
 * decoding.  Used by eval (ground truth, queries), index builds and the Arrow exporter.
 */
#include <stdio.h>
#include <string.h>

#include "vforge/corpus.h"
#include "vforge/format.h"

static bool float_leaf(const pqt_file *f, int leaf) {
  const pqt_leaf *l = &pqt_schema_of(f)->leaves[leaf];
  const pqt_schema_elem *e = &pqt_meta(f)->schema[pqt_schema_of(f)->nodes[l->node].elem];
  return l->type == PQT_FLOAT || l->type == PQT_DOUBLE ||
         (l->type == PQT_FIXED_LEN_BYTE_ARRAY && l->type_length == 2 && e->logical == PQT_LT_FLOAT16);
}

/* corpus_vec_kind_of(): see corpus.h. */
int corpus_vec_kind_of(const pqt_file *f, int top) {
  if (pqt_is_dense_vector(f, top)) return CORPUS_VEC_DENSE;
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_node *n = &sc->nodes[top];
  if (n->kind == PQT_NODE_LIST && n->nleaves == 1 && n->element >= 0 &&
      sc->nodes[n->element].kind == PQT_NODE_LIST && sc->leaves[n->first_leaf].max_rep == 2 &&
      float_leaf(f, n->first_leaf))
    return CORPUS_VEC_MULTI;
  if (n->kind == PQT_NODE_STRUCT && n->nchildren == 2) {
    bool has_i = false, has_v = false;
    for (int c = 0; c < 2; c++) {
      const char *nm = sc->nodes[n->children[c]].name;
      has_i |= nm && strcmp(nm, "indices") == 0;
      has_v |= nm && strcmp(nm, "values") == 0;
    }
    if (has_i && has_v) return CORPUS_VEC_SPARSE;
  }
  return -1;
}

/* corpus_dense_top(): see corpus.h. */
vf_status corpus_dense_top(const pqt_file *f, const char *column, int *top, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  if (column) {
    int t = pqt_find_top(f, column);
    if (t < 0)
      return vf_error_set(err, VF_ENOTFOUND, "%s: no column '%s'", pqt_name(f), column);
    if (!pqt_is_dense_vector(f, t))
      return vf_error_set(err, VF_EUSAGE, "%s: column '%s' is not a dense vector column",
                          pqt_name(f), column);
    *top = t;
    return VF_OK;
  }
  int found = -1, count = 0;
  char names[512];
  size_t nl = 0;
  names[0] = 0;
  for (int i = 0; i < sc->ntop; i++) {
    if (!pqt_is_dense_vector(f, sc->top[i])) continue;
    if (found < 0) found = sc->top[i];
    count++;
    int w = snprintf(names + nl, sizeof names - nl, "%s%s", nl ? ", " : "",
                     sc->nodes[sc->top[i]].name);
    if (w > 0 && (size_t)w < sizeof names - nl) nl += (size_t)w;
  }
  if (count == 0)
    return vf_error_set(err, VF_EUSAGE, "%s: no dense vector column (list<float> or FLBA)",
                        pqt_name(f));
  if (count > 1)
    return vf_error_set(err, VF_EUSAGE,
                        "%s: several dense vector columns (%s); choose one with --column",
                        pqt_name(f), names);
  *top = found;
  return VF_OK;
}
