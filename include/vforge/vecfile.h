/*
 * vforge vecfile — readers for plain vector files (NumPy .npy, IDX / MNIST ubyte, gzipped IDX)
 * and their conversion into a parquet corpus (`vforge convert`).
 *
 * Why one handle for every format: once its header is parsed, each of these files is the same
 * thing — `rows x dim` values of one element type stored row-major from a data offset to the end
 * of the file.  The format readers (npy_open, idx_open) only parse and validate headers and
 * describe that layout in a vec_layout; vec_open_raw() checks it against the file size and
 * every reader shares one row reader that streams any row range into float32 (or, for integer
 * files such as labels and ids, int64).  Later raw formats (.fbin/.u8bin/.ibin) are one more
 * header parser over the same layout.
 *
 * Trust: headers come from untrusted files.  Every size is computed with overflow checks and
 * compared to the file size before anything is allocated; a file whose data is not exactly
 * rows*dim*itemsize bytes is VF_ECORRUPT naming the file and both sizes.  Gzipped IDX files are
 * inflated into memory that grows with the bytes actually produced, capped by the size the
 * header claims (and that claim is itself bounded by deflate's maximum ratio and a cap).
 */
#ifndef VFORGE_VECFILE_H
#define VFORGE_VECFILE_H

#include "vforge/io.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- layout */

typedef enum vec_dtype {
  VEC_F32 = 0,
  VEC_F16,
  VEC_F64,
  VEC_U8,
  VEC_I8,
  VEC_I16,
  VEC_I32,
  VEC_I64
} vec_dtype;

#define VEC_MAX_NDIM 8

/* Row-major data of one element type from `data_offset` to the end of the source. */
typedef struct vec_layout {
  vec_dtype dtype;
  bool big_endian;      /* element byte order (npy '>', IDX); single-byte types ignore it */
  uint64_t data_offset; /* first data byte */
  int ndim;             /* 1..VEC_MAX_NDIM; shape[0] is the row count */
  uint64_t shape[VEC_MAX_NDIM];
} vec_layout;

/*! vec_dtype_size() : bytes per element. */
size_t vec_dtype_size(vec_dtype t);
/*! vec_dtype_name() : numpy-style name ("float32", "uint8", ...). */
const char *vec_dtype_name(vec_dtype t);
/*! vec_dtype_is_int() : true for the integer element types. */
bool vec_dtype_is_int(vec_dtype t);

/* ---------------------------------------------------------------- reader */

typedef struct vec_file vec_file;

/*! vec_open_raw() : a vector file over `src` with the given layout; `format` ("npy", "idx")
 *  names it in messages.  Ownership of src passes to the file, also on failure.  Rows are
 *  shape[0]; dim is the product of shape[1..] (1 for a 1-D file).
 *  @return : VF_ECORRUPT naming the file, the expected and the actual data size when the
 *            source is not exactly data_offset + rows*dim*itemsize bytes (or that overflows);
 *            VF_EUNSUPPORTED for a zero dimension. */
vf_status vec_open_raw(io_source *src, const vec_layout *layout, const char *format, vec_file **out,
                       vf_error *err);

/* Options shared by the format readers.  Zeroed = defaults. */
typedef struct vec_open_opts {
  uint64_t max_inflate; /* gzip: largest decompressed size accepted, default 16 GiB */
} vec_open_opts;

/*! npy_open() : parse a NumPy .npy header (format versions 1.0, 2.0, 3.0: magic "\x93NUMPY",
 *  u16 (v1) or u32 (v2/v3) header length, a Python dict literal with exactly the keys 'descr',
 *  'fortran_order' and 'shape').  descr: '<f4' '<f2' '<f8' '|u1' '|i1' '<i2' '<i4' '<i8' (and
 *  the '>' byte orders); shape: (N, D) or (N,).  Ownership of src passes to the file.
 *  @return : VF_ECORRUPT for a bad magic, a truncated or malformed header, or a data size that
 *            differs from the shape's; VF_EUNSUPPORTED for other dtypes, Fortran order on a
 *            2-D array with both sides > 1, 0-D or >2-D shapes.  Messages start with the name. */
