/*
 * pool.c — the process's thread pool and the bounded queue (contracts in vforge/pool.h).
 *
 * Pool: one mutex and two condition variables.  `work` wakes sleeping threads when a loop is
 * posted; `done` wakes a caller whose loop's last worker left.  Posted loops form a FIFO list;
 * a thread takes the oldest loop with chunks left and a free worker slot, runs chunks from the
 * loop's atomic counter until none is left (or the run is cancelled), and goes back to sleep.
 * The caller works on its own loop as worker 0, then unlinks it (so no thread joins it late) and
 * waits until the workers inside it have left; the loop lives on the caller's stack.
 *
 * Queue: a ring of fixed-size items under one mutex, `not_empty` / `not_full` condition
 * variables, a closed flag and a wake generation (vf_queue_wake).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vforge/pool.h"

/* ------------------------------------------------------------------ pool */

typedef struct pool_loop {
  vf_pool_fn fn;
  void *arg;
  size_t n;
  atomic_size_t next;      /* the next chunk to hand out */
  atomic_bool cancelled;
  int width;               /* worker slots; slot 0 is the caller */
  int joined;              /* slots taken (under mu) */
  int inside;              /* workers running chunks now (under mu) */
  struct pool_loop *next_loop;
} pool_loop;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t work, done;
  pool_loop *head, *tail;
  pthread_t th[VF_POOL_MAX_THREADS];
  int nthreads;
  int generation; /* bumps on shutdown: threads of an older generation leave */
  bool stopping;
} g_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
            NULL, NULL, {0}, 0, 0, false};

static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

static void pool_prepare(void) { pthread_mutex_lock(&g_pool.mu); }
static void pool_parent(void) { pthread_mutex_unlock(&g_pool.mu); }
/* the child has only the forking thread: no pool threads, no loop of another thread */
static void pool_child(void) {
  pthread_mutex_init(&g_pool.mu, NULL);
  pthread_cond_init(&g_pool.work, NULL);
  pthread_cond_init(&g_pool.done, NULL);
  g_pool.head = g_pool.tail = NULL;
  g_pool.nthreads = 0;
  g_pool.stopping = false;
}
static void pool_atfork(void) { pthread_atfork(pool_prepare, pool_parent, pool_child); }

/* run chunks of `l` as worker `w` until none is left or the run is cancelled */
static void run_chunks(pool_loop *l, int w) {
  for (;;) {
    if (atomic_load_explicit(&l->cancelled, memory_order_relaxed)) return;
    if (vf_cancelled()) {
      atomic_store(&l->cancelled, true);
      return;
    }
    size_t c = atomic_fetch_add(&l->next, 1);
    if (c >= l->n) return;
    l->fn(l->arg, c, w);
  }
}

/* the oldest loop with chunks left and a free slot; caller holds mu */
static pool_loop *find_loop(void) {
  for (pool_loop *l = g_pool.head; l; l = l->next_loop)
    if (l->joined < l->width && atomic_load(&l->next) < l->n && !atomic_load(&l->cancelled))
      return l;
  return NULL;
}

static void *pool_main(void *arg) {
  int gen = (int)(intptr_t)arg;
  pthread_mutex_lock(&g_pool.mu);
  for (;;) {
    pool_loop *l = NULL;
    while (!(g_pool.stopping && g_pool.generation == gen) && !(l = find_loop()))
      pthread_cond_wait(&g_pool.work, &g_pool.mu);
    if (!l) break;
    int w = l->joined++;
    l->inside++;
    pthread_mutex_unlock(&g_pool.mu);
    run_chunks(l, w);
    pthread_mutex_lock(&g_pool.mu);
    if (--l->inside == 0) pthread_cond_broadcast(&g_pool.done);
  }
  pthread_mutex_unlock(&g_pool.mu);
  return NULL;
}

