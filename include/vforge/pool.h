/*
 * vforge/pool.h — the process's one thread pool (a parallel-for with dynamic chunking) and a
 * bounded multi-producer multi-consumer queue (issue 15 item 3; docs/DESIGN.md "Threads").
 *
 * Why one pool: data-parallel steps (k-means assignment, IVF encoding and search, brute-force
 * scoring, multi-range HTTP reads) used to start threads for every call and cut their work into
 * one static slice per thread, so a core taken by another process slowed the whole step to the
 * pace of its slowest slice.  Here the threads are started once (lazily, on the first loop that
 * wants them) and sleep on a condition variable between loops; a loop's chunks are handed out one
 * at a time from an atomic counter, so a slow core simply takes fewer chunks.
 *
 * Contract of vf_pool_for(n, width, fn, arg, err):
 *   - fn(arg, c, w) runs exactly once for every chunk c in [0, n) (unless cancelled, below), on
 *     at most `width` threads at once (width <= 0: vf_threads()), the calling thread included.
 *     `w` in [0, width) names the thread running the chunk within this loop: index per-thread
 *     scratch by `w`, never by a thread id.  Worker 0 is the caller.
 *   - Chunks are handed out in increasing order, but which thread runs which chunk, and when,
 *     is not fixed: a chunk's result must depend only on c (write chunk c's output to its own
 *     place, reduce afterwards in chunk order) for the loop to be bit-identical at any width.
 *   - The call returns when every chunk that started has finished; nothing of the loop runs
 *     afterwards.  Memory written by the chunks is visible to the caller then.
 *   - Cancellation: before a chunk is handed out vf_cancelled() is checked; once set, no further
 *     chunk starts, the running ones finish, and the call returns VF_ECANCELED (err says
 *     "interrupted").  A chunk that runs long polls vf_cancelled() itself.
 *   - Recursion: a chunk may call vf_pool_for (the inner loop runs on that thread, helped by idle
 *     pool threads) — the caller always works on its own loop, so a loop finishes even when no
 *     pool thread is free.  What a chunk must NOT do is wait for another chunk (of its own loop
 *     or of another loop running on the pool): chunks may all run one after another on a single
 *     thread, so a barrier, a condition another chunk signals or a vf_queue another chunk fills
 *     can deadlock.  Long-lived role threads (a prefetching reader, a download thread) that block
 *     on such handoffs are therefore ordinary threads, not pool tasks.
 *   - The pool grows to the widest loop asked for (at most VF_POOL_MAX_THREADS - 1 threads
 *     beside the callers) and never shrinks; idle threads sleep (no spinning).  Several threads
 *     may run loops at the same time; the pool's threads join the oldest loop that has chunks
 *     left and room for another worker.  A child process after fork() starts without pool
 *     threads (its loops run on the caller until it starts new ones).
 *
 * Contract of vf_queue (fixed-size items, copied in and out; capacity fixed at creation):
 *   - vf_queue_push blocks while the queue is full; vf_queue_pop blocks while it is empty.
 *   - vf_queue_close: later pushes fail with VF_QUEUE_CLOSED at once, blocked pushers wake with
 *     it, poppers drain what is queued and then get VF_QUEUE_CLOSED.
 *   - vf_queue_wake: a consumer that passes its own wake counter to vf_queue_pop gets
 *     VF_QUEUE_WOKEN from its next pop that finds the queue empty (at once, or when it would
 *     otherwise block) — for an event the queue does not carry (a flush request).  A wake that
 *     comes between the consumer's own check of that event and its pop is not lost.
 *   - FIFO; any number of producers and consumers; no allocation after vf_queue_create.
 */
#ifndef VFORGE_POOL_H
#define VFORGE_POOL_H

#include <stddef.h>

#include "vforge/util.h"

#define VF_POOL_MAX_THREADS 256

/* One chunk of a parallel-for: c in [0, n), w in [0, width) (see above). */
typedef void (*vf_pool_fn)(void *arg, size_t c, int w);

/*! vf_pool_for() : run fn(arg, c, w) for c in [0, n) on up to `width` threads (<= 0:
 *  vf_threads()), the caller being worker 0.  @return : VF_OK, or VF_ECANCELED when
 *  vf_cancelled() stopped it before every chunk started. */
vf_status vf_pool_for(size_t n, int width, vf_pool_fn fn, void *arg, vf_error *err);

/*! vf_pool_width() : the number of workers vf_pool_for(n, width, ...) would use:
 *  min(n, width <= 0 ? vf_threads() : width, VF_POOL_MAX_THREADS), at least 1. */
int vf_pool_width(size_t n, int width);

/*! vf_pool_threads() : the pool's threads started so far (0 before the first parallel loop). */
int vf_pool_threads(void);

/*! vf_pool_shutdown() : stop and join the pool's threads once no loop runs (tests, an embedding
 *  application before it unloads the library); the next loop starts them again. */
void vf_pool_shutdown(void);

/* --------------------------------------------------------- bounded queue */

typedef struct vf_queue vf_queue;

typedef enum vf_queue_rc {
  VF_QUEUE_OK = 0,
  VF_QUEUE_CLOSED,  /* closed (pop: and drained) */
  VF_QUEUE_TIMEOUT, /* the deadline passed */
  VF_QUEUE_WOKEN    /* vf_queue_wake() */
} vf_queue_rc;

/*! vf_queue_create() : a queue of at most `capacity` items of `item_size` bytes each. */
vf_status vf_queue_create(size_t capacity, size_t item_size, vf_queue **out, vf_error *err);
void vf_queue_free(vf_queue *q);
/*! vf_queue_push() : copy `item` in, waiting for room; VF_QUEUE_CLOSED once closed. */
vf_queue_rc vf_queue_push(vf_queue *q, const void *item);
/*! vf_queue_pop() : copy the oldest item to `item`, waiting until one is queued, the queue is
 *  closed and drained, (timeout_s >= 0) timeout_s seconds pass, or (wake_seen not NULL) the wake
 *  count differs from *wake_seen, which is then updated (start it at 0). */
vf_queue_rc vf_queue_pop(vf_queue *q, void *item, double timeout_s, unsigned long *wake_seen);
void vf_queue_close(vf_queue *q);
void vf_queue_wake(vf_queue *q);
/*! vf_queue_len() : items queued now (a snapshot). */
size_t vf_queue_len(vf_queue *q);

#endif
