/*
 * Page read-ahead for streamed column chunks (issue 16 item 2; docs/DESIGN.md "Extensions").
 *
 * Why: a file written with one large row group (DuckDB, pyarrow, Spark defaults) is one unit of
 * work for the scan's row-group workers, so one thread read, decompressed and decoded all of it
 * while the others idled.  Here one reader thread per pqt_file reads the next pages of each
 * streamed leaf and decompresses them into a ring of page slots ahead of the
 * consumer, which decodes levels and values in order exactly as before (the bytes it decodes are
 * the same, so results are bit-identical; only who ran the decompressor changes).
 *
 * Contract (pqt_internal.h):
 *  - The ring never decides anything: a page it could not read, parse or decompress is handed
 *    over without its output (or not at all), and the consumer repeats the step itself, so every
 *    error keeps the message and code of the path without read-ahead.
 *  - The consumer asks for the page at one offset; a ring positioned elsewhere (a restart, a jump
 *    by the offset index, a new row group) is repositioned there.  The consumer holds at most one
 *    slot per leaf at a time and there are two, so the reader always has a slot to fill.
 *  - Reads of the file go through pqt_pf_read_at(), serialised by one mutex with the consumer's
 *    own reads (remote sources take one request at a time; bytes_read stays exact).
 *  - The thread only works when a slot is free and a page is wanted; it sleeps otherwise (no
 *    spinning), and pqt_pf_destroy() joins it.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>

#include "format/pqt_internal.h"

#define PF_HEADER_PEEK ((uint64_t)1 << 10)
#define PF_MAX_HEADER ((uint64_t)16 << 20)
/* zstd pages over PF_STREAM_MIN stored bytes are decompressed from a PF_CHUNK window of the file
 * (pqt_zstd_stream), not from a copy of the whole stored page */
#define PF_STREAM_MIN ((uint64_t)8 << 20)
#define PF_CHUNK ((size_t)4 << 20)

enum { PF_FREE = 0, PF_FILLING, PF_READY, PF_TAKEN };

typedef struct pf_leaf {
  uint64_t next, end; /* next page header to read; end of the column chunk */
  int codec;
  uint32_t gen;       /* bumped by every reposition: a slot filled for an older one is dropped */
  bool active;        /* positioned and not at its end */
  bool header_busy;   /* a reader is parsing the header at `next` (the one after is unknown) */
  pqt_pf_page slot[PQT_PF_MAX_SLOTS];
  int state[PQT_PF_MAX_SLOTS];
  uint32_t sgen[PQT_PF_MAX_SLOTS];
} pf_leaf;

struct pqt_pf {
  io_source *src;
  uint64_t max_page; /* the memory budget when the file was opened (0: none) */
  bool verify_crc;
  int nleaves;
  pf_leaf *leaves;
  pthread_mutex_t mu;
  pthread_cond_t cv; /* any slot changed state, a leaf was repositioned, or stop */
  pthread_mutex_t io_mu;
  pthread_t th[PQT_PF_MAX_THREADS];
  int nthreads, started, nslots;
  bool stop;
  uint64_t served; /* pages handed to the consumer (tests) */
};

vf_status pqt_pf_read_at(pqt_pf *pf, io_source *src, uint64_t off, void *dst, size_t n,
                         vf_error *err) {
  if (!pf) return io_read_at(src, off, dst, n, err);
  pthread_mutex_lock(&pf->io_mu);
  vf_status st = io_read_at(src, off, dst, n, err);
  pthread_mutex_unlock(&pf->io_mu);
  return st;
}

vf_status pqt_pf_read_ranges(pqt_pf *pf, io_source *src, io_range *ranges, size_t n,
                             uint64_t max_gap, vf_error *err) {
  if (!pf) return io_read_ranges(src, ranges, n, max_gap, err);
  pthread_mutex_lock(&pf->io_mu);
  vf_status st = io_read_ranges(src, ranges, n, max_gap, err);
  pthread_mutex_unlock(&pf->io_mu);
  return st;
}

