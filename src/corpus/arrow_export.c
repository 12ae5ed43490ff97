/*
 * The record-batch stream of include/vforge/arrow.h: corpus_records batches (ids, named vectors,
 * provenance) plus the payload columns in their parquet types (arrow_payload.c), exported through
 * the Arrow C Data / C Stream interfaces.
 *
 * Why the record reader and not a second parquet path: ids, vector checks, component datasets
 * (npy / fbin / hdf5 vectors paired with parquet payload) and remote corpora are all already
 * there, so the stream sees exactly the points `load` would send.  The reader runs with
 * spec.payload_raw, so it decodes the payload columns but renders no JSON; the exporter reads
 * their leaves through corpus_records_payload_view() and keeps the rows the batch holds (its
 * file_rows: a row dropped as bad on either side never shifts another row's payload).
 *
 * Zero copy: the dense matrix, sparse indices/values, multivector floats and the physical rows
 * are moved out of the corpus_batch into the batch's holder (the reader allocates fresh ones for
 * the next row group); ids, provenance strings and payload values are built in Arrow's layouts.
 * Memory: one row group of the selected columns plus the batches the consumer still holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_internal.h"
#include "internal.h"

/* ------------------------------------------------------------------ holder */

struct ax_holder {
  _Atomic long refs;
  void **blocks;
  size_t n, cap;
};

ax_holder *ax_holder_new(void) {
  ax_holder *h = calloc(1, sizeof *h);
  if (h) atomic_init(&h->refs, 1);
  return h;
}

static bool track(ax_holder *h, void *p) {
  if (h->n == h->cap) {
    size_t nc = h->cap ? 2 * h->cap : 16;
    void **nb = realloc(h->blocks, nc * sizeof *nb);
    if (!nb) return false;
    h->blocks = nb;
    h->cap = nc;
  }
  h->blocks[h->n++] = p;
  return true;
}

bool ax_own(ax_holder *h, void *p) {
  if (!p) return false;
  if (!track(h, p)) {
    free(p);
    return false;
  }
  return true;
}

void *ax_alloc(ax_holder *h, size_t n) {
  void *p = malloc(n ? n : 1);
  return p && ax_own(h, p) ? p : NULL;
}

void *ax_calloc(ax_holder *h, size_t n) {
  void *p = calloc(1, n ? n : 1);
  return p && ax_own(h, p) ? p : NULL;
}

void ax_holder_abandon(ax_holder *h) {
  if (!h) return;
  for (size_t i = 0; i < h->n; i++) free(h->blocks[i]);
  free(h->blocks);
  free(h);
}

static void ax_unref(ax_holder *h) {
  if (atomic_fetch_sub(&h->refs, 1) == 1) ax_holder_abandon(h);
}

void ax_holder_done(ax_holder *h) {
  ax_unref(h);
}

/* Release of every node: children first (the spec makes the parent responsible for them), then
 * this node's reference. */
static void ax_array_release(struct ArrowArray *a) {
  if (!a || !a->release) return;
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i] && a->children[i]->release) a->children[i]->release(a->children[i]);
  if (a->dictionary && a->dictionary->release) a->dictionary->release(a->dictionary);
  ax_holder *h = a->private_data;
  a->release = NULL;
  ax_unref(h);
}

bool ax_array_init(ax_holder *h, struct ArrowArray *a, int64_t length, int nbuffers, int nchildren) {
  memset(a, 0, sizeof *a);
  a->length = length;
  a->n_buffers = nbuffers;
  a->n_children = nchildren;
  if (nbuffers && !(a->buffers = ax_calloc(h, sizeof(void *) * (size_t)nbuffers))) return false;
  if (nchildren && !(a->children = ax_calloc(h, sizeof(struct ArrowArray *) * (size_t)nchildren)))
    return false;
  a->release = ax_array_release;
  a->private_data = h;
  atomic_fetch_add(&h->refs, 1);
  return true;
}

static void ax_schema_release(struct ArrowSchema *s) {
  if (!s || !s->release) return;
  for (int64_t i = 0; i < s->n_children; i++)
    if (s->children[i] && s->children[i]->release) s->children[i]->release(s->children[i]);
  if (s->dictionary && s->dictionary->release) s->dictionary->release(s->dictionary);
  ax_holder *h = s->private_data;
  s->release = NULL;
  ax_unref(h);
}

/* ----------------------------------------------------------- type templates */

void ax_type_free(ax_type *t) {
  if (!t) return;
  for (int i = 0; i < t->nchildren; i++) ax_type_free(&t->children[i]);
  free(t->children);
  free(t->format);
  free(t->name);
  free(t->metadata);
  memset(t, 0, sizeof *t);
}

vf_status ax_type_set(ax_type *t, const char *format, const char *name, int64_t flags,
                      vf_error *err) {
  free(t->format);
  free(t->name);
  t->format = vf_strdup(format);
  t->name = vf_strdup(name ? name : "");
  t->flags = flags;
  if (!t->format || !t->name) return vf_error_set(err, VF_ENOMEM, "out of memory");
  return VF_OK;
}

vf_status ax_type_children(ax_type *t, int n, vf_error *err) {
  t->children = vf_calloc((size_t)n + 1, sizeof *t->children);
  if (!t->children) return vf_error_set(err, VF_ENOMEM, "out of memory");
  t->nchildren = n;
  return VF_OK;
}

static void put_i32(vf_buf *b, int32_t v) {
  vf_buf_put(b, &v, 4);
}

