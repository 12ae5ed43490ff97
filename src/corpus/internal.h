/* internal.h — helpers shared by the src/corpus sources (not part of the public API). */
#ifndef VFORGE_CORPUS_INTERNAL_H
#define VFORGE_CORPUS_INTERNAL_H

#include <sys/stat.h>

#include "vforge/corpus.h"

/* `abs` with the directory `id_root` and the following '/' removed; VF_ECONFIG if not under it */
vf_status corpus_strip_root(const char *abs, const char *id_root, char **out, vf_error *err);
/* md5(key + suffix) as a point id, where suffix is ":<decimal row>" */
void corpus_point_id_text(const char *key, size_t key_len, const char *suffix, size_t suffix_len,
                          char out[37]);
/* ":<v>" (or ":-<v>" when neg) in decimal into out (NUL-terminated); returns its length */
int corpus_id_suffix(char out[24], bool neg, uint64_t v);
/* 16 bytes -> lowercase 8-4-4-4-12 */
void corpus_uuid_format(const uint8_t d[16], char out[37]);

/* ---- id expression columns over decoded parquet leaves (records_ids.c; used by `cat --with-id`
 * in corpus_read.c and by the record reader in records.c) */
#include "vforge/format.h"

typedef struct corpus_idcol {
  const char *name;          /* borrowed from the expression */
  int leaf;                  /* leaf index of the flat top-level column */
  const pqt_leaf_data *data; /* bound per row group */
  int64_t *vidx;             /* per row: value index or -1 (null); NULL when the leaf has no nulls */
  size_t vidx_cap;
} corpus_idcol;

typedef struct corpus_idcols {
  const pqt_file *f;
  corpus_idcol *cols;
  int ncols;
  int64_t row; /* row within the bound row group: set before each corpus_idexpr_eval */
  char uuid_buf[37];
} corpus_idcols;

/* "<file>: no column '<name>' (columns: a, b, ...)" as VF_ENOTFOUND */
vf_status corpus_missing_column(const pqt_file *f, const char *name, vf_error *err);
/* resolve the expression's columns to flat top-level leaves of `f` (VF_ENOTFOUND / VF_ECONFIG) */
vf_status corpus_idcols_resolve(const pqt_file *f, const corpus_idexpr *e, corpus_idcols *out,
                                vf_error *err);
/* point the columns at the decoded leaves of one row group (leaf_ids[i] is outs[i]'s leaf) */
vf_status corpus_idcols_bind(corpus_idcols *c, const pqt_leaf_data *data, const int *leaf_ids,
                             int nleaves, vf_error *err);
/* corpus_row_ctx.get_column callback; `user` is the corpus_idcols */
vf_status corpus_idcols_get(void *user, const char *column, corpus_value *out, vf_error *err);
void corpus_idcols_free(corpus_idcols *c);

/*! corpus_records_payload_view() : the parquet side of the last corpus_records_read(): the file
 *  the payload columns come from (a dataset part's payload file), its decoded leaves (leaf_ids[i]
 *  is data[i]'s leaf) and the payload sources as resolved (a dataset without payload_fields: every
 *  column the payload component allows).  Read it with spec.payload_raw (src/corpus/arrow_*.c).
 *  @return : false when there is no parquet side (a dataset part without a payload file). */
typedef struct corpus_payload_view {
  const pqt_file *f;
  const pqt_leaf_data *data;
  const int *leaf_ids;
  int nleaves;
  const corpus_payload_source *payload;
  int npayload;
} corpus_payload_view;
bool corpus_records_payload_view(const corpus_records *r, corpus_payload_view *out);

/* What a record reader reads through (issue 15 item 2): corpus_records_* forward every call to
 * its source, the parquet reader (records.c) or a component-dataset part (dataset_read.c,
 * ds_records_source), instead of branching on the kind.  `impl` is the source's own state. */
struct pqt_open_opts;
typedef struct corpus_records_source {
  vf_status (*open)(corpus_records *r, const struct pqt_open_opts *opts, void **impl,
                    vf_error *err); /* r->file, r->spec, r->global_row_base are set */
  int (*row_groups)(const void *impl);
  uint64_t (*rows)(const void *impl);
  uint64_t (*row_group_first)(const void *impl, int rg);
  vf_status (*read)(void *impl, int rg, uint64_t from_row, corpus_batch *out, uint64_t *skipped,
                    vf_error *err);
  uint64_t (*bytes_read)(const void *impl);
  bool (*payload)(const void *impl, corpus_payload_view *out);
  void (*close)(void *impl); /* NULL ok */
} corpus_records_source;
/* the dataset part source (dataset_read.c) */
extern const corpus_records_source ds_records_source;
/*! corpus_records_file() / corpus_records_spec() / corpus_records_row_base() : what a reader was
 *  opened over (for sources). */
const corpus_file *corpus_records_file(const corpus_records *r);
const corpus_record_spec *corpus_records_spec(const corpus_records *r);
uint64_t corpus_records_row_base(const corpus_records *r);

/*! corpus_batch_vectors_free() : free a batch's vector array and every buffer in it (records.c;
 *  also used by the dataset reader). */
void corpus_batch_vectors_free(corpus_batch *b);

/* corpus_plan_written_row_groups() (plan.c): f's row groups as written and the rows of each
 * (row groups pqt_open sliced are summed back); caller frees *each. */
vf_status corpus_plan_written_row_groups(const pqt_file *f, int *n, uint64_t **each, vf_error *err);

#endif
