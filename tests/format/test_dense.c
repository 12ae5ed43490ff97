/* Dense vector assembly tests: files written by vforge's own writer and (when node and the
 * oracle modules are present) by DuckDB, plus hand-built leaf data against schemas written as
 * bare footers, for the shapes the writers cannot produce (double, float16, FLBA, null
 * elements, irregular rows). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/pqt_internal.h"
#include "vf_test.h"

/* --------------------------------------------------------- bare-footer files */

typedef struct sel {
  const char *name;
  int type; /* -1 group */
  int32_t type_length;
  int repetition; /* -1 none (root) */
  int32_t nchildren;
  int converted; /* -1 none */
  bool float16;  /* LogicalType FLOAT16 */
} sel;

/* A parquet file with the given schema and no row groups: magic, footer, length, magic. */
static uint8_t *bare_file(const sel *s, int n, size_t *len) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_buf_append(&b, "PAR1", 4, NULL);
  size_t start = b.len;
  tc_writer w;
  tcw_init(&w, &b, NULL);
  tcw_struct_begin(&w);
  tcw_field_i32(&w, 1, 1);
  tcw_field_list_begin(&w, 2, TC_STRUCT, (uint32_t)n);
  for (int i = 0; i < n; i++) {
    tcw_list_struct_begin(&w);
    if (s[i].type >= 0) tcw_field_i32(&w, 1, s[i].type);
    if (s[i].type_length > 0) tcw_field_i32(&w, 2, s[i].type_length);
    if (s[i].repetition >= 0) tcw_field_i32(&w, 3, s[i].repetition);
    tcw_field_binary(&w, 4, s[i].name, strlen(s[i].name));
    if (s[i].nchildren > 0) tcw_field_i32(&w, 5, s[i].nchildren);
    if (s[i].converted >= 0) tcw_field_i32(&w, 6, s[i].converted);
    if (s[i].float16) {
      tcw_field_struct_begin(&w, 10);
      tcw_field_struct_begin(&w, 15);
      tcw_struct_end(&w);
      tcw_struct_end(&w);
    }
    tcw_struct_end(&w);
  }
  tcw_field_i64(&w, 3, 0);
  tcw_field_list_begin(&w, 4, TC_STRUCT, 0);
  tcw_struct_end(&w);
  uint32_t flen = (uint32_t)(b.len - start);
  vf_buf_append(&b, &flen, 4, NULL);
  vf_buf_append(&b, "PAR1", 4, NULL);
  *len = b.len;
  return b.data;
}

typedef struct fx {
  uint8_t *bytes;
  pqt_file *f;
} fx;

static bool fx_open(fx *x, const sel *s, int n) {
  size_t len;
  x->bytes = bare_file(s, n, &len);
  io_source *src;
  vf_error err = {0};
  if (io_open_memory(x->bytes, len, "synthetic.parquet", &src, &err) != VF_OK ||
      pqt_open(src, NULL, &x->f, &err) != VF_OK) {
    vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
    free(x->bytes);
    return false;
  }
  return true;
}

static void fx_close(fx *x) {
  pqt_close(x->f);
  free(x->bytes);
}

/* optional group emb (LIST) { repeated group list { optional <elem> element; } } */
static bool open_list(fx *x, int type, int32_t tl, bool f16) {
  sel s[] = {{"schema", -1, 0, -1, 1, -1, false},
             {"emb", -1, 0, PQT_OPTIONAL, 1, PQT_CT_LIST, false},
             {"list", -1, 0, PQT_REPEATED, 1, -1, false},
             {"element", type, tl, PQT_OPTIONAL, 0, -1, f16}};
  return fx_open(x, s, 4);
}

static void set_leaf(pqt_leaf_data *d, int type, int32_t width, const uint8_t *def,
                     const uint8_t *rep, int64_t nl, const void *vals, int64_t nv) {
  pqt_leaf_data_init(d);
  d->leaf = 0;
  d->type = (pqt_physical)type;
  d->width = width;
  d->nlevels = nl;
  d->nvalues = nv;
  d->nrows = 0;
  for (int64_t i = 0; rep && i < nl; i++)
    d->nrows += rep[i] == 0;
  if (!rep) d->nrows = nl;
  if (def) {
    d->def = malloc((size_t)nl);
    memcpy(d->def, def, (size_t)nl);
  }
  if (rep) {
    d->rep = malloc((size_t)nl);
    memcpy(d->rep, rep, (size_t)nl);
  }
  vf_buf_append(&d->values, vals, (size_t)(nv * width), NULL);
}