vf_status ax_type_metadata(ax_type *t, const char *const *kv, int n, vf_error *err) {
  vf_buf b;
  vf_buf_init(&b, 1 << 20);
  size_t need = 4;
  for (int i = 0; i < 2 * n; i++) need += 4 + strlen(kv[i]);
  vf_status st = vf_buf_reserve(&b, need, err);
  if (st != VF_OK) return st;
  put_i32(&b, n);
  for (int i = 0; i < 2 * n; i++) {
    size_t l = strlen(kv[i]);
    put_i32(&b, (int32_t)l);
    vf_buf_put(&b, kv[i], l);
  }
  free(t->metadata);
  t->metadata = (char *)vf_buf_take(&b, &t->metadata_len);
  return VF_OK;
}

bool ax_type_equal(const ax_type *a, const ax_type *b) {
  if (strcmp(a->format, b->format) != 0 || strcmp(a->name, b->name) != 0 || a->flags != b->flags ||
      a->nchildren != b->nchildren)
    return false;
  for (int i = 0; i < a->nchildren; i++)
    if (!ax_type_equal(&a->children[i], &b->children[i])) return false;
  return true;
}

static size_t describe(const ax_type *t, char *out, size_t cap, size_t at) {
  int w = snprintf(out + at, at < cap ? cap - at : 0, "%s%s", t->format,
                   t->flags & ARROW_FLAG_NULLABLE ? "?" : "");
  at += w > 0 ? (size_t)w : 0;
  if (t->nchildren) {
    if (at + 1 < cap) out[at] = '<';
    at++;
    for (int i = 0; i < t->nchildren; i++) {
      if (i) {
        if (at + 1 < cap) out[at] = ',';
        at++;
      }
      at = describe(&t->children[i], out, cap, at);
    }
    if (at + 1 < cap) out[at] = '>';
    at++;
  }
  if (at < cap) out[at] = 0;
  return at;
}

void ax_type_describe(const ax_type *t, char *out, size_t cap) {
  if (!cap) return;
  out[0] = 0;
  describe(t, out, cap, 0);
  out[cap - 1] = 0;
}

