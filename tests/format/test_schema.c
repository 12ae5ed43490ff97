/* Tests for pqt_schema_build (pqt_schema.c): levels, leaves, and the LIST/MAP shape of every
 * historical spelling, on the parquet-testing list/map conformance files and on synthetic
 * element lists.
 *
 * Expected levels come from hyparquet (tests/oracle/node_modules/hyparquet, dev-time run):
 *   getMaxDefinitionLevel / getMaxRepetitionLevel(getSchemaPath(md.schema, path_in_schema))
 * for each column of row group 0.  Shapes follow parquet-format LogicalTypes.md ("Lists",
 * "Maps", backward-compatibility rules) and the files' .md descriptions. */
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_internal.h"
#include "vf_test.h"

/* ---------------------------------------------------------------- helpers */

static bool load_file_meta(const char *name, pqt_file_meta *m) {
  const char *sh = vf_test_shared();
  if (!sh) return false;
  char path[4096];
  snprintf(path, sizeof path, "%s/data/parquet-testing/data/%s", sh, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    vf_test_fail(__FILE__, __LINE__, "cannot open %s", path);
    return false;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc((size_t)n);
  bool ok = buf && n >= 12 && fread(buf, 1, (size_t)n, f) == (size_t)n;
  fclose(f);
  if (ok) {
    uint32_t len = vf_load_u32le(buf + n - 8);
    ok = memcmp(buf + n - 4, "PAR1", 4) == 0 && len <= (uint64_t)n - 12;
    vf_error err = {0};
    if (ok && pqt_parse_file_meta(buf + n - 8 - len, len, (uint64_t)n - 8 - len, m, &err)) {
      vf_test_fail(__FILE__, __LINE__, "%s: %s", name, err.msg);
      ok = false;
    }
  }
  if (!ok) vf_test_fail(__FILE__, __LINE__, "%s: cannot read footer", name);
  free(buf);
  return ok;
}

typedef struct want_leaf {
  const char *path;
  int def, rep;
} want_leaf;

/* Build the schema of a conformance file and compare its leaves with hyparquet's levels. */
static bool check_file(const char *name, const want_leaf *want, int n, pqt_file_meta *m,
                       pqt_schema *s) {
  if (!load_file_meta(name, m)) return false;
  vf_error err = {0};
  if (pqt_schema_build(m, s, &err)) {
    vf_test_fail(__FILE__, __LINE__, "%s: %s", name, err.msg);
    pqt_file_meta_free(m);
    return false;
  }
  if (s->nleaves != n)
    vf_test_fail(__FILE__, __LINE__, "%s: %d leaves, want %d", name, s->nleaves, n);
  for (int i = 0; i < n && i < s->nleaves; i++) {
    const pqt_leaf *l = &s->leaves[i];
    if (strcmp(l->path, want[i].path) != 0 || l->max_def != want[i].def ||
        l->max_rep != want[i].rep)
      vf_test_fail(__FILE__, __LINE__, "%s leaf %d: %s def %d rep %d, want %s def %d rep %d", name,
                   i, l->path, l->max_def, l->max_rep, want[i].path, want[i].def, want[i].rep);
  }
  return true;
}

static void done(pqt_file_meta *m, pqt_schema *s) {
  pqt_schema_free(s);
  pqt_file_meta_free(m);
}

/* Node index of the top-level field `name`, -1 if none. */
static int top_named(const pqt_schema *s, const char *name) {
  for (int i = 0; i < s->ntop; i++)
    if (strcmp(s->nodes[s->top[i]].name, name) == 0) return s->top[i];
  return -1;
}

/* Node index of child `name` of node `n`, -1 if none. */
static int child_named(const pqt_schema *s, int n, const char *name) {
  if (n < 0) return -1;
  for (int i = 0; i < s->nodes[n].nchildren; i++)
    if (strcmp(s->nodes[s->nodes[n].children[i]].name, name) == 0) return s->nodes[n].children[i];
  return -1;
}

#define SKIP_IF_NO_SHARED()                                                                        \
  do {                                                                                             \
    if (!vf_test_shared()) {                                                                       \
      vf_test_skip("VF_SHARED not set");                                                           \
      return;                                                                                      \
    }                                                                                              \
  } while (0)

/* ----------------------------------------------------- conformance files */

VF_TEST(schema_list_columns) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"int64_list.list.item", 3, 1}, {"utf8_list.list.item", 3, 1}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("list_columns.parquet", w, 2, &m, &s)) return;
  int a = top_named(&s, "int64_list");
  CHECK(a > 0);
  if (a > 0) {
    CHECK_EQ_INT(s.nodes[a].kind, PQT_NODE_LIST);
    CHECK_EQ_STR(s.nodes[s.nodes[a].repeated].name, "list");
    CHECK_EQ_STR(s.nodes[s.nodes[a].element].name, "item");
    CHECK_EQ_INT(s.nodes[s.nodes[a].element].kind, PQT_NODE_PRIMITIVE);
    CHECK_EQ_INT(s.nodes[a].def_level, 1);
    CHECK_EQ_INT(s.nodes[a].first_leaf, 0);
    CHECK_EQ_INT(s.nodes[a].nleaves, 1);
  }
  CHECK_EQ_INT(s.leaves[1].top, top_named(&s, "utf8_list"));
  CHECK_EQ_INT(s.leaves[1].type, PQT_BYTE_ARRAY);
  done(&m, &s);
}

