/*
 * Shared between dataset.c (parts, sizing, the parts index, the evicting cache) and
 * dataset_read.c (the record reader over one part).
 */
#ifndef VFORGE_CORPUS_DATASET_INTERNAL_H
#define VFORGE_CORPUS_DATASET_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "dataset.h"
#include "vforge/vecfile.h"

#define DS_VIRTUAL_RG_ROWS 8192 /* rows per read when a part has no payload parquet */

typedef struct ds_part {
  char *vpath, *vlink; /* vectors part: local path (cache location), download URL or NULL */
  char *ppath, *plink; /* payload part (NULL when the dataset has no payload component) */
  uint64_t rows;       /* measured */
  /* evicting cache, under ds->mu */
  int refs;            /* readers holding the part */
  bool v_ours, p_ours; /* files vforge downloaded (only these are ever deleted) */
  bool busy;           /* a download of this part is running */
  bool v_fetch, p_fetch; /* while busy: the files that were missing when the download started */
  uint64_t bytes;      /* bytes of our downloads of this part on disk */
} ds_part;

struct corpus_dataset {
  char *name;              /* the config file name, for messages */
  vf_cfg_format vformat;   /* npy, fbin or hdf5 */
  vec_dtype bin_dtype;     /* fbin: from the file name */
  char *h5_dataset;        /* hdf5: the dataset read for vectors (default "train") */
  bool has_payload;
  vf_cfg_format pformat;   /* parquet or jsonl */
  char **pcolumns;         /* payload component `columns` (NULL = all) */
  size_t npcolumns;
  char **pexclude;
  size_t npexclude;
  char *fill_null;         /* JSON text or NULL */
  bool evict;
  size_t nparts;
  ds_part *parts;
  char *index_path;        /* the parts index file */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t prefetch;      /* the background download of the next part */
  bool prefetch_running;   /* a thread was started and not yet joined */
  uint64_t cached_bytes;   /* our downloaded bytes on disk now */
  atomic_bool closing;     /* the process exits: start no further download */
};

/*! ds_part_acquire() : make part `i` readable (downloading it when its files are missing and it
 *  has links), take a reference, and in evict mode start the background download of part i+1.
 *  @return : errors of io_download() naming the URL; VF_ENOTFOUND when a file is missing and
 *            has no link. */
vf_status ds_part_acquire(struct corpus_dataset *d, size_t i, vf_error *err);

/*! ds_part_release() : drop a reference; in evict mode the part's files that vforge downloaded
 *  are deleted once no reader holds it. */
void ds_part_release(struct corpus_dataset *d, size_t i);

/*! ds_jsonl_count() : the lines (payloads) of a local jsonl file (a last line without '\n'
 *  counts).  @return : VF_ENOTFOUND / VF_EIO naming the file. */
vf_status ds_jsonl_count(const char *path, uint64_t *rows, vf_error *err);

/*! ds_open_vectors() : the vectors file of part i (local path) as a vec_file. */
vf_status ds_open_vectors(const struct corpus_dataset *d, const char *path, vec_file **out,
                          vf_error *err);

#endif
