/* Unit tests for src/util/pool.c: the parallel-for runs every chunk exactly once on at most
 * `width` workers with worker ids below it, hands chunks out dynamically (a chunk held back does
 * not hold back the others), survives nested and concurrent loops, stops on cancellation, works
 * after vf_pool_shutdown and in a forked child; the bounded queue blocks, closes, times out,
 * wakes and loses nothing under several producers and consumers.  No test depends on timing
 * beyond generous deadlines (the machine may be loaded); state shared between threads goes
 * through atomics, mutexes or the pool's own join, so ThreadSanitizer has nothing to report
 * (clang -fsanitize=thread of this file, tests/vf_test_main.c and the src/util sources, run with
 * TSAN_OPTIONS=die_after_fork=0: TSan refuses threads in a forked child otherwise). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vf_test.h"
#include "vforge/pool.h"

#define N_CHUNKS 1000

typedef struct count_job {
  atomic_int runs[N_CHUNKS];
  atomic_int inside, max_inside, bad_worker;
  int width;
  double out[N_CHUNKS];
} count_job;

static void count_chunk(void *arg, size_t c, int w) {
  count_job *j = arg;
  int now = atomic_fetch_add(&j->inside, 1) + 1;
  int m = atomic_load(&j->max_inside);
  while (now > m && !atomic_compare_exchange_weak(&j->max_inside, &m, now)) {
  }
  if (w < 0 || w >= j->width) atomic_fetch_add(&j->bad_worker, 1);
  atomic_fetch_add(&j->runs[c], 1);
  double s = 0; /* a result that depends on c only */
  for (size_t i = 1; i <= 200; i++) s += 1.0 / (double)(c * 200 + i);
  j->out[c] = s;
  atomic_fetch_sub(&j->inside, 1);
}

static double ordered_sum(const double *v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += v[i];
  return s;
}

VF_TEST(test_pool_every_chunk_once) {
  double want = 0;
  int widths[] = {1, 2, 3, 8, 0};
  for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
    count_job *j = vf_calloc(1, sizeof *j);
    CHECK(j != NULL);
    if (!j) return;
    j->width = vf_pool_width(N_CHUNKS, widths[wi]);
    vf_error err;
    vf_error_clear(&err);
    CHECK_OK(vf_pool_for(N_CHUNKS, widths[wi], count_chunk, j, &err));
    for (size_t c = 0; c < N_CHUNKS; c++) CHECK_EQ_INT(atomic_load(&j->runs[c]), 1);
    CHECK_EQ_INT(atomic_load(&j->bad_worker), 0);
    CHECK(atomic_load(&j->max_inside) <= j->width);
    /* the chunk-ordered reduction is bit-identical at every width */
    double s = ordered_sum(j->out, N_CHUNKS);
    if (wi == 0) want = s;
    CHECK(memcmp(&s, &want, sizeof s) == 0);
    free(j);
  }
  CHECK_EQ_INT(vf_pool_width(3, 8), 3);
  CHECK_EQ_INT(vf_pool_width(0, 8), 1);
  CHECK_EQ_INT(vf_pool_width(1000, 100000), VF_POOL_MAX_THREADS);
  vf_error err;
  CHECK_OK(vf_pool_for(0, 4, count_chunk, NULL, &err)); /* nothing to do: fn never called */
}

/* Chunk 0 waits until every other chunk is done.  Handed out one at a time, the other worker
 * takes all of them; a static split (chunk 0 and half the others on one thread) would wait for
 * itself and time out. */
typedef struct hold_job {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t n, done;
  bool timed_out;
  int worker_of_0;
  atomic_int by_worker[2];
} hold_job;

static void hold_chunk(void *arg, size_t c, int w) {
  hold_job *j = arg;
  atomic_fetch_add(&j->by_worker[w], 1);
  pthread_mutex_lock(&j->mu);
  if (c == 0) {
    j->worker_of_0 = w;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    while (j->done < j->n - 1)
      if (pthread_cond_timedwait(&j->cv, &j->mu, &ts) != 0) {
        j->timed_out = true;
        break;
      }
  } else {
    j->done++;
    pthread_cond_broadcast(&j->cv);
  }
  pthread_mutex_unlock(&j->mu);
}

