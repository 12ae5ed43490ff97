/*
 * vforge index — distance kernels and top-K selection (exact search, brute force); k-means, the
 * IVF codes, builder and index file are in vforge/ivf.h.
 *
 * Kernels: a scalar reference, an AVX2+FMA and an AVX-512 (F/BW/DQ/VL + FMA) variant of every
 * distance, compiled in the same translation unit with __attribute__((target)) so the library
 * needs no global -mavx2/-mavx512f flag.  The variant is chosen once (first use) from
 * __builtin_cpu_supports: AVX-512 when the CPU has it, else AVX2, else scalar.  The environment
 * variable VFORGE_SIMD=scalar|avx2|avx512 forces a variant (for debugging, benchmarking and
 * comparing results); when the CPU cannot run the one asked for, the best one below it is used
 * (and a warning logged), so VFORGE_SIMD=scalar always gets the reference.
 *
 * Scores follow DESIGN.md "Corpus layout": larger = nearer.  cosine -> cosine similarity, dot
 * -> dot product, euclid -> -L2 (not squared), manhattan -> -L1.
 */
#ifndef VFORGE_INDEX_H
#define VFORGE_INDEX_H

#include "vforge/corpus.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ kernels */

typedef enum idx_simd {
  IDX_SIMD_SCALAR = 0, /* portable reference */
  IDX_SIMD_AVX2,       /* x86-64 AVX2 + FMA */
  IDX_SIMD_AVX512      /* x86-64 AVX-512 F/BW/DQ/VL + FMA */
} idx_simd;

/* One set of kernels.  `d` is the dimension (any value >= 0; no alignment is assumed). */
typedef struct idx_kernels {
  idx_simd simd;
  const char *name; /* "scalar", "avx2", "avx512" */
  float (*dot)(const float *a, const float *b, size_t d);
  float (*l2sq)(const float *a, const float *b, size_t d); /* squared euclidean distance */
  float (*l1)(const float *a, const float *b, size_t d);   /* manhattan distance */
  /* one query against n row-major rows (rows[i*d .. i*d+d)): out[i] = f(q, row i) */
  void (*dot_batch)(const float *q, const float *rows, size_t n, size_t d, float *out);
  void (*l2sq_batch)(const float *q, const float *rows, size_t n, size_t d, float *out);
  void (*l1_batch)(const float *q, const float *rows, size_t n, size_t d, float *out);
} idx_kernels;

/*! idx_kernels_for() : the kernels of one variant.
 *  @return : NULL when this CPU (or this build) cannot run that variant. */
const idx_kernels *idx_kernels_for(idx_simd simd);

/*! idx_simd_parse() : "scalar", "avx2", "avx512" (the variants' names) into *out.
 *  @return : false for an unknown name. */
bool idx_simd_parse(const char *name, idx_simd *out);

/*! idx_kernels_active() : the variant every idx_* call below uses: the best one this CPU runs,
 *  or, when the environment has VFORGE_SIMD=scalar|avx2|avx512, the best one at or below that
 *  (an unknown value is ignored with a warning).  Chosen once per process.
 *  @return : never NULL. */
const idx_kernels *idx_kernels_active(void);

/* Convenience wrappers over idx_kernels_active(). */
float idx_dot(const float *a, const float *b, size_t d);
float idx_l2sq(const float *a, const float *b, size_t d);
float idx_l2(const float *a, const float *b, size_t d); /* sqrt(l2sq) */
float idx_l1(const float *a, const float *b, size_t d);
/*! idx_cosine() : dot / (|a| |b|); 0 when either vector is all zeros. */
float idx_cosine(const float *a, const float *b, size_t d);

/*! idx_normalize() : scale `v` to unit L2 norm in place (computed in double).
 *  @return : false (v unchanged) when the norm is 0 or not finite. */
bool idx_normalize(float *v, size_t d);
/*! idx_normalize_rows() : idx_normalize() every row of an n x d matrix; all-zero rows stay zero.
 *  @return : the number of rows that could not be normalised. */
size_t idx_normalize_rows(float *rows, size_t n, size_t d);

/*! idx_scores() : scores (larger = nearer) of one query against n rows for `metric`.
 *  COSINE expects `q` and `rows` already unit-normalised (idx_normalize) and returns their dot
 *  product — the exact-search path normalises each block once instead of per pair. */
void idx_scores(corpus_distance metric, const float *q, const float *rows, size_t n, size_t d,
                float *out);

/*! idx_metric_name() : "cosine", "dot", "euclid", "manhattan". */
const char *idx_metric_name(corpus_distance metric);
/*! idx_metric_parse() : the inverse of idx_metric_name() (also accepts "l2", "ip").
 *  @return : false for an unknown name. */
bool idx_metric_parse(const char *name, corpus_distance *out);

/* -------------------------------------------------------------------- top-K */

/* A bounded heap of the k best (score, key) pairs seen.  "Better" = a higher score, or an
 * equal score and a key that orders first under the caller's tie order (`tie(user, a, b) < 0`
 * when key a sorts before key b: the point id order), so results never depend on the order in
 * which candidates arrive.  `tie` NULL orders keys numerically.  NaN scores are never kept. */
typedef int (*idx_tie_fn)(const void *user, int64_t a, int64_t b);

typedef struct idx_hit {
  float score;
  int64_t key;
} idx_hit;

typedef struct idx_topk {
  size_t k, n;
  idx_hit *heap; /* heap[0] is the worst kept hit */
  idx_tie_fn tie;
  const void *user;
} idx_topk;

/*! idx_topk_init() : an empty selection of at most k hits (k >= 1, capped at 1<<24).
 *  @return : VF_EUSAGE for k out of range, VF_ENOMEM. */
vf_status idx_topk_init(idx_topk *t, size_t k, idx_tie_fn tie, const void *user, vf_error *err);
void idx_topk_free(idx_topk *t);
/*! idx_topk_reset() : empty the selection, keeping k and the tie order. */
static inline void idx_topk_reset(idx_topk *t) {
  t->n = 0;
}
/*! idx_topk_push() : offer one candidate. */
void idx_topk_push(idx_topk *t, float score, int64_t key);
/*! idx_topk_push_batch() : offer scores[i] with key keys[i] (or key0 + i when keys is NULL),
 *  skipping i where skip && skip[i]. */
void idx_topk_push_batch(idx_topk *t, const float *scores, size_t n, const int64_t *keys,
                         int64_t key0, const uint8_t *skip);
/*! idx_topk_sorted() : the kept hits, best first, into out (room for t->n); the selection is
 *  left empty.  @return : the number written. */
size_t idx_topk_sorted(idx_topk *t, idx_hit *out);

#ifdef __cplusplus
}
#endif
#endif
