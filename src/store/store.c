/*
 * store.c — the store interface: dispatch by type, the common handle head, point id order and
 * text, and the batch-vs-collection checks every backend applies before writing.
 *
 * Why checks live here: a batch that does not fit the collection (unknown vector, other
 * dimension) must fail the same way whatever the backend, naming the vector and row, before
 * a byte is written (issue 3: never a silent "errors: 3" at the end).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "qdrant_internal.h"
#include "vforge/config.h"
#include "vforge/store.h"

#define STORE_MAX_VECTORS 256
#define STORE_MAX_DIM 65536

void store_results_free(store_results *r) {
  if (!r) return;
  free(r->hits);
  free(r->counts);
  memset(r, 0, sizeof *r);
}

static const char *kind_name(corpus_vec_kind k) {
  switch (k) {
  case CORPUS_VEC_DENSE: return "dense";
  case CORPUS_VEC_SPARSE: return "sparse";
  case CORPUS_VEC_MULTI: return "multivector";
  }
  return "?";
}

static vf_status store_head_nomem(vf_error *err) {
  return vf_error_set(err, VF_ENOMEM, "vectorstore: out of memory");
}

/* store_head_init(): see store.h.  Validates the vectors spec while copying it. */
vf_status store_head_init(store *s, const store_vtable *vt, const store_config *cfg,
                          vf_error *err) {
  memset(s, 0, sizeof *s);
  s->vt = vt;
  if (!cfg->collection_name || !*cfg->collection_name)
    return vf_error_set(err, VF_ECONFIG, "vectorstore: collection_name is required");
  for (const char *p = cfg->collection_name; *p; p++)
    if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20)
      return vf_error_set(err, VF_ECONFIG,
                          "vectorstore: collection_name '%s' contains '/', '\\' or a control "
                          "character",
                          cfg->collection_name);
  if (strcmp(cfg->collection_name, ".") == 0 || strcmp(cfg->collection_name, "..") == 0)
    return vf_error_set(err, VF_ECONFIG, "vectorstore: collection_name '%s' is not a name",
                        cfg->collection_name);
  s->must_exist = cfg->must_exist;
  if (cfg->nvectors < 1 || cfg->nvectors > STORE_MAX_VECTORS || !cfg->vectors)
    return vf_error_set(err, VF_ECONFIG, "vectors: %d entries; 1..%d are needed", cfg->nvectors,
                        STORE_MAX_VECTORS);
  if (!(s->collection = vf_strdup(cfg->collection_name)) ||
      !(s->vectors = vf_calloc((size_t)cfg->nvectors, sizeof *s->vectors)))
    return store_head_nomem(err);
  for (int i = 0; i < cfg->nvectors; i++) {
    const store_vector_spec *v = &cfg->vectors[i];
    if (!v->name || !*v->name)
      return vf_error_set(err, VF_ECONFIG, "vectors[%d]: the vector has no name", i);
    for (int j = 0; j < i; j++)
      if (strcmp(cfg->vectors[j].name, v->name) == 0)
        return vf_error_set(err, VF_ECONFIG, "vectors: '%s' is named twice", v->name);
    if (v->kind != CORPUS_VEC_DENSE && v->kind != CORPUS_VEC_SPARSE && v->kind != CORPUS_VEC_MULTI)
      return vf_error_set(err, VF_ECONFIG, "vectors.%s: unknown kind %d", v->name, (int)v->kind);
    if (v->distance < CORPUS_COSINE || v->distance > CORPUS_MANHATTAN)
      return vf_error_set(err, VF_ECONFIG, "vectors.%s: unknown distance %d", v->name,
                          (int)v->distance);
    if (v->kind != CORPUS_VEC_SPARSE && (v->dim < 1 || v->dim > STORE_MAX_DIM))
      return vf_error_set(err, VF_ECONFIG,
                          "vectors.%s: a %s vector needs a dimension in 1..%d (got %d)", v->name,
                          kind_name(v->kind), STORE_MAX_DIM, (int)v->dim);
    s->vectors[i] = *v;
    s->vectors[i].name = NULL;
    s->nvectors = i + 1;
    if (!(s->vectors[i].name = vf_strdup(v->name))) return store_head_nomem(err);
    if (v->kind == CORPUS_VEC_SPARSE) s->vectors[i].dim = 0;
  }
  return VF_OK;
}

void store_head_free(store *s) {
  if (!s) return;
  for (int i = 0; i < s->nvectors; i++)
    free((char *)s->vectors[i].name);
  free(s->vectors);
  free(s->collection);
  s->vectors = NULL;
  s->collection = NULL;
  s->nvectors = 0;
}

/* Whether s holds a UUID in 8-4-4-4-12 hex (either case) followed by its NUL: what
 * store_id_parse accepts as a UUID, checked without building the normalised id (this runs for
 * every point of every batch). */
