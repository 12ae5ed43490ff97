/* Unit tests for src/io: local pread backend, memory backend, bounds checks and range
 * coalescing (merging, counters, results identical to individual reads). */
#include <stdlib.h>
#include <sys/stat.h>

#include "vf_test.h"
#include "vforge/io.h"

#define NBYTES 200000

static uint8_t *pattern(size_t n) {
  uint8_t *p = malloc(n);
  uint32_t x = 12345;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    p[i] = (uint8_t)(x >> 16);
  }
  return p;
}

static const char *write_file(const char *name, const uint8_t *data, size_t n) {
  static char path[4200];
  snprintf(path, sizeof path, "%s/%s", vf_test_tmpdir(), name);
  FILE *fp = fopen(path, "wb");
  if (!fp) return NULL;
  fwrite(data, 1, n, fp);
  fclose(fp);
  return path;
}

/* a local file of NBYTES pattern bytes, opened; NULL (and *data freed) on failure */
static io_source *open_pattern_file(const char *name, uint8_t **data, const char **path) {
  *data = pattern(NBYTES);
  *path = write_file(name, *data, NBYTES);
  io_source *src = NULL;
  vf_error err;
  CHECK_OK(io_open_local(*path, &src, &err));
  if (!src) {
    free(*data);
    *data = NULL;
  }
  return src;
}

VF_TEST(test_local_read_at) {
  uint8_t *data;
  const char *path;
  io_source *src = open_pattern_file("a.bin", &data, &path);
  if (!src) return;
  vf_error err;
  CHECK_EQ_INT(src->size, NBYTES);
  CHECK_EQ_STR(src->name, path);
  uint8_t buf[1000];
  CHECK_OK(io_read_at(src, 12345, buf, sizeof buf, &err));
  CHECK(memcmp(buf, data + 12345, sizeof buf) == 0);
  CHECK_OK(io_read_at(src, NBYTES - 10, buf, 10, &err)); /* up to the last byte */
  CHECK(memcmp(buf, data + NBYTES - 10, 10) == 0);
  CHECK_OK(io_read_at(src, NBYTES, buf, 0, &err));
  CHECK_EQ_INT(src->reads, 2);
  CHECK_EQ_INT(src->bytes_read, 1010);
  /* past EOF: corrupt, naming the file, length, offset and size; counters untouched */
  CHECK_STATUS(io_read_at(src, NBYTES - 10, buf, 11, &err), VF_ECORRUPT);
  char want[4600];
  snprintf(want, sizeof want, "%s: read of 11 bytes at offset %d past end of file (size %d)", path,
           NBYTES - 10, NBYTES);
  CHECK_EQ_STR(err.msg, want);
  CHECK_STATUS(io_read_at(src, UINT64_MAX, buf, 1, &err), VF_ECORRUPT);
  CHECK_STATUS(io_read_at(src, NBYTES + 1, buf, 0, &err), VF_ECORRUPT);
  CHECK_EQ_INT(src->reads, 2);
  /* a file truncated after open: short read is an error naming the path, not garbage */
  FILE *fp = fopen(path, "wb");
  if (fp) fclose(fp);
  CHECK_STATUS(io_read_at(src, 100, buf, 10, &err), VF_EIO);
  CHECK(strstr(err.msg, path) != NULL && strstr(err.msg, "offset 100") != NULL);
  io_close(src);
  io_close(NULL);
  free(data);
}

VF_TEST(test_local_open_errors) {
  io_source *src = (io_source *)1;
  vf_error err;
  char path[4200];
  snprintf(path, sizeof path, "%s/does-not-exist.parquet", vf_test_tmpdir());
  CHECK_STATUS(io_open_local(path, &src, &err), VF_ENOTFOUND);
  CHECK(src == NULL);
  CHECK(strstr(err.msg, path) != NULL);
  snprintf(path, sizeof path, "%s/no-dir/x.parquet", vf_test_tmpdir());
  CHECK_STATUS(io_open_local(path, &src, &err), VF_ENOTFOUND);
  CHECK_STATUS(io_open_local(vf_test_tmpdir(), &src, &err), VF_EUSAGE);
  CHECK(strstr(err.msg, "directory") != NULL);
}

VF_TEST(test_memory_source) {
  const char text[] = "0123456789";
  io_source *src = NULL;
  vf_error err;
  CHECK_OK(io_open_memory(text, 10, "mem.bin", &src, &err));
  char buf[4];
  CHECK_OK(io_read_at(src, 6, buf, 4, &err));
  CHECK(memcmp(buf, "6789", 4) == 0);
  CHECK_STATUS(io_read_at(src, 7, buf, 4, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "mem.bin: read of 4 bytes at offset 7 past end of file (size 10)") != NULL);
  io_close(src);
  CHECK_OK(io_open_memory(NULL, 0, "empty", &src, &err));
  CHECK_EQ_INT(src->size, 0);
  CHECK_STATUS(io_read_at(src, 0, buf, 1, &err), VF_ECORRUPT);
  io_close(src);
}

