/*
 * vforge format — Parquet reader and streaming writer (own implementation: Debian ships no C
 * parquet library).
 *
 * Reading is layered the way the format is (parquet-format/src/main/thrift/parquet.thrift):
 *   footer (thrift compact FileMetaData) -> schema tree with def/rep levels -> per row group,
 *   per leaf column: one ranged read of the column chunk -> pages (v1, v2, dictionary) ->
 *   decompress -> levels (RLE/bit-packed) + values (PLAIN, dictionary, DELTA_*, BYTE_STREAM_SPLIT)
 *   -> pqt_leaf_data (levels + packed values) -> assembly: dense float matrices for vectors,
 *   JSON rows for `cat`.
 * Every byte that comes from a file is read through vf_cursor; every size is checked against
 * the file/page before it drives an allocation.
 */
#ifndef VFORGE_FORMAT_H
#define VFORGE_FORMAT_H

#include "vforge/io.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ enums (parquet.thrift) */

typedef enum pqt_physical {
  PQT_BOOLEAN = 0,
  PQT_INT32 = 1,
  PQT_INT64 = 2,
  PQT_INT96 = 3,
  PQT_FLOAT = 4,
  PQT_DOUBLE = 5,
  PQT_BYTE_ARRAY = 6,
  PQT_FIXED_LEN_BYTE_ARRAY = 7
} pqt_physical;

typedef enum pqt_repetition { PQT_REQUIRED = 0, PQT_OPTIONAL = 1, PQT_REPEATED = 2 } pqt_repetition;

typedef enum pqt_codec {
  PQT_UNCOMPRESSED = 0,
  PQT_SNAPPY = 1,
  PQT_GZIP = 2,
  PQT_LZO = 3,
  PQT_BROTLI = 4,
  PQT_LZ4 = 5, /* deprecated "Hadoop" framing, with raw-block fallback */
  PQT_ZSTD = 6,
  PQT_LZ4_RAW = 7
} pqt_codec;

typedef enum pqt_encoding {
  PQT_ENC_PLAIN = 0,
  PQT_ENC_PLAIN_DICTIONARY = 2,
  PQT_ENC_RLE = 3,
  PQT_ENC_BIT_PACKED = 4,
  PQT_ENC_DELTA_BINARY_PACKED = 5,
  PQT_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
  PQT_ENC_DELTA_BYTE_ARRAY = 7,
  PQT_ENC_RLE_DICTIONARY = 8,
  PQT_ENC_BYTE_STREAM_SPLIT = 9
} pqt_encoding;

typedef enum pqt_page_type {
  PQT_DATA_PAGE = 0,
  PQT_INDEX_PAGE = 1,
  PQT_DICTIONARY_PAGE = 2,
  PQT_DATA_PAGE_V2 = 3
} pqt_page_type;

/* ConvertedType (legacy annotation); -1 when absent */
enum {
  PQT_CT_UTF8 = 0, PQT_CT_MAP = 1, PQT_CT_MAP_KEY_VALUE = 2, PQT_CT_LIST = 3, PQT_CT_ENUM = 4,
  PQT_CT_DECIMAL = 5, PQT_CT_DATE = 6, PQT_CT_TIME_MILLIS = 7, PQT_CT_TIME_MICROS = 8,
  PQT_CT_TIMESTAMP_MILLIS = 9, PQT_CT_TIMESTAMP_MICROS = 10, PQT_CT_UINT_8 = 11,
  PQT_CT_UINT_16 = 12, PQT_CT_UINT_32 = 13, PQT_CT_UINT_64 = 14, PQT_CT_INT_8 = 15,
  PQT_CT_INT_16 = 16, PQT_CT_INT_32 = 17, PQT_CT_INT_64 = 18, PQT_CT_JSON = 19, PQT_CT_BSON = 20,
  PQT_CT_INTERVAL = 21
};

