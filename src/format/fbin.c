/*
 * big-ann-benchmarks binary vector files (.fbin, .u8bin, .i8bin, .ibin) and ground-truth files
 * (include/vforge/vecfile.h).
 *
 * Format (big-ann-benchmarks "Data format"): u32le number of vectors | u32le dimension | the
 * vectors row-major, element type given by the extension only.  After the 8-byte header this is
 * the plain layout vec_open_raw() validates (data exactly rows*dim*itemsize bytes), so this file
 * only parses the header.  Ground truth: u32le nq | u32le k | nq*k int32 ids | nq*k float32
 * distances; its size is checked before anything is allocated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vforge/vecfile.h"

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/*! fbin_open() : see vecfile.h. */
vf_status fbin_open(io_source *src, vec_dtype dtype, vec_file **out, vf_error *err) {
  *out = NULL;
  if (!src) return vf_error_set(err, VF_EUSAGE, "fbin_open: NULL source");
  uint8_t h[8];
  vf_status st;
  if (src->size < 8) {
    st = vf_error_set(err, VF_ECORRUPT,
                      "%s: not a big-ann vector file (%llu bytes, shorter than the 8-byte header)",
                      src->name, (unsigned long long)src->size);
    io_close(src);
    return st;
  }
  if ((st = io_read_at(src, 0, h, 8, err)) != VF_OK) {
    io_close(src);
    return st;
  }
  vec_layout l;
  memset(&l, 0, sizeof l);
  l.dtype = dtype;
  l.data_offset = 8;
  l.ndim = 2;
  l.shape[0] = le32(h);
  l.shape[1] = le32(h + 4);
  return vec_open_raw(src, &l, "fbin", out, err);
}

static bool ends_with(const char *s, size_t n, const char *suf) {
  size_t m = strlen(suf);
  return n >= m && memcmp(s + n - m, suf, m) == 0;
}

/*! fbin_dtype_of_path() : see vecfile.h. */
bool fbin_dtype_of_path(const char *path, vec_dtype *out) {
  *out = VEC_F32;
  if (!path) return false;
  size_t n = strlen(path);
  /* big-ann shards: base.1B.u8bin.crop_nb_10000000 is not handled; "x.fbin.3" style is */
  size_t k = n;
  while (k > 0 && path[k - 1] >= '0' && path[k - 1] <= '9')
    k--;
  if (k > 0 && k < n && path[k - 1] == '.') n = k - 1;
  if (ends_with(path, n, ".fbin")) return true;
  if (ends_with(path, n, ".u8bin")) return (*out = VEC_U8), true;
  if (ends_with(path, n, ".i8bin")) return (*out = VEC_I8), true;
  if (ends_with(path, n, ".ibin")) return (*out = VEC_I32), true;
  return false;
}

/*! bigann_gt_read() : see vecfile.h. */
vf_status bigann_gt_read(const char *path, vec_gt *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  io_source *src = NULL;
  vf_status st = io_open_local(path, &src, err);
  if (st != VF_OK) return st;
  uint8_t h[8];
  if (src->size < 8) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: not a big-ann ground-truth file (%llu bytes, shorter than the "
                         "header)",
                         path, (unsigned long long)src->size));
  }
  VF_TRY(io_read_at(src, 0, h, 8, err));
  uint64_t nq = le32(h), k = le32(h + 4);
  uint64_t cells = nq * k; /* < 2^64: both < 2^32 */
  if (cells > (src->size - 8) / 8 || 8 + cells * 8 != src->size) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "%s: big-ann ground truth for %llu queries x k=%llu needs %llu bytes, the "
                         "file has %llu",
                         path, (unsigned long long)nq, (unsigned long long)k,
                         (unsigned long long)(cells > UINT64_MAX / 8 - 1 ? UINT64_MAX
                                                                         : 8 + cells * 8),
                         (unsigned long long)src->size));
  }
  out->ids = vf_mallocarray((size_t)cells + 1, sizeof(int32_t));
  out->dist = vf_mallocarray((size_t)cells + 1, sizeof(float));
  if (!out->ids || !out->dist) {
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "%s: out of memory", path));
  }
  VF_TRY(io_read_at(src, 8, out->ids, (size_t)cells * 4, err));
  VF_TRY(io_read_at(src, 8 + cells * 4, out->dist, (size_t)cells * 4, err));
  /* little-endian in the file: convert in place (a no-op pass on little-endian hosts) */
  for (uint64_t i = 0; i < cells; i++) {
    uint8_t b[4];
    memcpy(b, &out->ids[i], 4);
    out->ids[i] = (int32_t)le32(b);
    memcpy(b, &out->dist[i], 4);
    uint32_t u = le32(b);
    memcpy(&out->dist[i], &u, 4);
  }
  out->nq = (uint32_t)nq;
  out->k = (uint32_t)k;
out:
  io_close(src);
  if (st != VF_OK) vec_gt_free(out);
  return st;
}

/*! vec_gt_free() : see vecfile.h. */
void vec_gt_free(vec_gt *gt) {
  if (!gt) return;
  free(gt->ids);
  free(gt->dist);
  memset(gt, 0, sizeof *gt);
}