vf_status npy_open(io_source *src, vec_file **out, vf_error *err);

/*! idx_open() : parse an IDX file (the MNIST "ubyte" format: big-endian magic 0x0000TTNN with
 *  type TT in 08 u8, 09 i8, 0B i16, 0C i32, 0D f32, 0E f64 and NN dimensions, then NN
 *  big-endian u32 sizes, then the data).  A gzip stream (magic 1f 8b) is inflated first.
 *  `opts` may be NULL.  Ownership of src passes to the file.
 *  @return : VF_ECORRUPT for a bad magic, a truncated header or gzip stream, trailing bytes,
 *            or a data size that differs from the dimensions'. */
vf_status idx_open(io_source *src, const vec_open_opts *opts, vec_file **out, vf_error *err);

/*! vec_open_path() : open a local vector file, choosing the reader from its first bytes
 *  ("\x93NUMPY" -> npy, 1f 8b or 00 00 TT NN -> IDX, the HDF5 signature -> hdf5_open() of its
 *  "train" dataset) or, for the headerless big-ann files, from its name (.fbin, .u8bin, .i8bin,
 *  .ibin -> fbin_open()).
 *  @return : VF_ENOTFOUND when missing; VF_EUNSUPPORTED naming the file when the format is
 *            not one of these. */
vf_status vec_open_path(const char *path, const vec_open_opts *opts, vec_file **out, vf_error *err);

/*! fbin_open() : a big-ann-benchmarks binary vector file: u32le rows | u32le dim | rows*dim
 *  elements, row-major.  The element type is not in the file: `dtype` comes from the name
 *  (fbin_dtype_of_path()).  Ownership of src passes to the file.
 *  @return : VF_ECORRUPT naming the file for a file shorter than the header or whose data is not
 *            exactly rows*dim*itemsize bytes; VF_EUNSUPPORTED for a zero dimension. */
vf_status fbin_open(io_source *src, vec_dtype dtype, vec_file **out, vf_error *err);

/*! fbin_dtype_of_path() : the element type a big-ann file name implies: .fbin float32, .u8bin
 *  uint8, .i8bin int8, .ibin int32 (also with a trailing ".<digits>" shard suffix stripped).
 *  @return : false when the name has none of these extensions (*out is then VEC_F32). */
bool fbin_dtype_of_path(const char *path, vec_dtype *out);

/* big-ann-benchmarks ground truth: u32le nq | u32le k | nq*k int32 ids | nq*k float32
 * distances (row i = query i, best first). */
typedef struct vec_gt {
  uint32_t nq, k;
  int32_t *ids;   /* nq*k */
  float *dist;    /* nq*k */
} vec_gt;

/*! bigann_gt_read() : read a whole big-ann ground-truth file (local path).
 *  @return : VF_ENOTFOUND; VF_ECORRUPT naming the file when its size is not 8 + nq*k*8 bytes. */
vf_status bigann_gt_read(const char *path, vec_gt *out, vf_error *err);
void vec_gt_free(vec_gt *gt); /* NULL ok; zeroes */

/*! hdf5_open() : one 1-D or 2-D dataset (e.g. "train", "test", "neighbors" of an
 *  ann-benchmarks bundle) of a local HDF5 file as a vector file (libhdf5; every call into it is
 *  serialised, because Debian's libhdf5 is not built thread-safe).  Float datasets (16, 32 or
 *  64-bit) read as float32, integer datasets as int64 (HDF5 converts).  vec_format() is "hdf5".
 *  @return : VF_ENOTFOUND naming the file or the dataset (and listing the file's datasets);
 *            VF_ECORRUPT for a file libhdf5 cannot open; VF_EUNSUPPORTED for other element
 *            classes or more than 2 dimensions. */
vf_status hdf5_open(const char *path, const char *dataset, vec_file **out, vf_error *err);

/*! hdf5_root_attr() : the string attribute `name` of the file's root group (e.g. ann-benchmarks'
 *  "distance").  Caller frees *out.  @return : VF_ENOTFOUND when the file or attribute is
 *  missing; VF_EUNSUPPORTED when it is not a string. */
