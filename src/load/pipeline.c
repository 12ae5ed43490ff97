/*
 * pipeline.c — prefetch -> slice -> concurrent upserts, with durable checkpoints
 * (issue 3 "The runner", "Checkpoints").
 *
 * Threads:
 *   reader     reads whole row groups of this worker's files (corpus_records_read) into chunks,
 *              slices each chunk into batch_size views (corpus_batch_slice) and queues them on a
 *              bounded vf_queue (vforge/pool.h; a full queue blocks the reader).  It also waits
 *              while `prefetch_size` rows are buffered, so memory is bounded by prefetch_size
 *              rows plus one row group, however large the corpus.
 *   workers    `concurrency` threads, each with its own store handle (handles are
 *              single-threaded).  A worker upserts a batch (retrying VF_ENET/VF_EIO with
 *              exponential backoff and full jitter, at most loader.retries times), then releases
 *              its share of the chunk.
 *   caller     renders progress and writes checkpoints.
 * These are long-lived role threads, not pool tasks: each blocks on the others (the reader on
 * room, the workers on batches and on the store) for the whole run, and a pool task must never
 * wait for another task (vforge/pool.h); the store's own I/O is network-bound besides.
 * The queue closes when the reader is done (workers drain it, then flush and stop) or on the
 * first error / a cancellation (workers stop at once); vf_queue_wake() asks idle workers to
 * flush when a file ends.
 *
 * Durability: every queued batch gets a sequence number and a mark (file, the physical row to
 * resume from after it, points, skipped rows).  A mark becomes durable only when the worker
 * that upserted it has called store_flush() afterwards.  Workers flush every
 * checkpoint_batches / concurrency batches, every checkpoint_seconds, when a file ends, and when
 * they stop.  The watermark is the longest prefix of durable marks; the state file written from
 * it therefore never claims a row that a kill -9 could lose.  Re-sent rows after a resume are
 * harmless because ids are deterministic and stores replace by id.
 *
 * Skipped (bad) rows are counted from the gaps in the physical row numbers of each slice, so a
 * count belongs to exactly one mark and survives resume without double counting.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "vforge/pool.h"

typedef struct ld_chunk {
  corpus_batch batch;
  corpus_vec_batch *vstore; /* vector descriptors of the slices (nvectors per slice) */
  size_t vcap;
  int refs;
  size_t rows;
  struct ld_chunk *next_free;
} ld_chunk;

typedef struct ld_item {
  uint64_t seq;
  corpus_batch view;
  ld_chunk *chunk;
} ld_item;

enum { MARK_QUEUED = 0, MARK_UPSERTED = 1, MARK_DURABLE = 2 };

typedef struct ld_mark {
  uint32_t file;
  uint8_t state;
  bool file_end;
  uint64_t row_next;
  uint64_t points;
  uint64_t skipped;
} ld_mark;

typedef struct ld_worker {
  struct ld_pipe *p;
  int id;
  store *handle;
  pthread_t thread;
  bool started;
  unsigned long wake_seen; /* vf_queue_pop's wake counter (flush requests) */
  uint64_t *unflushed; /* seqs upserted since the last flush */
  size_t nunflushed, capunflushed;
  double last_flush;
  uint64_t flush_gen_seen;
  unsigned rng;
} ld_worker;

typedef struct ld_pipe {
  const ld_pipeline_cfg *cfg;
  pthread_mutex_t mu;
  pthread_cond_t cv_space;  /* reader: buffered rows went down / stop */
  pthread_cond_t cv_main;   /* caller: watermark moved / finished */
  /* batches for the workers: closed when the reader is done or on stop; woken on a flush
   * request.  Its lock nests inside mu (mu may be held while calling it, never the reverse). */
  vf_queue *items;
  ld_item *pending;         /* reader: the slices of one chunk before they are queued */
  size_t pcap;
  vf_buf spare_values;      /* reader: the vector decode buffer carried from file to file */
  /* chunks */
  ld_chunk *free_chunks;
  ld_chunk **all_chunks;
  size_t nchunks, capchunks;
  uint64_t buffered_rows;
  /* marks (ring indexed by seq - mark_base) */
  ld_mark *marks;
  size_t mcap, mhead, mlen;
  uint64_t mark_base, next_seq;
  /* watermark */
  uint64_t dur_points, dur_skipped;
  int64_t dur_file;          /* file of the last durable mark, -1 none */
  uint64_t dur_row;          /* its row_next */
  uint64_t wm_version;       /* bumps when the watermark moves */
  bool wm_file_end;          /* a file end crossed since the last checkpoint */
  /* counters */
  uint64_t points, retries, skipped, bytes_read, files_done;
  uint64_t flush_gen;
  bool reader_done, stop, workers_done;
  int workers_running;
  vf_status st;
  vf_error err;              /* first error */
  int64_t flush_every;       /* batches per worker between flushes */
} ld_pipe;