/* LogicalType union member (field id in parquet.thrift); PQT_LT_NONE when absent */
typedef enum pqt_logical_kind {
  PQT_LT_NONE = 0,
  PQT_LT_STRING = 1, PQT_LT_MAP = 2, PQT_LT_LIST = 3, PQT_LT_ENUM = 4, PQT_LT_DECIMAL = 5,
  PQT_LT_DATE = 6, PQT_LT_TIME = 7, PQT_LT_TIMESTAMP = 8, PQT_LT_INTEGER = 10,
  PQT_LT_UNKNOWN = 11, PQT_LT_JSON = 12, PQT_LT_BSON = 13, PQT_LT_UUID = 14,
  PQT_LT_FLOAT16 = 15, PQT_LT_VARIANT = 16, PQT_LT_GEOMETRY = 17, PQT_LT_GEOGRAPHY = 18,
  PQT_LT_OTHER = 99 /* a union member this reader does not know: treated as unannotated */
} pqt_logical_kind;

typedef enum pqt_time_unit { PQT_MILLIS = 0, PQT_MICROS = 1, PQT_NANOS = 2 } pqt_time_unit;

/* -------------------------------------------------------------------- metadata */

typedef struct pqt_schema_elem {
  char *name;
  int type;            /* pqt_physical, -1 for groups */
  int32_t type_length; /* FIXED_LEN_BYTE_ARRAY width, else 0 */
  int repetition;      /* pqt_repetition, -1 when absent (root) */
  int32_t num_children;/* 0 for leaves */
  int converted_type;  /* PQT_CT_*, -1 when absent */
  int32_t scale, precision, field_id; /* 0 / -1 when absent */
  pqt_logical_kind logical;
  /* logical type parameters */
  int32_t lt_scale, lt_precision;       /* DECIMAL */
  int32_t lt_bit_width; bool lt_signed; /* INTEGER */
  bool lt_utc; pqt_time_unit lt_unit;   /* TIME / TIMESTAMP */
} pqt_schema_elem;

typedef struct pqt_statistics {
  bool has_null_count;
  int64_t null_count;
} pqt_statistics;

typedef struct pqt_column_meta {
  int type; /* pqt_physical */
  int *encodings;
  int nencodings;
  char **path; /* path_in_schema */
  int path_len;
  int codec; /* pqt_codec */
  int64_t num_values;
  int64_t total_uncompressed_size;
  int64_t total_compressed_size;
  int64_t data_page_offset;
  int64_t index_page_offset;      /* -1 when absent */
  int64_t dictionary_page_offset; /* -1 when absent (0 is treated as absent too by readers) */
  pqt_statistics stats;
} pqt_column_meta;

typedef struct pqt_column_chunk {
  char *file_path; /* NULL unless the chunk lives in another file (unsupported) */
  int64_t file_offset;
  bool has_meta_data;
  pqt_column_meta meta;
  int64_t offset_index_offset; /* -1 when absent */
  int32_t offset_index_length;
  int64_t column_index_offset; /* -1 when absent */
  int32_t column_index_length;
  bool encrypted; /* crypto_metadata or encrypted_column_metadata present */
} pqt_column_chunk;

typedef struct pqt_row_group {
  pqt_column_chunk *columns;
  int ncolumns;
  int64_t total_byte_size;
  int64_t num_rows;
  int64_t file_offset;           /* -1 when absent */
  int64_t total_compressed_size; /* -1 when absent */
  int32_t ordinal;               /* -1 when absent */
} pqt_row_group;

typedef struct pqt_kv {
  char *key;
  char *value; /* NULL when absent */
} pqt_kv;

typedef struct pqt_file_meta {
  int32_t version;
  pqt_schema_elem *schema;
  int nschema;
  int64_t num_rows;
  pqt_row_group *row_groups;
  int nrow_groups;
  pqt_kv *kv;
  int nkv;
  char *created_by; /* NULL when absent */
  bool has_encryption_algorithm; /* plaintext footer of an encrypted file */
} pqt_file_meta;

/*! pqt_parse_file_meta() : decode a thrift-compact FileMetaData (the bytes before the 8-byte
 *  trailer).  `base_offset` is their file offset, used in error messages.
 *  @return : VF_ECORRUPT naming the offset on malformed input; `out` is zeroed/freed on error. */
vf_status pqt_parse_file_meta(const uint8_t *buf, size_t len, uint64_t base_offset,
                              pqt_file_meta *out, vf_error *err);
void pqt_file_meta_free(pqt_file_meta *m);

/* ----------------------------------------------------------------- page index */

typedef struct pqt_page_location {
  int64_t offset;
  int32_t compressed_page_size;
  int64_t first_row_index;
} pqt_page_location;

