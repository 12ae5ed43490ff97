/*
 * pqt_schema.c — the schema tree: from the flat SchemaElement list of the footer to nodes with
 * definition/repetition levels, the leaf (column) list, and the shape of every LIST and MAP.
 *
 * Spec: parquet-format parquet.thrift "SchemaElement" (depth-first list, `num_children`, the
 * root is element 0), README "Nested Encoding" (levels), LogicalTypes.md "Nested Types":
 * "Lists" and "Maps" including their "Backward-compatibility rules".
 *
 * Levels: a node's max definition level is its parent's plus one unless it is REQUIRED; its max
 * repetition level is its parent's plus one when it is REPEATED.  The root adds nothing
 * (its repetition, if any, is ignored, as every reader does).  Nesting is capped at 255 levels,
 * so levels fit the one-byte level arrays of pqt_leaf_data.
 *
 * Shapes.  Writers have spelled lists in several ways over the years; all of these must read:
 *   - 3-level (standard):     <rep> group a (LIST) { repeated group list { <rep> T element; } }
 *   - 2-level, primitive:     <rep> group a (LIST) { repeated T element; }
 *   - 2-level, struct:        <rep> group a (LIST) { repeated group e { f1; f2; } }
 *   - `array` / `a_tuple`:    <rep> group a (LIST) { repeated group array { one field; } }
 *   - repeated-in-repeated:   <rep> group a (LIST) { repeated group x { repeated T y; } }
 *     (parquet-java AvroSchemaConverter: a 3-level element can never be repeated, so x itself
 *     is the element; old_list_structure.parquet is this shape with x LIST-annotated)
 *   - unannotated:            repeated T a;   /  repeated group a { ... }
 * LIST rule (LogicalTypes.md, Lists, backward compatibility): the single repeated child C of a
 * LIST group is itself the element if C is primitive, a group with more than one field, a group
 * whose one field is repeated, or named "array" or "<list name>_tuple"; otherwise C's only child
 * is the element.  A repeated field that is not the repeated child of a LIST/MAP group is an
 * implicit list of itself (kind LIST, repeated = element = the node).
 * MAP rule (LogicalTypes.md, Maps): MAP (or MAP_KEY_VALUE on a group not contained in a MAP,
 * the documented historical mistake) with one repeated group child of one or two fields:
 * key = first, value = second (absent in map_no_value.parquet).  The key's repetition is not
 * enforced (incorrect_map_schema.parquet has an optional key and readers accept it).
 * A LIST/MAP annotation on a group that does not have one of these shapes is ignored (the group
 * reads as a STRUCT whose repeated children are implicit lists), as structural readers such as
 * DuckDB do, rather than refusing the file.
 *
 * Accepted as DuckDB and arrow-rs accept them: a root that carries a physical type besides its
 * children (segmentio/parquet-go writes one; the root is a group whatever its type says), and an
 * element with neither a type nor children, which is an empty group (parquet-go's empty structs:
 * no column chunk and no values; rows leave it out, as arrow-rs does — DuckDB and pyarrow refuse
 * such files).
 * Refused (VF_ECORRUPT naming the element): an empty schema, a primitive root, num_children
 * running past the list or elements left over after the root's subtree, a group below the root
 * with both a type and children, FIXED_LEN_BYTE_ARRAY without a positive width, nesting deeper
 * than 255, a row group whose column count or column types differ from the leaves.
 * The VECTOR repetition of newer parquet.thrift revisions is VF_EUNSUPPORTED, and so is a
 * schema whose dotted leaf paths would total more than 256 MiB (a deep chain of long names above
 * many leaves: a small footer must not turn into gigabytes of paths).
 */
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"

#define PQT_MAX_NESTING 255

typedef struct schema_ctx {
  const pqt_file_meta *m;
  pqt_schema *s;
  vf_error *err;
  int pos;           /* next element to consume */
  uint8_t *claim;    /* per node: 1 = the repeated child of a LIST group, 2 = of a MAP group */
  size_t path_bytes; /* sum of leaf path lengths so far */
} schema_ctx;

static const char *elem_name(const pqt_schema_elem *e) {
  return e->name ? e->name : "";
}

static vf_status schema_fail(schema_ctx *c, int idx, vf_status code, const char *fmt, ...)
    VF_PRINTF(4, 5);