/* start threads until the pool has `want` (or as many as could be started); caller holds mu */
static void pool_grow(int want) {
  pthread_once(&g_atfork_once, pool_atfork);
  if (want > VF_POOL_MAX_THREADS) want = VF_POOL_MAX_THREADS;
  while (g_pool.nthreads < want && !g_pool.stopping) {
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, (size_t)8 << 20);
    int rc = pthread_create(&g_pool.th[g_pool.nthreads], &at, pool_main,
                            (void *)(intptr_t)g_pool.generation);
    pthread_attr_destroy(&at);
    if (rc != 0) break; /* fewer helpers: the caller does the rest */
    g_pool.nthreads++;
  }
}

/* vf_pool_width(): see pool.h. */
int vf_pool_width(size_t n, int width) {
  if (width <= 0) width = vf_threads();
  if (width > VF_POOL_MAX_THREADS) width = VF_POOL_MAX_THREADS;
  if ((size_t)width > n) width = (int)n;
  return width >= 1 ? width : 1;
}

/* vf_pool_for(): see pool.h. */
vf_status vf_pool_for(size_t n, int width, vf_pool_fn fn, void *arg, vf_error *err) {
  if (n == 0) return VF_OK;
  width = vf_pool_width(n, width);
  pool_loop l = {.fn = fn, .arg = arg, .n = n, .width = width, .joined = 1, .inside = 1};
  atomic_init(&l.next, 0);
  atomic_init(&l.cancelled, false);
  if (width > 1) {
    pthread_mutex_lock(&g_pool.mu);
    /* enough threads for this loop beside the ones busy in other loops' chunks now */
    int busy = 0;
    for (pool_loop *o = g_pool.head; o; o = o->next_loop) busy += o->inside;
    pool_grow(busy + width - 1);
    if (g_pool.tail) g_pool.tail->next_loop = &l;
    else g_pool.head = &l;
    g_pool.tail = &l;
    pthread_cond_broadcast(&g_pool.work);
    pthread_mutex_unlock(&g_pool.mu);
  }
  run_chunks(&l, 0);
  if (width > 1) {
    pthread_mutex_lock(&g_pool.mu);
    pool_loop **pp = &g_pool.head, *prev = NULL;
    while (*pp != &l) {
      prev = *pp;
      pp = &(*pp)->next_loop;
    }
    *pp = l.next_loop;
    if (g_pool.tail == &l) g_pool.tail = prev;
    pthread_cond_broadcast(&g_pool.done); /* vf_pool_shutdown waits for an empty list */
    l.inside--;
    while (l.inside > 0)
      pthread_cond_wait(&g_pool.done, &g_pool.mu);
    pthread_mutex_unlock(&g_pool.mu);
  }
  if (!atomic_load(&l.cancelled)) return VF_OK;
  if (vf_check_cancel(err) == VF_OK) /* the flag was reset meanwhile: still stopped short */
    return vf_error_set(err, VF_ECANCELED, "interrupted");
  return VF_ECANCELED;
}

/* vf_pool_threads(): see pool.h. */
int vf_pool_threads(void) {
  pthread_mutex_lock(&g_pool.mu);
  int n = g_pool.nthreads;
  pthread_mutex_unlock(&g_pool.mu);
  return n;
}

/* vf_pool_shutdown(): see pool.h. */
void vf_pool_shutdown(void) {
  pthread_mutex_lock(&g_pool.mu);
  while (g_pool.head) /* a loop still runs: let it finish (its caller unlinks it) */
    pthread_cond_wait(&g_pool.done, &g_pool.mu);
  int n = g_pool.nthreads;
  pthread_t th[VF_POOL_MAX_THREADS];
  memcpy(th, g_pool.th, (size_t)n * sizeof th[0]);
  g_pool.stopping = true;
  pthread_cond_broadcast(&g_pool.work);
  pthread_mutex_unlock(&g_pool.mu);
  for (int i = 0; i < n; i++)
    pthread_join(th[i], NULL);
  pthread_mutex_lock(&g_pool.mu);
  g_pool.nthreads = 0;
  g_pool.generation++;
  g_pool.stopping = false;
  pthread_mutex_unlock(&g_pool.mu);
}

/* ----------------------------------------------------------------- queue */

struct vf_queue {
  pthread_mutex_t mu;
  pthread_cond_t not_empty, not_full;
  unsigned char *ring;
  size_t cap, size, head, len;
  unsigned long wake_gen;
  bool closed;
};