VF_TEST(schema_nested_lists) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"a.list.element.list.element.list.element", 7, 3}, {"b", 0, 0}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("nested_lists.snappy.parquet", w, 2, &m, &s)) return;
  /* a: list<list<list<string>>>, each level the standard 3-level form */
  int n = top_named(&s, "a");
  for (int depth = 0; depth < 3 && n >= 0; depth++) {
    CHECK_EQ_INT(s.nodes[n].kind, PQT_NODE_LIST);
    CHECK_EQ_INT(s.nodes[n].rep_level, depth);
    int rpt = s.nodes[n].repeated;
    CHECK_EQ_STR(s.nodes[rpt].name, "list");
    CHECK_EQ_INT(s.nodes[rpt].rep_level, depth + 1);
    n = s.nodes[n].element;
  }
  CHECK(n >= 0 && s.nodes[n].kind == PQT_NODE_PRIMITIVE && s.nodes[n].leaf == 0);
  CHECK_EQ_INT(s.nodes[top_named(&s, "b")].kind, PQT_NODE_PRIMITIVE);
  done(&m, &s);
}

VF_TEST(schema_null_list) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"emptylist.list.item", 3, 1}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("null_list.parquet", w, 1, &m, &s)) return;
  int a = top_named(&s, "emptylist");
  CHECK(a > 0 && s.nodes[a].kind == PQT_NODE_LIST);
  done(&m, &s);
}

/* old_list_structure.md: required group a (LIST) { repeated group array (LIST) {
 * repeated int32 array; } } = [[1, 2], [3, 4]] (2-level lists, the element named "array"). */
VF_TEST(schema_old_list_structure) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"a.array.array", 2, 2}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("old_list_structure.parquet", w, 1, &m, &s)) return;
  int a = top_named(&s, "a");
  int outer = child_named(&s, a, "array");
  int inner = child_named(&s, outer, "array");
  CHECK(a > 0 && outer > 0 && inner > 0);
  if (inner > 0) {
    CHECK_EQ_INT(s.nodes[a].kind, PQT_NODE_LIST);
    CHECK_EQ_INT(s.nodes[a].repeated, outer);
    CHECK_EQ_INT(s.nodes[a].element, outer); /* the repeated group is the element */
    CHECK_EQ_INT(s.nodes[outer].kind, PQT_NODE_LIST);
    CHECK_EQ_INT(s.nodes[outer].repeated, inner);
    CHECK_EQ_INT(s.nodes[outer].element, inner);
    CHECK_EQ_INT(s.nodes[inner].kind, PQT_NODE_PRIMITIVE);
  }
  done(&m, &s);
}

/* repeated_no_annotation: optional group phoneNumbers { repeated group phone { required int64
 * number; optional binary kind (UTF8); } } — an unannotated repeated group is a list of
 * structs. */
VF_TEST(schema_repeated_no_annotation) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {
      {"id", 0, 0}, {"phoneNumbers.phone.number", 2, 1}, {"phoneNumbers.phone.kind", 3, 1}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("repeated_no_annotation.parquet", w, 3, &m, &s)) return;
  int pn = top_named(&s, "phoneNumbers");
  int ph = child_named(&s, pn, "phone");
  CHECK(pn > 0 && ph > 0);
  if (ph > 0) {
    CHECK_EQ_INT(s.nodes[pn].kind, PQT_NODE_STRUCT);
    CHECK_EQ_INT(s.nodes[ph].kind, PQT_NODE_LIST);
    CHECK_EQ_INT(s.nodes[ph].repeated, ph);
    CHECK_EQ_INT(s.nodes[ph].element, ph);
    CHECK_EQ_INT(s.nodes[ph].nchildren, 2);
    CHECK_EQ_INT(s.nodes[pn].first_leaf, 1);
    CHECK_EQ_INT(s.nodes[pn].nleaves, 2);
    CHECK_EQ_INT(s.leaves[2].top, pn);
  }
  done(&m, &s);
}

VF_TEST(schema_repeated_primitive_no_list) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"Int32_list", 1, 1},
                                {"String_list", 1, 1},
                                {"group_of_lists.Int32_list_in_group", 1, 1},
                                {"group_of_lists.String_list_in_group", 1, 1}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("repeated_primitive_no_list.parquet", w, 4, &m, &s)) return;
  int a = top_named(&s, "Int32_list");
  CHECK(a > 0 && s.nodes[a].kind == PQT_NODE_LIST && s.nodes[a].element == a &&
        s.nodes[a].repeated == a && s.nodes[a].leaf == 0);
  int g = top_named(&s, "group_of_lists");
  int b = child_named(&s, g, "String_list_in_group");
  CHECK(g > 0 && s.nodes[g].kind == PQT_NODE_STRUCT);
  CHECK(b > 0 && s.nodes[b].kind == PQT_NODE_LIST && s.nodes[b].element == b);
  done(&m, &s);
}

