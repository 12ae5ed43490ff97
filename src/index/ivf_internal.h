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
#define IVF_VERSION 1u     /* every file that version 1 can describe is written as version 1 */
#define IVF_VERSION_PQ4 2u /* version 2: a PQ file's u32 pq_nbits at offset 32 (4-bit PQ files) */
#define IVF_HEADER_BYTES 192u
#define IVF_ALIGN 64u
#define IVF_PQ_BLOCK 32u /* PQ codes are stored in blocks of 32 rows, transposed per block */
#define IVF_PQ4_CHUNK 128u /* 4-bit PQ: code pairs summed in u16 per call (128*2*255 < 65536) */
/* a spill frame (staged, compressed or read back) and a frame's id offsets: a frame is flushed
 * once its vectors or ids pass chunk_bytes (4 MiB, or 64 rows of a 65536-dim vector, 16 MiB), so
 * it holds three chunks and one row's id; replay_next() refuses a frame header claiming more */
#define IVF_MAX_SPILL_FRAME ((size_t)1 << 34)
#define IVF_QGROUP 4u      /* queries scored together against the centroids */
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
  uint32_t nbits;   /* PQ bits per code: 8 or 4 */
  size_t ksub;      /* PQ centroids per sub-quantizer: 1 << nbits */
  size_t D;         /* RaBitQ rotated dimension (d rounded up to 64) */
  uint32_t bits;    /* RaBitQ bits */
  size_t code_size; /* bytes per row record (PQ: m, one code per byte, until the builder packs
                       them into transposed blocks) */
  size_t pq_block_bytes; /* PQ: bytes of one 32-row block in a list (8 bits: 32*m; 4 bits:
                            32*ceil(m/2), two codes per byte) */
} ivf_geom;

/*! ivf_geom_init() : the geometry of a code type; pq_nbits 0 means 8. */
void ivf_geom_init(ivf_geom *g, ivf_code type, size_t d, size_t pq_m, uint32_t pq_nbits,
                   uint32_t rabitq_bits);
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
  float *pq_cb;             /* PQ: m x ksub x dsub */
  float *rot;               /* RaBitQ: D x D orthogonal, row-major (rotated = rot * v) */
} ivf_quant;

void ivf_quant_free(ivf_quant *q);
/*! ivf_pq_train() : codebooks (ksub centroids per sub-quantizer) from `n` residuals (n x d),
 *  capped at 65536 rows, few iterations, sub-quantizers trained in parallel.
 *  `progress`: NULL, or the phase of a "pq codebooks" stage reporting the sub-quantizers done.
 *  Polls vf_cancelled().  @return : VF_ENOMEM, VF_ECANCELED. */
vf_status ivf_pq_train(ivf_quant *q, const float *res, size_t n, uint64_t seed, int threads,
                       const char *progress, vf_error *err);
/*! ivf_rabitq_rotation() : a seeded random orthogonal D x D matrix into q->rot. */
vf_status ivf_rabitq_rotation(ivf_quant *q, uint64_t seed, vf_error *err);

/* Encoders of one residual row (d floats) into one record (code_size bytes).
 * PQ rows are encoded in blocks by the builder (sgemm against the codebooks). */
void ivf_encode_sq8(const ivf_quant *q, const float *res, uint8_t *out);
/* RaBitQ: `rres` is the rotated residual (D floats). */
void ivf_encode_rabitq(const ivf_quant *q, const float *rres, uint8_t *out);

/* 4-bit PQ block layout (the "fast scan" layout): a block of 32 rows holds ceil(m/2) groups of
 * 32 bytes; byte j of group p is code(row j, sub-quantizer 2p) | code(row j, 2p+1) << 4 (a
 * missing sub-quantizer 2p+1 of an odd m, and padding rows, are 0).  A group is what one AVX2
 * vpshufb pair looks up: 32 rows against two 16-entry tables. */
/*! ivf_pq4_pack() : the block of `n` <= 32 rows whose codes are `codes` (n x m, one per byte,
 *  row-major) into `blk` (32 * ceil(m/2) bytes). */
void ivf_pq4_pack(const uint8_t *codes, size_t n, size_t m, uint8_t *blk);
/*! ivf_pq4_code() : code (row j of a block, sub-quantizer i) of a packed block. */
static inline unsigned ivf_pq4_code(const uint8_t *blk, size_t j, size_t i) {
  uint8_t b = blk[(i / 2) * IVF_PQ_BLOCK + j];
  return i % 2 ? b >> 4 : b & 15u;
}