/* vf_queue_create(): see pool.h. */
vf_status vf_queue_create(size_t capacity, size_t item_size, vf_queue **out, vf_error *err) {
  *out = NULL;
  if (capacity == 0 || item_size == 0)
    return vf_error_set(err, VF_EINTERNAL, "queue: capacity and item size must be positive");
  vf_queue *q = vf_calloc(1, sizeof *q);
  unsigned char *ring = vf_mallocarray(capacity, item_size);
  if (!q || !ring) {
    free(q);
    free(ring);
    return vf_error_set(err, VF_ENOMEM, "queue: out of memory for %zu items of %zu bytes",
                        capacity, item_size);
  }
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->not_empty, NULL);
  pthread_cond_init(&q->not_full, NULL);
  q->ring = ring;
  q->cap = capacity;
  q->size = item_size;
  *out = q;
  return VF_OK;
}

/* vf_queue_free(): no thread may be inside a call on `q`. */
void vf_queue_free(vf_queue *q) {
  if (!q) return;
  pthread_mutex_destroy(&q->mu);
  pthread_cond_destroy(&q->not_empty);
  pthread_cond_destroy(&q->not_full);
  free(q->ring);
  free(q);
}

/* vf_queue_push(): see pool.h. */
vf_queue_rc vf_queue_push(vf_queue *q, const void *item) {
  pthread_mutex_lock(&q->mu);
  while (!q->closed && q->len == q->cap)
    pthread_cond_wait(&q->not_full, &q->mu);
  if (q->closed) {
    pthread_mutex_unlock(&q->mu);
    return VF_QUEUE_CLOSED;
  }
  memcpy(q->ring + ((q->head + q->len) % q->cap) * q->size, item, q->size);
  q->len++;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->mu);
  return VF_QUEUE_OK;
}

/* vf_queue_pop(): see pool.h. */
vf_queue_rc vf_queue_pop(vf_queue *q, void *item, double timeout_s, unsigned long *wake_seen) {
  struct timespec ts = {0};
  if (timeout_s >= 0) {
    clock_gettime(CLOCK_REALTIME, &ts);
    double end = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + timeout_s;
    ts.tv_sec = (time_t)end;
    ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
  }
  vf_queue_rc rc = VF_QUEUE_OK;
  pthread_mutex_lock(&q->mu);
  unsigned long gen = wake_seen ? *wake_seen : q->wake_gen;
  while (q->len == 0 && !q->closed && q->wake_gen == gen) {
    if (timeout_s < 0) pthread_cond_wait(&q->not_empty, &q->mu);
    else if (pthread_cond_timedwait(&q->not_empty, &q->mu, &ts) == ETIMEDOUT) break;
  }
  if (q->len > 0) {
    memcpy(item, q->ring + q->head * q->size, q->size);
    q->head = (q->head + 1) % q->cap;
    q->len--;
    pthread_cond_signal(&q->not_full);
  } else if (q->closed) {
    rc = VF_QUEUE_CLOSED;
  } else if (q->wake_gen != gen) {
    rc = VF_QUEUE_WOKEN;
    *wake_seen = q->wake_gen;
  } else {
    rc = VF_QUEUE_TIMEOUT;
  }
  pthread_mutex_unlock(&q->mu);
  return rc;
}

/* vf_queue_close(): see pool.h. */
void vf_queue_close(vf_queue *q) {
  pthread_mutex_lock(&q->mu);
  q->closed = true;
  pthread_cond_broadcast(&q->not_empty);
  pthread_cond_broadcast(&q->not_full);
  pthread_mutex_unlock(&q->mu);
}

/* vf_queue_wake(): see pool.h. */
void vf_queue_wake(vf_queue *q) {
  pthread_mutex_lock(&q->mu);
  q->wake_gen++;
  pthread_cond_broadcast(&q->not_empty);
  pthread_mutex_unlock(&q->mu);
}

/* vf_queue_len(): see pool.h. */
size_t vf_queue_len(vf_queue *q) {
  pthread_mutex_lock(&q->mu);
  size_t n = q->len;
  pthread_mutex_unlock(&q->mu);
  return n;
}