static bool uuid_text_ok(const char s[37]) {
  static const uint8_t dash_at[36] = {[8] = 1, [13] = 1, [18] = 1, [23] = 1};
  unsigned bad = 0;
  for (size_t i = 0; i < 36; i++) {
    unsigned char c = (unsigned char)s[i];
    unsigned lc = c | 0x20u; /* 'A'-'F' -> 'a'-'f'; digits are unchanged */
    bool hex = (c >= '0' && c <= '9') || (lc >= 'a' && lc <= 'f');
    bad |= dash_at[i] ? (unsigned)(c != '-') : (unsigned)!hex;
  }
  return !bad && s[36] == '\0';
}

/* store_check_batch(): see store.h. */
vf_status store_check_batch(const store *s, const corpus_batch *b, int *map, vf_error *err) {
  const char *where = b->file_key ? b->file_key : "batch";
  for (int j = 0; j < s->nvectors; j++)
    map[j] = -1;
  if (b->n > 0 && !b->ids)
    return vf_error_set(err, VF_EUSAGE, "%s: batch of %zu points without ids", where, b->n);
  for (size_t r = 0; r < b->n; r++) {
    if (b->ids[r].is_uuid && !uuid_text_ok(b->ids[r].uuid))
      return vf_error_set(err, VF_EUSAGE,
                          "%s: row %zu (file row %llu): point id '%.36s' is not "
                          "a UUID (8-4-4-4-12 hex)",
                          where, r, (unsigned long long)(b->file_rows ? b->file_rows[r] : r),
                          b->ids[r].uuid);
  }
  if (b->nvectors < 0 || (b->nvectors > 0 && !b->vectors))
    return vf_error_set(err, VF_EUSAGE, "%s: batch with %d vectors but no vector data", where,
                        b->nvectors);
  for (int i = 0; i < b->nvectors; i++) {
    const corpus_vec_batch *v = &b->vectors[i];
    int j = 0;
    while (j < s->nvectors && (!v->name || strcmp(s->vectors[j].name, v->name) != 0))
      j++;
    if (j == s->nvectors)
      return vf_error_set(err, VF_EUSAGE, "%s: vector '%s' is not a vector of collection '%s'",
                          where, v->name ? v->name : "(unnamed)", s->collection);
    if (map[j] >= 0)
      return vf_error_set(err, VF_EUSAGE, "%s: vector '%s' appears twice in the batch", where,
                          v->name);
    const store_vector_spec *sp = &s->vectors[j];
    if (v->kind != sp->kind)
      return vf_error_set(err, VF_EUSAGE,
                          "%s: vector '%s' is %s in the batch but %s in collection '%s'", where,
                          v->name, kind_name(v->kind), kind_name(sp->kind), s->collection);
    if (v->kind != CORPUS_VEC_SPARSE && v->dim != sp->dim)
      return vf_error_set(err, VF_EUSAGE,
                          "%s: vector '%s' has dimension %d in the batch (file row %llu) but %d in "
                          "collection '%s'",
                          where, v->name, (int)v->dim,
                          (unsigned long long)(b->file_rows && b->n ? b->file_rows[0] : 0),
                          (int)sp->dim, s->collection);
    if (b->n > 0) {
      bool ok = true;
      switch (v->kind) {
      case CORPUS_VEC_DENSE: ok = v->dense != NULL; break;
      case CORPUS_VEC_SPARSE:
        ok = v->offsets && (v->offsets[b->n] == 0 || (v->indices && v->values));
        break;
      case CORPUS_VEC_MULTI: ok = v->offsets && (v->offsets[b->n] == 0 || v->multi); break;
      }
      if (!ok) return vf_error_set(err, VF_EUSAGE, "%s: vector '%s' has no data", where, v->name);
      if (v->kind != CORPUS_VEC_DENSE)
        for (size_t r = 0; r < b->n; r++)
          if (v->offsets[r] < 0 || v->offsets[r + 1] < v->offsets[r])
            return vf_error_set(
                err, VF_EUSAGE, "%s: vector '%s' row %zu: offsets %lld..%lld are not ascending",
                where, v->name, r, (long long)v->offsets[r], (long long)v->offsets[r + 1]);
    }
    map[j] = i;
  }
  if (b->n > 0 && b->payload_offsets) {
    for (size_t r = 0; r < b->n; r++)
      if (b->payload_offsets[r] < 0 || b->payload_offsets[r + 1] < b->payload_offsets[r] ||
          (uint64_t)b->payload_offsets[r + 1] > b->payload.len)
        return vf_error_set(err, VF_EUSAGE,
                            "%s: payload offsets of row %zu (%lld..%lld) are outside the %zu "
                            "payload bytes",
                            where, r, (long long)b->payload_offsets[r],
                            (long long)b->payload_offsets[r + 1], b->payload.len);
  }
  return VF_OK;
}