typedef struct pqt_offset_index {
  pqt_page_location *pages;
  int npages;
} pqt_offset_index;

typedef struct pqt_column_index {
  int npages;
  bool *null_pages;
  /* min/max values as raw bytes (PLAIN encoding of the physical type; for BYTE_ARRAY the bytes) */
  uint8_t **min_values;
  int32_t *min_lens;
  uint8_t **max_values;
  int32_t *max_lens;
  int boundary_order; /* 0 unordered, 1 ascending, 2 descending */
  int64_t *null_counts; /* NULL when absent */
} pqt_column_index;

vf_status pqt_parse_offset_index(const uint8_t *buf, size_t len, uint64_t base_offset,
                                 pqt_offset_index *out, vf_error *err);
vf_status pqt_parse_column_index(const uint8_t *buf, size_t len, uint64_t base_offset,
                                 pqt_column_index *out, vf_error *err);
void pqt_offset_index_free(pqt_offset_index *oi);
void pqt_column_index_free(pqt_column_index *ci);

/* ----------------------------------------------------------------- schema tree */

typedef enum pqt_node_kind {
  PQT_NODE_PRIMITIVE = 0, /* a leaf value */
  PQT_NODE_STRUCT,        /* group: an object of its children */
  PQT_NODE_LIST,          /* LIST-annotated group, or a bare repeated field (implicit list) */
  PQT_NODE_MAP            /* MAP / MAP_KEY_VALUE-annotated group */
} pqt_node_kind;

typedef struct pqt_node {
  int elem;         /* index into pqt_file_meta.schema */
  const char *name; /* borrowed from the schema element */
  int parent;       /* node index, -1 for the root */
  int *children;    /* node indices */
  int nchildren;
  int16_t def_level; /* max definition level at this node (counting itself if not required) */
  int16_t rep_level; /* max repetition level at this node (counting itself if repeated) */
  pqt_repetition repetition;
  pqt_node_kind kind;
  /* LIST: `repeated` is the repeated node whose each occurrence is one element; `element` is the
   * node holding the element value: the repeated node itself (2-level/legacy forms, a bare
   * repeated field) or its only child (standard 3-level form).  MAP: `repeated` is the
   * key_value group, `key`/`value` its children (value -1 when absent).  -1 otherwise. */
  int repeated, element, key, value;
  int first_leaf, nleaves; /* leaves under this node are contiguous in schema (DFS) order */
  int leaf;                /* leaf index for primitives, else -1 */
} pqt_node;

typedef struct pqt_leaf {
  int node;
  int16_t max_def, max_rep;
  pqt_physical type;
  int32_t type_length;
  char *path; /* dotted path_in_schema, e.g. "emb.list.element" */
  int top;    /* node index of the top-level field it belongs to */
} pqt_leaf;

typedef struct pqt_schema {
  pqt_node *nodes; /* nodes[0] is the root */
  int nnodes;
  pqt_leaf *leaves;
  int nleaves;
  int *top; /* node indices of the root's children */
  int ntop;
} pqt_schema;

/*! pqt_schema_build() : the node tree, levels, leaf list and LIST/MAP shapes (all historical
 *  spellings: 3-level, 2-level legacy, `array`/`<name>_tuple` element groups, bare repeated).
 *  @return : VF_ECORRUPT when num_children runs past the element list, a leaf has no type,
 *            nesting exceeds 255 levels, or the leaf count differs from the row groups'. */
vf_status pqt_schema_build(const pqt_file_meta *m, pqt_schema *out, vf_error *err);
void pqt_schema_free(pqt_schema *s);

/* ---------------------------------------------------------------------- reader */

typedef struct pqt_file pqt_file;

typedef struct pqt_open_opts {
  bool verify_crc;        /* check page CRCs when present (NULL opts: pqt_verify_crc_default()) */
  uint64_t max_footer;    /* footer size cap, default 256 MiB */
  /* Under a memory budget (vf_memory_budget() != 0 when the file is opened) a row group whose
   * column chunks hold more than budget/32 bytes is presented as several consecutive row-group
   * slices (pqt_meta() then lists the slices; rows, order and physical row numbers are
   * unchanged) and each slice is decoded page by page from bounded reads.  true: list and read
   * the file's row groups as written (inspect). */
  bool whole_row_groups;
  /* > 0: slice row groups holding more than this many bytes into slices of about this size,
   * whatever the budget (tests and fuzzers exercise slicing on small files with it) */
  uint64_t slice_bytes;
  /* > 0: a streamed (sliced) row group's pages are read and decompressed ahead of the decoder by
   * this many reader threads of the file's own (at most 4; callers pass it when cores would
   * otherwise idle, e.g. scan with more threads than row groups); the decoded results are the
   * same. */
  int read_ahead;
} pqt_open_opts;

