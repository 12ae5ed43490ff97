/* The shared HTTP client (src/io/http.c) against a canned-response server (http_canned.h):
 * success with connection reuse and headers, 429 + Retry-After, 503 then 200, a stall past the
 * timeout, connection refused, a final 4xx with a body excerpt, retry logging without secrets. */
#include <stdlib.h>

#include "http_canned.h"
#include "vf_test.h"
#include "vforge/io.h"

static char g_logs[8192];
static int g_nlogs;

static void log_fn(void *user, vf_log_level level, const char *msg) {
  (void)user;
  (void)level;
  size_t have = strlen(g_logs);
  snprintf(g_logs + have, sizeof g_logs - have, "%s\n", msg);
  g_nlogs++;
}

static void logs_reset(void) {
  g_logs[0] = 0;
  g_nlogs = 0;
  vf_set_log_handler(log_fn, NULL);
}

static io_http *client(const canned_server *s, const char *key, int retries, double timeout) {
  io_http_opts o = {0};
  o.api_key = key;
  o.max_retries = retries;
  o.backoff_base_s = 0.01;
  o.backoff_max_s = 3;
  o.timeout_s = timeout;
  o.connect_timeout_s = 2;
  io_http *c = NULL;
  vf_error err;
  if (io_http_open(s->url, &o, &c, &err) != VF_OK) return NULL;
  return c;
}

VF_TEST(http_ok_reuses_connection_and_sends_headers) {
  static const canned_resp r[] = {{200, NULL, "{\"a\":1}", 0}, {201, NULL, "{\"b\":2}", 0}};
  canned_server s;
  CHECK(canned_start(&s, r, 2, vf_test_tmpdir()) == 0);
  io_http *c = client(&s, "s3cr3t-key", 2, 5);
  CHECK(c != NULL);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "PUT";
  rq.path = "/collections/x/points?wait=true";
  rq.body = "{\"points\":[]}";
  rq.body_len = 13;
  CHECK_OK(io_http_request(c, &rq, &rs, &err));
  CHECK_EQ_INT(rs.status, 200);
  CHECK_EQ_INT(rs.attempts, 1);
  CHECK(rs.body.len == 7 && memcmp(rs.body.data, "{\"a\":1}", 7) == 0);
  io_http_req g = {0};
  g.method = "GET";
  g.path = "/collections/x";
  CHECK_OK(io_http_request(c, &g, &rs, &err));
  CHECK_EQ_INT(rs.status, 201);
  io_http_stats stt;
  io_http_get_stats(c, &stt);
  CHECK_EQ_INT(stt.requests, 2);
  CHECK_EQ_INT(stt.retries, 0);
  CHECK_EQ_INT(stt.bytes_sent, 13);
  CHECK_EQ_INT(stt.bytes_received, 14);
  CHECK_EQ_INT(stt.connects, 1); /* keep-alive: the second request reused the connection */
  size_t ll;
  char *log = canned_log(&s, &ll);
  CHECK(strstr(log, "REQ PUT /collections/x/points?wait=true") != NULL);
  CHECK(strstr(log, "api-key: s3cr3t-key") != NULL);
  CHECK(strstr(log, "Content-Type: application/json") != NULL);
  CHECK(strstr(log, "{\"points\":[]}") != NULL);
  CHECK(strstr(log, "REQ GET /collections/x") != NULL);
  CHECK(strstr(log, "100-continue") == NULL);
  free(log);
  io_http_close(c);
  vf_buf_free(&rs.body);
  canned_stop(&s);
}

VF_TEST(http_429_honours_retry_after) {
  static const canned_resp r[] = {{429, "Retry-After: 1\r\n", "{\"status\":\"slow down\"}", 0},
                                  {200, NULL, "{}", 0}};
  canned_server s;
  CHECK(canned_start(&s, r, 2, vf_test_tmpdir()) == 0);
  logs_reset();
  io_http *c = client(&s, "s3cr3t-key", 3, 5);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "GET";
  rq.path = "/x?token=hidden";
  double t0 = vf_now();
  CHECK_OK(io_http_request(c, &rq, &rs, &err));
  double dt = vf_now() - t0;
  CHECK(dt >= 0.95); /* waited Retry-After, not the 10 ms backoff */
  CHECK_EQ_INT(rs.attempts, 2);
  CHECK_EQ_INT(g_nlogs, 1);
  CHECK(strstr(g_logs, "GET") && strstr(g_logs, "/x") && strstr(g_logs, "HTTP 429"));
  CHECK(strstr(g_logs, "attempt 1") != NULL);
  CHECK(strstr(g_logs, "1.00 s") != NULL);
  CHECK(strstr(g_logs, "hidden") == NULL);
  CHECK(strstr(g_logs, "s3cr3t") == NULL);
  vf_set_log_handler(NULL, NULL);
  io_http_close(c);
  vf_buf_free(&rs.body);
  canned_stop(&s);
}