VF_TEST(test_pool_dynamic_chunks) {
  hold_job j;
  memset(&j, 0, sizeof j);
  pthread_mutex_init(&j.mu, NULL);
  pthread_cond_init(&j.cv, NULL);
  j.n = 64;
  vf_error err;
  CHECK_OK(vf_pool_for(j.n, 2, hold_chunk, &j, &err));
  CHECK(!j.timed_out);
  CHECK_EQ_INT(j.done, j.n - 1);
  /* the worker held by chunk 0 ran that chunk only */
  CHECK_EQ_INT(atomic_load(&j.by_worker[j.worker_of_0]), 1);
  CHECK_EQ_INT(atomic_load(&j.by_worker[1 - j.worker_of_0]), (long long)j.n - 1);
  pthread_mutex_destroy(&j.mu);
  pthread_cond_destroy(&j.cv);
  CHECK(vf_pool_threads() >= 1);
}

/* nested loops: every chunk of the outer loop runs an inner loop of its own */
typedef struct nest_job {
  atomic_int inner_runs;
  atomic_int failures;
} nest_job;

static void inner_chunk(void *arg, size_t c, int w) {
  (void)c;
  (void)w;
  nest_job *j = arg;
  atomic_fetch_add(&j->inner_runs, 1);
}

static void outer_chunk(void *arg, size_t c, int w) {
  (void)c;
  (void)w;
  nest_job *j = arg;
  vf_error err;
  if (vf_pool_for(50, 4, inner_chunk, j, &err) != VF_OK) atomic_fetch_add(&j->failures, 1);
}

VF_TEST(test_pool_nested_loops) {
  nest_job j;
  atomic_init(&j.inner_runs, 0);
  atomic_init(&j.failures, 0);
  vf_error err;
  CHECK_OK(vf_pool_for(40, 4, outer_chunk, &j, &err));
  CHECK_EQ_INT(atomic_load(&j.failures), 0);
  CHECK_EQ_INT(atomic_load(&j.inner_runs), 40 * 50);
}

/* loops posted from several threads at once */
static void *concurrent_caller(void *arg) {
  count_job *j = arg;
  vf_error err;
  for (int rep = 0; rep < 5; rep++)
    if (vf_pool_for(N_CHUNKS / 5, j->width, count_chunk, j, &err) != VF_OK)
      atomic_fetch_add(&j->bad_worker, 1000);
  return NULL;
}

VF_TEST(test_pool_concurrent_callers) {
  enum { CALLERS = 4 };
  count_job *jobs = vf_calloc(CALLERS, sizeof *jobs);
  CHECK(jobs != NULL);
  if (!jobs) return;
  pthread_t th[CALLERS];
  for (int i = 0; i < CALLERS; i++) {
    jobs[i].width = 3;
    CHECK_EQ_INT(pthread_create(&th[i], NULL, concurrent_caller, &jobs[i]), 0);
  }
  for (int i = 0; i < CALLERS; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < CALLERS; i++) {
    CHECK_EQ_INT(atomic_load(&jobs[i].bad_worker), 0);
    CHECK(atomic_load(&jobs[i].max_inside) <= 3);
    for (size_t c = 0; c < N_CHUNKS / 5; c++) CHECK_EQ_INT(atomic_load(&jobs[i].runs[c]), 5);
  }
  free(jobs);
}

/* cancellation: chunk 10 requests it; no chunk starts afterwards */
typedef struct cancel_job {
  atomic_int started;
  atomic_int after_cancel;
} cancel_job;

static void cancel_chunk(void *arg, size_t c, int w) {
  (void)w;
  cancel_job *j = arg;
  atomic_fetch_add(&j->started, 1);
  if (vf_cancelled()) atomic_fetch_add(&j->after_cancel, 1);
  if (c == 10) vf_cancel_request(0);
}

VF_TEST(test_pool_cancellation) {
  int widths[] = {1, 2, 4};
  for (size_t wi = 0; wi < 3; wi++) {
    cancel_job j;
    atomic_init(&j.started, 0);
    atomic_init(&j.after_cancel, 0);
    vf_error err;
    vf_error_clear(&err);
    CHECK_STATUS(vf_pool_for(100000, widths[wi], cancel_chunk, &j, &err), VF_ECANCELED);
    CHECK(strstr(err.msg, "interrupted") != NULL);
    CHECK(atomic_load(&j.started) >= 11);
    CHECK(atomic_load(&j.started) < 100000);
    /* a chunk already handed out when the flag rose may see it; at most one per worker */
    CHECK(atomic_load(&j.after_cancel) < widths[wi]);
    vf_cancel_reset();
  }
}

