/*
 * decomp_bare — the physical floor of a parquet column scan: the bare decompressor over the
 * pages of one column, nothing else (bench/scan/run.sh, issue 16: "zstd/snappy files within
 * 1.25x of the time the bare decompressor takes").
 *
 *   decomp_bare FILE [--column emb] [--threads 1,2] [--repeat 5]
 *
 * The file is read into memory first (not timed).  The footer and every page header of every
 * column chunk whose path starts with --column are walked once (not timed) with a minimal thrift
 * compact-protocol reader of its own, so this reference shares no code with the reader it is
 * measured against.  Then, best of --repeat, each thread count T splits the pages into T
 * contiguous runs of about equal compressed bytes and each thread decompresses its pages into one
 * reused buffer (ZSTD_decompressDCtx with one DCtx per thread, snappy_uncompress; an
 * uncompressed page is copied with memcpy, the same "touch every byte once" floor).  Data page v2
 * levels are not compressed; only the values part is.  Timed: the decompression calls only.
 * Prints one JSON object: pages; header_bytes + stored_bytes (= the chunks' total_compressed_size)
 * and header_bytes + page_bytes (= total_uncompressed_size); decompress_in/out_bytes (what the
 * timed pass reads and writes); the largest page; and {"T": seconds} per thread count.
 * Exit 2 on a malformed or unsupported file (the message names the offset), 1 on other errors.
 */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <snappy-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

enum { T_STOP = 0, T_TRUE = 1, T_FALSE = 2, T_BYTE = 3, T_I16 = 4, T_I32 = 5, T_I64 = 6, T_DOUBLE = 7,
       T_BINARY = 8, T_LIST = 9, T_SET = 10, T_MAP = 11, T_STRUCT = 12, T_UUID = 13 };
enum { CODEC_NONE = 0, CODEC_SNAPPY = 1, CODEC_ZSTD = 6 };
enum { PAGE_DATA = 0, PAGE_DICT = 2, PAGE_DATA_V2 = 3 };
#define MAX_DEPTH 64
#define MAX_PAGES 50000000u
#define MAX_THREADS 256

