/*
 * vforge generate-queries (DESIGN.md "Corpus layout": eval/queries_<N>.parquet).
 *
 * Sampling is uniform over the global row space of the corpus (every row of every file, in
 * discovery order), so no file or row group is favoured: N distinct global row numbers are
 * drawn with Floyd's algorithm from a seeded splitmix64 stream (unbiased bounded draws by
 * Lemire's multiply-and-reject), sorted, and only the row groups holding them are decoded.
 * The same seed over the same corpus gives the same file, byte for byte.
 *
 * Output columns: query_id (the source row's point id, vf_point_id(bare key, physical row)),
 * __source_file__ (bare key), __source_row__ (int64 physical row), the vector column under its
 * corpus name (fixed dimension), then the chosen payload columns: flat string columns and
 * integer columns as they are, anything else rendered as JSON text (the `cat` rendering).
 * A multivector (list<list<float>>) or sparse (struct{indices, values}) vector column is decoded
 * by the record reader (records.c) and written in the same shape (PQT_W_LIST_LIST_FLOAT /
 * PQT_W_SPARSE); a sampled row whose vector is null, empty or invalid is an error, as for dense.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bf_internal.h"
#include "vforge/eval.h"
#include "vforge/format.h"

#define QG_MAX_N ((uint64_t)1 << 26) /* queries held in memory: 64M rows at most */

/* ------------------------------------------------------------------ sampling */

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* uniform in [0, m), m >= 1, without modulo bias (Lemire 2019) */
static uint64_t rand_below(uint64_t *s, uint64_t m) {
  unsigned __int128 p = (unsigned __int128)splitmix64(s) * m;
  uint64_t lo = (uint64_t)p;
  if (lo < m) {
    uint64_t thresh = (0 - m) % m;
    while (lo < thresh) {
      p = (unsigned __int128)splitmix64(s) * m;
      lo = (uint64_t)p;
    }
  }
  return (uint64_t)(p >> 64);
}

typedef struct u64set {
  uint64_t *slot; /* value + 1; 0 = empty */
  size_t mask;
} u64set;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

