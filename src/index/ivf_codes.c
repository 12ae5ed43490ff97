/*
 * ivf_codes.c — the code types of the IVF index: names, geometry, training and encoding of
 * SQ8 / PQ / RaBitQ, and the file checksum.
 *
 * All codes encode the residual r = x - c of a row against its list's centroid (FAISS's
 * by_residual), which is what makes 8-bit codes accurate enough on clustered data.
 *
 *  - SQ8: per dimension, code = round((r_j - min_j) / step_j), step_j = (max_j - min_j) / 255,
 *    where min/max are taken over the residuals of EVERY encoded row (the builder makes a bounds
 *    pass over the whole spill before encoding), so nothing is clipped.
 *  - PQ: m sub-quantizers of 256 centroids each (8 bits) or 16 (4 bits), trained by k-means on
 *    at most 65536 residuals of the training sample (sub-quantizers in parallel); codes are
 *    written transposed in blocks of 32 rows (ivf_build.c) and scanned with per-list lookup
 *    tables.  4-bit codes are packed two per byte in the "fast scan" layout (ivf_pq4_pack) and
 *    scanned with their tables quantised to u8 (ivf_kern.pq4_quant), 16 entries per sub-quantizer
 *    held in a SIMD register: one vpshufb looks up 32 rows (FAISS's PQ fast scan idea, André et
 *    al., "Accelerated nearest neighbor search with quick ADC", 2017).
 *  - RaBitQ: residuals are zero-padded to D (d rounded up to 64), rotated by a seeded random
 *    orthogonal matrix P (Gaussian + modified Gram-Schmidt) and normalised: o = P r / |P r|.
 *    With B bits per dimension, o is quantised uniformly on [-m, m] (m = max |o_i|) into
 *    u_i in [0, 2^B): v_i = (u_i + 1/2) * delta - m, xbar = v / |v|.  For B = 1 this is exactly
 *    RaBitQ's xbar = sign(o) / sqrt(D); for B > 1 it is a multi-bit scalar refinement of it.
 *    Each row record holds { |r|, <xbar, o>, a, b } and the codes, with
 *    <xbar, y> = a * sum_i u_i y_i + b * sum_i y_i for any rotated y, so the estimator
 *    <o, y> ~ <xbar, y> / <xbar, o> costs one table lookup per code byte (B = 1) or one u8 dot.
 *    Error bound (RaBitQ, eps0 = 1.9): |<o, y> - est| <= |y| * 1.9 * sqrt((1 - ip^2) / ip^2) /
 *    sqrt(D - 1), ip = <xbar, o>; ivf_search.c uses it to decide which rows to re-rank.
 */
#include <math.h>
#include <stdlib.h>

#include "index/ivf_internal.h"

const char *const ivf_section_names[IVF_NSECTIONS] = {
    "centroids", "quantizer", "list directory", "lists", "id offsets", "ids", "re-rank vectors"};

static const char *const code_names[] = {"flat", "sq8", "pq", "rabitq"};

/* ivf_code_name(): see ivf.h. */
const char *ivf_code_name(ivf_code c) {
  return (unsigned)c < 4 ? code_names[c] : "unknown";
}

bool ivf_code_parse(const char *name, ivf_code *out) {
  if (!name) return false;
  for (unsigned i = 0; i < 4; i++)
    if (strcmp(name, code_names[i]) == 0) {
      *out = (ivf_code)i;
      return true;
    }
  return false;
}

/* --------------------------------------------------------------- geometry */

void ivf_geom_init(ivf_geom *g, ivf_code type, size_t d, size_t pq_m, uint32_t pq_nbits,
                   uint32_t rabitq_bits) {
  memset(g, 0, sizeof *g);
  g->type = type;
  g->d = d;
  switch (type) {
  case IVF_FLAT: g->code_size = d * 4; break;
  case IVF_SQ8: g->code_size = d; break;
  case IVF_PQ:
    g->m = pq_m;
    g->dsub = pq_m ? d / pq_m : 0;
    g->nbits = pq_nbits == 4 ? 4 : 8;
    g->ksub = (size_t)1 << g->nbits;
    g->code_size = pq_m;
    g->pq_block_bytes = IVF_PQ_BLOCK * (g->nbits == 4 ? (pq_m + 1) / 2 : pq_m);
    break;
  case IVF_RABITQ:
    g->D = (d + 63) / 64 * 64;
    g->bits = rabitq_bits;
    g->code_size = IVF_RABITQ_NF * 4 + (rabitq_bits == 1 ? g->D / 8 : g->D);
    break;
  }
}