VF_TEST(test_pool_shutdown_and_fork) {
  count_job *j = vf_calloc(1, sizeof *j);
  CHECK(j != NULL);
  if (!j) return;
  j->width = 4;
  vf_error err;
  CHECK_OK(vf_pool_for(100, 4, count_chunk, j, &err));
  CHECK(vf_pool_threads() >= 1);
  vf_pool_shutdown();
  CHECK_EQ_INT(vf_pool_threads(), 0);
  CHECK_OK(vf_pool_for(100, 4, count_chunk, j, &err)); /* started again */
  for (size_t c = 0; c < 100; c++) CHECK_EQ_INT(atomic_load(&j->runs[c]), 2);
  CHECK(vf_pool_threads() >= 1);
  pid_t pid = fork();
  if (pid == 0) { /* the child: no pool threads, loops still complete */
    count_job *k = vf_calloc(1, sizeof *k);
    if (!k) _exit(3);
    k->width = 4;
    if (vf_pool_for(N_CHUNKS, 4, count_chunk, k, &err) != VF_OK) _exit(4);
    for (size_t c = 0; c < N_CHUNKS; c++)
      if (atomic_load(&k->runs[c]) != 1) _exit(5);
    _exit(0);
  }
  CHECK(pid > 0);
  int status = 0;
  CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  free(j);
}

/* ----------------------------------------------------------------- queue */

VF_TEST(test_queue_basics) {
  vf_queue *q = NULL;
  vf_error err;
  CHECK_STATUS(vf_queue_create(0, 8, &q, &err), VF_EINTERNAL);
  CHECK_OK(vf_queue_create(3, sizeof(int), &q, &err));
  if (!q) return;
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(vf_queue_push(q, &i), VF_QUEUE_OK);
  CHECK_EQ_INT(vf_queue_len(q), 3);
  int v = -1;
  for (int i = 0; i < 3; i++) { /* FIFO */
    CHECK_EQ_INT(vf_queue_pop(q, &v, -1, NULL), VF_QUEUE_OK);
    CHECK_EQ_INT(v, i);
  }
  CHECK_EQ_INT(vf_queue_pop(q, &v, 0.05, NULL), VF_QUEUE_TIMEOUT);
  v = 7;
  CHECK_EQ_INT(vf_queue_push(q, &v), VF_QUEUE_OK);
  vf_queue_close(q);
  CHECK_EQ_INT(vf_queue_push(q, &v), VF_QUEUE_CLOSED);
  CHECK_EQ_INT(vf_queue_pop(q, &v, -1, NULL), VF_QUEUE_OK); /* drained after the close */
  CHECK_EQ_INT(v, 7);
  CHECK_EQ_INT(vf_queue_pop(q, &v, -1, NULL), VF_QUEUE_CLOSED);
  vf_queue_free(q);
}

typedef struct q_arg {
  vf_queue *q;
  int base, count;
  atomic_llong *sum;
  atomic_int *seen; /* per value */
  vf_queue_rc rc;
} q_arg;

static void *q_producer(void *p) {
  q_arg *a = p;
  for (int i = 0; i < a->count; i++) {
    int v = a->base + i;
    if (vf_queue_push(a->q, &v) != VF_QUEUE_OK) break;
  }
  return NULL;
}

static void *q_consumer(void *p) {
  q_arg *a = p;
  int v;
  vf_queue_rc rc;
  while ((rc = vf_queue_pop(a->q, &v, -1, NULL)) == VF_QUEUE_OK) {
    atomic_fetch_add(a->sum, v);
    atomic_fetch_add(&a->seen[v], 1);
  }
  a->rc = rc;
  return NULL;
}