typedef struct chunk_arg {
  pqt_pf *pf;
  uint64_t base;
} chunk_arg;

static vf_status chunk_read(void *arg, uint64_t pos, uint8_t *dst, size_t n, vf_error *err) {
  chunk_arg *a = arg;
  return pqt_pf_read_at(a->pf, a->pf->src, a->base + pos, dst, n, err);
}

/* Checks pr_decompress_into_page() makes before decompressing ulen bytes from inlen: the page
 * passes them here too, or the consumer is left to refuse it. */
static bool pf_sizes_ok(const pqt_pf *pf, int codec, int64_t ulen, size_t inlen) {
  if (ulen < 0 || ulen > INT32_MAX) return false;
  uint64_t ratio = pqt_codec_max_ratio(codec);
  if (ratio && (uint64_t)ulen > ratio * (uint64_t)inlen + 4096) return false;
  return !(pf->max_page && (uint64_t)ulen > pf->max_page);
}

/* Fill a slot without holding pf->mu, in two steps: pf_header() reads and checks the header of
 * the page at `at` (chunk end `end`), so the next page's offset is known and another reader can
 * take it; pf_body() reads the page and decompresses what the consumer would.  false: the page
 * could not be read or parsed (the consumer then reads it itself and reports what is wrong). */
static bool pf_header(pqt_pf *pf, pqt_pf_page *pg, uint64_t at, uint64_t end) {
  vf_error e;
  vf_error_clear(&e);
  vf_buf *raw = &pg->raw; /* pg->at was set when the slot was claimed (under pf->mu) */
  pg->have_out = false;
  pg->in = NULL;
  pg->inlen = 0;
  vf_buf_reset(raw);
  vf_buf_reset(&pg->out);
  /* the header: a peek window grown while it is too short to parse */
  size_t hlen = 0;
  for (uint64_t peek = PF_HEADER_PEEK;; peek *= 8) {
    uint64_t have = end - at < peek ? end - at : peek;
    if (have > raw->len) {
      if (vf_buf_reserve(raw, (size_t)(have - raw->len), &e) != VF_OK) return false;
      if (pqt_pf_read_at(pf, pf->src, at + raw->len, raw->data + raw->len,
                         (size_t)(have - raw->len), &e) != VF_OK)
        return false;
      raw->len = (size_t)have;
    }
    vf_cursor c;
    vf_cur_init(&c, raw->data, raw->len, at);
    memset(&pg->h, 0, sizeof pg->h);
    if (pqt_parse_page_header(&c, &pg->h, &e) == VF_OK) {
      hlen = (size_t)(c.p - raw->data);
      break;
    }
    if (have == end - at || peek * 8 > PF_MAX_HEADER) return false;
    vf_error_clear(&e);
  }
  const pqt_page_header *h = &pg->h;
  if (h->compressed_size < 0 || h->uncompressed_size < 0) return false;
  uint64_t psize = (uint64_t)h->compressed_size;
  if (psize > end - at - hlen) return false;
  if (pf->max_page && hlen + psize > pf->max_page) return false;
  pg->hlen = hlen;
  pg->end = at + hlen + psize;
  pg->crc_checked = pg->streamed = false;
  return true;
}