/*! pqt_mem_cache_clear() : free the scratch blocks closed files left for the next one (bounded,
 *  at most 8 blocks and 1 GiB or a quarter of the memory budget; also run at exit). */
void pqt_mem_cache_clear(void);
/*! pqt_mem_cached() : blocks held by that cache now (their bytes in *bytes, optional). */
size_t pqt_mem_cached(uint64_t *bytes);

/*! pqt_set_verify_crc_default() : whether files opened with NULL opts check page CRCs (initially
 *  true; the CLI's --no-verify-crc turns it off for files whose writers store wrong CRCs). */
void pqt_set_verify_crc_default(bool on);
bool pqt_verify_crc_default(void);

/*! pqt_open() : read and parse the footer of `src` (ownership of src passes to the file, also
 *  on failure).  `opts` may be NULL for defaults.
 *  @return : VF_ECORRUPT for a wrong magic, a footer length out of range, bad thrift ...;
 *            VF_EUNSUPPORTED for encrypted footers ("PARE").  Messages start with the name. */
vf_status pqt_open(io_source *src, const pqt_open_opts *opts, pqt_file **out, vf_error *err);
void pqt_close(pqt_file *f);

/* Parsed footers (pqt_footer.c): the FileMetaData of an opened file kept apart from it, so a
 * later reader of the same file opens without reading or parsing its footer again (the corpus
 * plan keeps them, corpus.h "the corpus plan"). */
typedef struct pqt_footer pqt_footer;
/*! pqt_footer_of() : a copy of f's footer as checked by pqt_open (row groups as written). */
vf_status pqt_footer_of(const pqt_file *f, pqt_footer **out, vf_error *err);
void pqt_footer_free(pqt_footer *ft);
/*! pqt_footer_bytes() : heap the footer holds (for a cache's cap). */
size_t pqt_footer_bytes(const pqt_footer *ft);
/*! pqt_footer_size() : the size of the file it was read from. */
uint64_t pqt_footer_size(const pqt_footer *ft);
/*! pqt_open_footer() : pqt_open() over an already parsed footer of the same file: reads nothing
 *  from `src` to open (its bytes_read still counts what pqt_open would have read, so readers'
 *  byte counts do not depend on where the footer came from).  A source whose size differs from
 *  the footer's is opened with pqt_open().  Takes src, also on failure. */
vf_status pqt_open_footer(io_source *src, const pqt_footer *ft, const pqt_open_opts *opts,
                          pqt_file **out, vf_error *err);

const char *pqt_name(const pqt_file *f);
const pqt_file_meta *pqt_meta(const pqt_file *f);
/*! pqt_written_row_group() : the row group as written that listed row group `rg` of pqt_meta()
 *  (a slice, or the whole row group) belongs to; *row0 (optional): the listed row group's first
 *  row inside it; *last (optional): whether the listed row group ends it. */
int pqt_written_row_group(const pqt_file *f, int rg, int64_t *row0, bool *last);
/*! pqt_written_row_groups() : how many row groups the file has as written. */
int pqt_written_row_groups(const pqt_file *f);
const pqt_schema *pqt_schema_of(const pqt_file *f);
/*! pqt_source() : the file's byte source (its bytes_read / reads counters are stable when this
 *  returns: page read-ahead pauses until the next read). */
io_source *pqt_source(pqt_file *f);
/*! pqt_find_leaf() : leaf index by dotted path, -1 if none. */
int pqt_find_leaf(const pqt_file *f, const char *dotted_path);
/*! pqt_find_top() : node index of a top-level field by name, -1 if none. */
int pqt_find_top(const pqt_file *f, const char *name);

/* One leaf column of one row group, decoded.  Levels are one byte each; `def` is NULL when
 * every entry has def == max_def (no nulls anywhere on the path), `rep` is NULL when
 * max_rep == 0.  Values are packed: fixed-width values `width` bytes each (BOOLEAN as one byte
 * 0/1, INT96 12 bytes, FLBA type_length bytes); BYTE_ARRAY values concatenated with
 * offsets[nvalues+1].  Buffers are reused when the struct is passed again. */
