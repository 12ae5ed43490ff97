/*
 * libFuzzer harness for the thrift compact reader and the parquet metadata decoders
 * (src/format/pqt_thrift.c, pqt_meta.c, pqt_schema.c).
 *
 * The input is used two ways so that both raw thrift and whole parquet files (the seeds
 * tests/fuzz/run.sh copies from parquet-testing) exercise the parsers:
 *   1. if it ends like a parquet file (u32le length + "PAR1" with a length that fits), the
 *      footer bytes are parsed as FileMetaData, else the whole input is; a parsed footer is
 *      turned into a schema, and every page header / OffsetIndex / ColumnIndex it points at
 *      inside the input is parsed too;
 *   2. the whole input is parsed as a PageHeader, an OffsetIndex and a ColumnIndex.
 * Besides "no crash, no leak, no sanitizer report", successful results are checked against
 * their contracts (levels bounded, leaves consistent with nodes, cursor inside the input).
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc tests/fuzz/fuzz_footer.c \
 *     src/format/pqt_thrift.c src/format/pqt_meta.c src/format/pqt_schema.c src/util/util.c
 */
#include <stdlib.h>

#include "format/pqt_internal.h"

static void contract(bool ok) {
  if (!ok) abort(); /* a parser broke its contract: report it as a crash */
}

static void check_status(vf_status st, const vf_error *err) {
  /* malformed input may only be corrupt/unsupported (or refused for memory), with a message */
  contract(st == VF_OK || st == VF_ECORRUPT || st == VF_EUNSUPPORTED || st == VF_ENOMEM);
  if (st) contract(err->msg[0] != '\0');
}

static void check_schema(const pqt_file_meta *m, const pqt_schema *s) {
  contract(s->nnodes == m->nschema && s->nleaves <= s->nnodes);
  for (int i = 0; i < s->nleaves; i++) {
    const pqt_leaf *l = &s->leaves[i];
    contract(l->node > 0 && l->node < s->nnodes && s->nodes[l->node].leaf == i);
    contract(l->max_def >= 0 && l->max_def <= 255 && l->max_rep >= 0 && l->max_rep <= l->max_def);
    contract(l->top > 0 && s->nodes[l->top].parent == 0 && l->path != NULL);
  }
  for (int i = 0; i < s->nnodes; i++) {
    const pqt_node *n = &s->nodes[i];
    contract(n->first_leaf >= 0 && n->first_leaf + n->nleaves <= s->nleaves);
    for (int k = 0; k < n->nchildren; k++)
      contract(n->children[k] > i && n->children[k] < s->nnodes &&
               s->nodes[n->children[k]].parent == i);
    if (n->kind == PQT_NODE_LIST)
      contract(n->repeated >= 0 && n->repeated < s->nnodes && n->element >= 0 &&
               n->element < s->nnodes && s->nodes[n->repeated].repetition == PQT_REPEATED);
    if (n->kind == PQT_NODE_MAP)
      contract(n->repeated > i && n->key > n->repeated && n->value < s->nnodes);
  }
}

static void parse_page_header_at(const uint8_t *data, size_t size, int64_t off) {
  if (off < 0 || (uint64_t)off >= size) return;
  vf_cursor c;
  vf_cur_init(&c, data, size, 0);
  vf_cur_skip(&c, (uint64_t)off);
  pqt_page_header h;
  vf_error err = {0};
  vf_status st = pqt_parse_page_header(&c, &h, &err);
  check_status(st, &err);
  if (st == VF_OK) contract(c.p > data + off && c.p <= data + size && h.compressed_size >= 0);
}

static void parse_indexes_at(const uint8_t *data, size_t size, int64_t off, int64_t len,
                             bool column_index) {
  if (off < 0 || len < 0 || (uint64_t)off > size || (uint64_t)len > size - (uint64_t)off) return;
  vf_error err = {0};
  vf_status st;
  if (column_index) {
    pqt_column_index ci;
    st = pqt_parse_column_index(data + off, (size_t)len, (uint64_t)off, &ci, &err);
    if (st == VF_OK) pqt_column_index_free(&ci);
  } else {
    pqt_offset_index oi;
    st = pqt_parse_offset_index(data + off, (size_t)len, (uint64_t)off, &oi, &err);
    if (st == VF_OK) {
      for (int i = 0; i < oi.npages; i++)
        contract(oi.pages[i].offset >= 0 && oi.pages[i].compressed_page_size >= 0);
      pqt_offset_index_free(&oi);
    }
  }
  check_status(st, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint8_t *meta = data;
  size_t mlen = size;
  if (size >= 12 && memcmp(data + size - 4, "PAR1", 4) == 0) {
    uint32_t len = vf_load_u32le(data + size - 8);
    if (len <= size - 8) {
      meta = data + size - 8 - len;
      mlen = len;
    }
  }

  pqt_file_meta m;
  vf_error err = {0};
  vf_status st = pqt_parse_file_meta(meta, mlen, (uint64_t)(meta - data), &m, &err);
  check_status(st, &err);
  if (st == VF_OK) {
    contract(m.num_rows >= 0 && m.nschema >= 0 && m.nrow_groups >= 0);
    pqt_schema s;
    st = pqt_schema_build(&m, &s, &err);
    check_status(st, &err);
    if (st == VF_OK) {
      check_schema(&m, &s);
      pqt_schema_free(&s);
    }
    for (int g = 0; g < m.nrow_groups; g++) {
      const pqt_row_group *rg = &m.row_groups[g];
      contract(rg->num_rows >= 0 && rg->ncolumns >= 0);
      for (int c = 0; c < rg->ncolumns && c < 64; c++) {
        const pqt_column_chunk *cc = &rg->columns[c];
        if (cc->has_meta_data) {
          parse_page_header_at(data, size, cc->meta.dictionary_page_offset);
          parse_page_header_at(data, size, cc->meta.data_page_offset);
        }
        parse_indexes_at(data, size, cc->offset_index_offset, cc->offset_index_length, false);
        parse_indexes_at(data, size, cc->column_index_offset, cc->column_index_length, true);
      }
    }
    pqt_file_meta_free(&m);
  }

  parse_page_header_at(data, size, 0);
  parse_indexes_at(data, size, 0, (int64_t)size, false);
  parse_indexes_at(data, size, 0, (int64_t)size, true);
  return 0;
}