static char *hdup(ax_holder *h, const char *s, size_t n) {
  char *p = ax_alloc(h, n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

static bool schema_node(ax_holder *h, const ax_type *t, struct ArrowSchema *s) {
  memset(s, 0, sizeof *s);
  s->format = hdup(h, t->format, strlen(t->format));
  s->name = hdup(h, t->name, strlen(t->name));
  if (!s->format || !s->name) return false;
  if (t->metadata && !(s->metadata = hdup(h, t->metadata, t->metadata_len))) return false;
  s->flags = t->flags;
  s->n_children = t->nchildren;
  if (t->nchildren) {
    s->children = ax_calloc(h, sizeof(struct ArrowSchema *) * (size_t)t->nchildren);
    if (!s->children) return false;
  }
  for (int i = 0; i < t->nchildren; i++) {
    struct ArrowSchema *c = ax_calloc(h, sizeof *c);
    if (!c || !schema_node(h, &t->children[i], c)) return false;
    s->children[i] = c;
  }
  s->release = ax_schema_release;
  s->private_data = h;
  atomic_fetch_add(&h->refs, 1);
  return true;
}

vf_status ax_type_export(const ax_type *t, struct ArrowSchema *out, vf_error *err) {
  ax_holder *h = ax_holder_new();
  if (!h || !schema_node(h, t, out)) {
    memset(out, 0, sizeof *out);
    ax_holder_abandon(h);
    return vf_error_set(err, VF_ENOMEM, "out of memory for a schema");
  }
  ax_holder_done(h);
  return VF_OK;
}

/* ------------------------------------------------------------------ reader */

typedef enum fkind { F_ID = 0, F_VEC, F_PAY, F_FILE, F_ROW } fkind;

typedef struct ax_field {
  fkind kind;
  int index; /* F_VEC: spec vector; F_PAY: spec payload */
} ax_field;

typedef struct ax_reader {
  corpus_source src;
  corpus_record_spec spec;
  corpus_vec_source *vecs;
  corpus_payload_source *pays;
  char **names; /* owned column names (a parquet URI) */
  int nnames;
  corpus_idexpr *own_id;
  bool distances; /* the vectors' distances are known (a config) */
  bool auto_vectors; /* a parquet URI whose vector columns were found by their shape */
  ax_field *fields;
  int nfields;
  bool with_id, provenance;
  /* position */
  size_t fi;
  corpus_records *rr;
  int rg, nrg;
  uint64_t base;
  corpus_batch bt;
  uint8_t *keep;
  size_t keep_cap;
  /* schema */
  ax_type type;
  bool have_type;
  int32_t *dims; /* per spec vector (dense, multi) */
  int id_uuid;   /* 1 UUID ids, 0 integer ids */
  size_t typed_file; /* the last file whose payload types were checked (+1) */
  char *type_file;   /* the file the schema was taken from */
  /* the first batch, read at open */
  struct ArrowArray pending;
  bool has_pending, done;
  vf_status last_st;
  char last_error[VF_ERROR_MSG_MAX];
} ax_reader;

static const char *dist_word(corpus_distance d) {
  static const char *const w[] = {"cosine", "dot", "euclid", "manhattan"};
  return (unsigned)d < 4 ? w[d] : "cosine";
}

static const char *kind_word(corpus_vec_kind k) {
  return k == CORPUS_VEC_SPARSE ? "sparse" : k == CORPUS_VEC_MULTI ? "multivector" : "dense";
}

/* The type of one vector field. */
static vf_status vec_type(const ax_reader *r, int vi, ax_type *t, vf_error *err) {
  const corpus_vec_source *v = &r->spec.vectors[vi];
  char fmt[32];
  vf_status st;
  int32_t dim = r->dims[vi];
  if (v->kind == CORPUS_VEC_DENSE) {
    snprintf(fmt, sizeof fmt, "+w:%d", (int)dim);
    if ((st = ax_type_set(t, fmt, v->name, 0, err)) != VF_OK ||
        (st = ax_type_children(t, 1, err)) != VF_OK ||
        (st = ax_type_set(&t->children[0], "f", "item", ARROW_FLAG_NULLABLE, err)) != VF_OK)
      return st;
  } else if (v->kind == CORPUS_VEC_MULTI) {
    snprintf(fmt, sizeof fmt, "+w:%d", (int)dim);
    if ((st = ax_type_set(t, "+l", v->name, 0, err)) != VF_OK ||
        (st = ax_type_children(t, 1, err)) != VF_OK ||
        (st = ax_type_set(&t->children[0], fmt, "item", ARROW_FLAG_NULLABLE, err)) != VF_OK ||
        (st = ax_type_children(&t->children[0], 1, err)) != VF_OK ||
        (st = ax_type_set(&t->children[0].children[0], "f", "item", ARROW_FLAG_NULLABLE, err)) != VF_OK)
      return st;
  } else {
    if ((st = ax_type_set(t, "+s", v->name, 0, err)) != VF_OK ||
        (st = ax_type_children(t, 2, err)) != VF_OK)
      return st;
    static const char *const names[2] = {"indices", "values"}, *const leaf[2] = {"I", "f"};
    for (int i = 0; i < 2; i++) {
      ax_type *c = &t->children[i];
      if ((st = ax_type_set(c, "+l", names[i], ARROW_FLAG_NULLABLE, err)) != VF_OK ||
          (st = ax_type_children(c, 1, err)) != VF_OK ||
          (st = ax_type_set(&c->children[0], leaf[i], "item", ARROW_FLAG_NULLABLE, err)) != VF_OK)
        return st;
    }
  }
  const char *kv[4] = {"vforge.vector", kind_word(v->kind), "vforge.distance",
                       dist_word(v->distance)};
  return ax_type_metadata(t, kv, r->distances ? 2 : 1, err);
}

/* The payload source's top-level node in the file the payload view reads. */
static vf_status pay_top(const corpus_payload_view *pv, const corpus_payload_source *p, int *top,
                         vf_error *err) {
  *top = pqt_find_top(pv->f, p->column);
  if (*top < 0) return corpus_missing_column(pv->f, p->column, err);
  return VF_OK;
}

/* The batch schema from the first batch (dims, id kind) and its file (payload types). */
static vf_status build_type(ax_reader *r, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(ax_type_set(&r->type, "+s", "", 0, err));
  VF_TRY(ax_type_children(&r->type, r->nfields, err));
  corpus_payload_view pv;
  bool have_pv = r->rr && corpus_records_payload_view(r->rr, &pv);
  for (int i = 0; i < r->nfields; i++) {
    const ax_field *f = &r->fields[i];
    ax_type *t = &r->type.children[i];
    switch (f->kind) {
    case F_ID: VF_TRY(ax_type_set(t, r->id_uuid ? "u" : "L", "__id__", 0, err)); break;
    case F_VEC: VF_TRY(vec_type(r, f->index, t, err)); break;
    case F_PAY: {
      int top = -1;
      if (!have_pv)
        VF_FAIL(vf_error_set(err, VF_EINTERNAL, "payload field '%s' without a parquet file",
                             r->spec.payload[f->index].key));
      VF_TRY(pay_top(&pv, &r->spec.payload[f->index], &top, err));
      VF_TRY(axp_type(pv.f, top, r->spec.payload[f->index].key, t, err));
      break;
    }
    case F_FILE: VF_TRY(ax_type_set(t, "u", "__source_file__", 0, err)); break;
    default: VF_TRY(ax_type_set(t, "l", "__source_row__", 0, err)); break;
    }
  }
  r->have_type = true;
  r->typed_file = r->fi + 1;
  free(r->type_file);
  r->type_file = vf_strdup(r->src.files.n ? r->src.files.files[r->fi < r->src.files.n ? r->fi : 0].key : "");
out:
  return st;
}

/* A later file must give every payload column the type the schema has. */
static vf_status check_file_types(ax_reader *r, vf_error *err) {
  if (r->typed_file == r->fi + 1) return VF_OK;
  corpus_payload_view pv;
  bool have_pv = corpus_records_payload_view(r->rr, &pv);
  vf_status st = VF_OK;
  ax_type t; /* one column's type at a time */
  memset(&t, 0, sizeof t);
  for (int i = 0; i < r->nfields; i++) {
    const ax_field *f = &r->fields[i];
    if (f->kind != F_PAY || !have_pv) continue;
    int top = -1;
    VF_TRY(pay_top(&pv, &r->spec.payload[f->index], &top, err));
    VF_TRY(axp_type(pv.f, top, r->spec.payload[f->index].key, &t, err));
    if (!ax_type_equal(&t, &r->type.children[i])) {
      char a[256], b[256];
      ax_type_describe(&t, a, sizeof a);
      ax_type_describe(&r->type.children[i], b, sizeof b);
      VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                           "%s: column '%s' has Arrow type %s here but %s in %s (every file of a "
                           "stream must give a column the same type)",
                           r->src.files.files[r->fi].key, r->spec.payload[f->index].column, a, b,
                           r->type_file ? r->type_file : "the first file"));
    }
    ax_type_free(&t);
  }
  r->typed_file = r->fi + 1;
out:
  ax_type_free(&t);
  return st;
}

