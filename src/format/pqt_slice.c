/*
 * Parquet row-group slices: row groups larger than the memory budget are sliced at open, and a
 * slice is decoded page by page through a bounded window (stream_leaf; pqt_reader.c's header
 * comment says how and why).  pqt_read_leaves() is the entry point for both whole row groups
 * and slices.
 *
 * Why a file of its own: pqt_reader.c was 2,100 lines (issue 15 item 6); slicing and streaming
 * share their state (leaf_stream, pqt_reader_internal.h) and nothing else of the open path.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "format/pqt_reader_internal.h"

/* slicing: a slice holds about budget/PQT_SLICE_DIV decoded bytes (brute-force keeps two
 * slices of 4-5x their decoded size, scan three), at least PQT_MIN_SLICE; at most
 * PQT_MAX_SLICES slices per file (larger slices beyond that: the budget checks still hold) */
#define PQT_SLICE_DIV 32u
/* without a budget (or a larger one) row groups over this many bytes are streamed in slices of
 * about this size: a working set of a few pages and one slice, whatever the writer's row group */
#define PQT_DEFAULT_SLICE ((uint64_t)8 << 20)
#define PQT_MIN_SLICE ((uint64_t)64 << 10)
#define PQT_MAX_SLICES 65536u
/* and at most this many column-chunk entries over all slices (a footer claiming terabytes in
 * many columns must not make the slice table itself large) */
#define PQT_MAX_SLICE_CHUNKS ((uint64_t)1 << 17)
#define PQT_SLICE_ALIGN 64
/* a page header is read in a window of this size first, grown 8-fold up to PQT_MAX_HEADER */
#define PQT_HEADER_PEEK ((uint64_t)1 << 10)
#define PQT_MAX_HEADER ((uint64_t)16 << 20)
/* ZSTD pages of more stored bytes are decompressed as a stream through a window of
 * PQT_STREAM_CHUNK bytes (stream_zstd_page) */
#define PQT_STREAM_MIN ((uint64_t)8 << 20)
#define PQT_STREAM_CHUNK ((size_t)4 << 20)

/* ---------------------------------------------------------------- slicing */

static int64_t scale_i64(int64_t v, int64_t part, int64_t whole) {
  if (v <= 0 || whole <= 0) return v;
  double r = (double)v * (double)part / (double)whole;
  return r >= (double)INT64_MAX ? INT64_MAX : (int64_t)r + 1;
}

/* decoded bytes one row group is expected to hold (all columns) */
static uint64_t rg_bytes(const pqt_row_group *g) {
  uint64_t u = 0;
  for (int c = 0; c < g->ncolumns; c++) {
    const pqt_column_meta *cm = &g->columns[c].meta;
    int64_t b = cm->total_uncompressed_size > cm->total_compressed_size
                    ? cm->total_uncompressed_size
                    : cm->total_compressed_size;
    if (b > 0) u = u > UINT64_MAX - (uint64_t)b ? UINT64_MAX : u + (uint64_t)b;
  }
  return u;
}

static uint64_t slices_of(const pqt_row_group *g, uint64_t target) {
  uint64_t u = rg_bytes(g);
  if (g->num_rows <= 1 || u <= target) return 1;
  uint64_t n = u / target + 1;
  return n > (uint64_t)g->num_rows ? (uint64_t)g->num_rows : n;
}

/* Present row groups over budget/PQT_SLICE_DIV as slices (see the file comment). */
vf_status pr_slice_row_groups(pqt_file *f, vf_error *err) {
  uint64_t budget = vf_memory_budget();
  if (f->opts.whole_row_groups || f->meta.nrow_groups <= 0) return VF_OK;
  uint64_t target = f->opts.slice_bytes;
  if (!target) {
    target = PQT_DEFAULT_SLICE;
    if (budget && budget / PQT_SLICE_DIV < target) target = budget / PQT_SLICE_DIV;
    if (target < PQT_MIN_SLICE) target = PQT_MIN_SLICE;
  }
  uint64_t ncols = (uint64_t)(f->schema.nleaves > 0 ? f->schema.nleaves : 1);
  uint64_t nv;
  bool any;
  for (;;) {
    nv = 0;
    any = false;
    for (int g = 0; g < f->meta.nrow_groups; g++) {
      uint64_t n = slices_of(&f->meta.row_groups[g], target);
      nv = nv > UINT64_MAX - n ? UINT64_MAX : nv + n; /* saturating: row counts are claims */
      any |= n > 1;
    }
    if ((nv <= PQT_MAX_SLICES && nv * ncols <= PQT_MAX_SLICE_CHUNKS) || target > UINT64_MAX / 2)
      break;
    target *= 2;
  }
  if (!any) return VF_OK;
  pqt_row_group *v = vf_calloc((size_t)nv, sizeof *v);
  int *vp = vf_calloc((size_t)nv, sizeof *vp);
  int64_t *vr = vf_calloc((size_t)nv, sizeof *vr);
  if (!v || !vp || !vr) {
    free(v);
    free(vp);
    free(vr);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory slicing row groups", pqt_name(f));
  }
  size_t k = 0;
  vf_status st = VF_OK;
  for (int g = 0; g < f->meta.nrow_groups; g++) {
    const pqt_row_group *pg = &f->meta.row_groups[g];
    uint64_t n = slices_of(pg, target);
    int64_t per = (int64_t)(((uint64_t)pg->num_rows + n - 1) / n);
    /* slices start at multiples of PQT_SLICE_ALIGN rows: kernels that score rows in blocks of
     * 4/8/16 from the start of each call then do the same arithmetic as on the whole group */
    if (n > 1) per = (per + PQT_SLICE_ALIGN - 1) / PQT_SLICE_ALIGN * PQT_SLICE_ALIGN;
    for (int64_t r0 = 0; r0 < pg->num_rows || (r0 == 0 && pg->num_rows == 0); r0 += per) {
      if (k >= nv) /* cannot happen: slices_of() counted them */
        VF_FAIL(vf_error_set(err, VF_EINTERNAL, "%s: slicing row group %d", pqt_name(f), g));
      int64_t rows = pg->num_rows - r0 < per ? pg->num_rows - r0 : per;
      pqt_row_group *s = &v[k];
      *s = *pg;
      s->num_rows = rows;
      s->total_byte_size = scale_i64(pg->total_byte_size, rows, pg->num_rows);
      if (pg->total_compressed_size >= 0)
        s->total_compressed_size = scale_i64(pg->total_compressed_size, rows, pg->num_rows);
      s->ordinal = -1;
      s->columns = vf_calloc((size_t)(pg->ncolumns > 0 ? pg->ncolumns : 1), sizeof *s->columns);
      if (!s->columns)
        VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory slicing row groups",
                             pqt_name(f)));
      for (int c = 0; c < pg->ncolumns; c++) { /* shallow: strings stay owned by the file meta */
        pqt_column_chunk *cc = &s->columns[c];
        *cc = pg->columns[c];
        if (n > 1) {
          cc->meta.total_uncompressed_size =
              scale_i64(cc->meta.total_uncompressed_size, rows, pg->num_rows);
          cc->meta.total_compressed_size =
              scale_i64(cc->meta.total_compressed_size, rows, pg->num_rows);
          cc->meta.num_values = scale_i64(cc->meta.num_values, rows, pg->num_rows);
          cc->meta.stats.has_null_count = false; /* the page index stays the row group's */
        }
      }
      vp[k] = g;
      vr[k] = r0;
      k++;
      if (pg->num_rows == 0) break;
    }
  }
  vf_log(VF_LOG_DEBUG, "%s: %d row groups read as %zu slices of about %" PRIu64 " bytes",
         pqt_name(f), f->meta.nrow_groups, k, target);
  f->phys_rgs = f->meta.row_groups;
  f->nphys = f->meta.nrow_groups;
  f->meta.row_groups = v;
  f->meta.nrow_groups = (int)k;
  f->v_phys = vp;
  f->v_row0 = vr;
  f->window = target;
  return VF_OK;