/* the first error wins; caller holds mu */
static void keep_first_error(ld_pipe *p, vf_status st, const vf_error *e) {
  if (p->st != VF_OK) return;
  p->st = st;
  p->err = *e;
  p->err.code = st;
}

static void set_error(ld_pipe *p, vf_status st, const vf_error *e) {
  /* caller holds mu */
  keep_first_error(p, st, e);
  p->stop = true;
  if (p->items) vf_queue_close(p->items);
  pthread_cond_broadcast(&p->cv_space);
  pthread_cond_broadcast(&p->cv_main);
}

static ld_mark *mark_at(ld_pipe *p, uint64_t seq) {
  return &p->marks[(p->mhead + (size_t)(seq - p->mark_base)) & (p->mcap - 1)];
}

/* append a mark; caller holds mu */
static vf_status mark_push(ld_pipe *p, const ld_mark *m, uint64_t *seq, vf_error *err) {
  if (p->mlen == p->mcap) {
    size_t ncap = p->mcap ? p->mcap * 2 : 256;
    ld_mark *nm = vf_mallocarray(ncap, sizeof *nm);
    if (!nm) return vf_error_set(err, VF_ENOMEM, "load: out of memory for batch marks");
    for (size_t i = 0; i < p->mlen; i++) nm[i] = p->marks[(p->mhead + i) & (p->mcap - 1)];
    free(p->marks);
    p->marks = nm;
    p->mcap = ncap;
    p->mhead = 0;
  }
  *seq = p->next_seq++;
  p->mlen++;
  *mark_at(p, *seq) = *m;
  return VF_OK;
}

/* move the watermark over durable marks; caller holds mu */
static void advance(ld_pipe *p) {
  bool moved = false;
  while (p->mlen > 0) {
    ld_mark *m = &p->marks[p->mhead];
    if (m->state != MARK_DURABLE) break;
    p->dur_points += m->points;
    p->dur_skipped += m->skipped;
    p->dur_file = m->file;
    p->dur_row = m->row_next;
    if (m->file_end) {
      p->cfg->files[m->file].completed = true;
      p->wm_file_end = true;
    }
    p->mhead = (p->mhead + 1) & (p->mcap - 1);
    p->mlen--;
    p->mark_base++;
    moved = true;
  }
  if (moved) {
    p->wm_version++;
    pthread_cond_broadcast(&p->cv_main);
  }
}

/* ------------------------------------------------------------------ reader */

/* room for the n slices of one chunk in p->pending (reader only) */
static vf_status pending_room(ld_pipe *p, size_t n, vf_error *err) {
  if (n <= p->pcap) return VF_OK;
  ld_item *np = vf_realloc(p->pending, n * sizeof *np);
  if (!np) return vf_error_set(err, VF_ENOMEM, "load: out of memory for the batch queue");
  p->pending = np;
  p->pcap = n;
  return VF_OK;
}

static ld_chunk *chunk_get(ld_pipe *p, vf_error *err) {
  ld_chunk *c = p->free_chunks;
  if (c) {
    p->free_chunks = c->next_free;
    return c;
  }
  if (p->nchunks == p->capchunks) {
    size_t ncap = p->capchunks ? p->capchunks * 2 : 16;
    ld_chunk **na = vf_realloc(p->all_chunks, ncap * sizeof *na);
    if (!na) {
      vf_error_set(err, VF_ENOMEM, "load: out of memory");
      return NULL;
    }
    p->all_chunks = na;
    p->capchunks = ncap;
  }
  c = vf_calloc(1, sizeof *c);
  if (!c) {
    vf_error_set(err, VF_ENOMEM, "load: out of memory");
    return NULL;
  }
  p->all_chunks[p->nchunks++] = c;
  return c;
}