/* returns true when v was already present */
static bool set_insert(u64set *s, uint64_t v) {
  size_t i = (size_t)mix(v) & s->mask;
  while (s->slot[i]) {
    if (s->slot[i] == v + 1) return true;
    i = (i + 1) & s->mask;
  }
  s->slot[i] = v + 1;
  return false;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* n distinct sorted values in [0, total) (n <= total) */
static vf_status sample_rows(uint64_t total, uint64_t n, uint64_t seed, uint64_t **out,
                             vf_error *err) {
  size_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  u64set s = {vf_calloc(cap, sizeof(uint64_t)), cap - 1};
  uint64_t *rows = vf_mallocarray(n, sizeof(uint64_t));
  if (!s.slot || !rows) {
    free(s.slot);
    free(rows);
    return vf_error_set(err, VF_ENOMEM, "generate-queries: out of memory for %" PRIu64 " rows", n);
  }
  uint64_t state = seed;
  size_t k = 0;
  for (uint64_t j = total - n; j < total; j++) {
    uint64_t t = rand_below(&state, j + 1);
    if (set_insert(&s, t)) {
      set_insert(&s, j);
      rows[k++] = j;
    } else {
      rows[k++] = t;
    }
  }
  free(s.slot);
  qsort(rows, n, sizeof *rows, cmp_u64);
  *out = rows;
  return VF_OK;
}

/* ------------------------------------------------------------- payload columns */

typedef enum pc_kind { PC_STRING = 0, PC_INT, PC_JSON } pc_kind;

typedef struct pcol {
  const char *name;
  pc_kind kind;
  vf_buf bytes;      /* STRING/JSON values */
  int64_t *offsets;  /* n+1 */
  int64_t *ints;     /* INT */
  uint8_t *valid;
  /* per file */
  int top;
  pqt_rows *rows;
  int64_t rows_pos;  /* next row of the bound row group */
  int64_t scan_row, scan_val; /* flat_value_index() position in the bound row group */
  pqt_leaf_data leaf;
} pcol;

static pc_kind column_kind(const pqt_file *f, int top) {
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_node *n = &sc->nodes[top];
  if (n->kind != PQT_NODE_PRIMITIVE) return PC_JSON;
  const pqt_leaf *leaf = &sc->leaves[n->first_leaf];
  const pqt_schema_elem *e = &pqt_meta(f)->schema[n->elem];
  if (leaf->max_rep != 0) return PC_JSON;
  if (leaf->type == PQT_BYTE_ARRAY &&
      (e->logical == PQT_LT_STRING || e->logical == PQT_LT_ENUM || e->logical == PQT_LT_JSON ||
       e->converted_type == PQT_CT_UTF8 || e->converted_type == PQT_CT_ENUM ||
       e->converted_type == PQT_CT_JSON))
    return PC_STRING;
  if (leaf->type == PQT_INT32 || leaf->type == PQT_INT64) {
    if (e->logical == PQT_LT_INTEGER) return (e->lt_signed || e->lt_bit_width < 64) ? PC_INT : PC_JSON;
    if (e->logical != PQT_LT_NONE) return PC_JSON;
    if (e->converted_type < 0 || (e->converted_type >= PQT_CT_INT_8 && e->converted_type <= PQT_CT_INT_64) ||
        (e->converted_type >= PQT_CT_UINT_8 && e->converted_type <= PQT_CT_UINT_32))
      return PC_INT;
  }
  return PC_JSON;
}

static const char *kind_name(pc_kind k) {
  return k == PC_STRING ? "string" : k == PC_INT ? "integer" : "JSON-rendered";
}

/* value index of `row` in a flat leaf (def levels NULL = no nulls); -1 = null */
static int64_t flat_value_index(const pqt_leaf_data *d, int16_t max_def, int64_t row,
                                int64_t *scan_row, int64_t *scan_val) {
  if (!d->def) return row;
  /* scan forward from the last position (rows are visited in increasing order) */
  while (*scan_row < row) {
    if (d->def[*scan_row] == max_def) (*scan_val)++;
    (*scan_row)++;
  }
  return d->def[row] == max_def ? *scan_val : -1;
}

/* ------------------------------------------------------------------- driver */

typedef struct qgen {
  const corpus_files *files;
  const eval_queries_opts *o;
  uint64_t *rows;  /* sorted global rows */
  uint64_t n;
  pcol *cols;
  int ncols;
  char *vec_name;
  int32_t dim;
  float *vecs;     /* n*dim (dense) */
  corpus_vec_kind kind;
  int64_t *moff;   /* multivector: n+1 offsets into the vectors in mvals; sparse: into sidx/mvals */
  vf_buf mvals;    /* multivector: the floats of every query's vectors; sparse: the values */
  vf_buf sidx;     /* sparse: the uint32 indices */
  vf_buf ids;      /* query ids, id_off[i] .. id_off[i+1] */
  int64_t *id_off;
  ev_ids idmap;    /* how rows become ids */
  vf_buf keys;     /* source keys */
  int64_t *key_off;
  int64_t *src_rows;
  uint64_t done;   /* rows gathered */
  uint64_t rg_read;
} qgen;

/* Append query i's sparse or multivector value: row bj of the batch `vb` (`have`: the row is there
 * and not null).  An absent, null or empty value is an error naming the file and physical row. */
static vf_status take_nondense(qgen *g, const corpus_vec_batch *vb, size_t bj, bool have,
                               corpus_vec_kind kind, uint64_t i, const char *key, uint64_t frow,
                               vf_error *err) {
  int64_t c = have ? vb->offsets[bj + 1] - vb->offsets[bj] : 0;
  if (c < 1)
    return vf_error_set(err, VF_ECORRUPT, "%s: row %" PRIu64 " (sampled as a query) has a null, "
                        "empty or invalid '%s' %s", key, frow, g->vec_name,
                        kind == CORPUS_VEC_SPARSE ? "sparse vector" : "multivector");
  g->moff[i + 1] = g->moff[i] + c;
  if (kind == CORPUS_VEC_SPARSE) {
    vf_status st = vf_buf_append(&g->sidx, vb->indices + vb->offsets[bj], 4 * (size_t)c, err);
    if (st != VF_OK) return st;
    return vf_buf_append(&g->mvals, vb->values + vb->offsets[bj], 4 * (size_t)c, err);
  }
  return vf_buf_append(&g->mvals, vb->multi + (size_t)vb->offsets[bj] * (size_t)vb->dim,
                       sizeof(float) * (size_t)c * (size_t)vb->dim, err);
}

/* A JSON-rendered column of row group rg (rows lo .. hi of the corpus): bind its leaves and render
 * the sampled rows from query `next` on, while the leaves are alive. */
static vf_status gather_json_column(qgen *g, pqt_file *f, pcol *pc, int rg, uint64_t rg_rows,
                                    uint64_t lo, uint64_t hi, uint64_t next, vf_error *err) {
  const pqt_node *node = &pqt_schema_of(f)->nodes[pc->top];
  vf_status st = VF_OK;
  int nld = 0; /* leaves of ld initialised */
  int *lids = vf_mallocarray((size_t)node->nleaves, sizeof(int));
  pqt_leaf_data *ld = vf_mallocarray((size_t)node->nleaves, sizeof *ld);
  vf_buf tmp;
  VF_BUF_INIT(&tmp, VF_BUF_MAX_RECORD);
  vf_buf pre;
  VF_BUF_INIT(&pre, VF_BUF_MAX_TEXT);
  if (!lids || !ld) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (int i = 0; i < node->nleaves; i++) {
    lids[i] = node->first_leaf + i;
    pqt_leaf_data_init(&ld[i]);
  }
  nld = node->nleaves;
  VF_TRY(pqt_read_leaves(f, rg, lids, node->nleaves, ld, err));
  VF_TRY(pqt_rows_bind(pc->rows, ld, lids, node->nleaves, (int64_t)rg_rows, err));
  pc->rows_pos = 0;
  VF_TRY(vf_json_string(&pre, pc->name, strlen(pc->name), err));
  VF_TRY(vf_buf_append(&pre, ":", 1, err));
  for (uint64_t q = next, i = g->done; q < g->n && g->rows[q] < hi; q++, i++) {
    int64_t r = (int64_t)(g->rows[q] - lo);
    if (r > pc->rows_pos) VF_TRY(pqt_rows_skip(pc->rows, r - pc->rows_pos, err));
    vf_buf_reset(&tmp);
    VF_TRY(pqt_rows_next(pc->rows, &tmp, err));
    pc->rows_pos = r + 1;
    const uint8_t *v = tmp.data;
    size_t vl = tmp.len;
    if (vl >= pre.len && memcmp(v, pre.data, pre.len) == 0) {
      v += pre.len;
      vl -= pre.len;
    }
    pc->valid[i] = !(vl == 4 && memcmp(v, "null", 4) == 0);
    if (pc->valid[i]) VF_TRY(vf_buf_append(&pc->bytes, v, vl, err));
    pc->offsets[i + 1] = (int64_t)pc->bytes.len;
  }
out:
  vf_buf_free(&tmp);
  vf_buf_free(&pre);
  for (int i = 0; i < nld; i++) pqt_leaf_data_free(&ld[i]);
  free(ld);
  free(lids);
  return st;
}

static vf_status gather_file(qgen *g, size_t fi, uint64_t base, uint64_t *next, vf_error *err) {
  const corpus_file *cf = &g->files->files[fi];
  pqt_file *f = NULL;
  pqt_leaf_data vleaf;
  pqt_dense dense;
  pqt_leaf_data_init(&vleaf);
  memset(&dense, 0, sizeof dense);
  corpus_records *rr = NULL;
  corpus_batch bt;
  memset(&bt, 0, sizeof bt);
  vf_status st = VF_OK;
  VF_TRY(ev_open(cf, &f, err));
  int vtop = -1;
  corpus_vec_kind kind = CORPUS_VEC_DENSE;
  VF_TRY(ev_vector_column(f, g->o->column, &vtop, &kind, err));
  if (g->done == 0 && *next == 0) g->kind = kind;
  if (kind != g->kind)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: the vector column has another kind than in earlier files", cf->key));
  /* multivector/sparse: decoded and checked by the record reader (rows it rejects cannot be
   * queries); sparse entries are copied as stored */
  corpus_vec_source vs = {.kind = kind, .distance = CORPUS_DOT};
  corpus_record_spec spec = {.vectors = &vs, .nvectors = 1, .skip_bad_rows = true};
  if (kind != CORPUS_VEC_DENSE) {
    vs.name = vs.column = pqt_schema_of(f)->nodes[vtop].name;
    VF_TRY(corpus_records_open(cf, &spec, 0, &rr, err));
  }
  if (!g->vec_name) {
    g->vec_name = vf_strdup(pqt_schema_of(f)->nodes[vtop].name);
    if (!g->vec_name) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  } else if (strcmp(g->vec_name, pqt_schema_of(f)->nodes[vtop].name) != 0) {
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "%s: the vector column is '%s' here but '%s' in earlier files; "
                         "choose one with --column", cf->key, pqt_schema_of(f)->nodes[vtop].name, g->vec_name));
  }
  for (int c = 0; c < g->ncols; c++)
    if (strcmp(g->cols[c].name, g->vec_name) == 0)
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "generate-queries: '%s' is the vector column; it is written "
                           "anyway, leave it out of --columns", g->vec_name));
  for (int c = 0; c < g->ncols; c++) {
    pcol *pc = &g->cols[c];
    pc->top = pqt_find_top(f, pc->name);
    if (pc->top < 0) VF_FAIL(vf_error_set(err, VF_ENOTFOUND, "%s: no column '%s'", cf->key, pc->name));
    pc_kind k = column_kind(f, pc->top);
    if (g->done == 0 && *next == 0) pc->kind = k;
    if (k != pc->kind)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: column '%s' is %s here but %s in earlier files",
                           cf->key, pc->name, kind_name(k), kind_name(pc->kind)));
    if (k == PC_JSON) VF_TRY(pqt_rows_create(f, &pc->top, 1, &pc->rows, err));
  }
  const pqt_file_meta *m = pqt_meta(f);
  uint64_t first = 0;
  int counted = -1; /* row groups read are counted as written (a streamed one is read in slices) */
  for (int rg = 0; rg < m->nrow_groups && *next < g->n; rg++) {
    uint64_t rg_rows = (uint64_t)m->row_groups[rg].num_rows;
    uint64_t lo = base + first, hi = lo + rg_rows;
    if (g->rows[*next] >= hi) {
      first += rg_rows;
      continue;
    }
    VF_TRY(vf_check_cancel(err));
    if (pqt_written_row_group(f, rg, NULL, NULL) != counted) {
      counted = pqt_written_row_group(f, rg, NULL, NULL);
      g->rg_read++;
    }
    if (kind == CORPUS_VEC_SPARSE) {
      VF_TRY(corpus_records_read(rr, rg, first, &bt, NULL, err));
      g->dim = 0;
    } else if (kind == CORPUS_VEC_MULTI) {
      VF_TRY(corpus_records_read(rr, rg, first, &bt, NULL, err));
      if (bt.n && g->dim && bt.vectors[0].dim != g->dim)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: '%s' vectors have dimension %d, %d in earlier files",
                             cf->key, g->vec_name, bt.vectors[0].dim, g->dim));
      if (bt.n) g->dim = bt.vectors[0].dim;
    } else {
      VF_TRY(ev_read_dense(f, vtop, rg, (int64_t)first, &g->dim, &vleaf, &dense, err));
    }
    if (g->done == 0 && !g->vecs && kind == CORPUS_VEC_DENSE) {
      g->vecs = vf_mallocarray(g->n, sizeof(float) * (size_t)g->dim);
      if (!g->vecs) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory for %" PRIu64 " queries", g->n));
    }
    for (int c = 0; c < g->ncols; c++) {
      pcol *pc = &g->cols[c];
      if (pc->kind != PC_JSON) {
        int lid = pqt_schema_of(f)->nodes[pc->top].first_leaf;
        VF_TRY(pqt_read_leaves(f, rg, &lid, 1, &pc->leaf, err));
        continue;
      }
      VF_TRY(gather_json_column(g, f, pc, rg, rg_rows, lo, hi, *next, err));
    }
    /* flat columns and the vector, row by row */
    for (int c = 0; c < g->ncols; c++) g->cols[c].scan_row = g->cols[c].scan_val = 0;
    uint64_t q = *next, i = g->done;
    size_t bj = 0;
    for (; q < g->n && g->rows[q] < hi; q++, i++) {
      uint64_t frow = g->rows[q] - base; /* physical row in the file */
      int64_t r = (int64_t)(g->rows[q] - lo);
      if (kind != CORPUS_VEC_DENSE) {
        while (bj < bt.n && bt.file_rows[bj] < frow) bj++;
        const corpus_vec_batch *vb = &bt.vectors[0];
        bool have = bj < bt.n && bt.file_rows[bj] == frow && !(vb->null_rows && vb->null_rows[bj]);
        VF_TRY(take_nondense(g, vb, bj, have, kind, i, cf->key, frow, err));
      } else if (dense.null_rows && dense.null_rows[r]) {
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %" PRIu64 " (sampled as a query) has a null '%s' vector",
                             cf->key, frow, g->vec_name));
      }
      if (kind == CORPUS_VEC_DENSE)
        memcpy(g->vecs + i * (size_t)g->dim, dense.data + (size_t)r * (size_t)dense.dim,
               sizeof(float) * (size_t)g->dim);
      char id[37];
      corpus_point_id(cf->key, strlen(cf->key), frow, id);
      VF_TRY(vf_buf_append(&g->ids, id, 36, err));
      g->id_off[i + 1] = (int64_t)g->ids.len;
      VF_TRY(vf_buf_append(&g->keys, cf->key, strlen(cf->key), err));
      g->key_off[i + 1] = (int64_t)g->keys.len;
      g->src_rows[i] = (int64_t)frow;
      for (int c = 0; c < g->ncols; c++) {
        pcol *pc = &g->cols[c];
        if (pc->kind == PC_JSON) continue;
        const pqt_leaf *lf = &pqt_schema_of(f)->leaves[pc->leaf.leaf];
        int64_t vi = flat_value_index(&pc->leaf, lf->max_def, r, &pc->scan_row, &pc->scan_val);
        pc->valid[i] = vi >= 0;
        if (pc->kind == PC_INT) {
          int64_t v = 0;
          if (vi >= 0) {
            if (pc->leaf.type == PQT_INT32) {
              int32_t x;
              memcpy(&x, pc->leaf.values.data + (size_t)vi * 4, 4);
              const pqt_schema_elem *e = &pqt_meta(f)->schema[pqt_schema_of(f)->nodes[pc->top].elem];
              bool uns = (e->logical == PQT_LT_INTEGER && !e->lt_signed) ||
                         (e->converted_type >= PQT_CT_UINT_8 && e->converted_type <= PQT_CT_UINT_32);
              v = uns ? (int64_t)(uint32_t)x : x;
            } else {
              memcpy(&v, pc->leaf.values.data + (size_t)vi * 8, 8);
            }
          }
          pc->ints[i] = v;
        } else if (vi >= 0) {
          const int64_t *o = pc->leaf.offsets;
          VF_TRY(vf_buf_append(&pc->bytes, pc->leaf.values.data + o[vi], (size_t)(o[vi + 1] - o[vi]), err));
        }
        pc->offsets[i + 1] = (int64_t)pc->bytes.len;
      }
    }
    g->done = i;
    *next = q;
    first += rg_rows;
  }