static vf_status schema_fail(schema_ctx *c, int idx, vf_status code, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (idx >= 0 && idx < c->m->nschema)
    return vf_error_set(c->err, code, "parquet schema: element %d ('%.200s'): %s", idx,
                        elem_name(&c->m->schema[idx]), what);
  return vf_error_set(c->err, code, "parquet schema: %s", what);
}

/* Total bytes of all dotted leaf paths.  Each path repeats its ancestors' names, so a deep
 * chain of long names above many leaves could otherwise turn a small footer into gigabytes. */
#define PQT_MAX_PATH_BYTES ((size_t)256 << 20)

/* The dotted path of a leaf: names from below the root down to the node. */
static vf_status leaf_path(schema_ctx *c, int node, char **out) {
  const pqt_schema *s = c->s;
  size_t len = 0;
  for (int n = node; n > 0; n = s->nodes[n].parent)
    len += strlen(s->nodes[n].name) + 1;
  if (len > PQT_MAX_PATH_BYTES - c->path_bytes)
    return schema_fail(c, node, VF_EUNSUPPORTED, "leaf paths exceed %zu MiB in total",
                       PQT_MAX_PATH_BYTES >> 20);
  c->path_bytes += len;
  char *p = vf_malloc(len ? len : 1);
  if (!p) return vf_error_set(c->err, VF_ENOMEM, "parquet schema: out of memory");
  size_t end = len ? len - 1 : 0;
  p[end] = '\0';
  for (int n = node; n > 0; n = s->nodes[n].parent) {
    size_t k = strlen(s->nodes[n].name);
    end -= k;
    memcpy(p + end, s->nodes[n].name, k);
    if (end > 0) p[--end] = '.';
  }
  *out = p;
  return VF_OK;
}

/* Depth-first construction of node `idx` (= element idx) and its subtree. */
static vf_status build_node(schema_ctx *c, int parent, int depth) {
  const pqt_file_meta *m = c->m;
  pqt_schema *s = c->s;
  int idx = c->pos++;
  const pqt_schema_elem *e = &m->schema[idx];
  pqt_node *n = &s->nodes[idx];
  n->elem = idx;
  n->name = elem_name(e);
  n->parent = parent;
  n->repeated = n->element = n->key = n->value = -1;
  n->leaf = -1;
  n->first_leaf = s->nleaves;

  if (depth > PQT_MAX_NESTING)
    return schema_fail(c, idx, VF_ECORRUPT, "nested deeper than %d levels", PQT_MAX_NESTING);
  if (parent < 0) {
    n->repetition = PQT_REQUIRED; /* the root's repetition is meaningless */
  } else if (e->repetition == 3) {
    return schema_fail(c, idx, VF_EUNSUPPORTED, "repetition VECTOR is not supported");
  } else {
    /* absent (-1) reads as REQUIRED, as thrift-generated readers default the enum to 0 */
    n->repetition = e->repetition < 0 ? PQT_REQUIRED : (pqt_repetition)e->repetition;
    const pqt_node *p = &s->nodes[parent];
    n->def_level = (int16_t)(p->def_level + (n->repetition != PQT_REQUIRED));
    n->rep_level = (int16_t)(p->rep_level + (n->repetition == PQT_REPEATED));
  }

  if (e->num_children > 0) {
    /* the root's type is ignored (segmentio/parquet-go sets one) */
    if (e->type >= 0 && parent >= 0)
      return schema_fail(c, idx, VF_ECORRUPT, "has both a physical type and %d children",
                         e->num_children);
    int remain = m->nschema - c->pos;
    if (e->num_children > remain)
      return schema_fail(c, idx, VF_ECORRUPT,
                         "claims %d children but only %d elements follow in the schema list",
                         e->num_children, remain);
    n->children = vf_calloc((size_t)e->num_children, sizeof *n->children);
    if (!n->children) return vf_error_set(c->err, VF_ENOMEM, "parquet schema: out of memory");
    n->nchildren = e->num_children;
    for (int k = 0; k < e->num_children; k++) {
      if (c->pos >= m->nschema)
        return schema_fail(c, idx, VF_ECORRUPT,
                           "child %d of %d runs past the end of the schema list (%d elements)", k,
                           e->num_children, m->nschema);
      n->children[k] = c->pos;
      vf_status st = build_node(c, idx, depth + 1);
      if (st) return st;
    }
    n->nleaves = s->nleaves - n->first_leaf;
    return VF_OK;
  }

  if (parent < 0) {
    if (e->type >= 0) return schema_fail(c, idx, VF_ECORRUPT, "the schema root must be a group");
    return VF_OK; /* a schema without columns */
  }
  if (e->type < 0) {
    n->nleaves = 0; /* an empty group (parquet-go writes empty structs): no column, no values */
    return VF_OK;
  }
  if (e->type > PQT_FIXED_LEN_BYTE_ARRAY)
    return schema_fail(c, idx, VF_ECORRUPT, "unknown physical type %d", e->type);
  if (e->type == PQT_FIXED_LEN_BYTE_ARRAY && e->type_length <= 0)
    return schema_fail(c, idx, VF_ECORRUPT, "FIXED_LEN_BYTE_ARRAY with type_length %d",
                       e->type_length);
  pqt_leaf *l = &s->leaves[s->nleaves];
  l->node = idx;
  l->max_def = n->def_level;
  l->max_rep = n->rep_level;
  l->type = (pqt_physical)e->type;
  l->type_length = e->type == PQT_FIXED_LEN_BYTE_ARRAY ? e->type_length : 0;
  vf_status st = leaf_path(c, idx, &l->path);
  if (st) return st;
  int top = idx;
  while (s->nodes[top].parent > 0)
    top = s->nodes[top].parent;
  l->top = top;
  n->leaf = s->nleaves++;
  n->nleaves = 1;
  return VF_OK;
}