uint64_t ivf_list_code_bytes(const ivf_geom *g, uint64_t count) {
  if (g->type == IVF_PQ)
    return (count + IVF_PQ_BLOCK - 1) / IVF_PQ_BLOCK * (uint64_t)g->pq_block_bytes;
  return count * (uint64_t)g->code_size;
}

uint64_t ivf_quant_bytes(const ivf_geom *g) {
  switch (g->type) {
  case IVF_SQ8: return 2 * (uint64_t)g->d * 4;
  case IVF_PQ: return (uint64_t)g->m * g->ksub * g->dsub * 4;
  case IVF_RABITQ: return (uint64_t)g->D * g->D * 4;
  default: return 0;
  }
}

/* --------------------------------------------------------------- checksum */

/* PQ codebook training: FAISS's defaults (at most 256 points per code, i.e. 65536 rows, and 25
 * k-means iterations per sub-quantizer).  Fewer (16384 rows, 10 iterations) cost 0.013 recall@10
 * on Fashion-MNIST (nlist 256, M 56, nprobe 8: 0.747 vs 0.760; FAISS 0.758) for 4 s of a 13 s
 * build; FAISS's own PQ build of that index takes minutes, so matching its training is cheap. */
#define PQ_TRAIN_ROWS ((size_t)256 * 256)
#define PQ_TRAIN_ITERS 25

#define H_P1 0x9E3779B185EBCA87ull
#define H_P2 0xC2B2AE3D27D4EB4Full
#define H_P3 0x165667B19E3779F9ull

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t h_round(uint64_t acc, uint64_t w) {
  acc += w * H_P2;
  return rotl64(acc, 31) * H_P1;
}

void ivf_hash_init(ivf_hash *h) {
  memset(h, 0, sizeof *h);
  h->v[0] = H_P1 + H_P2;
  h->v[1] = H_P2;
  h->v[2] = 0;
  h->v[3] = (uint64_t)0 - H_P1;
}

static inline void h_stripe(ivf_hash *h, const uint8_t *p) {
  uint64_t w[4];
  memcpy(w, p, 32);
  h->v[0] = h_round(h->v[0], w[0]);
  h->v[1] = h_round(h->v[1], w[1]);
  h->v[2] = h_round(h->v[2], w[2]);
  h->v[3] = h_round(h->v[3], w[3]);
}

void ivf_hash_update(ivf_hash *h, const void *data, size_t n) {
  const uint8_t *p = data;
  h->total += n;
  if (h->nbuf) {
    size_t take = 32 - h->nbuf < n ? 32 - h->nbuf : n;
    memcpy(h->buf + h->nbuf, p, take);
    h->nbuf += take;
    p += take;
    n -= take;
    if (h->nbuf < 32) return;
    h_stripe(h, h->buf);
    h->nbuf = 0;
  }
  for (; n >= 32; p += 32, n -= 32)
    h_stripe(h, p);
  memcpy(h->buf, p, n);
  h->nbuf = n;
}

uint64_t ivf_hash_final(const ivf_hash *h) {
  uint64_t v[4] = {h->v[0], h->v[1], h->v[2], h->v[3]};
  uint8_t tail[32] = {0};
  memcpy(tail, h->buf, h->nbuf);
  uint64_t w[4];
  memcpy(w, tail, 32);
  for (int i = 0; i < 4; i++)
    v[i] = h_round(v[i], w[i]);
  uint64_t acc = rotl64(v[0], 1) + rotl64(v[1], 7) + rotl64(v[2], 12) + rotl64(v[3], 18);
  acc ^= h->total * H_P3;
  acc ^= acc >> 33;
  acc *= H_P2;
  acc ^= acc >> 29;
  acc *= H_P3;
  acc ^= acc >> 32;
  return acc;
}

/* ------------------------------------------------------------------ quant */

void ivf_quant_free(ivf_quant *q) {
  if (!q) return;
  free(q->sq_min);
  free(q->sq_step);
  free(q->pq_cb);
  free(q->rot);
  q->sq_min = q->sq_step = q->pq_cb = q->rot = NULL;
}

typedef struct pq_job {
  ivf_quant *q;
  const float *res;
  size_t n, nt;
  uint64_t seed;
  atomic_size_t next, done;
  atomic_int failed; /* the vf_status of the first failure */
  float *scratch; /* per thread: nt x dsub */
  vf_stage *stage; /* thread 0 reports the sub-quantizers done */
} pq_job;

