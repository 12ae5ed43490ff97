/*
 * pqt_arrow_schema.c — the "ARROW:schema" footer entry of the parquet writer: a minimal
 * flatbuffers builder and the Arrow IPC Schema message it serialises (base64) for the writer's
 * columns, so arrow readers restore FixedSizeList<float>[dim] for VECTOR columns.  Split out of
 * pqt_writer.c, which is left with the parquet format itself; the column state it reads is
 * pqt_writer_internal.h's.
 */
#include <stdlib.h>

#include "format/pqt_writer_internal.h"

/* ------------------------------------------------------ ARROW:schema (arrow hint) */

/* Arrow readers (arrow-rs, pyarrow) restore arrow types from the footer key "ARROW:schema": the
 * base64 of an encapsulated Arrow IPC message (0xFFFFFFFF, int32 length, flatbuffer Message
 * whose header is a Schema; arrow/format/Message.fbs, Schema.fbs; docs "IPC Streaming Format").
 * It is written when a VECTOR column exists so a FixedSizeList<float>[dim] comes back fixed-size
 * instead of as a List.  Debian has no flatbuffers C builder, so this is a minimal one: the
 * classic back-to-front layout (children first, then parents point forward at them), every
 * scalar aligned to its size relative to the end of the buffer, whose final size is a multiple
 * of 8.  Every Field gets a children vector (empty for primitives): arrow C++ rejects a Field
 * without one. */

typedef struct pw_fb {
  uint8_t *buf;
  size_t cap, used; /* bytes are filled from buf + cap downwards */
  bool overflow;
  uint32_t field_ref[8]; /* open table: ref of each slot's value, 0 = absent */
  int nslots;
  uint32_t table_start;
} pw_fb;

static void fb_prepend(pw_fb *b, const void *p, size_t n) {
  if (b->overflow || n > b->cap - b->used) {
    b->overflow = true;
    return;
  }
  b->used += n;
  if (p)
    memcpy(b->buf + b->cap - b->used, p, n);
  else
    memset(b->buf + b->cap - b->used, 0, n);
}

/* pad so that `size` more bytes end `align`-aligned from the buffer's end */
static void fb_align(pw_fb *b, size_t size, size_t align) {
  size_t pad = (align - (b->used + size) % align) % align;
  if (pad) fb_prepend(b, NULL, pad);
}

static uint32_t fb_ref(const pw_fb *b) {
  return (uint32_t)b->used;
}

static uint32_t fb_string(pw_fb *b, const char *s) {
  size_t n = strlen(s);
  fb_align(b, n + 1, 4);
  fb_prepend(b, NULL, 1);
  fb_prepend(b, s, n);
  uint32_t len = (uint32_t)n;
  fb_prepend(b, &len, 4);
  return fb_ref(b);
}

static uint32_t fb_offset_vector(pw_fb *b, const uint32_t *refs, size_t n) {
  fb_align(b, n * 4, 4);
  for (size_t i = n; i-- > 0;) {
    uint32_t rel = (uint32_t)(b->used + 4 - refs[i]);
    fb_prepend(b, &rel, 4);
  }
  uint32_t len = (uint32_t)n;
  fb_prepend(b, &len, 4);
  return fb_ref(b);
}

static void fb_table_start(pw_fb *b) {
  memset(b->field_ref, 0, sizeof b->field_ref);
  b->nslots = 0;
  b->table_start = fb_ref(b);
}

static void fb_slot(pw_fb *b, int slot) {
  b->field_ref[slot] = fb_ref(b);
  if (slot + 1 > b->nslots) b->nslots = slot + 1;
}

static void fb_add_scalar(pw_fb *b, int slot, const void *p, size_t size) {
  fb_align(b, size, size);
  fb_prepend(b, p, size);
  fb_slot(b, slot);
}

static void fb_add_offset(pw_fb *b, int slot, uint32_t ref) {
  fb_align(b, 4, 4);
  uint32_t rel = (uint32_t)(b->used + 4 - ref);
  fb_prepend(b, &rel, 4);
  fb_slot(b, slot);
}

