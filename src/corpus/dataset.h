/*
 * Component datasets (`datasource: {type: dataset}`, DESIGN.md "Configuration") — internal
 * interface between vf_config_files(), the record reader (records.c) and dataset*.c.
 *
 * A dataset becomes one corpus_file per part (corpus_file.dataset / .part set): the load runner,
 * its --offset/-n and the `row` id expression then work on the dataset's global row space with
 * no dataset-specific code.  corpus_records_open() of such a file pairs row i of the vectors
 * part (npy/fbin/hdf5) with row i of the payload part (parquet).
 */
#ifndef VFORGE_CORPUS_DATASET_H
#define VFORGE_CORPUS_DATASET_H

#include "vforge/config.h"
#include "vforge/corpus.h"

/*! ds_files() : measure every part of a `type: dataset` datasource (one ranged read of each
 *  part's header or footer, concurrently; or the parts index when it holds this spec) and
 *  return one corpus_file per part in part order.  The dataset object lives until the process
 *  ends (corpus_file.dataset points at it).
 *  @return : VF_ENOTFOUND naming a part that is neither on disk nor has a link; VF_ECORRUPT
 *            naming both files and row counts when a vectors part and its payload part differ. */
vf_status ds_files(const vf_config *cfg, corpus_files *out, vf_error *err);

/* A record reader over one dataset part (records.c forwards to it). */
typedef struct ds_reader ds_reader;

vf_status ds_reader_open(const corpus_file *file, const corpus_record_spec *spec,
                         uint64_t global_row_base, ds_reader **out, vf_error *err);
int ds_reader_row_groups(const ds_reader *r);
uint64_t ds_reader_rows(const ds_reader *r);
uint64_t ds_reader_row_group_first(const ds_reader *r, int rg);
uint64_t ds_reader_bytes_read(const ds_reader *r);
vf_status ds_reader_read(ds_reader *r, int rg, uint64_t from_row, corpus_batch *out,
                         uint64_t *skipped, vf_error *err);
void ds_reader_close(ds_reader *r);
/* the record reader of the part's payload file (NULL without one): corpus_records_payload_view() */
const corpus_records *ds_reader_payload(const ds_reader *r);

#endif