VF_TEST(list_float_fast_path_and_inference) {
  fx x;
  if (!open_list(&x, PQT_FLOAT, 0, false)) return;
  int top = pqt_find_top(x.f, "emb");
  CHECK(top >= 0);
  const float v[6] = {1, 2, 3, 4, 5, 6};
  const uint8_t rep[6] = {0, 1, 1, 0, 1, 1};
  pqt_leaf_data d;
  set_leaf(&d, PQT_FLOAT, 4, NULL, rep, 6, v, 6);
  pqt_dense out = {0};
  int32_t dim = 0;
  vf_error err = {0};
  CHECK_OK(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err));
  CHECK_EQ_INT(dim, 3);
  CHECK_EQ_INT(out.rows, 2);
  CHECK(out.null_rows == NULL);
  CHECK(out.data && memcmp(out.data, v, sizeof v) == 0);
  /* expected dimension given and wrong */
  dim = 2;
  CHECK_STATUS(pqt_dense_from_leaf(x.f, top, &d, 100, &dim, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 0 (file row 100)") != NULL);
  CHECK(strstr(err.msg, "dimension 3, expected 2") != NULL);
  pqt_leaf_data_free(&d);
  pqt_dense_free(&out);
  fx_close(&x);
}

/* 40-d rows: the level check of the fast path runs its 32-byte SSE2 steps, and a level other than
 * 0 or 1 anywhere in them (here past the first step, in the second row) sends the row group to
 * the general walk, which names it */
VF_TEST(list_fast_path_wide_level_check) {
  fx x;
  if (!open_list(&x, PQT_FLOAT, 0, false)) return;
  int top = pqt_find_top(x.f, "emb");
  enum { D = 40, R = 3 };
  float v[D * R];
  uint8_t rep[D * R];
  for (int i = 0; i < D * R; i++) {
    v[i] = (float)i;
    rep[i] = i % D != 0;
  }
  pqt_leaf_data d;
  set_leaf(&d, PQT_FLOAT, 4, NULL, rep, D * R, v, D * R);
  pqt_dense out = {0};
  int32_t dim = 0;
  vf_error err = {0};
  CHECK_OK(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err));
  CHECK_EQ_INT(dim, D);
  CHECK(out.data && memcmp(out.data, v, sizeof v) == 0);
  for (int k = 0; k < 3; k++) { /* in the first and second SSE2 lane, and in the 8-byte tail */
    int at = D + (k == 0 ? 1 : k == 1 ? 30 : 37);
    pqt_leaf_data_free(&d);
    rep[at] = 2;
    set_leaf(&d, PQT_FLOAT, 4, NULL, rep, D * R, v, D * R);
    rep[at] = 1;
    dim = 0;
    CHECK_STATUS(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err), VF_ECORRUPT);
    CHECK(strstr(err.msg, "row 1") != NULL && strstr(err.msg, "repetition level 2") != NULL);
  }
  pqt_leaf_data_free(&d);
  pqt_dense_free(&out);
  fx_close(&x);
}

