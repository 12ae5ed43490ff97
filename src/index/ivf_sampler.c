/*
 * ivf_sampler — a seeded, stratified random sample of the logical rows of a stream (ivf.h).
 *
 * Known total (total_rows > cap): the rows are cut into `cap` strata [floor(i*T/cap),
 * floor((i+1)*T/cap)) and one uniformly random row of each is kept; the row of the current
 * stratum is drawn when the stratum starts, so rows are copied only when they are kept.
 *
 * Unknown total (or total_rows <= cap): a stratified reservoir.  The sample is a sequence of
 * contiguous strata of the stream, each represented by one uniformly random row of it (a
 * reservoir of size one per stratum, weighted by its row count).  Strata start one row wide;
 * when all `cap` slots hold a full stratum and another row arrives, neighbouring strata are
 * merged pairwise (the survivor of a pair is drawn with probability proportional to the rows
 * of each side, so it stays uniform over the merged stratum) and the stratum width doubles.
 * Every stratum has the same width except the last, so every part of the stream — head, tail,
 * every k-th file, a small late batch — keeps a share of the sample proportional to its rows,
 * and the sample holds between cap/2 and cap rows.
 *
 * When more rows arrive than a known total announced, the sampler turns its strata into
 * reservoir strata and goes on as if the total had been unknown (nothing is dropped).
 *
 * Keyed (ivf_sampler_offer_keyed): the sample is the `cap` rows of smallest key (a hash of the
 * point id and the seed), kept in a max-heap on the key and sorted by it by
 * ivf_sampler_sort_keyed() — a uniform sample that, with the order it is returned in, does not
 * depend on the order the rows arrive in (the local store's segments follow the order its
 * loader's workers committed them).
 *
 * Memory: cap x dim floats plus one counter per slot (keyed: plus one heap index per slot).
 * Deterministic for a given seed and input.
 */
#include <stdlib.h>
#include <string.h>

#include "vforge/ivf.h"

struct ivf_sampler {
  size_t dim;
  uint64_t cap;
  uint64_t total; /* known total (> cap) while in stratum mode, else 0 */
  uint64_t seen;
  uint64_t rng;
  float *rows;    /* cap x dim */
  uint64_t *cnt;  /* rows of the stream each slot represents */
  uint64_t nst;   /* slots in use */
  /* stratum mode */
  uint64_t cur;   /* current stratum (of `cap`) */
  uint64_t pick;  /* global row kept for the current stratum */
  uint64_t cur_end; /* first row after the current stratum */
  /* reservoir mode */
  uint64_t width; /* rows per full stratum */
  /* keyed mode: cnt[slot] is the slot's key, heap[] the slots as a max-heap on it */
  bool keyed;
  size_t *heap;
};

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* uniform in [0, n), n > 0 */
static uint64_t rand_below(uint64_t *s, uint64_t n) {
  return (uint64_t)(((unsigned __int128)splitmix64(s) * n) >> 64);
}

static uint64_t stratum_start(const ivf_sampler *s, uint64_t i) {
  return (uint64_t)(((unsigned __int128)i * s->total) / s->cap);
}

static void stratum_enter(ivf_sampler *s, uint64_t i) {
  uint64_t a = stratum_start(s, i), b = stratum_start(s, i + 1);
  s->cur = i;
  s->cur_end = b;
  s->pick = a + rand_below(&s->rng, b - a); /* b > a since total > cap */
}