/* ------------------------------------------------------------------ ids */

int store_id_cmp(const corpus_id *a, const corpus_id *b) {
  if (a->is_uuid != b->is_uuid) return a->is_uuid ? 1 : -1;
  if (!a->is_uuid) return a->num < b->num ? -1 : a->num > b->num;
  return memcmp(a->uuid, b->uuid, 36);
}

void store_id_format(const corpus_id *id, char out[37]) {
  if (id->is_uuid) {
    memcpy(out, id->uuid, 36);
    out[36] = 0;
    return;
  }
  char tmp[24];
  int n = 0;
  uint64_t v = id->num;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (int i = 0; i < n; i++)
    out[i] = tmp[n - 1 - i];
  out[n] = 0;
}

bool store_id_parse(const char *s, size_t len, corpus_id *out) {
  memset(out, 0, sizeof *out);
  if (len == 36) {
    for (size_t i = 0; i < 36; i++) {
      char c = s[i];
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        if (c != '-') return false;
      } else if (c >= 'A' && c <= 'F') {
        c = (char)(c - 'A' + 'a');
      } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return false;
      }
      out->uuid[i] = c;
    }
    out->uuid[36] = 0;
    out->is_uuid = true;
    return true;
  }
  if (len == 0 || len > 20) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    unsigned dgt = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - dgt) / 10) return false;
    v = v * 10 + dgt;
  }
  out->num = v;
  return true;
}

/* -------------------------------------------------------------- dispatch */

vf_status store_open(const store_config *cfg, store **out, vf_error *err) {
  *out = NULL;
  if (!cfg) return vf_error_set(err, VF_EUSAGE, "vectorstore: no configuration");
  const char *type = cfg->type && *cfg->type ? cfg->type : "local";
  if (strcmp(type, "local") == 0) return store_local_open(cfg, out, err);
  if (strcmp(type, "discard") == 0) return store_discard_open(cfg, out, err);
  if (strcmp(type, "qdrant") == 0) return store_qdrant_open(cfg, out, err);
  return vf_error_set(err, VF_ECONFIG,
                      "vectorstore.type: '%s' is not a store type of this build (local, "
                      "discard, qdrant)",
                      type);
}

vf_status store_ensure_collection(store *s, vf_error *err) {
  return s->vt->ensure_collection(s, err);
}
vf_status store_defer_indexing(store *s, vf_error *err) {
  return s->vt->defer_indexing(s, err);
}
vf_status store_enable_indexing(store *s, vf_error *err) {
  return s->vt->enable_indexing(s, err);
}
vf_status store_wait_indexed(store *s, double timeout_s, vf_error *err) {
  return s->vt->wait_indexed(s, timeout_s, err);
}
vf_status store_flush(store *s, vf_error *err) {
  return s->vt->flush(s, err);
}
vf_status store_count(store *s, bool exact, uint64_t *out, vf_error *err) {
  return s->vt->count(s, exact, out, err);
}

/* store_record_json(): see qdrant_internal.h. */
vf_status store_record_json(vf_buf *b, const store_record *r, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_json_raw(b, "{\"files_md5\": ", err));
  VF_TRY(vf_json_string(b, r->files_md5, strlen(r->files_md5), err));
  VF_TRY(vf_json_raw(b, ", \"id_expression\": ", err));
  VF_TRY(vf_json_string(b, r->id_expression, strlen(r->id_expression), err));
  VF_TRY(vf_buf_printf(b, err, ", \"files\": %llu, \"rows\": %llu}",
                       (unsigned long long)r->files, (unsigned long long)r->rows));
out:
  return st;
}

/* store_record_from_json(): see qdrant_internal.h. */
bool store_record_from_json(const vf_json_val *v, store_record *r) {
  const vf_json_val *m = vf_json_get(v, "files_md5"), *e = vf_json_get(v, "id_expression");
  const vf_json_val *f = vf_json_get(v, "files"), *n = vf_json_get(v, "rows");
  if (!m || m->t != VF_JSON_STR || strlen(m->str) > 32 || !e || e->t != VF_JSON_STR) return false;
  snprintf(r->files_md5, sizeof r->files_md5, "%s", m->str);
  snprintf(r->id_expression, sizeof r->id_expression, "%s", e->str);
  r->files = f && f->t == VF_JSON_NUM && f->num >= 0 ? (uint64_t)f->num : 0;
  r->rows = n && n->t == VF_JSON_NUM && n->num >= 0 ? (uint64_t)n->num : 0;
  return true;
}

