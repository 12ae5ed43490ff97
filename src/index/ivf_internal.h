/*
 * ivf_internal.h — what the IVF sources share (src/index/kmeans.c, ivf_codes.c, ivf_simd.c,
 * ivf_build.c, ivf_file.c, ivf_search.c): the file-format constants, the checksum, the seeded
 * generator, the code trainers/encoders and the SIMD kernels of the list scans.
 * Not a public header: the layout is documented at the top of ivf_file.c.
 */
#ifndef VFORGE_IVF_INTERNAL_H
#define VFORGE_IVF_INTERNAL_H

#include <stdatomic.h>

#include "vforge/ivf.h"

/* ------------------------------------------------------------- file format */

#define IVF_MAGIC "VFIVF\0\0\1"
#define IVF_VERSION 1u
#define IVF_HEADER_BYTES 192u
#define IVF_ALIGN 64u
#define IVF_PQ_BLOCK 32u /* PQ codes are stored in blocks of 32 rows, transposed per block */
#define IVF_RABITQ_NF 4u /* floats per RaBitQ row record before the code bytes */

enum {
  IVF_S_CENTROIDS = 0, /* nlist x dim float32 */
  IVF_S_QUANT,         /* SQ8: min[dim], step[dim]; PQ: M x 256 x dsub; RaBitQ: D x D rotation */
  IVF_S_DIR,           /* nlist x {u64 offset (in S_LISTS), u64 count, u64 pos (list order)} */
  IVF_S_LISTS,         /* per list: int64 rows[count] (padded to 64), codes (padded to 64) */
  IVF_S_IDOFF,         /* (rows + 1) x u64 offsets into S_IDBYTES */
  IVF_S_IDBYTES,       /* the point ids, row order */
  IVF_S_RERANK,        /* rows x dim float32 in list order (empty when rerank == 0) */
  IVF_NSECTIONS
};

extern const char *const ivf_section_names[IVF_NSECTIONS];

static inline uint64_t ivf_align(uint64_t x) { return (x + IVF_ALIGN - 1) & ~(uint64_t)(IVF_ALIGN - 1); }

/* The geometry of the codes of one index (derived from the parameters). */
typedef struct ivf_geom {
  ivf_code type;
  size_t d;         /* dimension */
  size_t m, dsub;   /* PQ */
  size_t D;         /* RaBitQ rotated dimension (d rounded up to 64) */
  uint32_t bits;    /* RaBitQ bits */
  size_t code_size; /* bytes per row record (PQ: m, stored in transposed blocks) */
} ivf_geom;

void ivf_geom_init(ivf_geom *g, ivf_code type, size_t d, size_t pq_m, uint32_t bits);
/*! ivf_list_code_bytes() : bytes of the codes of a list of `count` rows (unpadded). */
uint64_t ivf_list_code_bytes(const ivf_geom *g, uint64_t count);
/*! ivf_list_bytes() : bytes of one list in S_LISTS (rows + codes, each padded to 64). */
static inline uint64_t ivf_list_bytes(const ivf_geom *g, uint64_t count) {
  return ivf_align(count * 8) + ivf_align(ivf_list_code_bytes(g, count));
}
/*! ivf_quant_bytes() : bytes of S_QUANT. */
uint64_t ivf_quant_bytes(const ivf_geom *g);

/* --------------------------------------------------------------- checksum */

/* A streaming 64-bit checksum over 8-byte little-endian words in four lanes (xxh64 rounds);
 * the tail is zero-padded and the length mixed in. */
typedef struct ivf_hash {
  uint64_t v[4];
  uint64_t total;
  uint8_t buf[32];
  size_t nbuf;
} ivf_hash;
void ivf_hash_init(ivf_hash *h);
void ivf_hash_update(ivf_hash *h, const void *p, size_t n);
uint64_t ivf_hash_final(const ivf_hash *h);

/* ---------------------------------------------------------------- random */

