/* vforge inspect: footers only — files, rows, schema, row groups, codecs, encodings, page index.
 * The corpus plan (corpus.h) reads every footer once and gives the rows and row groups of each
 * file and the totals; each file's report (schema, codecs, encodings, page index) is then
 * rendered from a reader opened over the footer the plan keeps, reading nothing again. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "vforge/corpus.h"
#include "vforge/format.h"

static const cli_opt INSPECT_OPTS[] = {
    {"json", NULL, "print one JSON object on stdout instead of the text report"},
    {"id-root", "DIR", "local files: strip DIR from the path to form the id key"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_INSPECT = {"inspect", "URI [--json]",
                             "Read the footers of a file or corpus and report files, rows, schema,\n"
                             "row groups, codecs, encodings and page index presence.  Reads no data pages.",
                             INSPECT_OPTS, 1, 1};

static const char *const TIME_UNITS[] = {"MILLIS", "MICROS", "NANOS"};

/* Annotation text of a schema element, e.g. "STRING", "DECIMAL(18,3)", "TIMESTAMP(MICROS,UTC)". */
static void logical_name(const pqt_schema_elem *e, char *out, size_t n) {
  switch (e->logical) {
  case PQT_LT_STRING: snprintf(out, n, "STRING"); return;
  case PQT_LT_MAP: snprintf(out, n, "MAP"); return;
  case PQT_LT_LIST: snprintf(out, n, "LIST"); return;
  case PQT_LT_ENUM: snprintf(out, n, "ENUM"); return;
  case PQT_LT_DECIMAL: snprintf(out, n, "DECIMAL(%d,%d)", e->lt_precision, e->lt_scale); return;
  case PQT_LT_DATE: snprintf(out, n, "DATE"); return;
  case PQT_LT_TIME:
    snprintf(out, n, "TIME(%s%s)", TIME_UNITS[e->lt_unit % 3], e->lt_utc ? ",UTC" : "");
    return;
  case PQT_LT_TIMESTAMP:
    snprintf(out, n, "TIMESTAMP(%s%s)", TIME_UNITS[e->lt_unit % 3], e->lt_utc ? ",UTC" : "");
    return;
  case PQT_LT_INTEGER:
    snprintf(out, n, "%sINT(%d)", e->lt_signed ? "" : "U", e->lt_bit_width);
    return;
  case PQT_LT_UNKNOWN: snprintf(out, n, "UNKNOWN"); return;
  case PQT_LT_JSON: snprintf(out, n, "JSON"); return;
  case PQT_LT_BSON: snprintf(out, n, "BSON"); return;
  case PQT_LT_UUID: snprintf(out, n, "UUID"); return;
  case PQT_LT_FLOAT16: snprintf(out, n, "FLOAT16"); return;
  case PQT_LT_VARIANT: snprintf(out, n, "VARIANT"); return;
  case PQT_LT_GEOMETRY: snprintf(out, n, "GEOMETRY"); return;
  case PQT_LT_GEOGRAPHY: snprintf(out, n, "GEOGRAPHY"); return;
  case PQT_LT_NONE:
  case PQT_LT_OTHER: break;
  }
  static const char *const CT[] = {
      "UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE", "TIME_MILLIS",
      "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32",
      "UINT_64", "INT_8", "INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL"};
  if (e->converted_type >= 0 && e->converted_type < (int)(sizeof CT / sizeof CT[0]))
    snprintf(out, n, "%s", CT[e->converted_type]);
  else
    out[0] = 0;
}

static const char *rep_name(int r) {
  return r == PQT_REQUIRED ? "required" : r == PQT_OPTIONAL ? "optional" : r == PQT_REPEATED ? "repeated" : "";
}

typedef struct chunk_summary {
  uint32_t codecs;     /* bit per codec */
  uint32_t encodings;  /* bit per encoding */
  int64_t compressed, uncompressed;
  int page_index;      /* row groups with an offset index */
} chunk_summary;