/* A 4-bit PQ lookup table quantised to u8 for one (query, list): t[i][c] ~ bias_i + q[i][c]/a
 * with q = round(a * (t - bias_i)), a = 255 / (the largest span of one sub-quantizer's table).
 * Tables are "distances" (smaller is nearer); the estimate of a row is bias + sum(q) / a. */
typedef struct ivf_pq4_lut {
  uint8_t *q;   /* ceil(m/2) groups x 32 bytes: the tables of sub-quantizers 2p and 2p+1 */
  float bias;   /* sum of the per-table minima */
  float inv_a;  /* 1 / a (0 when every table is constant) */
  float *lo;    /* scratch of m floats (the per-table minima), provided with q */
} ivf_pq4_lut;
/* 4-bit PQ, euclid: the list part of the tables, pre[l][i][c] = |C_ic|^2 + 2 c_l,i . C_ic, is
 * computed at open when nlist x m x 16 floats fit this many bytes; a list's tables are then
 * pre[l] - 2 q_i . C_ic (the query part, once per query) plus |q - c_l|^2 (the coarse score).
 * Larger indexes compute |q_i - c_l,i - C_ic|^2 per list. */
#define IVF_PQ4_PRE_MAX ((uint64_t)64 << 20)

/* -------------------------------------------------------------- kernels */

typedef struct ivf_kern {
  const char *name;
  /* sum_j (a_j - s_j * c_j)^2 over d u8 codes c */
  float (*sq8_l2)(const float *a, const float *s, const uint8_t *c, size_t d);
  /* sum_j w_j * c_j */
  float (*u8_dot)(const float *w, const uint8_t *c, size_t d);
  /* PQ: out[j] = sum_i lut[i*256 + codes[i*32 + j]] for the 32 rows of one block */
  void (*pq_block)(const float *lut, const uint8_t *codes, size_t m, float *out);
  /* 4-bit PQ: out[j] = sum over groups p < ng (ng <= IVF_PQ4_CHUNK) of
   * lut[32p + (codes[32p + j] & 15)] + lut[32p + 16 + (codes[32p + j] >> 4)], the 32 rows of one
   * block (ivf_pq4_pack layout); returns the mask of the rows j with out[j] <= bound (bit j).
   * Integer sums: every variant returns the same values. */
  uint32_t (*pq4_block)(const uint8_t *lut, const uint8_t *codes, size_t ng, uint16_t bound,
                        uint16_t *out);
  /* 4-bit PQ tables of one residual x (m * dsub floats) against codebooks stored transposed
   * (cbt: m x dsub x 16): l2 ? sum_j (x_ij - C_icj)^2 : -sum_j x_ij * C_icj into lut (m x 16).
   * Same operations in the same order in every variant (no FMA): identical results. */
  void (*pq4_lut)(const float *x, const float *cbt, size_t m, size_t dsub, int l2, float *lut);
  /* 4-bit PQ: m float tables of 16 entries (t + add, m x 16; add may be NULL) quantised into
   * *out (ivf_pq4_lut); every variant writes the same bytes, bias and scale for finite tables */
  void (*pq4_quant)(const float *t, const float *add, size_t m, ivf_pq4_lut *out);
  /* coarse scores of nq <= IVF_QGROUP queries (q, nq x d) against n rows, out[j*n + r] = l2 ?
   * |q_j - x_r|^2 : q_j . x_r; each pair exactly as idx_kernels_for(this variant's distance
   * kernels) l2sq_batch / dot_batch compute it for one query (AVX-512: as the AVX2 ones), so a
   * query's scores do not depend on the queries grouped with it; a group reads the rows once */
  void (*coarse)(const float *q, size_t nq, const float *rows, size_t n, size_t d, int l2,
                 float *out);
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
  uint32_t pq_nbits; /* version 2: PQ 4 or 8, else 0; version 1 files: 0 (PQ is 8 bits) */
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
  float *pq4_cbt;         /* 4-bit PQ: the codebooks transposed (m x dsub x 16), at open */
  float *pq4_pre;         /* 4-bit PQ, euclid: nlist x m x 16 list terms (IVF_PQ4_PRE_MAX), or
                             NULL */
  const uint64_t *dir;    /* nlist x 3 */
  const uint8_t *lists;
  const uint64_t *idoff;
  const uint8_t *idbytes;
  const float *rerank;    /* NULL when absent */
};

/*! ivf_tie_by_id() : idx_tie_fn ordering global rows by their point ids (bytes, then length). */
int ivf_tie_by_id(const void *user, int64_t a, int64_t b);

#endif
