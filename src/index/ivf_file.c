/*
 * ivf_file.c — the IVF index file: header serialisation, open (mmap) with full validation,
 * info, ids.
 *
 * Layout (versions 1 and 2, little-endian; every section starts at a multiple of 64 bytes):
 *
 *   offset  size  field
 *   0       8     magic "VFIVF\0\0\1"
 *   8       4     u32 version (1; 2 for 4-bit PQ, the only files version 1 cannot describe:
 *                 the writer uses the lowest version that holds the file, so every other index
 *                 stays readable by builds that know version 1 only)
 *   12      4     u32 metric (corpus_distance: 0 cosine, 1 dot, 2 euclid)
 *   16      4     i32 dim
 *   20      4     u32 type (ivf_code: 0 flat, 1 sq8, 2 pq, 3 rabitq)
 *   24      4     u32 nlist
 *   28      4     u32 pq_m (PQ; else 0)
 *   32      4     u32 bits: rabitq_bits (RaBitQ, 1..8); pq_nbits (PQ in version 2: 4 or 8;
 *                 version 1 PQ is 8 bits and stores 0); else 0
 *   36      4     u32 rerank (0: no re-rank vectors)
 *   40      8     u64 seed
 *   48      8     u64 rows
 *   56      8     u64 file_bytes (the whole file, checksum included)
 *   64      112   section table: 7 x {u64 offset, u64 length}, in this order and file order:
 *     centroids        nlist x dim float32 (COSINE: unit norm)
 *     quantizer        SQ8: min[dim], step[dim] float32 (residual bounds);
 *                      PQ: pq_m x 2^pq_nbits x (dim/pq_m) float32 codebooks of the residuals;
 *                      RaBitQ: D x D float32 orthogonal rotation, D = dim rounded up to 64;
 *                      flat: empty
 *     list directory   nlist x {u64 offset within "lists", u64 count, u64 position} where
 *                      position = rows in the lists before this one (list order)
 *     lists            per list, at its offset: int64 global rows[count] (input order, padded
 *                      to 64 bytes), then the codes (padded to 64 bytes):
 *                        flat: count x dim float32;  sq8: count x dim u8;
 *                        pq: ceil(count/32) blocks of 32 rows, each pq_m x 32 u8 (transposed,
 *                            the padding rows of the last block are zero); 4 bits:
 *                            ceil(pq_m/2) x 32 bytes, byte j of group p = code(j, 2p) |
 *                            code(j, 2p+1) << 4 (ivf_pq4_pack; zero nibbles pad an odd pq_m);
 *                        rabitq: count x {float32 |r|, <xbar,o>, a, b; D/8 bytes of sign bits
 *                            (1 bit) or D u8 levels (2..8 bits)}
 *     id offsets       (rows + 1) x u64 into "ids" (first 0, non-decreasing, last = its length)
 *     ids              the point ids in row order, concatenated
 *     re-rank vectors  rows x dim float32 in list order (position), present when rerank > 0
 *                      and type != flat; else empty
 *   176     16    corpus identity (corpus_identity(): md5 of the corpus file list and the id
 *                 expression), all zero when not recorded (files written before issue 14)
 *   ...           the sections
 *   end-8   8     u64 checksum (ivf_hash, ivf_codes.c) over bytes [0, end-8)
 *
 * ivf_open() checks every field and section bound, the directory (offsets, counts and positions
 * consistent, counts summing to rows), every stored row number, the id offsets and the checksum;
 * a file that fails any check is VF_ECORRUPT naming the file and the section.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/ivf_internal.h"

#define MAX_DIM 65536
#define MAX_NLIST (1u << 24)

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint64_t get64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

void ivf_hdr_write(const ivf_hdr *h, uint8_t out[IVF_HEADER_BYTES]) {
  memset(out, 0, IVF_HEADER_BYTES);
  memcpy(out, IVF_MAGIC, 8);
  put32(out + 8, h->version);
  put32(out + 12, h->metric);
  put32(out + 16, (uint32_t)h->dim);
  put32(out + 20, h->type);
  put32(out + 24, h->nlist);
  put32(out + 28, h->pq_m);
  put32(out + 32, h->type == IVF_PQ && h->version >= IVF_VERSION_PQ4 ? h->pq_nbits : h->rabitq_bits);
  put32(out + 36, h->rerank);
  put64(out + 40, h->seed);
  put64(out + 48, h->rows);
  put64(out + 56, h->file_bytes);
  for (int s = 0; s < IVF_NSECTIONS; s++) {
    put64(out + 64 + 16 * s, h->off[s]);
    put64(out + 72 + 16 * s, h->len[s]);
  }
  memcpy(out + 64 + 16 * IVF_NSECTIONS, h->corpus_id, 16);
}

static void hdr_read(const uint8_t *p, ivf_hdr *h) {
  h->version = get32(p + 8);
  h->metric = get32(p + 12);
  h->dim = (int32_t)get32(p + 16);
  h->type = get32(p + 20);
  h->nlist = get32(p + 24);
  h->pq_m = get32(p + 28);
  h->rabitq_bits = get32(p + 32);
  h->rerank = get32(p + 36);
  h->seed = get64(p + 40);
  h->rows = get64(p + 48);
  h->file_bytes = get64(p + 56);
  for (int s = 0; s < IVF_NSECTIONS; s++) {
    h->off[s] = get64(p + 64 + 16 * s);
    h->len[s] = get64(p + 72 + 16 * s);
  }
  memcpy(h->corpus_id, p + 64 + 16 * IVF_NSECTIONS, 16);
  if (h->type == IVF_PQ && h->version >= IVF_VERSION_PQ4) { /* offset 32 holds the PQ bits */
    h->pq_nbits = h->rabitq_bits;
    h->rabitq_bits = 0;
  } else {
    h->pq_nbits = 0;
  }
}

