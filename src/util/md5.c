/*
 * md5.c — MD5 (RFC 1321), used only for point ids (DESIGN.md "Point ids") and hash(col) id
 * expressions, where the existing tools fixed md5 and every bit must match.  Not for security.
 * A straightforward implementation of RFC 1321 section 3: pad to 56 mod 64, append the bit
 * length little-endian, run the four rounds of 16 operations over each 64-byte block.
 */
#include "vforge/util.h"

static const uint32_t md5_k[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

static const uint8_t md5_r[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                  5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                  4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                  6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

static inline uint32_t rotl32(uint32_t x, unsigned c) {
  return (x << c) | (x >> (32 - c));
}

/* One 64-byte block: the four rounds written out step by step (RFC 1321 section 3.4), so the
 * message word, constant and shift of every step are compile-time constants. */
#define MD5_F(x, y, z) (((x) & (y)) | (~(x) & (z)))
#define MD5_G(x, y, z) (((x) & (z)) | ((y) & ~(z)))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define MD5_STEP(fn, a, b, c, d, i, g) \
  (a) = (b) + rotl32((a) + fn((b), (c), (d)) + md5_k[i] + m[g], md5_r[i])

/* the 16 steps of one round: message word (gk * i + go) mod 16 at step i */
#define MD5_ROUND(fn, lo, gk, go)                                                                  \
  VF_UNROLL4 for (int i = (lo); i < (lo) + 16; i += 4) {                                           \
    MD5_STEP(fn, a, b, c, d, i, ((gk) * i + (go)) & 15);                                           \
    MD5_STEP(fn, d, a, b, c, i + 1, ((gk) * (i + 1) + (go)) & 15);                                 \
    MD5_STEP(fn, c, d, a, b, i + 2, ((gk) * (i + 2) + (go)) & 15);                                 \
    MD5_STEP(fn, b, c, d, a, i + 3, ((gk) * (i + 3) + (go)) & 15);                                 \
  }

#if defined(__GNUC__) && !defined(__clang__)
#define VF_UNROLL4 _Pragma("GCC unroll 4")
#elif defined(__clang__)
#define VF_UNROLL4 _Pragma("unroll 4")
#else
#define VF_UNROLL4
#endif

static void md5_block(uint32_t h[4], const uint8_t *blk) {
  uint32_t m[16];
  for (int i = 0; i < 16; i++)
    m[i] = (uint32_t)blk[4 * i] | ((uint32_t)blk[4 * i + 1] << 8) |
           ((uint32_t)blk[4 * i + 2] << 16) | ((uint32_t)blk[4 * i + 3] << 24);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
  MD5_ROUND(MD5_F, 0, 1, 0);
  MD5_ROUND(MD5_G, 16, 5, 1);
  MD5_ROUND(MD5_H, 32, 3, 5);
  MD5_ROUND(MD5_I, 48, 7, 0);
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
}

/* vf_md5_init(): start an incremental digest. */
void vf_md5_init(vf_md5_ctx *c) {
  c->h[0] = 0x67452301;
  c->h[1] = 0xefcdab89;
  c->h[2] = 0x98badcfe;
  c->h[3] = 0x10325476;
  c->len = 0;
}

/* vf_md5_update(): hash `len` more bytes (`data` may be NULL when len is 0). */
void vf_md5_update(vf_md5_ctx *c, const void *data, size_t len) {
  if (len == 0) return;
  const uint8_t *p = (const uint8_t *)data;
  size_t have = (size_t)(c->len & 63);
  c->len += len;
  if (have) {
    size_t take = 64 - have < len ? 64 - have : len;
    memcpy(c->buf + have, p, take);
    p += take;
    len -= take;
    if (have + take < 64) return;
    md5_block(c->h, c->buf);
  }
  while (len >= 64) {
    md5_block(c->h, p);
    p += 64;
    len -= 64;
  }
  if (len) memcpy(c->buf, p, len);
}

/* vf_md5_final(): pad (RFC 1321 sections 3.1-3.2), finish and write the 16-byte digest. */
void vf_md5_final(vf_md5_ctx *c, uint8_t out[16]) {
  uint64_t bits = c->len * 8u;
  size_t have = (size_t)(c->len & 63);
  c->buf[have++] = 0x80;
  if (have > 56) {
    memset(c->buf + have, 0, 64 - have);
    md5_block(c->h, c->buf);
    have = 0;
  }
  memset(c->buf + have, 0, 56 - have);
  for (int i = 0; i < 8; i++)
    c->buf[56 + i] = (uint8_t)(bits >> (8 * i));
  md5_block(c->h, c->buf);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      out[4 * i + j] = (uint8_t)(c->h[i] >> (8 * j));
}

/* vf_md5(): see util.h.  `data` may be NULL when len is 0. */
void vf_md5(const void *data, size_t len, uint8_t out[16]) {
  vf_md5_ctx c;
  vf_md5_init(&c);
  vf_md5_update(&c, data, len);
  vf_md5_final(&c, out);
}

/* vf_md5_hex(): see util.h. */
void vf_md5_hex(const uint8_t d[16], char out[33]) {
  static const char hx[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++) {
    out[2 * i] = hx[d[i] >> 4];
    out[2 * i + 1] = hx[d[i] & 15];
  }
  out[32] = 0;
}
