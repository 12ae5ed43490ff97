/*
 * ivf_build.c — the streaming IVF builder: add() rows, finish() trains, assigns, encodes and
 * writes the index file (layout: ivf_file.c) with memory bounded by the budget.
 *
 * add(): COSINE rows are normalised, every component is checked finite, rows are offered to
 * the training sampler (ivf_sampler) and staged into chunks that are spilled, zstd-compressed,
 * to "<spill_dir>/<out name>.spill.<host>-<pid>.<n>" as frames {u32 rows, u32 plain, u64 raw
 * bytes, u64 stored bytes, zstd(vectors | u32 id lengths | id bytes)}; a frame that zstd shrinks
 * by less than 1/8 is stored plain (plain = 1, stored = raw bytes), and after
 * SPILL_POOR_FRAMES such frames in a row the rest are stored plain without trying (dense float
 * embeddings barely compress: zstd cost a sixth of a 768-d finalize's CPU for ~5 %);
 * params.spill_plain stores every frame plain (the local store, whose segments are uncompressed).  Opening a builder sweeps
 * what a killed build of the same output left (vf_temp_sweep: this host, pid gone).
 * Frames stay in memory instead ({u64 rows, u64 raw bytes}, the plain frame, zero padding to 8
 * bytes, in one buffer) while they fit 1/IVF_MEM_SPILL_SHARE of the budget left beside the
 * sample and the staging buffers (IVF_MEM_SPILL_MAX without a budget); from the first frame that
 * does not fit, every later one goes to the file, so the replay reads the memory frames, then
 * the file's, in input order.  A corpus that fits (Fashion-MNIST: 188 MB) is then neither
 * compressed, written nor read back: zstd and the copies took ~1.5 CPU-s of a 784-d build's
 * read and assign stages.  params.spill_to_disk sends every frame to the file.
 *
 * finish():
 *  1. train: k-means on the sample (spherical for COSINE; L2 on the raw vectors for DOT and
 *     EUCLID; on at most nlist * train_per_centroid of its rows, at most kmeans_iters
 *     iterations, stopping early once at most kmeans_stop of the rows change list in an
 *     iteration or the objective falls by at most kmeans_stop_objective — idx_kmeans(); from nlist
 *     kmeans_hier_min two-level: sqrt(nlist) coarse clusters split into their shares of the
 *     lists, then IVF_KMEANS_HIER_REFINE full iterations), then PQ codebooks on all the sample's residuals, or the RaBitQ
 *     rotation;
 *  2. pass A over the spill: assign every row to its nearest centroid (sgemm, threads over fixed
 *     blocks), count the lists, record the assignment in a second spill file (u32 per row) and,
 *     for SQ8, take the per-dimension min/max of every residual (the bounds cover all encoded
 *     rows);
 *  3. lay the file out (all sizes are known now), create "<out>.tmp.<host>-<pid>.<n>" at its
 *     final size;
 *  4. pass B over the spill: encode the rows (threads over fixed 256-row blocks) and append
 *     rows, codes and re-rank vectors to per-list buffers; when growing a buffer would pass
 *     what the budget leaves (allocated bytes are counted), every list's buffer is written to the list's place in the file (PQ:
 *     whole 32-row blocks, transposed) — the file is the partition, so nothing is re-read; ids
 *     are written in row order as they stream past;
 *  5. checksum the file (read back sequentially), write it, fsync, rename over the output,
 *     fsync the directory.
 * Rows enter their lists in input order, every parallel step works on fixed blocks and every
 * reduction is sequential, so the file is byte-identical for any thread count and any budget.
 * Every stage reports progress (params.progress names the phase) and polls vf_cancelled() per
 * spill frame, k-means iteration, list and checksum block; a cancelled build removes its spills
 * and temp file (VF_ECANCELED).
 *
 * Memory: the sample (max_train rows; k-means' subsample of it, when the sample is larger than
 * nlist * train_per_centroid, is a copy of at most that many rows), the staging chunk and its compressed copy, the per-chunk
 * encode scratch, the model (centroids, quantizer), the per-list buffers (what the budget
 * leaves) — each counted against params.memory_budget.  With max_train = 0 the sample is
 * shrunk to a quarter of the budget; an explicit max_train that does not fit is VF_ENOMEM.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "index/ivf_internal.h"

#define BLOCK 256
#define UNLIMITED_LISTBUF ((uint64_t)1 << 30)
#define SPILL_POOR_FRAMES 4 /* after this many poorly compressing frames in a row, stop trying */

typedef struct lbuf {
  uint64_t written; /* rows already in the file */
  size_t n, cap;    /* rows buffered */
  int64_t *rows;
  uint8_t *codes;   /* n x code_size, row-major */
  float *vecs;      /* n x d when re-rank vectors are kept */
} lbuf;

struct ivf_builder {
  ivf_params p;
  char *out_path, *spill_path, *assign_path, *tmp_path;
  size_t d;
  uint64_t total_hint, cap, budget;
  ivf_sampler *smp;
  int spill_fd, assign_fd, out_fd;
  /* staging */
  vf_buf sv, sl, si; /* vectors, id lengths (u32), id bytes */
  size_t srows, chunk_bytes;
  ZSTD_CCtx *cctx;
  vf_buf comp;
  uint64_t rows, id_bytes, spill_bytes, spill_off;
  vf_buf mem;       /* the in-memory spill frames (its max: their allowance) */
  bool mem_full;    /* a frame did not fit: this and every later one went to the file */
  bool mframe;      /* the frame being staged is in mem (its vectors appended there directly,
                       its header at mframe_at), not in sv */
  size_t mframe_at;
  int spill_poor; /* frames in a row that zstd shrank by < 1/8 (stored plain) */
  double t_open;
};

static vf_status sys_err(vf_error *err, const char *what, const char *path) {
  return vf_error_set(err, VF_EIO, "%s: %s: %s", path, what, VF_STRERROR(errno));
}

static vf_status write_at(int fd, const void *p, size_t n, uint64_t off, const char *path,
                          vf_error *err) {
  const uint8_t *b = p;
  while (n) {
    ssize_t w = pwrite(fd, b, n, (off_t)off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return sys_err(err, "write failed", path);
    }
    b += w;
    n -= (size_t)w;
    off += (uint64_t)w;
  }
  return VF_OK;
}

static vf_status read_at(int fd, void *p, size_t n, uint64_t off, const char *path, vf_error *err) {
  uint8_t *b = p;
  while (n) {
    ssize_t r = pread(fd, b, n, (off_t)off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return sys_err(err, "read failed", path);
    }
    if (r == 0) return vf_error_set(err, VF_EIO, "%s: unexpected end of file", path);
    b += r;
    n -= (size_t)r;
    off += (uint64_t)r;
  }
  return VF_OK;
}

/* "<dir, else the output's directory>/<out name>.<tag>.<host>-<pid>.<n>"; with `sweep`, first
 * remove what killed builds of this output left there */
static char *path_in_dir(const char *dir, const char *out_path, const char *tag, bool sweep) {
  char *tmp = vf_strdup(out_path);
  if (!tmp) return NULL;
  char *dcopy = vf_strdup(out_path);
  if (!dcopy) {
    free(tmp);
    return NULL;
  }
  const char *base = basename(tmp);
  const char *dd = dir ? dir : dirname(dcopy);
  size_t n = strlen(dd) + strlen(base) + 2;
  char *plain = vf_malloc(n);
  char *s = NULL;
  if (plain) {
    snprintf(plain, n, "%s/%s", dd, base);
    if (sweep) vf_temp_sweep(dd, base, NULL, NULL);
    s = vf_temp_path(plain, tag);
  }
  free(plain);
  free(tmp);
  free(dcopy);
  return s;
}

