/* memcpy bandwidth on a buffer of the given size (the ceiling for a PLAIN uncompressed scan).
 * Prints {"bytes":N,"seconds":S,"mb_per_s":X} for the best of several copies. */
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
  char *a = malloc(n), *b = malloc(n);
  if (!a || !b) return 1;
  memset(a, 1, n);
  memset(b, 2, n);
  double best = 1e9;
  for (int r = 0; r < 5; r++) {
    double t = now();
    memcpy(b, a, n);
    t = now() - t;
    if (t < best) best = t;
    a[r] = b[n - 1 - (size_t)r]; /* keep the copies observable */
  }
  printf("{\"bytes\":%zu,\"seconds\":%.6f,\"mb_per_s\":%.1f}\n", n, best, (double)n / 1e6 / best);
  free(a);
  free(b);
  return 0;
}