/* dims and id kind of a batch against the schema */
static vf_status check_batch(ax_reader *r, vf_error *err) {
  const corpus_batch *b = &r->bt;
  const char *key = r->src.files.files[r->fi].key;
  for (int i = 0; i < r->spec.nvectors; i++) {
    corpus_vec_kind k = r->spec.vectors[i].kind;
    if (k == CORPUS_VEC_SPARSE) continue;
    if (!r->have_type) {
      r->dims[i] = b->vectors[i].dim;
    } else if (b->vectors[i].dim != r->dims[i]) {
      return vf_error_set(err, VF_ECORRUPT, "%s: vector '%s' has dimension %d, earlier rows %d",
                          key, r->spec.vectors[i].name, (int)b->vectors[i].dim, (int)r->dims[i]);
    }
  }
  int want = r->have_type ? r->id_uuid : b->ids[0].is_uuid;
  for (size_t k = 0; k < b->n; k++)
    if ((int)b->ids[k].is_uuid != want)
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: row %" PRIu64 ": the id expression gives %s ids here but %s "
                          "before (one stream holds one id type)",
                          key, b->file_rows[k], b->ids[k].is_uuid ? "UUID" : "integer",
                          want ? "UUID" : "integer");
  r->id_uuid = want;
  return VF_OK;
}

static vf_status oom(vf_error *err) {
  return vf_error_set(err, VF_ENOMEM, "out of memory building a record batch");
}

/* a primitive child: `data` already tracked by h */
static bool prim_child(ax_holder *h, struct ArrowArray *a, int64_t n, const void *data) {
  if (!ax_array_init(h, a, n, 2, 0)) return false;
  a->buffers[1] = data;
  return true;
}

/* steal a batch buffer into the holder */
static const void *steal(ax_holder *h, void **p, size_t min_bytes) {
  void *q = *p;
  *p = NULL;
  if (!q) q = calloc(1, min_bytes ? min_bytes : 1);
  return q && ax_own(h, q) ? q : NULL;
}

static int32_t *offsets32(ax_holder *h, const int64_t *o, size_t n, vf_error *err) {
  if (o && o[n] > INT32_MAX) {
    vf_error_set(err, VF_EUNSUPPORTED, "more than 2^31 vector elements in one row group");
    return NULL;
  }
  int32_t *p = ax_alloc(h, sizeof(int32_t) * (n + 1));
  if (!p) {
    oom(err);
    return NULL;
  }
  for (size_t i = 0; i <= n; i++) p[i] = o ? (int32_t)o[i] : 0;
  return p;
}

static vf_status vec_array(ax_holder *h, corpus_vec_batch *v, size_t n, struct ArrowArray *a,
                           vf_error *err) {
  size_t dim = v->dim > 0 ? (size_t)v->dim : 0;
  int64_t nulls = 0;
  uint8_t *valid = NULL;
  if (v->null_rows) {
    valid = ax_alloc(h, (n + 7) / 8 + 1);
    if (!valid) return oom(err);
    memset(valid, 0xff, (n + 7) / 8 + 1);
    for (size_t i = 0; i < n; i++)
      if (v->null_rows[i]) {
        valid[i >> 3] = (uint8_t)(valid[i >> 3] & ~(1u << (i & 7)));
        nulls++;
      }
  }
  if (v->kind == CORPUS_VEC_DENSE) {
    const void *data = steal(h, (void **)&v->dense, sizeof(float));
    struct ArrowArray *c = ax_calloc(h, sizeof *c);
    if (!data || !c || !ax_array_init(h, a, (int64_t)n, 1, 1) ||
        !prim_child(h, c, (int64_t)(n * dim), data))
      return oom(err);
    a->buffers[0] = valid;
    a->null_count = nulls;
    a->children[0] = c;
    return VF_OK;
  }
  int32_t *offs = offsets32(h, v->offsets, n, err);
  if (!offs) return err ? err->code : VF_ENOMEM;
  size_t total = v->offsets ? (size_t)v->offsets[n] : 0;
  if (v->kind == CORPUS_VEC_MULTI) {
    const void *data = steal(h, (void **)&v->multi, sizeof(float));
    struct ArrowArray *fsl = ax_calloc(h, sizeof *fsl), *c = ax_calloc(h, sizeof *c);
    if (!data || !fsl || !c || !ax_array_init(h, a, (int64_t)n, 2, 1) ||
        !ax_array_init(h, fsl, (int64_t)total, 1, 1) || !prim_child(h, c, (int64_t)(total * dim), data))
      return oom(err);
    a->buffers[0] = valid;
    a->buffers[1] = offs;
    a->null_count = nulls;
    a->children[0] = fsl;
    fsl->children[0] = c;
    return VF_OK;
  }
  const void *idx = steal(h, (void **)&v->indices, sizeof(uint32_t));
  const void *val = steal(h, (void **)&v->values, sizeof(float));
  if (!idx || !val || !ax_array_init(h, a, (int64_t)n, 1, 2)) return oom(err);
  a->buffers[0] = valid;
  a->null_count = nulls;
  const void *leaf[2] = {idx, val};
  for (int i = 0; i < 2; i++) {
    struct ArrowArray *l = ax_calloc(h, sizeof *l), *c = ax_calloc(h, sizeof *c);
    if (!l || !c || !ax_array_init(h, l, (int64_t)n, 2, 1) || !prim_child(h, c, (int64_t)total, leaf[i]))
      return oom(err);
    l->buffers[1] = offs; /* both lists share the offsets */
    l->children[0] = c;
    a->children[i] = l;
  }
  return VF_OK;
}