static bool is_list_annotated(const pqt_schema_elem *e) {
  return e->logical == PQT_LT_LIST || e->converted_type == PQT_CT_LIST;
}

static bool is_map_annotated(const pqt_schema_elem *e) {
  return e->logical == PQT_LT_MAP || e->converted_type == PQT_CT_MAP;
}

/* Try to read group `idx` as a LIST (LogicalTypes.md "Lists" + backward-compatibility rules). */
static bool classify_list(schema_ctx *c, int idx) {
  pqt_schema *s = c->s;
  pqt_node *g = &s->nodes[idx];
  if (g->nchildren != 1) return false;
  int ci = g->children[0];
  const pqt_node *ch = &s->nodes[ci];
  if (ch->repetition != PQT_REPEATED) return false;
  int element;
  if (ch->nchildren == 0 || ch->nchildren > 1) {
    element = ci; /* primitive, or a group of several fields */
  } else if (s->nodes[ch->children[0]].repetition == PQT_REPEATED) {
    element = ci; /* a 3-level element cannot be repeated */
  } else {
    size_t gl = strlen(g->name);
    bool tuple = strlen(ch->name) == gl + 6 && strncmp(ch->name, g->name, gl) == 0 &&
                 strcmp(ch->name + gl, "_tuple") == 0;
    element = (strcmp(ch->name, "array") == 0 || tuple) ? ci : ch->children[0];
  }
  g->kind = PQT_NODE_LIST;
  g->repeated = ci;
  g->element = element;
  c->claim[ci] = 1;
  return true;
}

/* Try to read group `idx` as a MAP (LogicalTypes.md "Maps"). */
static bool classify_map(schema_ctx *c, int idx) {
  pqt_schema *s = c->s;
  pqt_node *g = &s->nodes[idx];
  if (g->nchildren != 1) return false;
  int ci = g->children[0];
  const pqt_node *kv = &s->nodes[ci];
  if (kv->repetition != PQT_REPEATED || kv->nchildren < 1 || kv->nchildren > 2) return false;
  g->kind = PQT_NODE_MAP;
  g->repeated = ci;
  g->key = kv->children[0];
  g->value = kv->nchildren == 2 ? kv->children[1] : -1;
  c->claim[ci] = 2;
  return true;
}