static void summarize(const pqt_file_meta *m, int leaf, chunk_summary *cs) {
  memset(cs, 0, sizeof *cs);
  for (int g = 0; g < m->nrow_groups; g++) {
    if (leaf >= m->row_groups[g].ncolumns) continue;
    const pqt_column_chunk *c = &m->row_groups[g].columns[leaf];
    if (c->meta.codec >= 0 && c->meta.codec < 32) cs->codecs |= 1u << c->meta.codec;
    for (int e = 0; e < c->meta.nencodings; e++)
      if (c->meta.encodings[e] >= 0 && c->meta.encodings[e] < 32) cs->encodings |= 1u << c->meta.encodings[e];
    cs->compressed += c->meta.total_compressed_size;
    cs->uncompressed += c->meta.total_uncompressed_size;
    cs->page_index += c->offset_index_offset >= 0;
  }
}

static void bits_names(uint32_t bits, const char *(*name)(int), vf_buf *b, bool json, vf_error *err) {
  bool first = true;
  for (int i = 0; i < 32; i++) {
    if (!(bits & (1u << i))) continue;
    if (!first) vf_json_raw(b, json ? "," : ",", err);
    if (json) vf_json_string(b, name(i), strlen(name(i)), err);
    else vf_json_raw(b, name(i), err);
    first = false;
  }
}

/* schema tree as indented text, parquet-style */
static void schema_text(const pqt_file *f, int node, int depth, vf_buf *b, vf_error *err) {
  const pqt_schema *sc = pqt_schema_of(f);
  const pqt_node *n = &sc->nodes[node];
  const pqt_schema_elem *e = &pqt_meta(f)->schema[n->elem];
  char ann[64];
  logical_name(e, ann, sizeof ann);
  if (node != 0) {
    vf_buf_printf(b, err, "    %*s%s ", depth * 2, "", rep_name(e->repetition));
    if (e->type < 0) vf_buf_printf(b, err, "group %s", n->name);
    else if (e->type == PQT_FIXED_LEN_BYTE_ARRAY)
      vf_buf_printf(b, err, "fixed_len_byte_array(%d) %s", e->type_length, n->name);
    else vf_buf_printf(b, err, "%s %s", pqt_physical_name(e->type), n->name);
    if (ann[0]) vf_buf_printf(b, err, " (%s)", ann);
    vf_buf_printf(b, err, "\n");
  }
  for (int i = 0; i < n->nchildren; i++) schema_text(f, n->children[i], node == 0 ? 0 : depth + 1, b, err);
}