typedef struct pqt_leaf_data {
  int leaf;
  pqt_physical type;
  int32_t width;    /* bytes per fixed-width value; 0 for BYTE_ARRAY */
  int64_t nlevels;  /* level entries (= rows for a flat column) */
  int64_t nvalues;  /* non-null values */
  int64_t nrows;    /* records (entries with rep == 0) */
  uint8_t *def;     /* nlevels entries or NULL */
  uint8_t *rep;     /* nlevels entries or NULL */
  vf_buf values;
  int64_t *offsets; /* BYTE_ARRAY: nvalues+1 */
  /* capacity bookkeeping (private) */
  int64_t def_cap, rep_cap, off_cap;
  /* decode statistics */
  uint64_t compressed_bytes, uncompressed_bytes;
  int npages;
  /* in (kept across reads, cleared by init/free): fixed-width values may stay where the reader
   * decoded them instead of being copied into `values` — for a consumer that only reads them
   * before its next read of the file (scan) */
  bool allow_view;
  /* out: with allow_view, when non-NULL the nvalues values are at view[0..nvalues*width) and
   * `values` is empty; valid until the next pqt_read_leaves() on the file or its close.  Read
   * the values through pqt_leaf_values(), which covers both. */
  const uint8_t *view;
} pqt_leaf_data;

/* the leaf's fixed-width values, wherever they are (view or values) */
static inline const uint8_t *pqt_leaf_values(const pqt_leaf_data *d) {
  return d->view ? d->view : d->values.data;
}
/* bytes at pqt_leaf_values() */
static inline uint64_t pqt_leaf_values_len(const pqt_leaf_data *d) {
  return d->view ? (uint64_t)d->nvalues * (uint64_t)d->width : (uint64_t)d->values.len;
}

void pqt_leaf_data_init(pqt_leaf_data *d);
void pqt_leaf_data_free(pqt_leaf_data *d);

/*! pqt_read_leaves() : decode `nleaves` leaf columns of row group `rg`, fetching their column
 *  chunks with coalesced ranged reads.  outs[i] receives leaves[i].  A row-group slice (see
 *  pqt_open_opts) is decoded page by page: pages are read in windows of about budget/32 bytes,
 *  each page is decoded on its own and the rows of the slice are copied out, so memory follows
 *  the slice, not the row group.  Only a single page that cannot fit in the budget (its bytes,
 *  decompressed and decoded) is refused, with VF_ENOMEM naming the file, column, row group, page
 *  offset and sizes.  Values are appended to outs[i].values through vf_buf_reserve(), so a
 *  caller may preset it to memory of its own with max == cap (len 0): the values land there,
 *  the buffer is never reallocated, freed or swapped, and more values than fit is VF_ENOMEM
 *  (corpus_read_vectors decodes into its matrix so).
 *  @return : errors name the file, row group, column path and byte offset. */
vf_status pqt_read_leaves(pqt_file *f, int rg, const int *leaves, int nleaves, pqt_leaf_data *outs,
                          vf_error *err);

/*! pqt_read_page_index() : the OffsetIndex (and ColumnIndex when present; `ci` may be NULL) of
 *  one column chunk (for a row-group slice: of its whole row group, rows counted from the row
 *  group's first).  @return : VF_ENOTFOUND when the file has no page index for it. */
vf_status pqt_read_page_index(pqt_file *f, int rg, int leaf, pqt_offset_index *oi,
                              pqt_column_index *ci, vf_error *err);

/* ---------------------------------------------------------------- assembly */

/* Dense vectors of one row group as a row-major float32 matrix.  Accepts list<float|double|
 * float16>, fixed-size lists (written as LIST), and FIXED_LEN_BYTE_ARRAY of 4*dim bytes
 * (float32 little-endian) or 2*dim bytes with the FLOAT16 annotation. */
typedef struct pqt_dense {
  float *data;   /* rows*dim floats (owned, reused across calls) */
  int64_t rows;
  int32_t dim;
  uint8_t *null_rows; /* rows entries, 1 = the vector is null (its floats are zero); NULL if none */
  size_t cap, null_cap;
  /* in: validate shape and dimensions only (rows, dim and null_rows are set; `data` may be left
   * unfilled) — for `scan`, which checksums the leaf values and need not copy them again */
  bool check_only;
} pqt_dense;