/* n strings of fixed width from `text(i)` as utf8 */
static vf_status utf8_fixed(ax_holder *h, size_t n, size_t w, const char *(*text)(const void *, size_t),
                            const void *user, struct ArrowArray *a, vf_error *err) {
  if (n * w > INT32_MAX) return vf_error_set(err, VF_EUNSUPPORTED, "more than 2 GiB of strings in one batch");
  int32_t *offs = ax_alloc(h, sizeof(int32_t) * (n + 1));
  char *data = ax_alloc(h, n * w + 1);
  if (!offs || !data || !ax_array_init(h, a, (int64_t)n, 3, 0)) return oom(err);
  for (size_t i = 0; i <= n; i++) offs[i] = (int32_t)(i * w);
  for (size_t i = 0; i < n; i++) memcpy(data + i * w, text(user, i), w);
  a->buffers[1] = offs;
  a->buffers[2] = data;
  return VF_OK;
}

static const char *uuid_text(const void *user, size_t i) {
  return ((const corpus_id *)user)[i].uuid;
}

static const char *key_text(const void *user, size_t i) {
  (void)i;
  return user;
}

/* The rows of the batch that came from row group rg (keep mask for the payload leaves). */
static vf_status keep_mask(ax_reader *r, int rg, int64_t *rows, const uint8_t **keep, vf_error *err) {
  uint64_t first = corpus_records_row_group_first(r->rr, rg);
  uint64_t end = corpus_records_row_group_first(r->rr, rg + 1);
  *rows = (int64_t)(end - first);
  *keep = NULL;
  if (r->bt.n == (size_t)(end - first)) return VF_OK;
  if ((size_t)*rows + 1 > r->keep_cap) {
    uint8_t *k = vf_realloc(r->keep, (size_t)*rows + 1);
    if (!k) return oom(err);
    r->keep = k;
    r->keep_cap = (size_t)*rows + 1;
  }
  memset(r->keep, 0, (size_t)*rows + 1);
  for (size_t i = 0; i < r->bt.n; i++) {
    uint64_t fr = r->bt.file_rows[i];
    if (fr < first || fr >= end)
      return vf_error_set(err, VF_EINTERNAL, "row %" PRIu64 " outside row group %d", fr, rg);
    r->keep[fr - first] = 1;
  }
  *keep = r->keep;
  return VF_OK;
}

static vf_status batch_array(ax_reader *r, int rg, struct ArrowArray *out, vf_error *err) {
  corpus_batch *b = &r->bt;
  size_t n = b->n;
  ax_holder *h = ax_holder_new();
  if (!h) return oom(err);
  vf_status st = VF_OK;
  int64_t rows = 0;
  const uint8_t *keep = NULL;
  corpus_payload_view pv;
  bool have_pv = corpus_records_payload_view(r->rr, &pv);
  if (!ax_array_init(h, out, (int64_t)n, 1, r->nfields)) VF_FAIL(oom(err));
  VF_TRY(keep_mask(r, rg, &rows, &keep, err));
  for (int i = 0; i < r->nfields; i++) {
    const ax_field *f = &r->fields[i];
    struct ArrowArray *c = ax_calloc(h, sizeof *c);
    if (!c) VF_FAIL(oom(err));
    out->children[i] = c;
    switch (f->kind) {
    case F_ID:
      if (r->id_uuid) {
        VF_TRY(utf8_fixed(h, n, 36, uuid_text, b->ids, c, err));
      } else {
        uint64_t *v = ax_alloc(h, sizeof(uint64_t) * (n ? n : 1));
        if (!v || !prim_child(h, c, (int64_t)n, v)) VF_FAIL(oom(err));
        for (size_t k = 0; k < n; k++) v[k] = b->ids[k].num;
      }
      break;
    case F_VEC: VF_TRY(vec_array(h, &b->vectors[f->index], n, c, err)); break;
    case F_PAY: {
      int top = -1;
      if (!have_pv) VF_FAIL(vf_error_set(err, VF_EINTERNAL, "payload without a parquet file"));
      VF_TRY(pay_top(&pv, &r->spec.payload[f->index], &top, err));
      VF_TRY(axp_array(pv.f, top, pv.data, pv.leaf_ids, pv.nleaves, rows, keep, h, c, err));
      break;
    }
    case F_FILE: VF_TRY(utf8_fixed(h, n, strlen(b->file_key), key_text, b->file_key, c, err)); break;
    default: break; /* F_ROW: below, once nothing needs file_rows any more */
    }
  }
  for (int i = 0; i < r->nfields; i++) {
    if (r->fields[i].kind != F_ROW) continue;
    const void *rowsbuf = steal(h, (void **)&b->file_rows, sizeof(uint64_t)); /* uint64 < 2^63 */
    if (!rowsbuf || !prim_child(h, out->children[i], (int64_t)n, rowsbuf)) VF_FAIL(oom(err));
  }
  ax_holder_done(h);
out:
  if (st != VF_OK) {
    memset(out, 0, sizeof *out);
    ax_holder_abandon(h);
  }
  return st;
}