static uint32_t fb_table_end(pw_fb *b) {
  fb_align(b, 4, 4);
  fb_prepend(b, NULL, 4); /* soffset to the vtable, patched below */
  uint32_t tref = fb_ref(b);
  uint16_t vt[2 + 8];
  vt[0] = (uint16_t)(4 + 2 * b->nslots);
  vt[1] = (uint16_t)(tref - b->table_start);
  for (int i = 0; i < b->nslots; i++)
    vt[2 + i] = (uint16_t)(b->field_ref[i] ? tref - b->field_ref[i] : 0);
  fb_prepend(b, vt, vt[0]); /* used is 4-aligned here, so the vtable is 2-aligned */
  if (b->overflow) return 0;
  int32_t soff = (int32_t)(fb_ref(b) - tref); /* vtable = table - soffset */
  memcpy(b->buf + b->cap - tref, &soff, 4);
  return tref;
}

enum {
  FB_TYPE_INT = 2,
  FB_TYPE_FLOAT = 3,
  FB_TYPE_UTF8 = 5,
  FB_TYPE_BOOL = 6,
  FB_TYPE_LIST = 12,
  FB_TYPE_FIXED_SIZE_LIST = 16
};

/* An arrow Field with no children or a single child `child` (0 = none). */
static uint32_t fb_field(pw_fb *b, const char *name, bool nullable, uint8_t type_type,
                         uint32_t type_ref, uint32_t child) {
  uint32_t children = fb_offset_vector(b, &child, child ? 1 : 0);
  uint32_t nm = fb_string(b, name);
  fb_table_start(b);
  fb_add_offset(b, 0, nm);
  fb_add_offset(b, 3, type_ref);
  fb_add_offset(b, 5, children);
  uint8_t nb = nullable ? 1 : 0;
  fb_add_scalar(b, 1, &nb, 1);
  fb_add_scalar(b, 2, &type_type, 1);
  return fb_table_end(b);
}

static uint32_t fb_float_type(pw_fb *b, int16_t precision) { /* HALF 0, SINGLE 1, DOUBLE 2 */
  fb_table_start(b);
  fb_add_scalar(b, 0, &precision, 2);
  return fb_table_end(b);
}

static uint32_t fb_empty_table(pw_fb *b) {
  fb_table_start(b);
  return fb_table_end(b);
}

static uint32_t fb_column_field(pw_fb *b, const pw_col *c) {
  uint8_t tt;
  uint32_t type, child = 0;
  switch (c->wtype) {
  case PQT_W_INT32:
  case PQT_W_INT64: {
    int32_t bits = c->wtype == PQT_W_INT32 ? 32 : 64;
    uint8_t is_signed = 1;
    fb_table_start(b);
    fb_add_scalar(b, 0, &bits, 4);
    fb_add_scalar(b, 1, &is_signed, 1);
    type = fb_table_end(b);
    tt = FB_TYPE_INT;
    break;
  }
  case PQT_W_FLOAT:
    type = fb_float_type(b, 1);
    tt = FB_TYPE_FLOAT;
    break;
  case PQT_W_DOUBLE:
    type = fb_float_type(b, 2);
    tt = FB_TYPE_FLOAT;
    break;
  case PQT_W_BOOL:
    type = fb_empty_table(b);
    tt = FB_TYPE_BOOL;
    break;
  case PQT_W_STRING:
    type = fb_empty_table(b);
    tt = FB_TYPE_UTF8;
    break;
  case PQT_W_LIST_STRING:
    child = fb_field(b, "element", true, FB_TYPE_UTF8, fb_empty_table(b), 0);
    type = fb_empty_table(b);
    tt = FB_TYPE_LIST;
    break;
  case PQT_W_LIST_FLOAT:
    child = fb_field(b, "element", true, FB_TYPE_FLOAT, fb_float_type(b, 1), 0);
    type = fb_empty_table(b);
    tt = FB_TYPE_LIST;
    break;
  case PQT_W_LIST_LIST_FLOAT: {
    uint32_t inner = fb_field(b, "element", true, FB_TYPE_FLOAT, fb_float_type(b, 1), 0);
    child = fb_field(b, "element", true, FB_TYPE_LIST, fb_empty_table(b), inner);
    type = fb_empty_table(b);
    tt = FB_TYPE_LIST;
    break;
  }
  case PQT_W_VECTOR:
  default: {
    child = fb_field(b, "element", true, FB_TYPE_FLOAT, fb_float_type(b, 1), 0);
    int32_t dim = c->dim;
    fb_table_start(b);
    fb_add_scalar(b, 0, &dim, 4);
    type = fb_table_end(b);
    tt = FB_TYPE_FIXED_SIZE_LIST;
    break;
  }
  }
  return fb_field(b, c->name, c->nullable, tt, type, child);
}

