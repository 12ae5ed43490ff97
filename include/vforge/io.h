/*
 * vforge io — byte sources with a size and positional reads, and range coalescing.
 *
 * Readers (parquet, npy, ...) only see io_source: `size` once, then `read_at` for the byte
 * ranges they need.  Local files use pread; remote backends (http, s3, hf) plug in later behind
 * the same vtable without touching any reader.  io_read_ranges() merges nearby ranges so a
 * reader asking for several column chunks issues few large reads.
 */
#ifndef VFORGE_IO_H
#define VFORGE_IO_H

#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct io_source io_source;

typedef struct io_source_vtable {
  /* read exactly n bytes at offset into dst; short read past EOF is VF_ECORRUPT/VF_EIO */
  vf_status (*read_at)(io_source *src, uint64_t offset, void *dst, size_t n, vf_error *err);
  void (*close)(io_source *src);
} io_source_vtable;

struct io_source {
  const io_source_vtable *vt;
  char *name;      /* the URI or path, for error messages (owned) */
  uint64_t size;   /* total size in bytes */
  uint64_t bytes_read;
  uint64_t reads;  /* number of read_at calls that reached the backend */
};

/*! io_open_local() : open a local file for positional reads (pread).
 *  @return : VF_ENOTFOUND if missing, VF_EIO on other failures; the message names the path. */
vf_status io_open_local(const char *path, io_source **out, vf_error *err);

/*! io_open_memory() : a source over caller-owned bytes (tests, fuzzers). `name` is copied. */
vf_status io_open_memory(const void *data, size_t len, const char *name, io_source **out,
                         vf_error *err);

/*! io_read_at() : read exactly n bytes at offset; bounds-checked against size first. */
vf_status io_read_at(io_source *src, uint64_t offset, void *dst, size_t n, vf_error *err);

void io_close(io_source *src); /* NULL ok */

typedef struct io_range {
  uint64_t offset;
  uint64_t len;
  uint8_t *dst; /* filled by io_read_ranges */
} io_range;

/*! io_read_ranges() : read several ranges, merging ranges whose gap is <= max_gap bytes into one
 *  backend read (the gap bytes are read and dropped).  Ranges may be in any order. */
vf_status io_read_ranges(io_source *src, io_range *ranges, size_t n, uint64_t max_gap,
                         vf_error *err);

#define IO_DEFAULT_COALESCE_GAP (1u << 20)

#ifdef __cplusplus
}
#endif
#endif