VF_TEST(list_dimension_mismatch_names_row) {
  fx x;
  if (!open_list(&x, PQT_FLOAT, 0, false)) return;
  int top = pqt_find_top(x.f, "emb");
  const float v[7] = {1, 2, 3, 4, 5, 6, 7};
  /* rows of 3, 3, 1: the third row is short */
  const uint8_t rep[7] = {0, 1, 1, 0, 1, 1, 0};
  pqt_leaf_data d;
  set_leaf(&d, PQT_FLOAT, 4, NULL, rep, 7, v, 7);
  pqt_dense out = {0};
  int32_t dim = 0;
  vf_error err = {0};
  CHECK_STATUS(pqt_dense_from_leaf(x.f, top, &d, 1000, &dim, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 2 (file row 1002): vector column emb has dimension 1, expected 3") !=
        NULL);
  pqt_leaf_data_free(&d);
  /* a longer row */
  const uint8_t rep2[7] = {0, 1, 0, 1, 1, 1, 1};
  set_leaf(&d, PQT_FLOAT, 4, NULL, rep2, 7, v, 7);
  dim = 0;
  CHECK_STATUS(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 1") != NULL && strstr(err.msg, "expected 2") != NULL);
  pqt_leaf_data_free(&d);
  pqt_dense_free(&out);
  fx_close(&x);
}

VF_TEST(list_nulls_empty_and_null_elements) {
  fx x;
  if (!open_list(&x, PQT_FLOAT, 0, false)) return;
  int top = pqt_find_top(x.f, "emb");
  /* def levels: 0 = emb null, 1 = empty list, 2 = null element, 3 = value */
  const float v[4] = {1, 2, 3, 4};
  const uint8_t rep[5] = {0, 0, 1, 0, 1};
  const uint8_t def[5] = {0, 3, 3, 3, 3};
  pqt_leaf_data d;
  set_leaf(&d, PQT_FLOAT, 4, def, rep, 5, v, 4);
  pqt_dense out = {0};
  int32_t dim = 0;
  vf_error err = {0};
  CHECK_OK(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err));
  CHECK_EQ_INT(dim, 2);
  CHECK_EQ_INT(out.rows, 3);
  CHECK(out.null_rows && out.null_rows[0] == 1 && out.null_rows[1] == 0 && out.null_rows[2] == 0);
  CHECK(out.data[0] == 0 && out.data[1] == 0 && out.data[2] == 1 && out.data[5] == 4);
  pqt_leaf_data_free(&d);
  /* a null element */
  const uint8_t def2[6] = {3, 3, 3, 3, 2, 3};
  set_leaf(&d, PQT_FLOAT, 4, def2, (const uint8_t[]){0, 1, 0, 1, 0, 1}, 6,
           (const float[]){1, 2, 3, 4, 5}, 5);
  dim = 0;
  CHECK_STATUS(pqt_dense_from_leaf(x.f, top, &d, 10, &dim, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 2 (file row 12): null element at position 0 in vector column emb") !=
        NULL);
  pqt_leaf_data_free(&d);
  /* an empty list */
  const uint8_t def3[5] = {3, 3, 3, 3, 1};
  set_leaf(&d, PQT_FLOAT, 4, def3, (const uint8_t[]){0, 1, 0, 1, 0}, 5, v, 4);
  dim = 0;
  CHECK_STATUS(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 2") != NULL && strstr(err.msg, "dimension 0, expected 2") != NULL);
  pqt_leaf_data_free(&d);
  pqt_dense_free(&out);
  fx_close(&x);
}

VF_TEST(list_double_and_float16) {
  fx x;
  if (!open_list(&x, PQT_DOUBLE, 0, false)) return;
  int top = pqt_find_top(x.f, "emb");
  const double v[4] = {0.5, -1.25, 3, 1e10};
  const uint8_t rep[4] = {0, 1, 0, 1};
  pqt_leaf_data d;
  set_leaf(&d, PQT_DOUBLE, 8, NULL, rep, 4, v, 4);
  pqt_dense out = {0};
  int32_t dim = 2;
  vf_error err = {0};
  CHECK_OK(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err));
  CHECK(out.data[0] == 0.5f && out.data[1] == -1.25f && out.data[3] == 1e10f);
  pqt_leaf_data_free(&d);
  fx_close(&x);
  if (!open_list(&x, PQT_FIXED_LEN_BYTE_ARRAY, 2, true)) return;
  top = pqt_find_top(x.f, "emb");
  const uint16_t h[4] = {0x3c00, 0xc000, 0x3800, 0x0000}; /* 1, -2, 0.5, 0 */
  set_leaf(&d, PQT_FIXED_LEN_BYTE_ARRAY, 2, NULL, rep, 4, h, 4);
  dim = 0;
  CHECK_OK(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err));
  CHECK_EQ_INT(dim, 2);
  CHECK(out.data[0] == 1.0f && out.data[1] == -2.0f && out.data[2] == 0.5f && out.data[3] == 0.0f);
  pqt_leaf_data_free(&d);
  pqt_dense_free(&out);
  fx_close(&x);
  /* a list of INT32 is not a vector */
  if (!open_list(&x, PQT_INT32, 0, false)) return;
  top = pqt_find_top(x.f, "emb");
  set_leaf(&d, PQT_INT32, 4, NULL, rep, 4, v, 4);
  CHECK_STATUS(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "not a dense vector") != NULL);
  pqt_leaf_data_free(&d);
  pqt_dense_free(&out);
  fx_close(&x);
}