/* The next non-empty batch into `out` (released = end of the stream). */
static vf_status next_batch(ax_reader *r, struct ArrowArray *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  vf_status st;
  for (;;) {
    if (!r->rr) {
      if (r->fi >= r->src.files.n) {
        r->done = true;
        return VF_OK;
      }
      st = corpus_records_open(&r->src.files.files[r->fi], &r->spec, r->base, &r->rr, err);
      if (st != VF_OK) return st;
      r->rg = 0;
      r->nrg = corpus_records_row_groups(r->rr);
    }
    if (r->rg >= r->nrg) {
      r->base += corpus_records_rows(r->rr);
      corpus_records_close(r->rr);
      r->rr = NULL;
      r->fi++;
      continue;
    }
    if ((st = vf_check_cancel(err)) != VF_OK) return st;
    int rg = r->rg++;
    uint64_t skipped = 0;
    st = corpus_records_read(r->rr, rg, corpus_records_row_group_first(r->rr, rg), &r->bt,
                             &skipped, err);
    if (st == VF_ECORRUPT && r->auto_vectors && err) {
      char msg[VF_ERROR_MSG_MAX];
      memcpy(msg, err->msg, sizeof msg);
      vf_error_set(err, st, "%.880s (the columns of a vector shape are read as vectors; name the "
                   "ones that are with vectors=[...])", msg);
    }
    if (st != VF_OK) return st;
    if (r->bt.n == 0) continue;
    if ((st = check_batch(r, err)) != VF_OK) return st;
    if (!r->have_type) st = build_type(r, err);
    else st = check_file_types(r, err);
    if (st != VF_OK) return st;
    return batch_array(r, rg, out, err);
  }
}

static ax_reader *reader_of(struct ArrowArrayStream *s);

static int ax_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  ax_reader *r = reader_of(s);
  vf_error err;
  vf_error_clear(&err);
  vf_status st = ax_type_export(&r->type, out, &err);
  if (st != VF_OK) {
    r->last_st = st;
    snprintf(r->last_error, sizeof r->last_error, "%s", err.msg);
  }
  return vf_arrow_status_errno(st);
}

static vf_status reader_next(ax_reader *r, struct ArrowArray *out, vf_error *err) {
  if (r->last_st != VF_OK) {
    memset(out, 0, sizeof *out);
    return vf_error_set(err, r->last_st, "%s", r->last_error);
  }
  if (r->has_pending) {
    *out = r->pending;
    memset(&r->pending, 0, sizeof r->pending);
    r->has_pending = false;
    return VF_OK;
  }
  if (r->done) {
    memset(out, 0, sizeof *out);
    return VF_OK;
  }
  vf_status st = next_batch(r, out, err);
  if (st != VF_OK) {
    r->last_st = st;
    snprintf(r->last_error, sizeof r->last_error, "%s", err->msg);
  }
  return st;
}

static int ax_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  vf_error err;
  vf_error_clear(&err);
  return vf_arrow_status_errno(reader_next(reader_of(s), out, &err));
}

static const char *ax_get_last_error(struct ArrowArrayStream *s) {
  ax_reader *r = reader_of(s);
  return r->last_st != VF_OK ? r->last_error : NULL;
}

static void reader_free(ax_reader *r) {
  if (!r) return;
  if (r->has_pending && r->pending.release) r->pending.release(&r->pending);
  corpus_records_close(r->rr);
  corpus_batch_free(&r->bt);
  corpus_source_close(&r->src);
  free(r->vecs);
  free(r->pays);
  for (int i = 0; i < r->nnames; i++) free(r->names[i]);
  free(r->names);
  corpus_idexpr_free(r->own_id);
  free(r->fields);
  free(r->keep);
  free(r->dims);
  free(r->type_file);
  ax_type_free(&r->type);
  free(r);
}

static void ax_release(struct ArrowArrayStream *s) {
  if (!s || !s->release) return;
  reader_free(s->private_data);
  s->release = NULL;
  s->private_data = NULL;
}

static ax_reader *reader_of(struct ArrowArrayStream *s) {
  return s->private_data;
}

/* ------------------------------------------------------------------- open */

static bool in_list(const char *const *l, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcmp(l[i], s) == 0) return true;
  return false;
}

static char *own_name(ax_reader *r, const char *s) {
  char **nn = vf_realloc(r->names, sizeof *nn * (size_t)(r->nnames + 1));
  if (!nn) return NULL;
  r->names = nn;
  char *d = vf_strdup(s);
  if (d) r->names[r->nnames++] = d;
  return d;
}

static vf_status add_field(ax_reader *r, fkind k, int index, vf_error *err) {
  ax_field *f = vf_realloc(r->fields, sizeof *f * (size_t)(r->nfields + 1));
  if (!f) return oom(err);
  r->fields = f;
  r->fields[r->nfields++] = (ax_field){k, index};
  return VF_OK;
}

