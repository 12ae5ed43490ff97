/*
 * Filters in the evaluation commands (issue 19 "Filters"): the per-query `__filter__` column of
 * a queries file, `--filter`, the `_f<h>` tag that keeps filtered outputs apart from
 * unfiltered ones, and the payload columns a filtered scan must read.
 *
 * <h> is the first 8 hex digits of md5 of the filter text (surrounding whitespace trimmed, so
 * `--filter '{..}'` and `--filter @file` agree), or for a queries file with a __filter__ column
 * the hash generate-queries recorded for its template (key-value metadata vforge.filter.hash),
 * else md5 of every query's filter text joined by newlines.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "eval/bf_internal.h"

#define EV_FILTER_COLUMN "__filter__"

static void trim(const char **s, size_t *n) {
  while (*n && (**s == ' ' || **s == '\n' || **s == '\t' || **s == '\r')) (*s)++, (*n)--;
  while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\n' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r')) (*n)--;
}

/* ev_filter_column_read(): see bf_internal.h. */
vf_status ev_filter_column_read(pqt_file *f, uint64_t n, char ***texts, char hash[9], vf_error *err) {
  *texts = NULL;
  hash[0] = 0;
  int top = pqt_find_top(f, EV_FILTER_COLUMN);
  if (top < 0) return VF_OK;
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_node *nd = &sc->nodes[top];
  if (nd->kind != PQT_NODE_PRIMITIVE || sc->leaves[nd->leaf].type != PQT_BYTE_ARRAY || sc->leaves[nd->leaf].max_rep)
    return vf_error_set(err, VF_ECORRUPT, "%s: column %s must hold the filters as JSON text (a string column)",
                        pqt_name(f), EV_FILTER_COLUMN);
  char **t = vf_calloc(n ? n : 1, sizeof *t);
  if (!t) return vf_error_set(err, VF_ENOMEM, "out of memory");
  int leaf = nd->leaf;
  const pqt_file_meta *m = pqt_meta(f);
  pqt_leaf_data ld;
  pqt_leaf_data_init(&ld);
  vf_md5_ctx md;
  vf_md5_init(&md);
  vf_status st = VF_OK;
  uint64_t row = 0;
  for (int rg = 0; rg < m->nrow_groups; rg++) {
    VF_TRY(pqt_read_leaves(f, rg, &leaf, 1, &ld, err));
    int64_t vi = 0;
    int16_t maxd = sc->leaves[leaf].max_def;
    for (int64_t r = 0; r < ld.nlevels; r++, row++) {
      if (row >= n)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: %s has more rows than the file", pqt_name(f), EV_FILTER_COLUMN));
      if (row) vf_md5_update(&md, "\n", 1);
      if (ld.def && ld.def[r] != maxd) continue; /* null: this query is unfiltered */
      int64_t a = ld.offsets[vi], b = ld.offsets[vi + 1];
      vi++;
      const char *s = (const char *)ld.values.data + a;
      size_t len = (size_t)(b - a);
      trim(&s, &len);
      if (len > FLT_MAX_TEXT)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %" PRIu64 ": a %s of %zu bytes", pqt_name(f), row,
                             EV_FILTER_COLUMN, len));
      vf_md5_update(&md, s, len);
      if (len && !(t[row] = vf_strndup(s, len))) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    }
  }
  if (row != n)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: %s has %" PRIu64 " rows, the file %" PRIu64, pqt_name(f),
                         EV_FILTER_COLUMN, row, n));
  const char *kvh = NULL;
  for (int i = 0; i < m->nkv; i++)
    if (m->kv[i].key && strcmp(m->kv[i].key, "vforge.filter.hash") == 0) kvh = m->kv[i].value;
  if (kvh && strlen(kvh) == 8) {
    memcpy(hash, kvh, 9);
  } else {
    uint8_t d[16];
    vf_md5_final(&md, d);
    snprintf(hash, 9, "%02x%02x%02x%02x", d[0], d[1], d[2], d[3]);
  }
  *texts = t;
out:
  pqt_leaf_data_free(&ld);
  if (st != VF_OK) {
    for (uint64_t i = 0; i < n; i++) free(t[i]);
    free(t);
  }
  return st;
}