VF_TEST(flba_vectors) {
  sel s[] = {{"schema", -1, 0, -1, 1, -1, false},
             {"vec", PQT_FIXED_LEN_BYTE_ARRAY, 12, PQT_OPTIONAL, 0, -1, false}};
  fx x;
  if (!fx_open(&x, s, 2)) return;
  int top = pqt_find_top(x.f, "vec");
  const float v[6] = {1, 2, 3, 4, 5, 6};
  const uint8_t def[3] = {1, 0, 1};
  pqt_leaf_data d;
  set_leaf(&d, PQT_FIXED_LEN_BYTE_ARRAY, 12, def, NULL, 3, v, 2);
  pqt_dense out = {0};
  int32_t dim = 0;
  vf_error err = {0};
  CHECK_OK(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err));
  CHECK_EQ_INT(dim, 3);
  CHECK_EQ_INT(out.rows, 3);
  CHECK(out.null_rows && out.null_rows[1] == 1);
  CHECK(out.data[0] == 1 && out.data[3] == 0 && out.data[6] == 4 && out.data[8] == 6);
  dim = 4;
  CHECK_STATUS(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "dimension 3, expected 4") != NULL);
  pqt_leaf_data_free(&d);
  pqt_dense_free(&out);
  fx_close(&x);
}

/* --------------------------------------------------- via the writer and reader */

static vf_status read_dense(const char *path, const char *col, int32_t *dim, pqt_dense *out,
                            vf_error *err) {
  io_source *src;
  pqt_file *f;
  vf_status st = io_open_local(path, &src, err);
  if (st != VF_OK) return st;
  if ((st = pqt_open(src, NULL, &f, err)) != VF_OK) return st;
  int top = pqt_find_top(f, col);
  if (top < 0) {
    pqt_close(f);
    return vf_error_set(err, VF_ENOTFOUND, "no column %s", col);
  }
  const pqt_node *n = &pqt_schema_of(f)->nodes[top];
  int leaf = n->first_leaf;
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  int64_t first = 0;
  float *all = NULL;
  int64_t rows = 0;
  for (int g = 0; st == VF_OK && g < pqt_meta(f)->nrow_groups; g++) {
    st = pqt_read_leaves(f, g, &leaf, 1, &d, err);
    if (st == VF_OK) st = pqt_dense_from_leaf(f, top, &d, first, dim, out, err);
    if (st == VF_OK) {
      all = realloc(all, (size_t)(rows + out->rows) * (size_t)*dim * sizeof(float) + 1);
      memcpy(all + rows * *dim, out->data, (size_t)out->rows * (size_t)*dim * sizeof(float));
      rows += out->rows;
    }
    first += pqt_meta(f)->row_groups[g].num_rows;
  }
  if (st == VF_OK) {
    free(out->data);
    out->data = all;
    out->rows = rows;
    out->cap = (size_t)(rows * *dim);
  } else {
    free(all);
  }
  pqt_leaf_data_free(&d);
  pqt_close(f);
  return st;
}

VF_TEST(writer_vectors_round_trip) {
  char path[4096];
  snprintf(path, sizeof path, "%s/vec.parquet", vf_test_tmpdir());
  pqt_wcolumn cols[1] = {{.name = "emb", .type = PQT_W_VECTOR, .nullable = false, .dim = 16}};
  pqt_writer_opts o = {.codec = PQT_UNCOMPRESSED, .row_group_rows = 100, .page_bytes = 4096};
  pqt_writer *w;
  vf_error err = {0};
  if (pqt_writer_open(path, cols, 1, &o, &w, &err) != VF_OK)
    return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  enum { N = 250, D = 16 };
  static float v[N * D];
  for (int i = 0; i < N * D; i++)
    v[i] = (float)i * 0.25f - 7.0f;
  pqt_wbatch b = {.values = v};
  CHECK_OK(pqt_writer_write(w, &b, N, &err));
  CHECK_OK(pqt_writer_close(w, &err));
  pqt_dense out = {0};
  int32_t dim = 0;
  CHECK_OK(read_dense(path, "emb", &dim, &out, &err));
  CHECK_EQ_INT(dim, D);
  CHECK_EQ_INT(out.rows, N);
  CHECK(out.data && memcmp(out.data, v, sizeof v) == 0);
  pqt_dense_free(&out);

  /* variable-length lists: the third row in the second row group is short */
  snprintf(path, sizeof path, "%s/ragged.parquet", vf_test_tmpdir());
  pqt_wcolumn c2[1] = {{.name = "emb", .type = PQT_W_LIST_FLOAT, .nullable = true}};
  o.row_group_rows = 4;
  if (pqt_writer_open(path, c2, 1, &o, &w, &err) != VF_OK)
    return vf_test_fail(__FILE__, __LINE__, "%s", err.msg);
  int64_t off[9] = {0, 3, 6, 9, 12, 15, 18, 20, 23};
  uint8_t valid[8] = {1, 1, 0, 1, 1, 1, 1, 1};
  int64_t off_null[9] = {0, 3, 6, 6, 9, 12, 15, 17, 20};
  pqt_wbatch b2 = {.values = v, .offsets = off_null, .valid = valid};
  (void)off;
  CHECK_OK(pqt_writer_write(w, &b2, 8, &err));
  CHECK_OK(pqt_writer_close(w, &err));
  dim = 0;
  CHECK_STATUS(read_dense(path, "emb", &dim, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "row 2 (file row 6): vector column emb has dimension 2, expected 3") !=
        NULL);
  pqt_dense_free(&out);
}

