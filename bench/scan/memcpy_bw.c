/* memcpy bandwidth on a buffer of the given size (the ceiling for a PLAIN uncompressed scan).
 * Prints {"bytes":N,"seconds":S,"mb_per_s":X}: the best of 5 timings of one copy (of the mean of
 * several copies when N is under 64 MiB). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)307200000;
  if (n == 0) n = 1;
  char *a = malloc(n), *b = malloc(n);
  if (!a || !b) return 1;
  memset(a, 1, n);
  memset(b, 2, n);
  /* small sizes: several copies per timing, so the clock's resolution does not decide */
  size_t reps = n >= ((size_t)64 << 20) ? 1 : ((size_t)64 << 20) / (n ? n : 1);
  double best = 1e9;
  for (int r = 0; r < 5; r++) {
    double t = now();
    for (size_t k = 0; k < reps; k++) {
      memcpy(b, a, n);
      a[k % n] = b[(n - 1 - k) % n]; /* keep the copies observable */
    }
    t = (now() - t) / (double)reps;
    if (t < best) best = t;
  }
  printf("{\"bytes\":%zu,\"seconds\":%.9g,\"mb_per_s\":%.1f}\n", n, best, (double)n / 1e6 / best);
  free(a);
  free(b);
  return 0;
}
