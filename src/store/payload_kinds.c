/*
 * payload_kinds.c — what each payload field's column holds, read from a corpus file's parquet
 * schema (issue 18: `vectorstore.params.payload_indexes` with `mode: all` infers each field's
 * Qdrant index type from it, and a configured type the column cannot hold is refused).  Only
 * the footer is read.  A list column counts as its element (Qdrant indexes arrays element-wise).
 */
#include <stdio.h>

#include "vforge/format.h"
#include "vforge/io.h"
#include "vforge/store.h"

/* The kind of schema node `n` (a primitive, or a list of them, or a lat/lon struct). */
static store_payload_kind pk_node(const pqt_schema *sc, const pqt_file_meta *m, int n,
                                  char *tname, size_t cap, int depth) {
  const pqt_node *nd = &sc->nodes[n];
  if (nd->kind == PQT_NODE_LIST && nd->element >= 0 && depth < 4) {
    store_payload_kind k = pk_node(sc, m, nd->element, tname, cap, depth + 1);
    size_t l = strlen(tname);
    snprintf(tname + l, cap > l ? cap - l : 0, "[]");
    return k;
  }
  if (nd->kind == PQT_NODE_STRUCT) {
    bool lat = false, lon = false;
    for (int i = 0; i < nd->nchildren; i++) {
      const pqt_node *ch = &sc->nodes[nd->children[i]];
      int t = ch->kind == PQT_NODE_PRIMITIVE ? m->schema[ch->elem].type : -1;
      bool num = t == PQT_FLOAT || t == PQT_DOUBLE;
      if (num && strcmp(ch->name, "lat") == 0) lat = true;
      if (num && strcmp(ch->name, "lon") == 0) lon = true;
    }
    snprintf(tname, cap, "STRUCT");
    return lat && lon && nd->nchildren == 2 ? STORE_PK_GEO : STORE_PK_UNKNOWN;
  }
  if (nd->kind != PQT_NODE_PRIMITIVE) {
    snprintf(tname, cap, "MAP");
    return STORE_PK_UNKNOWN;
  }
  const pqt_schema_elem *e = &m->schema[nd->elem];
  int ct = e->converted_type;
  switch (e->type) {
  case PQT_BOOLEAN: snprintf(tname, cap, "BOOLEAN"); return STORE_PK_BOOL;
  case PQT_INT32:
  case PQT_INT64:
    if (e->logical == PQT_LT_DATE || ct == PQT_CT_DATE) {
      snprintf(tname, cap, "DATE");
      return STORE_PK_DATETIME;
    }
    if (e->logical == PQT_LT_TIMESTAMP || ct == PQT_CT_TIMESTAMP_MILLIS ||
        ct == PQT_CT_TIMESTAMP_MICROS) {
      snprintf(tname, cap, "TIMESTAMP");
      return STORE_PK_DATETIME;
    }
    if (e->logical == PQT_LT_DECIMAL || ct == PQT_CT_DECIMAL) {
      snprintf(tname, cap, "DECIMAL");
      return STORE_PK_FLOAT;
    }
    if (e->logical == PQT_LT_TIME || ct == PQT_CT_TIME_MILLIS || ct == PQT_CT_TIME_MICROS) {
      snprintf(tname, cap, "TIME");
      return STORE_PK_UNKNOWN;
    }
    snprintf(tname, cap, "%s", e->type == PQT_INT32 ? "INT32" : "INT64");
    return STORE_PK_INTEGER;
  case PQT_INT96: snprintf(tname, cap, "INT96 (timestamp)"); return STORE_PK_DATETIME;
  case PQT_FLOAT:
  case PQT_DOUBLE:
    snprintf(tname, cap, "%s", e->type == PQT_FLOAT ? "FLOAT" : "DOUBLE");
    return STORE_PK_FLOAT;
  case PQT_FIXED_LEN_BYTE_ARRAY:
    if (e->logical == PQT_LT_UUID) {
      snprintf(tname, cap, "UUID");
      return STORE_PK_UUID;
    }
    if (e->logical == PQT_LT_FLOAT16) {
      snprintf(tname, cap, "FLOAT16");
      return STORE_PK_FLOAT;
    }
    if (e->logical == PQT_LT_DECIMAL || ct == PQT_CT_DECIMAL) {
      snprintf(tname, cap, "DECIMAL");
      return STORE_PK_FLOAT;
    }
    snprintf(tname, cap, "FIXED_LEN_BYTE_ARRAY");
    return STORE_PK_UNKNOWN;
  case PQT_BYTE_ARRAY:
    if (e->logical == PQT_LT_JSON || ct == PQT_CT_JSON) {
      snprintf(tname, cap, "JSON");
      return STORE_PK_UNKNOWN; /* objects are unpacked into the payload: index their keys */
    }
    if (e->logical == PQT_LT_STRING || e->logical == PQT_LT_ENUM || ct == PQT_CT_UTF8 ||
        ct == PQT_CT_ENUM) {
      snprintf(tname, cap, "STRING");
      return STORE_PK_STRING;
    }
    if (e->logical == PQT_LT_DECIMAL || ct == PQT_CT_DECIMAL) {
      snprintf(tname, cap, "DECIMAL");
      return STORE_PK_FLOAT;
    }
    snprintf(tname, cap, "BYTE_ARRAY");
    return STORE_PK_UNKNOWN;
  }
  snprintf(tname, cap, "?");
  return STORE_PK_UNKNOWN;
}

/* store_payload_kinds(): see store.h. */
vf_status store_payload_kinds(const corpus_file *file, const corpus_payload_source *src, int n,
                              store_payload_field *out, vf_error *err) {
  for (int i = 0; i < n; i++) {
    out[i].key = src[i].key;
    out[i].column = src[i].column;
    out[i].kind = STORE_PK_UNKNOWN;
    snprintf(out[i].column_type, sizeof out[i].column_type, "not read");
  }
  if (n == 0) return VF_OK;
  if (file->dataset) { /* a component dataset's payload is its own parquet: not probed here */
    for (int i = 0; i < n; i++)
      snprintf(out[i].column_type, sizeof out[i].column_type, "a dataset payload column");
    return VF_OK;
  }
  io_source *ios = NULL;
  pqt_file *f = NULL;
  vf_status st = corpus_open(file, &ios, err);
  if (st != VF_OK) return st;
  st = pqt_open(ios, NULL, &f, err);
  if (st != VF_OK) return st;
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_file_meta *m = pqt_meta(f);
  for (int i = 0; i < n; i++) {
    int node = -1;
    for (int t = 0; t < sc->ntop; t++)
      if (src[i].column && strcmp(sc->nodes[sc->top[t]].name, src[i].column) == 0)
        node = sc->top[t];
    if (node < 0) {
      snprintf(out[i].column_type, sizeof out[i].column_type, "missing");
      continue;
    }
    out[i].kind = pk_node(sc, m, node, out[i].column_type, sizeof out[i].column_type, 0);
  }
  pqt_close(f);
  return VF_OK;
}