static void file_json(const corpus_file *cf, const pqt_file *f, vf_buf *b, vf_error *err) {
  const pqt_file_meta *m = pqt_meta(f);
  const pqt_schema *sc = pqt_schema_of(f);
  vf_json_raw(b, "{\"uri\":", err);
  vf_json_string(b, cf->uri, strlen(cf->uri), err);
  vf_json_raw(b, ",\"key\":", err);
  vf_json_string(b, cf->key, strlen(cf->key), err);
  vf_buf_printf(b, err, ",\"size\":%" PRIu64 ",\"rows\":%" PRId64 ",\"row_groups\":%d,\"version\":%d",
                cf->size, m->num_rows, m->nrow_groups, m->version);
  vf_json_raw(b, ",\"created_by\":", err);
  if (m->created_by) vf_json_string(b, m->created_by, strlen(m->created_by), err);
  else vf_json_raw(b, "null", err);
  vf_json_raw(b, ",\"row_group_rows\":[", err);
  for (int g = 0; g < m->nrow_groups; g++) vf_buf_printf(b, err, "%s%" PRId64, g ? "," : "", m->row_groups[g].num_rows);
  vf_json_raw(b, "],\"fields\":[", err);
  for (int t = 0; t < sc->ntop; t++) {
    if (t) vf_json_raw(b, ",", err);
    vf_json_string(b, sc->nodes[sc->top[t]].name, strlen(sc->nodes[sc->top[t]].name), err);
  }
  vf_json_raw(b, "],\"columns\":[", err);
  for (int l = 0; l < sc->nleaves; l++) {
    const pqt_leaf *leaf = &sc->leaves[l];
    const pqt_schema_elem *e = &m->schema[sc->nodes[leaf->node].elem];
    char ann[64];
    logical_name(e, ann, sizeof ann);
    chunk_summary cs;
    summarize(m, l, &cs);
    if (l) vf_json_raw(b, ",", err);
    vf_json_raw(b, "{\"path\":", err);
    vf_json_string(b, leaf->path, strlen(leaf->path), err);
    vf_json_raw(b, ",\"physical\":", err);
    vf_json_string(b, pqt_physical_name(leaf->type), strlen(pqt_physical_name(leaf->type)), err);
    vf_json_raw(b, ",\"logical\":", err);
    if (ann[0]) vf_json_string(b, ann, strlen(ann), err);
    else vf_json_raw(b, "null", err);
    vf_buf_printf(b, err, ",\"type_length\":%d,\"max_def\":%d,\"max_rep\":%d,\"codecs\":[", leaf->type_length,
                  leaf->max_def, leaf->max_rep);
    bits_names(cs.codecs, pqt_codec_name, b, true, err);
    vf_json_raw(b, "],\"encodings\":[", err);
    bits_names(cs.encodings, pqt_encoding_name, b, true, err);
    vf_buf_printf(b, err,
                  "],\"compressed_bytes\":%" PRId64 ",\"uncompressed_bytes\":%" PRId64
                  ",\"page_index\":%s}",
                  cs.compressed, cs.uncompressed, cs.page_index == m->nrow_groups && m->nrow_groups ? "true" : "false");
  }
  vf_json_raw(b, "],\"key_value_metadata\":[", err);
  for (int k = 0; k < m->nkv; k++) {
    if (k) vf_json_raw(b, ",", err);
    vf_json_string(b, m->kv[k].key, strlen(m->kv[k].key), err);
  }
  vf_json_raw(b, "]}", err);
}

static void file_text(const corpus_file *cf, const pqt_file *f, vf_buf *b, vf_error *err) {
  const pqt_file_meta *m = pqt_meta(f);
  const pqt_schema *sc = pqt_schema_of(f);
  vf_buf_printf(b, err, "%s\n  key %s\n  %" PRIu64 " bytes, %" PRId64 " rows, %d row groups, format version %d\n",
                cf->uri, cf->key, cf->size, m->num_rows, m->nrow_groups, m->version);
  if (m->created_by) vf_buf_printf(b, err, "  created by: %s\n", m->created_by);
  vf_buf_printf(b, err, "  schema:\n");
  schema_text(f, 0, 0, b, err);
  vf_buf_printf(b, err, "  columns:\n");
  for (int l = 0; l < sc->nleaves; l++) {
    const pqt_leaf *leaf = &sc->leaves[l];
    chunk_summary cs;
    summarize(m, l, &cs);
    vf_buf_printf(b, err, "    %s: %s def %d rep %d, codecs ", leaf->path, pqt_physical_name(leaf->type),
                  leaf->max_def, leaf->max_rep);
    bits_names(cs.codecs, pqt_codec_name, b, false, err);
    vf_buf_printf(b, err, ", encodings ");
    bits_names(cs.encodings, pqt_encoding_name, b, false, err);
    vf_buf_printf(b, err, ", %.2f MB compressed / %.2f MB, page index %s\n", (double)cs.compressed / 1e6,
                  (double)cs.uncompressed / 1e6,
                  cs.page_index == 0 ? "no" : cs.page_index == m->nrow_groups ? "yes" : "partial");
  }
  if (m->nkv) {
    vf_buf_printf(b, err, "  key-value metadata:");
    for (int k = 0; k < m->nkv; k++) vf_buf_printf(b, err, "%s %s", k ? "," : "", m->kv[k].key);
    vf_buf_printf(b, err, "\n");
  }
}

