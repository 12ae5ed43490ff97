/*
 * pqt_writer_internal.h — the parquet writer's handle and per-leaf column state, shared by
 * pqt_writer.c (pages, row groups, footer) and pqt_arrow_schema.c (the ARROW:schema footer
 * entry built from the same columns).  Private to those two files.
 */
#ifndef VFORGE_PQT_WRITER_INTERNAL_H
#define VFORGE_PQT_WRITER_INTERNAL_H

#include "format/pqt_internal.h"

/* What the footer needs about one column chunk. */
typedef struct pw_chunk_meta {
  int64_t offset;       /* data_page_offset = start of the chunk */
  int64_t comp, uncomp; /* sizes including page headers */
  int64_t num_values;   /* level entries */
  int64_t null_count;   /* level entries without a value */
} pw_chunk_meta;

typedef struct pw_rg_meta {
  int64_t num_rows;
  int64_t offset;
  int64_t comp, uncomp;
  pw_chunk_meta *cols;
} pw_rg_meta;

typedef struct pw_col {
  char *name;
  pqt_wtype wtype;
  bool nullable;
  int32_t dim;
  pqt_physical phys; /* leaf physical type */
  bool is_list;
  int depth; /* list nesting: 0 flat, 1 list, 2 list of lists */
  int bcol;  /* the pqt_wcolumn / pqt_wbatch this leaf belongs to */
  int part;  /* 0: the whole column; SPARSE: 1 indices, 2 values */
  uint8_t max_def, max_rep;
  int def_bits, rep_bits;
  /* the open page */
  vf_buf def, rep, vals;
  int64_t page_levels, page_values;
  /* the column chunk of the open row group: sealed pages with headers */
  vf_buf chunk;
  int64_t chunk_levels, chunk_nulls, chunk_uncomp;
} pw_col;

struct pqt_writer {
  vf_atomic_file *af;
  char *path;
  pw_col *cols;  /* one per leaf */
  int ncols;     /* leaves */
  int nbcols;    /* columns as given (batches per write) */
  int codec;
  int level;
  int64_t rg_rows, page_bytes;
  int64_t buffered_rows, total_rows;
  pw_rg_meta *rgs;
  int nrgs, rgs_cap;
  pqt_kv *kv;
  int nkv, kv_cap;
  vf_buf raw, comp, hdr; /* scratch, reused for every page */
  vf_status failed;      /* sticky: set when a write failed half-way */
};

/* ----------------------------------------------------- ARROW:schema (pqt_arrow_schema.c) */

/*! pw_add_arrow_schema() : add the footer key "ARROW:schema" when a VECTOR column exists (so
 *  arrow readers restore FixedSizeList<float>[dim]), unless the caller already set that key or
 *  a SPARSE column exists.  Called by pqt_writer_close() before the footer is written. */
vf_status pw_add_arrow_schema(pqt_writer *w, vf_error *err);

#endif