out:
  for (size_t i = 0; i < k; i++) free(v[i].columns);
  free(v);
  free(vp);
  free(vr);
  return st;
}

/* ------------------------------------------------------- streamed slices */

static void swap_dict(pqt_file *f, leaf_stream *ls) {
  vf_buf b = f->dict;
  f->dict = ls->dict;
  ls->dict = b;
  int64_t *o = f->dict_off;
  f->dict_off = ls->dict_off;
  ls->dict_off = o;
  int64_t c = f->dict_off_cap;
  f->dict_off_cap = ls->dict_off_cap;
  ls->dict_off_cap = c;
  int64_t n = f->dict_n;
  f->dict_n = ls->dict_n;
  ls->dict_n = n;
}

/* Make f->win hold file bytes [off, off + need), reading up to `want` bytes (within `end`). */
static vf_status win_fill(chunk_ctx *x, uint64_t off, uint64_t need, uint64_t want, uint64_t end,
                          const uint8_t **p) {
  pqt_file *f = x->f;
  if (off >= f->win_off && off - f->win_off <= f->win.len &&
      f->win.len - (off - f->win_off) >= need) {
    *p = f->win.data + (off - f->win_off);
    return VF_OK;
  }
  uint64_t len = want > need ? want : need;
  if (len > end - off) len = end - off;
  if (len < need) return pr_page_err(x, VF_ECORRUPT, "the column chunk ends at offset %" PRIu64,
                                     end);
  /* bytes of [off, ...) the window already holds (a page larger than the read-ahead that
   * follows its header) move to the front and only the rest is read */
  uint64_t keep = 0;
  if (f->win.len && off >= f->win_off && off - f->win_off < f->win.len) {
    keep = f->win.len - (off - f->win_off);
    if (keep > len) keep = len;
    memmove(f->win.data, f->win.data + (off - f->win_off), (size_t)keep);
  }
  f->win.len = (size_t)keep;
  f->win_off = off;
  vf_status st = pr_buf_reserve(&f->win, len - keep ? len - keep : 1, x->err);
  if (st != VF_OK) goto out;
  if (len > keep)
    VF_TRY(pqt_pf_read_at(f->pf, f->src, off + keep, f->win.data + keep, (size_t)(len - keep),
                          x->err));
  f->win.len = (size_t)len;
  *p = f->win.data;
  return VF_OK;
out:
  vf_buf_reset(&f->win);
  f->win_off = 0;
  return pr_page_prefix(x, st);
}

/* Values d left in a decoded page (d->view) copied into d->values: before the page goes, or
 * when a second page adds to them. */
static vf_status view_copy_out(chunk_ctx *x, pqt_leaf_data *d) {
  if (!d->view) return VF_OK;
  uint64_t bytes = (uint64_t)d->nvalues * (uint64_t)d->width;
  vf_status st = pr_buf_reserve(&d->values, bytes, x->err);
  if (st != VF_OK) return pr_page_prefix(x, st);
  vf_buf_put(&d->values, d->view, (size_t)bytes);
  d->view = NULL;
  return VF_OK;
}

/* Append level entries [a, b) of the leaf's decoded page ls->pg (def levels valid when
 * ls->pg_def; fixed-width values at ls->pg_view when set) to d. */