static void check_impala_shapes(const pqt_schema *s, const char *int_array, const char *int_map,
                                const char *nested) {
  int ia = top_named(s, int_array);
  CHECK(ia > 0 && s->nodes[ia].kind == PQT_NODE_LIST);
  if (ia > 0) CHECK_EQ_STR(s->nodes[s->nodes[ia].element].name, "element");
  int im = top_named(s, int_map);
  CHECK(im > 0 && s->nodes[im].kind == PQT_NODE_MAP);
  if (im > 0) {
    CHECK_EQ_STR(s->nodes[s->nodes[im].repeated].name, "map");
    CHECK_EQ_STR(s->nodes[s->nodes[im].key].name, "key");
    CHECK_EQ_STR(s->nodes[s->nodes[im].value].name, "value");
    CHECK_EQ_INT(s->nodes[s->nodes[im].repeated].kind, PQT_NODE_STRUCT);
  }
  int ns = top_named(s, nested);
  CHECK(ns > 0 && s->nodes[ns].kind == PQT_NODE_STRUCT);
}

VF_TEST(schema_nullable_impala) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"id", 1, 0},
                                {"int_array.list.element", 3, 1},
                                {"int_array_Array.list.element.list.element", 5, 2},
                                {"int_map.map.key", 2, 1},
                                {"int_map.map.value", 3, 1},
                                {"int_Map_Array.list.element.map.key", 4, 2},
                                {"int_Map_Array.list.element.map.value", 5, 2},
                                {"nested_struct.A", 2, 0},
                                {"nested_struct.b.list.element", 4, 1},
                                {"nested_struct.C.d.list.element.list.element.E", 8, 2},
                                {"nested_struct.C.d.list.element.list.element.F", 8, 2},
                                {"nested_struct.g.map.key", 3, 1},
                                {"nested_struct.g.map.value.H.i.list.element", 8, 2}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("nullable.impala.parquet", w, 13, &m, &s)) return;
  check_impala_shapes(&s, "int_array", "int_map", "nested_struct");
  /* int_Map_Array: list whose element is a map */
  int lm = top_named(&s, "int_Map_Array");
  CHECK(lm > 0 && s.nodes[lm].kind == PQT_NODE_LIST);
  if (lm > 0) CHECK_EQ_INT(s.nodes[s.nodes[lm].element].kind, PQT_NODE_MAP);
  done(&m, &s);
}

VF_TEST(schema_nonnullable_impala) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"ID", 0, 0},
                                {"Int_Array.list.element", 1, 1},
                                {"int_array_array.list.element.list.element", 2, 2},
                                {"Int_Map.map.key", 1, 1},
                                {"Int_Map.map.value", 1, 1},
                                {"int_map_array.list.element.map.key", 2, 2},
                                {"int_map_array.list.element.map.value", 2, 2},
                                {"nested_Struct.a", 0, 0},
                                {"nested_Struct.B.list.element", 1, 1},
                                {"nested_Struct.c.D.list.element.list.element.e", 2, 2},
                                {"nested_Struct.c.D.list.element.list.element.f", 2, 2},
                                {"nested_Struct.G.map.key", 1, 1},
                                {"nested_Struct.G.map.value.h.i.list.element", 2, 2}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("nonnullable.impala.parquet", w, 13, &m, &s)) return;
  check_impala_shapes(&s, "Int_Array", "Int_Map", "nested_Struct");
  done(&m, &s);
}

VF_TEST(schema_nested_maps) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"a.key_value.key", 2, 1},
                                {"a.key_value.value.key_value.key", 4, 2},
                                {"a.key_value.value.key_value.value", 4, 2},
                                {"b", 0, 0},
                                {"c", 0, 0}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("nested_maps.snappy.parquet", w, 5, &m, &s)) return;
  int a = top_named(&s, "a");
  CHECK(a > 0 && s.nodes[a].kind == PQT_NODE_MAP);
  if (a > 0) {
    int v = s.nodes[a].value;
    CHECK(v > 0 && s.nodes[v].kind == PQT_NODE_MAP);
    CHECK_EQ_INT(s.nodes[s.nodes[a].key].kind, PQT_NODE_PRIMITIVE);
  }
  done(&m, &s);
}

/* map_no_value.md: my_map (MAP) with key/value, my_map_no_v (MAP) whose key_value has only a
 * key, my_list (LIST). */
VF_TEST(schema_map_no_value) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"my_map.key_value.key", 1, 1},
                                {"my_map.key_value.value", 2, 1},
                                {"my_map_no_v.key_value.key", 1, 1},
                                {"my_list.list.element", 1, 1}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("map_no_value.parquet", w, 4, &m, &s)) return;
  int a = top_named(&s, "my_map"), b = top_named(&s, "my_map_no_v"), c = top_named(&s, "my_list");
  CHECK(a > 0 && b > 0 && c > 0);
  if (a > 0 && b > 0 && c > 0) {
    CHECK_EQ_INT(s.nodes[a].kind, PQT_NODE_MAP);
    CHECK(s.nodes[a].value > 0);
    CHECK_EQ_INT(s.nodes[b].kind, PQT_NODE_MAP);
    CHECK_EQ_INT(s.nodes[b].value, -1);
    CHECK_EQ_STR(s.nodes[s.nodes[b].key].name, "key");
    CHECK_EQ_INT(s.nodes[c].kind, PQT_NODE_LIST);
  }
  done(&m, &s);
}