static void pq_worker(void *arg, int t) {
  pq_job *j = arg;
  const ivf_geom *g = &j->q->g;
  float *sub = j->scratch + (size_t)t * j->nt * g->dsub;
  for (;;) {
    if (t == 0 && j->stage) vf_stage_update(j->stage, atomic_load(&j->done), NULL);
    size_t m = atomic_fetch_add(&j->next, 1);
    if (m >= g->m || atomic_load(&j->failed)) break;
    if (vf_cancelled()) {
      atomic_store(&j->failed, (int)VF_ECANCELED);
      break;
    }
    /* evenly strided rows of the sample (the sample is already a random one) */
    for (size_t i = 0; i < j->nt; i++) {
      size_t r = (size_t)((uint64_t)i * j->n / j->nt);
      memcpy(sub + i * g->dsub, j->res + r * g->d + m * g->dsub, g->dsub * sizeof(float));
    }
    size_t k = j->nt < g->ksub ? j->nt : g->ksub;
    float *cb = j->q->pq_cb + m * g->ksub * g->dsub;
    idx_kmeans_opts o = {.iters = PQ_TRAIN_ITERS, .seed = j->seed + m * 0x9e37ull, .threads = 1};
    vf_error e = {0};
    vf_status st = idx_kmeans(sub, j->nt, g->dsub, k, &o, cb, NULL, &e);
    if (st != VF_OK) {
      int zero = 0;
      atomic_compare_exchange_strong(&j->failed, &zero, (int)st);
      continue;
    }
    for (size_t c = k; c < g->ksub; c++) /* fewer rows than centroids: unused copies */
      memcpy(cb + c * g->dsub, cb, g->dsub * sizeof(float));
    atomic_fetch_add(&j->done, 1);
  }
}

/* ivf_pq_train(): see ivf_internal.h. */
vf_status ivf_pq_train(ivf_quant *q, const float *res, size_t n, uint64_t seed, int threads,
                       const char *progress, vf_error *err) {
  const ivf_geom *g = &q->g;
  if (n == 0) return vf_error_set(err, VF_EUSAGE, "pq: no training rows");
  q->pq_cb = vf_mallocarray(g->m * g->ksub * g->dsub, sizeof(float));
  size_t nt = n < PQ_TRAIN_ROWS ? n : PQ_TRAIN_ROWS;
  if (threads < 1) threads = 1;
  if ((size_t)threads > g->m) threads = (int)g->m;
  vf_stage sg;
  if (progress) vf_stage_begin(&sg, progress, "pq codebooks", "sub-quantizers", g->m);
  pq_job j = {.q = q, .res = res, .n = n, .nt = nt, .seed = seed, .stage = progress ? &sg : NULL};
  atomic_init(&j.next, 0);
  atomic_init(&j.done, 0);
  atomic_init(&j.failed, 0);
  j.scratch = vf_mallocarray((size_t)threads * nt * g->dsub, sizeof(float));
  if (!q->pq_cb || !j.scratch) {
    free(j.scratch);
    return vf_error_set(err, VF_ENOMEM, "pq: out of memory for the codebooks");
  }
  vf_status st = vf_blas_require(err);
  int saved = vf_blas_single_begin();
  if (st != VF_OK) goto out;
  VF_TRY(ivf_parallel(threads, pq_worker, &j, err));
  int failed = atomic_load(&j.failed);
  if (failed == (int)VF_ECANCELED) VF_TRY(vf_check_cancel(err));
  else if (failed) VF_FAIL(vf_error_set(err, VF_ENOMEM, "pq: codebook training failed (out of memory)"));
  if (progress) vf_stage_update(&sg, g->m, NULL);
out:
  vf_blas_single_end(saved);
  free(j.scratch);
  return st;
}