static bool pf_body(pqt_pf *pf, pqt_pf_page *pg, int codec, vf_buf *chunk) {
  vf_error e;
  vf_error_clear(&e);
  vf_buf *raw = &pg->raw;
  const pqt_page_header *h = &pg->h;
  uint64_t at = pg->at, hlen = pg->hlen, psize = (uint64_t)h->compressed_size;
  bool want_crc = pf->verify_crc && h->has_crc &&
                  (h->type == PQT_DATA_PAGE || h->type == PQT_DATA_PAGE_V2 ||
                   h->type == PQT_DICTIONARY_PAGE);
  if (codec == PQT_ZSTD && (h->type == PQT_DATA_PAGE || h->type == PQT_DICTIONARY_PAGE) &&
      psize > PF_STREAM_MIN && pf_sizes_ok(pf, codec, h->uncompressed_size, (size_t)psize)) {
    /* a large zstd page: decompressed from a window of the file straight into the slot */
    size_t ulen = (size_t)h->uncompressed_size;
    uint32_t crc = 0;
    chunk_arg ca = {pf, at + hlen};
    if (vf_buf_reserve(chunk, PF_CHUNK, &e) != VF_OK ||
        pqt_buf_grow(&pg->out, ulen ? ulen : 1, &e) != VF_OK ||
        pqt_zstd_stream(chunk_read, &ca, (size_t)psize, NULL, 0, chunk->data, PF_CHUNK,
                        pg->out.data, ulen, want_crc ? &crc : NULL, &e) != VF_OK ||
        (want_crc && crc != h->crc))
      return false; /* the consumer reads it itself and says what is wrong */
    raw->len = (size_t)hlen;
    pg->out.len = ulen;
    pg->in = raw->data + hlen; /* a position only: raw holds the header */
    pg->inlen = (size_t)psize;
    pg->ulen = (int64_t)ulen;
    pg->have_out = pg->streamed = true;
    pg->crc_checked = want_crc;
    return true;
  }
  uint64_t total = hlen + psize;
  if (total < raw->len) raw->len = (size_t)total;
  if (total > raw->len) {
    if (vf_buf_reserve(raw, (size_t)(total - raw->len), &e) != VF_OK) return false;
    if (pqt_pf_read_at(pf, pf->src, at + raw->len, raw->data + raw->len,
                       (size_t)(total - raw->len), &e) != VF_OK)
      return false;
  }
  raw->len = (size_t)total;
  /* what the consumer decompresses (pr_decode_data_page / the dictionary branch) */
  const uint8_t *p = raw->data + hlen;
  const uint8_t *in = NULL;
  size_t inlen = 0;
  int64_t ulen = 0;
  if (codec != PQT_UNCOMPRESSED) {
    if (h->type == PQT_DATA_PAGE || h->type == PQT_DICTIONARY_PAGE) {
      in = p;
      inlen = (size_t)psize;
      ulen = h->uncompressed_size;
    } else if (h->type == PQT_DATA_PAGE_V2 && h->num_values > 0 &&
               h->rep_levels_byte_length >= 0 && h->def_levels_byte_length >= 0 &&
               (uint64_t)h->rep_levels_byte_length + (uint64_t)h->def_levels_byte_length <=
                   psize) {
      uint64_t lv = (uint64_t)h->rep_levels_byte_length + (uint64_t)h->def_levels_byte_length;
      ulen = (int64_t)h->uncompressed_size - (int64_t)lv;
      if (h->is_compressed && ulen != 0) {
        in = p + lv;
        inlen = (size_t)(psize - lv);
      }
    }
  }
  if (want_crc) {
    if (pqt_crc32(p, (size_t)psize) != h->crc) return true; /* the consumer reports it */
    pg->crc_checked = true;
  }
  if (in && pf_sizes_ok(pf, codec, ulen, inlen)) {
    if (pqt_buf_grow(&pg->out, (size_t)(ulen ? ulen : 1), &e) == VF_OK &&
        pqt_decompress(codec, in, inlen, pg->out.data, (size_t)ulen, &e) == VF_OK) {
      pg->out.len = (size_t)ulen;
      pg->in = in;
      pg->inlen = inlen;
      pg->ulen = ulen;
      pg->have_out = true;
    }
  }
  return true;
}