/*! pqt_dense_from_leaf() : assemble the vectors of `top` (a top-level node index) from its
 *  single decoded leaf.  `*dim` in: expected dimension or 0 to infer from the first non-null
 *  row; out: the dimension.  `first_row` is the physical row of this row group's first row
 *  (for messages).  @return : VF_ECORRUPT naming the row on a dimension mismatch, a null
 *  element inside a vector, or a shape that is not a vector. */
vf_status pqt_dense_from_leaf(const pqt_file *f, int top, const pqt_leaf_data *leaf,
                              int64_t first_row, int32_t *dim, pqt_dense *out, vf_error *err);
void pqt_dense_free(pqt_dense *d);
/*! pqt_is_dense_vector() : whether top-level node `top` has a dense vector shape that
 *  pqt_dense_from_leaf() accepts: a LIST of FLOAT/DOUBLE/FLOAT16, or an unannotated flat
 *  FIXED_LEN_BYTE_ARRAY whose width is a multiple of 4.  Shape only: dimensions are checked
 *  when decoding. */
bool pqt_is_dense_vector(const pqt_file *f, int top);

/* JSON rows (for `cat`): renders top-level fields of decoded row groups as JSON values using the
 * Dremel record-assembly rules.  Types: strings (UTF8/STRING/ENUM/JSON-annotated BYTE_ARRAY) as
 * JSON strings, other BYTE_ARRAY/FLBA as base64 strings (lossless; see
 * pqt_rows_set_binary_as_string), ints exact, floats per vf_json_f32/f64, float16 as float, DATE
 * as "YYYY-MM-DD", TIMESTAMP as ISO-8601, TIME as "HH:MM:SS[.f]" (a value outside a day is an
 * error), DECIMAL as a number, INT96 as an ISO timestamp, LIST as arrays, MAP as objects (keys
 * stringified), structs as objects (empty groups left out), VARIANT columns as the JSON of their
 * value (shredded ones reassembled), NULL as null. */
typedef struct pqt_rows pqt_rows;

/*! pqt_rows_create() : an assembler for the given top-level nodes (in output order).
 *  @return : VF_ECORRUPT for a chosen VARIANT column whose group does not have the shape
 *            VariantShredding.md defines (naming the column). */
vf_status pqt_rows_create(const pqt_file *f, const int *tops, int ntops, pqt_rows **out,
                          vf_error *err);
/*! pqt_rows_set_binary_as_string() : render BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY values without a
 *  text annotation as strings (invalid UTF-8 replaced by U+FFFD: lossy), as vforge did before
 *  base64 and as writers that store text unannotated (Impala, old Hive) want; default off:
 *  base64.  Binary inside a VARIANT is base64 either way. */
void pqt_rows_set_binary_as_string(pqt_rows *r, bool on);
/*! pqt_rows_bind() : point the assembler at freshly decoded leaves of one row group.
 *  `leaves[i]` must be the decoded data of leaf index `leaf_ids[i]`, covering every leaf under
 *  the chosen tops. */
vf_status pqt_rows_bind(pqt_rows *r, const pqt_leaf_data *leaves, const int *leaf_ids, int n,
                        int64_t nrows, vf_error *err);
/*! pqt_rows_set_first_row() : the physical row (in the file) of the bound row group's first row,
 *  so that messages name file rows (pqt_rows_bind() resets it to 0). */
void pqt_rows_set_first_row(pqt_rows *r, int64_t first_row);
/*! pqt_rows_next() : append `"name":value` pairs, comma-separated, for the next row (no braces).
 *  @return : VF_ECORRUPT if levels are inconsistent; VF_EUSAGE past the last bound row. */
vf_status pqt_rows_next(pqt_rows *r, vf_buf *out, vf_error *err);
/*! pqt_rows_skip() : advance `n` rows without rendering. */
vf_status pqt_rows_skip(pqt_rows *r, int64_t n, vf_error *err);
void pqt_rows_free(pqt_rows *r);

/* -------------------------------------------------------------------- writer */