/* Builds the base64 ARROW:schema value describing every column (caller frees). */
static vf_status pw_arrow_schema(const pqt_writer *w, char **out, vf_error *err) {
  *out = NULL;
  size_t cap = 1024;
  for (int i = 0; i < w->ncols; i++)
    cap += 512 + 2 * strlen(w->cols[i].name);
  pw_fb b = {0};
  b.cap = cap;
  b.buf = vf_malloc(cap);
  uint32_t *fields = vf_mallocarray((size_t)w->ncols, sizeof *fields);
  vf_status st = VF_OK;
  if (!b.buf || !fields) {
    st = vf_error_set(err, VF_ENOMEM, "out of memory (ARROW:schema)");
    goto out;
  }
  for (int i = 0; i < w->ncols; i++)
    fields[i] = fb_column_field(&b, &w->cols[i]);
  uint32_t fvec = fb_offset_vector(&b, fields, (size_t)w->ncols);
  fb_table_start(&b); /* Schema */
  fb_add_offset(&b, 1, fvec);
  uint32_t schema = fb_table_end(&b);
  fb_table_start(&b); /* Message */
  int64_t body_len = 0;
  fb_add_scalar(&b, 3, &body_len, 8);
  fb_add_offset(&b, 2, schema);
  int16_t version = 4; /* MetadataVersion V5 */
  fb_add_scalar(&b, 0, &version, 2);
  uint8_t header_type = 1; /* MessageHeader.Schema */
  fb_add_scalar(&b, 1, &header_type, 1);
  uint32_t msg = fb_table_end(&b);
  fb_align(&b, 4, 8);
  uint32_t root = (uint32_t)(b.used + 4 - msg);
  fb_prepend(&b, &root, 4); /* the buffer now starts with the root offset, size % 8 == 0 */
  if (b.overflow) {
    st = vf_error_set(err, VF_EINTERNAL, "ARROW:schema larger than its %zu-byte estimate", cap);
    goto out;
  }
  /* encapsulated message: continuation marker, metadata length, flatbuffer (8-aligned) */
  size_t raw_len = 8 + b.used;
  uint8_t *raw = vf_malloc(raw_len);
  char *txt = vf_malloc(vf_base64_len(raw_len) + 1);
  if (!raw || !txt) {
    free(raw);
    free(txt);
    st = vf_error_set(err, VF_ENOMEM, "out of memory (ARROW:schema)");
    goto out;
  }
  uint32_t cont = 0xFFFFFFFFu, mlen = (uint32_t)b.used;
  memcpy(raw, &cont, 4);
  memcpy(raw + 4, &mlen, 4);
  memcpy(raw + 8, b.buf + b.cap - b.used, b.used);
  size_t o = vf_base64_encode(raw, raw_len, txt);
  txt[o] = 0;
  free(raw);
  *out = txt;
out:
  free(b.buf);
  free(fields);
  return st;
}

/* Adds ARROW:schema when a VECTOR column exists, unless the caller already set that key. */
vf_status pw_add_arrow_schema(pqt_writer *w, vf_error *err) {
  bool has_vector = false, has_sparse = false;
  for (int i = 0; i < w->ncols; i++) {
    has_vector |= w->cols[i].wtype == PQT_W_VECTOR;
    has_sparse |= w->cols[i].part != 0;
  }
  if (has_sparse) return VF_OK; /* the arrow schema above describes one field per leaf */
  for (int i = 0; i < w->nkv; i++)
    if (strcmp(w->kv[i].key, "ARROW:schema") == 0) return VF_OK;
  if (!has_vector) return VF_OK;
  char *b64;
  vf_status st = pw_arrow_schema(w, &b64, err);
  if (st != VF_OK) return st;
  st = pqt_writer_add_kv(w, "ARROW:schema", b64, err);
  free(b64);
  return st;
}