VF_TEST(test_coalesce_merges_nearby_ranges) {
  uint8_t *data = pattern(NBYTES);
  io_source *src = NULL;
  vf_error err;
  CHECK_OK(io_open_memory(data, NBYTES, "mem", &src, &err));
  uint8_t b[6][100];
  /* given out of order: [1000,1100) [1150,1250) [1200,1300) overlap [5000,5100) [5150,5250)
   * [90000,90100): with max_gap 100 -> spans {1000..1300}, {5000..5250}, {90000..90100} */
  io_range r[6] = {{5150, 100, b[0]}, {1000, 100, b[1]}, {90000, 100, b[2]},
                   {1200, 100, b[3]}, {5000, 100, b[4]}, {1150, 100, b[5]}};
  CHECK_OK(io_read_ranges(src, r, 6, 100, &err));
  CHECK_EQ_INT(src->reads, 3);
  CHECK_EQ_INT(src->bytes_read, 300 + 250 + 100);
  for (int i = 0; i < 6; i++)
    CHECK(memcmp(b[i], data + r[i].offset, 100) == 0);
  /* max_gap 0: only touching/overlapping ranges merge */
  src->reads = src->bytes_read = 0;
  memset(b, 0, sizeof b);
  CHECK_OK(io_read_ranges(src, r, 6, 0, &err));
  CHECK_EQ_INT(src->reads, 5); /* 1150 and 1200 overlap */
  for (int i = 0; i < 6; i++)
    CHECK(memcmp(b[i], data + r[i].offset, 100) == 0);
  /* a huge gap merges everything into one read */
  src->reads = src->bytes_read = 0;
  CHECK_OK(io_read_ranges(src, r, 6, IO_DEFAULT_COALESCE_GAP, &err));
  CHECK_EQ_INT(src->reads, 1);
  CHECK_EQ_INT(src->bytes_read, 90100 - 1000);
  for (int i = 0; i < 6; i++)
    CHECK(memcmp(b[i], data + r[i].offset, 100) == 0);
  io_close(src);
  free(data);
}

VF_TEST(test_coalesce_random_equals_individual_reads) {
  uint8_t *data;
  const char *path;
  io_source *src = open_pattern_file("r.bin", &data, &path);
  if (!src) return;
  vf_error err;
  srand(7);
  for (int round = 0; round < 50; round++) {
    size_t n = (size_t)(rand() % 20);
    io_range r[20];
    uint8_t *bufs[20];
    for (size_t i = 0; i < n; i++) {
      uint64_t len = (uint64_t)(rand() % 3000);
      uint64_t off = (uint64_t)rand() % (NBYTES - len + 1);
      bufs[i] = malloc(len + 1);
      r[i] = (io_range){off, len, bufs[i]};
    }
    uint64_t gap = (uint64_t)(rand() % 4) * 5000;
    uint64_t reads0 = src->reads;
    CHECK_OK(io_read_ranges(src, r, n, gap, &err));
    CHECK(src->reads - reads0 <= n);
    for (size_t i = 0; i < n; i++) {
      if (r[i].len) CHECK(memcmp(bufs[i], data + r[i].offset, r[i].len) == 0);
      free(bufs[i]);
    }
  }
  io_close(src);
  free(data);
}

VF_TEST(test_coalesce_errors) {
  uint8_t data[100] = {0};
  io_source *src = NULL;
  vf_error err;
  CHECK_OK(io_open_memory(data, sizeof data, "mem", &src, &err));
  uint8_t a[50], b2[50];
  io_range r[2] = {{0, 50, a}, {60, 50, b2}};
  CHECK_STATUS(io_read_ranges(src, r, 2, 100, &err), VF_ECORRUPT);
  CHECK(strstr(err.msg, "read of 50 bytes at offset 60 past end of file (size 100)") != NULL);
  CHECK_EQ_INT(src->reads, 0);                    /* checked before any read */
  io_range z[2] = {{0, 0, NULL}, {100, 0, NULL}}; /* empty ranges need no buffer */
  CHECK_OK(io_read_ranges(src, z, 2, 0, &err));
  CHECK_OK(io_read_ranges(src, NULL, 0, 0, &err));
  CHECK_EQ_INT(src->reads, 0);
  io_close(src);
}