/* Streaming writer: rows are appended column-batch-wise; a row group is flushed whenever
 * `row_group_rows` rows are buffered, so memory does not grow with the file.  PLAIN encoding,
 * v1 data pages, optional zstd/snappy.  Output goes through vf_atomic_file (temp + rename). */
typedef enum pqt_wtype {
  PQT_W_INT32,
  PQT_W_INT64,
  PQT_W_FLOAT,
  PQT_W_DOUBLE,
  PQT_W_BOOL,
  PQT_W_STRING,      /* BYTE_ARRAY annotated STRING */
  PQT_W_LIST_FLOAT,  /* LIST<float> (3-level), variable length */
  PQT_W_LIST_STRING, /* LIST<string> (3-level) */
  PQT_W_VECTOR,      /* fixed dimension float vector: LIST<float> + ARROW:schema FixedSizeList */
  PQT_W_LIST_LIST_FLOAT, /* LIST<LIST<float>> (3-level lists of 3-level lists): multivectors */
  PQT_W_SPARSE       /* struct{indices: LIST<uint32>, values: LIST<float>}: sparse vectors */
} pqt_wtype;

typedef struct pqt_wcolumn {
  const char *name;
  pqt_wtype type;
  bool nullable;
  int32_t dim; /* PQT_W_VECTOR only */
} pqt_wcolumn;

typedef struct pqt_writer_opts {
  pqt_codec codec;          /* PQT_UNCOMPRESSED (default), PQT_ZSTD or PQT_SNAPPY */
  int zstd_level;           /* default 3 */
  int64_t row_group_rows;   /* default 65536 */
  int64_t page_bytes;       /* target data page size, default 1 MiB */
} pqt_writer_opts;

typedef struct pqt_writer pqt_writer;

/*! pqt_writer_open() : create `path` atomically (visible only after pqt_writer_close succeeds). */
vf_status pqt_writer_open(const char *path, const pqt_wcolumn *cols, int ncols,
                          const pqt_writer_opts *opts, pqt_writer **out, vf_error *err);

/* Column batch for pqt_writer_write(): one per column, all with the same `nrows`.
 *  INT32/INT64/FLOAT/DOUBLE/BOOL: `values` points at nrows values (bool as uint8_t).
 *  STRING: `strs` nrows NUL-terminated strings or `bytes`+`offsets` (nrows+1).
 *  VECTOR: `values` nrows*dim floats.
 *  LIST_FLOAT: `values` floats + `offsets` (nrows+1 int64 element offsets).
 *  LIST_STRING: `strs` strings + `offsets` (nrows+1 int64 element offsets).
 *  LIST_LIST_FLOAT: `offsets` (nrows+1 int64 offsets into the inner lists), `offsets2`
 *    (inner lists + 1 int64 offsets into `values`), `values` floats.
 *  SPARSE: `offsets` (nrows+1 int64 offsets into both `indices` and `values`), `indices`
 *    uint32, `values` floats (a null row is a null struct).
 *  `valid`: NULL (all valid) or nrows bytes, 0 = null row (only for nullable columns). */
typedef struct pqt_wbatch {
  const void *values;
  const char *const *strs;
  const uint8_t *bytes;
  const int64_t *offsets;
  const uint8_t *valid;
  const int64_t *offsets2; /* LIST_LIST_FLOAT only */
  const uint32_t *indices; /* SPARSE only */
} pqt_wbatch;

vf_status pqt_writer_write(pqt_writer *w, const pqt_wbatch *cols, int64_t nrows, vf_error *err);
/*! pqt_writer_add_kv() : key-value metadata written in the footer. */
vf_status pqt_writer_add_kv(pqt_writer *w, const char *key, const char *value, vf_error *err);
/*! pqt_writer_close() : flush the last row group, write the footer, commit the file; frees w. */
vf_status pqt_writer_close(pqt_writer *w, vf_error *err);
/*! pqt_writer_abort() : discard the partial file; frees w.  NULL ok. */
void pqt_writer_abort(pqt_writer *w);

/* ------------------------------------------------------------------ names */

const char *pqt_physical_name(int t);
const char *pqt_codec_name(int c);
const char *pqt_encoding_name(int e);

/*! pqt_half_to_float() : IEEE 754 binary16 -> float (subnormals, inf and NaN kept). */
float pqt_half_to_float(uint16_t h);

#ifdef __cplusplus
}
#endif
#endif