out:
  for (int c = 0; c < g->ncols; c++) {
    pqt_rows_free(g->cols[c].rows);
    g->cols[c].rows = NULL;
  }
  pqt_leaf_data_free(&vleaf);
  pqt_dense_free(&dense);
  corpus_records_close(rr);
  corpus_batch_free(&bt);
  pqt_close(f);
  return st;
}

/* records (eval_queries_opts.records): the sampled rows of file fi through the record reader */
static vf_status gather_records(qgen *g, size_t fi, uint64_t base, uint64_t *next, vf_error *err) {
  const corpus_file *cf = &g->files->files[fi];
  corpus_record_spec spec = ev_spec1(g->o->records);
  corpus_vec_kind kind = g->kind;
  corpus_records *rr = NULL;
  corpus_batch bt;
  memset(&bt, 0, sizeof bt);
  vf_status st = VF_OK;
  VF_TRY(corpus_records_open(cf, &spec, base, &rr, err));
  int nrg = corpus_records_row_groups(rr);
  for (int rg = 0; rg < nrg && *next < g->n; rg++) {
    uint64_t a = corpus_records_row_group_first(rr, rg);
    uint64_t b = rg + 1 < nrg ? corpus_records_row_group_first(rr, rg + 1) : corpus_records_rows(rr);
    uint64_t hi = base + b;
    if (g->rows[*next] >= hi) continue;
    VF_TRY(vf_check_cancel(err));
    g->rg_read++;
    VF_TRY(corpus_records_read(rr, rg, a, &bt, NULL, err));
    const corpus_vec_batch *vb = &bt.vectors[0];
    if (kind != CORPUS_VEC_SPARSE && bt.n) {
      if (g->dim && vb->dim != g->dim)
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: '%s' vectors have dimension %d, %d in earlier files",
                             cf->key, g->vec_name, vb->dim, g->dim));
      g->dim = vb->dim;
    }
    if (kind == CORPUS_VEC_DENSE && !g->vecs && g->dim > 0) {
      g->vecs = vf_mallocarray(g->n, sizeof(float) * (size_t)g->dim);
      if (!g->vecs) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory for %" PRIu64 " queries", g->n));
    }
    uint64_t q = *next, i = g->done;
    size_t bj = 0;
    for (; q < g->n && g->rows[q] < hi; q++, i++) {
      uint64_t frow = g->rows[q] - base;
      while (bj < bt.n && bt.file_rows[bj] < frow) bj++;
      bool have = bj < bt.n && bt.file_rows[bj] == frow && !(vb->null_rows && vb->null_rows[bj]);
      if (kind == CORPUS_VEC_DENSE) {
        if (!have || !g->vecs)
          VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: row %" PRIu64 " (sampled as a query) has a null "
                               "or invalid '%s' vector", cf->key, frow, g->vec_name));
        memcpy(g->vecs + i * (size_t)g->dim, vb->dense + bj * (size_t)g->dim,
               sizeof(float) * (size_t)g->dim);
      } else {
        VF_TRY(take_nondense(g, vb, bj, have, kind, i, cf->key, frow, err));
      }
      char id[37];
      ev_id_text(&g->idmap, fi, frow, id);
      VF_TRY(vf_buf_append(&g->ids, id, strlen(id), err));
      g->id_off[i + 1] = (int64_t)g->ids.len;
      VF_TRY(vf_buf_append(&g->keys, cf->key, strlen(cf->key), err));
      g->key_off[i + 1] = (int64_t)g->keys.len;
      g->src_rows[i] = (int64_t)frow;
    }
    g->done = i;
    *next = q;
  }