VF_TEST(http_503_then_200) {
  static const canned_resp r[] = {{503, NULL, "busy", 0}, {502, NULL, "gw", 0},
                                  {200, NULL, "{\"ok\":true}", 0}};
  canned_server s;
  CHECK(canned_start(&s, r, 3, vf_test_tmpdir()) == 0);
  logs_reset();
  io_http *c = client(&s, NULL, 3, 5);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "POST";
  rq.path = "/c/points/count";
  rq.body = "{\"exact\":true}";
  rq.body_len = 14;
  CHECK_OK(io_http_request(c, &rq, &rs, &err));
  CHECK_EQ_INT(rs.status, 200);
  CHECK_EQ_INT(rs.attempts, 3);
  CHECK_EQ_INT(g_nlogs, 2);
  CHECK(strstr(g_logs, "HTTP 503") && strstr(g_logs, "HTTP 502"));
  io_http_stats stt;
  io_http_get_stats(c, &stt);
  CHECK_EQ_INT(stt.retries, 2);
  size_t ll;
  char *log = canned_log(&s, &ll);
  CHECK_EQ_INT(canned_count(log, "{\"exact\":true}"), 3); /* the body was resent each time */
  CHECK(strstr(log, "api-key") == NULL);
  free(log);
  vf_set_log_handler(NULL, NULL);
  io_http_close(c);
  vf_buf_free(&rs.body);
  canned_stop(&s);
}

VF_TEST(http_retries_exhausted_names_status_and_body) {
  static const canned_resp r[] = {{500, NULL, "{\"status\":{\"error\":\"boom one\"}}", 0},
                                  {500, NULL, "{\"status\":{\"error\":\"boom two\"}}", 0}};
  canned_server s;
  CHECK(canned_start(&s, r, 2, vf_test_tmpdir()) == 0);
  io_http *c = client(&s, "k3y", 1, 5);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "GET";
  rq.path = "/collections/c";
  CHECK_STATUS(io_http_request(c, &rq, &rs, &err), VF_ENET);
  CHECK(strstr(err.msg, "GET") && strstr(err.msg, s.url) && strstr(err.msg, "/collections/c"));
  CHECK(strstr(err.msg, "HTTP 500") && strstr(err.msg, "boom two"));
  CHECK(strstr(err.msg, "k3y") == NULL);
  CHECK_EQ_INT(rs.attempts, 2);
  io_http_close(c);
  vf_buf_free(&rs.body);
  canned_stop(&s);
}

VF_TEST(http_4xx_is_final_and_404_can_be_allowed) {
  static const canned_resp r[] = {{400, NULL, "{\"status\":{\"error\":\"bad vector\"}}", 0},
                                  {404, NULL, "{\"status\":{\"error\":\"Not found\"}}", 0},
                                  {404, NULL, "{}", 0}};
  canned_server s;
  CHECK(canned_start(&s, r, 3, vf_test_tmpdir()) == 0);
  io_http *c = client(&s, NULL, 3, 5);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "PUT";
  rq.path = "/p";
  rq.body = "{}";
  rq.body_len = 2;
  CHECK_STATUS(io_http_request(c, &rq, &rs, &err), VF_ENET);
  CHECK(strstr(err.msg, "HTTP 400") && strstr(err.msg, "bad vector") && strstr(err.msg, "PUT"));
  CHECK_EQ_INT(rs.attempts, 1);
  io_http_req g = {0};
  g.method = "GET";
  g.path = "/c";
  CHECK_STATUS(io_http_request(c, &g, &rs, &err), VF_ENET);
  CHECK(strstr(err.msg, "HTTP 404") != NULL);
  g.allow_404 = true;
  CHECK_OK(io_http_request(c, &g, &rs, &err));
  CHECK_EQ_INT(rs.status, 404);
  io_http_close(c);
  vf_buf_free(&rs.body);
  canned_stop(&s);
}