/* caller holds mu */
static void chunk_release(ld_pipe *p, ld_chunk *c) {
  if (--c->refs > 0) return;
  p->buffered_rows -= c->rows;
  c->rows = 0;
  c->next_free = p->free_chunks;
  p->free_chunks = c;
  pthread_cond_broadcast(&p->cv_space); /* the reader, and workers sleeping before a retry */
}

/* a chunk that holds no slices (never read, or nothing of it queued) back to the free list;
 * caller holds mu */
static void chunk_drop(ld_pipe *p, ld_chunk *c) {
  c->rows = 0;
  c->refs = 1;
  chunk_release(p, c);
}

/* the mark of a read row group without points (its rows all skipped), and its chunk dropped;
 * caller holds mu */
static vf_status mark_rowless(ld_pipe *p, uint32_t fi, ld_chunk *c, uint64_t from,
                              uint64_t row_next, vf_error *err) {
  ld_mark m = {fi, MARK_DURABLE, false, row_next, 0, row_next - from};
  uint64_t seq;
  p->skipped += m.skipped;
  vf_status st = mark_push(p, &m, &seq, err);
  chunk_drop(p, c);
  if (st != VF_OK) return st;
  advance(p);
  return VF_OK;
}

/* The n rows of chunk c as batch_size slices in p->pending, each with its mark; caller holds mu.
 * *nslices: the references the slices hold on c (0 when it failed before they took it: then c is
 * dropped); *made: the slices with a mark, to be queued (the others drop their reference). */
static vf_status slice_chunk(ld_pipe *p, uint32_t fi, ld_chunk *c, size_t n, uint64_t from,
                             uint64_t row_next, size_t *nslices, size_t *made, vf_error *err) {
  size_t bs = (size_t)p->cfg->batch_size;
  size_t ns = (n + bs - 1) / bs;
  size_t nv = c->batch.nvectors > 0 ? (size_t)c->batch.nvectors : 0;
  *nslices = *made = 0;
  vf_status st = VF_OK;
  VF_TRY(pending_room(p, ns, err));
  if (ns * nv > c->vcap) {
    corpus_vec_batch *nvs = vf_mallocarray(ns * nv, sizeof *nvs);
    if (!nvs) VF_FAIL(vf_error_set(err, VF_ENOMEM, "load: out of memory"));
    free(c->vstore);
    c->vstore = nvs;
    c->vcap = ns * nv;
  }
  c->rows = n;
  c->refs = (int)ns;
  p->buffered_rows += n;
  *nslices = ns;
  uint64_t start = from;
  for (size_t off = 0; off < n; off += bs) {
    size_t len = n - off < bs ? n - off : bs;
    ld_item *it = &p->pending[*made];
    memset(it, 0, sizeof *it);
    it->chunk = c;
    corpus_batch_slice(&c->batch, off, len, c->vstore + (off / bs) * nv, &it->view);
    uint64_t next = off + len < n ? c->batch.file_rows[off + len] : row_next;
    ld_mark m = {fi, MARK_QUEUED, false, next, len, (next - start) - len};
    p->skipped += m.skipped;
    VF_TRY(mark_push(p, &m, &it->seq, err));
    (*made)++;
    start = next;
  }
out:
  if (st != VF_OK && *nslices == 0) chunk_drop(p, c);
  return st;
}

/* queue the slices of one read row group (or a bare mark when it has no points) */
static vf_status queue_chunk(ld_pipe *p, uint32_t fi, ld_chunk *c, size_t n, uint64_t from,
                             uint64_t row_next, vf_error *err) {
  size_t nslices = 0, made = 0;
  pthread_mutex_lock(&p->mu);
  vf_status st = n == 0 ? mark_rowless(p, fi, c, from, row_next, err)
                        : slice_chunk(p, fi, c, n, from, row_next, &nslices, &made, err);
  pthread_mutex_unlock(&p->mu);
  /* queued outside mu, in sequence order (the reader is the only producer): a full queue
   * blocks here until a worker takes a batch; a closed one (stop) takes no more */
  size_t pushed = 0;
  while (pushed < made && vf_queue_push(p->items, &p->pending[pushed]) == VF_QUEUE_OK) pushed++;
  if (pushed < nslices) { /* the slices never queued: drop their references */
    pthread_mutex_lock(&p->mu);
    for (size_t i = pushed; i < nslices; i++) chunk_release(p, c);
    pthread_mutex_unlock(&p->mu);
  }
  return st;
}