/* Node kinds in preorder: a parent's shape decides whether its repeated child is claimed. */
static void classify(schema_ctx *c) {
  pqt_schema *s = c->s;
  s->nodes[0].kind = PQT_NODE_STRUCT;
  for (int i = 1; i < s->nnodes; i++) {
    pqt_node *n = &s->nodes[i];
    const pqt_schema_elem *e = &c->m->schema[i];
    if (n->repetition == PQT_REPEATED && !c->claim[i]) {
      n->kind = PQT_NODE_LIST; /* implicit list: each occurrence is one element */
      n->repeated = n->element = i;
      continue;
    }
    if (n->nchildren == 0) {
      n->kind = n->leaf >= 0 ? PQT_NODE_PRIMITIVE : PQT_NODE_STRUCT; /* a leaf, or an empty group */
      continue;
    }
    n->kind = PQT_NODE_STRUCT;
    if (c->claim[i] == 2) continue; /* a MAP's key_value group: its parent reads it */
    const pqt_node *p = &s->nodes[n->parent];
    bool in_map = is_map_annotated(&c->m->schema[p->elem]) || p->kind == PQT_NODE_MAP;
    if (is_list_annotated(e)) {
      classify_list(c, i);
    } else if (is_map_annotated(e) || (e->converted_type == PQT_CT_MAP_KEY_VALUE && !in_map)) {
      classify_map(c, i);
    }
  }
}

/* Each row group must have one column chunk per leaf, of the leaf's physical type. */
static vf_status check_row_groups(schema_ctx *c) {
  const pqt_file_meta *m = c->m;
  const pqt_schema *s = c->s;
  for (int g = 0; g < m->nrow_groups; g++) {
    const pqt_row_group *rg = &m->row_groups[g];
    if (rg->ncolumns != s->nleaves)
      return vf_error_set(c->err, VF_ECORRUPT,
                          "parquet schema: row group %d has %d column chunks but the schema has %d "
                          "leaf columns",
                          g, rg->ncolumns, s->nleaves);
    for (int k = 0; k < rg->ncolumns; k++) {
      const pqt_column_chunk *cc = &rg->columns[k];
      if (cc->has_meta_data && cc->meta.type != (int)s->leaves[k].type)
        return vf_error_set(c->err, VF_ECORRUPT,
                            "parquet schema: row group %d column %d ('%.200s') has type %s but the "
                            "schema says %s",
                            g, k, s->leaves[k].path, pqt_physical_name(cc->meta.type),
                            pqt_physical_name(s->leaves[k].type));
    }
  }
  return VF_OK;
}

/*! pqt_schema_build() : see format.h.  On error `out` is freed and zeroed. */
vf_status pqt_schema_build(const pqt_file_meta *m, pqt_schema *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  schema_ctx c = {m, out, err, 0, NULL, 0};
  if (m->nschema <= 0)
    return vf_error_set(err, VF_ECORRUPT, "parquet schema: FileMetaData.schema is empty");
  vf_status st = VF_OK;
  out->nodes = vf_calloc((size_t)m->nschema, sizeof *out->nodes);
  out->leaves = vf_calloc((size_t)m->nschema, sizeof *out->leaves);
  c.claim = vf_calloc((size_t)m->nschema, 1);
  if (!out->nodes || !out->leaves || !c.claim) {
    st = vf_error_set(err, VF_ENOMEM, "parquet schema: out of memory for %d elements", m->nschema);
    goto out;
  }
  out->nnodes = m->nschema;
  if ((st = build_node(&c, -1, 0))) goto out;
  if (c.pos != m->nschema) {
    st = schema_fail(&c, c.pos, VF_ECORRUPT,
                     "is not part of the tree: the root's subtree ends after %d of %d elements",
                     c.pos, m->nschema);
    goto out;
  }
  classify(&c);
  out->ntop = out->nodes[0].nchildren;
  out->top = vf_calloc((size_t)(out->ntop ? out->ntop : 1), sizeof *out->top);
  if (!out->top) {
    st = vf_error_set(err, VF_ENOMEM, "parquet schema: out of memory");
    goto out;
  }
  for (int i = 0; i < out->ntop; i++)
    out->top[i] = out->nodes[0].children[i];
  st = check_row_groups(&c);
out:
  free(c.claim);
  if (st) pqt_schema_free(out);
  return st;
}

/*! pqt_schema_free() : NULL ok; the struct is zeroed. */
void pqt_schema_free(pqt_schema *s) {
  if (!s) return;
  if (s->nodes)
    for (int i = 0; i < s->nnodes; i++)
      free(s->nodes[i].children);
  if (s->leaves)
    for (int i = 0; i < s->nleaves; i++)
      free(s->leaves[i].path);
  free(s->nodes);
  free(s->leaves);
  free(s->top);
  memset(s, 0, sizeof *s);
}
