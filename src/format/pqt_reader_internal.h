/*
 * pqt_reader_internal.h — the parquet reader's handle, its per-leaf streaming position and the
 * chunk decoding state, shared by pqt_reader.c (open, helpers, page index), pqt_page.c (page
 * decoding, whole chunks) and pqt_slice.c (row-group slices, streamed slices).  The reader was
 * one file of 2,100 lines (issue 15 item 6); this header is what its parts share.  Private to
 * those three files.
 */
#ifndef VFORGE_PQT_READER_INTERNAL_H
#define VFORGE_PQT_READER_INTERNAL_H

#include "format/pqt_internal.h"

/* thrift page sizes are i32; a page may legitimately inflate to ~1 GiB (large_string_map.brotli),
 * so the only cap beyond the type is the memory budget (checked in pr_buf_reserve). */
#define PQT_MAX_PAGE_BYTES ((int64_t)INT32_MAX)

/* Streaming position of one leaf inside one (physical) row group, kept between slices. */
typedef struct leaf_stream {
  int phys;          /* physical row group, -1 when unpositioned */
  uint64_t start, end; /* column chunk byte range */
  uint64_t next;     /* file offset of the next page header */
  int64_t levels;    /* level entries before `next`; -1 after a jump in a repeated column */
  int64_t rows;      /* records started before `next` */
  bool seen_data;
  vf_buf dict;       /* the chunk's dictionary (swapped into pqt_file while decoding) */
  int64_t *dict_off;
  int64_t dict_off_cap;
  int64_t dict_n;
  int oi_rg;         /* physical row group of `oi`; -1 not loaded, -2 the chunk has none */
  pqt_offset_index oi; /* page locations: skip to a slice's first page without reading the rest */
  /* the last decoded page, kept while it straddles slices (so a large page is decoded once) */
  pqt_leaf_data pg;  /* its levels, and its values unless they are a view */
  const uint8_t *pg_view; /* PLAIN fixed-width values: a view into the page bytes, else NULL */
  uint64_t pg_at;    /* file offset of its header; UINT64_MAX: no page decoded */
  uint64_t pg_end, pg_psize;
  int32_t pg_usize;
  bool pg_def;       /* pg.def holds real levels */
  /* repeated columns: where the previous slice stopped in the kept page (entry pg_k starts
   * record pg_krow + 1), so each slice walks only its own levels — not the page again from its
   * first entry, which made a slice loop over a 100 MB page quadratic */
  size_t pg_k;
  int64_t pg_krow;
  /* repeated columns: D when the kept page's repetition levels are regular (records of D
   * entries each after pg_phase entries that continue the previous page's record: zeros exactly
   * at pg_phase + kD), so record boundaries are arithmetic; else 0 */
  size_t pg_dim, pg_phase;
  vf_buf held;       /* the buffer pg_view points into, taken out of pqt_file while kept */
  int held_slot;     /* 0 none; 1 held was f->page, 2 held was f->win */
  /* read-ahead (f->pf): the page being looked at, and the one kept as ls->pg (its bytes) */
  pqt_pf_page *pf_take, *pf_cur;
} leaf_stream;

struct pqt_file {
  io_source *src;
  pqt_open_opts opts;
  pqt_file_meta meta;
  pqt_schema schema;
  uint64_t data_end; /* first byte of the footer (FileMetaData): column data lies before it */
  /* scratch reused across pages and chunks */
  vf_buf *chunks; /* one per requested leaf of the current pqt_read_leaves call */
  int nchunks_cap;
  vf_buf page; /* decompressed page */
  vf_buf dict; /* dictionary values: fixed width packed, or concatenated bytes */
  int64_t *dict_off;
  int64_t dict_off_cap;
  int64_t dict_n; /* -1: no dictionary in this chunk */
  uint32_t *idx;  /* dictionary indices of one page */
  size_t idx_cap;
  uint8_t *lvl; /* definition levels of one page (before materialising) */
  size_t lvl_cap;
  vf_buf tmp; /* byte arrays being converted to FLBA */
  int64_t *tmp_off;
  size_t tmp_off_cap;
  /* row-group slices (NULL/0 when no row group is sliced): meta.row_groups holds the slices,
   * phys_rgs the row groups as written */
  pqt_row_group *phys_rgs;
  int nphys;
  int *v_phys;      /* slice -> physical row group */
  int64_t *v_row0;  /* slice -> first row inside its physical row group */
  uint64_t window;  /* read window for streamed pages */
  leaf_stream *streams; /* per leaf, allocated on the first streamed read */
  vf_buf win;       /* file bytes [win_off, win_off + win.len) */
  uint64_t win_off;
  pqt_pf *pf;       /* page read-ahead of streamed chunks (opts.read_ahead), else NULL */
  vf_buf zwin;      /* the read window of a large ZSTD page decompressed as a stream */
  uint64_t nstreamed; /* pages decompressed that way (tests) */
};