/* incorrect_map_schema: the map key is OPTIONAL (the spec says required); other readers
 * accept it, and so must we. */
VF_TEST(schema_incorrect_map_schema) {
  SKIP_IF_NO_SHARED();
  static const want_leaf w[] = {{"my_map.key_value.key", 3, 1}, {"my_map.key_value.value", 3, 1}};
  pqt_file_meta m;
  pqt_schema s;
  if (!check_file("incorrect_map_schema.parquet", w, 2, &m, &s)) return;
  int a = top_named(&s, "my_map");
  CHECK(a > 0 && s.nodes[a].kind == PQT_NODE_MAP);
  if (a > 0) CHECK_EQ_INT(s.nodes[s.nodes[a].key].repetition, PQT_OPTIONAL);
  done(&m, &s);
}

/* ------------------------------------------------------ synthetic schemas */

typedef struct el {
  const char *name;
  int type; /* -1 group */
  int rep;  /* -1 absent */
  int nchildren;
  int ct; /* converted type or -1 */
  int lt; /* logical kind */
} el;

enum { G = -1, NONE = -1 };
#define REQ PQT_REQUIRED
#define OPT PQT_OPTIONAL
#define RPT PQT_REPEATED

/* A pqt_file_meta over `n` synthetic elements (no row groups).  Free with meta_free_synth. */
static pqt_file_meta synth(const el *e, int n) {
  pqt_file_meta m;
  memset(&m, 0, sizeof m);
  m.schema = calloc((size_t)n, sizeof *m.schema);
  m.nschema = n;
  for (int i = 0; i < n; i++) {
    pqt_schema_elem *s = &m.schema[i];
    s->name = (char *)e[i].name;
    s->type = e[i].type;
    s->type_length = e[i].type == PQT_FIXED_LEN_BYTE_ARRAY ? 4 : 0;
    s->repetition = e[i].rep;
    s->num_children = e[i].nchildren;
    s->converted_type = e[i].ct;
    s->logical = (pqt_logical_kind)e[i].lt;
    s->field_id = -1;
  }
  return m;
}

static void synth_free(pqt_file_meta *m) {
  free(m->schema);
}

/* Build; on success return true with `s` filled (caller frees). */
static bool build(const el *e, int n, pqt_file_meta *m, pqt_schema *s) {
  *m = synth(e, n);
  vf_error err = {0};
  vf_status st = pqt_schema_build(m, s, &err);
  if (st) {
    vf_test_fail(__FILE__, __LINE__, "build: %s", err.msg);
    synth_free(m);
    return false;
  }
  return true;
}

static void expect_fail(const el *e, int n, vf_status want, const char *needle, int line) {
  pqt_file_meta m = synth(e, n);
  pqt_schema s;
  vf_error err = {0};
  vf_status st = pqt_schema_build(&m, &s, &err);
  if (st != want) {
    vf_test_fail(__FILE__, line, "got %s (%s), want %s", vf_status_name(st), err.msg,
                 vf_status_name(want));
    if (st == VF_OK) pqt_schema_free(&s);
  } else if (needle && !strstr(err.msg, needle)) {
    vf_test_fail(__FILE__, line, "message lacks \"%s\": %s", needle, err.msg);
  } else if (s.nodes || s.leaves || s.nnodes) {
    vf_test_fail(__FILE__, line, "output not zeroed after an error");
  }
  synth_free(&m);
}

VF_TEST(synthetic_three_level_list) {
  static const el e[] = {{"root", G, NONE, 1, NONE, 0},
                         {"emb", G, OPT, 1, NONE, PQT_LT_LIST},
                         {"list", G, RPT, 1, NONE, 0},
                         {"element", PQT_FLOAT, OPT, 0, NONE, 0}};
  pqt_file_meta m;
  pqt_schema s;
  if (!build(e, 4, &m, &s)) return;
  CHECK_EQ_INT(s.nodes[1].kind, PQT_NODE_LIST);
  CHECK_EQ_INT(s.nodes[1].repeated, 2);
  CHECK_EQ_INT(s.nodes[1].element, 3);
  CHECK_EQ_INT(s.nodes[2].kind, PQT_NODE_STRUCT); /* the wrapper is not an implicit list */
  CHECK_EQ_INT(s.leaves[0].max_def, 3);
  CHECK_EQ_INT(s.leaves[0].max_rep, 1);
  CHECK_EQ_STR(s.leaves[0].path, "emb.list.element");
  CHECK_EQ_INT(s.leaves[0].top, 1);
  CHECK_EQ_INT(s.ntop, 1);
  CHECK_EQ_INT(s.top[0], 1);
  CHECK_EQ_INT(s.nodes[0].parent, -1);
  CHECK_EQ_INT(s.nodes[3].parent, 2);
  pqt_schema_free(&s);
  synth_free(&m);
}