static vf_status append_entries(chunk_ctx *x, const leaf_stream *ls, pqt_leaf_data *d,
                                bool *d_def, size_t a, size_t b) {
  const pqt_leaf_data *pg = &ls->pg;
  bool pg_def = ls->pg_def;
  const pqt_leaf *lf = x->lf;
  uint8_t maxd = (uint8_t)lf->max_def;
  size_t n = b - a;
  if (n == 0) return VF_OK;
  size_t va = pg_def ? pr_count_byte(pg->def, a, maxd) : a;
  size_t nn = pg_def ? pr_count_byte(pg->def + a, n, maxd) : n;
  int64_t need = d->nlevels + (int64_t)n;
  vf_status st;
  if (lf->max_rep > 0) {
    st = pr_grow_array((void **)&d->rep, &d->rep_cap, need, 1, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    /* regular levels: the records starting in [a, b) by arithmetic, and a single list level
     * (every non-zero level is 1) written from the pattern, without reading the page's levels */
    size_t pd = ls->pg_dim, ph = ls->pg_phase;
    if (pd && lf->max_rep == 1) {
      uint8_t *dst = d->rep + d->nlevels;
      memset(dst, 1, n);
      for (size_t k = ph + pr_zeros_before_regular(pd, ph, a) * pd; k < b; k += pd)
        dst[k - a] = 0;
    } else {
      memcpy(d->rep + d->nlevels, pg->rep + a, n);
    }
    d->nrows += pd ? (int64_t)(pr_zeros_before_regular(pd, ph, b) -
                               pr_zeros_before_regular(pd, ph, a))
                   : (int64_t)pr_count_byte(pg->rep + a, n, 0);
  } else {
    d->nrows += (int64_t)n;
  }
  if (*d_def || nn != n) {
    st = pr_grow_array((void **)&d->def, &d->def_cap, need, 1, x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    if (!*d_def) memset(d->def, maxd, (size_t)d->nlevels);
    *d_def = true;
    if (pg_def) memcpy(d->def + d->nlevels, pg->def + a, n);
    else memset(d->def + d->nlevels, maxd, n);
  }
  if (lf->type == PQT_BYTE_ARRAY) {
    int64_t lo = pg->offsets[va], hi = pg->offsets[va + nn];
    st = pr_buf_reserve(&d->values, (uint64_t)(hi - lo), x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    st = pr_grow_array((void **)&d->offsets, &d->off_cap, d->nvalues + (int64_t)nn + 1,
                       sizeof(int64_t), x->err);
    if (st != VF_OK) return pr_page_prefix(x, st);
    int64_t base = (int64_t)d->values.len;
    if (hi > lo) vf_buf_put(&d->values, pg->values.data + lo, (size_t)(hi - lo));
    for (size_t k = 1; k <= nn; k++)
      d->offsets[d->nvalues + (int64_t)k] = base + (pg->offsets[va + k] - lo);
  } else {
    size_t w = (size_t)x->width;
    const uint8_t *src = (ls->pg_view ? ls->pg_view : pg->values.data) + va * w;
    if (d->allow_view && nn > 0 && d->nvalues == 0 && !d->view && d->values.len == 0) {
      d->view = src; /* left in the kept page: take_page copies it out if the page goes */
    } else {
      st = view_copy_out(x, d);
      if (st != VF_OK) return st;
      st = pr_buf_reserve(&d->values, (uint64_t)nn * w, x->err);
      if (st != VF_OK) return pr_page_prefix(x, st);
      vf_buf_put(&d->values, src, nn * w);
    }
  }
  d->nlevels = need;
  d->nvalues += (int64_t)nn;
  return VF_OK;
}

/* A visible row group index standing for physical row group `rg` (its first slice): the page
 * index reader takes visible indices and maps them back. */
static int phys_as_visible(const pqt_file *f, int rg) {
  for (int v = 0; v < f->meta.nrow_groups; v++)
    if (f->v_phys[v] == rg) return v;
  return 0;
}

/* Keep the leaf's decoded page for the next slice: a view's bytes (in f->page or f->win) move
 * into ls->held (buffers swapped, nothing copied), so other leaves and reads reuse the file's
 * scratch meanwhile. */
static void page_hold(pqt_file *f, leaf_stream *ls) {
  if (!ls->pg_view || ls->held_slot || ls->pf_cur) return; /* a read-ahead slot stays held */
  vf_buf *slot = NULL;
  if (f->page.data && ls->pg_view >= f->page.data && ls->pg_view < f->page.data + f->page.cap) {
    slot = &f->page;
    ls->held_slot = 1;
  } else if (f->win.data && ls->pg_view >= f->win.data && ls->pg_view < f->win.data + f->win.cap) {
    slot = &f->win;
    ls->held_slot = 2;
    f->win_off = 0; /* the window's bytes leave with the page */
  } else {
    return; /* cannot happen: views point into the page or the window */
  }
  vf_buf t = *slot;
  *slot = ls->held;
  ls->held = t;
  if (ls->held_slot == 2) f->win.len = 0;
}

/* Forget the leaf's decoded page.  A decompressed page kept goes back to f->page, so the next
 * page decompresses into the same memory (one page-sized buffer, not two); a kept window stays
 * with the leaf as the buffer the next kept window is swapped with. */
static void page_drop(pqt_file *f, leaf_stream *ls) {
  ls->pg_at = UINT64_MAX;
  ls->pg_view = NULL;
  if (ls->pf_cur) { /* the read-ahead slot the page lived in */
    pqt_pf_release(f->pf, ls->pf_cur);
    ls->pf_cur = NULL;
  }
  if (ls->held_slot == 1) {
    vf_buf t = f->page;
    f->page = ls->held;
    ls->held = t;
  }
  ls->held_slot = 0;
}

typedef struct zread {
  pqt_file *f;
  uint64_t base;
} zread;

/* bytes [pos, pos + n) of a streamed page: what the window holds from its header read, then the
 * file */
static vf_status zread_fn(void *arg, uint64_t pos, uint8_t *dst, size_t n, vf_error *err) {
  zread *z = arg;
  pqt_file *f = z->f;
  uint64_t off = z->base + pos;
  if (f->win.len && off >= f->win_off && off - f->win_off < f->win.len) {
    size_t k = (size_t)(f->win.len - (off - f->win_off));
    if (k > n) k = n;
    memcpy(dst, f->win.data + (off - f->win_off), k);
    dst += k;
    n -= k;
    off += k;
  }
  return n ? pqt_pf_read_at(f->pf, f->src, off, dst, n, err) : VF_OK;
}

/* A large ZSTD page (header of hlen bytes at `at`, already in the window) decompressed into
 * f->page from a PQT_STREAM_CHUNK window of the file instead of a copy of the whole stored page
 * (DuckDB writes ~90 MiB pages).  On success *p is the page's position in the window (never read:
 * pr_decompress_into_page() takes x->pre_out) and *crc_checked says the CRC was verified.  Anything
 * that goes wrong leaves *p NULL: the caller reads the page whole, which reports it as always. */
static vf_status stream_zstd_page(chunk_ctx *x, uint64_t at, const pqt_page_header *h, size_t hlen,
                                  const uint8_t **p, bool *crc_checked) {
  pqt_file *f = x->f;
  *p = NULL;
  int64_t ulen = h->uncompressed_size;
  uint64_t psize = (uint64_t)h->compressed_size;
  uint64_t ratio = pqt_codec_max_ratio(PQT_ZSTD), budget = vf_memory_budget();
  if (ulen < 0 || ulen > PQT_MAX_PAGE_BYTES || (uint64_t)ulen > ratio * psize + 4096 ||
      (budget && (uint64_t)ulen > budget))
    return VF_OK; /* refused with the usual message by the whole-page path */
  if (!(at >= f->win_off && at - f->win_off + hlen <= f->win.len)) return VF_OK;
  vf_error e;
  vf_error_clear(&e);
  bool want_crc = h->has_crc && f->opts.verify_crc;
  uint32_t crc = 0;
  vf_buf_reset(&f->page);
  vf_status st = pr_buf_reserve(&f->page, (uint64_t)(ulen ? ulen : 1), x->err);
  if (st != VF_OK) return pr_page_prefix(x, st);
  if (pqt_buf_grow(&f->zwin, PQT_STREAM_CHUNK, &e) != VF_OK) return VF_OK;
  zread z = {f, at + hlen};
  /* the page's first bytes already in the window (read with its header) feed the decompressor
   * in place; the rest is read through zwin */
  uint64_t in_win = f->win.len - (at - f->win_off) - hlen;
  size_t head_len = (size_t)(in_win < psize ? in_win : psize);
  if (pqt_zstd_stream(zread_fn, &z, (size_t)psize, f->win.data + (at - f->win_off) + hlen,
                      head_len, f->zwin.data, PQT_STREAM_CHUNK, f->page.data, (size_t)ulen,
                      want_crc ? &crc : NULL, &e) != VF_OK ||
      (want_crc && crc != h->crc))
    return VF_OK;
  *p = f->win.data + (at - f->win_off); /* + hlen by the caller */
  *crc_checked = want_crc;
  x->pre_in = *p + hlen;
  x->pre_inlen = (size_t)psize;
  x->pre_ulen = ulen;
  x->pre_out = f->page.data;
  x->pre_streamed = true;
  f->nstreamed++;
  return VF_OK;
}

/* Position the leaf at its chunk's first page (a new row group, or a slice before where the last
 * one stopped): the page walk starts over, nothing kept. */
static void stream_rewind(pqt_file *f, leaf_stream *ls, const pqt_row_group *g,
                          const pqt_column_meta *cm, int rg) {
  ls->phys = rg;
  uint64_t len = 0;
  ls->start = ls->end = 0;
  if (g->num_rows > 0) pr_chunk_range(f, cm, &ls->start, &len);
  ls->end = ls->start + len;
  ls->next = ls->start;
  ls->levels = ls->rows = 0;
  ls->seen_data = false;
  ls->dict_n = -1;
  page_drop(f, ls);
}

/* Whether the slice's records are in (flat columns: one entry each); at the row group's end a
 * repeated column stops where num_values says, or at the next page that starts a record, or at
 * the chunk's end — the pages decide, as in pr_chunk_done(); a shortfall is reported by
 * stream_end(). */
static bool slice_complete(const chunk_ctx *x, const leaf_stream *ls, const pqt_row_group *g,
                           int64_t r1) {
  if (x->lf->max_rep == 0 && ls->levels >= r1) return true;
  return x->lf->max_rep > 0 && r1 >= g->num_rows && ls->rows >= r1 && ls->levels >= 0 &&
         ls->levels >= x->cm->num_values;
}

/* Give back a read-ahead page looked at and passed over (its slot serves the next page). */
static void pf_pass(pqt_file *f, leaf_stream *ls) {
  if (ls->pf_take) {
    pqt_pf_release(f->pf, ls->pf_take);
    ls->pf_take = NULL;
  }
}

/* Bytes to read ahead: about what the slice's remaining records take (the window at most), so a
 * slice reads its share of the chunk in a few large reads, not one per page. */
static uint64_t read_want(const leaf_stream *ls, const pqt_row_group *g, int64_t r1,
                          uint64_t window) {
  uint64_t want = window;
  if (g->num_rows > 0 && r1 > ls->rows) {
    double est = (double)(ls->end - ls->start) * (double)(r1 - ls->rows) / (double)g->num_rows;
    est = est * 1.125 + 4 * (double)PQT_HEADER_PEEK;
    if (est < (double)want) want = (uint64_t)est;
  }
  return want;
}

/* The header of the page at ls->next: the read-ahead thread's copy of the page (not while
 * skipping towards the slice, `before`: pages passed over are only peeked at), else parsed from a
 * peek window grown while it is too short, which also reports what is wrong. */
static vf_status page_header(chunk_ctx *x, leaf_stream *ls, bool before, uint64_t want,
                             pqt_page_header *h, size_t *hlen, pqt_pf_page **ppp) {
  pqt_file *f = x->f;
  pqt_pf_page *pp =
      f->pf && !before ? pqt_pf_get(f->pf, x->leaf, ls->next, ls->end, x->cm->codec) : NULL;
  ls->pf_take = pp;
  *ppp = pp;
  if (pp) {
    if (pp->have_out) {
      x->pre_in = pp->in;
      x->pre_out = pp->out.data;
      x->pre_inlen = pp->inlen;
      x->pre_ulen = pp->ulen;
      x->pre_streamed = pp->streamed;
    }
    *h = pp->h;
    *hlen = pp->hlen;
    return VF_OK;
  }
  for (uint64_t peek = PQT_HEADER_PEEK;; peek *= 8) {
    uint64_t have = ls->end - ls->next < peek ? ls->end - ls->next : peek;
    const uint8_t *hp;
    vf_status st = win_fill(x, ls->next, have, before ? have : want, ls->end, &hp);
    if (st != VF_OK) return st;
    vf_cursor c;
    vf_cur_init(&c, hp, (size_t)have, ls->next);
    memset(h, 0, sizeof *h);
    st = pqt_parse_page_header(&c, h, x->err);
    if (st != VF_OK) {
      if (have == ls->end - ls->next || peek * 8 > PQT_MAX_HEADER) return pr_page_prefix(x, st);
      continue;
    }
    *hlen = (size_t)(c.p - hp);
    return VF_OK;
  }
}

/* A page's sizes are not negative and it lies inside its column chunk (before anything of it is
 * read or skipped on their word). */
static vf_status page_in_chunk(chunk_ctx *x, const leaf_stream *ls, const pqt_page_header *h,
                               size_t hlen) {
  if (h->compressed_size < 0 || h->uncompressed_size < 0)
    return pr_page_err(x, VF_ECORRUPT, "negative page size");
  uint64_t psize = (uint64_t)h->compressed_size;
  if (psize > ls->end - ls->next - hlen)
    return pr_page_err(x, VF_ECORRUPT,
                       "page of %" PRIu64 " bytes runs past the end of the column chunk (which "
                       "ends at offset %" PRIu64 ")",
                       psize, ls->end);
  return VF_OK;
}

/* The chunk's offset index, read once per row group (ls->oi_rg = rg; -2 when the chunk has none
 * or it is unusable: the headers are walked instead). */
static void offset_index_load(pqt_file *f, leaf_stream *ls, const pqt_row_group *g, int rg,
                              int leaf) {
  if (ls->oi_rg == rg) return;
  pqt_offset_index_free(&ls->oi);
  ls->oi_rg = -2;
  const pqt_column_chunk *cc = &g->columns[leaf];
  if (cc->offset_index_offset >= 0 && cc->offset_index_length > 0) {
    vf_error e2;
    vf_error_clear(&e2);
    if (pqt_read_page_index(f, phys_as_visible(f, rg), leaf, &ls->oi, NULL, &e2) == VF_OK)
      ls->oi_rg = rg;
    else
      pqt_offset_index_free(&ls->oi); /* unusable index: walk the headers instead */
  }
}

/* Still before the slice at a data page (header h, ending at page_end): jump with the offset index
 * to the last page starting at or before record r0, or skip this page from its header alone when
 * it ends before record r0 (flat columns: entries are records; v2 pages: whole records, num_rows
 * given).  True when the position moved, so the caller looks at the page now at ls->next. */
static bool skip_towards(chunk_ctx *x, leaf_stream *ls, const pqt_row_group *g,
                         const pqt_page_header *h, uint64_t page_end, int64_t r0) {
  const pqt_leaf *lf = x->lf;
  offset_index_load(x->f, ls, g, x->rg, x->leaf);
  if (ls->oi_rg == x->rg) {
    int best = -1;
    for (int k = 0; k < ls->oi.npages; k++) {
      const pqt_page_location *pl = &ls->oi.pages[k];
      if (pl->first_row_index > r0) break;
      if ((uint64_t)pl->offset > ls->next && (uint64_t)pl->offset < ls->end &&
          pl->first_row_index >= ls->rows)
        best = k;
    }
    if (best >= 0) {
      ls->next = (uint64_t)ls->oi.pages[best].offset;
      ls->rows = ls->oi.pages[best].first_row_index;
      ls->levels = lf->max_rep == 0 ? ls->rows : -1;
      return true;
    }
  }
  int64_t prow = -1;
  if (lf->max_rep == 0) prow = h->num_values;
  else if (h->type == PQT_DATA_PAGE_V2) prow = h->num_rows;
  if (prow >= 0 && h->num_values >= 0 && ls->rows + prow <= r0) {
    ls->next = page_end;
    ls->rows += prow;
    if (ls->levels >= 0) ls->levels += h->num_values;
    ls->seen_data = true;
    return true;
  }
  return false;
}

/* The one refusal left: a single page that cannot fit the memory budget (bytes, decompressed,
 * decoded; PLAIN fixed-width values stay in the page's bytes: no decoded copy). */
static vf_status page_fits(chunk_ctx *x, const pqt_page_header *h, size_t hlen, bool data,
                           uint64_t budget) {
  const pqt_leaf *lf = x->lf;
  uint64_t psize = (uint64_t)h->compressed_size;
  bool viewed = h->encoding == PQT_ENC_PLAIN && lf->type != PQT_BYTE_ARRAY &&
                lf->type != PQT_BOOLEAN && data;
  uint64_t pneed = hlen + psize + ((x->cm->codec != PQT_UNCOMPRESSED ? 1u : 0u) +
                                   (viewed ? 0u : 1u)) * (uint64_t)h->uncompressed_size;
  if (budget && pneed > budget)
    return pr_page_err(x, VF_ENOMEM,
                       "one page of %" PRIu64 " bytes (%d uncompressed) needs about %" PRIu64
                       " bytes to read and decode, more than the memory budget of %" PRIu64
                       " bytes (raise --memory-budget)",
                       psize, h->uncompressed_size, pneed, budget);
  return VF_OK;
}

/* The page's bytes after its header (*p): the read-ahead copy, a large ZSTD page decompressed as a
 * stream, or the read window; their CRC checked here unless that was done already. */
static vf_status page_bytes(chunk_ctx *x, const leaf_stream *ls, const pqt_pf_page *pp,
                            const pqt_page_header *h, size_t hlen, uint64_t want,
                            const uint8_t **pout) {
  pqt_file *f = x->f;
  uint64_t psize = (uint64_t)h->compressed_size;
  const uint8_t *p = pp ? pp->raw.data : NULL;
  bool crc_checked = pp && pp->crc_checked;
  vf_status st;
  if (!pp && x->cm->codec == PQT_ZSTD &&
      (h->type == PQT_DATA_PAGE || h->type == PQT_DICTIONARY_PAGE) && psize > PQT_STREAM_MIN) {
    st = stream_zstd_page(x, ls->next, h, hlen, &p, &crc_checked);
    if (st != VF_OK) return st;
  }
  if (!p) {
    st = win_fill(x, ls->next, hlen + psize, want, ls->end, &p);
    if (st != VF_OK) return st;
  }
  p += hlen;
  if (h->has_crc && f->opts.verify_crc && !crc_checked &&
      (h->type == PQT_DATA_PAGE || h->type == PQT_DATA_PAGE_V2 ||
       h->type == PQT_DICTIONARY_PAGE)) {
    uint32_t crc = pqt_crc32(p, (size_t)psize);
    if (crc != h->crc)
      return pr_page_err(x, VF_ECORRUPT,
                         "page CRC mismatch at offset %" PRIu64 " (stored %08x, computed %08x)",
                         x->page_off, h->crc, crc);
  }
  *pout = p;
  return VF_OK;
}

/* A dictionary page decoded into the leaf's dictionary (swapped in as f->dict for the walk); its
 * statistics counted by the slice that starts the row group. */
static vf_status stream_dict_page(chunk_ctx *x, leaf_stream *ls, pqt_leaf_data *d,
                                  const pqt_page_header *h, const uint8_t *p, int64_t r0) {
  uint64_t psize = (uint64_t)h->compressed_size;
  const uint8_t *u;
  size_t ulen;
  x->seen_data = ls->seen_data;
  x->d = d;
  vf_status st = pr_decompress_into_page(x, p, (size_t)psize, h->uncompressed_size, &u, &ulen);
  if (st != VF_OK) return st;
  st = pr_decode_dict_page(x, h, u, ulen);
  if (st != VF_OK) return st;
  if (r0 == 0) {
    d->npages++;
    d->compressed_bytes += psize;
    d->uncompressed_bytes += (uint64_t)h->uncompressed_size;
  }
  return VF_OK;
}

/* One data page alone into the leaf's page ls->pg (PLAIN fixed-width values stay in the page
 * bytes: no copy), kept there while the slices that need it take their entries. */
static vf_status stream_data_page(chunk_ctx *x, leaf_stream *ls, const pqt_page_header *h,
                                  const uint8_t *p, uint64_t page_end) {
  pqt_file *f = x->f;
  const pqt_leaf *lf = x->lf;
  uint64_t psize = (uint64_t)h->compressed_size;
  page_drop(f, ls); /* the previous page's buffer serves again as scratch */
  ls->pf_cur = ls->pf_take; /* a read-ahead page's bytes live until page_drop */
  ls->pf_take = NULL;
  pqt_leaf_data *pg = &ls->pg;
  pg->nlevels = pg->nvalues = pg->nrows = 0;
  vf_buf_reset(&pg->values);
  if (lf->type == PQT_BYTE_ARRAY) {
    vf_status st = pr_grow_array((void **)&pg->offsets, &pg->off_cap, 1, sizeof(int64_t), x->err);
    if (st != VF_OK) return st;
    pg->offsets[0] = 0;
  }
  x->d = pg;
  x->def_mat = false;
  x->cont = ls->levels > 0;
  x->seen_data = true;
  x->view_ok = lf->type != PQT_BYTE_ARRAY && lf->type != PQT_BOOLEAN;
  x->view = NULL;
  x->rep_runs_ok = lf->max_rep == 1; /* regular levels stay unwritten: pg.rep is not read then */
  ls->seen_data = true;
  vf_status st = pr_decode_data_page(x, h, p, (size_t)psize);
  if (st != VF_OK) return st;
  ls->pg_at = ls->next;
  ls->pg_end = page_end;
  ls->pg_psize = psize;
  ls->pg_usize = h->uncompressed_size;
  ls->pg_def = x->def_mat;
  ls->pg_view = x->view;
  ls->pg_k = 0;
  ls->pg_krow = ls->rows - 1;
  ls->pg_phase = x->rep_phase;
  ls->pg_dim = x->rep_dim                ? x->rep_dim
               : lf->max_rep > 0 ? pr_regular_dim(ls->pg.rep, (size_t)ls->pg.nlevels,
                                                  ls->pg.nrows, &ls->pg_phase)
                                 : 0;
  return VF_OK;
}

/* Bring the page at ls->next into ls->pg (*kept), or move past it: pages before the slice are
 * skipped, dictionary pages decoded on the way, index and unknown pages passed over. */
static vf_status next_page(chunk_ctx *x, leaf_stream *ls, const pqt_row_group *g,
                           pqt_leaf_data *d, int64_t r0, int64_t r1, uint64_t window,
                           uint64_t budget, bool *kept) {
  *kept = false;
  bool before = r0 > ls->rows; /* still before the slice: pages may be skipped */
  uint64_t want = read_want(ls, g, r1, window);
  pqt_page_header h;
  size_t hlen = 0;
  pqt_pf_page *pp = NULL;
  vf_status st = page_header(x, ls, before, want, &h, &hlen, &pp);
  if (st != VF_OK) return st;
  st = page_in_chunk(x, ls, &h, hlen);
  if (st != VF_OK) return st;
  uint64_t page_end = ls->next + hlen + (uint64_t)h.compressed_size;
  bool data = h.type == PQT_DATA_PAGE || h.type == PQT_DATA_PAGE_V2;
  if (data && before && skip_towards(x, ls, g, &h, page_end, r0)) return VF_OK;
  st = page_fits(x, &h, hlen, data, budget);
  if (st != VF_OK) return st;
  const uint8_t *p = NULL;
  st = page_bytes(x, ls, pp, &h, hlen, want, &p);
  if (st != VF_OK) return st;
  if (h.type == PQT_DICTIONARY_PAGE) {
    st = stream_dict_page(x, ls, d, &h, p, r0);
    if (st != VF_OK) return st;
    ls->next = page_end;
    return VF_OK;
  }
  if (!data) {
    ls->next = page_end; /* INDEX_PAGE and unknown page types carry nothing we need */
    return VF_OK;
  }
  st = stream_data_page(x, ls, &h, p, page_end);
  if (st != VF_OK) return st;
  *kept = true;
  return VF_OK;
}

/* Entries [*a, *b) of the kept page belong to records in [r0, r1): flat columns by count,
 * repeated ones at the zeros of the repetition levels (arithmetic when they are regular), resumed
 * where the previous slice stopped in the page. */
static void page_entries(const chunk_ctx *x, const leaf_stream *ls, int64_t r0, int64_t r1,
                         size_t *ap, size_t *bp) {
  const pqt_leaf_data *pg = &ls->pg;
  size_t n = (size_t)pg->nlevels;
  size_t a = n, b = n;
  if (x->lf->max_rep == 0) {
    int64_t lv = ls->levels;
    a = r0 <= lv ? 0 : (r0 - lv >= (int64_t)n ? n : (size_t)(r0 - lv));
    b = r1 <= lv ? 0 : (r1 - lv >= (int64_t)n ? n : (size_t)(r1 - lv));
  } else {
    int64_t row = ls->rows - 1; /* record of the entry before this page */
    size_t k0 = 0;
    if (ls->pg_k <= n && ls->pg_krow < r0 && ls->pg_krow >= row) { /* resume where we stopped */
      k0 = ls->pg_k;
      row = ls->pg_krow;
    }
    /* a: the first entry whose record is >= r0, b: >= r1 (records start at zeros) */
    if (ls->pg_dim) {
      a = row >= r0 ? k0 : pr_nth_zero_regular(ls->pg_dim, ls->pg_phase, k0, n, r0 - row);
      b = row >= r1 ? k0 : pr_nth_zero_regular(ls->pg_dim, ls->pg_phase, k0, n, r1 - row);
    } else {
      a = row >= r0 ? k0 : pr_nth_zero(pg->rep, k0, n, r0 - row);
      b = row >= r1 ? k0 : pr_nth_zero(pg->rep, k0, n, r1 - row);
    }
    if (a > b) a = b;
  }
  *ap = a;
  *bp = b;
}

/* Take the slice's entries of the kept page into d.  *stop when record r1 starts inside the page
 * (it stays kept, and the next slice goes on from there) or a flat slice is full; else the walk
 * moves past the page, its statistics counted once, by the slice that finishes it. */
static vf_status take_page(chunk_ctx *x, leaf_stream *ls, pqt_leaf_data *d, bool *d_def,
                           int64_t r0, int64_t r1, bool *stop) {
  pqt_file *f = x->f;
  const pqt_leaf *lf = x->lf;
  size_t n = (size_t)ls->pg.nlevels, a, b;
  page_entries(x, ls, r0, r1, &a, &b);
  *stop = true;
  if (a < b) {
    vf_status st = append_entries(x, ls, d, d_def, a, b);
    if (st != VF_OK) return st;
  }
  if (b < n) { /* record r1 starts here: the next slice goes on from the page kept */
    if (lf->max_rep > 0) {
      ls->pg_k = b;
      ls->pg_krow = r1 - 1;
    }
    page_hold(f, ls);
    return VF_OK;
  }
  vf_status st = view_copy_out(x, d); /* the page goes: values left in it are copied out */
  if (st != VF_OK) return st;
  ls->next = ls->pg_end;
  if (ls->levels >= 0) ls->levels += (int64_t)n;
  ls->rows += lf->max_rep > 0 ? ls->pg.nrows : (int64_t)n; /* its zeros, counted when decoded */
  if (a < b) { /* counted once: by the slice that finishes the page */
    d->npages++;
    d->compressed_bytes += ls->pg_psize;
    d->uncompressed_bytes += (uint64_t)ls->pg_usize;
  }
  page_drop(f, ls);
  *stop = lf->max_rep == 0 && ls->levels >= r1;
  return VF_OK;
}

/* After the page walk (ending in st): the dictionary and any read-ahead page go back; on failure
 * the leaf starts over on its next read; a slice must hold exactly its records. */
static vf_status stream_end(chunk_ctx *x, leaf_stream *ls, pqt_leaf_data *d, bool d_def,
                            int64_t r0, int64_t r1, vf_status st) {
  pqt_file *f = x->f;
  swap_dict(f, ls);
  pf_pass(f, ls);
  if (st != VF_OK) {
    ls->phys = -1; /* start over on the next read */
    page_drop(f, ls);
    return st;
  }
  if (!d_def && d->def) {
    free(d->def);
    d->def = NULL;
    d->def_cap = 0;
  }
  int64_t got = x->lf->max_rep == 0 ? d->nlevels : d->nrows;
  if (got != r1 - r0)
    return vf_error_set(x->err, VF_ECORRUPT,
                        "%s: row group %d, column %s: rows %" PRId64 "..%" PRId64
                        ": decoded %" PRId64 " rows, expected %" PRId64,
                        pqt_name(f), x->rg, pr_leaf_path(f, x->leaf), r0, r1, got, r1 - r0);
  return VF_OK;
}

/* Decode records [r0, r1) of leaf `leaf` in physical row group `rg` into d, page by page: the
 * leaf's position (ls) carries over from the previous slice, so each page is read and decoded
 * once however many slices it feeds. */
static vf_status stream_leaf(pqt_file *f, int rg, int leaf, int64_t r0, int64_t r1,
                             pqt_leaf_data *d, vf_error *err) {
  const pqt_row_group *g = &f->phys_rgs[rg];
  const pqt_leaf *lf = &f->schema.leaves[leaf];
  const pqt_column_meta *cm = &g->columns[leaf].meta;
  leaf_stream *ls = &f->streams[leaf];
  chunk_ctx x = {.f = f, .rg = rg, .leaf = leaf, .lf = lf, .cm = cm, .err = err};
  x.width = pr_physical_width(lf->type, lf->type_length);
  if (ls->phys != rg || r0 < ls->rows) stream_rewind(f, ls, g, cm, rg);
  uint64_t budget = vf_memory_budget();
  uint64_t window = f->window > PQT_MIN_SLICE ? f->window : PQT_MIN_SLICE;
  bool d_def = false;
  vf_status st = VF_OK;
  swap_dict(f, ls);
  for (;;) {
    if (slice_complete(&x, ls, g, r1)) break;
    pf_pass(f, ls);
    x.pre_in = x.pre_out = NULL;
    x.pre_streamed = false;
    x.page_off = ls->next;
    if (ls->next >= ls->end) break;
    if (ls->pg_at != ls->next) { /* else the page kept by the previous slice */
      bool kept;
      st = next_page(&x, ls, g, d, r0, r1, window, budget, &kept);
      if (st != VF_OK) break;
      if (!kept) continue;
    }
    bool stop;
    st = take_page(&x, ls, d, &d_def, r0, r1, &stop);
    if (st != VF_OK || stop) break;
  }
  return stream_end(&x, ls, d, d_def, r0, r1, st);
}

/* Rows [r0, r0 + nrows) of physical row group `rg`, streamed. */
static vf_status read_slice(pqt_file *f, int rg, int64_t r0, int64_t nrows, const int *leaves,
                            int nleaves, pqt_leaf_data *outs, vf_error *err) {
  const pqt_row_group *g = &f->phys_rgs[rg];
  if (!f->streams) {
    f->streams = vf_calloc((size_t)(f->schema.nleaves > 0 ? f->schema.nleaves : 1),
                           sizeof *f->streams);
    if (!f->streams) return vf_error_set(err, VF_ENOMEM, "%s: out of memory", pqt_name(f));
    for (int i = 0; i < f->schema.nleaves; i++) {
      f->streams[i].phys = -1;
      f->streams[i].oi_rg = -1;
      f->streams[i].dict_n = -1;
      f->streams[i].pg_at = UINT64_MAX;
      VF_BUF_INIT(&f->streams[i].dict, PQT_MAX_PAGE_BUF);
      VF_BUF_INIT(&f->streams[i].held, PQT_MAX_PAGE_BUF);
      pqt_leaf_data_init(&f->streams[i].pg);
    }
  }
  if (f->opts.read_ahead > 0 && !f->pf) {
    vf_status st = pqt_pf_create(f->src, f->schema.nleaves, f->opts.read_ahead,
                                 f->opts.verify_crc, &f->pf, err);
    if (st != VF_OK) return st;
  }
  for (int i = 0; i < nleaves; i++) {
    int leaf = leaves[i];
    vf_status st = pr_check_chunk(f, rg, g, leaf, err);
    if (st != VF_OK) return st;
    st = pr_leaf_reset(f, leaf, &outs[i], err);
    if (st != VF_OK) return st;
    st = stream_leaf(f, rg, leaf, r0, r0 + nrows, &outs[i], err);
    if (st != VF_OK) return st;
  }
  return VF_OK;
}

/*! pqt_read_leaves() : see format.h.  Whole row groups: the chunk ranges are fetched with
 *  io_read_ranges(); slices: read_slice(). */
vf_status pqt_read_leaves(pqt_file *f, int rg, const int *leaves, int nleaves, pqt_leaf_data *outs,
                          vf_error *err) {
  if (rg < 0 || rg >= f->meta.nrow_groups)
    return vf_error_set(err, VF_EUSAGE, "%s: row group %d does not exist (the file has %d)",
                        pqt_name(f), rg, f->meta.nrow_groups);
  if (nleaves <= 0) return VF_OK;
  if (!f->phys_rgs) return pr_read_whole(f, rg, &f->meta.row_groups[rg], leaves, nleaves, outs,
                                         err);
  int p = f->v_phys[rg];
  const pqt_row_group *pg = &f->phys_rgs[p];
  if (f->meta.row_groups[rg].num_rows == pg->num_rows)
    return pr_read_whole(f, p, pg, leaves, nleaves, outs, err);
  return read_slice(f, p, f->v_row0[rg], f->meta.row_groups[rg].num_rows, leaves, nleaves, outs,
                    err);
}