/* ivf_rabitq_rotation(): see ivf_internal.h. */
vf_status ivf_rabitq_rotation(ivf_quant *q, uint64_t seed, vf_error *err) {
  size_t D = q->g.D;
  double *a = vf_mallocarray(D * D, sizeof *a);
  q->rot = vf_mallocarray(D * D, sizeof(float));
  if (!a || !q->rot) {
    free(a);
    return vf_error_set(err, VF_ENOMEM, "rabitq: out of memory for a %zu x %zu rotation", D, D);
  }
  ivf_rng rng = {seed ^ 0x7261626974717ull};
  for (size_t i = 0; i < D * D; i += 2) { /* Box-Muller */
    double u1 = ivf_rng_unit(&rng), u2 = ivf_rng_unit(&rng);
    if (u1 < 1e-300) u1 = 1e-300;
    double rr = sqrt(-2.0 * log(u1));
    a[i] = rr * cos(6.283185307179586 * u2);
    if (i + 1 < D * D) a[i + 1] = rr * sin(6.283185307179586 * u2);
  }
  /* modified Gram-Schmidt on the rows */
  for (size_t i = 0; i < D; i++) {
    double *ri = a + i * D;
    for (size_t j = 0; j < i; j++) {
      const double *rj = a + j * D;
      double dp = 0;
      for (size_t e = 0; e < D; e++)
        dp += ri[e] * rj[e];
      for (size_t e = 0; e < D; e++)
        ri[e] -= dp * rj[e];
    }
    double nn = 0;
    for (size_t e = 0; e < D; e++)
      nn += ri[e] * ri[e];
    nn = sqrt(nn);
    if (nn < 1e-12) { /* numerically dependent (practically impossible): a unit vector */
      memset(ri, 0, D * sizeof *ri);
      ri[i] = 1.0;
      nn = 1.0;
    }
    for (size_t e = 0; e < D; e++)
      ri[e] /= nn;
  }
  for (size_t i = 0; i < D * D; i++)
    q->rot[i] = (float)a[i];
  free(a);
  return VF_OK;
}

/* -------------------------------------------------------------- encoders */

void ivf_encode_sq8(const ivf_quant *q, const float *res, uint8_t *out) {
  for (size_t j = 0; j < q->g.d; j++) {
    float s = q->sq_step[j];
    float v = s > 0.0f ? (res[j] - q->sq_min[j]) / s : 0.0f;
    /* clamp, then round half to even by adding and removing 2^23 (exact for 0 <= v < 2^23 in the
     * default rounding mode): the codes nearbyintf() gave, without a libm call per value, so the
     * loop vectorises (the encoder runs once per point per build) */
    v = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
    out[j] = (uint8_t)((v + 0x1p23f) - 0x1p23f);
  }
}

/* ivf_pq4_pack(): see ivf_internal.h. */
void ivf_pq4_pack(const uint8_t *codes, size_t n, size_t m, uint8_t *blk) {
  size_t ng = (m + 1) / 2;
  memset(blk, 0, ng * IVF_PQ_BLOCK);
  for (size_t j = 0; j < n; j++)
    for (size_t i = 0; i < m; i++)
      blk[(i / 2) * IVF_PQ_BLOCK + j] |= (uint8_t)((codes[j * m + i] & 15u) << (i % 2 ? 4 : 0));
}

void ivf_encode_rabitq(const ivf_quant *q, const float *rres, uint8_t *out) {
  const ivf_geom *g = &q->g;
  size_t D = g->D;
  double nr = 0, mx = 0;
  for (size_t i = 0; i < D; i++) {
    nr += (double)rres[i] * rres[i];
    double a = fabs((double)rres[i]);
    if (a > mx) mx = a;
  }
  nr = sqrt(nr);
  float rec[IVF_RABITQ_NF] = {(float)nr, 1.0f, 0.0f, 0.0f};
  uint8_t *code = out + IVF_RABITQ_NF * 4;
  if (g->bits == 1) {
    memset(code, 0, D / 8);
    double ip = 0;
    for (size_t i = 0; i < D; i++) {
      if (rres[i] > 0.0f) code[i / 8] |= (uint8_t)(1u << (i % 8));
      ip += fabs((double)rres[i]);
    }
    double sd = sqrt((double)D);
    if (nr > 0) {
      rec[1] = (float)(ip / nr / sd);
      rec[2] = (float)(2.0 / sd);
      rec[3] = (float)(-1.0 / sd);
    } else { /* the row is its centroid: estimator gives 0 * anything */
      rec[1] = 1.0f;
    }
  } else {
    unsigned levels = 1u << g->bits;
    double delta = mx > 0 ? 2.0 * mx / levels : 0.0;
    double vn = 0, ip = 0;
    for (size_t i = 0; i < D; i++) {
      double u = delta > 0 ? floor((rres[i] + mx) / delta) : 0;
      if (u < 0) u = 0;
      if (u > levels - 1) u = levels - 1;
      code[i] = (uint8_t)u;
      double v = (u + 0.5) * delta - mx;
      vn += v * v;
      ip += v * rres[i];
    }
    vn = sqrt(vn);
    if (nr > 0 && vn > 0) {
      rec[1] = (float)(ip / vn / nr);
      rec[2] = (float)(delta / vn);
      rec[3] = (float)((0.5 * delta - mx) / vn);
    }
  }
  if (!(rec[1] > 1e-6f)) rec[1] = 1e-6f;
  memcpy(out, rec, sizeof rec);
}