typedef struct ivf_rng {
  uint64_t s;
} ivf_rng;
static inline uint64_t ivf_rng_next(ivf_rng *r) { /* splitmix64 */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline double ivf_rng_unit(ivf_rng *r) { /* [0, 1) */
  return (double)(ivf_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}


/* fn(arg, t) for t in [0, nthreads): the slots are chunks of one loop on the process pool
 * (vforge/pool.h: no thread started per call; VF_ECANCELED once cancelled), each slot sharing the
 * work with the others through its job's own atomic counter.  The k-means assignment calls
 * vf_pool_for directly, one chunk per row block (kmeans.c). */
typedef void (*ivf_par_fn)(void *arg, int t);
vf_status ivf_parallel(int nthreads, ivf_par_fn fn, void *arg, vf_error *err);

/* Nearest centroid (L2; ties -> lower index) of n rows, sgemm-tiled with precomputed norms;
 * `threads` workers over fixed row blocks: the result does not depend on the thread count.
 * `cnorm` = |c_j|^2 (k entries).  `dist` (optional, n entries) receives the squared distance. */
vf_status ivf_assign_l2(const float *x, size_t n, size_t d, const float *c, const float *cnorm,
                        size_t k, int threads, uint32_t *assign, float *dist, vf_error *err);

/* ------------------------------------------------------------- the codes */

/* Trained quantizer parameters (what S_QUANT holds). */
typedef struct ivf_quant {
  ivf_geom g;
  float *sq_min, *sq_step;  /* SQ8: per-dimension bounds of the residuals */
  float *pq_cb;             /* PQ: m x 256 x dsub */
  float *rot;               /* RaBitQ: D x D orthogonal, row-major (rotated = rot * v) */
} ivf_quant;

void ivf_quant_free(ivf_quant *q);
/*! ivf_pq_train() : codebooks from `n` residuals (n x d), capped at 256*64 rows per
 *  sub-quantizer, few iterations, sub-quantizers trained in parallel.  `progress`: NULL, or the
 *  phase of a "pq codebooks" stage reporting the sub-quantizers done.  Polls vf_cancelled().
 *  @return : VF_ENOMEM, VF_ECANCELED. */
vf_status ivf_pq_train(ivf_quant *q, const float *res, size_t n, uint64_t seed, int threads,
                       const char *progress, vf_error *err);
/*! ivf_rabitq_rotation() : a seeded random orthogonal D x D matrix into q->rot. */
vf_status ivf_rabitq_rotation(ivf_quant *q, uint64_t seed, vf_error *err);

/* Encoders of one residual row (d floats) into one record (code_size bytes).
 * PQ rows are encoded in blocks by the builder (sgemm against the codebooks). */
void ivf_encode_sq8(const ivf_quant *q, const float *res, uint8_t *out);
/* RaBitQ: `rres` is the rotated residual (D floats). */
void ivf_encode_rabitq(const ivf_quant *q, const float *rres, uint8_t *out);

/* -------------------------------------------------------------- kernels */

typedef struct ivf_kern {
  const char *name;
  /* sum_j (a_j - s_j * c_j)^2 over d u8 codes c */
  float (*sq8_l2)(const float *a, const float *s, const uint8_t *c, size_t d);
  /* sum_j w_j * c_j */
  float (*u8_dot)(const float *w, const uint8_t *c, size_t d);
  /* PQ: out[j] = sum_i lut[i*256 + codes[i*32 + j]] for the 32 rows of one block */
  void (*pq_block)(const float *lut, const uint8_t *codes, size_t m, float *out);
  /* RaBitQ 1-bit: sum_j lut[j*256 + code[j]] over nb bytes */
  float (*bytes_lut)(const float *lut, const uint8_t *code, size_t nb);
  /* min over i < n of cn[i] - 2 * ip[i] (first index on ties, NaN never wins) into *idx;
   * returns the minimum (INFINITY and *idx = 0 when nothing is smaller) */
  float (*argmin)(const float *cn, const float *ip, size_t n, uint32_t *idx);
} ivf_kern;

/*! ivf_kern_active() : the variant matching idx_kernels_active() (CPU, VFORGE_SIMD). */
const ivf_kern *ivf_kern_active(void);
const ivf_kern *ivf_kern_scalar(void);
/*! ivf_kern_for() : the kernels of one variant.
 *  @return : NULL when this CPU (or build) cannot run it (as idx_kernels_for()). */
const ivf_kern *ivf_kern_for(idx_simd simd);

/* ------------------------------------------------------------ header / index */

typedef struct ivf_hdr {
  uint32_t version, metric;
  int32_t dim;
  uint32_t type, nlist, pq_m, rabitq_bits, rerank;
  uint64_t seed, rows, file_bytes;
  uint64_t off[IVF_NSECTIONS], len[IVF_NSECTIONS];
  uint8_t corpus_id[16]; /* the corpus identity (ivf_params.corpus_id); zero: none recorded */
} ivf_hdr;

void ivf_hdr_write(const ivf_hdr *h, uint8_t out[IVF_HEADER_BYTES]);

struct ivf_index {
  char *path;
  const uint8_t *map;
  size_t size;
  ivf_hdr h;
  ivf_info info;
  ivf_geom g;
  ivf_quant q;            /* borrowed pointers into the map (never freed) */
  const float *centroids; /* nlist x d */
  float *cnorm;           /* |c|^2, computed at open */
  float *rcent;           /* RaBitQ: rotated centroids (nlist x D), computed at open */
  const uint64_t *dir;    /* nlist x 3 */
  const uint8_t *lists;
  const uint64_t *idoff;
  const uint8_t *idbytes;
  const float *rerank;    /* NULL when absent */
};

/*! ivf_tie_by_id() : idx_tie_fn ordering global rows by their point ids (bytes, then length). */
int ivf_tie_by_id(const void *user, int64_t a, int64_t b);

#endif