out:
  corpus_records_close(rr);
  corpus_batch_free(&bt);
  return st;
}

static vf_status write_queries(qgen *g, const char *path, char *const *filters, const char *fhash,
                               vf_error *err) {
  int nc = 4 + g->ncols + (filters != NULL);
  pqt_wcolumn *cols = vf_calloc((size_t)nc, sizeof *cols);
  pqt_wbatch *b = vf_calloc((size_t)nc, sizeof *b);
  const int64_t *id_off = g->id_off;
  if (!cols || !b) {
    free(cols);
    free(b);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  cols[0] = (pqt_wcolumn){"query_id", PQT_W_STRING, false, 0};
  cols[1] = (pqt_wcolumn){"__source_file__", PQT_W_STRING, false, 0};
  cols[2] = (pqt_wcolumn){"__source_row__", PQT_W_INT64, false, 0};
  cols[3] = (pqt_wcolumn){g->vec_name, PQT_W_VECTOR, false, g->dim};
  int64_t *inner = NULL;
  if (g->kind == CORPUS_VEC_MULTI) {
    uint64_t nv = (uint64_t)g->moff[g->n];
    inner = vf_mallocarray(nv + 1, sizeof(int64_t));
    if (!inner) {
      free(cols);
      free(b);
      return vf_error_set(err, VF_ENOMEM, "out of memory");
    }
    for (uint64_t v = 0; v <= nv; v++) inner[v] = (int64_t)(v * (uint64_t)g->dim);
    cols[3].type = PQT_W_LIST_LIST_FLOAT;
  }
  b[0] = (pqt_wbatch){.bytes = g->ids.data, .offsets = id_off};
  b[1] = (pqt_wbatch){.bytes = g->keys.data, .offsets = g->key_off};
  b[2] = (pqt_wbatch){.values = g->src_rows};
  b[3] = (pqt_wbatch){.values = g->vecs};
  if (g->kind == CORPUS_VEC_MULTI)
    b[3] = (pqt_wbatch){.values = g->mvals.data, .offsets = g->moff, .offsets2 = inner};
  if (g->kind == CORPUS_VEC_SPARSE) {
    cols[3].type = PQT_W_SPARSE;
    b[3] = (pqt_wbatch){.values = g->mvals.data, .indices = (const uint32_t *)g->sidx.data,
                        .offsets = g->moff};
  }
  for (int c = 0; c < g->ncols; c++) {
    pcol *pc = &g->cols[c];
    cols[4 + c] = (pqt_wcolumn){pc->name, pc->kind == PC_INT ? PQT_W_INT64 : PQT_W_STRING, true, 0};
    if (pc->kind == PC_INT) b[4 + c] = (pqt_wbatch){.values = pc->ints, .valid = pc->valid};
    else b[4 + c] = (pqt_wbatch){.bytes = pc->bytes.data ? pc->bytes.data : (const uint8_t *)"",
                                 .offsets = pc->offsets, .valid = pc->valid};
  }
  if (filters) { /* one filter per query (generate-queries --filter-template) */
    cols[nc - 1] = (pqt_wcolumn){"__filter__", PQT_W_STRING, false, 0};
    b[nc - 1] = (pqt_wbatch){.strs = (const char *const *)filters};
  }
  if (!g->keys.data) b[1].bytes = (const uint8_t *)"";
  pqt_writer *w = NULL;
  pqt_writer_opts wo = {.codec = PQT_ZSTD, .zstd_level = 3, .row_group_rows = 65536};
  char *local = NULL;
  vf_status st = VF_OK;
  VF_TRY(ev_out_begin(path, &local, err));
  VF_TRY(pqt_writer_open(local, cols, nc, &wo, &w, err));
  if (filters) VF_TRY(pqt_writer_add_kv(w, "vforge.filter.hash", fhash, err));
  VF_TRY(pqt_writer_write(w, b, (int64_t)g->n, err));
  pqt_writer *closing = w;
  w = NULL; /* pqt_writer_close releases it, whatever it returns */
  VF_TRY(pqt_writer_close(closing, err));
out:
  pqt_writer_abort(w); /* a writer not closed (NULL when none was opened or it was closed) */
  st = ev_out_end(path, local, st, err);
  free(cols);
  free(b);
  free(inner);
  return st;
}

/* eval_generate_queries(): see eval.h. */
vf_status eval_generate_queries(const corpus_files *files, const eval_queries_opts *o,
                                eval_queries_result *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  if (o->n == 0 || o->n > QG_MAX_N)
    return vf_error_set(err, VF_EUSAGE, "generate-queries: -n must be 1..%" PRIu64, QG_MAX_N);
  qgen g = {.files = files, .o = o, .n = o->n};
  if (o->records && o->ncolumns > 0)
    return vf_error_set(err, VF_EUNSUPPORTED, "generate-queries: --columns reads parquet corpora "
                        "only (not a config, dataset or vector file)");
  /* the one plan, alive to the end: every footer read (the ids' bases, the rows, the gather
   * pass) is read once and kept for the readers that follow */
  corpus_plan plan;
  vf_status st = corpus_plan_init(&plan, files, err);
  if (st != VF_OK) return st;
  uint64_t *bases = NULL;
  char *path = NULL, **filters = NULL, fhash[9] = "", tag[16] = "";
  VF_TRY(ev_ids_init(&g.idmap, files, o->records, "generate-queries", err));
  bases = vf_mallocarray(files->n + 1, sizeof(uint64_t));
  if (!bases) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  if (o->records) {
    memcpy(bases, g.idmap.bases, (files->n + 1) * sizeof *bases);
    g.kind = o->records->vectors[0].kind;
    g.vec_name = vf_strdup(o->records->vectors[0].name);
    if (!g.vec_name) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
  /* pass 1: rows per file from the plan (one footer read each); files without rows are never
   * sampled from */
  uint64_t total = o->records ? bases[files->n] : 0;
  for (size_t i = 0; o->records && i < files->n; i++)
    corpus_plan_note_rows(&plan, i, bases[i + 1] - bases[i]);
  for (size_t i = 0; !o->records && i < files->n; i++) {
    bases[i] = total;
    st = corpus_plan_measure_file(&plan, i, err);
    if (st != VF_OK) break; /* forwarded below, once the counts are out */
    total += plan.rows[i];
  }
  if (!o->records) bases[files->n] = total;
  out->empty_files = plan.empty;
  out->corpus_rows = total;
  VF_TRY(st);
  if (o->n > total)
    VF_FAIL(vf_error_set(err, VF_EUSAGE, "generate-queries: -n %" PRIu64 " exceeds the corpus's %" PRIu64 " rows",
                         o->n, total));
  for (int c = 0; c < o->ncolumns; c++) {
    const char *nm = o->columns[c];
    if (!strcmp(nm, "query_id") || !strcmp(nm, "__source_file__") || !strcmp(nm, "__source_row__") ||
        (o->column && !strcmp(nm, o->column)))
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "generate-queries: payload column '%s' clashes with an output column", nm));
    for (int d = 0; d < c; d++)
      if (!strcmp(nm, o->columns[d]))
        VF_FAIL(vf_error_set(err, VF_EUSAGE, "generate-queries: column '%s' given twice", nm));
  }
  VF_TRY(sample_rows(total, o->n, o->seed, &g.rows, err));
  g.ncols = o->ncolumns;
  g.cols = vf_calloc((size_t)(g.ncols ? g.ncols : 1), sizeof *g.cols);
  g.key_off = vf_calloc(g.n + 1, sizeof(int64_t));
  g.id_off = vf_calloc(g.n + 1, sizeof(int64_t));
  g.src_rows = vf_calloc(g.n, sizeof(int64_t));
  g.moff = vf_calloc(g.n + 1, sizeof(int64_t));
  VF_BUF_INIT(&g.mvals, VF_BUF_MAX_ROWS_HELD);
  VF_BUF_INIT(&g.sidx, VF_BUF_MAX_ROWS_HELD);
  VF_BUF_INIT(&g.ids, VF_BUF_MAX_ROWS_HELD);
  VF_BUF_INIT(&g.keys, VF_BUF_MAX_ROWS_HELD);
  if (!g.cols || !g.key_off || !g.id_off || !g.src_rows || !g.moff)
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (int c = 0; c < g.ncols; c++) {
    pcol *pc = &g.cols[c];
    pc->name = o->columns[c];
    VF_BUF_INIT(&pc->bytes, VF_BUF_MAX_ROWS_HELD);
    pqt_leaf_data_init(&pc->leaf);
    pc->offsets = vf_calloc(g.n + 1, sizeof(int64_t));
    pc->ints = vf_calloc(g.n, sizeof(int64_t));
    pc->valid = vf_calloc(g.n, 1);
    if (!pc->offsets || !pc->ints || !pc->valid) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
  uint64_t next = 0;
  vf_stage sg;
  vf_stage_begin(&sg, "generate-queries", "gather", NULL, g.n);
  sg.p.files_total = files->n;
  for (size_t i = 0; i < files->n && next < g.n; i++) {
    if (g.rows[next] >= bases[i + 1]) continue;
    sg.p.files_done = i;
    vf_stage_update(&sg, next, NULL);
    VF_TRY(o->records ? gather_records(&g, i, bases[i], &next, err)
                      : gather_file(&g, i, bases[i], &next, err));
  }
  if (next != g.n)
    VF_FAIL(vf_error_set(err, VF_EINTERNAL, "generate-queries: gathered %" PRIu64 " of %" PRIu64 " rows", next, g.n));
  if (o->filter_template) {
    VF_TRY(ev_template_filters(files, bases, o->records, o->filter_template, g.rows, g.n, o->seed,
                               &filters, err));
    const char *t = o->filter_template; /* hashed without surrounding whitespace */
    size_t tl = strlen(t);
    while (tl && (*t == ' ' || *t == '\n' || *t == '\t' || *t == '\r')) t++, tl--;
    while (tl && (t[tl - 1] == ' ' || t[tl - 1] == '\n' || t[tl - 1] == '\t' || t[tl - 1] == '\r')) tl--;
    flt_hash8(t, tl, fhash);
    snprintf(tag, sizeof tag, "_f%s", fhash);
  }
  path = o->output ? vf_strdup(o->output)
                   : ev_strdupf(err, "%s/eval/queries_%" PRIu64 "%s.parquet", files->prefix, g.n, tag);
  if (!path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(write_queries(&g, path, filters, fhash, err));
  out->rows = g.n;
  out->dim = g.dim;
  out->row_groups_read = g.rg_read;
  out->path = path;
  path = NULL;
out:
  for (uint64_t i = 0; filters && i < g.n; i++) free(filters[i]);
  free(filters);
  free(path);
  for (int c = 0; g.cols && c < g.ncols; c++) {
    vf_buf_free(&g.cols[c].bytes);
    free(g.cols[c].offsets);
    free(g.cols[c].ints);
    free(g.cols[c].valid);
    pqt_leaf_data_free(&g.cols[c].leaf);
    pqt_rows_free(g.cols[c].rows);
  }
  free(g.cols);
  free(g.rows);
  free(g.vec_name);
  free(g.vecs);
  vf_buf_free(&g.ids);
  vf_buf_free(&g.keys);
  free(g.key_off);
  free(g.id_off);
  ev_ids_free(&g.idmap);
  free(g.src_rows);
  free(g.moff);
  vf_buf_free(&g.mvals);
  vf_buf_free(&g.sidx);
  free(bases);
  corpus_plan_free(&plan);
  return st;
}