/* ev_filters_init(): see bf_internal.h. */
vf_status ev_filters_init(ev_filters *x, uint64_t nq, char *const *texts, const char *qhash,
                          const char *text, const char *qpath, vf_error *err) {
  memset(x, 0, sizeof *x);
  if (text && texts)
    return vf_error_set(err, VF_EUSAGE, "--filter given, but the queries file %s carries its own "
                        "filters (a %s column); use one or the other", qpath, EV_FILTER_COLUMN);
  if (!text && !texts) return VF_OK;
  x->per_query = vf_calloc(nq ? nq : 1, sizeof *x->per_query);
  x->owned = vf_calloc(text ? 1 : (nq ? nq : 1), sizeof *x->owned);
  if (!x->per_query || !x->owned) {
    ev_filters_free(x);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  vf_status st = VF_OK;
  if (text) {
    size_t len = strlen(text);
    const char *s = text;
    trim(&s, &len);
    flt_filter *f = NULL;
    VF_TRY(flt_parse(s, len, "--filter", &f, err));
    x->owned[x->nowned++] = f;
    char h[9];
    flt_hash8(s, len, h);
    snprintf(x->tag, sizeof x->tag, "_f%s", h);
    for (uint64_t i = 0; !flt_is_empty(f) && i < nq; i++) x->per_query[i] = f;
  } else {
    snprintf(x->tag, sizeof x->tag, "_f%s", qhash);
    for (uint64_t i = 0; i < nq; i++) {
      if (!texts[i]) continue;
      /* the same text as the query before: the same compiled filter (one filter throughout
       * lets brute-force keep only its matching rows) */
      if (i && texts[i - 1] && x->nowned && strcmp(texts[i], texts[i - 1]) == 0) {
        x->per_query[i] = x->per_query[i - 1];
        continue;
      }
      char what[600];
      snprintf(what, sizeof what, "%s: row %" PRIu64 " (%s)", qpath, i, EV_FILTER_COLUMN);
      flt_filter *f = NULL;
      VF_TRY(flt_parse(texts[i], strlen(texts[i]), what, &f, err));
      x->owned[x->nowned++] = f;
      if (!flt_is_empty(f)) x->per_query[i] = f;
    }
  }
  /* the union of the payload keys, in first-use order */
  for (size_t i = 0; i < x->nowned; i++) {
    const char *const *keys;
    size_t nk = flt_keys(x->owned[i], &keys);
    for (size_t k = 0; k < nk; k++) {
      bool seen = false;
      for (size_t j = 0; j < x->nkeys && !seen; j++) seen = strcmp(x->keys[j], keys[k]) == 0;
      if (seen) continue;
      const char **nkeys = vf_realloc(x->keys, (x->nkeys + 1) * sizeof *nkeys);
      if (!nkeys) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
      x->keys = nkeys;
      x->keys[x->nkeys++] = keys[k];
    }
  }
  for (uint64_t i = 0; i < nq; i++) {
    x->any = x->any || x->per_query[i] != NULL;
    x->uses_id = x->uses_id || (x->per_query[i] && flt_uses_id(x->per_query[i]));
  }
out:
  if (st != VF_OK) ev_filters_free(x);
  return st;
}

void ev_filters_free(ev_filters *x) {
  for (size_t i = 0; x->owned && i < x->nowned; i++) flt_free(x->owned[i]);
  free(x->owned);
  free(x->per_query);
  free(x->keys);
  memset(x, 0, sizeof *x);
}

/* ev_filters_payload(): see bf_internal.h. */
vf_status ev_filters_payload(const ev_filters *x, const corpus_record_spec *spec,
                             corpus_payload_source **out, int *n, vf_error *err) {
  *out = NULL;
  *n = 0;
  if (!x->nkeys) return VF_OK;
  corpus_payload_source *p = vf_calloc(x->nkeys, sizeof *p);
  if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (size_t k = 0; k < x->nkeys; k++) {
    p[k] = (corpus_payload_source){x->keys[k], x->keys[k]};
    if (!spec || spec->npayload == 0) continue; /* a column of that name */
    bool found = false;
    for (int i = 0; i < spec->npayload && !found; i++)
      if (strcmp(spec->payload[i].key, x->keys[k]) == 0) {
        p[k] = spec->payload[i];
        found = true;
      }
    if (!found) {
      char names[512];
      size_t nl = 0;
      names[0] = 0;
      for (int i = 0; i < spec->npayload && nl + 1 < sizeof names; i++) {
        int w = snprintf(names + nl, sizeof names - nl, "%s%s", i ? ", " : "", spec->payload[i].key);
        if (w > 0) nl += (size_t)w < sizeof names - nl ? (size_t)w : sizeof names - nl - 1;
      }
      free(p);
      return vf_error_set(err, VF_EUSAGE, "the filter reads payload key '%s', which is not one of "
                          "the config's payload_fields (%s)", x->keys[k], names);
    }
  }
  *out = p;
  *n = (int)x->nkeys;
  return VF_OK;
}

/* ev_filter_id(): see bf_internal.h. */
void ev_filter_id(const char *text, corpus_id *id) {
  memset(id, 0, sizeof *id);
  size_t n = strlen(text);
  if (n == 36 && text[8] == '-') {
    id->is_uuid = true;
    memcpy(id->uuid, text, 37);
    return;
  }
  id->num = strtoull(text, NULL, 10);
}