/* State of one column chunk being decoded. */
typedef struct chunk_ctx {
  pqt_file *f;
  int rg, leaf;
  const pqt_leaf *lf;
  const pqt_column_meta *cm;
  pqt_leaf_data *d;
  int32_t width;
  bool def_mat;      /* d->def holds real levels */
  bool seen_data;    /* a data page has been decoded */
  uint64_t page_off; /* file offset of the current page header */
  bool cont;         /* streaming: levels of this chunk were decoded before this page */
  bool view_ok;      /* streaming: PLAIN fixed-width values may stay in the page (x->view) */
  const uint8_t *view;
  /* a page decompressed before pr_decode_data_page ran (by the read-ahead thread, or streamed from
   * a bounded window): decompressing pre_in[0..pre_inlen) to pre_ulen bytes yields pre_out */
  const uint8_t *pre_in, *pre_out;
  size_t pre_inlen;
  int64_t pre_ulen;
  bool pre_streamed; /* pre_in is a position only (never read) */
  /* streaming, max_rep 1: repetition levels that are regular (pr_rle_regular_w1) are not
   * written out: rep_dim > 0 then says the page's records (rep_zeros of them) start at
   * rep_phase + k * rep_dim, and d->rep holds nothing of this page */
  bool rep_runs_ok;
  size_t rep_dim, rep_phase;
  int64_t rep_zeros;
  vf_error *err;
} chunk_ctx;

/* pqt_reader.c: helpers */
/* pqt_open() reads the last PQT_TAIL_READ bytes first (the footer of most files in one read);
 * pqt_footer.c counts them for a reader opened over a kept footer */
#define PQT_TAIL_READ (64u * 1024u)
/* A new pqt_file over `src` with `opts` (NULL: the defaults) and its scratch buffers, nothing
 * read yet: the common start of pqt_open() and pqt_open_footer(); NULL when out of memory. */
pqt_file *pr_file_new(io_source *src, const pqt_open_opts *opts);
const char *pr_leaf_path(const pqt_file *f, int leaf);
int pr_bit_width_of(int v);
size_t pr_count_byte(const uint8_t *p, size_t n, uint8_t v);
size_t pr_nth_zero(const uint8_t *p, size_t from, size_t n, int64_t m);
size_t pr_regular_dim(const uint8_t *rep, size_t n, int64_t zeros, size_t *phase);
size_t pr_nth_zero_regular(size_t d, size_t phase, size_t from, size_t n, int64_t m);
size_t pr_zeros_before_regular(size_t d, size_t phase, size_t x);
bool pr_rle_regular_w1(const uint8_t *p, size_t len, size_t n, int64_t *zeros, size_t *dim,
                       size_t *phase);
bool pr_rle_one_run(const uint8_t *p, size_t len, int bw, int max, size_t n, uint8_t *v);
int32_t pr_physical_width(pqt_physical t, int32_t type_length);
vf_status pr_grow_array(void **p, int64_t *cap, int64_t need, size_t size, vf_error *err);
vf_status pr_grow_sz(void **p, size_t *cap, size_t need, size_t size, vf_error *err);
vf_status pr_buf_reserve(vf_buf *b, uint64_t extra, vf_error *err);

/* pqt_slice.c: row-group slices at open */
vf_status pr_slice_row_groups(pqt_file *f, vf_error *err);

/* pqt_page.c: page decoding */
vf_status pr_page_err(chunk_ctx *x, vf_status code, const char *fmt, ...) VF_PRINTF(3, 4);
vf_status pr_page_prefix(chunk_ctx *x, vf_status st);
vf_status pr_decode_dict_page(chunk_ctx *x, const pqt_page_header *h, const uint8_t *p,
                              size_t len);
vf_status pr_decompress_into_page(chunk_ctx *x, const uint8_t *p, size_t len, int64_t ulen,
                                  const uint8_t **outp, size_t *outlen);
vf_status pr_decode_data_page(chunk_ctx *x, const pqt_page_header *h, const uint8_t *p,
                              size_t len);
bool pr_chunk_done(const pqt_leaf *lf, const pqt_column_meta *cm, const pqt_leaf_data *d,
                   int64_t want);
vf_status pr_check_chunk(pqt_file *f, int rg, const pqt_row_group *g, int leaf, vf_error *err);
void pr_chunk_range(const pqt_file *f, const pqt_column_meta *cm, uint64_t *start,
                    uint64_t *len);
vf_status pr_leaf_reset(pqt_file *f, int leaf, pqt_leaf_data *d, vf_error *err);
vf_status pr_read_whole(pqt_file *f, int rg, const pqt_row_group *g, const int *leaves,
                        int nleaves, pqt_leaf_data *outs, vf_error *err);

#endif
