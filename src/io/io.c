/*
 * io.c — the generic side of byte sources: bounds-checked reads, counters, the in-memory
 * backend and range coalescing.
 *
 * Why check bounds here and not in each backend: every reader computes offsets from untrusted
 * footers and page headers; one check against `size` before any backend is reached turns a lying
 * offset into VF_ECORRUPT naming the file, the offset and the size, for every backend alike.
 *
 * Why coalesce: on object stores a request costs far more than the bytes in it, and even locally
 * one pread of a few MiB beats dozens of small ones.  io_read_ranges() sorts the requested ranges
 * by offset, merges neighbours whose gap is <= max_gap (the gap bytes are read and dropped) into
 * spans of at most IO_MAX_SPAN bytes, and issues one backend read per span: straight into the
 * caller's buffer when the span is a single range, else into one reused temporary buffer.
 *
 * Ownership: io_close() frees `name`, then the backend's vt->close frees everything else,
 * including the io_source itself (backends embed io_source as their first member).
 */
#include <stdlib.h>

#include "vforge/io.h"

/* Largest merged span read into a temporary buffer; a single range bigger than this still goes
 * straight into its own dst. */
#define IO_MAX_SPAN ((uint64_t)64 << 20)

/* io_read_at(): see io.h.  Counts the read in bytes_read/reads when it reaches the backend. */
vf_status io_read_at(io_source *src, uint64_t offset, void *dst, size_t n, vf_error *err) {
  if (offset > src->size || (uint64_t)n > src->size - offset)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: read of %zu bytes at offset %llu past end of file (size %llu)",
                        src->name, n, (unsigned long long)offset, (unsigned long long)src->size);
  if (n == 0) return VF_OK;
  vf_status st = src->vt->read_at(src, offset, dst, n, err);
  if (st != VF_OK) return st;
  src->bytes_read += n;
  src->reads++;
  return VF_OK;
}

/* io_close(): see io.h.  NULL is a no-op. */
void io_close(io_source *src) {
  if (!src) return;
  free(src->name);
  src->name = NULL;
  src->vt->close(src);
}

/* ----------------------------------------------------------- memory backend */

typedef struct io_memory {
  io_source base;
  const uint8_t *data;
} io_memory;

static vf_status memory_read_at(io_source *src, uint64_t offset, void *dst, size_t n,
                                vf_error *err) {
  (void)err;
  io_memory *m = (io_memory *)src;
  memcpy(dst, m->data + offset, n);
  return VF_OK;
}

static void memory_close(io_source *src) {
  free(src);
}

static const io_source_vtable io_memory_vt = {memory_read_at, memory_close};

/* io_open_memory(): see io.h.  The bytes must outlive the source. */
vf_status io_open_memory(const void *data, size_t len, const char *name, io_source **out,
                         vf_error *err) {
  *out = NULL;
  if (!data && len) return vf_error_set(err, VF_EUSAGE, "io_open_memory: NULL data");
  io_memory *m = calloc(1, sizeof *m);
  if (!m) return vf_error_set(err, VF_ENOMEM, "out of memory opening %s", name ? name : "memory");
  m->base.vt = &io_memory_vt;
  m->base.name = vf_strdup(name ? name : "<memory>");
  if (!m->base.name) {
    free(m);
    return vf_error_set(err, VF_ENOMEM, "out of memory opening %s", name ? name : "memory");
  }
  m->base.size = len;
  m->data = (const uint8_t *)data;
  *out = &m->base;
  return VF_OK;
}

/* --------------------------------------------------------------- coalescing */

typedef struct range_ref {
  uint64_t offset;
  size_t idx;
} range_ref;

