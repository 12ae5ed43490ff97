/* Unit tests for src/util: errors, buffers with a ceiling, the cursor and varints, md5 (RFC 1321
 * vectors plus md5sum-computed ones), JSON formatting, size parsing, atomic files, temporary
 * names and their sweep, progress stages, cancellation and CPU detection. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vf_test.h"

static void md5_hex(const void *p, size_t n, char out[33]) {
  uint8_t d[16];
  vf_md5(p, n, d);
  for (int i = 0; i < 16; i++)
    snprintf(out + 2 * i, 3, "%02x", d[i]);
}

VF_TEST(test_error_model) {
  vf_error err;
  vf_error_clear(&err);
  CHECK_EQ_INT(err.code, VF_OK);
  CHECK_EQ_STR(err.msg, "");
  CHECK_EQ_INT(vf_error_set(&err, VF_ECORRUPT, "bad %s at %d", "page", 42), VF_ECORRUPT);
  CHECK_EQ_STR(err.msg, "bad page at 42");
  CHECK_EQ_INT(vf_error_prefix(&err, "%s: ", "x.parquet"), VF_ECORRUPT);
  CHECK_EQ_STR(err.msg, "x.parquet: bad page at 42");
  CHECK_EQ_INT(vf_error_set(NULL, VF_EIO, "ignored"), VF_EIO);
  /* re-wrapping the current message through its own buffer is safe */
  vf_error_set(&err, VF_EIO, "while loading: %s", err.msg);
  CHECK_EQ_STR(err.msg, "while loading: x.parquet: bad page at 42");
  CHECK_EQ_INT(err.code, VF_EIO);
  CHECK_EQ_INT(vf_error_prefix(NULL, "x"), VF_OK);
  /* a prefix on a full message truncates instead of overflowing */
  char big[2000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  vf_error_set(&err, VF_EIO, "%s", big);
  vf_error_prefix(&err, "PREFIX: ");
  CHECK(strncmp(err.msg, "PREFIX: aaa", 11) == 0);
  CHECK_EQ_INT(strlen(err.msg), VF_ERROR_MSG_MAX - 1);
  vf_error_clear(&err);
  CHECK_EQ_INT(err.code, VF_OK);
}

VF_TEST(test_status_names_and_exit_codes) {
  CHECK_EQ_STR(vf_status_name(VF_OK), "ok");
  CHECK_EQ_STR(vf_status_name(VF_ECORRUPT), "corrupt");
  CHECK_EQ_STR(vf_status_name(VF_EIO), "io");
  CHECK_EQ_STR(vf_status_name(VF_ENOTFOUND), "notfound");
  CHECK_EQ_INT(vf_status_exit_code(VF_OK), 0);
  vf_status two[] = {VF_EUSAGE, VF_ECONFIG, VF_ECORRUPT, VF_EUNSUPPORTED, VF_ENOTFOUND};
  for (size_t i = 0; i < sizeof two / sizeof two[0]; i++)
    CHECK_EQ_INT(vf_status_exit_code(two[i]), 2);
  vf_status one[] = {VF_EIO, VF_ENET, VF_ENOMEM, VF_EINTERNAL};
  for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
    CHECK_EQ_INT(vf_status_exit_code(one[i]), 1);
}

VF_TEST(test_alloc_overflow) {
  CHECK(vf_mallocarray(SIZE_MAX / 2, 3) == NULL);
  CHECK(vf_calloc(SIZE_MAX / 2, 3) == NULL);
  void *p = vf_mallocarray(10, 8);
  CHECK(p != NULL);
  free(p);
  char *s = vf_strndup("abcdef", 3);
  CHECK_EQ_STR(s, "abc");
  free(s);
  s = vf_strdup("xyz");
  CHECK_EQ_STR(s, "xyz");
  free(s);
}