int cmd_inspect(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  corpus_files files = {0};
  corpus_plan plan = {0};
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  VF_TRY(cli_parse(&CLI_INSPECT, argc, argv, &a, &err));
  bool json = cli_get(&CLI_INSPECT, &a, "json") != NULL;
  VF_TRY(corpus_discover(a.pos[0], cli_get(&CLI_INSPECT, &a, "id-root"), &files, &err));
  uint64_t total_rows = 0, total_bytes = 0, total_rgs = 0;
  if (json) {
    vf_json_raw(&b, "{\"prefix\":", &err);
    vf_json_string(&b, files.prefix, strlen(files.prefix), &err);
    vf_json_raw(&b, ",\"files\":[", &err);
  }
  VF_TRY(corpus_plan_init(&plan, &files, &err));
  VF_TRY(corpus_plan_measure(&plan, &err)); /* every footer, once: rows and row groups */
  for (size_t i = 0; i < files.n; i++) {
    pqt_file *f = NULL;
    /* the row groups as written, even under --memory-budget (which slices them for readers);
     * over the plan's kept footer */
    VF_TRY(corpus_open_parquet(&files.files[i], &(pqt_open_opts){.verify_crc = pqt_verify_crc_default(), .whole_row_groups = true}, &f, &err));
    total_rows += plan.rows[i];
    total_rgs += plan.row_groups[i] > 0 ? (uint64_t)plan.row_groups[i] : 0;
    total_bytes += files.files[i].size;
    vf_error rerr; /* rendering: a buffer past its ceiling fails the command, never truncates */
    vf_error_clear(&rerr);
    if (json) {
      if (i) vf_json_raw(&b, ",", &rerr);
      file_json(&files.files[i], f, &b, &rerr);
    } else {
      file_text(&files.files[i], f, &b, &rerr);
    }
    pqt_close(f);
    if (rerr.code != VF_OK) {
      err = rerr;
      VF_FAIL(rerr.code);
    }
    if (b.len > (1u << 20)) {
      VF_TRY(cli_write_stdout(NULL, b.data, b.len, &err));
      vf_buf_reset(&b);
    }
  }
  io_remote_stats rs;
  io_remote_get_stats(&rs);
  if (json)
    vf_buf_printf(&b, &err, "],\"total_files\":%zu,\"total_rows\":%" PRIu64 ",\"total_row_groups\":%" PRIu64
                  ",\"total_bytes\":%" PRIu64 ",\"remote_requests\":%" PRIu64 ",\"remote_retries\":%" PRIu64
                  ",\"remote_bytes\":%" PRIu64 ",\"empty_files\":%zu}\n", files.n, total_rows,
                  total_rgs, total_bytes, rs.requests, rs.retries, rs.bytes_received, plan.empty);
  else
    vf_buf_printf(&b, &err, "total: %zu files, %" PRIu64 " rows, %" PRIu64 " row groups, %" PRIu64
                  " bytes", files.n, total_rows, total_rgs, total_bytes);
  if (!json && plan.empty)
    vf_buf_printf(&b, &err, "; %zu files without rows (every command that reads rows skips them)",
                  plan.empty);
  if (!json) vf_buf_append(&b, "\n", 1, &err);
  st = json ? cli_write_json(b.data, b.len, &err) : cli_write_stdout(NULL, b.data, b.len, &err);
  if (rs.requests)
    cli_summary("inspect: %" PRIu64 " HTTP requests (%" PRIu64 " retries), %" PRIu64 " bytes received\n",
            rs.requests, rs.retries, rs.bytes_received);
out:
  vf_buf_free(&b);
  corpus_plan_free(&plan);
  corpus_files_free(&files);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}