vf_status ivf_sampler_open(size_t dim, uint64_t cap, uint64_t total_rows, uint64_t seed,
                           ivf_sampler **out, vf_error *err) {
  *out = NULL;
  if (dim == 0) return vf_error_set(err, VF_EUSAGE, "ivf sampler: dimension must be > 0");
  if (cap == 0) return vf_error_set(err, VF_EUSAGE, "ivf sampler: sample size (cap) must be > 0");
  if (cap > SIZE_MAX / sizeof(float) / dim)
    return vf_error_set(err, VF_ENOMEM, "ivf sampler: %llu rows of dimension %zu do not fit in memory",
                        (unsigned long long)cap, dim);
  ivf_sampler *s = vf_calloc(1, sizeof *s);
  if (s) {
    s->rows = vf_mallocarray((size_t)cap * dim, sizeof(float));
    s->cnt = vf_mallocarray((size_t)cap, sizeof(uint64_t));
  }
  if (!s || !s->rows || !s->cnt) {
    ivf_sampler_close(s);
    return vf_error_set(err, VF_ENOMEM, "ivf sampler: out of memory for %llu x %zu floats",
                        (unsigned long long)cap, dim);
  }
  vf_advise_huge(s->rows, (size_t)cap * dim * sizeof(float)); /* fewer page faults */
  s->dim = dim;
  s->cap = cap;
  s->rng = seed ^ 0x5EED5A3B1E5ull;
  s->width = 1;
  if (total_rows > cap) {
    s->total = total_rows;
    stratum_enter(s, 0);
  }
  *out = s;
  return VF_OK;
}

/* stratum mode -> reservoir mode once the announced total is exceeded: the strata so far
 * become reservoir strata with their true row counts. */
static void to_reservoir(ivf_sampler *s) {
  uint64_t wmax = 1;
  for (uint64_t i = 0; i < s->nst; i++) {
    s->cnt[i] = stratum_start(s, i + 1) - stratum_start(s, i);
    if (s->cnt[i] > wmax) wmax = s->cnt[i];
  }
  s->width = wmax;
  s->total = 0;
}

/* merge slots pairwise (2i, 2i+1) -> i; the survivor is drawn in proportion to the rows */
static void merge_pairs(ivf_sampler *s) {
  uint64_t n = s->nst, m = 0;
  for (uint64_t i = 0; i < n; i += 2, m++) {
    uint64_t keep = i, c = s->cnt[i];
    if (i + 1 < n) {
      c += s->cnt[i + 1];
      if (rand_below(&s->rng, c) >= s->cnt[i]) keep = i + 1;
    }
    if (keep != m) memcpy(s->rows + m * s->dim, s->rows + keep * s->dim, s->dim * sizeof(float));
    s->cnt[m] = c;
  }
  s->nst = m;
  s->width *= 2;
}

static void offer_reservoir(ivf_sampler *s, const float *row) {
  if (s->nst > 0 && s->cnt[s->nst - 1] < s->width) {
    uint64_t j = s->nst - 1;
    s->cnt[j]++;
    if (rand_below(&s->rng, s->cnt[j]) == 0) memcpy(s->rows + j * s->dim, row, s->dim * sizeof(float));
    return;
  }
  if (s->nst == s->cap) {
    merge_pairs(s);
    if (s->cnt[s->nst - 1] < s->width) { /* an odd slot left over: it keeps filling */
      offer_reservoir(s, row);
      return;
    }
  }
  memcpy(s->rows + s->nst * s->dim, row, s->dim * sizeof(float));
  s->cnt[s->nst++] = 1;
}

vf_status ivf_sampler_offer(ivf_sampler *s, const float *rows, size_t n, vf_error *err) {
  (void)err;
  size_t i = 0;
  while (i < n && s->total) {
    if (s->seen >= s->total) {
      to_reservoir(s);
      break;
    }
    if (s->seen >= s->cur_end) stratum_enter(s, s->cur + 1);
    /* jump to the kept row of this stratum when it lies in this call */
    uint64_t need = s->pick - s->seen; /* pick >= seen within the stratum */
    if (s->pick < s->seen) need = s->cur_end - s->seen; /* already kept: skip to the end */
    if (need >= n - i) {
      s->seen += n - i;
      return VF_OK;
    }
    i += (size_t)need;
    s->seen += need;
    if (s->seen == s->pick) {
      memcpy(s->rows + s->nst * s->dim, rows + i * s->dim, s->dim * sizeof(float));
      s->cnt[s->nst++] = 1;
      i++;
      s->seen++;
    }
  }
  for (; i < n; i++, s->seen++) offer_reservoir(s, rows + i * s->dim);
  return VF_OK;
}

static bool key_above(const ivf_sampler *s, size_t a, size_t b) {
  return s->cnt[s->heap[a]] > s->cnt[s->heap[b]];
}