vf_status hdf5_root_attr(const char *path, const char *name, char **out, vf_error *err);

/*! hdf5_has_dataset() : true when the local HDF5 file holds a dataset called `name`. */
bool hdf5_has_dataset(const char *path, const char *name);

/*! vec_is_hdf5() : true when the first 8 bytes are the HDF5 signature "\x89HDF\r\n\x1a\n". */
bool vec_is_hdf5(const uint8_t *head, size_t n);

void vec_close(vec_file *f); /* NULL ok */

const char *vec_name(const vec_file *f);   /* the source name */
const char *vec_format(const vec_file *f); /* "npy", "idx", "fbin", "hdf5" */
uint64_t vec_rows(const vec_file *f);
uint64_t vec_dim(const vec_file *f); /* values per row: product of shape[1..], 1 for 1-D */
const vec_layout *vec_layout_of(const vec_file *f);

/*! vec_read_rows() : rows [first, first+n) as row-major float32 into out (n*dim floats).
 *  Every element type is converted (f16/f64 rounded to float, integers by value: u8 images
 *  stay 0..255, not scaled).  Reads go through the source in bounded chunks.
 *  @return : VF_EUSAGE naming the file when the range passes the last row. */
vf_status vec_read_rows(vec_file *f, uint64_t first, uint64_t n, float *out, vf_error *err);

/*! vec_read_rows_i64() : the same for integer files (labels, ids) as int64.
 *  @return : VF_EUNSUPPORTED naming the file and dtype for a floating-point file. */
vf_status vec_read_rows_i64(vec_file *f, uint64_t first, uint64_t n, int64_t *out, vf_error *err);

/* -------------------------------------------------- conversion to a parquet corpus */

/* corpus_convert (src/corpus/convert.c): the library side of `vforge convert`.
 * Writes DIR/batch_00000000.parquet, batch_00000001.parquet, ... (DESIGN.md "Corpus layout"),
 * each up to rows_per_file rows, columns:
 *   id      INT64, the global row (0-based across the sources in the order given)
 *   <vector_column>  fixed-dimension float vector (PQT_W_VECTOR), zstd
 *   label   INT32, when label files are given (their rows concatenated must equal the vector
 *           rows: a mismatch is an error, never a silent truncation)
 * Sources are concatenated in order and must share one dimension.  Rows stream through in
 * chunks, so memory is one chunk plus the writer's row group whatever the corpus size.  Each
 * file appears atomically (temp + rename).  An output directory that already holds parquet
 * files is refused unless `overwrite`, which replaces this layout's batch_NNNNNNNN.parquet files
 * and removes the ones a previous, longer conversion left (other parquet files still refuse). */
typedef struct corpus_convert_opts {
  const char *const *sources; /* vector files: .npy, IDX (.gz or raw) */
  size_t nsources;
  const char *const *labels; /* optional label files (integer npy/IDX, 1-D or (N,1)) */
  size_t nlabels;
  const char *output_dir;    /* created if missing */
  const char *vector_column; /* default "emb" */
  const char *label_column;  /* default "label" */
  uint64_t rows_per_file;    /* default 1,000,000 */
  int64_t row_group_rows;    /* default: about 32 MiB of floats, at most 65536 rows */
  bool overwrite;
  vec_open_opts open_opts;
} corpus_convert_opts;

typedef struct corpus_convert_result {
  uint64_t rows;
  uint64_t files; /* parquet files written */
  uint64_t dim;
  uint64_t removed; /* stale batch files removed (overwrite) */
  double seconds;
} corpus_convert_result;

/*! corpus_convert() : convert `sources` into a parquet corpus under output_dir (progress is
 *  reported with vf_progress_emit, phase "convert").
 *  @return : VF_EUSAGE for bad options or a non-empty output directory; the readers' errors
 *            (naming the file) for bad input; VF_ECORRUPT naming both files for a dimension or
 *            label-count mismatch. */
vf_status corpus_convert(const corpus_convert_opts *opts, corpus_convert_result *res,
                         vf_error *err);

#ifdef __cplusplus
}
#endif
#endif