/* A parquet URI: vectors and payload from the first file's schema. */
static vf_status plan_parquet(ax_reader *r, const vf_arrow_opts *o, vf_error *err) {
  io_source *src = NULL;
  pqt_file *f = NULL;
  vf_status st = corpus_open(&r->src.files.files[0], &src, err);
  if (st != VF_OK) return st;
  st = pqt_open(src, NULL, &f, err);
  if (st != VF_OK) return st;
  int nv = 0, np = 0;
  const pqt_schema *sc = pqt_schema_of(f);
  int n = o->ncolumns > 0 ? o->ncolumns : sc->ntop;
  r->vecs = vf_calloc((size_t)n + 1, sizeof *r->vecs);
  r->pays = vf_calloc((size_t)n + 1, sizeof *r->pays);
  if (!r->vecs || !r->pays) VF_FAIL(oom(err));
  for (int i = 0; o->vectors_given && i < o->nvectors; i++)
    if (pqt_find_top(f, o->vectors[i]) < 0) VF_FAIL(corpus_missing_column(f, o->vectors[i], err));
  for (int i = 0; i < n; i++) {
    int top = o->ncolumns > 0 ? pqt_find_top(f, o->columns[i]) : sc->top[i];
    if (top < 0) VF_FAIL(corpus_missing_column(f, o->columns[i], err));
    char *name = own_name(r, sc->nodes[top].name);
    if (!name) VF_FAIL(oom(err));
    int kind = corpus_vec_kind_of(f, top);
    bool vec;
    if (o->vectors_given) {
      vec = in_list(o->vectors, o->nvectors, name);
      if (vec && kind != CORPUS_VEC_DENSE && kind != CORPUS_VEC_SPARSE)
        VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: column '%s' is not a dense (list<float>, FLBA) or "
                             "sparse (struct{indices, values}) vector column", pqt_name(f), name));
    } else {
      vec = kind == CORPUS_VEC_DENSE || kind == CORPUS_VEC_SPARSE;
    }
    if (vec) {
      r->vecs[nv] = (corpus_vec_source){name, (corpus_vec_kind)kind, CORPUS_COSINE, name};
      VF_TRY(add_field(r, F_VEC, nv++, err));
    } else {
      r->pays[np] = (corpus_payload_source){name, name};
      VF_TRY(add_field(r, F_PAY, np++, err));
    }
  }
  for (int i = 0; o->vectors_given && i < o->nvectors; i++) {
    bool selected = false;
    for (int j = 0; j < nv; j++) selected |= strcmp(r->vecs[j].name, o->vectors[i]) == 0;
    if (!selected)
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "vectors: column '%s' is not among the selected columns",
                           o->vectors[i]));
  }
out:
  pqt_close(f);
  r->auto_vectors = !o->vectors_given && nv > 0;
  r->spec.vectors = r->vecs;
  r->spec.nvectors = nv;
  r->spec.payload = r->pays;
  r->spec.npayload = np;
  return st;
}

static vf_status plan_fields(ax_reader *r, const vf_arrow_opts *o, const corpus_record_spec *all,
                             vf_error *err);

/* A dataset without payload_fields stores every column of its payload component (the dataset
 * reader's own list): ask a reader of the first part for it. */
static vf_status dataset_payload(ax_reader *r, corpus_payload_source **out, int *n, vf_error *err) {
  *out = NULL;
  *n = 0;
  corpus_record_spec spec = r->src.spec;
  spec.payload_raw = true;
  corpus_records *rr = NULL;
  vf_status st = VF_OK;
  VF_TRY(corpus_records_open(&r->src.files.files[0], &spec, 0, &rr, err));
  corpus_payload_view pv;
  if (corpus_records_payload_view(rr, &pv) && pv.npayload > 0) {
    *out = vf_calloc((size_t)pv.npayload, sizeof **out);
    if (!*out) VF_FAIL(oom(err));
    for (int i = 0; i < pv.npayload; i++) {
      char *name = own_name(r, pv.payload[i].column);
      if (!name) VF_FAIL(oom(err));
      (*out)[(*n)++] = (corpus_payload_source){name, name};
    }
  }
out:
  corpus_records_close(rr);
  return st;
}

/* A config or a vector file: its vectors and payload fields, or those `columns` names. */
static vf_status plan_records(ax_reader *r, const vf_arrow_opts *o, vf_error *err) {
  corpus_record_spec allspec = r->src.spec;
  const corpus_record_spec *all = &allspec;
  if (o->vectors_given)
    return vf_error_set(err, VF_EUSAGE, "vectors= applies to parquet corpora (a config's `vectors:` "
                        "says which columns are vectors)");
  corpus_payload_source *dsp = NULL;
  if (all->npayload == 0 && r->src.files.n && r->src.files.files[0].dataset) {
    int ndsp = 0;
    vf_status dst = dataset_payload(r, &dsp, &ndsp, err);
    if (dst != VF_OK) return dst;
    allspec.payload = dsp;
    allspec.npayload = ndsp;
  }
  vf_status st = plan_fields(r, o, all, err);
  free(dsp);
  return st;
}