/* ------------------------------------------------------- DuckDB fixtures */

VF_TEST(duckdb_vectors) {
  const char *srcdir = getenv("VF_SRC");
  char mods[4096];
  struct stat st;
  snprintf(mods, sizeof mods, "%s/tests/oracle/node_modules/@duckdb/node-api",
           srcdir ? srcdir : ".");
  if (!srcdir || stat(mods, &st) != 0 || system("node --version >/dev/null 2>&1") != 0)
    return vf_test_skip("node or tests/oracle/node_modules not available");
  const char *tmp = vf_test_tmpdir();
  char script[4096], cmd[8192];
  snprintf(script, sizeof script, "%s/tests/oracle/vf_dense_fixture_%d.mjs", srcdir, (int)getpid());
  FILE *fp = fopen(script, "w");
  if (!fp) return vf_test_skip("cannot write the fixture script next to node_modules");
  fprintf(fp, "import { DuckDBInstance } from '@duckdb/node-api';\n"
              "const out = process.argv[2];\n"
              "const con = await (await DuckDBInstance.create(':memory:')).connect();\n"
              "await con.run(`copy (select i::BIGINT id, [i::FLOAT, (i*2)::FLOAT, "
              "(i*3)::FLOAT]::FLOAT[3] emb, "
              "case when i %% 5 = 0 then NULL else [i::DOUBLE/4, -i::DOUBLE] end demb from "
              "range(1000) r(i)) to "
              "'${out}/duck.parquet' (format parquet, row_group_size 300)`);\n"
              "await con.run(`copy (select case when i = 700 then [1::FLOAT] else [i::FLOAT, "
              "0::FLOAT] end emb "
              "from range(1000) r(i)) to '${out}/duck_bad.parquet' (format parquet, row_group_size "
              "300)`);\n");
  fclose(fp);
  snprintf(cmd, sizeof cmd, "node '%s' '%s' 2>&1", script, tmp);
  int rc = system(cmd);
  remove(script);
  if (rc != 0) return vf_test_skip("DuckDB fixture generation failed");
  char path[4096];
  snprintf(path, sizeof path, "%s/duck.parquet", tmp);
  pqt_dense out = {0};
  vf_error err = {0};
  int32_t dim = 0;
  CHECK_OK(read_dense(path, "emb", &dim, &out, &err));
  CHECK_EQ_INT(dim, 3);
  CHECK_EQ_INT(out.rows, 1000);
  bool ok = true;
  for (int i = 0; out.data && i < 1000; i++)
    ok = ok && out.data[3 * i] == (float)i && out.data[3 * i + 2] == (float)(3 * i);
  CHECK(ok);
  pqt_dense_free(&out);
  dim = 0;
  /* doubles with null vectors (rows i % 5 == 0) */
  io_source *src;
  pqt_file *f;
  CHECK_OK(io_open_local(path, &src, &err));
  CHECK_OK(pqt_open(src, NULL, &f, &err));
  int top = pqt_find_top(f, "demb");
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  int leaf = pqt_schema_of(f)->nodes[top].first_leaf;
  CHECK_OK(pqt_read_leaves(f, 0, &leaf, 1, &d, &err));
  CHECK_OK(pqt_dense_from_leaf(f, top, &d, 0, &dim, &out, &err));
  CHECK_EQ_INT(dim, 2);
  CHECK(out.null_rows != NULL);
  if (out.null_rows) {
    CHECK(out.null_rows[0] == 1 && out.null_rows[1] == 0 && out.null_rows[5] == 1);
    CHECK(out.data[2] == 0.25f && out.data[3] == -1.0f && out.data[0] == 0 && out.data[12] == 1.5f);
  }
  pqt_leaf_data_free(&d);
  pqt_close(f);
  pqt_dense_free(&out);
  snprintf(path, sizeof path, "%s/duck_bad.parquet", tmp);
  dim = 0;
  CHECK_STATUS(read_dense(path, "emb", &dim, &out, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "(file row 700): vector column emb has dimension 1, expected 2") != NULL);
  pqt_dense_free(&out);
}