static void *pf_main(void *arg) {
  pqt_pf *pf = arg;
  vf_buf chunk; /* this reader's window for streamed pages */
  VF_BUF_INIT(&chunk, PQT_MAX_PAGE_BUF);
  pthread_mutex_lock(&pf->mu);
  while (!pf->stop) {
    /* the leaf with the fewest pages ready that has a free slot and a page to read */
    int best = -1, bs = -1, bready = PQT_PF_MAX_SLOTS + 1;
    for (int l = 0; l < pf->nleaves; l++) {
      pf_leaf *L = &pf->leaves[l];
      if (!L->active || L->header_busy || L->next >= L->end) continue;
      int ready = 0, free_s = -1;
      for (int s = 0; s < pf->nslots; s++) {
        if (L->state[s] == PF_READY || L->state[s] == PF_FILLING) ready++;
        if (L->state[s] == PF_FREE && free_s < 0) free_s = s;
      }
      if (free_s < 0) continue;
      if (ready < bready) best = l, bs = free_s, bready = ready;
    }
    if (best < 0) {
      pthread_cond_wait(&pf->cv, &pf->mu);
      continue;
    }
    pf_leaf *L = &pf->leaves[best];
    pqt_pf_page *pg = &L->slot[bs];
    uint64_t at = L->next, end = L->end;
    int codec = L->codec;
    uint32_t gen = L->gen;
    L->state[bs] = PF_FILLING;
    L->sgen[bs] = gen;
    pg->at = at;
    L->header_busy = true;
    pthread_mutex_unlock(&pf->mu);
    bool ok = pf_header(pf, pg, at, end);
    pthread_mutex_lock(&pf->mu);
    L->header_busy = false;
    if (L->gen == gen) {
      if (ok) L->next = pg->end; /* another reader may take the next page now */
      else L->active = false;    /* the consumer reads this page itself and says what is wrong */
    }
    pthread_cond_broadcast(&pf->cv);
    if (ok && L->gen == gen) {
      pthread_mutex_unlock(&pf->mu);
      ok = pf_body(pf, pg, codec, &chunk);
      pthread_mutex_lock(&pf->mu);
    }
    if (L->gen != gen) {
      L->state[bs] = PF_FREE; /* repositioned meanwhile */
    } else {
      L->state[bs] = PF_READY;
      pg->ok = ok;
    }
    pthread_cond_broadcast(&pf->cv);
  }
  pthread_mutex_unlock(&pf->mu);
  pqt_buf_put(&chunk);
  return NULL;
}

vf_status pqt_pf_create(io_source *src, int nleaves, int nthreads, bool verify_crc,
                        pqt_pf **out, vf_error *err) {
  *out = NULL;
  pqt_pf *pf = vf_calloc(1, sizeof *pf);
  if (!pf) return vf_error_set(err, VF_ENOMEM, "out of memory starting page read-ahead");
  pf->leaves = vf_calloc((size_t)(nleaves > 0 ? nleaves : 1), sizeof *pf->leaves);
  if (!pf->leaves) {
    free(pf);
    return vf_error_set(err, VF_ENOMEM, "out of memory starting page read-ahead");
  }
  pf->src = src;
  pf->nleaves = nleaves;
  pf->verify_crc = verify_crc;
  pf->max_page = vf_memory_budget();
  if (nthreads < 1) nthreads = 1;
  if (nthreads > PQT_PF_MAX_THREADS) nthreads = PQT_PF_MAX_THREADS;
  pf->nthreads = nthreads;
  pf->nslots = nthreads + 1; /* one held by the consumer, one being filled per reader */
  for (int l = 0; l < nleaves; l++)
    for (int s = 0; s < PQT_PF_MAX_SLOTS; s++) {
      VF_BUF_INIT(&pf->leaves[l].slot[s].raw, PQT_MAX_PAGE_BUF);
      VF_BUF_INIT(&pf->leaves[l].slot[s].out, PQT_MAX_PAGE_BUF);
      pf->leaves[l].slot[s].leaf = l;
      pf->leaves[l].slot[s].idx = s;
    }
  pthread_mutex_init(&pf->mu, NULL);
  pthread_cond_init(&pf->cv, NULL);
  pthread_mutex_init(&pf->io_mu, NULL);
  for (int t = 0; t < nthreads; t++) {
    if (pthread_create(&pf->th[t], NULL, pf_main, pf) != 0) {
      pqt_pf_destroy(pf);
      return vf_error_set(err, VF_EIO, "cannot start the page read-ahead threads");
    }
    pf->started++;
  }
  *out = pf;
  return VF_OK;
}