/* the row groups of this worker's rows of file fi, read and queued (r: NULL when there are none);
 * a stop ends it early without an error */
static vf_status read_row_groups(ld_pipe *p, uint32_t fi, corpus_records *r, vf_error *err) {
  const ld_pipeline_cfg *cfg = p->cfg;
  const ld_plan_file *pf = &cfg->files[fi];
  int nrg = r ? corpus_records_row_groups(r) : 0;
  for (int rg = 0; rg < nrg; rg++) {
    uint64_t first = corpus_records_row_group_first(r, rg);
    uint64_t next_first = rg + 1 < nrg ? corpus_records_row_group_first(r, rg + 1)
                                       : corpus_records_rows(r);
    if (next_first <= pf->row_begin) continue;
    if (first >= pf->row_end) break;
    uint64_t from = first > pf->row_begin ? first : pf->row_begin;
    uint64_t row_next = next_first < pf->row_end ? next_first : pf->row_end;
    vf_status st = vf_check_cancel(err);
    if (st != VF_OK) return st;
    pthread_mutex_lock(&p->mu);
    while (!p->stop && p->buffered_rows >= (uint64_t)cfg->prefetch_size)
      pthread_cond_wait(&p->cv_space, &p->mu);
    bool stop = p->stop;
    ld_chunk *c = stop ? NULL : chunk_get(p, err);
    pthread_mutex_unlock(&p->mu);
    if (stop) return VF_OK;
    if (!c) return VF_ENOMEM;
    st = corpus_records_read(r, rg, from, &c->batch, NULL, err);
    if (st != VF_OK) {
      pthread_mutex_lock(&p->mu);
      chunk_drop(p, c);
      pthread_mutex_unlock(&p->mu);
      return st;
    }
    /* keep only rows below row_end (offset/limit) */
    size_t n = c->batch.n;
    while (n > 0 && c->batch.file_rows[n - 1] >= pf->row_end) n--;
    st = queue_chunk(p, fi, c, n, from, row_next, err);
    if (st != VF_OK) return st;
  }
  return VF_OK;
}

/* the reader of file fi is done with r (NULL: none): its bytes counted, its buffer kept */
static void records_done(ld_pipe *p, corpus_records *r) {
  if (!r) return;
  pthread_mutex_lock(&p->mu);
  p->bytes_read += corpus_records_bytes_read(r);
  pthread_mutex_unlock(&p->mu);
  corpus_records_keep_buffer(r, &p->spare_values);
  corpus_records_close(r);
}

/* the file-end mark of file fi, and a flush request so its rows become durable soon; caller
 * holds mu */
static vf_status mark_file_end(ld_pipe *p, uint32_t fi, vf_error *err) {
  ld_mark m = {fi, MARK_DURABLE, true, p->cfg->files[fi].row_end, 0, 0};
  uint64_t seq;
  vf_status st = mark_push(p, &m, &seq, err);
  if (st != VF_OK) return st;
  p->flush_gen++;
  vf_queue_wake(p->items);
  advance(p);
  return VF_OK;
}

static vf_status read_file(ld_pipe *p, uint32_t fi, vf_error *err) {
  const ld_pipeline_cfg *cfg = p->cfg;
  const ld_plan_file *pf = &cfg->files[fi];
  corpus_records *r = NULL;
  vf_status st = VF_OK;
  if (pf->row_begin < pf->row_end)
    VF_TRY(corpus_records_open(pf->file, cfg->spec, pf->global_base, &r, err));
  if (r) corpus_records_use_buffer(r, &p->spare_values);
  VF_TRY(read_row_groups(p, fi, r, err));
  records_done(p, r); /* before the file-end mark */
  r = NULL;
  pthread_mutex_lock(&p->mu);
  bool stopped = p->stop;
  pthread_mutex_unlock(&p->mu);
  if (stopped) goto out;
  pthread_mutex_lock(&p->mu);
  st = mark_file_end(p, fi, err);
  pthread_mutex_unlock(&p->mu);
out: /* mu is not held here on any path */
  records_done(p, r);
  return st;
}