vf_status store_set_record(store *s, const store_record *r, vf_error *err) {
  if (!s->vt->set_record)
    return vf_error_set(err, VF_EUNSUPPORTED, "the %s store keeps no corpus record", s->vt->type);
  return s->vt->set_record(s, r, err);
}

vf_status store_get_record(store *s, store_record *out, bool *found, vf_error *err) {
  memset(out, 0, sizeof *out);
  *found = false;
  if (!s->vt->get_record)
    return vf_error_set(err, VF_EUNSUPPORTED, "the %s store keeps no corpus record", s->vt->type);
  return s->vt->get_record(s, out, found, err);
}

vf_status store_contains(store *s, const corpus_id *ids, size_t n, bool *found, vf_error *err) {
  if (!s->vt->contains)
    return vf_error_set(err, VF_EUNSUPPORTED, "the %s store cannot look point ids up", s->vt->type);
  for (size_t i = 0; i < n; i++) found[i] = false;
  return n ? s->vt->contains(s, ids, n, found, err) : VF_OK;
}

vf_status store_upsert(store *s, const corpus_batch *batch, vf_error *err) {
  if (!batch) return vf_error_set(err, VF_EUSAGE, "store upsert: NULL batch");
  vf_status st = s->vt->upsert(s, batch, err);
  if (st != VF_OK) return st;
  s->points_upserted += batch->n;
  return st;
}

vf_status store_search(store *s, const char *vector, const float *queries, size_t nq, int32_t dim,
                       size_t k, store_results *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  if (k == 0) return vf_error_set(err, VF_EUSAGE, "search: k must be at least 1");
  if (nq > 0 && !queries) return vf_error_set(err, VF_EUSAGE, "search: no query vectors");
  return s->vt->search(s, vector, queries, nq, dim, k, out, err);
}

/* store_search_filtered(): see store.h. */
vf_status store_search_filtered(store *s, const char *vector, const float *queries, size_t nq,
                                int32_t dim, size_t k, const flt_filter *const *filters,
                                store_results *out, vf_error *err) {
  bool any = false;
  for (size_t i = 0; filters && i < nq && !any; i++) any = filters[i] && !flt_is_empty(filters[i]);
  if (!any) return store_search(s, vector, queries, nq, dim, k, out, err);
  memset(out, 0, sizeof *out);
  if (!s->vt->search_filtered)
    return vf_error_set(err, VF_EUNSUPPORTED, "search: the %s store cannot search with a filter",
                        s->vt->type);
  if (k == 0) return vf_error_set(err, VF_EUSAGE, "search: k must be at least 1");
  if (nq > 0 && !queries) return vf_error_set(err, VF_EUSAGE, "search: no query vectors");
  return s->vt->search_filtered(s, vector, queries, nq, dim, k, filters, out, err);
}

void store_close(store *s) {
  if (s) s->vt->close(s);
}

/* store_type(): see store.h. */
const char *store_type(const store *s) { return s->vt->type; }

/* store_retries(): see store.h. */
uint64_t store_retries(const store *s) { return s->retries; }

/* store_describe_collection(): see store.h. */
vf_status store_describe_collection(store *s, store_collection_info *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  if (strcmp(s->vt->type, "qdrant") == 0) return store_qdrant_describe(s, out, err);
  if (strcmp(s->vt->type, "local") == 0) return store_local_describe(s, out, err);
  return vf_error_set(err, VF_EUNSUPPORTED, "the %s store keeps no collections", s->vt->type);
}

/* store_drop_collection(): see store.h. */
vf_status store_drop_collection(store *s, vf_error *err) {
  if (strcmp(s->vt->type, "qdrant") == 0) return store_qdrant_drop(s, err);
  if (strcmp(s->vt->type, "local") == 0) return store_local_drop(s, err);
  return vf_error_set(err, VF_EUNSUPPORTED, "the %s store keeps no collections", s->vt->type);
}

/* store_config_from(): see store.h. */
void store_config_from(const vf_config *cfg, store_config *sc) {
  memset(sc, 0, sizeof *sc);
  const vf_cfg_vectorstore *v = &cfg->vectorstore;
  sc->type = v->type == VF_CFG_STORE_QDRANT ? "qdrant" : "local";
  sc->path = v->path ? v->path : VF_CONFIG_DEFAULT_STORE_PATH;
  sc->url = v->url;
  sc->api_key = v->api_key;
  sc->collection_name = v->collection_name;
  sc->params_json = v->params_json;
  sc->recreate = v->recreate;
  sc->upsert_wait = cfg->loader.wait;
  sc->retries_given = true;
  sc->retries = (int)(cfg->loader.retries > INT_MAX ? INT_MAX : cfg->loader.retries);
  sc->prefer_grpc = v->prefer_grpc;
  sc->grpc_port = (int)v->grpc_port;
  sc->grpc_max_message_bytes = v->grpc_max_message_mb << 20;
}