int ivf_tie_by_id(const void *user, int64_t a, int64_t b) {
  const ivf_index *ix = user;
  size_t la, lb;
  const char *ia = ivf_id(ix, a, &la), *ib = ivf_id(ix, b, &lb);
  int c = memcmp(ia, ib, la < lb ? la : lb);
  if (c) return c;
  if (la != lb) return la < lb ? -1 : 1;
  return a < b ? -1 : a > b;
}

#define BAD(sec, ...)                                                                        \
  do {                                                                                       \
    char m_[512];                                                                            \
    snprintf(m_, sizeof m_, __VA_ARGS__);                                                    \
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: corrupt IVF index (section %s): %s", path, sec, m_)); \
  } while (0)

/* ivf_open(): see ivf.h. */
vf_status ivf_open(const char *path, ivf_index **out, vf_error *err) {
  *out = NULL;
  vf_status st = VF_OK;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "%s: cannot open: %s", path,
                        VF_STRERROR(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return vf_error_set(err, VF_EIO, "%s: cannot stat: %s", path, VF_STRERROR(e));
  }
  ivf_index *ix = vf_calloc(1, sizeof *ix);
  if (!ix || !(ix->path = vf_strdup(path))) {
    free(ix);
    close(fd);
    return vf_error_set(err, VF_ENOMEM, "%s: out of memory", path);
  }
  size_t size = (size_t)sb.st_size;
  if ((uint64_t)sb.st_size < IVF_HEADER_BYTES + 8) {
    close(fd);
    BAD("header", "%zu bytes, shorter than the %u-byte header and checksum", size,
        IVF_HEADER_BYTES + 8);
  }
  void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int merr = errno;
  close(fd);
  if (m == MAP_FAILED) {
    VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot map: %s", path, VF_STRERROR(merr)));
  }
  ix->map = m;
  ix->size = size;
  const uint8_t *p = ix->map;
  if (memcmp(p, IVF_MAGIC, 8) != 0) BAD("header", "bad magic (not a vforge IVF index)");
  ivf_hdr *h = &ix->h;
  hdr_read(p, h);
  if (h->version < IVF_VERSION || h->version > IVF_VERSION_PQ4)
    BAD("header", "version %u, this build reads %u..%u", h->version, IVF_VERSION, IVF_VERSION_PQ4);
  if (h->file_bytes != size)
    BAD("header", "file is %zu bytes, the header says %llu (truncated or extended)", size,
        (unsigned long long)h->file_bytes);
  if (h->metric > CORPUS_EUCLID) BAD("header", "metric %u", h->metric);
  if (h->type > IVF_RABITQ) BAD("header", "code type %u", h->type);
  if (h->dim < 1 || h->dim > MAX_DIM) BAD("header", "dim %d out of 1..%d", h->dim, MAX_DIM);
  if (h->nlist < 1 || h->nlist > MAX_NLIST) BAD("header", "nlist %u", h->nlist);
  if (h->rows > ((uint64_t)1 << 40)) BAD("header", "rows %llu", (unsigned long long)h->rows);
  size_t d = (size_t)h->dim;
  if (h->type == IVF_PQ && (h->pq_m < 1 || d % h->pq_m != 0))
    BAD("header", "pq_m %u does not divide dim %zu", h->pq_m, d);
  if (h->type == IVF_RABITQ && (h->rabitq_bits < 1 || h->rabitq_bits > 8))
    BAD("header", "rabitq_bits %u out of 1..8", h->rabitq_bits);
  if (h->version >= IVF_VERSION_PQ4 && h->type == IVF_PQ && h->pq_nbits != 4 && h->pq_nbits != 8)
    BAD("header", "pq_nbits %u (expected 4 or 8)", h->pq_nbits);
  if (h->version >= IVF_VERSION_PQ4 && h->type != IVF_PQ && h->pq_nbits != 0)
    BAD("header", "pq_nbits %u on a %s index (expected 0)", h->pq_nbits,
        ivf_code_name((ivf_code)h->type));
  { /* checksum first: later checks then only meet a file as it was written (or a forgery) */
    ivf_hash hs;
    ivf_hash_init(&hs);
    ivf_hash_update(&hs, p, size - 8);
    if (ivf_hash_final(&hs) != get64(p + size - 8))
      BAD("checksum", "checksum mismatch (the file is damaged)");
  }
  ivf_geom_init(&ix->g, (ivf_code)h->type, d, h->pq_m, h->pq_nbits, h->rabitq_bits);
  const ivf_geom *g = &ix->g;
  uint64_t want[IVF_NSECTIONS] = {0};
  want[IVF_S_CENTROIDS] = (uint64_t)h->nlist * d * 4;
  want[IVF_S_QUANT] = ivf_quant_bytes(g);
  want[IVF_S_DIR] = (uint64_t)h->nlist * 24;
  want[IVF_S_IDOFF] = (h->rows + 1) * 8;
  want[IVF_S_RERANK] = h->rerank && h->type != IVF_FLAT ? h->rows * d * 4 : 0;
  uint64_t prev_end = IVF_HEADER_BYTES;
  for (int s = 0; s < IVF_NSECTIONS; s++) {
    uint64_t o = h->off[s], l = h->len[s];
    if (o % IVF_ALIGN || o < prev_end || o > size - 8 || l > size - 8 - o)
      BAD(ivf_section_names[s], "section [%llu, +%llu) is misaligned, overlapping or past the end",
          (unsigned long long)o, (unsigned long long)l);
    if (s != IVF_S_LISTS && s != IVF_S_IDBYTES && l != want[s])
      BAD(ivf_section_names[s], "%llu bytes, expected %llu", (unsigned long long)l,
          (unsigned long long)want[s]);
    prev_end = o + l;
  }
  ix->centroids = (const float *)(p + h->off[IVF_S_CENTROIDS]);
  ix->dir = (const uint64_t *)(const void *)(p + h->off[IVF_S_DIR]);
  ix->lists = p + h->off[IVF_S_LISTS];
  ix->idoff = (const uint64_t *)(const void *)(p + h->off[IVF_S_IDOFF]);
  ix->idbytes = p + h->off[IVF_S_IDBYTES];
  ix->rerank = h->len[IVF_S_RERANK] ? (const float *)(const void *)(p + h->off[IVF_S_RERANK]) : NULL;
  const float *qs = (const float *)(const void *)(p + h->off[IVF_S_QUANT]);
  ix->q.g = *g;
  if (g->type == IVF_SQ8) {
    ix->q.sq_min = (float *)(uintptr_t)qs;
    ix->q.sq_step = (float *)(uintptr_t)(qs + d);
  } else if (g->type == IVF_PQ) {
    ix->q.pq_cb = (float *)(uintptr_t)qs;
  } else if (g->type == IVF_RABITQ) {
    ix->q.rot = (float *)(uintptr_t)qs;
  }
  /* directory and lists */
  uint64_t off = 0, pos = 0, lmin = UINT64_MAX, lmax = 0, sq = 0;
  for (uint32_t l = 0; l < h->nlist; l++) {
    uint64_t lo = ix->dir[3 * l], cnt = ix->dir[3 * l + 1], lp = ix->dir[3 * l + 2];
    if (cnt > h->rows - pos) BAD("list directory", "list %u holds %llu rows, more than remain", l,
                                 (unsigned long long)cnt);
    if (lo != off || lp != pos)
      BAD("list directory", "list %u at offset %llu position %llu, expected %llu and %llu", l,
          (unsigned long long)lo, (unsigned long long)lp, (unsigned long long)off,
          (unsigned long long)pos);
    uint64_t lb = ivf_list_bytes(g, cnt);
    if (lb > h->len[IVF_S_LISTS] - off)
      BAD("lists", "list %u (%llu rows) runs past the section", l, (unsigned long long)cnt);
    const int64_t *rows = (const int64_t *)(const void *)(ix->lists + off);
    for (uint64_t i = 0; i < cnt; i++)
      if (rows[i] < 0 || (uint64_t)rows[i] >= h->rows)
        BAD("lists", "list %u entry %llu names row %lld of %llu", l, (unsigned long long)i,
            (long long)rows[i], (unsigned long long)h->rows);
    off += lb;
    pos += cnt;
    if (cnt < lmin) lmin = cnt;
    if (cnt > lmax) lmax = cnt;
    sq += cnt * cnt;
  }
  if (pos != h->rows)
    BAD("list directory", "lists hold %llu rows, the header says %llu", (unsigned long long)pos,
        (unsigned long long)h->rows);
  if (off != h->len[IVF_S_LISTS])
    BAD("lists", "%llu bytes, the directory describes %llu", (unsigned long long)h->len[IVF_S_LISTS],
        (unsigned long long)off);
  /* ids */
  if (ix->idoff[0] != 0) BAD("id offsets", "first offset is not 0");
  for (uint64_t r = 0; r < h->rows; r++)
    if (ix->idoff[r + 1] < ix->idoff[r])
      BAD("id offsets", "offset of row %llu decreases", (unsigned long long)r + 1);
  if (ix->idoff[h->rows] != h->len[IVF_S_IDBYTES])
    BAD("ids", "%llu bytes, the offsets end at %llu", (unsigned long long)h->len[IVF_S_IDBYTES],
        (unsigned long long)ix->idoff[h->rows]);
  /* derived tables */
  ix->cnorm = vf_mallocarray(h->nlist, sizeof(float));
  if (!ix->cnorm) {
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", path));
  }
  for (uint32_t l = 0; l < h->nlist; l++) {
    const float *c = ix->centroids + (size_t)l * d;
    float s = 0.0f;
    for (size_t e = 0; e < d; e++)
      s += c[e] * c[e];
    ix->cnorm[l] = s;
  }
  if (g->type == IVF_PQ && g->nbits == 4) { /* codebooks m x 16 x dsub -> m x dsub x 16 */
    ix->pq4_cbt = vf_mallocarray(g->m * 16 * g->dsub, sizeof(float));
    if (!ix->pq4_cbt) {
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", path));
    }
    for (size_t i = 0; i < g->m; i++)
      for (size_t c = 0; c < 16; c++)
        for (size_t j = 0; j < g->dsub; j++)
          ix->pq4_cbt[(i * g->dsub + j) * 16 + c] = ix->q.pq_cb[(i * 16 + c) * g->dsub + j];
    /* euclid: the list terms |C_ic|^2 + 2 c_l,i . C_ic of the tables (ivf_internal.h) */
    if (h->metric == CORPUS_EUCLID && (uint64_t)h->nlist * g->m * 16 * 4 <= IVF_PQ4_PRE_MAX) {
      ix->pq4_pre = vf_mallocarray((size_t)h->nlist * g->m * 16, sizeof(float));
      if (!ix->pq4_pre) {
        VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", path));
      }
      for (uint32_t l = 0; l < h->nlist; l++)
        for (size_t i = 0; i < g->m; i++) {
          const float *c = ix->centroids + (size_t)l * d + i * g->dsub;
          float *t = ix->pq4_pre + ((size_t)l * g->m + i) * 16;
          for (size_t e = 0; e < 16; e++) {
            const float *cb = ix->q.pq_cb + (i * 16 + e) * g->dsub;
            float s = 0.0f;
            for (size_t j = 0; j < g->dsub; j++)
              s += cb[j] * (cb[j] + 2.0f * c[j]);
            t[e] = s;
          }
        }
    }
  }
  if (g->type == IVF_RABITQ) {
    size_t D = g->D;
    ix->rcent = vf_mallocarray((size_t)h->nlist * D, sizeof(float));
    float *pad = vf_calloc((size_t)h->nlist * D, sizeof(float));
    if (!ix->rcent || !pad) {
      free(pad);
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", path));
    }
    for (uint32_t l = 0; l < h->nlist; l++)
      memcpy(pad + (size_t)l * D, ix->centroids + (size_t)l * d, d * sizeof(float));
    /* rotated centroids: C_pad x rot^T */
    if ((st = vf_blas_require(err)) != VF_OK) {
      free(pad);
      goto out;
    }
    vf_sgemm_nt(h->nlist, D, D, pad, D, ix->q.rot, D, ix->rcent, D);
    free(pad);
  }
  ivf_info *in = &ix->info;
  in->version = h->version;
  in->type = (ivf_code)h->type;
  in->metric = (corpus_distance)h->metric;
  in->dim = h->dim;
  in->nlist = h->nlist;
  in->pq_m = h->pq_m;
  in->pq_nbits = h->type == IVF_PQ ? ix->g.nbits : 0;
  in->rabitq_bits = h->rabitq_bits;
  in->rerank = h->rerank;
  in->seed = h->seed;
  in->rows = h->rows;
  in->file_bytes = size;
  in->list_min = (uint32_t)(h->nlist ? lmin : 0);
  in->list_max = (uint32_t)lmax;
  double mean = (double)h->rows / h->nlist;
  in->list_max_over_mean = mean > 0 ? (double)lmax / mean : 0.0;
  in->list_balance = h->rows ? (double)sq / (double)h->rows : 0.0;
  memcpy(in->corpus_id, h->corpus_id, 16);
  in->has_corpus_id = false;
  for (int i = 0; i < 16; i++) in->has_corpus_id |= h->corpus_id[i] != 0;
  *out = ix;
out:
  if (st != VF_OK) ivf_close(ix);
  return st;
}

void ivf_info_get(const ivf_index *ix, ivf_info *out) { *out = ix->info; }

/* ivf_id(): see ivf.h.  Rows out of range give an empty id. */
const char *ivf_id(const ivf_index *ix, int64_t row, size_t *len) {
  if (row < 0 || (uint64_t)row >= ix->h.rows) {
    *len = 0;
    return "";
  }
  *len = (size_t)(ix->idoff[row + 1] - ix->idoff[row]);
  return (const char *)ix->idbytes + ix->idoff[row];
}

void ivf_close(ivf_index *ix) {
  if (!ix) return;
  if (ix->map) munmap((void *)(uintptr_t)ix->map, ix->size);
  free(ix->cnorm);
  free(ix->rcent);
  free(ix->pq4_cbt);
  free(ix->pq4_pre);
  free(ix->path);
  free(ix);
}