static void *reader_main(void *arg) {
  ld_pipe *p = arg;
  vf_error err;
  vf_error_clear(&err);
  vf_status st = VF_OK;
  for (size_t i = 0; i < p->cfg->nfiles; i++) {
    if (p->cfg->files[i].completed) continue;
    pthread_mutex_lock(&p->mu);
    bool stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    if (stop) break;
    VF_TRY(read_file(p, (uint32_t)i, &err));
  }
out: /* mu is not held here on any path */
  pthread_mutex_lock(&p->mu);
  if (st != VF_OK) set_error(p, st, &err);
  p->reader_done = true;
  vf_queue_close(p->items); /* the workers drain what is queued, then finish */
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* ------------------------------------------------------------------ workers */

static bool sleep_unless_stopped(ld_pipe *p, double seconds) {
  pthread_mutex_lock(&p->mu);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  double end = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + seconds;
  ts.tv_sec = (time_t)end;
  ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
  while (!p->stop)
    if (pthread_cond_timedwait(&p->cv_space, &p->mu, &ts) == ETIMEDOUT) break;
  bool stopped = p->stop;
  pthread_mutex_unlock(&p->mu);
  return !stopped;
}

static vf_status upsert_with_retries(ld_worker *w, const ld_item *it, vf_error *err) {
  ld_pipe *p = w->p;
  int64_t max_retries = p->cfg->retries;
  for (int64_t attempt = 0;; attempt++) {
    vf_status st = store_upsert(w->handle, &it->view, err);
    bool retry = (st == VF_ENET || st == VF_EIO) && attempt < max_retries;
    if (st != VF_OK && !retry) {
      uint64_t r0 = it->view.n ? it->view.file_rows[0] : 0;
      uint64_t r1 = it->view.n ? it->view.file_rows[it->view.n - 1] : 0;
      return vf_error_prefix(err, "upserting %zu points (%s rows %" PRIu64 "..%" PRIu64 ")%s: ",
                             it->view.n, it->view.file_key ? it->view.file_key : "?", r0, r1,
                             attempt ? " failed after retries" : "");
    }
    if (!retry) return VF_OK;
    double base = 0.25 * (double)(1u << (attempt < 7 ? attempt : 7)); /* 0.25 s .. 32 s */
    double delay = base * (0.5 + 0.5 * (double)rand_r(&w->rng) / (double)RAND_MAX);
    vf_log(VF_LOG_WARN, "upsert of %zu points failed (%s); retry %" PRId64 "/%" PRId64 " in %.2f s",
           it->view.n, err->msg, attempt + 1, max_retries, delay);
    pthread_mutex_lock(&p->mu);
    p->retries++;
    pthread_mutex_unlock(&p->mu);
    if (!sleep_unless_stopped(p, delay)) return vf_error_set(err, VF_EINTERNAL, "load stopped");
    vf_error_clear(err);
  }
}

/* flush the handle and mark what it upserted durable; called without mu */
static vf_status worker_flush(ld_worker *w, vf_error *err) {
  ld_pipe *p = w->p;
  vf_status st = store_flush(w->handle, err);
  if (st != VF_OK) return vf_error_prefix(err, "flushing the store: ");
  pthread_mutex_lock(&p->mu);
  for (size_t i = 0; i < w->nunflushed; i++) mark_at(p, w->unflushed[i])->state = MARK_DURABLE;
  w->nunflushed = 0;
  advance(p);
  pthread_mutex_unlock(&p->mu);
  w->last_flush = vf_now();
  return VF_OK;
}

/* upsert one batch, and room to remember it until the next flush; called without mu */
static vf_status upsert_batch(ld_worker *w, const ld_item *it, vf_error *err) {
  vf_status st = upsert_with_retries(w, it, err);
  if (st != VF_OK || w->nunflushed < w->capunflushed) return st;
  size_t ncap = w->capunflushed ? w->capunflushed * 2 : 64;
  uint64_t *nu = vf_realloc(w->unflushed, ncap * sizeof *nu);
  if (!nu) return vf_error_set(err, VF_ENOMEM, "load: out of memory");
  w->unflushed = nu;
  w->capunflushed = ncap;
  return VF_OK;
}

static void *worker_main(void *arg) {
  ld_worker *w = arg;
  ld_pipe *p = w->p;
  vf_error err;
  vf_error_clear(&err);
  vf_status st = VF_OK;
  double every_s = p->cfg->checkpoint_seconds;
  for (;;) {
    /* a flush that is due first: a request (a file ended), the batch count, or the time */
    pthread_mutex_lock(&p->mu);
    if (p->stop) break;
    if (!w->nunflushed) w->flush_gen_seen = p->flush_gen; /* nothing to flush for a request */
    bool due = w->nunflushed &&
               (w->flush_gen_seen != p->flush_gen || (int64_t)w->nunflushed >= p->flush_every ||
                vf_now() - w->last_flush >= every_s);
    if (due) w->flush_gen_seen = p->flush_gen;
    pthread_mutex_unlock(&p->mu);
    if (due) {
      if ((st = worker_flush(w, &err)) != VF_OK) {
        pthread_mutex_lock(&p->mu);
        break;
      }
      continue;
    }
    /* the next batch; with unflushed batches only until their flush falls due */
    double wait = -1;
    if (w->nunflushed) {
      wait = every_s - (vf_now() - w->last_flush);
      if (wait < 0.01) wait = 0.01;
    }
    ld_item it;
    vf_queue_rc rc = vf_queue_pop(p->items, &it, wait, &w->wake_seen);
    if (rc == VF_QUEUE_TIMEOUT || rc == VF_QUEUE_WOKEN) continue;
    if (rc == VF_QUEUE_CLOSED) { /* the reader is done and the queue drained, or a stop */
      pthread_mutex_lock(&p->mu);
      bool stop = p->stop;
      pthread_mutex_unlock(&p->mu);
      if (!stop && w->nunflushed) st = worker_flush(w, &err);
      pthread_mutex_lock(&p->mu);
      break;
    }
    pthread_mutex_lock(&p->mu);
    bool stop = p->stop;
    if (stop) chunk_release(p, it.chunk);
    pthread_mutex_unlock(&p->mu);
    if (stop) {
      pthread_mutex_lock(&p->mu);
      break;
    }
    st = upsert_batch(w, &it, &err);
    pthread_mutex_lock(&p->mu);
    chunk_release(p, it.chunk);
    if (st != VF_OK) break;
    mark_at(p, it.seq)->state = MARK_UPSERTED;
    w->unflushed[w->nunflushed++] = it.seq;
    p->points += it.view.n;
    pthread_mutex_unlock(&p->mu);
  }
  /* mu is held here */
  if (st != VF_OK && !(p->stop && st == VF_EINTERNAL)) set_error(p, st, &err);
  p->workers_running--;
  if (p->workers_running == 0) {
    p->workers_done = true;
    pthread_cond_broadcast(&p->cv_main);
  }
  pthread_cond_broadcast(&p->cv_space);
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* ------------------------------------------------------------------ caller */

static vf_status write_checkpoint(ld_pipe *p, bool done, vf_error *err) {
  const ld_pipeline_cfg *cfg = p->cfg;
  if (!cfg->state_path) return VF_OK;
  ld_state s = *cfg->state;
  /* snapshot under the lock */
  pthread_mutex_lock(&p->mu);
  s.points = cfg->state->points + p->dur_points;
  s.skipped_rows = cfg->state->skipped_rows + p->dur_skipped;
  s.done = done;
  size_t ncomp = 0;
  for (size_t i = 0; i < cfg->nfiles; i++) ncomp += cfg->files[i].completed;
  char **keys = vf_calloc(ncomp + 1, sizeof *keys);
  size_t k = 0;
  for (size_t i = 0; keys && i < cfg->nfiles; i++)
    if (cfg->files[i].completed) keys[k++] = cfg->files[i].file->key;
  s.completed = keys;
  s.ncompleted = k;
  s.current_key = NULL;
  s.current_row = 0;
  if (p->dur_file >= 0 && !cfg->files[p->dur_file].completed) {
    s.current_key = cfg->files[p->dur_file].file->key;
    s.current_row = p->dur_row;
  } else if (p->dur_file < 0 && cfg->state->current_key) {
    s.current_key = cfg->state->current_key; /* nothing new durable yet: keep the old position */
    s.current_row = cfg->state->current_row;
  }
  p->wm_file_end = false;
  pthread_mutex_unlock(&p->mu);
  if (!keys) return vf_error_set(err, VF_ENOMEM, "out of memory");
  vf_status st = ld_state_write(cfg->state_path, &s, err);
  free(keys);
  return st;
}

static void emit_progress(ld_pipe *p, double t0) {
  vf_progress pr = {0};
  pr.phase = "load";
  pthread_mutex_lock(&p->mu);
  pr.rows_done = p->points;
  pr.bytes_done = p->bytes_read;
  for (size_t i = 0; i < p->cfg->nfiles; i++) pr.files_done += p->cfg->files[i].completed;
  pthread_mutex_unlock(&p->mu);
  pr.rows_total = p->cfg->rows_total;
  pr.files_total = p->cfg->nfiles;
  pr.elapsed_s = vf_now() - t0;
  vf_progress_emit(&pr);
}

vf_status ld_pipeline_run(const ld_pipeline_cfg *cfg, ld_report *rep, vf_error *err) {
  ld_pipe *p = vf_calloc(1, sizeof *p);
  int nw = (int)cfg->concurrency;
  ld_worker *ws = vf_calloc((size_t)nw, sizeof *ws);
  if (!p || !ws) {
    free(p);
    free(ws);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  double t0 = vf_now();
  p->cfg = cfg;
  p->dur_file = -1;
  p->flush_every = cfg->checkpoint_batches / nw;
  if (p->flush_every < 1) p->flush_every = 1;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv_space, NULL);
  pthread_cond_init(&p->cv_main, NULL);
  uint64_t files_before = 0;
  for (size_t i = 0; i < cfg->nfiles; i++) files_before += cfg->files[i].completed;

  /* room for what prefetch_size rows make in batches, and a few per worker beyond it (the
   * rows bound memory; the count bounds the queue itself) */
  uint64_t qcap = (uint64_t)(cfg->prefetch_size > 0 ? cfg->prefetch_size : 1) /
                  (uint64_t)(cfg->batch_size > 0 ? cfg->batch_size : 1) + 4 * (uint64_t)nw;
  if (qcap < 16) qcap = 16;
  if (qcap > 65536) qcap = 65536;
  pthread_t reader;
  bool reader_started = false;
  vf_status st = VF_OK;
  VF_TRY(vf_queue_create((size_t)qcap, sizeof(ld_item), &p->items, err));
  for (int i = 0; i < nw; i++) {
    ws[i].p = p;
    ws[i].id = i;
    ws[i].rng = (unsigned)(getpid() * 7919u) ^ (unsigned)(i * 104729u) ^ (unsigned)(uint64_t)(t0 * 1e6);
    ws[i].last_flush = t0;
    VF_TRY(store_open(cfg->store, &ws[i].handle, err));
    VF_TRY(store_ensure_collection(ws[i].handle, err));
  }
  p->workers_running = nw;
  for (int i = 0; i < nw; i++) {
    if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]) != 0) {
      pthread_mutex_lock(&p->mu);
      p->workers_running -= nw - i;
      vf_error e;
      vf_error_set(&e, VF_ENOMEM, "load: cannot start a worker thread");
      set_error(p, VF_ENOMEM, &e);
      if (p->workers_running == 0) p->workers_done = true;
      pthread_mutex_unlock(&p->mu);
      break;
    }
    ws[i].started = true;
  }
  if (pthread_create(&reader, NULL, reader_main, p) == 0) {
    reader_started = true;
  } else {
    pthread_mutex_lock(&p->mu);
    vf_error e;
    vf_error_set(&e, VF_ENOMEM, "load: cannot start the reader thread");
    set_error(p, VF_ENOMEM, &e);
    p->reader_done = true;
    pthread_mutex_unlock(&p->mu);
  }
  /* progress and checkpoints until the workers are done */
  uint64_t written_version = 0;
  double last_write = 0, last_progress = 0;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    if (!p->workers_done) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 200 * 1000 * 1000;
      if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
      }
      pthread_cond_timedwait(&p->cv_main, &p->mu, &ts);
    }
    bool done = p->workers_done;
    bool failed = p->st != VF_OK;
    bool due = p->wm_version != written_version &&
               (p->wm_file_end || vf_now() - last_write >= 0.25);
    uint64_t version = p->wm_version;
    pthread_mutex_unlock(&p->mu);
    if (done) break;
    if (!failed && vf_cancelled()) { /* SIGINT/SIGTERM: stop every thread (util.h) */
      vf_error e;
      vf_check_cancel(&e);
      pthread_mutex_lock(&p->mu);
      set_error(p, VF_ECANCELED, &e);
      pthread_mutex_unlock(&p->mu);
      continue;
    }
    if (due && !failed) {
      vf_error e;
      vf_error_clear(&e);
      vf_status cst = write_checkpoint(p, false, &e);
      if (cst != VF_OK) {
        pthread_mutex_lock(&p->mu);
        set_error(p, cst, &e);
        pthread_mutex_unlock(&p->mu);
      }
      written_version = version;
      last_write = vf_now();
    }
    if (vf_now() - last_progress >= 0.5) {
      emit_progress(p, t0);
      last_progress = vf_now();
    }
  }