VF_TEST(synthetic_two_level_lists) {
  /* 2-level primitive: the repeated leaf is the element */
  static const el prim[] = {{"root", G, NONE, 1, NONE, 0},
                            {"a", G, REQ, 1, PQT_CT_LIST, 0},
                            {"element", PQT_INT32, RPT, 0, NONE, 0}};
  /* 2-level struct: a repeated group with two fields is the element */
  static const el strct[] = {{"root", G, NONE, 1, NONE, 0},
                             {"a", G, OPT, 1, PQT_CT_LIST, 0},
                             {"pair", G, RPT, 2, NONE, 0},
                             {"x", PQT_INT32, REQ, 0, NONE, 0},
                             {"y", PQT_INT32, OPT, 0, NONE, 0}};
  /* "array" with one field: the repeated group is the element */
  static const el array[] = {{"root", G, NONE, 1, NONE, 0},
                             {"a", G, OPT, 1, PQT_CT_LIST, 0},
                             {"array", G, RPT, 1, NONE, 0},
                             {"x", PQT_INT32, REQ, 0, NONE, 0}};
  /* "<name>_tuple" with one field */
  static const el tuple[] = {{"root", G, NONE, 1, NONE, 0},
                             {"a", G, OPT, 1, PQT_CT_LIST, 0},
                             {"a_tuple", G, RPT, 1, NONE, 0},
                             {"x", PQT_INT32, REQ, 0, NONE, 0}};
  /* one field that is itself repeated: the repeated group is the element */
  static const el rr[] = {{"root", G, NONE, 1, NONE, 0},
                          {"a", G, OPT, 1, PQT_CT_LIST, 0},
                          {"bag", G, RPT, 1, NONE, 0},
                          {"x", PQT_INT32, RPT, 0, NONE, 0}};
  /* "b_tuple" under "a" is not a tuple name: 3-level, element = x */
  static const el not_tuple[] = {{"root", G, NONE, 1, NONE, 0},
                                 {"a", G, OPT, 1, PQT_CT_LIST, 0},
                                 {"b_tuple", G, RPT, 1, NONE, 0},
                                 {"x", PQT_INT32, REQ, 0, NONE, 0}};
  static const struct {
    const el *e;
    int n, element, element_kind;
  } cases[] = {{prim, 3, 2, PQT_NODE_PRIMITIVE}, {strct, 5, 2, PQT_NODE_STRUCT},
               {array, 4, 2, PQT_NODE_STRUCT},   {tuple, 4, 2, PQT_NODE_STRUCT},
               {rr, 4, 2, PQT_NODE_STRUCT},      {not_tuple, 4, 3, PQT_NODE_PRIMITIVE}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    pqt_file_meta m;
    pqt_schema s;
    if (!build(cases[k].e, cases[k].n, &m, &s)) continue;
    if (s.nodes[1].kind != PQT_NODE_LIST || s.nodes[1].repeated != 2 ||
        s.nodes[1].element != cases[k].element ||
        (int)s.nodes[cases[k].element].kind != cases[k].element_kind)
      vf_test_fail(__FILE__, __LINE__, "case %zu: kind %d repeated %d element %d (kind %d)", k,
                   s.nodes[1].kind, s.nodes[1].repeated, s.nodes[1].element,
                   s.nodes[s.nodes[1].element].kind);
    pqt_schema_free(&s);
    synth_free(&m);
  }
  /* the repeated-in-repeated case: the inner repeated leaf is an implicit list */
  pqt_file_meta m;
  pqt_schema s;
  if (build(rr, 4, &m, &s)) {
    CHECK_EQ_INT(s.nodes[3].kind, PQT_NODE_LIST);
    CHECK_EQ_INT(s.nodes[3].element, 3);
    CHECK_EQ_INT(s.leaves[0].max_def, 3);
    CHECK_EQ_INT(s.leaves[0].max_rep, 2);
    pqt_schema_free(&s);
    synth_free(&m);
  }
}

VF_TEST(synthetic_implicit_lists) {
  static const el e[] = {{"root", G, NONE, 3, NONE, 0},
                         {"tags", PQT_BYTE_ARRAY, RPT, 0, PQT_CT_UTF8, 0},
                         {"items", G, RPT, 2, NONE, 0},
                         {"k", PQT_INT64, REQ, 0, NONE, 0},
                         {"v", PQT_DOUBLE, OPT, 0, NONE, 0},
                         /* a repeated LIST group outside a LIST: the annotation cannot apply */
                         {"odd", G, RPT, 1, PQT_CT_LIST, 0},
                         {"x", PQT_INT32, RPT, 0, NONE, 0}};
  pqt_file_meta m;
  pqt_schema s;
  if (!build(e, 7, &m, &s)) return;
  CHECK_EQ_INT(s.nodes[1].kind, PQT_NODE_LIST);
  CHECK(s.nodes[1].repeated == 1 && s.nodes[1].element == 1 && s.nodes[1].leaf == 0);
  CHECK_EQ_INT(s.nodes[2].kind, PQT_NODE_LIST);
  CHECK(s.nodes[2].repeated == 2 && s.nodes[2].element == 2);
  CHECK_EQ_INT(s.nodes[2].first_leaf, 1);
  CHECK_EQ_INT(s.nodes[2].nleaves, 2);
  CHECK_EQ_INT(s.leaves[2].max_def, 2);
  CHECK_EQ_INT(s.leaves[2].max_rep, 1);
  CHECK_EQ_STR(s.leaves[2].path, "items.v");
  CHECK_EQ_INT(s.nodes[5].kind, PQT_NODE_LIST);
  CHECK_EQ_INT(s.nodes[5].element, 5);
  CHECK_EQ_INT(s.nodes[6].kind, PQT_NODE_LIST); /* not claimed by "odd": implicit list */
  CHECK_EQ_INT(s.leaves[3].max_rep, 2);
  pqt_schema_free(&s);
  synth_free(&m);
}

