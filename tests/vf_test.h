/* Minimal unit-test harness: VF_TEST(name) { ... } registers a test; CHECK* record failures
 * with file:line and keep going; vf_test_skip() marks the test skipped (e.g. shared/ absent).
 * Each executable prints "N passed, N failed, N skipped" and exits 1 on any failure, 77 when
 * every test skipped. */
#ifndef VF_TEST_H
#define VF_TEST_H
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vforge/util.h"

typedef void (*vf_test_fn)(void);
void vf_test_register(const char *name, vf_test_fn fn);
void vf_test_fail(const char *file, int line, const char *fmt, ...) VF_PRINTF(3, 4);
void vf_test_skip(const char *why);
/* $VF_SHARED or NULL if that directory does not exist */
const char *vf_test_shared(void);
/* a fresh scratch directory for this test (under $VF_TMP or /tmp) */
const char *vf_test_tmpdir(void);

#define VF_TEST(name)                                                              \
  static void name(void);                                                          \
  __attribute__((constructor)) static void name##_register(void) {                 \
    vf_test_register(#name, name);                                                 \
  }                                                                                \
  static void name(void)

#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) vf_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);            \
  } while (0)
#define CHECK_OK(expr)                                                             \
  do {                                                                             \
    vf_status st_ = (expr);                                                        \
    if (st_ != VF_OK) vf_test_fail(__FILE__, __LINE__, "%s -> %s", #expr, vf_status_name(st_)); \
  } while (0)
#define CHECK_EQ_INT(a, b)                                                         \
  do {                                                                             \
    long long a_ = (long long)(a), b_ = (long long)(b);                            \
    if (a_ != b_) vf_test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
  } while (0)
#define CHECK_EQ_STR(a, b)                                                         \
  do {                                                                             \
    const char *a_ = (a), *b_ = (b);                                               \
    if (!a_ || !b_ || strcmp(a_, b_) != 0)                                         \
      vf_test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
  } while (0)
#define CHECK_STATUS(expr, want)                                                   \
  do {                                                                             \
    vf_status st_ = (expr);                                                        \
    if (st_ != (want)) vf_test_fail(__FILE__, __LINE__, "%s -> %s, want %s", #expr, vf_status_name(st_), vf_status_name(want)); \
  } while (0)
#endif
