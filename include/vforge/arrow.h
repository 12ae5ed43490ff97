/*
 * vforge arrow — record batches leave the library through the Arrow C Data Interface
 * (arrow.apache.org/docs/format/CDataInterface.html and CStreamInterface.html): a C ABI of three
 * structs, so pyarrow, polars, DuckDB or any C consumer imports vforge's batches without a copy
 * and without vforge linking an Arrow library.
 *
 * One batch per row group (or row-group slice) of the corpus, columns in this order:
 *   __id__            utf8 (a UUID point id) or uint64 (integer ids: `row`, `hash()`, an
 *                     integer column), from the id expression (with_id)
 *   vectors           dense: fixed_size_list<float32>[dim] over the one contiguous row-major
 *                     matrix the record reader decoded (numpy views its values as (n, dim));
 *                     sparse: struct<indices: list<uint32>, values: list<float32>>;
 *                     multivector: list<fixed_size_list<float32>[dim]>.  Field metadata
 *                     "vforge.vector" (dense|sparse|multivector) and "vforge.distance".
 *   payload columns   as the parquet schema gives them (ints of every width and sign, float16/
 *                     32/64, bool, utf8/binary, fixed_size_binary, decimal128/256, date32, time,
 *                     timestamps (INT96 as ns), lists, structs, maps; OPTIONAL fields nullable)
 *   __source_file__   utf8, the row's file (bare key);  __source_row__ int64, its physical row
 * The vector, id and row buffers are the record reader's own (moved, not copied, into the batch);
 * a batch's memory is freed when the consumer releases it (every child array holds a reference,
 * so a child moved out by the consumer stays valid on its own).
 *
 * Vectors are read as `load` reads them: a row whose vector is null, of the wrong dimension or
 * not finite is an error naming the file and row, or dropped with skip_bad_rows.
 */
#ifndef VFORGE_ARROW_H
#define VFORGE_ARROW_H

#include <stdint.h>

#include "vforge/config.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The structs exactly as the specification writes them, under its include guards, so this
 * header coexists with arrow/c/abi.h or nanoarrow. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  /* Array type description */
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  /* Release callback */
  void (*release)(struct ArrowSchema *);
  /* Opaque producer-specific data */
  void *private_data;
};

struct ArrowArray {
  /* Array data description */
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  /* Release callback */
  void (*release)(struct ArrowArray *);
  /* Opaque producer-specific data */
  void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  /* Callbacks providing stream functionality */
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  const char *(*get_last_error)(struct ArrowArrayStream *);
  /* Release callback */
  void (*release)(struct ArrowArrayStream *);
  /* Opaque producer-specific data */
  void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

typedef struct vf_arrow_opts {
  const char *id_root;          /* local files: strip this directory to form the id key */
  const char *const *columns;   /* a parquet URI: top-level columns; a config: vector names and
                                   payload keys; NULL/0 = all, in schema / config order */
  int ncolumns;
  const char *const *vectors;   /* a parquet URI: the columns read as vectors; vectors_given
                                   false = every column with a dense vector shape (list<float|
                                   double|float16>, FLBA) or a sparse one (struct{indices,values}) */
  int nvectors;
  bool vectors_given;
  bool with_id;                 /* emit __id__ */
  const char *id_expression;    /* NULL: the config's, else vf_point_id(filename, file_row_number) */
  bool provenance;              /* emit __source_file__ and __source_row__ */
  bool skip_bad_rows;           /* drop rows with a bad vector instead of failing */
} vf_arrow_opts;

/*! vf_arrow_opts_default() : with_id and provenance on, everything else off. */
void vf_arrow_opts_default(vf_arrow_opts *o);

/*! vf_arrow_open() : an ArrowArrayStream over the record batches of `uri` — a parquet corpus URI
 *  (local, s3://, hf://, http(s)://), a YAML load config (its datasource, `vectors:` and
 *  payload_fields; component datasets included) or a vector file (.npy, .fbin, .hdf5).  The
 *  first non-empty batch is read here, so a bad URI, column or row fails now, not at the first
 *  get_next.  `out` owns everything; release it with out->release.  get_next returns 0 with a
 *  released array at the end, or an errno value (EINVAL bad input, ENOENT, EIO, ENOMEM, EINTR
 *  cancelled) with get_last_error() naming file, row and column.  Long reads poll
 *  vf_check_cancel() between row groups.
 *  @return : corpus_source_open() / reader errors; VF_ECORRUPT when files disagree on a
 *            column's type or a vector's dimension (naming both). */
vf_status vf_arrow_open(const char *uri, const vf_arrow_opts *opts, struct ArrowArrayStream *out,
                        vf_error *err);

/*! vf_arrow_next() : get_next of a stream made by vf_arrow_open(), with vforge's status and
 *  message (`out` is released — release == NULL — at the end of the stream).
 *  @return : VF_EUSAGE for a stream vforge did not make. */
vf_status vf_arrow_next(struct ArrowArrayStream *s, struct ArrowArray *out, vf_error *err);

/*! vf_arrow_status_errno() : the errno value get_next reports for a status (0 for VF_OK). */
int vf_arrow_status_errno(vf_status st);

#ifdef __cplusplus
}
#endif
#endif