VF_TEST(synthetic_maps) {
  /* standard MAP, legacy MAP_KEY_VALUE on the outer group, logical-only MAP without value */
  static const el e[] = {{"root", G, NONE, 3, NONE, 0},
                         {"m1", G, OPT, 1, PQT_CT_MAP, PQT_LT_MAP},
                         {"key_value", G, RPT, 2, PQT_CT_MAP_KEY_VALUE, 0},
                         {"key", PQT_BYTE_ARRAY, REQ, 0, PQT_CT_UTF8, 0},
                         {"value", PQT_INT32, OPT, 0, NONE, 0},
                         {"m2", G, OPT, 1, PQT_CT_MAP_KEY_VALUE, 0},
                         {"map", G, RPT, 2, NONE, 0},
                         {"key", PQT_INT32, REQ, 0, NONE, 0},
                         {"value", PQT_INT32, REQ, 0, NONE, 0},
                         {"m3", G, REQ, 1, NONE, PQT_LT_MAP},
                         {"kv", G, RPT, 1, NONE, 0},
                         {"key", PQT_INT32, REQ, 0, NONE, 0}};
  pqt_file_meta m;
  pqt_schema s;
  if (!build(e, 12, &m, &s)) return;
  CHECK_EQ_INT(s.nodes[1].kind, PQT_NODE_MAP);
  CHECK(s.nodes[1].repeated == 2 && s.nodes[1].key == 3 && s.nodes[1].value == 4);
  CHECK_EQ_INT(s.nodes[2].kind, PQT_NODE_STRUCT); /* MAP_KEY_VALUE inside a MAP: not a map */
  CHECK_EQ_INT(s.nodes[5].kind, PQT_NODE_MAP);
  CHECK(s.nodes[5].repeated == 6 && s.nodes[5].key == 7 && s.nodes[5].value == 8);
  CHECK_EQ_INT(s.nodes[9].kind, PQT_NODE_MAP);
  CHECK(s.nodes[9].key == 11 && s.nodes[9].value == -1);
  CHECK_EQ_INT(s.leaves[1].max_def, 3);
  CHECK_EQ_INT(s.leaves[1].max_rep, 1);
  pqt_schema_free(&s);
  synth_free(&m);
}

VF_TEST(synthetic_malformed_annotations_read_as_structs) {
  static const el e[] = {{"root", G, NONE, 3, NONE, 0},
                         /* LIST with two children */
                         {"l2", G, OPT, 2, PQT_CT_LIST, 0},
                         {"a", PQT_INT32, RPT, 0, NONE, 0},
                         {"b", PQT_INT32, RPT, 0, NONE, 0},
                         /* LIST whose only child is not repeated */
                         {"lr", G, OPT, 1, NONE, PQT_LT_LIST},
                         {"x", PQT_INT32, OPT, 0, NONE, 0},
                         /* MAP whose key_value has three fields */
                         {"m3", G, OPT, 1, PQT_CT_MAP, 0},
                         {"kv", G, RPT, 3, NONE, 0},
                         {"k", PQT_INT32, REQ, 0, NONE, 0},
                         {"v", PQT_INT32, REQ, 0, NONE, 0},
                         {"w", PQT_INT32, REQ, 0, NONE, 0}};
  pqt_file_meta m;
  pqt_schema s;
  if (!build(e, 11, &m, &s)) return;
  CHECK_EQ_INT(s.nodes[1].kind, PQT_NODE_STRUCT);
  CHECK_EQ_INT(s.nodes[2].kind, PQT_NODE_LIST); /* implicit lists inside */
  CHECK_EQ_INT(s.nodes[3].kind, PQT_NODE_LIST);
  CHECK_EQ_INT(s.nodes[4].kind, PQT_NODE_STRUCT);
  CHECK_EQ_INT(s.nodes[5].kind, PQT_NODE_PRIMITIVE);
  CHECK_EQ_INT(s.nodes[6].kind, PQT_NODE_STRUCT);
  CHECK_EQ_INT(s.nodes[7].kind, PQT_NODE_LIST);
  CHECK_EQ_INT(s.nodes[7].element, 7);
  pqt_schema_free(&s);
  synth_free(&m);
}