out: /* mu is not held here on any path */
  if (reader_started) {
    /* the workers are gone: make sure a blocked reader wakes up and ends */
    pthread_mutex_lock(&p->mu);
    if (!p->reader_done) {
      p->stop = true;
      vf_queue_close(p->items); /* a reader blocked on a full queue */
      pthread_cond_broadcast(&p->cv_space);
    }
    pthread_mutex_unlock(&p->mu);
    pthread_join(reader, NULL);
  }
  for (int i = 0; i < nw; i++)
    if (ws[i].started) pthread_join(ws[i].thread, NULL);
  if (st == VF_OK && p->st != VF_OK) {
    st = p->st;
    *err = p->err;
  }
  if (st == VF_ECANCELED) {
    /* interrupted: record what is durable, so --resume continues from as late as possible (the
     * unflushed segments are abandoned by store_close, their temporaries removed) */
    vf_error e;
    vf_error_clear(&e);
    advance(p);
    if (write_checkpoint(p, false, &e) != VF_OK)
      vf_log(VF_LOG_WARN, "load: the checkpoint after the interruption was not written: %s", e.msg);
  }
  if (st == VF_OK) {
    advance(p);
    if (p->mlen != 0)
      st = vf_error_set(err, VF_EINTERNAL, "load: %zu batches were never made durable", p->mlen);
  }
  if (st == VF_OK) {
    emit_progress(p, t0);
    st = write_checkpoint(p, true, err);
  }
  uint64_t files_after = 0;
  for (size_t i = 0; i < cfg->nfiles; i++) files_after += cfg->files[i].completed;
  rep->points = p->points;
  rep->files = files_after - files_before;
  rep->bytes_read = p->bytes_read;
  rep->retries = p->retries;
  for (int i = 0; i < nw; i++) /* plus the requests a remote store retried itself (qdrant) */
    if (ws[i].handle) rep->retries += store_retries(ws[i].handle);
  rep->skipped_rows = p->skipped;
  rep->seconds = vf_now() - t0;
  rep->points_per_s = rep->seconds > 0 ? (double)rep->points / rep->seconds : 0;

  for (int i = 0; i < nw; i++) {
    store_close(ws[i].handle);
    free(ws[i].unflushed);
  }
  for (size_t i = 0; i < p->nchunks; i++) {
    corpus_batch_free(&p->all_chunks[i]->batch);
    free(p->all_chunks[i]->vstore);
    free(p->all_chunks[i]);
  }
  free(p->all_chunks);
  vf_queue_free(p->items);
  free(p->pending);
  vf_buf_free(&p->spare_values);
  free(p->marks);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv_space);
  pthread_cond_destroy(&p->cv_main);
  free(p);
  free(ws);
  return st;
}