void pqt_pf_destroy(pqt_pf *pf) {
  if (!pf) return;
  if (pf->started) {
    pthread_mutex_lock(&pf->mu);
    pf->stop = true;
    pthread_cond_broadcast(&pf->cv);
    pthread_mutex_unlock(&pf->mu);
    for (int t = 0; t < pf->started; t++) pthread_join(pf->th[t], NULL);
  }
  for (int l = 0; l < pf->nleaves; l++)
    for (int s = 0; s < PQT_PF_MAX_SLOTS; s++) {
      pqt_buf_put(&pf->leaves[l].slot[s].raw);
      pqt_buf_put(&pf->leaves[l].slot[s].out);
    }
  pthread_mutex_destroy(&pf->mu);
  pthread_cond_destroy(&pf->cv);
  pthread_mutex_destroy(&pf->io_mu);
  free(pf->leaves);
  free(pf);
}

pqt_pf_page *pqt_pf_get(pqt_pf *pf, int leaf, uint64_t at, uint64_t end, int codec) {
  if (!pf || leaf < 0 || leaf >= pf->nleaves || at >= end) return NULL;
  pf_leaf *L = &pf->leaves[leaf];
  pqt_pf_page *got = NULL;
  pthread_mutex_lock(&pf->mu);
  for (bool repositioned = false;;) {
    int s = 0, filling = -1;
    for (; s < pf->nslots; s++) {
      if (L->sgen[s] != L->gen || L->slot[s].at != at) continue;
      if (L->state[s] == PF_READY) break;
      if (L->state[s] == PF_FILLING) filling = s;
    }
    if (s < pf->nslots) {
      if (L->slot[s].ok) {
        L->state[s] = PF_TAKEN;
        got = &L->slot[s];
        pf->served++;
      } else {
        L->state[s] = PF_FREE;
      }
      break;
    }
    if (filling >= 0) {
      pthread_cond_wait(&pf->cv, &pf->mu);
      continue;
    }
    bool coming = L->active && L->next == at && L->end == end && L->codec == codec;
    if (!coming) {
      if (repositioned) break; /* (cannot happen: a reposition is followed until it delivers) */
      /* not the page the ring is on: reposition it there, dropping what it read ahead */
      L->gen++;
      for (int k = 0; k < pf->nslots; k++)
        if (L->state[k] == PF_READY) L->state[k] = PF_FREE;
      L->next = at;
      L->end = end;
      L->codec = codec;
      L->active = true;
      repositioned = true;
      pthread_cond_broadcast(&pf->cv);
    }
    pthread_cond_wait(&pf->cv, &pf->mu);
  }
  pthread_mutex_unlock(&pf->mu);
  return got;
}

void pqt_pf_release(pqt_pf *pf, pqt_pf_page *pg) {
  if (!pf || !pg) return;
  pthread_mutex_lock(&pf->mu);
  pf->leaves[pg->leaf].state[pg->idx] = PF_FREE;
  pthread_cond_broadcast(&pf->cv);
  pthread_mutex_unlock(&pf->mu);
}

uint64_t pqt_pf_served(pqt_pf *pf) {
  if (!pf) return 0;
  pthread_mutex_lock(&pf->mu);
  uint64_t n = pf->served;
  pthread_mutex_unlock(&pf->mu);
  return n;
}

void pqt_pf_quiesce(pqt_pf *pf) {
  if (!pf) return;
  pthread_mutex_lock(&pf->mu);
  for (int l = 0; l < pf->nleaves; l++) {
    pf_leaf *L = &pf->leaves[l];
    L->active = false; /* no new page until the consumer asks (pqt_pf_get repositions) */
    for (;;) {
      bool busy = L->header_busy;
      for (int k = 0; k < pf->nslots; k++) busy |= L->state[k] == PF_FILLING;
      if (!busy) break;
      pthread_cond_wait(&pf->cv, &pf->mu);
    }
  }
  pthread_mutex_unlock(&pf->mu);
}