VF_TEST(synthetic_levels_and_paths) {
  /* root repetition is ignored; absent repetition reads as required */
  static const el e[] = {{"root", G, RPT, 2, NONE, 0},
                         {"s", G, OPT, 2, NONE, 0},
                         {"a", PQT_INT32, NONE, 0, NONE, 0},
                         {"t", G, OPT, 1, NONE, 0},
                         {"b", PQT_FIXED_LEN_BYTE_ARRAY, OPT, 0, NONE, 0},
                         {"c", PQT_BOOLEAN, REQ, 0, NONE, 0}};
  pqt_file_meta m;
  pqt_schema s;
  if (!build(e, 6, &m, &s)) return;
  CHECK_EQ_INT(s.nodes[0].def_level, 0);
  CHECK_EQ_INT(s.nodes[0].rep_level, 0);
  CHECK_EQ_INT(s.nleaves, 3);
  CHECK_EQ_STR(s.leaves[0].path, "s.a");
  CHECK_EQ_INT(s.leaves[0].max_def, 1);
  CHECK_EQ_STR(s.leaves[1].path, "s.t.b");
  CHECK_EQ_INT(s.leaves[1].max_def, 3);
  CHECK_EQ_INT(s.leaves[1].type, PQT_FIXED_LEN_BYTE_ARRAY);
  CHECK_EQ_INT(s.leaves[1].type_length, 4);
  CHECK_EQ_INT(s.leaves[1].top, 1);
  CHECK_EQ_STR(s.leaves[2].path, "c");
  CHECK_EQ_INT(s.leaves[2].max_def, 0);
  CHECK_EQ_INT(s.leaves[2].top, 5);
  CHECK_EQ_INT(s.nodes[1].first_leaf, 0);
  CHECK_EQ_INT(s.nodes[1].nleaves, 2);
  CHECK_EQ_INT(s.nodes[3].first_leaf, 1);
  CHECK_EQ_INT(s.nodes[3].nleaves, 1);
  CHECK_EQ_INT(s.nodes[0].nleaves, 3);
  CHECK_EQ_INT(s.nodes[2].leaf, 0);
  CHECK_EQ_INT(s.nodes[1].leaf, -1);
  CHECK_EQ_INT(s.ntop, 2);
  pqt_schema_free(&s);
  synth_free(&m);

  /* a schema without columns */
  static const el empty[] = {{"root", G, NONE, 0, NONE, 0}};
  if (build(empty, 1, &m, &s)) {
    CHECK_EQ_INT(s.nleaves, 0);
    CHECK_EQ_INT(s.ntop, 0);
    pqt_schema_free(&s);
    synth_free(&m);
  }
}

VF_TEST(synthetic_nesting_limit) {
  /* root + 254 optional groups + a leaf = depth 255, levels 255: accepted; one more: refused */
  for (int extra = 0; extra < 2; extra++) {
    int n = 256 + extra;
    el *e = calloc((size_t)n, sizeof *e);
    e[0] = (el){"root", G, NONE, 1, NONE, 0};
    for (int i = 1; i < n - 1; i++)
      e[i] = (el){"g", G, OPT, 1, NONE, 0};
    e[n - 1] = (el){"leaf", PQT_INT32, RPT, 0, NONE, 0};
    if (extra == 0) {
      pqt_file_meta m;
      pqt_schema s;
      if (build(e, n, &m, &s)) {
        CHECK_EQ_INT(s.leaves[0].max_def, 255);
        CHECK_EQ_INT(s.leaves[0].max_rep, 1);
        CHECK_EQ_INT(strlen(s.leaves[0].path), 254 * 2 + 4);
        pqt_schema_free(&s);
        synth_free(&m);
      }
    } else {
      expect_fail(e, n, VF_ECORRUPT, "deeper than 255", __LINE__);
    }
    free(e);
  }
}

VF_TEST(synthetic_rejects_malformed_trees) {
  static const el past_end[] = {{"root", G, NONE, 2, NONE, 0}, {"a", PQT_INT32, REQ, 0, NONE, 0}};
  expect_fail(past_end, 2, VF_ECORRUPT, "only 1 elements follow", __LINE__);
  static const el past_end2[] = {
      {"root", G, NONE, 2, NONE, 0}, {"s", G, REQ, 1, NONE, 0}, {"a", PQT_INT32, REQ, 0, NONE, 0}};
  expect_fail(past_end2, 3, VF_ECORRUPT, "runs past the end", __LINE__);
  static const el both[] = {{"root", G, NONE, 1, NONE, 0},
                            {"a", PQT_INT32, REQ, 1, NONE, 0},
                            {"b", PQT_INT32, REQ, 0, NONE, 0}};
  expect_fail(both, 3, VF_ECORRUPT, "both a physical type", __LINE__);
  static const el leftover[] = {{"root", G, NONE, 1, NONE, 0},
                                {"a", PQT_INT32, REQ, 0, NONE, 0},
                                {"b", PQT_INT32, REQ, 0, NONE, 0}};
  expect_fail(leftover, 3, VF_ECORRUPT, "not part of the tree", __LINE__);
  static const el prim_root[] = {{"root", PQT_INT32, NONE, 0, NONE, 0}};
  expect_fail(prim_root, 1, VF_ECORRUPT, "root must be a group", __LINE__);
  static const el vector[] = {{"root", G, NONE, 1, NONE, 0}, {"v", PQT_FLOAT, 3, 0, NONE, 0}};
  expect_fail(vector, 2, VF_EUNSUPPORTED, "VECTOR", __LINE__);
  expect_fail(NULL, 0, VF_ECORRUPT, "empty", __LINE__);
  /* FLBA without a width */
  pqt_file_meta m = synth(
      (const el[]){{"root", G, NONE, 1, NONE, 0}, {"f", PQT_FIXED_LEN_BYTE_ARRAY, REQ, 0, NONE, 0}},
      2);
  m.schema[1].type_length = 0;
  pqt_schema s;
  vf_error err = {0};
  CHECK_STATUS(pqt_schema_build(&m, &s, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "type_length") != NULL);
  synth_free(&m);
}

