/* vforge convert: a thin wrapper over corpus_convert() (include/vforge/vecfile.h). */
#include <inttypes.h>
#include <stdlib.h>

#include "cli.h"
#include "vforge/vecfile.h"

static const cli_opt CONVERT_OPTS[] = {
    {"output", "DIR", "the corpus directory to write (created if missing; required)"},
    {"vector-column", "NAME", "name of the vector column (default emb)"},
    {"rows-per-file", "N", "rows per parquet file (default 1000000)"},
    {"labels", "FILE[,FILE]",
     "integer labels (IDX labels, a 1-D .npy or .ibin), one per source row, as an INT32 column"},
    {"label-column", "NAME", "name of the label column (default label)"},
    {"row-group-rows", "N", "rows per row group (default: about 32 MiB of vectors, at most 65536)"},
    {"overwrite", NULL, "replace the batch files of a previous conversion in DIR"},
    {"json", NULL, "print one JSON object {rows, dim, files, output, seconds} on stdout"},
    {NULL, NULL, NULL}};

const cli_cmd CLI_CONVERT = {
    "convert",
    "SRC... --output DIR [--vector-column emb] [--rows-per-file N] [--labels FILE]",
    "Write vector files as a parquet corpus: DIR/batch_00000000.parquet, ... with columns\n"
    "`id` (int64, the global row), the vector column (float32 vectors, fixed dimension, zstd)\n"
    "and, with --labels, `label` (int32).  Sources are concatenated in the order given and\n"
    "must share one dimension.  Formats: NumPy .npy (float32/16/64, uint8, int8..int64; shape\n"
    "(N, D), C order), IDX (MNIST ubyte; images (N, H, W) become vectors of H*W values),\n"
    "plain or gzipped, big-ann-benchmarks .fbin/.u8bin/.i8bin/.ibin (element type by name) and\n"
    "HDF5 (the `train` dataset of an ann-benchmarks bundle).",
    CONVERT_OPTS,
    1,
    CLI_MAX_POS};

/*! cmd_convert() : `vforge convert`; exit 0, 2 for bad usage or input data, 1 otherwise. */
int cmd_convert(int argc, char **argv) {
  vf_error err;
  vf_error_clear(&err);
  cli_args a;
  cli_list labels = {0};
  corpus_convert_opts o;
  corpus_convert_result r;
  memset(&o, 0, sizeof o);
  uint64_t rgr = 0;
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  VF_TRY(cli_parse(&CLI_CONVERT, argc, argv, &a, &err));
  VF_TRY(cli_get_u64(&CLI_CONVERT, &a, "rows-per-file", 0, &o.rows_per_file, &err));
  if (cli_get(&CLI_CONVERT, &a, "rows-per-file") && o.rows_per_file == 0)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "--rows-per-file must be at least 1"));
  VF_TRY(cli_get_u64(&CLI_CONVERT, &a, "row-group-rows", 0, &rgr, &err));
  if (cli_get(&CLI_CONVERT, &a, "row-group-rows") && (rgr == 0 || rgr > INT32_MAX))
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "--row-group-rows must be in 1..%d", INT32_MAX));
  o.sources = a.pos;
  o.nsources = (size_t)a.npos;
  o.output_dir = cli_get(&CLI_CONVERT, &a, "output");
  if (!o.output_dir || !*o.output_dir)
    VF_FAIL(vf_error_set(&err, VF_EUSAGE, "vforge convert: --output DIR is required"));
  o.vector_column = cli_get(&CLI_CONVERT, &a, "vector-column");
  o.label_column = cli_get(&CLI_CONVERT, &a, "label-column");
  o.row_group_rows = (int64_t)rgr;
  o.overwrite = cli_get(&CLI_CONVERT, &a, "overwrite") != NULL;
  const char *l = cli_get(&CLI_CONVERT, &a, "labels");
  if (l) {
    if (!cli_list_split(l, &labels))
      VF_FAIL(vf_error_set(&err, VF_ENOMEM, "out of memory"));
    else if (labels.n == 0)
      VF_FAIL(vf_error_set(&err, VF_EUSAGE, "--labels needs a file name"));
    o.labels = (const char *const *)labels.items;
    o.nlabels = (size_t)labels.n;
  }
  cli_on_interrupt("convert to %s stopped; its staging directory was removed and %s is as it "
                   "was; run the command again", o.output_dir, o.output_dir);
  VF_TRY(corpus_convert(&o, &r, &err));
  cli_progress_end();
  if (cli_get(&CLI_CONVERT, &a, "json")) {
    VF_TRY(vf_buf_printf(&b, &err,
                         "{\"rows\": %" PRIu64 ", \"dim\": %" PRIu64
                         ", \"files\": %" PRIu64 ", \"output\": ",
                         r.rows, r.dim, r.files));
    VF_TRY(vf_json_string(&b, o.output_dir, strlen(o.output_dir), &err));
    VF_TRY(vf_buf_printf(&b, &err, ", \"seconds\": %.3f}\n", r.seconds));
    VF_TRY(cli_write_json(b.data, b.len, &err));
  }
  vf_log(VF_LOG_INFO,
         "converted %" PRIu64 " rows of dimension %" PRIu64 " from %zu file%s into %" PRIu64
         " parquet file%s in %s (%.1fs)%s",
         r.rows, r.dim, o.nsources, o.nsources == 1 ? "" : "s", r.files,
         r.files == 1 ? "" : "s", o.output_dir, r.seconds,
         r.removed ? "; removed stale batch files of a previous conversion" : "");
out:
  vf_buf_free(&b);
  cli_list_free(&labels);
  return st == VF_OK ? 0 : cli_fail(st, &err);
}
