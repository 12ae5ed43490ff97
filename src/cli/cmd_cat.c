/* vforge cat / vforge scan: thin wrappers over corpus_cat() and corpus_scan(). */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "vforge/corpus.h"

static const cli_opt CAT_OPTS[] = {
    {"columns", "a,b", "only these top-level columns (default: all)"},
    {"offset", "N", "skip the first N rows of the corpus"},
    {"limit", "N", "print at most N rows (-n N)"},
    {"with-id", "EXPR", "add the point id under \"__id__\" (e.g. 'vf_point_id(filename, file_row_number)')"},
    {"id-root", "DIR", "local files: strip DIR from the path to form the id key"},
    {"binary-as-string", NULL,
     "binary without a string annotation as text (invalid UTF-8 -> U+FFFD), not base64"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_CAT = {"cat", "URI [--columns a,b] [--offset N] [--limit N] [--with-id EXPR]",
                         "Print rows as JSON lines on stdout: column names as keys, float32 with 9\n"
                         "significant digits, doubles with 17, NaN/inf as \"NaN\"/\"Infinity\"/\"-Infinity\",\n"
                         "NULL as null; binary without a string annotation as base64,\n"
                         "VARIANT as JSON.",
                         CAT_OPTS, 1, 1};

static const cli_opt SCAN_OPTS[] = {
    {"columns", "a,b", "only these top-level columns (default: all)"},
    {"json", NULL, "print one JSON object {rows, bytes, seconds, mb_per_s, checksum} on stdout"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_SCAN = {"scan", "URI [--columns a,b] [--json]",
                          "Decode every selected column of every row group (vector columns are\n"
                          "assembled and their dimension checked on every row) and report rows,\n"
                          "decoded bytes, MB/s and a checksum (the sum of all decoded floats).",
                          SCAN_OPTS, 1, 1};

int cmd_cat(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  cli_list cols = {0};
  corpus_files files = {0};
  corpus_idexpr *idexpr = NULL;
  corpus_cat_opts o = {0};
  vf_status st = VF_OK;
  VF_TRY(cli_parse(&CLI_CAT, argc, argv, &a, &err));
  VF_TRY(cli_get_u64(&CLI_CAT, &a, "offset", 0, &o.offset, &err));
  VF_TRY(cli_get_u64(&CLI_CAT, &a, "limit", 0, &o.limit, &err));
  const char *c = cli_get(&CLI_CAT, &a, "columns");
  if (c) {
    if (!cli_list_split(c, &cols)) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
    o.columns = (const char *const *)cols.items;
    o.ncolumns = cols.n;
  }
  o.binary_as_string = cli_get(&CLI_CAT, &a, "binary-as-string") != NULL;
  const char *id = cli_get(&CLI_CAT, &a, "with-id");
  if (id) {
    VF_TRY(corpus_idexpr_parse(id, &idexpr, &err));
    o.with_id = idexpr;
  }
  cli_on_interrupt("cat stopped (the rows printed so far are complete lines)");
  VF_TRY(corpus_discover(a.pos[0], cli_get(&CLI_CAT, &a, "id-root"), &files, &err));
  bool zero_limit = cli_get(&CLI_CAT, &a, "limit") && o.limit == 0;
  if (!zero_limit) VF_TRY(corpus_cat(&files, &o, cli_write_stdout, NULL, &err));
out:
  corpus_files_free(&files);
  corpus_idexpr_free(idexpr);
  cli_list_free(&cols);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}

int cmd_scan(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  cli_list cols = {0};
  corpus_files files = {0};
  corpus_scan_result r;
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  VF_TRY(cli_parse(&CLI_SCAN, argc, argv, &a, &err));
  const char *c = cli_get(&CLI_SCAN, &a, "columns");
  if (c && !cli_list_split(c, &cols)) VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
  cli_on_interrupt("scan stopped before the end (no summary); run it again");
  VF_TRY(corpus_discover(a.pos[0], NULL, &files, &err));
  VF_TRY(corpus_scan(&files, (const char *const *)cols.items, cols.n, vf_threads(), &r, &err));
  cli_progress_end();
  double mbps = r.seconds > 0 ? (double)r.bytes / 1e6 / r.seconds : 0;
  io_remote_stats rs;
  io_remote_get_stats(&rs);
  if (cli_get(&CLI_SCAN, &a, "json")) {
    vf_error_clear(&err); /* the appends below keep a failure here */
    vf_buf_printf(&b, &err, "{\"rows\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"seconds\":", r.rows, r.bytes);
    vf_json_f64(&b, r.seconds, &err);
    vf_json_raw(&b, ",\"mb_per_s\":", &err);
    vf_json_f64(&b, mbps, &err);
    vf_json_raw(&b, ",\"checksum\":", &err);
    vf_json_f64(&b, r.checksum, &err);
    vf_buf_printf(&b, &err,
                  ",\"files\":%" PRIu64 ",\"row_groups\":%" PRIu64 ",\"bytes_read\":%" PRIu64
                  ",\"vectors\":%" PRIu64 ",\"threads\":%d,\"remote_requests\":%" PRIu64
                  ",\"remote_retries\":%" PRIu64 ",\"remote_bytes\":%" PRIu64
                  ",\"empty_files\":%" PRIu64 "}\n",
                  r.files, r.row_groups, r.bytes_read, r.vectors, vf_threads(), rs.requests,
                  rs.retries, rs.bytes_received, r.empty_files);
    VF_TRY(err.code); /* a failed append (the document's ceiling) is kept in err: print nothing */
    VF_TRY(cli_write_json(b.data, b.len, &err));
  }
  char empty[64] = "";
  if (r.empty_files)
    snprintf(empty, sizeof empty, "; %" PRIu64 " empty files skipped", r.empty_files);
  cli_summary(
          "scan: %" PRIu64 " rows in %" PRIu64 " files (%" PRIu64 " row groups%s), %.1f MB "
          "decoded (%.1f MB read) in %.3f s = %.1f MB/s, checksum %.17g\n",
          r.rows, r.files, r.row_groups, empty, (double)r.bytes / 1e6,
          (double)r.bytes_read / 1e6, r.seconds, mbps, r.checksum);
  if (rs.requests)
    cli_summary("scan: %" PRIu64 " HTTP requests (%" PRIu64 " retries), %.1f MB received\n",
            rs.requests, rs.retries, (double)rs.bytes_received / 1e6);
out:
  vf_buf_free(&b);
  corpus_files_free(&files);
  cli_list_free(&cols);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}