VF_TEST(http_stall_times_out_then_retries) {
  static const canned_resp r[] = {{200, NULL, "{\"late\":1}", 1.5}, {200, NULL, "{\"on\":2}", 0}};
  canned_server s;
  CHECK(canned_start(&s, r, 2, vf_test_tmpdir()) == 0);
  logs_reset();
  /* no retry: the stall is a timeout error */
  io_http *c = client(&s, NULL, 0, 0.3);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "GET";
  rq.path = "/slow";
  double t0 = vf_now();
  CHECK_STATUS(io_http_request(c, &rq, &rs, &err), VF_ENET);
  CHECK(vf_now() - t0 < 1.4);
  CHECK(strstr(err.msg, "GET") && strstr(err.msg, "/slow"));
  CHECK(strstr(err.msg, "imed out") != NULL || strstr(err.msg, "imeout") != NULL);
  io_http_close(c);
  /* with retries the next attempt gets the second answer (after the child's stall ends) */
  c = client(&s, NULL, 2, 3);
  CHECK_OK(io_http_request(c, &rq, &rs, &err));
  CHECK(rs.body.len == 8 && memcmp(rs.body.data, "{\"on\":2}", 8) == 0);
  vf_set_log_handler(NULL, NULL);
  io_http_close(c);
  vf_buf_free(&rs.body);
  canned_stop(&s);
}

VF_TEST(http_connection_refused_retries_then_fails) {
  /* a port nobody listens on: bind, read the port, close */
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0);
  socklen_t al = sizeof a;
  getsockname(ls, (struct sockaddr *)&a, &al);
  close(ls);
  canned_server fake = {0};
  snprintf(fake.url, sizeof fake.url, "http://127.0.0.1:%d", ntohs(a.sin_port));
  logs_reset();
  io_http *c = client(&fake, NULL, 2, 2);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "GET";
  rq.path = "/";
  CHECK_STATUS(io_http_request(c, &rq, &rs, &err), VF_ENET);
  CHECK_EQ_INT(rs.attempts, 3);
  CHECK_EQ_INT(g_nlogs, 2);
  CHECK(strstr(err.msg, fake.url) != NULL);
  CHECK(strstr(err.msg, "3 attempts") != NULL);
  vf_set_log_handler(NULL, NULL);
  io_http_close(c);
  vf_buf_free(&rs.body);
}

VF_TEST(http_rejects_other_schemes) {
  io_http *c = NULL;
  vf_error err;
  CHECK_STATUS(io_http_open("ftp://x", NULL, &c, &err), VF_EUSAGE);
  CHECK_STATUS(io_http_open("file:///etc/passwd", NULL, &c, &err), VF_EUSAGE);
  CHECK(c == NULL);
}

VF_TEST(http_tls_uses_ca_bundle_from_env) {
  /* an https:// URL against the plain-HTTP canned server: with VFORGE_CA_BUNDLE naming a file
   * that does not exist, the request fails on that bundle (so the variable is used and peer
   * verification is on); the error names the URL */
  static const canned_resp r[] = {{200, NULL, "{}", 0}};
  canned_server s;
  CHECK(canned_start(&s, r, 1, vf_test_tmpdir()) == 0);
  char url[96];
  snprintf(url, sizeof url, "https://127.0.0.1:%d", s.port);
  setenv("VFORGE_CA_BUNDLE", "/nonexistent/vforge-ca.pem", 1);
  io_http_opts o = {0};
  o.max_retries = 0;
  o.timeout_s = 3;
  io_http *c = NULL;
  vf_error err;
  CHECK_OK(io_http_open(url, &o, &c, &err));
  unsetenv("VFORGE_CA_BUNDLE");
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  io_http_req rq = {0};
  rq.method = "GET";
  rq.path = "/";
  CHECK_STATUS(io_http_request(c, &rq, &rs, &err), VF_ENET);
  CHECK(strstr(err.msg, url) != NULL);
  CHECK(strstr(err.msg, "vforge-ca.pem") != NULL);
  io_http_close(c);
  vf_buf_free(&rs.body);
  canned_stop(&s);
}