VF_TEST(test_buf_ceiling) {
  vf_buf b;
  vf_error err;
  vf_error_clear(&err);
  vf_buf_init(&b, 100);
  CHECK_OK(vf_buf_append(&b, "0123456789", 10, &err));
  for (int i = 0; i < 9; i++)
    CHECK_OK(vf_buf_append(&b, "0123456789", 10, &err));
  CHECK_EQ_INT(b.len, 100);
  CHECK(b.cap <= 100);
  CHECK_STATUS(vf_buf_append(&b, "x", 1, &err), VF_ENOMEM);
  CHECK(strstr(err.msg, "limit of 100 bytes") != NULL);
  CHECK_EQ_INT(b.len, 100); /* unchanged after the failure */
  CHECK_STATUS(vf_buf_reserve(&b, SIZE_MAX, &err), VF_ENOMEM);
  vf_buf_reset(&b);
  CHECK_OK(vf_buf_printf(&b, &err, "%d-%s", 7, "x"));
  CHECK_EQ_INT(b.len, 3);
  CHECK(memcmp(b.data, "7-x", 3) == 0);
  /* printf that lands exactly on the ceiling succeeds; one byte more does not */
  vf_buf_reset(&b);
  CHECK_OK(vf_buf_append(&b, "0123456789", 10, &err));
  for (int i = 0; i < 8; i++)
    CHECK_OK(vf_buf_append(&b, "0123456789", 10, &err));
  CHECK_OK(vf_buf_printf(&b, &err, "%s", "abcdefghij"));
  CHECK_EQ_INT(b.len, 100);
  CHECK(memcmp(b.data + 90, "abcdefghij", 10) == 0);
  b.len = 90;
  CHECK_STATUS(vf_buf_printf(&b, &err, "%s", "abcdefghijk"), VF_ENOMEM);
  CHECK_EQ_INT(b.len, 90);
  vf_buf_reset(&b);
  CHECK_OK(vf_buf_printf(&b, &err, "%d-%s", 7, "x"));
  size_t len;
  uint8_t *d = vf_buf_take(&b, &len);
  CHECK_EQ_INT(len, 3);
  CHECK(b.data == NULL && b.len == 0);
  free(d);
  vf_buf_free(&b);
  /* default ceiling when max = 0 */
  vf_buf_init(&b, 0);
  CHECK_EQ_INT(b.max, VF_BUF_DEFAULT_MAX);
  CHECK_STATUS(vf_buf_reserve(&b, VF_BUF_DEFAULT_MAX + 1, &err), VF_ENOMEM);
  vf_buf_free(&b);
}

VF_TEST(test_cursor_bounds) {
  const uint8_t data[] = {1, 2, 3, 4, 5, 6};
  vf_cursor c;
  vf_cur_init(&c, data, sizeof data, 1000);
  uint8_t u8;
  uint32_t u32;
  const uint8_t *p;
  CHECK(vf_cur_u8(&c, &u8) && u8 == 1);
  CHECK(vf_cur_u32le(&c, &u32) && u32 == 0x05040302u);
  CHECK_EQ_INT(vf_cur_offset(&c), 1005);
  CHECK(!vf_cur_u32le(&c, &u32));
  CHECK_EQ_INT(vf_cur_remaining(&c), 1);
  CHECK(!vf_cur_take(&c, 2, &p));
  CHECK(!vf_cur_skip(&c, UINT64_MAX));
  CHECK(vf_cur_take(&c, 1, &p) && *p == 6);
  CHECK(!vf_cur_u8(&c, &u8));
  CHECK_EQ_INT(vf_cur_remaining(&c), 0);
}

