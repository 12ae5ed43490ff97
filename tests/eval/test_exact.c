/* Unit tests of brute-force's exact kernel (src/eval/bf_exact.c): the portable reference follows
 * the documented order (element i into partial sum i % 16, a halving tree), computed here
 * independently; the vector variant equals it bit for bit on every dimension 0..100 and on data
 * where the order of the additions shows (+-2^30 spikes that cancel, so which small terms
 * survive depends on when they are added; tiny and huge magnitudes; zeros). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bf_internal.h"
#include "vf_test.h"

static uint64_t rng = 88172645463325252ull;
static double uniform(void) { /* xorshift64 */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) * 0x1p-53;
}

static float draw(void) {
  double r = uniform(), v = uniform() * 2 - 1;
  if (r < 0.2) return (uniform() < 0.5 ? -1.0f : 1.0f) * 0x1p30f; /* cancelling spikes */
  if (r < 0.3) return (float)(v * 1e-20);
  if (r < 0.35) return 0.0f;
  return (float)v;
}

/* the contract, written out: 16 partial sums, element i into sum i % 16, then the tree */
static double documented(bf_exact_op op, const float *q, const float *x, size_t d) {
  double a[16] = {0};
  for (size_t i = 0; i < d; i++) {
    double t = op == BF_EX_DOT ? (double)q[i] * (double)x[i] : (double)q[i] - (double)x[i];
    if (op == BF_EX_L2SQ) t = t * t;
    if (op == BF_EX_L1) t = fabs(t);
    a[i % 16] += t;
  }
  for (size_t w = 8; w > 0; w /= 2)
    for (size_t l = 0; l < w; l++) a[l] += a[l + w];
  return a[0];
}

static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

VF_TEST(exact_reference_follows_the_documented_order) {
  float q[100], x[100];
  int bad = 0;
  for (int rep = 0; rep < 50; rep++)
    for (size_t d = 0; d <= 100; d++) {
      for (size_t i = 0; i < d; i++) {
        q[i] = draw();
        x[i] = draw();
      }
      for (int op = BF_EX_DOT; op <= BF_EX_L1; op++)
        if (!same_bits(bf_exact_sum_variant((bf_exact_op)op, q, x, d, false),
                       documented((bf_exact_op)op, q, x, d)))
          bad++;
    }
  CHECK_EQ_INT(bad, 0);
}

VF_TEST(exact_vector_variant_equals_the_reference) {
  float q[100], x[100];
  int bad = 0, order_shows = 0;
  for (int rep = 0; rep < 200; rep++)
    for (size_t d = 0; d <= 100; d++) {
      for (size_t i = 0; i < d; i++) {
        q[i] = draw();
        x[i] = draw();
      }
      for (int op = BF_EX_DOT; op <= BF_EX_L1; op++) {
        double ref = bf_exact_sum_variant((bf_exact_op)op, q, x, d, false);
        double vec = bf_exact_sum_variant((bf_exact_op)op, q, x, d, true);
        if (!same_bits(ref, vec)) bad++;
        /* the data must be able to tell orders apart: a plain left-to-right sum differs */
        double seq = 0;
        for (size_t i = 0; i < d; i++) {
          double t = op == BF_EX_DOT ? (double)q[i] * (double)x[i] : (double)q[i] - (double)x[i];
          seq += op == BF_EX_L2SQ ? t * t : op == BF_EX_L1 ? fabs(t) : t;
        }
        if (!same_bits(seq, ref)) order_shows++;
      }
    }
  CHECK_EQ_INT(bad, 0);
  CHECK(order_shows > 1000); /* else this test could not see a wrong order */
}

VF_TEST(exact_dispatch_uses_one_of_the_variants) {
  float q[37], x[37];
  for (int i = 0; i < 37; i++) {
    q[i] = draw();
    x[i] = draw();
  }
  double got = bf_exact_sum(BF_EX_DOT, q, x, 37);
  CHECK(same_bits(got, bf_exact_sum_variant(BF_EX_DOT, q, x, 37, false)));
}
