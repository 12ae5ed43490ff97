/*
 * A small process-wide cache of the reader's big scratch blocks (issue 16 item 1;
 * docs/DESIGN.md "Extensions").
 *
 * Why: a streamed column chunk needs a read window, a decompressed page and level arrays of a
 * page's size (DuckDB writes ~100 MiB pages).  They lived in the pqt_file, so every file of a
 * corpus allocated them again and the kernel zeroed every page of them on first touch (a quarter
 * of a one-thread scan).  pqt_close() now gives blocks of at least PQT_MEM_MIN bytes here and the
 * next file's growth takes the smallest one that fits, so a corpus of many files touches them
 * once.  Bounded: at most PQT_MEM_BLOCKS blocks and PQT_MEM_BYTES bytes (a quarter of the memory
 * budget when one is set); a block that does not fit is freed.  pqt_mem_cache_clear() (format.h)
 * frees them all; it runs at exit.
 */
#include <pthread.h>
#include <stdlib.h>

#include "format/pqt_internal.h"

#define PQT_MEM_BLOCKS 8
#define PQT_MEM_BYTES ((uint64_t)1 << 30)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *p;
  size_t cap;
} g_blk[PQT_MEM_BLOCKS];
static int g_n;
static uint64_t g_bytes;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void clear_at_exit(void) { pqt_mem_cache_clear(); }
static void register_exit(void) { (void)atexit(clear_at_exit); }

static uint64_t limit_bytes(void) {
  uint64_t b = vf_memory_budget();
  return b && b / 4 < PQT_MEM_BYTES ? b / 4 : PQT_MEM_BYTES;
}

void *pqt_mem_take(size_t need, size_t *cap) {
  if (need < PQT_MEM_MIN) return NULL;
  pthread_mutex_lock(&g_mu);
  int best = -1;
  for (int i = 0; i < g_n; i++)
    if (g_blk[i].cap >= need && (best < 0 || g_blk[i].cap < g_blk[best].cap)) best = i;
  void *p = NULL;
  if (best >= 0) {
    p = g_blk[best].p;
    *cap = g_blk[best].cap;
    g_bytes -= g_blk[best].cap;
    g_blk[best] = g_blk[--g_n];
  }
  pthread_mutex_unlock(&g_mu);
  return p;
}

void pqt_mem_give(void *p, size_t cap) {
  if (!p) return;
  if (cap < PQT_MEM_MIN) {
    free(p);
    return;
  }
  pthread_once(&g_once, register_exit);
  uint64_t lim = limit_bytes();
  pthread_mutex_lock(&g_mu);
  /* make room by dropping the smallest blocks that are smaller than this one */
  while (g_n > 0 && (g_n == PQT_MEM_BLOCKS || g_bytes + cap > lim)) {
    int small = 0;
    for (int i = 1; i < g_n; i++)
      if (g_blk[i].cap < g_blk[small].cap) small = i;
    if (g_blk[small].cap >= cap) break;
    free(g_blk[small].p);
    g_bytes -= g_blk[small].cap;
    g_blk[small] = g_blk[--g_n];
  }
  if (g_n < PQT_MEM_BLOCKS && g_bytes + cap <= lim) {
    g_blk[g_n].p = p;
    g_blk[g_n].cap = cap;
    g_n++;
    g_bytes += cap;
    p = NULL;
  }
  pthread_mutex_unlock(&g_mu);
  free(p);
}

/*! pqt_mem_cache_clear() : see format.h. */
void pqt_mem_cache_clear(void) {
  pthread_mutex_lock(&g_mu);
  for (int i = 0; i < g_n; i++)
    free(g_blk[i].p);
  g_n = 0;
  g_bytes = 0;
  pthread_mutex_unlock(&g_mu);
}

/*! pqt_mem_cached() : see format.h. */
size_t pqt_mem_cached(uint64_t *bytes) {
  pthread_mutex_lock(&g_mu);
  size_t n = (size_t)g_n;
  if (bytes) *bytes = g_bytes;
  pthread_mutex_unlock(&g_mu);
  return n;
}

vf_status pqt_buf_grow(vf_buf *b, size_t extra, vf_error *err) {
  if (extra <= SIZE_MAX - b->len && b->len + extra > b->cap) {
    size_t cap = 0;
    void *blk = pqt_mem_take(b->len + extra, &cap);
    if (blk && b->max && cap > b->max) { /* never: scratch buffers have no limit; be safe */
      pqt_mem_give(blk, cap);
      blk = NULL;
    }
    if (blk) {
      if (b->len) memcpy(blk, b->data, b->len);
      pqt_mem_give(b->data, b->cap);
      b->data = blk;
      b->cap = cap;
    }
  }
  return vf_buf_reserve(b, extra, err);
}

void pqt_buf_put(vf_buf *b) {
  if (b->data) pqt_mem_give(b->data, b->cap);
  b->data = NULL;
  b->len = b->cap = 0;
}

void *pqt_mem_grow(void *p, size_t old_cap, size_t need, size_t *cap) {
  void *blk = pqt_mem_take(need, cap);
  if (!blk) return NULL;
  if (p && old_cap) memcpy(blk, p, old_cap < need ? old_cap : need);
  pqt_mem_give(p, old_cap);
  return blk;
}