/* segmentio/parquet-go: a root that carries a physical type, and empty struct groups (no type,
 * no children).  DuckDB and arrow-rs read both (issue 14); the file-level read is checked
 * against arrow-rs in tests/format/test_realworld.sh. */
VF_TEST(synthetic_typed_root_and_empty_groups) {
  static const el e[] = {{"root", PQT_BOOLEAN, NONE, 3, NONE, 0},
                         {"a", PQT_INT32, OPT, 0, NONE, 0},
                         {"empty", G, OPT, 0, NONE, 0},
                         {"s", G, REQ, 2, NONE, 0},
                         {"inner_empty", G, REQ, 0, NONE, 0},
                         {"b", PQT_INT64, REQ, 0, NONE, 0}};
  pqt_file_meta m;
  pqt_schema s;
  if (!build(e, 6, &m, &s)) return;
  CHECK_EQ_INT(s.nleaves, 2);
  CHECK_EQ_STR(s.leaves[0].path, "a");
  CHECK_EQ_STR(s.leaves[1].path, "s.b");
  CHECK_EQ_INT(s.ntop, 3);
  const pqt_node *empty = &s.nodes[2];
  CHECK_EQ_INT(empty->kind, PQT_NODE_STRUCT);
  CHECK_EQ_INT(empty->nleaves, 0);
  CHECK_EQ_INT(empty->leaf, -1);
  CHECK_EQ_INT(s.nodes[3].nleaves, 1);
  CHECK_EQ_INT(s.nodes[3].first_leaf, 1);
  CHECK_EQ_INT(s.nodes[4].kind, PQT_NODE_STRUCT);
  pqt_schema_free(&s);
  synth_free(&m);
  /* a typed root without children is still a primitive root, and a typed group below it still
   * corrupt (both rejected above) */
}

VF_TEST(synthetic_row_groups_must_match_leaves) {
  static const el e[] = {{"root", G, NONE, 2, NONE, 0},
                         {"a", PQT_INT32, REQ, 0, NONE, 0},
                         {"b", PQT_DOUBLE, OPT, 0, NONE, 0}};
  pqt_file_meta m = synth(e, 3);
  pqt_row_group rg;
  memset(&rg, 0, sizeof rg);
  pqt_column_chunk cols[2];
  memset(cols, 0, sizeof cols);
  cols[0].has_meta_data = cols[1].has_meta_data = true;
  cols[0].meta.type = PQT_INT32;
  cols[1].meta.type = PQT_DOUBLE;
  rg.columns = cols;
  rg.ncolumns = 2;
  m.row_groups = &rg;
  m.nrow_groups = 1;
  pqt_schema s;
  vf_error err = {0};
  CHECK_OK(pqt_schema_build(&m, &s, &err));
  pqt_schema_free(&s);
  rg.ncolumns = 1; /* ARROW-GH-41317-like: a column chunk missing */
  CHECK_STATUS(pqt_schema_build(&m, &s, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row group 0 has 1 column chunks") != NULL);
  rg.ncolumns = 2;
  cols[1].meta.type = PQT_FLOAT; /* type differs from the schema */
  CHECK_STATUS(pqt_schema_build(&m, &s, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "'b'") != NULL);
  cols[1].has_meta_data = false; /* encrypted column metadata: cannot check, accepted */
  CHECK_OK(pqt_schema_build(&m, &s, &err));
  pqt_schema_free(&s);
  synth_free(&m);
}

VF_TEST(synthetic_path_budget) {
  /* 255 levels of 1.1 MiB names above one leaf: its dotted path alone would be ~280 MiB */
  size_t nl = (size_t)11 << 17;
  char *name = malloc(nl + 1);
  memset(name, 'n', nl);
  name[nl] = '\0';
  int n = 256;
  el *e = calloc((size_t)n, sizeof *e);
  e[0] = (el){"root", G, NONE, 1, NONE, 0};
  for (int i = 1; i < n - 1; i++)
    e[i] = (el){name, G, OPT, 1, NONE, 0};
  e[n - 1] = (el){name, PQT_INT32, REQ, 0, NONE, 0};
  expect_fail(e, n, VF_EUNSUPPORTED, "leaf paths exceed 256 MiB", __LINE__);
  /* the same with short names builds */
  for (int i = 1; i < n; i++)
    e[i].name = "n";
  pqt_file_meta m;
  pqt_schema s;
  if (build(e, n, &m, &s)) {
    CHECK_EQ_INT(s.leaves[0].max_def, 254);
    pqt_schema_free(&s);
    synth_free(&m);
  }
  free(e);
  free(name);
}