VF_TEST(test_varints) {
  vf_cursor c;
  uint64_t v;
  int64_t s;
  const uint8_t a[] = {0x00, 0x7f, 0x80, 0x01, 0xe5, 0x8e, 0x26};
  vf_cur_init(&c, a, sizeof a, 0);
  CHECK(vf_cur_uvarint(&c, &v) && v == 0);
  CHECK(vf_cur_uvarint(&c, &v) && v == 127);
  CHECK(vf_cur_uvarint(&c, &v) && v == 128);
  CHECK(vf_cur_uvarint(&c, &v) && v == 624485);
  CHECK_EQ_INT(vf_cur_remaining(&c), 0);
  /* UINT64_MAX: 9 x 0xff then 0x01 */
  const uint8_t mx[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  vf_cur_init(&c, mx, sizeof mx, 0);
  CHECK(vf_cur_uvarint(&c, &v) && v == UINT64_MAX);
  /* overflow in the 10th byte */
  const uint8_t ov[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  vf_cur_init(&c, ov, sizeof ov, 0);
  CHECK(!vf_cur_uvarint(&c, &v));
  CHECK_EQ_INT(vf_cur_remaining(&c), 10); /* unchanged on failure */
  /* overlong: 11 bytes */
  const uint8_t ol[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  vf_cur_init(&c, ol, sizeof ol, 0);
  CHECK(!vf_cur_uvarint(&c, &v));
  /* non-minimal encodings within 10 bytes are accepted (writers may pad), like protobuf/thrift */
  const uint8_t nm[] = {0x80, 0x00, 0xff, 0x80, 0x80, 0x00};
  vf_cur_init(&c, nm, sizeof nm, 0);
  CHECK(vf_cur_uvarint(&c, &v) && v == 0);
  CHECK(vf_cur_uvarint(&c, &v) && v == 127);
  /* truncated */
  const uint8_t tr[] = {0x80, 0x80};
  vf_cur_init(&c, tr, sizeof tr, 0);
  CHECK(!vf_cur_uvarint(&c, &v));
  CHECK_EQ_INT(vf_cur_remaining(&c), 2);
  vf_cur_init(&c, tr, 0, 0);
  CHECK(!vf_cur_uvarint(&c, &v));
  /* zigzag: 0->0, 1->-1, 2->1, 3->-2, 0xffff..fe -> INT64_MAX, 0xff..ff -> INT64_MIN */
  const uint8_t z[] = {0x00, 0x01, 0x02, 0x03, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                       0xff, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  vf_cur_init(&c, z, sizeof z, 0);
  CHECK(vf_cur_zvarint(&c, &s) && s == 0);
  CHECK(vf_cur_zvarint(&c, &s) && s == -1);
  CHECK(vf_cur_zvarint(&c, &s) && s == 1);
  CHECK(vf_cur_zvarint(&c, &s) && s == -2);
  CHECK(vf_cur_zvarint(&c, &s) && s == INT64_MAX);
  CHECK(vf_cur_zvarint(&c, &s) && s == INT64_MIN);
  CHECK(!vf_cur_zvarint(&c, &s));
}

VF_TEST(test_md5_vectors) {
  /* RFC 1321 appendix A.5 */
  static const char *const rfc[][2] = {
      {"", "d41d8cd98f00b204e9800998ecf8427e"},
      {"a", "0cc175b9c0f1b6a831c399e269772661"},
      {"abc", "900150983cd24fb0d6963f7d28e17f72"},
      {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
      {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
      {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
       "d174ab98d277d9f5a5611c2c9f419d9f"},
      {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
       "57edf4a22be3c955ac49da2e2107b67a"},
  };
  char hex[33];
  for (size_t i = 0; i < sizeof rfc / sizeof rfc[0]; i++) {
    md5_hex(rfc[i][0], strlen(rfc[i][0]), hex);
    CHECK_EQ_STR(hex, rfc[i][1]);
  }
  /* padding boundaries, computed with `head -c N /dev/zero | tr '\0' x | md5sum` */
  static const struct {
    size_t n;
    const char *want;
  } xs[] = {{55, "04364420e25c512fd958a70738aa8f72"},
            {56, "668a72d5ba17f08e62dabcafad6db14b"},
            {63, "7dc2ca208106a2f703567bdff99d8981"},
            {64, "c1bb4f81d892b2d57947682aeb252456"},
            {65, "1bc932052302d074bdec39795fe00cf6"}};
  char x[80];
  memset(x, 'x', sizeof x);
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
    md5_hex(x, xs[i].n, hex);
    CHECK_EQ_STR(hex, xs[i].want);
  }
  /* 100003 bytes of (i*7+3)&255, md5sum-computed */
  size_t n = 100003;
  uint8_t *big = malloc(n);
  for (size_t i = 0; i < n; i++)
    big[i] = (uint8_t)((i * 7 + 3) & 255);
  md5_hex(big, n, hex);
  CHECK_EQ_STR(hex, "e3e21ab5fc08a965b1a2bc36649eefab");
  /* the incremental form gives the same digest for any split of the input */
  size_t splits[] = {0, 1, 55, 63, 64, 65, 127, 128, 4097, 100002, 100003};
  for (size_t s = 0; s < sizeof splits / sizeof splits[0]; s++) {
    vf_md5_ctx c;
    uint8_t d[16];
    vf_md5_init(&c);
    vf_md5_update(&c, big, splits[s]);
    vf_md5_update(&c, NULL, 0);
    for (size_t off = splits[s]; off < n; off += 1000)
      vf_md5_update(&c, big + off, n - off < 1000 ? n - off : 1000);
    vf_md5_final(&c, d);
    for (int i = 0; i < 16; i++)
      snprintf(hex + 2 * i, 3, "%02x", d[i]);
    CHECK_EQ_STR(hex, "e3e21ab5fc08a965b1a2bc36649eefab");
  }
  free(big);
}

static char *json_of(int kind, double v) {
  vf_buf b;
  vf_error err;
  vf_buf_init(&b, 0);
  vf_status st = kind == 32 ? vf_json_f32(&b, (float)v, &err) : vf_json_f64(&b, v, &err);
  if (st != VF_OK) {
    vf_buf_free(&b);
    return NULL;
  }
  vf_buf_append(&b, "", 1, &err);
  return (char *)vf_buf_take(&b, NULL);
}

#define CHECK_JSON_NUM(kind, v, want)                                                              \
  do {                                                                                             \
    char *s_ = json_of(kind, v);                                                                   \
    CHECK_EQ_STR(s_, want);                                                                        \
    free(s_);                                                                                      \
  } while (0)

VF_TEST(test_json_numbers) {
  CHECK_JSON_NUM(32, 0.1, "0.100000001");
  CHECK_JSON_NUM(32, 1.0, "1");
  CHECK_JSON_NUM(32, -2.5, "-2.5");
  CHECK_JSON_NUM(32, 1e10, "1e+10");
  CHECK_JSON_NUM(32, 3.4028234663852886e38, "3.40282347e+38");
  CHECK_JSON_NUM(32, NAN, "\"NaN\"");
  CHECK_JSON_NUM(32, INFINITY, "\"Infinity\"");
  CHECK_JSON_NUM(32, -INFINITY, "\"-Infinity\"");
  CHECK_JSON_NUM(64, 0.1, "0.10000000000000001");
  CHECK_JSON_NUM(64, 1.0, "1");
  CHECK_JSON_NUM(64, 1e300, "1.0000000000000001e+300");
  CHECK_JSON_NUM(64, NAN, "\"NaN\"");
  CHECK_JSON_NUM(64, -INFINITY, "\"-Infinity\"");
  /* float32 round trip through 9 digits */
  float f = 0.3333333432674408f;
  char *s = json_of(32, f);
  CHECK(s && strtof(s, NULL) == f);
  free(s);
  vf_buf b;
  vf_error err;
  vf_buf_init(&b, 0);
  CHECK_OK(vf_json_i64(&b, INT64_MIN, &err));
  CHECK_OK(vf_json_raw(&b, ",", &err));
  CHECK_OK(vf_json_u64(&b, UINT64_MAX, &err));
  CHECK_OK(vf_json_raw(&b, ",null", &err));
  vf_buf_append(&b, "", 1, &err);
  CHECK_EQ_STR((char *)b.data, "-9223372036854775808,18446744073709551615,null");
  vf_buf_free(&b);
}

static char *json_str(const char *in, size_t n) {
  vf_buf b;
  vf_error err;
  vf_buf_init(&b, 0);
  if (vf_json_string(&b, in, n, &err) != VF_OK) {
    vf_buf_free(&b);
    return NULL;
  }
  vf_buf_append(&b, "", 1, &err);
  return (char *)vf_buf_take(&b, NULL);
}

#define CHECK_JSON_STR(lit, want)                                                                  \
  do {                                                                                             \
    char *s_ = json_str(lit, sizeof(lit) - 1);                                                     \
    CHECK_EQ_STR(s_, want);                                                                        \
    free(s_);                                                                                      \
  } while (0)

VF_TEST(test_json_strings) {
  CHECK_JSON_STR("", "\"\"");
  CHECK_JSON_STR("plain", "\"plain\"");
  CHECK_JSON_STR("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
  CHECK_JSON_STR("\n\t\r\x01\x1f", "\"\\u000a\\u0009\\u000d\\u0001\\u001f\"");
  CHECK_JSON_STR("nul\0x", "\"nul\\u0000x\"");
  CHECK_JSON_STR("\x7f", "\"\x7f\"");
  /* valid multi-byte UTF-8 passes through: é € U+1F600 */
  CHECK_JSON_STR("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
                 "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
  /* invalid bytes become U+FFFD, one per maximal subpart */
  CHECK_JSON_STR("a\xff"
                 "b",
                 "\"a\xef\xbf\xbd"
                 "b\"");
  CHECK_JSON_STR("\xe2\x82", "\"\xef\xbf\xbd\""); /* truncated */
  CHECK_JSON_STR("\xe2\x82x", "\"\xef\xbf\xbdx\"");
  CHECK_JSON_STR("\xc0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\"");                 /* overlong */
  CHECK_JSON_STR("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* surrogate */
  CHECK_JSON_STR("\xf4\x90\x80\x80",
                 "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* > U+10FFFF */
  CHECK_JSON_STR("\x80", "\"\xef\xbf\xbd\"");
  /* the exact-size reserve: fits a tight ceiling exactly */
  vf_buf b;
  vf_error err;
  vf_buf_init(&b, 8);
  CHECK_OK(vf_json_string(&b, "ab\"c", 4, &err)); /* "ab\"c" = 7 bytes */
  CHECK_EQ_INT(b.len, 7);
  vf_buf_reset(&b);
  CHECK_STATUS(vf_json_string(&b, "\x01\x02", 2, &err), VF_ENOMEM); /* 14 bytes */
  vf_buf_free(&b);
}

VF_TEST(test_parse_size) {
  uint64_t v = 0;
  CHECK(vf_parse_size("0", &v) && v == 0);
  CHECK(vf_parse_size("1000000", &v) && v == 1000000);
  CHECK(vf_parse_size("10k", &v) && v == 10240);
  CHECK(vf_parse_size("10K", &v) && v == 10240);
  CHECK(vf_parse_size("512M", &v) && v == 512ull << 20);
  CHECK(vf_parse_size("512MB", &v) && v == 512ull << 20);
  CHECK(vf_parse_size("2G", &v) && v == 2ull << 30);
  CHECK(vf_parse_size("1.5GiB", &v) && v == 3ull << 29);
  CHECK(vf_parse_size("1.5gib", &v) && v == 3ull << 29);
  CHECK(vf_parse_size("3T", &v) && v == 3ull << 40);
  CHECK(vf_parse_size("2Gi", &v) && v == 2ull << 30);
  CHECK(vf_parse_size("10kB", &v) && v == 10240);
  CHECK(vf_parse_size("100B", &v) && v == 100);
  CHECK(vf_parse_size("0.5K", &v) && v == 512);
  CHECK(vf_parse_size("18446744073709551615", &v) && v == UINT64_MAX);
  const char *bad[] = {"",          "-1",  "+1",    "abc", "12x",
                       "1.5",       "1.",  ".5G",   "5 G", " 5G",
                       "5GG",       "5Gx", "5GiBB", "5iB", "18446744073709551616",
                       "16777216T", "1e9", "0x10",  "5G ", NULL};
  for (int i = 0; bad[i]; i++) {
    v = 12345;
    if (vf_parse_size(bad[i], &v)) vf_test_fail(__FILE__, __LINE__, "accepted \"%s\"", bad[i]);
    CHECK(v == 12345);
  }
  CHECK(!vf_parse_size(NULL, &v));
}

static char *volatile g_sink;

VF_TEST(test_memory_budget_and_rss) {
  CHECK_EQ_INT(vf_memory_budget(), 0);
  vf_set_memory_budget(1ull << 30);
  CHECK(vf_memory_budget() == 1ull << 30);
  vf_set_memory_budget(0);
  CHECK_EQ_INT(vf_memory_budget(), 0);
  uint64_t before = vf_peak_rss_bytes();
  CHECK(before > 0);
  size_t n = 64u << 20;
  char *p = malloc(n);
  CHECK(p != NULL);
  if (p) {
    memset(p, 1, n);
    g_sink = p; /* keep the compiler from eliding the allocation */
    CHECK(vf_peak_rss_bytes() >= before + n / 2);
    free(p);
  }
}

static int count_entries(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
  closedir(d);
  return n;
}

static char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  char *buf = malloc(4096);
  *len = fread(buf, 1, 4095, fp);
  buf[*len] = '\0';
  fclose(fp);
  return buf;
}

VF_TEST(test_atomic_files) {
  const char *dir = vf_test_tmpdir();
  char path[4200];
  snprintf(path, sizeof path, "%s/out.json", dir);
  vf_error err;
  vf_atomic_file *f = NULL;
  CHECK_OK(vf_atomic_open(path, &f, &err));
  CHECK_OK(vf_atomic_write(f, "hello ", 6, &err));
  CHECK_OK(vf_atomic_write(f, "world", 5, &err));
  CHECK_EQ_INT(vf_atomic_tell(f), 11);
  struct stat st;
  CHECK(stat(path, &st) != 0); /* not visible before commit */
  CHECK_EQ_INT(count_entries(dir, "out.json.tmp."), 1);
  CHECK_OK(vf_atomic_commit(f, &err));
  size_t len = 0;
  char *got = slurp(path, &len);
  CHECK_EQ_STR(got, "hello world");
  free(got);
  CHECK_EQ_INT(count_entries(dir, "out.json.tmp."), 0);
  /* abort leaves the old content and no temp file */
  CHECK_OK(vf_atomic_open(path, &f, &err));
  CHECK_OK(vf_atomic_write(f, "partial", 7, &err));
  vf_atomic_abort(f);
  got = slurp(path, &len);
  CHECK_EQ_STR(got, "hello world");
  free(got);
  CHECK_EQ_INT(count_entries(dir, "out.json.tmp."), 0);
  vf_atomic_abort(NULL);
  /* a missing directory is an error naming the path */
  char bad[4300];
  snprintf(bad, sizeof bad, "%s/no/such/dir/x", dir);
  CHECK_STATUS(vf_atomic_open(bad, &f, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, bad) != NULL);
  CHECK(f == NULL);
  /* commit failure (target is a non-empty directory) unlinks the temp file */
  char sub[4300];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  mkdir(sub, 0777);
  char inner[4400];
  snprintf(inner, sizeof inner, "%s/keep", sub);
  FILE *fp = fopen(inner, "w");
  if (fp) fclose(fp);
  CHECK_OK(vf_atomic_open(sub, &f, &err));
  CHECK_OK(vf_atomic_write(f, "x", 1, &err));
  CHECK_STATUS(vf_atomic_commit(f, &err), VF_EIO);
  CHECK_EQ_INT(count_entries(dir, "sub.tmp."), 0);
}

VF_TEST(test_cpu_available) {
  const char *old = getenv("SLURM_CPUS_PER_TASK");
  char *saved = old ? vf_strdup(old) : NULL;
  unsetenv("SLURM_CPUS_PER_TASK");
  int n = vf_cpu_available();
  CHECK(n >= 1);
  setenv("SLURM_CPUS_PER_TASK", "1", 1);
  CHECK_EQ_INT(vf_cpu_available(), 1);
  setenv("SLURM_CPUS_PER_TASK", "100000", 1); /* a larger value never raises the count */
  CHECK_EQ_INT(vf_cpu_available(), n);
  setenv("SLURM_CPUS_PER_TASK", "junk", 1); /* ignored */
  CHECK_EQ_INT(vf_cpu_available(), n);
  if (saved) {
    setenv("SLURM_CPUS_PER_TASK", saved, 1);
    free(saved);
  } else {
    unsetenv("SLURM_CPUS_PER_TASK");
  }
  vf_set_threads(3);
  CHECK_EQ_INT(vf_threads(), 3);
  /* the BLAS's own count under vf_set_threads(): tests/util/test_blas.c */
  vf_set_threads(0);
  CHECK_EQ_INT(vf_threads(), vf_cpu_available());
}

static int g_log_calls;
static char g_log_last[256];
static void log_fn(void *user, vf_log_level level, const char *msg) {
  (void)user;
  if (level == VF_LOG_WARN) g_log_calls++;
  snprintf(g_log_last, sizeof g_log_last, "%s", msg);
}
static uint64_t g_prog_rows;
static void prog_fn(void *user, const vf_progress *p) {
  *(int *)user += 1;
  g_prog_rows = p->rows_done;
}

VF_TEST(test_log_and_progress) {
  vf_log(VF_LOG_WARN, "dropped %d", 1); /* no handler: nothing happens */
  vf_set_log_handler(log_fn, NULL);
  vf_log(VF_LOG_WARN, "file %s row %d", "a.parquet", 7);
  CHECK_EQ_INT(g_log_calls, 1);
  CHECK_EQ_STR(g_log_last, "file a.parquet row 7");
  vf_set_log_handler(NULL, NULL);
  vf_log(VF_LOG_WARN, "dropped");
  CHECK_EQ_INT(g_log_calls, 1);
  int calls = 0;
  vf_set_progress_handler(prog_fn, &calls);
  vf_progress p = {.phase = "scan", .rows_done = 42};
  vf_progress_emit(&p);
  CHECK_EQ_INT(calls, 1);
  CHECK_EQ_INT(g_prog_rows, 42);
  vf_set_progress_handler(NULL, NULL);
  vf_progress_emit(&p);
  CHECK_EQ_INT(calls, 1);
  double t0 = vf_now();
  usleep(2000);
  CHECK(vf_now() - t0 >= 0.0015);
}

/* issue 14: temporaries carry host and pid; the sweep removes only a dead local writer's */
static bool exists(const char *dir, const char *name) {
  char p[4400];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  struct stat sb;
  return lstat(p, &sb) == 0;
}

static void touch_in(const char *dir, const char *name) {
  char p[4400];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  FILE *fp = fopen(p, "w");
  if (fp) fclose(fp);
}

VF_TEST(test_temp_names_and_sweep) {
  const char *dir = vf_test_tmpdir();
  char host[64];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "host");
  host[63] = 0;
  for (char *c = host; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
      *c = '_';
  char path[4300], want[4400];
  snprintf(path, sizeof path, "%s/out.ivf", dir);
  char *t = vf_temp_path(path, "spill");
  snprintf(want, sizeof want, "%s.spill.%s-%ld.", path, host, (long)getpid());
  CHECK(t && strncmp(t, want, strlen(want)) == 0);
  char *t2 = vf_temp_path(path, "spill");
  CHECK(t2 && strcmp(t, t2) != 0); /* a counter makes each name unique */
  free(t);
  free(t2);
  /* a dead pid: a child that has exited and been reaped */
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, NULL, 0);
  pid_t alive = getppid();
  char n[512];
  snprintf(n, sizeof n, "out.ivf.spill.%s-%ld.0", host, (long)dead);
  touch_in(dir, n);
  snprintf(n, sizeof n, "out.ivf.tmp.%s-%ld.4", host, (long)dead);
  touch_in(dir, n);
  snprintf(n, sizeof n, "other.ivf.spill.%s-%ld.0", host, (long)dead);
  touch_in(dir, n);
  snprintf(n, sizeof n, "out.ivf.spill.%s-%ld.0", host, (long)alive);
  touch_in(dir, n);
  snprintf(n, sizeof n, "out.ivf.spill.%s-%ld.0", host, (long)getpid());
  touch_in(dir, n);
  touch_in(dir, "out.ivf.spill.otherhost-1.0");
  touch_in(dir, "out.ivf.spill.12345.0");   /* the pre-issue-14 form: no host, kept */
  touch_in(dir, "out.ivf.backup.vm-1.0");   /* not a vforge tag, kept */
  snprintf(n, sizeof n, "%s/stage.tmp.%s-%ld.0", dir, host, (long)dead); /* a staging directory */
  CHECK(mkdir(n, 0777) == 0);
  char inner[4400];
  snprintf(inner, sizeof inner, "%s/batch_00000000.parquet", n);
  FILE *fp = fopen(inner, "w");
  if (fp) fclose(fp);
  uint64_t removed = 0;
  vf_error err;
  CHECK_OK(vf_temp_sweep(dir, "out.ivf", &removed, &err));
  CHECK_EQ_INT(removed, 2);
  snprintf(n, sizeof n, "out.ivf.spill.%s-%ld.0", host, (long)dead);
  CHECK(!exists(dir, n));
  snprintf(n, sizeof n, "other.ivf.spill.%s-%ld.0", host, (long)dead);
  CHECK(exists(dir, n)); /* another base */
  snprintf(n, sizeof n, "out.ivf.spill.%s-%ld.0", host, (long)alive);
  CHECK(exists(dir, n)); /* a live pid */
  snprintf(n, sizeof n, "out.ivf.spill.%s-%ld.0", host, (long)getpid());
  CHECK(exists(dir, n)); /* this process */
  CHECK(exists(dir, "out.ivf.spill.otherhost-1.0"));
  CHECK(exists(dir, "out.ivf.spill.12345.0"));
  CHECK(exists(dir, "out.ivf.backup.vm-1.0"));
  /* any base: the other base's temporary and the staging directory (with its file) go too */
  CHECK_OK(vf_temp_sweep(dir, NULL, &removed, &err));
  CHECK_EQ_INT(removed, 2);
  snprintf(n, sizeof n, "stage.tmp.%s-%ld.0", host, (long)dead);
  CHECK(!exists(dir, n));
  CHECK_OK(vf_temp_sweep("/nonexistent/dir", NULL, &removed, &err)); /* nothing to sweep */
  CHECK_EQ_INT(removed, 0);
  /* the atomic writer's temporaries use the same form */
  vf_atomic_file *f = NULL;
  CHECK_OK(vf_atomic_open(path, &f, &err));
  snprintf(n, sizeof n, "out.ivf.tmp.%s-%ld.", host, (long)getpid());
  CHECK_EQ_INT(count_entries(dir, n), 1);
  vf_atomic_abort(f);
  CHECK_EQ_INT(count_entries(dir, n), 0);
}

static int g_stage_calls;
static void stage_fn(void *user, const vf_progress *p) {
  (void)user;
  g_stage_calls++;
  g_prog_rows = p->rows_done;
}

VF_TEST(test_progress_stage_and_cancel) {
  vf_set_progress_handler(stage_fn, NULL);
  vf_stage s;
  vf_stage_begin(&s, "index build", "k-means", "iterations", 20);
  g_stage_calls = 0;
  vf_stage_update(&s, 0, "objective %d", 5); /* the first update is emitted */
  CHECK_EQ_INT(g_stage_calls, 1);
  CHECK_EQ_STR(s.p.detail, "objective 5");
  CHECK_EQ_STR(s.p.stage, "k-means");
  for (uint64_t i = 1; i < 19; i++) vf_stage_update(&s, i, NULL); /* throttled */
  CHECK(g_stage_calls < 5);
  vf_stage_update(&s, 20, NULL); /* the last one always */
  CHECK_EQ_INT(g_prog_rows, 20);
  vf_set_progress_handler(NULL, NULL);
  /* cancellation: one flag, the first signal is kept, the exit code is 128 + it */
  vf_error err;
  CHECK(!vf_cancelled());
  CHECK_OK(vf_check_cancel(&err));
  vf_cancel_request(SIGTERM);
  vf_cancel_request(SIGINT);
  CHECK(vf_cancelled());
  CHECK_EQ_INT(vf_cancel_signal(), SIGTERM);
  CHECK_STATUS(vf_check_cancel(&err), VF_ECANCELED);
  CHECK_EQ_INT(vf_status_exit_code(VF_ECANCELED), 143);
  vf_cancel_reset();
  vf_cancel_request(SIGINT);
  CHECK_EQ_INT(vf_status_exit_code(VF_ECANCELED), 130);
  vf_cancel_reset();
  CHECK(!vf_cancelled());
}

VF_TEST(test_url_redact) {
  char out[128];
  CHECK_EQ_STR(vf_url_redact("http://user:pw@host:6333/x", out, sizeof out), "http://****@host:6333/x");
  CHECK_EQ_STR(vf_url_redact("https://token@h/p?q=a@b", out, sizeof out), "https://****@h/p?q=a@b");
  CHECK_EQ_STR(vf_url_redact("http://a@b:p@ss@host", out, sizeof out), "http://****@host");
  CHECK_EQ_STR(vf_url_redact("http://host:6333/a@b", out, sizeof out), "http://host:6333/a@b");
  CHECK_EQ_STR(vf_url_redact("/data/a@b.parquet", out, sizeof out), "/data/a@b.parquet");
  CHECK_EQ_STR(vf_url_redact("s3://bucket/key", out, sizeof out), "s3://bucket/key");
  CHECK_EQ_STR(vf_url_redact(NULL, out, sizeof out), "");
  size_t a = 0, n = 0;
  CHECK(vf_url_userinfo("http://u:p@h", &a, &n));
  CHECK_EQ_INT(a, 7);
  CHECK_EQ_INT(n, 3);
  CHECK(!vf_url_userinfo("1http://u:p@h", &a, &n));
  CHECK(!vf_url_userinfo("http:/u:p@h", &a, &n));
  char small[8];
  CHECK_EQ_STR(vf_url_redact("http://u:p@host", small, sizeof small), "http://");
  char *d = vf_url_redact_dup("http://u:secret@h");
  CHECK(d != NULL);
  CHECK_EQ_STR(d, "http://****@h");
  free(d);
}

/* vf_strerror / VF_STRERROR: the text strerror gives, from a caller's buffer (strerror itself is
 * on the ban list, scripts/check-banned.sh, because it is not thread-safe). */
VF_TEST(test_strerror) {
  int codes[] = {ENOENT, EACCES, ENOSPC, EINTR, 0, 99999};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    char want[256];
    snprintf(want, sizeof want, "%s", strerror(codes[i])); /* the reference; tests are unchecked */
    CHECK_EQ_STR(VF_STRERROR(codes[i]), want);
    char buf[VF_STRERROR_CAP];
    CHECK_EQ_STR(vf_strerror(codes[i], buf, sizeof buf), want);
  }
  vf_error err;
  vf_error_clear(&err);
  errno = ENOENT;
  vf_error_set(&err, VF_EIO, "%s: %s", "/x", VF_STRERROR(errno));
  CHECK_EQ_STR(err.msg, "/x: No such file or directory");
}

/* A buffer made with VF_BUF_INIT names its limit when it would grow past it (issue 15: every
 * growable buffer has a named maximum, curl's dynbuf `toobig`); plain vf_buf_init keeps its
 * message. */
VF_TEST(test_buf_named_limit) {
  vf_error err;
  vf_error_clear(&err);
  vf_buf b;
#define TEST_BUF_MAX_SMALL ((size_t)16)
  VF_BUF_INIT(&b, TEST_BUF_MAX_SMALL);
  CHECK_OK(vf_buf_append(&b, "0123456789abcdef", 16, &err));
  CHECK_STATUS(vf_buf_append(&b, "x", 1, &err), VF_ENOMEM);
  CHECK_EQ_STR(err.msg, "too big: more than the TEST_BUF_MAX_SMALL limit of 16 bytes (have 16, need 1 more)");
  vf_buf_free(&b);
  vf_buf_init(&b, 8);
  CHECK_STATUS(vf_buf_append(&b, "0123456789", 10, &err), VF_ENOMEM);
  CHECK_EQ_STR(err.msg, "buffer would grow to more than its limit of 8 bytes (have 0, need 10 more)");
  vf_buf_free(&b);
  VF_BUF_INIT(&b, VF_BUF_MAX_HTTP_BODY);
  CHECK_EQ_INT(b.max, (size_t)1 << 30);
  CHECK_EQ_STR(b.limit, "VF_BUF_MAX_HTTP_BODY");
  vf_buf_free(&b);
#undef TEST_BUF_MAX_SMALL
}

/* The named ceilings of util.h (issue 15 item 5: no growable buffer keeps the 1 TiB default):
 * each holds its documented size and a buffer made with it refuses to grow past it, naming it;
 * VF_BUF_MAX_TEXT is filled to the byte for real. */
VF_TEST(test_buf_named_ceilings) {
  CHECK_BUF_CEILING(VF_BUF_MAX_HTTP_BODY, (size_t)1 << 30);
  CHECK_BUF_CEILING(VF_BUF_MAX_URL, (size_t)1 << 20);
  CHECK_BUF_CEILING(VF_BUF_MAX_JSON_DOC, (size_t)256 << 20);
  CHECK_BUF_CEILING(VF_BUF_MAX_TEXT, (size_t)1 << 20);
  CHECK_BUF_CEILING(VF_BUF_MAX_RECORD, (size_t)2 << 30);
  CHECK_BUF_CEILING(VF_BUF_MAX_BATCH, (size_t)16 << 30);
  CHECK_BUF_CEILING(VF_BUF_MAX_ROWS_HELD, (size_t)1 << 40);
  vf_error err;
  vf_error_clear(&err);
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_TEXT);
  static char chunk[4096];
  memset(chunk, 'x', sizeof chunk);
  for (size_t i = 0; i < VF_BUF_MAX_TEXT / sizeof chunk; i++)
    CHECK_OK(vf_buf_append(&b, chunk, sizeof chunk, &err));
  CHECK_EQ_INT(b.len, VF_BUF_MAX_TEXT);
  CHECK_STATUS(vf_buf_printf(&b, &err, "%d", 7), VF_ENOMEM);
  CHECK_EQ_STR(err.msg, "too big: more than the VF_BUF_MAX_TEXT limit of 1048576 bytes "
                        "(have 1048576, need 1 more)");
  CHECK_EQ_INT(b.len, VF_BUF_MAX_TEXT);
  vf_buf_free(&b);
}