static void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
static void die(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("decomp_bare: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(code);
}

/* ------------------------------------------------ thrift compact protocol, bounds-checked */

typedef struct rd {
  const uint8_t *p, *end;
  const uint8_t *base; /* file start, for offsets in messages */
  int depth;
  int16_t last[MAX_DEPTH];
  int bool_val; /* a bool field's value travels in its field header */
} rd;

static long long off(const rd *r) { return (long long)(r->p - r->base); }
static uint8_t rbyte(rd *r) {
  if (r->p >= r->end) die(2, "truncated thrift at offset %lld", off(r));
  return *r->p++;
}
static uint64_t rvarint(rd *r) {
  uint64_t v = 0;
  for (int s = 0; s < 64; s += 7) {
    uint8_t b = rbyte(r);
    v |= (uint64_t)(b & 0x7f) << s;
    if (!(b & 0x80)) return v;
  }
  die(2, "overlong varint at offset %lld", off(r));
}
static int64_t rzig(rd *r) {
  uint64_t v = rvarint(r);
  return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}
static void struct_begin(rd *r) {
  if (++r->depth >= MAX_DEPTH) die(2, "thrift nesting too deep at offset %lld", off(r));
  r->last[r->depth] = 0;
}
static void struct_end(rd *r) { r->depth--; }
/* next field: its type (T_STOP at the end) and id */
static int field(rd *r, int16_t *fid) {
  uint8_t b = rbyte(r);
  int type = b & 0x0f;
  if (type == T_STOP) return T_STOP;
  int delta = b >> 4;
  *fid = delta ? (int16_t)(r->last[r->depth] + delta) : (int16_t)rzig(r);
  r->last[r->depth] = *fid;
  if (type == T_TRUE || type == T_FALSE) r->bool_val = type == T_TRUE;
  return type;
}
static void list_begin(rd *r, int *etype, uint64_t *n) {
  uint8_t b = rbyte(r);
  *etype = b & 0x0f;
  *n = b >> 4;
  if (*n == 15) *n = rvarint(r);
  if (*n > (uint64_t)(r->end - r->p)) die(2, "list of %llu elements past the end at offset %lld",
                                          (unsigned long long)*n, off(r));
}
/* a list header whose elements must be structs; the element count */
static uint64_t struct_list(rd *r, const char *what) {
  int et;
  uint64_t n;
  list_begin(r, &et, &n);
  if (et != T_STRUCT) die(2, "%s: element type %d, expected structs (offset %lld)", what, et, off(r));
  return n;
}
static void skip(rd *r, int type);
static void skip_struct(rd *r) {
  int16_t fid;
  int t;
  struct_begin(r);
  while ((t = field(r, &fid)) != T_STOP) skip(r, t);
  struct_end(r);
}
static void skip_bytes(rd *r, uint64_t n) {
  if (n > (uint64_t)(r->end - r->p)) die(2, "field past the end at offset %lld", off(r));
  r->p += n;
}
static void skip(rd *r, int type) {
  switch (type) {
  case T_TRUE: case T_FALSE: return; /* value in the field header */
  case T_BYTE: rbyte(r); return;
  case T_I16: case T_I32: case T_I64: rvarint(r); return;
  case T_DOUBLE: skip_bytes(r, 8); return;
  case T_UUID: skip_bytes(r, 16); return;
  case T_BINARY: skip_bytes(r, rvarint(r)); return;
  case T_STRUCT: skip_struct(r); return;
  case T_LIST: case T_SET: {
    int et;
    uint64_t n;
    list_begin(r, &et, &n);
    struct_begin(r); /* nesting depth only: lists of lists recurse too */
    for (uint64_t i = 0; i < n; i++) {
      if (et == T_TRUE || et == T_FALSE) rbyte(r); /* list bools are one byte each */
      else skip(r, et);
    }
    struct_end(r);
    return;
  }
  case T_MAP: {
    uint64_t n = rvarint(r);
    if (n == 0) return;
    uint8_t kv = rbyte(r);
    struct_begin(r);
    for (uint64_t i = 0; i < n; i++) {
      skip(r, kv >> 4);
      skip(r, kv & 0x0f);
    }
    struct_end(r);
    return;
  }
  default: die(2, "unknown thrift type %d at offset %lld", type, off(r));
  }
}

/* ------------------------------------------------------------------- footer and pages */

typedef struct page {
  const uint8_t *src;  /* compressed bytes (after v2 levels) */
  size_t src_len, dst_len;
  int codec;           /* CODEC_NONE also for v2 pages with is_compressed = false */
} page;

typedef struct pages {
  page *v;
  size_t n, cap;
  int row_groups, dict_pages, data_pages;
  uint64_t compressed, uncompressed;      /* decompressor input / output (v2 levels excluded) */
  uint64_t header_bytes, stored, page_bytes; /* page headers, compressed_page_size, uncompressed_page_size */
  size_t max_dst;          /* the largest decompressor output: the reused buffer's size */
  size_t max_page, max_src; /* the largest uncompressed_page_size / compressed_page_size */
  int codecs_seen; /* bit per codec */
} pages;

static void push(pages *ps, page pg) {
  if (ps->n == ps->cap) {
    if (ps->cap >= MAX_PAGES) die(2, "more than %u pages", MAX_PAGES);
    ps->cap = ps->cap ? ps->cap * 2 : 1024;
    ps->v = realloc(ps->v, ps->cap * sizeof *ps->v);
    if (!ps->v) die(1, "out of memory");
  }
  ps->v[ps->n++] = pg;
  ps->compressed += pg.src_len;
  ps->uncompressed += pg.dst_len;
  if (pg.dst_len > ps->max_dst) ps->max_dst = pg.dst_len;
}

/* walk the pages of one column chunk: [start, start + len) of the file */
static void walk_chunk(const uint8_t *file, size_t fsize, int64_t start, int64_t len, int codec, pages *ps) {
  if (start < 4 || len < 0 || (uint64_t)start > fsize || (uint64_t)len > fsize - (uint64_t)start)
    die(2, "column chunk [%lld, +%lld) outside the file (%zu bytes)", (long long)start, (long long)len, fsize);
  if (codec != CODEC_NONE && codec != CODEC_SNAPPY && codec != CODEC_ZSTD)
    die(2, "column chunk at offset %lld: codec %d (this driver times none, snappy and zstd)", (long long)start, codec);
  rd r = {.p = file + start, .end = file + start + len, .base = file};
  while (r.p < r.end) {
    long long hdr_at = off(&r);
    int32_t type = -1, usize = -1, csize = -1, def_len = 0, rep_len = 0;
    int is_compressed = 1, has_v2 = 0;
    int16_t fid;
    int t;
    struct_begin(&r);
    while ((t = field(&r, &fid)) != T_STOP) {
      if (fid == 1 && t == T_I32) type = (int32_t)rzig(&r);
      else if (fid == 2 && t == T_I32) usize = (int32_t)rzig(&r);
      else if (fid == 3 && t == T_I32) csize = (int32_t)rzig(&r);
      else if (fid == 8 && t == T_STRUCT) { /* DataPageHeaderV2 */
        has_v2 = 1;
        int16_t f2;
        int t2;
        struct_begin(&r);
        while ((t2 = field(&r, &f2)) != T_STOP) {
          if (f2 == 5 && t2 == T_I32) def_len = (int32_t)rzig(&r);
          else if (f2 == 6 && t2 == T_I32) rep_len = (int32_t)rzig(&r);
          else if (f2 == 7 && (t2 == T_TRUE || t2 == T_FALSE)) is_compressed = r.bool_val;
          else skip(&r, t2);
        }
        struct_end(&r);
      } else skip(&r, t);
    }
    struct_end(&r);
    if (usize < 0 || csize < 0) die(2, "page header at offset %lld: missing or negative page sizes", hdr_at);
    if ((size_t)csize > (size_t)(r.end - r.p))
      die(2, "page at offset %lld: %d compressed bytes past the column chunk's end", hdr_at, csize);
    const uint8_t *body = r.p;
    r.p += csize;
    ps->header_bytes += (uint64_t)(off(&r) - hdr_at - csize);
    ps->stored += (uint64_t)csize;
    ps->page_bytes += (uint64_t)usize;
    if ((size_t)usize > ps->max_page) ps->max_page = (size_t)usize;
    if ((size_t)csize > ps->max_src) ps->max_src = (size_t)csize;
    if (type != PAGE_DATA && type != PAGE_DICT && type != PAGE_DATA_V2) continue; /* index pages */
    page pg = {.src = body, .src_len = (size_t)csize, .dst_len = (size_t)usize, .codec = codec};
    if (type == PAGE_DATA_V2 && has_v2) {
      int64_t lv = (int64_t)def_len + rep_len;
      if (def_len < 0 || rep_len < 0 || lv > csize || lv > usize)
        die(2, "page v2 at offset %lld: level lengths %d + %d exceed the page", hdr_at, def_len, rep_len);
      pg.src += lv;
      pg.src_len -= (size_t)lv;
      pg.dst_len -= (size_t)lv;
      if (!is_compressed) pg.codec = CODEC_NONE;
    }
    if (pg.codec == CODEC_NONE && pg.src_len != pg.dst_len)
      die(2, "uncompressed page at offset %lld: %zu stored bytes but %zu uncompressed", hdr_at, pg.src_len, pg.dst_len);
    if (type == PAGE_DICT) ps->dict_pages++;
    else ps->data_pages++;
    ps->codecs_seen |= 1 << pg.codec;
    push(ps, pg);
  }
}

/* ColumnMetaData: the fields that locate the chunk */
typedef struct colmeta {
  int codec;
  int64_t total_compressed, data_off, dict_off;
  int path_match;
} colmeta;

static void read_colmeta(rd *r, const char *column, colmeta *cm) {
  int16_t fid;
  int t;
  struct_begin(r);
  while ((t = field(r, &fid)) != T_STOP) {
    if (fid == 3 && t == T_LIST) { /* path_in_schema */
      int et;
      uint64_t n;
      list_begin(r, &et, &n);
      for (uint64_t i = 0; i < n; i++) {
        if (et != T_BINARY) die(2, "path_in_schema element type %d at offset %lld", et, off(r));
        uint64_t len = rvarint(r);
        const uint8_t *s = r->p;
        skip_bytes(r, len);
        if (i == 0) cm->path_match = strlen(column) == len && memcmp(s, column, len) == 0;
      }
    } else if (fid == 4 && t == T_I32) cm->codec = (int)rzig(r);
    else if (fid == 7 && t == T_I64) cm->total_compressed = rzig(r);
    else if (fid == 9 && t == T_I64) cm->data_off = rzig(r);
    else if (fid == 11 && t == T_I64) cm->dict_off = rzig(r);
    else skip(r, t);
  }
  struct_end(r);
}

static void read_footer(const uint8_t *file, size_t fsize, const char *column, pages *ps) {
  if (fsize < 12 || memcmp(file, "PAR1", 4) || memcmp(file + fsize - 4, "PAR1", 4))
    die(2, "not a parquet file (no PAR1 magic)");
  uint32_t flen;
  memcpy(&flen, file + fsize - 8, 4);
  if ((size_t)flen > fsize - 12) die(2, "footer length %u larger than the file", flen);
  rd r = {.p = file + fsize - 8 - flen, .end = file + fsize - 8, .base = file};
  int16_t fid;
  int t, matched = 0;
  struct_begin(&r);
  while ((t = field(&r, &fid)) != T_STOP) {
    if (!(fid == 4 && t == T_LIST)) { skip(&r, t); continue; }
    uint64_t nrg = struct_list(&r, "FileMetaData.row_groups");
    for (uint64_t g = 0; g < nrg; g++) { /* RowGroup */
      int16_t f2;
      int t2;
      ps->row_groups++;
      struct_begin(&r);
      while ((t2 = field(&r, &f2)) != T_STOP) {
        if (!(f2 == 1 && t2 == T_LIST)) { skip(&r, t2); continue; }
        uint64_t ncol = struct_list(&r, "RowGroup.columns");
        for (uint64_t c = 0; c < ncol; c++) { /* ColumnChunk */
          int16_t f3;
          int t3;
          colmeta cm = {.codec = -1, .total_compressed = -1, .data_off = -1, .dict_off = -1};
          int has_meta = 0;
          struct_begin(&r);
          while ((t3 = field(&r, &f3)) != T_STOP) {
            if (f3 == 1 && t3 == T_BINARY) die(2, "column chunk in another file (file_path set)");
            if (f3 == 3 && t3 == T_STRUCT) { read_colmeta(&r, column, &cm); has_meta = 1; }
            else skip(&r, t3);
          }
          struct_end(&r);
          if (!has_meta || !cm.path_match) continue;
          if (cm.data_off < 0 || cm.total_compressed < 0) die(2, "row group %llu: column chunk without offsets", (unsigned long long)g);
          int64_t start = cm.dict_off > 0 && cm.dict_off < cm.data_off ? cm.dict_off : cm.data_off;
          walk_chunk(file, fsize, start, cm.total_compressed, cm.codec, ps);
          matched++;
        }
      }
      struct_end(&r);
    }
  }
  struct_end(&r);
  if (!matched) die(2, "no column chunk whose path starts with '%s'", column);
}

/* --------------------------------------------------------------------------- timing */

typedef struct job {
  const page *v;
  size_t lo, hi, cap;
  uint8_t *dst;
  ZSTD_DCtx *dctx;
  int failed;
  size_t failed_at;
} job;

static void *run_job(void *arg) {
  job *j = arg;
  for (size_t i = j->lo; i < j->hi; i++) {
    const page *pg = &j->v[i];
    if (pg->codec == CODEC_ZSTD) {
      size_t got = ZSTD_decompressDCtx(j->dctx, j->dst, j->cap, pg->src, pg->src_len);
      if (ZSTD_isError(got) || got != pg->dst_len) { j->failed = 1; j->failed_at = i; return NULL; }
    } else if (pg->codec == CODEC_SNAPPY) {
      size_t got = j->cap;
      if (snappy_uncompress((const char *)pg->src, pg->src_len, (char *)j->dst, &got) != SNAPPY_OK ||
          got != pg->dst_len) { j->failed = 1; j->failed_at = i; return NULL; }
    } else {
      memcpy(j->dst, pg->src, pg->src_len);
    }
  }
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* one timed pass with T threads over contiguous page runs of ~equal compressed bytes */
static double timed_pass(const pages *ps, job *jobs, int T) {
  uint64_t per = ps->compressed / (uint64_t)T + 1, acc = 0;
  size_t i = 0;
  for (int k = 0; k < T; k++) {
    jobs[k].v = ps->v;
    jobs[k].lo = i;
    uint64_t goal = per * (uint64_t)(k + 1);
    while (i < ps->n && (k == T - 1 || acc + ps->v[i].src_len / 2 < goal)) acc += ps->v[i++].src_len;
    jobs[k].hi = i;
  }
  pthread_t tid[MAX_THREADS];
  double t0 = now();
  for (int k = 1; k < T; k++)
    if (pthread_create(&tid[k], NULL, run_job, &jobs[k])) die(1, "pthread_create: %s", strerror(errno));
  run_job(&jobs[0]);
  for (int k = 1; k < T; k++) pthread_join(tid[k], NULL);
  double t = now() - t0;
  for (int k = 0; k < T; k++)
    if (jobs[k].failed) die(2, "page %zu does not decompress to its header's size", jobs[k].failed_at);
  return t;
}

int main(int argc, char **argv) {
  const char *path = NULL, *column = "emb", *tlist = "1";
  int repeat = 5;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--column") && i + 1 < argc) column = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) tlist = argv[++i];
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = (int)strtol(argv[++i], NULL, 10);
    else if (argv[i][0] == '-' || path) die(2, "usage: decomp_bare FILE [--column emb] [--threads 1,2] [--repeat 5]");
    else path = argv[i];
  }
  if (!path || repeat < 1) die(2, "usage: decomp_bare FILE [--column emb] [--threads 1,2] [--repeat 5]");
  FILE *f = fopen(path, "rb");
  if (!f) die(1, "%s: %s", path, strerror(errno));
  if (fseek(f, 0, SEEK_END)) die(1, "%s: %s", path, strerror(errno));
  long fl = ftell(f);
  if (fl < 0) die(1, "%s: %s", path, strerror(errno));
  size_t fsize = (size_t)fl;
  rewind(f);
  uint8_t *file = malloc(fsize ? fsize : 1);
  if (!file) die(1, "out of memory (%zu bytes)", fsize);
  if (fread(file, 1, fsize, f) != fsize) die(1, "%s: short read", path);
  fclose(f);

  pages ps = {0};
  read_footer(file, fsize, column, &ps);

  int threads[32], nt = 0;
  for (const char *s = tlist; *s && nt < 32;) {
    char *e;
    long v = strtol(s, &e, 10);
    if (e == s || v < 1 || v > MAX_THREADS) die(2, "--threads: a comma list of 1..%d", MAX_THREADS);
    threads[nt++] = (int)v;
    s = *e == ',' ? e + 1 : e;
    if (*e && *e != ',') die(2, "--threads: a comma list of 1..%d", MAX_THREADS);
  }
  int tmax = 1;
  for (int k = 0; k < nt; k++) if (threads[k] > tmax) tmax = threads[k];
  job *jobs = calloc((size_t)tmax, sizeof *jobs);
  if (!jobs) die(1, "out of memory");
  for (int k = 0; k < tmax; k++) {
    jobs[k].cap = ps.max_dst ? ps.max_dst : 1;
    jobs[k].dst = malloc(jobs[k].cap);
    jobs[k].dctx = ZSTD_createDCtx();
    if (!jobs[k].dst || !jobs[k].dctx) die(1, "out of memory");
    memset(jobs[k].dst, 0, jobs[k].cap); /* fault the buffer in before timing */
  }
  const char *codec = ps.codecs_seen == (1 << CODEC_ZSTD) ? "zstd"
                    : ps.codecs_seen == (1 << CODEC_SNAPPY) ? "snappy"
                    : ps.codecs_seen == (1 << CODEC_NONE) ? "uncompressed" : "mixed";
  printf("{\"column\":\"%s\",\"codec\":\"%s\",\"row_groups\":%d,\"pages\":%zu,"
         "\"dict_pages\":%d,\"data_pages\":%d,\"header_bytes\":%llu,\"stored_bytes\":%llu,"
         "\"page_bytes\":%llu,\"decompress_in_bytes\":%llu,\"decompress_out_bytes\":%llu,"
         "\"max_page_compressed\":%zu,\"max_page_uncompressed\":%zu,\"repeat\":%d,\"seconds\":{",
         column, codec, ps.row_groups, ps.n, ps.dict_pages, ps.data_pages,
         (unsigned long long)ps.header_bytes, (unsigned long long)ps.stored, (unsigned long long)ps.page_bytes,
         (unsigned long long)ps.compressed, (unsigned long long)ps.uncompressed, ps.max_src, ps.max_page, repeat);
  for (int k = 0; k < nt; k++) {
    double best = 1e30;
    timed_pass(&ps, jobs, threads[k]); /* warm caches and the allocator */
    for (int r = 0; r < repeat; r++) {
      double t = timed_pass(&ps, jobs, threads[k]);
      if (t < best) best = t;
    }
    printf("%s\"%d\":%.9g", k ? "," : "", threads[k], best);
  }
  printf("}}\n");
  for (int k = 0; k < tmax; k++) { free(jobs[k].dst); ZSTD_freeDCtx(jobs[k].dctx); }
  free(jobs);
  free(ps.v);
  free(file);
  return 0;
}