VF_TEST(test_queue_mpmc) {
  enum { P = 3, C = 3, EACH = 5000 };
  vf_queue *q = NULL;
  vf_error err;
  CHECK_OK(vf_queue_create(4, sizeof(int), &q, &err)); /* small: pushes block often */
  if (!q) return;
  atomic_llong sum;
  atomic_init(&sum, 0);
  atomic_int *seen = vf_calloc(P * EACH, sizeof *seen);
  CHECK(seen != NULL);
  if (!seen) return;
  q_arg pa[P], ca[C];
  pthread_t pt[P], ct[C];
  for (int i = 0; i < C; i++) {
    ca[i] = (q_arg){.q = q, .sum = &sum, .seen = seen};
    CHECK_EQ_INT(pthread_create(&ct[i], NULL, q_consumer, &ca[i]), 0);
  }
  for (int i = 0; i < P; i++) {
    pa[i] = (q_arg){.q = q, .base = i * EACH, .count = EACH};
    CHECK_EQ_INT(pthread_create(&pt[i], NULL, q_producer, &pa[i]), 0);
  }
  for (int i = 0; i < P; i++) pthread_join(pt[i], NULL);
  vf_queue_close(q);
  for (int i = 0; i < C; i++) pthread_join(ct[i], NULL);
  long long n = (long long)P * EACH;
  CHECK_EQ_INT(atomic_load(&sum), n * (n - 1) / 2);
  for (long long v = 0; v < n; v++) CHECK_EQ_INT(atomic_load(&seen[v]), 1);
  for (int i = 0; i < C; i++) CHECK_EQ_INT(ca[i].rc, VF_QUEUE_CLOSED);
  free(seen);
  vf_queue_free(q);
}

/* a producer blocked on a full queue wakes with CLOSED; a blocked consumer wakes on wake() */
static void *q_push_one(void *p) {
  q_arg *a = p;
  int v = 1;
  a->rc = vf_queue_push(a->q, &v);
  return NULL;
}

static void *q_pop_one(void *p) {
  q_arg *a = p;
  int v;
  unsigned long seen = 0;
  a->rc = vf_queue_pop(a->q, &v, 60, &seen);
  return NULL;
}

VF_TEST(test_queue_close_and_wake) {
  vf_queue *q = NULL;
  vf_error err;
  CHECK_OK(vf_queue_create(1, sizeof(int), &q, &err));
  if (!q) return;
  int v = 0;
  CHECK_EQ_INT(vf_queue_push(q, &v), VF_QUEUE_OK); /* full */
  q_arg a = {.q = q, .rc = VF_QUEUE_TIMEOUT};
  pthread_t t;
  CHECK_EQ_INT(pthread_create(&t, NULL, q_push_one, &a), 0);
  vf_queue_close(q);
  pthread_join(t, NULL);
  CHECK_EQ_INT(a.rc, VF_QUEUE_CLOSED);
  vf_queue_free(q);

  CHECK_OK(vf_queue_create(2, sizeof(int), &q, &err));
  if (!q) return;
  q_arg b = {.q = q, .rc = VF_QUEUE_OK};
  CHECK_EQ_INT(pthread_create(&t, NULL, q_pop_one, &b), 0);
  /* one wake, whether it comes before the popper blocks or after: not lost */
  vf_queue_wake(q);
  pthread_join(t, NULL);
  CHECK_EQ_INT(b.rc, VF_QUEUE_WOKEN);
  /* a consumer's own counter: the same wake is reported once, an item comes before it */
  unsigned long seen = 0;
  v = 5;
  CHECK_EQ_INT(vf_queue_pop(q, &v, 0, &seen), VF_QUEUE_WOKEN);
  CHECK_EQ_INT(seen, 1);
  CHECK_EQ_INT(vf_queue_pop(q, &v, 0.01, &seen), VF_QUEUE_TIMEOUT);
  vf_queue_wake(q);
  CHECK_EQ_INT(vf_queue_push(q, &v), VF_QUEUE_OK);
  CHECK_EQ_INT(vf_queue_pop(q, &v, -1, &seen), VF_QUEUE_OK);
  CHECK_EQ_INT(v, 5);
  CHECK_EQ_INT(vf_queue_pop(q, &v, -1, &seen), VF_QUEUE_WOKEN);
  CHECK_EQ_INT(vf_queue_pop(q, &v, 0, NULL), VF_QUEUE_TIMEOUT); /* no counter: no wake */
  vf_queue_free(q);
}