/* DuckDB writes a null FLOAT[n] as n entries (rep 0 then n-1 entries of rep 1), all below the
 * list's definition level: both the dense path and the JSON rows must read it as one null. */
VF_TEST(duckdb_null_fixed_array_pattern) {
  fx x;
  if (!open_list(&x, PQT_FLOAT, 0, false)) return;
  int top = pqt_find_top(x.f, "emb");
  const float v[4] = {1, 2, 3, 4};
  const uint8_t rep[6] = {0, 1, 0, 1, 0, 1};
  const uint8_t def[6] = {3, 3, 0, 0, 3, 3};
  pqt_leaf_data d;
  set_leaf(&d, PQT_FLOAT, 4, def, rep, 6, v, 4);
  pqt_dense out = {0};
  int32_t dim = 0;
  vf_error err = {0};
  CHECK_OK(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err));
  CHECK_EQ_INT(dim, 2);
  CHECK_EQ_INT(out.rows, 3);
  CHECK(out.null_rows && out.null_rows[1] == 1 && out.null_rows[0] == 0);
  CHECK(out.data && out.data[4] == 3 && out.data[2] == 0);
  pqt_rows *r;
  int leaf = 0;
  CHECK_OK(pqt_rows_create(x.f, &top, 1, &r, &err));
  CHECK_OK(pqt_rows_bind(r, &d, &leaf, 1, 3, &err));
  vf_buf b;
  vf_buf_init(&b, 0);
  for (int i = 0; i < 3; i++) {
    CHECK_OK(pqt_rows_next(r, &b, &err));
    vf_buf_append(&b, "\n", 1, NULL);
  }
  vf_buf_append(&b, "", 1, NULL);
  CHECK_EQ_STR((const char *)b.data, "\"emb\":[1,2]\n\"emb\":null\n\"emb\":[3,4]\n");
  CHECK_STATUS(pqt_rows_next(r, &b, &err), VF_EUSAGE);
  pqt_leaf_data_free(&d);
  /* a defined element after a null list is corrupt, not silently dropped */
  const uint8_t def2[6] = {3, 3, 0, 3, 3, 3};
  set_leaf(&d, PQT_FLOAT, 4, def2, rep, 6, (const float[]){1, 2, 3, 4, 5}, 5);
  CHECK_OK(pqt_rows_bind(r, &d, &leaf, 1, 3, &err));
  vf_buf_reset(&b);
  CHECK_OK(pqt_rows_next(r, &b, &err));
  CHECK_STATUS(pqt_rows_next(r, &b, &err), VF_ECORRUPT);
  dim = 0;
  CHECK_STATUS(pqt_dense_from_leaf(x.f, top, &d, 0, &dim, &out, &err), VF_ECORRUPT);
  pqt_leaf_data_free(&d);
  /* levels that run out mid-row */
  set_leaf(&d, PQT_FLOAT, 4, NULL, (const uint8_t[]){0, 1, 1}, 3, v, 3);
  CHECK_OK(pqt_rows_bind(r, &d, &leaf, 1, 2, &err));
  CHECK_OK(pqt_rows_next(r, &b, &err));
  CHECK_STATUS(pqt_rows_next(r, &b, &err), VF_ECORRUPT);
  pqt_leaf_data_free(&d);
  pqt_rows_free(r);
  vf_buf_free(&b);
  pqt_dense_free(&out);
  fx_close(&x);
}
