#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"

#define VF_TEST_MAX 1024
static struct { const char *name; vf_test_fn fn; } tests[VF_TEST_MAX];
static int ntests, cur_failed, cur_skipped;
static char tmpdir[4096];

void vf_test_register(const char *name, vf_test_fn fn) {
  if (ntests < VF_TEST_MAX) {
    tests[ntests].name = name;
    tests[ntests].fn = fn;
    ntests++;
  }
}

void vf_test_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "  FAIL %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  cur_failed++;
}

void vf_test_skip(const char *why) {
  fprintf(stderr, "  skipped: %s\n", why);
  cur_skipped = 1;
}

const char *vf_test_shared(void) {
  const char *s = getenv("VF_SHARED");
  struct stat st;
  if (!s || !*s || stat(s, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
  return s;
}

const char *vf_test_tmpdir(void) {
  if (!tmpdir[0]) {
    const char *base = getenv("VF_TMP");
    if (!base || !*base) base = "/tmp";
    mkdir(base, 0777);
    snprintf(tmpdir, sizeof tmpdir, "%s/vftest.%d.XXXXXX", base, (int)getpid());
    if (!mkdtemp(tmpdir)) {
      snprintf(tmpdir, sizeof tmpdir, "/tmp");
    }
  }
  return tmpdir;
}

void vf_test_npy_header(FILE *fp, const char *descr, int rows, int cols) {
  char dict[128];
  snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }",
           descr, rows, cols);
  size_t dl = strlen(dict), total = 10 + dl + 1, pad = (64 - total % 64) % 64, hlen = dl + pad + 1;
  fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
  unsigned char l[2] = {(unsigned char)hlen, (unsigned char)(hlen >> 8)};
  fwrite(l, 1, 2, fp);
  fwrite(dict, 1, dl, fp);
  for (size_t i = 0; i < pad; i++) fputc(' ', fp);
  fputc('\n', fp);
}

int main(int argc, char **argv) {
  int passed = 0, failed = 0, skipped = 0;
  for (int i = 0; i < ntests; i++) {
    if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
    cur_failed = 0;
    cur_skipped = 0;
    fprintf(stderr, "[ RUN  ] %s\n", tests[i].name);
    tests[i].fn();
    if (cur_failed) {
      failed++;
      fprintf(stderr, "[ FAIL ] %s\n", tests[i].name);
    } else if (cur_skipped) {
      skipped++;
      fprintf(stderr, "[ SKIP ] %s\n", tests[i].name);
    } else {
      passed++;
      fprintf(stderr, "[  OK  ] %s\n", tests[i].name);
    }
  }
  if (tmpdir[0] && strcmp(tmpdir, "/tmp") != 0 && !failed) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  }
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  if (failed) return 1;
  if (skipped && !passed) return 77;
  return 0;
}