static int range_ref_cmp(const void *a, const void *b) {
  const range_ref *x = a, *y = b;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* Sources with read_spans (remote ones) fetch their spans concurrently, so a gap is not worth
 * transferring to save a request: ranges merge only across gaps of at most this many bytes
 * (the order of a request's own overhead), and a remote read transfers the requested column
 * chunks, not the columns between them. */
#define IO_SPANS_MAX_GAP ((uint64_t)16 << 10)

/* The merged spans of the sorted refs (same rule as the serial loop below, with the gap capped
 * at IO_SPANS_MAX_GAP), read with one read_spans call: a span that is a single range reads
 * straight into its dst, a merged one into its own temporary buffer (all spans are in flight
 * at once). */
static vf_status read_ranges_spans(io_source *src, io_range *ranges, const range_ref *refs,
                                   size_t m, uint64_t max_gap, vf_error *err) {
  if (max_gap > IO_SPANS_MAX_GAP) max_gap = IO_SPANS_MAX_GAP;
  io_range *spans = vf_mallocarray(m, sizeof *spans);
  size_t *first = vf_mallocarray(m + 1, sizeof *first);
  vf_status st = VF_OK;
  size_t ns = 0;
  if (!spans || !first) {
    st = vf_error_set(err, VF_ENOMEM, "%s: out of memory for %zu ranges", src->name, m);
    goto out;
  }
  for (size_t i = 0; i < m;) {
    uint64_t start = refs[i].offset;
    uint64_t end = start + ranges[refs[i].idx].len;
    size_t j = i + 1;
    while (j < m) {
      const io_range *r = &ranges[refs[j].idx];
      if (r->offset > end && r->offset - end > max_gap) break;
      uint64_t new_end = r->offset + r->len > end ? r->offset + r->len : end;
      if (new_end - start > IO_MAX_SPAN) break;
      end = new_end;
      j++;
    }
    first[ns] = i;
    spans[ns].offset = start;
    spans[ns].len = end - start;
    spans[ns].dst = NULL;
    if (j == i + 1) {
      spans[ns].dst = ranges[refs[i].idx].dst;
    } else {
      spans[ns].dst = malloc((size_t)(end - start));
      if (!spans[ns].dst) {
        ns++;
        first[ns] = j;
        st = vf_error_set(err, VF_ENOMEM, "%s: out of memory for a %llu-byte read", src->name,
                          (unsigned long long)(end - start));
        goto out;
      }
    }
    ns++;
    i = j;
  }
  first[ns] = m;
  st = src->read_spans(src, spans, ns, err);
  if (st != VF_OK) goto out;
  for (size_t s = 0; s < ns; s++) {
    src->bytes_read += spans[s].len;
    src->reads++;
    if (first[s + 1] - first[s] == 1) continue;
    for (size_t k = first[s]; k < first[s + 1]; k++) {
      io_range *r = &ranges[refs[k].idx];
      memcpy(r->dst, spans[s].dst + (r->offset - spans[s].offset), (size_t)r->len);
    }
  }
out:
  if (spans && first)
    for (size_t s = 0; s < ns; s++)
      if (first[s + 1] - first[s] > 1) free(spans[s].dst);
  free(spans);
  free(first);
  return st;
}

/* io_read_ranges(): see io.h.  All ranges are bounds-checked before any read; zero-length
 * ranges are ignored.  On error some dst buffers may already be filled. */
vf_status io_read_ranges(io_source *src, io_range *ranges, size_t n, uint64_t max_gap,
                         vf_error *err) {
  vf_status st = VF_OK;
  range_ref *refs = NULL;
  uint8_t *tmp = NULL;
  size_t tmp_cap = 0, m = 0;
  for (size_t i = 0; i < n; i++) {
    const io_range *r = &ranges[i];
    if (r->offset > src->size || r->len > src->size - r->offset)
      return vf_error_set(err, VF_ECORRUPT,
                          "%s: read of %llu bytes at offset %llu past end of file (size %llu)",
                          src->name, (unsigned long long)r->len, (unsigned long long)r->offset,
                          (unsigned long long)src->size);
    if (r->len > SIZE_MAX)
      return vf_error_set(err, VF_ENOMEM, "%s: range of %llu bytes does not fit in memory",
                          src->name, (unsigned long long)r->len);
    if (r->len && !r->dst)
      return vf_error_set(err, VF_EUSAGE, "io_read_ranges: range %zu has no destination", i);
  }
  refs = vf_mallocarray(n, sizeof *refs);
  if (!refs) return vf_error_set(err, VF_ENOMEM, "%s: out of memory for %zu ranges", src->name, n);
  for (size_t i = 0; i < n; i++)
    if (ranges[i].len) refs[m++] = (range_ref){ranges[i].offset, i};
  qsort(refs, m, sizeof *refs, range_ref_cmp);
  if (src->read_spans && m > 1) {
    st = read_ranges_spans(src, ranges, refs, m, max_gap, err);
    free(refs);
    return st;
  }

  size_t i = 0;
  while (i < m) {
    uint64_t start = refs[i].offset;
    uint64_t end = start + ranges[refs[i].idx].len;
    size_t j = i + 1;
    while (j < m) {
      const io_range *r = &ranges[refs[j].idx];
      if (r->offset > end && r->offset - end > max_gap) break;
      uint64_t new_end = r->offset + r->len > end ? r->offset + r->len : end;
      if (new_end - start > IO_MAX_SPAN) break;
      end = new_end;
      j++;
    }
    if (j == i + 1) {
      io_range *r = &ranges[refs[i].idx];
      st = io_read_at(src, r->offset, r->dst, (size_t)r->len, err);
      if (st != VF_OK) goto out;
    } else {
      size_t span = (size_t)(end - start);
      if (span > tmp_cap) {
        uint8_t *t = realloc(tmp, span);
        if (!t) {
          st = vf_error_set(err, VF_ENOMEM, "%s: out of memory for a %zu-byte read", src->name,
                            span);
          goto out;
        }
        tmp = t;
        tmp_cap = span;
      }
      st = io_read_at(src, start, tmp, span, err);
      if (st != VF_OK) goto out;
      for (size_t k = i; k < j; k++) {
        io_range *r = &ranges[refs[k].idx];
        memcpy(r->dst, tmp + (r->offset - start), (size_t)r->len);
      }
    }
    i = j;
  }
out:
  free(tmp);
  free(refs);
  return st;
}