static uint32_t default_nlist(uint64_t rows) {
  double v = 4.0 * sqrt((double)rows);
  if (v < 1) v = 1;
  if (v > (double)(1u << 20)) v = (double)(1u << 20);
  return (uint32_t)v;
}

/* ivf_builder_open(): see ivf.h. */
vf_status ivf_builder_open(const ivf_params *p, const char *out_path, uint64_t total_rows,
                           ivf_builder **out, vf_error *err) {
  *out = NULL;
  if (p->metric != CORPUS_COSINE && p->metric != CORPUS_DOT && p->metric != CORPUS_EUCLID)
    return vf_error_set(err, VF_EUSAGE, "index build: metric %s is not supported (cosine, dot, euclid)",
                        idx_metric_name(p->metric));
  if ((unsigned)p->type > IVF_RABITQ)
    return vf_error_set(err, VF_EUSAGE, "index build: unknown code type %d", (int)p->type);
  if (p->dim <= 0 || p->dim > 65536)
    return vf_error_set(err, VF_EUSAGE, "index build: dim %d out of 1..65536", p->dim);
  if (p->nlist > (1u << 24))
    return vf_error_set(err, VF_EUSAGE, "index build: nlist %u out of range (at most 16777216)", p->nlist);
  if (p->type == IVF_PQ && p->pq_m && ((uint32_t)p->dim % p->pq_m != 0))
    return vf_error_set(err, VF_EUSAGE, "index build: pq_m %u does not divide dim %d", p->pq_m, p->dim);
  if (p->type == IVF_RABITQ && p->rabitq_bits > 8)
    return vf_error_set(err, VF_EUSAGE, "index build: rabitq_bits %u out of 1..8", p->rabitq_bits);
  if (p->type == IVF_PQ && p->pq_nbits != 0 && p->pq_nbits != 4 && p->pq_nbits != 8)
    return vf_error_set(err, VF_EUSAGE, "index build: pq_nbits %u (expected 4 or 8)", p->pq_nbits);
  ivf_builder *b = vf_calloc(1, sizeof *b);
  if (!b) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  b->spill_fd = b->assign_fd = b->out_fd = -1;
  b->t_open = vf_now();
  b->p = *p;
  b->d = (size_t)p->dim;
  if (!b->p.seed) b->p.seed = 1234;
  if (!b->p.threads) b->p.threads = vf_threads();
  if (!b->p.kmeans_iters) b->p.kmeans_iters = 20;
  if (b->p.kmeans_stop_objective == 0)
    b->p.kmeans_stop_objective = b->p.kmeans_stop < 0 ? -1.0 : IVF_KMEANS_STOP_OBJECTIVE;
  if (b->p.kmeans_stop == 0) b->p.kmeans_stop = IVF_KMEANS_STOP;
  if (!b->p.train_per_centroid) b->p.train_per_centroid = IVF_TRAIN_PER_CENTROID;
  if (!b->p.kmeans_hier_min) b->p.kmeans_hier_min = IVF_KMEANS_HIER_MIN;
  if (b->p.type == IVF_RABITQ && !b->p.rabitq_bits) b->p.rabitq_bits = 1;
  if (b->p.type != IVF_RABITQ) b->p.rabitq_bits = 0;
  if (b->p.type == IVF_PQ && !b->p.pq_m) {
    uint32_t m = (uint32_t)b->d / 4;
    if (m < 1) m = 1;
    while ((uint32_t)b->d % m) m--;
    b->p.pq_m = m;
  }
  if (b->p.type != IVF_PQ) b->p.pq_m = 0;
  b->p.pq_nbits = b->p.type != IVF_PQ ? 0 : b->p.pq_nbits == 4 ? 4 : 8;
  if (b->p.type == IVF_FLAT) b->p.rerank = 0; /* flat scores are exact already */
  b->budget = b->p.memory_budget ? b->p.memory_budget : vf_memory_budget();
  b->total_hint = total_rows;
  b->p.spill_dir = NULL;
  b->out_path = vf_strdup(out_path);
  b->spill_path = path_in_dir(p->spill_dir, out_path, "spill", true);
  b->assign_path = path_in_dir(p->spill_dir, out_path, "assign", false);
  b->tmp_path = path_in_dir(NULL, out_path, "tmp", p->spill_dir != NULL);
  if (!b->out_path || !b->spill_path || !b->assign_path || !b->tmp_path) {
    ivf_builder_abort(b);
    return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  }
  /* memory plan for the streaming phase */
  /* a sampled row; keyed sampling (sample_by_id) adds its key and heap slot */
  size_t rowb = b->d * 4 + (b->p.sample_by_id ? 8 + sizeof(size_t) : 0);
  b->chunk_bytes = (size_t)4 << 20;
  if (b->budget && b->chunk_bytes > b->budget / 32) b->chunk_bytes = (size_t)(b->budget / 32);
  if (b->chunk_bytes < 64 * rowb) b->chunk_bytes = 64 * rowb;
  uint64_t stream_fixed = 3 * (uint64_t)b->chunk_bytes + ZSTD_compressBound(b->chunk_bytes) +
                          ((uint64_t)2 << 20) /* zstd level-1 context */;
  uint32_t nl_guess = b->p.nlist ? b->p.nlist : default_nlist(total_rows ? total_rows : 1000000);
  uint64_t cap = b->p.max_train;
  if (!cap) {
    uint32_t per = b->p.train_per_centroid > IVF_SAMPLE_PER_CENTROID ? b->p.train_per_centroid
                                                                     : IVF_SAMPLE_PER_CENTROID;
    cap = (uint64_t)nl_guess * per;
    if (cap < 65536) cap = 65536;
    if (b->budget) {
      uint64_t fit = b->budget / 4 / rowb;
      if (cap > fit) cap = fit;
    }
    if (cap < 1) cap = 1;
  }
  if (b->budget && cap * rowb + stream_fixed > b->budget) {
    unsigned long long bud = b->budget;
    ivf_builder_abort(b);
    return vf_error_set(err, VF_ENOMEM,
                        "index build: memory budget of %llu bytes is too small: the training sample "
                        "(%llu rows x %d) and the spill buffers need %llu (lower max_train)",
                        bud, (unsigned long long)cap, p->dim,
                        (unsigned long long)(cap * rowb + stream_fixed));
  }
  b->cap = cap;
  uint64_t mem_cap = b->p.spill_to_disk ? 0 : IVF_MEM_SPILL_MAX;
  if (b->budget) {
    uint64_t left = b->budget - cap * rowb - stream_fixed;
    mem_cap = b->p.spill_to_disk ? 0 : left / IVF_MEM_SPILL_SHARE;
  }
  if (mem_cap > SIZE_MAX / 2) mem_cap = SIZE_MAX / 2;
  vf_buf_init_named(&b->mem, (size_t)mem_cap, "the in-memory spill's share of the memory budget");
  b->mem_full = mem_cap == 0;
  if (!b->mem_full && total_rows) { /* room for the announced rows (untouched pages cost nothing) */
    uint64_t want = total_rows * (b->d * 4 + 4 + 24) + ((uint64_t)1 << 16);
    if (want > mem_cap) want = mem_cap;
    vf_error e2 = {0};
    (void)vf_buf_reserve(&b->mem, (size_t)want, &e2); /* else it grows as frames arrive */
  }
  VF_BUF_INIT(&b->sv, IVF_MAX_SPILL_FRAME);
  VF_BUF_INIT(&b->sl, IVF_MAX_SPILL_FRAME);
  VF_BUF_INIT(&b->si, IVF_MAX_SPILL_FRAME);
  VF_BUF_INIT(&b->comp, IVF_MAX_SPILL_FRAME);
  vf_status st = ivf_sampler_open(b->d, cap, total_rows, b->p.seed, &b->smp, err);
  if (st) {
    ivf_builder_abort(b);
    return st;
  }
  b->cctx = ZSTD_createCCtx();
  if (!b->cctx) {
    ivf_builder_abort(b);
    return vf_error_set(err, VF_ENOMEM, "index build: out of memory (zstd)");
  }
  b->spill_fd = open(b->spill_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (b->spill_fd < 0) {
    st = sys_err(err, "cannot create spill file", b->spill_path);
    ivf_builder_abort(b);
    return st;
  }
  *out = b;
  return VF_OK;
}

/* before a frame's first row: stage it in memory when its vectors (at most chunk_bytes plus
 * one row) still fit the in-memory share; when its id lengths and bytes then do not,
 * flush_stage moves it to the file */
static vf_status frame_begin(ivf_builder *b, vf_error *err) {
  size_t most = 16 + b->chunk_bytes + b->d * 4;
  b->mframe = !b->mem_full && b->mem.len + most <= b->mem.max;
  if (!b->mframe) {
    b->mem_full = true;
    return VF_OK;
  }
  uint64_t h[2] = {0, 0};
  b->mframe_at = b->mem.len;
  return vf_buf_append(&b->mem, h, 16, err);
}

static vf_status flush_stage(ivf_builder *b, vf_error *err) {
  if (!b->srows) return VF_OK;
  vf_status st;
  if (b->mframe) { /* {u64 rows, u64 raw}, vectors (already there), lengths, ids, padding */
    size_t raw = b->srows * b->d * 4 + b->sl.len + b->si.len, pad = (8 - raw % 8) % 8;
    uint64_t h[2] = {b->srows, raw}, zero = 0;
    size_t tail = b->sl.len + b->si.len + pad;
    if (b->mem.len + tail <= b->mem.max) {
      if ((st = vf_buf_reserve(&b->mem, tail, err))) return st;
      vf_buf_put(&b->mem, b->sl.data, b->sl.len);
      vf_buf_put(&b->mem, b->si.data, b->si.len);
      vf_buf_put(&b->mem, &zero, pad);
      memcpy(b->mem.data + b->mframe_at, h, 16);
      vf_buf_reset(&b->sl);
      vf_buf_reset(&b->si);
      b->srows = 0;
      b->mframe = false;
      return VF_OK;
    }
    /* an outsized id: this frame goes to the file after all, and so does every later one */
    vf_buf_reset(&b->sv);
    if ((st = vf_buf_append(&b->sv, b->mem.data + b->mframe_at + 16, b->srows * b->d * 4, err)))
      return st;
    b->mem.len = b->mframe_at;
    b->mframe = false;
    b->mem_full = true;
  }
  size_t raw = b->sv.len + b->sl.len + b->si.len;
  st = vf_buf_append(&b->sv, b->sl.data, b->sl.len, err);
  if (!st) st = vf_buf_append(&b->sv, b->si.data, b->si.len, err);
  if (st) return st;
  size_t bound = ZSTD_compressBound(raw), cl = raw;
  vf_buf_reset(&b->comp);
  if ((st = vf_buf_reserve(&b->comp, 24 + bound, err))) return st;
  bool plain = b->p.spill_plain || b->spill_poor >= SPILL_POOR_FRAMES;
  if (!plain) {
    cl = ZSTD_compressCCtx(b->cctx, b->comp.data + 24, bound, b->sv.data, raw, 1);
    if (ZSTD_isError(cl))
      return vf_error_set(err, VF_EINTERNAL, "%s: zstd: %s", b->spill_path, ZSTD_getErrorName(cl));
    /* a frame that zstd shrinks by less than 1/8 is stored as it is */
    if (cl > raw - raw / 8) {
      plain = true;
      cl = raw;
      b->spill_poor++;
    } else {
      b->spill_poor = 0;
    }
  }
  uint32_t h32[2] = {(uint32_t)b->srows, plain ? 1u : 0u};
  uint64_t h64[2] = {raw, cl};
  memcpy(b->comp.data, h32, 8);
  memcpy(b->comp.data + 8, h64, 16);
  if (plain) {
    if ((st = write_at(b->spill_fd, b->comp.data, 24, b->spill_off, b->spill_path, err)) ||
        (st = write_at(b->spill_fd, b->sv.data, raw, b->spill_off + 24, b->spill_path, err)))
      return st;
  } else if ((st = write_at(b->spill_fd, b->comp.data, 24 + cl, b->spill_off, b->spill_path, err))) {
    return st;
  }
  b->spill_off += 24 + cl;
  b->spill_bytes += 24 + cl;
  vf_buf_reset(&b->sv);
  vf_buf_reset(&b->sl);
  vf_buf_reset(&b->si);
  b->srows = 0;
  return VF_OK;
}

/* the sampling key of a point id (params.sample_by_id): FNV-1a over the bytes, mixed with the
 * seed by splitmix64's finalizer */
static uint64_t id_key(const char *id, size_t len, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)id[i]) * 0x100000001b3ull;
  uint64_t z = h ^ (seed + 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* ivf_builder_add(): see ivf.h. */
vf_status ivf_builder_add(ivf_builder *b, const float *vecs, size_t n, const char *const *ids,
                          const size_t *ids_len, vf_error *err) {
  size_t d = b->d;
  vf_status st = vf_check_cancel(err);
  if (st) return st;
  float *nbuf = NULL;
  if (b->p.metric == CORPUS_COSINE) {
    nbuf = vf_mallocarray(n ? n : 1, d * sizeof(float));
    if (!nbuf) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    const float *v = vecs + i * d;
    for (size_t j = 0; j < d; j++)
      if (!isfinite(v[j])) {
        free(nbuf);
        return vf_error_set(err, VF_ECORRUPT,
                            "index build: row %zu of this batch has a non-finite component %zu", i, j);
      }
    if (ids_len[i] > UINT32_MAX) {
      free(nbuf);
      return vf_error_set(err, VF_EUSAGE, "index build: id of row %zu is too long", i);
    }
  }
  if (nbuf) {
    memcpy(nbuf, vecs, n * d * sizeof(float));
    idx_normalize_rows(nbuf, n, d);
    vecs = nbuf;
  }
  if (b->p.sample_by_id) {
    uint64_t *keys = vf_mallocarray(n ? n : 1, sizeof *keys);
    if (!keys) VF_FAIL(vf_error_set(err, VF_ENOMEM, "index build: out of memory"));
    for (size_t i = 0; i < n; i++) keys[i] = id_key(ids[i], ids_len[i], b->p.seed);
    st = ivf_sampler_offer_keyed(b->smp, vecs, keys, n, err);
    free(keys);
  } else {
    st = ivf_sampler_offer(b->smp, vecs, n, err);
  }
  if (st) goto out;
  for (size_t i = 0; i < n; i++) {
    uint32_t l = (uint32_t)ids_len[i];
    if (!b->srows) VF_TRY(frame_begin(b, err));
    VF_TRY(vf_buf_append(b->mframe ? &b->mem : &b->sv, vecs + i * d, d * 4, err));
    VF_TRY(vf_buf_append(&b->sl, &l, 4, err));
    VF_TRY(vf_buf_append(&b->si, ids[i], ids_len[i], err));
    b->srows++;
    b->rows++;
    b->id_bytes += l;
    if (b->srows * d * 4 >= b->chunk_bytes || b->si.len >= b->chunk_bytes) VF_TRY(flush_stage(b, err));
  }
  st = VF_OK;
out:
  free(nbuf);
  return st;
}

/* ------------------------------------------------------------------ replay */

typedef struct replay {
  uint64_t off;  /* the next frame in the spill file */
  size_t moff;   /* the next frame in memory (before the file's) */
  vf_buf comp, raw;
  size_t n;
  const float *vecs;
  const uint32_t *idlen;
  const uint8_t *ids;
  uint64_t idcap; /* bytes of the id region of the frame */
} replay;

static vf_status replay_next(ivf_builder *b, replay *r, bool *eof, vf_error *err) {
  if (r->moff < b->mem.len) { /* our own memory, written by flush_stage */
    uint64_t h[2];
    memcpy(h, b->mem.data + r->moff, 16);
    const uint8_t *fr = b->mem.data + r->moff + 16;
    size_t n = (size_t)h[0], raw = (size_t)h[1];
    *eof = false;
    r->moff += 16 + raw + (8 - raw % 8) % 8;
    r->n = n;
    r->vecs = (const float *)(const void *)fr;
    r->idlen = (const uint32_t *)(const void *)(fr + n * b->d * 4);
    r->ids = fr + n * (b->d * 4 + 4);
    r->idcap = raw - (uint64_t)n * (b->d * 4 + 4);
    return VF_OK;
  }
  *eof = r->off >= b->spill_off;
  if (*eof) return VF_OK;
  uint8_t h[24];
  vf_status st = read_at(b->spill_fd, h, 24, r->off, b->spill_path, err);
  if (st) return st;
  uint32_t n, plain;
  uint64_t raw, cl;
  memcpy(&n, h, 4);
  memcpy(&plain, h + 4, 4);
  memcpy(&raw, h + 8, 8);
  memcpy(&cl, h + 16, 8);
  if (cl > b->spill_off - r->off - 24 || raw < (uint64_t)n * (b->d * 4 + 4) ||
      raw > IVF_MAX_SPILL_FRAME || plain > 1 || (plain && cl != raw))
    return vf_error_set(err, VF_ECORRUPT, "%s: spill frame at %llu is damaged", b->spill_path,
                        (unsigned long long)r->off);
  vf_buf_reset(&r->comp);
  vf_buf_reset(&r->raw);
  if ((st = vf_buf_reserve(&r->raw, raw, err))) return st;
  if (plain) {
    if ((st = read_at(b->spill_fd, r->raw.data, raw, r->off + 24, b->spill_path, err))) return st;
  } else {
    if ((st = vf_buf_reserve(&r->comp, cl, err))) return st;
    if ((st = read_at(b->spill_fd, r->comp.data, cl, r->off + 24, b->spill_path, err))) return st;
    size_t got = ZSTD_decompress(r->raw.data, raw, r->comp.data, cl);
    if (ZSTD_isError(got) || got != raw)
      return vf_error_set(err, VF_ECORRUPT, "%s: spill frame at %llu does not decompress",
                          b->spill_path, (unsigned long long)r->off);
  }
  r->off += 24 + cl;
  r->n = n;
  r->vecs = (const float *)(const void *)r->raw.data;
  r->idlen = (const uint32_t *)(const void *)(r->raw.data + (size_t)n * b->d * 4);
  r->ids = r->raw.data + (size_t)n * (b->d * 4 + 4);
  r->idcap = raw - (uint64_t)n * (b->d * 4 + 4);
  return VF_OK;
}

/* ------------------------------------------------------------------ encode */

typedef struct enc_job {
  const ivf_builder *b;
  const ivf_quant *q;
  const float *cent, *pqnorm;
  const float *x;
  const uint32_t *as;
  size_t n;
  uint8_t *codes; /* n x code_size */
  float *scratch; /* per thread: 2 x BLOCK x max(D, d) + BLOCK x 256 */
  size_t sstride;
  atomic_size_t next;
} enc_job;

static void enc_worker(void *arg, int t) {
  enc_job *j = arg;
  const ivf_geom *g = &j->q->g;
  size_t d = g->d, W = g->D > d ? g->D : d;
  float *res = j->scratch + (size_t)t * j->sstride, *rot = res + BLOCK * W, *ip = rot + BLOCK * W;
  const ivf_kern *K = ivf_kern_active();
  size_t nb = (j->n + BLOCK - 1) / BLOCK;
  for (;;) {
    size_t bi = atomic_fetch_add(&j->next, 1);
    if (bi >= nb) break;
    size_t r0 = bi * BLOCK, nr = j->n - r0 < BLOCK ? j->n - r0 : BLOCK;
    for (size_t i = 0; i < nr; i++) {
      const float *x = j->x + (r0 + i) * d, *c = j->cent + (size_t)j->as[r0 + i] * d;
      float *r = res + i * W;
      for (size_t e = 0; e < d; e++)
        r[e] = x[e] - c[e];
      for (size_t e = d; e < W; e++)
        r[e] = 0.0f;
    }
    uint8_t *out = j->codes + r0 * g->code_size;
    switch (g->type) {
    case IVF_FLAT:
      for (size_t i = 0; i < nr; i++)
        memcpy(out + i * g->code_size, j->x + (r0 + i) * d, d * 4);
      break;
    case IVF_SQ8:
      for (size_t i = 0; i < nr; i++)
        ivf_encode_sq8(j->q, res + i * W, out + i * g->code_size);
      break;
    case IVF_PQ:
      for (size_t m = 0; m < g->m; m++) {
        for (size_t i = 0; i < nr; i++)
          memcpy(rot + i * g->dsub, res + i * W + m * g->dsub, g->dsub * 4);
        size_t ks = g->ksub;
        const float *cb = j->q->pq_cb + m * ks * g->dsub, *cn = j->pqnorm + m * ks;
        vf_sgemm_nt(nr, ks, g->dsub, rot, g->dsub, cb, g->dsub, ip, ks);
        for (size_t i = 0; i < nr; i++) {
          uint32_t bc;
          K->argmin(cn, ip + i * ks, ks, &bc);
          out[i * g->code_size + m] = (uint8_t)bc;
        }
      }
      break;
    case IVF_RABITQ:
      vf_sgemm_nt(nr, g->D, g->D, res, W, j->q->rot, g->D, rot, g->D);
      for (size_t i = 0; i < nr; i++)
        ivf_encode_rabitq(j->q, rot + i * g->D, out + i * g->code_size);
      break;
    }
  }
}

/* ---------------------------------------------------------- list buffers */

typedef struct writer {
  ivf_builder *b;
  const ivf_geom *g;
  uint32_t nlist;
  lbuf *lb;
  uint64_t *count, *off, *pos; /* per list: rows, offset in the lists section, position */
  uint64_t lists_off, rerank_off;
  bool keep_vecs;
  uint64_t alloc, cap, flushes; /* bytes allocated to list buffers, their ceiling */
  uint8_t *tbuf; /* PQ transpose scratch */
  size_t tcap;
} writer;

static size_t rec_bytes(const writer *w) {
  return 8 + w->g->code_size + (w->keep_vecs ? w->g->d * 4 : 0);
}

static vf_status flush_list(writer *w, uint32_t l, bool final, vf_error *err) {
  lbuf *L = &w->lb[l];
  const ivf_geom *g = w->g;
  ivf_builder *b = w->b;
  size_t n = L->n;
  if (g->type == IVF_PQ && !final) n = n / IVF_PQ_BLOCK * IVF_PQ_BLOCK;
  if (!n) return VF_OK;
  uint64_t base = w->lists_off + w->off[l];
  uint64_t code_base = base + ivf_align(w->count[l] * 8);
  vf_status st = write_at(b->out_fd, L->rows, n * 8, base + L->written * 8, b->tmp_path, err);
  if (st) return st;
  if (g->type == IVF_PQ) {
    size_t nblk = (n + IVF_PQ_BLOCK - 1) / IVF_PQ_BLOCK, need = nblk * g->pq_block_bytes;
    if (need > w->tcap) {
      uint8_t *t = vf_realloc(w->tbuf, need);
      if (!t) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
      w->tbuf = t;
      w->tcap = need;
    }
    if (g->nbits == 4) {
      for (size_t bi = 0; bi < nblk; bi++) {
        size_t r0 = bi * IVF_PQ_BLOCK, nr = n - r0 < IVF_PQ_BLOCK ? n - r0 : IVF_PQ_BLOCK;
        ivf_pq4_pack(L->codes + r0 * g->m, nr, g->m, w->tbuf + bi * g->pq_block_bytes);
      }
    } else {
      memset(w->tbuf, 0, need);
      for (size_t i = 0; i < n; i++) {
        uint8_t *blk = w->tbuf + (i / IVF_PQ_BLOCK) * g->pq_block_bytes;
        for (size_t m = 0; m < g->m; m++)
          blk[m * IVF_PQ_BLOCK + i % IVF_PQ_BLOCK] = L->codes[i * g->m + m];
      }
    }
    st = write_at(b->out_fd, w->tbuf, need,
                  code_base + L->written / IVF_PQ_BLOCK * g->pq_block_bytes, b->tmp_path, err);
  } else {
    st = write_at(b->out_fd, L->codes, n * g->code_size, code_base + L->written * g->code_size,
                  b->tmp_path, err);
  }
  if (st) return st;
  if (w->keep_vecs &&
      (st = write_at(b->out_fd, L->vecs, n * g->d * 4, w->rerank_off + (w->pos[l] + L->written) * g->d * 4,
                     b->tmp_path, err)))
    return st;
  size_t left = L->n - n;
  if (left) {
    memmove(L->rows, L->rows + n, left * 8);
    memmove(L->codes, L->codes + n * g->code_size, left * g->code_size);
    if (w->keep_vecs) memmove(L->vecs, L->vecs + n * g->d, left * g->d * 4);
  }
  L->written += n;
  L->n = left;
  return VF_OK;
}

/* (re)size one list's buffer to nc rows (0 frees it), keeping w->alloc = bytes allocated */
static vf_status lbuf_resize(writer *w, lbuf *L, size_t nc, vf_error *err) {
  const ivf_geom *g = w->g;
  if (nc == L->cap) return VF_OK;
  if (nc == 0) {
    free(L->rows);
    free(L->codes);
    free(L->vecs);
    L->rows = NULL;
    L->codes = NULL;
    L->vecs = NULL;
  } else {
    int64_t *r = vf_realloc(L->rows, nc * 8);
    if (r) L->rows = r;
    uint8_t *c = r ? vf_realloc(L->codes, nc * g->code_size) : NULL;
    if (c) L->codes = c;
    float *v = c && w->keep_vecs ? vf_realloc(L->vecs, nc * g->d * 4) : NULL;
    if (v) L->vecs = v;
    if (!r || !c || (w->keep_vecs && !v))
      return vf_error_set(err, VF_ENOMEM, "index build: out of memory for list buffers");
  }
  w->alloc = w->alloc - (uint64_t)L->cap * rec_bytes(w) + (uint64_t)nc * rec_bytes(w);
  L->cap = nc;
  return VF_OK;
}

/* write every list's buffered rows to the file and give the buffers back (PQ keeps its
 * partial 32-row block) */
static vf_status flush_all(writer *w, vf_error *err) {
  w->flushes++;
  for (uint32_t k = 0; k < w->nlist; k++) {
    vf_status st = flush_list(w, k, false, err);
    if (!st) st = lbuf_resize(w, &w->lb[k], w->lb[k].n ? IVF_PQ_BLOCK : 0, err);
    if (st) return st;
  }
  return VF_OK;
}

static vf_status lbuf_push(writer *w, uint32_t l, int64_t row, const uint8_t *code,
                           const float *vec, vf_error *err) {
  lbuf *L = &w->lb[l];
  const ivf_geom *g = w->g;
  vf_status st;
  for (int pass = 0; L->n == L->cap; pass++) {
    uint64_t left = w->count[l] - L->written; /* rows of this list not yet in the file */
    size_t nc = L->cap ? 2 * L->cap : 64;
    /* a list's first buffer holds all its rows when the budget leaves room for them (no
     * regrowth copies: most builds' lists fit); else it doubles from 64 */
    if (!L->cap && w->alloc + left * rec_bytes(w) <= w->cap) nc = (size_t)left;
    if (nc > left) nc = (size_t)left;
    if (nc <= L->n) nc = L->n + 1;
    /* growing past what the budget leaves: write everything out first (once; a single
     * list growing by 64 rows is allowed to overshoot a tiny budget) */
    if (pass == 0 && w->alloc > 0 && w->alloc + (uint64_t)(nc - L->cap) * rec_bytes(w) > w->cap) {
      if ((st = flush_all(w, err))) return st;
      continue;
    }
    if ((st = lbuf_resize(w, L, nc, err))) return st;
  }
  L->rows[L->n] = row;
  memcpy(L->codes + L->n * g->code_size, code, g->code_size);
  if (w->keep_vecs) memcpy(L->vecs + L->n * g->d, vec, g->d * 4);
  L->n++;
  return VF_OK;
}

/* --------------------------------------------------------------- finish */

static const char *phase_of(const ivf_builder *b) {
  return b->p.progress ? b->p.progress : "index build";
}

static vf_status write_file_checksum(ivf_builder *b, uint64_t size, vf_error *err) {
  size_t bs = (size_t)1 << 20;
  uint8_t *buf = vf_malloc(bs);
  if (!buf) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  ivf_hash h;
  ivf_hash_init(&h);
  vf_stage sg;
  vf_stage_begin(&sg, phase_of(b), "checksum", "MiB", (size + bs - 1) / bs);
  vf_status st = VF_OK;
  for (uint64_t o = 0; o < size - 8 && !st; o += bs) {
    size_t n = size - 8 - o < bs ? (size_t)(size - 8 - o) : bs;
    if ((st = vf_check_cancel(err))) break;
    if (!(st = read_at(b->out_fd, buf, n, o, b->tmp_path, err))) ivf_hash_update(&h, buf, n);
    vf_stage_update(&sg, o / bs + 1, NULL);
  }
  free(buf);
  if (st) return st;
  uint64_t c = ivf_hash_final(&h);
  return write_at(b->out_fd, &c, 8, size - 8, b->tmp_path, err);
}

static vf_status fsync_dir_of(const char *path, vf_error *err) {
  char *dcopy = vf_strdup(path);
  if (!dcopy) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  int fd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  free(dcopy);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
  return VF_OK;
}

typedef struct finish_state {
  float *cent, *cnorm, *pqnorm, *res, *enc_scratch;
  uint32_t *as;
  uint8_t *codes;
  uint64_t *counts, *loff, *lpos;
  double *smin, *smax;
  replay r;
  writer w;
  ivf_quant q;
  vf_buf ids;
} finish_state;

static vf_status do_finish(ivf_builder *b, finish_state *f, ivf_build_report *rep, vf_error *err) {
  vf_status st;
  size_t d = b->d;
  int threads = b->p.threads > 0 ? b->p.threads : 1;
  if ((st = flush_stage(b, err))) return st;
  ZSTD_freeCCtx(b->cctx);
  b->cctx = NULL;
  vf_buf_free(&b->sv);
  vf_buf_free(&b->sl);
  vf_buf_free(&b->si);
  vf_buf_free(&b->comp);
  double t_train0 = vf_now();
  rep->seconds_read = t_train0 - b->t_open;
  rep->rows = b->rows;
  rep->type = b->p.type;
  rep->training_rows_seen = ivf_sampler_seen(b->smp);
  if (!b->rows) return vf_error_set(err, VF_EUSAGE, "%s: no rows were added", b->out_path);
  size_t ns = 0;
  if ((st = ivf_sampler_sort_keyed(b->smp, err))) return st;
  const float *sample = ivf_sampler_rows(b->smp, &ns);
  uint32_t nlist = b->p.nlist ? b->p.nlist : default_nlist(b->rows);
  if (!b->p.nlist && nlist > ns) nlist = (uint32_t)ns;
  if (nlist > ns)
    return vf_error_set(err, VF_EUSAGE,
                        "%s: nlist %u is larger than the %zu training rows (add rows or lower nlist)",
                        b->out_path, nlist, ns);
  rep->nlist = nlist;
  rep->training_rows_retained = ns;
  /* 1. train */
  /* only PQ needs the sample's final assignment (its residuals train the codebooks); for the
   * other codes pass A assigns every row anyway, so k-means skips that extra pass */
  bool want_as = b->p.type == IVF_PQ;
  f->cent = vf_mallocarray((size_t)nlist * d, sizeof(float));
  f->cnorm = vf_mallocarray(nlist, sizeof(float));
  f->as = want_as ? vf_mallocarray(ns, sizeof(uint32_t)) : NULL;
  if (!f->cent || !f->cnorm || (want_as && !f->as))
    return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  int iters_run = 0;
  size_t km_rows = 0;
  idx_kmeans_opts ko = {.iters = b->p.kmeans_iters, .seed = b->p.seed, .threads = threads,
                        .spherical = b->p.metric == CORPUS_COSINE, .progress = phase_of(b),
                        .stop_changed = b->p.kmeans_stop,
                        .stop_objective = b->p.kmeans_stop_objective, .max_per_centroid = b->p.train_per_centroid,
                        .iters_run = &iters_run, .rows_used = &km_rows};
  if (nlist >= b->p.kmeans_hier_min) {
    ko.hier_min_k = b->p.kmeans_hier_min;
    ko.hier_refine = IVF_KMEANS_HIER_REFINE;
  }
  if ((st = idx_kmeans(sample, ns, d, nlist, &ko, f->cent, f->as, err)))
    return vf_error_prefix(err, "%s: ", b->out_path);
  rep->kmeans_rows = km_rows;
  rep->kmeans_iterations = iters_run;
  rep->kmeans_max_iterations = nlist == 1 ? 1 : ko.hier_min_k ? ko.hier_refine : b->p.kmeans_iters;
  for (uint32_t l = 0; l < nlist; l++) {
    float s = 0.0f;
    for (size_t e = 0; e < d; e++)
      s += f->cent[(size_t)l * d + e] * f->cent[(size_t)l * d + e];
    f->cnorm[l] = s;
  }
  ivf_geom g;
  ivf_geom_init(&g, b->p.type, d, b->p.pq_m, b->p.pq_nbits, b->p.rabitq_bits);
  f->q.g = g;
  if (g.type == IVF_PQ) {
    f->res = vf_mallocarray(ns, d * sizeof(float));
    if (!f->res) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
    for (size_t i = 0; i < ns; i++)
      for (size_t e = 0; e < d; e++)
        f->res[i * d + e] = sample[i * d + e] - f->cent[(size_t)f->as[i] * d + e];
    if ((st = ivf_pq_train(&f->q, f->res, ns, b->p.seed, threads, phase_of(b), err))) return st;
    free(f->res);
    f->res = NULL;
    f->pqnorm = vf_mallocarray(g.m * g.ksub, sizeof(float));
    if (!f->pqnorm) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
    for (size_t i = 0; i < g.m * g.ksub; i++) {
      const float *c = f->q.pq_cb + i * g.dsub;
      float s = 0.0f;
      for (size_t e = 0; e < g.dsub; e++)
        s += c[e] * c[e];
      f->pqnorm[i] = s;
    }
  } else if (g.type == IVF_RABITQ) {
    if ((st = ivf_rabitq_rotation(&f->q, b->p.seed, err))) return st;
  }
  free(f->as);
  f->as = NULL;
  /* the sample is no longer needed: give its memory back to the list buffers */
  ivf_sampler_close(b->smp);
  b->smp = NULL;
  double t_assign0 = vf_now();
  rep->seconds_train = t_assign0 - t_train0;

  /* 2. pass A: assign, count, SQ8 bounds */
  b->assign_fd = open(b->assign_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (b->assign_fd < 0) return sys_err(err, "cannot create spill file", b->assign_path);
  f->counts = vf_calloc(nlist, sizeof(uint64_t));
  if (g.type == IVF_SQ8) {
    f->smin = vf_mallocarray(d, sizeof(double));
    f->smax = vf_mallocarray(d, sizeof(double));
    if (!f->smin || !f->smax) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
    for (size_t e = 0; e < d; e++) {
      f->smin[e] = INFINITY;
      f->smax[e] = -INFINITY;
    }
  }
  if (!f->counts) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  VF_BUF_INIT(&f->r.comp, IVF_MAX_SPILL_FRAME);
  VF_BUF_INIT(&f->r.raw, IVF_MAX_SPILL_FRAME);
  uint64_t aoff = 0, arows = 0;
  size_t ascap = 0;
  vf_stage sg;
  vf_stage_begin(&sg, phase_of(b), "assign", NULL, b->rows);
  vf_stage_update(&sg, 0, "%u lists", nlist);
  for (;;) {
    bool eof;
    if ((st = vf_check_cancel(err))) return st;
    if ((st = replay_next(b, &f->r, &eof, err))) return st;
    if (eof) break;
    size_t n = f->r.n;
    if (n > ascap) {
      free(f->as);
      if (!(f->as = vf_mallocarray(n, sizeof(uint32_t))))
        return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
      ascap = n;
    }
    if ((st = ivf_assign_l2(f->r.vecs, n, d, f->cent, f->cnorm, nlist, threads, f->as, NULL, err)))
      return st;
    for (size_t i = 0; i < n; i++) {
      f->counts[f->as[i]]++;
      if (f->smin) {
        const float *x = f->r.vecs + i * d, *c = f->cent + (size_t)f->as[i] * d;
        for (size_t e = 0; e < d; e++) {
          double v = (double)(x[e] - c[e]);
          if (v < f->smin[e]) f->smin[e] = v;
          if (v > f->smax[e]) f->smax[e] = v;
        }
      }
    }
    if ((st = write_at(b->assign_fd, f->as, n * 4, aoff, b->assign_path, err))) return st;
    aoff += n * 4;
    arows += n;
    vf_stage_update(&sg, arows, "%u lists", nlist);
  }
  b->spill_bytes += aoff;
  if (f->smin) {
    f->q.sq_min = vf_mallocarray(d, sizeof(float));
    f->q.sq_step = vf_mallocarray(d, sizeof(float));
    if (!f->q.sq_min || !f->q.sq_step) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
    for (size_t e = 0; e < d; e++) {
      f->q.sq_min[e] = (float)f->smin[e];
      f->q.sq_step[e] = (float)((f->smax[e] - f->smin[e]) / 255.0);
    }
  }

  /* 3. layout */
  ivf_hdr h = {0};
  h.version = g.type == IVF_PQ && g.nbits == 4 ? IVF_VERSION_PQ4 : IVF_VERSION;
  h.pq_nbits = h.version >= IVF_VERSION_PQ4 ? g.nbits : 0;
  h.metric = (uint32_t)b->p.metric;
  h.dim = (int32_t)d;
  h.type = (uint32_t)g.type;
  h.nlist = nlist;
  h.pq_m = b->p.pq_m;
  h.rabitq_bits = b->p.rabitq_bits;
  h.rerank = b->p.rerank;
  h.seed = b->p.seed;
  h.rows = b->rows;
  memcpy(h.corpus_id, b->p.corpus_id, 16);
  f->loff = vf_calloc(nlist, sizeof(uint64_t));
  f->lpos = vf_calloc(nlist, sizeof(uint64_t));
  if (!f->loff || !f->lpos) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  uint64_t lbytes = 0, pos = 0, lmax = 0, sq = 0;
  for (uint32_t l = 0; l < nlist; l++) {
    f->loff[l] = lbytes;
    f->lpos[l] = pos;
    lbytes += ivf_list_bytes(&g, f->counts[l]);
    pos += f->counts[l];
    if (f->counts[l] > lmax) lmax = f->counts[l];
    sq += f->counts[l] * f->counts[l];
  }
  rep->list_max_over_mean = (double)lmax / ((double)b->rows / nlist);
  rep->list_balance = (double)sq / (double)b->rows;
  uint64_t len[IVF_NSECTIONS] = {(uint64_t)nlist * d * 4,
                                 ivf_quant_bytes(&g),
                                 (uint64_t)nlist * 24,
                                 lbytes,
                                 (b->rows + 1) * 8,
                                 b->id_bytes,
                                 h.rerank ? b->rows * d * 4 : 0};
  uint64_t o = IVF_HEADER_BYTES;
  for (int s = 0; s < IVF_NSECTIONS; s++) {
    o = ivf_align(o);
    h.off[s] = o;
    h.len[s] = len[s];
    o += len[s];
  }
  h.file_bytes = o + 8;
  b->out_fd = open(b->tmp_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (b->out_fd < 0) return sys_err(err, "cannot create", b->tmp_path);
  if (ftruncate(b->out_fd, (off_t)h.file_bytes) != 0) return sys_err(err, "cannot size", b->tmp_path);
  uint8_t hb[IVF_HEADER_BYTES];
  ivf_hdr_write(&h, hb);
  if ((st = write_at(b->out_fd, hb, sizeof hb, 0, b->tmp_path, err)) ||
      (st = write_at(b->out_fd, f->cent, len[IVF_S_CENTROIDS], h.off[IVF_S_CENTROIDS], b->tmp_path, err)))
    return st;
  const void *qsrc = NULL;
  if (g.type == IVF_PQ) qsrc = f->q.pq_cb;
  if (g.type == IVF_RABITQ) qsrc = f->q.rot;
  if (g.type == IVF_SQ8) {
    if ((st = write_at(b->out_fd, f->q.sq_min, d * 4, h.off[IVF_S_QUANT], b->tmp_path, err)) ||
        (st = write_at(b->out_fd, f->q.sq_step, d * 4, h.off[IVF_S_QUANT] + d * 4, b->tmp_path, err)))
      return st;
  } else if (qsrc && (st = write_at(b->out_fd, qsrc, len[IVF_S_QUANT], h.off[IVF_S_QUANT], b->tmp_path, err))) {
    return st;
  }
  {
    uint64_t *dir = vf_mallocarray(nlist, 24);
    if (!dir) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
    for (uint32_t l = 0; l < nlist; l++) {
      dir[3 * l] = f->loff[l];
      dir[3 * l + 1] = f->counts[l];
      dir[3 * l + 2] = f->lpos[l];
    }
    st = write_at(b->out_fd, dir, len[IVF_S_DIR], h.off[IVF_S_DIR], b->tmp_path, err);
    free(dir);
    if (st) return st;
  }

  /* 4. pass B: encode, buffer per list, write */
  writer *w = &f->w;
  w->b = b;
  w->g = &g;
  w->nlist = nlist;
  w->count = f->counts;
  w->off = f->loff;
  w->pos = f->lpos;
  w->lists_off = h.off[IVF_S_LISTS];
  w->rerank_off = h.off[IVF_S_RERANK];
  w->keep_vecs = h.rerank != 0;
  w->lb = vf_calloc(nlist, sizeof(lbuf));
  if (!w->lb) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  size_t W = g.D > d ? g.D : d;
  size_t sstride = 2 * BLOCK * W + BLOCK * 256;
  f->enc_scratch = vf_mallocarray((size_t)threads * sstride, sizeof(float));
  if (!f->enc_scratch) return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
  /* budget left for the list buffers */
  uint64_t rowsmax = b->chunk_bytes / (d * 4) + 1;
  uint64_t fixed = 2 * (uint64_t)b->chunk_bytes + ZSTD_compressBound(b->chunk_bytes) + b->chunk_bytes +
                   (uint64_t)nlist * (d * 8 + sizeof(lbuf) + 48) + ivf_quant_bytes(&g) +
                   (uint64_t)threads * (sstride * 4 + (uint64_t)BLOCK * (nlist < 1024 ? nlist : 1024) * 4) +
                   rowsmax * (4 + 8 + g.code_size) + ((uint64_t)1 << 20) /* checksum buffer */ +
                   b->mem.len /* the in-memory spill frames pass B replays */;
  if (g.type == IVF_PQ) fixed += (uint64_t)nlist * (IVF_PQ_BLOCK - 1) * rec_bytes(w);
  if (b->budget) {
    if (b->budget < fixed + ((uint64_t)1 << 18))
      return vf_error_set(err, VF_ENOMEM,
                          "%s: memory budget of %llu bytes is too small for %u lists of this index "
                          "(needs at least %llu)",
                          b->out_path, (unsigned long long)b->budget, nlist,
                          (unsigned long long)(fixed + ((uint64_t)1 << 18)));
    w->cap = (b->budget - fixed) / 8 * 7; /* 1/8 for the allocator's slack and fragmentation */
  } else {
    w->cap = UNLIMITED_LISTBUF;
  }
  VF_BUF_INIT(&f->ids, IVF_MAX_SPILL_FRAME);
  uint64_t id_pos = 0, row = 0, idoff_w = h.off[IVF_S_IDOFF], idb_w = h.off[IVF_S_IDBYTES];
  {
    uint64_t zero = 0;
    if ((st = write_at(b->out_fd, &zero, 8, idoff_w, b->tmp_path, err))) return st;
    idoff_w += 8;
  }
  f->r.off = 0;
  f->r.moff = 0;
  aoff = 0;
  size_t ccap = 0;
  vf_stage_begin(&sg, phase_of(b), "encode", NULL, b->rows);
  vf_stage_update(&sg, 0, "%s codes", ivf_code_name(g.type));
  for (;;) {
    bool eof;
    if ((st = vf_check_cancel(err))) return st;
    if ((st = replay_next(b, &f->r, &eof, err))) return st;
    if (eof) break;
    size_t n = f->r.n;
    if (n > ascap) {
      free(f->as);
      if (!(f->as = vf_mallocarray(n, sizeof(uint32_t))))
        return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
      ascap = n;
    }
    if (n > ccap) {
      free(f->codes);
      if (!(f->codes = vf_mallocarray(n, g.code_size)))
        return vf_error_set(err, VF_ENOMEM, "index build: out of memory");
      ccap = n;
    }
    if ((st = read_at(b->assign_fd, f->as, n * 4, aoff, b->assign_path, err))) return st;
    aoff += n * 4;
    for (size_t i = 0; i < n; i++)
      if (f->as[i] >= nlist)
        return vf_error_set(err, VF_ECORRUPT, "%s: damaged assignment spill", b->assign_path);
    enc_job j = {.b = b, .q = &f->q, .cent = f->cent, .pqnorm = f->pqnorm, .x = f->r.vecs,
                 .as = f->as, .n = n, .codes = f->codes, .scratch = f->enc_scratch,
                 .sstride = sstride};
    atomic_init(&j.next, 0);
    int nt = threads;
    if ((size_t)nt > (n + BLOCK - 1) / BLOCK) nt = (int)((n + BLOCK - 1) / BLOCK);
    if ((st = vf_blas_require(err))) return st;
    int saved = vf_blas_single_begin();
    st = ivf_parallel(nt, enc_worker, &j, err);
    vf_blas_single_end(saved);
    if (st) return st;
    for (size_t i = 0; i < n; i++)
      if ((st = lbuf_push(w, f->as[i], (int64_t)(row + i), f->codes + i * g.code_size,
                          f->r.vecs + i * d, err)))
        return st;
    /* ids: offsets and bytes in row order */
    vf_buf_reset(&f->ids);
    if ((st = vf_buf_reserve(&f->ids, n * 8, err))) return st;
    uint64_t idb = 0;
    for (size_t i = 0; i < n; i++) {
      idb += f->r.idlen[i];
      if (idb > f->r.idcap) return vf_error_set(err, VF_ECORRUPT, "%s: damaged spill", b->spill_path);
      uint64_t v = id_pos + idb;
      vf_buf_put(&f->ids, &v, 8);
    }
    if ((st = write_at(b->out_fd, f->ids.data, n * 8, idoff_w, b->tmp_path, err)) ||
        (st = write_at(b->out_fd, f->r.ids, idb, idb_w, b->tmp_path, err)))
      return st;
    idoff_w += n * 8;
    idb_w += idb;
    id_pos += idb;
    row += n;
    vf_stage_update(&sg, row, "%s codes, %llu list-buffer flushes", ivf_code_name(g.type),
                    (unsigned long long)w->flushes);
  }
  vf_buf_free(&b->mem); /* both passes have replayed the in-memory frames */
  if (row != b->rows || id_pos != b->id_bytes)
    return vf_error_set(err, VF_EINTERNAL, "%s: the spill replays %llu rows, %llu were added",
                        b->spill_path, (unsigned long long)row, (unsigned long long)b->rows);
  vf_stage_begin(&sg, phase_of(b), "write lists", "lists", nlist);
  for (uint32_t l = 0; l < nlist; l++) {
    if ((l & 63) == 0 && (st = vf_check_cancel(err))) return st;
    if ((st = flush_list(w, l, true, err))) return st;
    vf_stage_update(&sg, (uint64_t)l + 1, NULL);
  }
  double t_write0 = vf_now();
  rep->seconds_assign = t_write0 - t_assign0;
  /* 5. checksum, fsync, rename */
  if ((st = write_file_checksum(b, h.file_bytes, err))) return st;
  if (fsync(b->out_fd) != 0) return sys_err(err, "fsync failed", b->tmp_path);
  close(b->out_fd);
  b->out_fd = -1;
  if (rename(b->tmp_path, b->out_path) != 0) return sys_err(err, "cannot rename into place", b->out_path);
  fsync_dir_of(b->out_path, err);
  rep->spill_bytes = b->spill_bytes;
  rep->seconds_write = vf_now() - t_write0;
  vf_log(VF_LOG_DEBUG, "%s: %llu rows, %u lists, %llu list-buffer flushes", b->out_path,
         (unsigned long long)b->rows, nlist, (unsigned long long)w->flushes);
  return VF_OK;
}

static void finish_state_free(finish_state *f) {
  free(f->cent);
  free(f->cnorm);
  free(f->pqnorm);
  free(f->res);
  free(f->enc_scratch);
  free(f->as);
  free(f->codes);
  free(f->counts);
  free(f->loff);
  free(f->lpos);
  free(f->smin);
  free(f->smax);
  vf_buf_free(&f->r.comp);
  vf_buf_free(&f->r.raw);
  vf_buf_free(&f->ids);
  if (f->w.lb)
    for (uint32_t l = 0; l < f->w.nlist; l++) {
      free(f->w.lb[l].rows);
      free(f->w.lb[l].codes);
      free(f->w.lb[l].vecs);
    }
  free(f->w.lb);
  free(f->w.tbuf);
  ivf_quant_free(&f->q);
}

/* ivf_builder_finish(): see ivf.h. */
vf_status ivf_builder_finish(ivf_builder *b, ivf_build_report *report, vf_error *err) {
  ivf_build_report rep = {0};
  finish_state f;
  memset(&f, 0, sizeof f);
  vf_status st = do_finish(b, &f, &rep, err);
  finish_state_free(&f);
  rep.seconds = vf_now() - b->t_open;
  rep.peak_rss_bytes = vf_peak_rss_bytes();
  if (report) {
    uint64_t src = report->source_bytes; /* filled by the caller */
    *report = rep;
    report->source_bytes = src;
  }
  ivf_builder_abort(b); /* removes spills and the temp file (renamed away on success) */
  return st;
}

/* ivf_builder_abort(): see ivf.h. */
void ivf_builder_abort(ivf_builder *b) {
  if (!b) return;
  if (b->spill_fd >= 0) close(b->spill_fd);
  if (b->assign_fd >= 0) close(b->assign_fd);
  if (b->out_fd >= 0) close(b->out_fd);
  if (b->spill_path) unlink(b->spill_path);
  if (b->assign_path) unlink(b->assign_path);
  if (b->tmp_path) unlink(b->tmp_path);
  ivf_sampler_close(b->smp);
  ZSTD_freeCCtx(b->cctx);
  vf_buf_free(&b->sv);
  vf_buf_free(&b->sl);
  vf_buf_free(&b->si);
  vf_buf_free(&b->comp);
  vf_buf_free(&b->mem);
  free(b->out_path);
  free(b->spill_path);
  free(b->assign_path);
  free(b->tmp_path);
  free(b);
}
