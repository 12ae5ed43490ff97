/*
 * Id expression columns over decoded parquet leaves (DESIGN.md "Point ids", id_expression).
 *
 * Why shared: `vforge cat --with-id` and the load runner's record reader must compute the same
 * id for the same row, so both read column values through this one accessor.  Columns an id
 * expression names are flat top-level primitives; for a nullable one the definition levels map
 * each row to its value index (values are packed without nulls, parquet-format "Nested
 * Encoding"), computed once per row group.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*! corpus_missing_column() : see internal.h. */
vf_status corpus_missing_column(const pqt_file *f, const char *name, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  char have[512];
  size_t used = 0;
  have[0] = 0;
  for (int i = 0; i < sc->ntop && used + 4 < sizeof have; i++) {
    int w = snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "",
                     sc->nodes[sc->top[i]].name);
    if (w < 0) break;
    used += (size_t)w;
    if (used >= sizeof have) used = sizeof have - 1;
  }
  return vf_error_set(err, VF_ENOTFOUND, "%s: no column '%s' (columns: %s)", pqt_name(f), name,
                      have);
}

/*! corpus_idcols_resolve() : see internal.h. */
vf_status corpus_idcols_resolve(const pqt_file *f, const corpus_idexpr *e, corpus_idcols *out,
                                vf_error *err) {
  memset(out, 0, sizeof *out);
  out->f = f;
  int nc = 0;
  const char *const *names = corpus_idexpr_columns(e, &nc);
  if (nc == 0) return VF_OK;
  corpus_idcol *cols = vf_calloc((size_t)nc, sizeof *cols);
  if (!cols) return vf_error_set(err, VF_ENOMEM, "out of memory");
  const pqt_schema *sc = pqt_schema_of(f);
  for (int i = 0; i < nc; i++) {
    cols[i].name = names[i];
    int top = pqt_find_top(f, names[i]);
    if (top < 0) {
      free(cols);
      return corpus_missing_column(f, names[i], err);
    }
    const pqt_node *nd = &sc->nodes[top];
    if (nd->kind != PQT_NODE_PRIMITIVE || nd->leaf < 0) {
      free(cols);
      return vf_error_set(err, VF_ECONFIG,
                          "%s: id expression column '%s' is not a flat (primitive) column",
                          pqt_name(f), names[i]);
    }
    cols[i].leaf = nd->leaf;
  }
  out->cols = cols;
  out->ncols = nc;
  return VF_OK;
}

/*! corpus_idcols_bind() : see internal.h. */
vf_status corpus_idcols_bind(corpus_idcols *c, const pqt_leaf_data *data, const int *leaf_ids,
                             int nleaves, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(c->f);
  for (int i = 0; i < c->ncols; i++) {
    corpus_idcol *ic = &c->cols[i];
    ic->data = NULL;
    for (int k = 0; k < nleaves; k++)
      if (leaf_ids[k] == ic->leaf) ic->data = &data[k];
    if (!ic->data) return vf_error_set(err, VF_EINTERNAL, "id column '%s' not decoded", ic->name);
    const pqt_leaf_data *d = ic->data;
    if (!d->def) {
      if (d->nvalues < d->nlevels)
        return vf_error_set(err, VF_ECORRUPT, "%s: column %s: %lld values for %lld rows",
                            pqt_name(c->f), ic->name, (long long)d->nvalues, (long long)d->nlevels);
      free(ic->vidx);
      ic->vidx = NULL;
      ic->vidx_cap = 0;
      continue;
    }
    size_t need = (size_t)d->nlevels + 1;
    if (need > ic->vidx_cap || !ic->vidx) {
      int64_t *p = vf_realloc(ic->vidx, need * sizeof(int64_t));
      if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
      ic->vidx = p;
      ic->vidx_cap = need;
    }
    int16_t maxd = sc->leaves[ic->leaf].max_def;
    int64_t v = 0;
    for (int64_t r = 0; r < d->nlevels; r++)
      ic->vidx[r] = d->def[r] == maxd ? v++ : -1;
    if (v > d->nvalues)
      return vf_error_set(err, VF_ECORRUPT, "%s: column %s: %lld defined rows, %lld values",
                          pqt_name(c->f), ic->name, (long long)v, (long long)d->nvalues);
  }
  return VF_OK;
}

/*! corpus_idcols_get() : see internal.h. */
vf_status corpus_idcols_get(void *user, const char *column, corpus_value *out, vf_error *err) {
  corpus_idcols *c = user;
  memset(out, 0, sizeof *out);
  for (int i = 0; i < c->ncols; i++) {
    corpus_idcol *ic = &c->cols[i];
    if (strcmp(ic->name, column) != 0) continue;
    const pqt_leaf_data *d = ic->data;
    if (!d || c->row < 0 || c->row >= d->nlevels)
      return vf_error_set(err, VF_EUSAGE, "id column '%s': row %lld is not bound", column,
                          (long long)c->row);
    int64_t vi = ic->vidx ? ic->vidx[c->row] : c->row;
    if (vi < 0) return VF_OK; /* null */
    const pqt_schema *sc = pqt_schema_of(c->f);
    const pqt_schema_elem *e = &pqt_meta(c->f)->schema[sc->nodes[sc->leaves[ic->leaf].node].elem];
    bool is_unsigned = (e->logical == PQT_LT_INTEGER && !e->lt_signed) ||
                       (e->converted_type >= PQT_CT_UINT_8 && e->converted_type <= PQT_CT_UINT_64);
    switch (d->type) {
    case PQT_INT32: {
      int32_t v;
      memcpy(&v, d->values.data + 4 * vi, 4);
      if (is_unsigned) {
        out->kind = CORPUS_V_UINT;
        out->u = (uint32_t)v;
      } else {
        out->kind = CORPUS_V_INT;
        out->i = v;
      }
      return VF_OK;
    }
    case PQT_INT64: {
      int64_t v;
      memcpy(&v, d->values.data + 8 * vi, 8);
      if (is_unsigned) {
        out->kind = CORPUS_V_UINT;
        out->u = (uint64_t)v;
      } else {
        out->kind = CORPUS_V_INT;
        out->i = v;
      }
      return VF_OK;
    }
    case PQT_BYTE_ARRAY:
      out->kind = CORPUS_V_STR;
      out->s = (const char *)d->values.data + d->offsets[vi];
      out->len = (size_t)(d->offsets[vi + 1] - d->offsets[vi]);
      return VF_OK;
    case PQT_FIXED_LEN_BYTE_ARRAY:
      if (d->width == 16 && e->logical == PQT_LT_UUID) {
        corpus_uuid_format(d->values.data + 16 * vi, c->uuid_buf);
        out->kind = CORPUS_V_STR;
        out->s = c->uuid_buf;
        out->len = 36;
        return VF_OK;
      }
      out->kind = CORPUS_V_STR;
      out->s = (const char *)d->values.data + (int64_t)d->width * vi;
      out->len = (size_t)d->width;
      return VF_OK;
    default:
      return vf_error_set(err, VF_ECONFIG,
                          "%s: column '%s' has type %s, which cannot be used in an id expression",
                          pqt_name(c->f), column, pqt_physical_name(d->type));
    }
  }
  return vf_error_set(err, VF_ENOTFOUND, "%s: id expression column '%s' not found", pqt_name(c->f),
                      column);
}

/*! corpus_idcols_free() : see internal.h. */
void corpus_idcols_free(corpus_idcols *c) {
  if (!c) return;
  for (int i = 0; c->cols && i < c->ncols; i++)
    free(c->cols[i].vidx);
  free(c->cols);
  memset(c, 0, sizeof *c);
}