static vf_status plan_fields(ax_reader *r, const vf_arrow_opts *o, const corpus_record_spec *all,
                             vf_error *err) {
  int n = o->ncolumns > 0 ? o->ncolumns : all->nvectors + all->npayload;
  r->vecs = vf_calloc((size_t)n + 1, sizeof *r->vecs);
  r->pays = vf_calloc((size_t)n + 1, sizeof *r->pays);
  if (!r->vecs || !r->pays) return oom(err);
  int nv = 0, np = 0;
  vf_status st = VF_OK;
  for (int i = 0; i < n; i++) {
    int vi = -1, pi = -1;
    if (o->ncolumns > 0) {
      for (int j = 0; j < all->nvectors && vi < 0; j++)
        if (strcmp(all->vectors[j].name, o->columns[i]) == 0) vi = j;
      for (int j = 0; j < all->npayload && vi < 0 && pi < 0; j++)
        if (strcmp(all->payload[j].key, o->columns[i]) == 0) pi = j;
      if (vi < 0 && pi < 0) {
        vf_buf names;
        vf_buf_init(&names, 4096);
        for (int j = 0; j < all->nvectors; j++)
          vf_buf_printf(&names, NULL, "%s%s", names.len ? ", " : "", all->vectors[j].name);
        for (int j = 0; j < all->npayload; j++)
          vf_buf_printf(&names, NULL, "%s%s", names.len ? ", " : "", all->payload[j].key);
        vf_buf_append(&names, "", 1, NULL);
        st = vf_error_set(err, VF_ENOTFOUND, "%s: no vector or payload field '%s' (it has: %s)",
                          r->src.cfg.name ? r->src.cfg.name : "config", o->columns[i],
                          names.data ? (const char *)names.data : "");
        vf_buf_free(&names);
        goto out;
      }
    } else if (i < all->nvectors) {
      vi = i;
    } else {
      pi = i - all->nvectors;
    }
    if (vi >= 0) {
      r->vecs[nv] = all->vectors[vi];
      VF_TRY(add_field(r, F_VEC, nv++, err));
    } else {
      r->pays[np] = all->payload[pi];
      VF_TRY(add_field(r, F_PAY, np++, err));
    }
  }
out:
  r->spec.vectors = r->vecs;
  r->spec.nvectors = nv;
  r->spec.payload = r->pays;
  r->spec.npayload = np;
  r->distances = true;
  return st;
}

void vf_arrow_opts_default(vf_arrow_opts *o) {
  memset(o, 0, sizeof *o);
  o->with_id = true;
  o->provenance = true;
}

int vf_arrow_status_errno(vf_status st) {
  switch (st) {
  case VF_OK: return 0;
  case VF_ENOMEM: return ENOMEM;
  case VF_ECANCELED: return EINTR;
  case VF_ENOTFOUND: return ENOENT;
  case VF_EIO:
  case VF_ENET:
  case VF_EINTERNAL: return EIO;
  default: return EINVAL;
  }
}

/* vf_arrow_open(): see arrow.h. */
vf_status vf_arrow_open(const char *uri, const vf_arrow_opts *opts, struct ArrowArrayStream *out,
                        vf_error *err) {
  memset(out, 0, sizeof *out);
  vf_arrow_opts dflt;
  vf_arrow_opts_default(&dflt);
  const vf_arrow_opts *o = opts ? opts : &dflt;
  if (o->ncolumns < 0 || o->nvectors < 0 || (o->ncolumns && !o->columns) || (o->nvectors && !o->vectors))
    return vf_error_set(err, VF_EUSAGE, "arrow: bad column counts");
  ax_reader *r = vf_calloc(1, sizeof *r);
  if (!r) return oom(err);
  r->with_id = o->with_id;
  r->provenance = o->provenance;
  corpus_source_opts so = {.id_root = o->id_root, .all_vectors = true};
  vf_status st = VF_OK;
  VF_TRY(corpus_source_open(uri, &so, &r->src, err));
  if (r->with_id) VF_TRY(add_field(r, F_ID, 0, err));
  VF_TRY(r->src.records ? plan_records(r, o, err) : plan_parquet(r, o, err));
  if (r->provenance) VF_TRY(add_field(r, F_FILE, 0, err));
  if (r->provenance) VF_TRY(add_field(r, F_ROW, 0, err));
  if (o->id_expression) {
    st = corpus_idexpr_parse(o->id_expression, &r->own_id, err);
    if (st != VF_OK) {
      vf_error_prefix(err, "id expression: ");
      goto out;
    }
  }
  r->spec.id = r->own_id ? r->own_id : r->src.records ? r->src.id : NULL;
  r->spec.skip_bad_rows = o->skip_bad_rows;
  r->spec.payload_raw = true;
  r->id_uuid = 1;
  r->dims = vf_calloc((size_t)r->spec.nvectors + 1, sizeof *r->dims);
  if (!r->dims) VF_FAIL(oom(err));
  /* the first batch now: errors surface at open, and the schema needs its dims and id type */
  VF_TRY(next_batch(r, &r->pending, err));
  r->has_pending = r->pending.release != NULL;
  if (!r->have_type) {
    /* no rows at all: the schema from the first file (dimensions unknown: 0) */
    r->fi = 0;
    corpus_records_close(r->rr);
    r->rr = NULL;
    VF_TRY(corpus_records_open(&r->src.files.files[0], &r->spec, 0, &r->rr, err));
    VF_TRY(build_type(r, err)); /* r->rr is closed by reader_free on failure */
    corpus_records_close(r->rr);
    r->rr = NULL;
    r->fi = r->src.files.n;
  }
  out->get_schema = ax_get_schema;
  out->get_next = ax_get_next;
  out->get_last_error = ax_get_last_error;
  out->release = ax_release;
  out->private_data = r;
out:
  if (st != VF_OK) reader_free(r);
  return st;
}

/* vf_arrow_next(): see arrow.h. */
vf_status vf_arrow_next(struct ArrowArrayStream *s, struct ArrowArray *out, vf_error *err) {
  if (!s || s->get_next != ax_get_next || !s->release)
    return vf_error_set(err, VF_EUSAGE, "arrow: not an open vforge stream");
  return reader_next(reader_of(s), out, err);
}