static void heap_down(ivf_sampler *s, size_t i) {
  size_t n = (size_t)s->nst;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && key_above(s, l, m)) m = l;
    if (r < n && key_above(s, r, m)) m = r;
    if (m == i) return;
    size_t t = s->heap[i];
    s->heap[i] = s->heap[m];
    s->heap[m] = t;
    i = m;
  }
}

static void heap_up(ivf_sampler *s, size_t i) {
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!key_above(s, i, p)) return;
    size_t t = s->heap[i];
    s->heap[i] = s->heap[p];
    s->heap[p] = t;
    i = p;
  }
}

vf_status ivf_sampler_offer_keyed(ivf_sampler *s, const float *rows, const uint64_t *keys, size_t n,
                                  vf_error *err) {
  if (!s->keyed) {
    if (s->seen)
      return vf_error_set(err, VF_EUSAGE, "ivf sampler: keyed rows after unkeyed ones");
    s->heap = vf_mallocarray((size_t)s->cap, sizeof *s->heap);
    if (!s->heap)
      return vf_error_set(err, VF_ENOMEM, "ivf sampler: out of memory for %llu heap slots",
                          (unsigned long long)s->cap);
    s->keyed = true;
    s->total = 0;
  }
  for (size_t i = 0; i < n; i++, s->seen++) {
    size_t slot;
    if (s->nst < s->cap) {
      slot = (size_t)s->nst++;
      s->heap[slot] = slot;
      s->cnt[slot] = keys[i];
      heap_up(s, slot);
    } else if (keys[i] < s->cnt[s->heap[0]]) {
      slot = s->heap[0];
      s->cnt[slot] = keys[i];
      heap_down(s, 0);
    } else {
      continue;
    }
    memcpy(s->rows + slot * s->dim, rows + i * s->dim, s->dim * sizeof(float));
  }
  return VF_OK;
}

static int cmp_slot_key(const void *a, const void *b, void *user) {
  const uint64_t *key = user;
  uint64_t x = key[*(const size_t *)a], y = key[*(const size_t *)b];
  return x < y ? -1 : x > y;
}

vf_status ivf_sampler_sort_keyed(ivf_sampler *s, vf_error *err) {
  if (!s->keyed || s->nst < 2) return VF_OK;
  size_t n = (size_t)s->nst, d = s->dim;
  float *tmp = vf_mallocarray(d, sizeof *tmp);
  if (!tmp) return vf_error_set(err, VF_ENOMEM, "ivf sampler: out of memory");
  /* heap[] becomes the slots in key order; then rows move along each cycle of that permutation
   * (position i takes the row of slot heap[i]) with one row of scratch */
  for (size_t i = 0; i < n; i++) s->heap[i] = i;
  qsort_r(s->heap, n, sizeof *s->heap, cmp_slot_key, s->cnt);
  for (size_t i = 0; i < n; i++) {
    if (s->heap[i] == i || s->heap[i] == SIZE_MAX) continue;
    memcpy(tmp, s->rows + i * d, d * sizeof *tmp);
    uint64_t k0 = s->cnt[i];
    size_t j = i;
    while (s->heap[j] != i) {
      size_t from = s->heap[j];
      memcpy(s->rows + j * d, s->rows + from * d, d * sizeof *tmp);
      s->cnt[j] = s->cnt[from];
      s->heap[j] = SIZE_MAX;
      j = from;
    }
    memcpy(s->rows + j * d, tmp, d * sizeof *tmp);
    s->cnt[j] = k0;
    s->heap[j] = SIZE_MAX;
  }
  free(tmp);
  /* rows sorted by key; heap[] lists them in descending key order, a valid max-heap, so a
   * later offer still keeps the smallest keys (ivf_sampler_sort_keyed sorts again) */
  for (size_t i = 0; i < n; i++) s->heap[i] = n - 1 - i;
  return VF_OK;
}

const float *ivf_sampler_rows(const ivf_sampler *s, size_t *n) {
  *n = (size_t)s->nst;
  return s->rows;
}

uint64_t ivf_sampler_seen(const ivf_sampler *s) { return s->seen; }

void ivf_sampler_close(ivf_sampler *s) {
  if (!s) return;
  free(s->rows);
  free(s->cnt);
  free(s->heap);
  free(s);
}
