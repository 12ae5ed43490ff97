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
/* a .npy 1.0 header for a C-order rows x cols array of dtype `descr` ("<f4", "<f8", "<f2"), padded
 * to 64 bytes; the caller writes the data after it */
void vf_test_npy_header(FILE *fp, const char *descr, int rows, int cols);

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
/* A buffer made with VF_BUF_INIT(&b, LIMIT) holds LIMIT = BYTES and refuses to grow past it
 * with VF_ENOMEM naming LIMIT, before allocating anything (issue 15's named ceilings). */
#define CHECK_BUF_CEILING(LIMIT, BYTES)                                            \
  do {                                                                             \
    vf_buf cb_;                                                                    \
    vf_buf_init_named(&cb_, (LIMIT), #LIMIT); /* as VF_BUF_INIT(&cb_, LIMIT) */     \
    CHECK_EQ_INT(cb_.max, (size_t)(BYTES));                                        \
    CHECK_EQ_STR(cb_.limit, #LIMIT);                                               \
    vf_error ce_;                                                                  \
    vf_error_clear(&ce_);                                                          \
    CHECK_STATUS(vf_buf_reserve(&cb_, (size_t)(BYTES) + 1, &ce_), VF_ENOMEM);     \
    char cw_[256];                                                                 \
    snprintf(cw_, sizeof cw_,                                                      \
             "too big: more than the %s limit of %zu bytes (have 0, need %zu more)", \
             #LIMIT, (size_t)(BYTES), (size_t)(BYTES) + 1);                        \
    CHECK_EQ_STR(ce_.msg, cw_);                                                    \
    CHECK(cb_.data == NULL);                                                       \
    vf_buf_free(&cb_);                                                             \
  } while (0)
#endif
