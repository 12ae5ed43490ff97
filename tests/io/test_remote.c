/* Remote sources (issue 7): header parsing (Content-Range, Link rel="next"), {i} part URLs, Hub
 * URL building, the tree-API JSON, and the HTTP client's new request fields against canned and
 * raw servers: Range + Content-Range/ETag/Link parsing, a 200 to a ranged GET (VF_EUNSUPPORTED,
 * aborted), bearer/SigV4 headers, sink_fd rewound after a partial 2xx body, redirects keeping
 * Range but not Authorization, the ranged io_source (HEAD size, short body, parallel ranges),
 * {i} expansion stopping at the first 404, and the process-wide counters. */
#include <dirent.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "http_canned.h"
#include "io/remote_internal.h"
#include "vf_test.h"
#include "vforge/io.h"

VF_TEST(content_range_parsing) {
  int64_t a, b, t;
  CHECK(io_http_parse_content_range("bytes 0-99/1000", 15, &a, &b, &t));
  CHECK(a == 0 && b == 99 && t == 1000);
  CHECK(io_http_parse_content_range("bytes 5-5/*", 11, &a, &b, &t));
  CHECK(a == 5 && b == 5 && t == -1);
  CHECK(io_http_parse_content_range("bytes */77", 10, &a, &b, &t));
  CHECK(a == -1 && b == -1 && t == 77);
  CHECK(io_http_parse_content_range("BYTES 1-2/3 \r\n", 14, &a, &b, &t));
  CHECK(!io_http_parse_content_range("bytes 9-3/100", 13, &a, &b, &t)); /* end < start */
  CHECK(!io_http_parse_content_range("bytes 0-100/100", 15, &a, &b, &t)); /* end >= total */
  CHECK(!io_http_parse_content_range("items 0-1/2", 11, &a, &b, &t));
  CHECK(!io_http_parse_content_range("bytes 0-1", 9, &a, &b, &t));
  CHECK(!io_http_parse_content_range("bytes -1-2/3", 12, &a, &b, &t));
  CHECK(!io_http_parse_content_range("bytes 0-99999999999999999999/1", 30, &a, &b, &t));
  CHECK(a == -1 && b == -1 && t == -1);
}

static char *link_next(const char *v) { return io_http_parse_link_next(v, strlen(v)); }

VF_TEST(link_header_next) {
  char *n = link_next("<https://h/api/x?cursor=abc&limit=2>; rel=\"next\"");
  CHECK_EQ_STR(n, "https://h/api/x?cursor=abc&limit=2");
  free(n);
  n = link_next("<https://h/p1>; rel=\"prev\", <https://h/p3>; rel=next");
  CHECK_EQ_STR(n, "https://h/p3");
  free(n);
  n = link_next("<https://h/a>; title=\"x, y\"; rel=\"first next\"");
  CHECK_EQ_STR(n, "https://h/a");
  free(n);
  CHECK(link_next("<https://h/p1>; rel=\"prev\"") == NULL);
  CHECK(link_next("https://h/p1; rel=next") == NULL);
  CHECK(link_next("<https://h/p1; rel=next") == NULL);
  CHECK(link_next("") == NULL);
  n = link_next("<https://h/a>; rel=\"nextish\", <https://h/b>; rel=\"next\"");
  CHECK_EQ_STR(n, "https://h/b");
  free(n);
}

VF_TEST(part_url_expansion) {
  char *u = io_http_part_url("https://h/d/part-{i}.parquet", 12);
  CHECK_EQ_STR(u, "https://h/d/part-12.parquet");
  free(u);
  u = io_http_part_url("https://h/d/part-{i:05}.parquet", 7);
  CHECK_EQ_STR(u, "https://h/d/part-00007.parquet");
  free(u);
  u = io_http_part_url("https://h/{i:3}/x", 4);
  CHECK_EQ_STR(u, "https://h/004/x");
  free(u);
  CHECK(io_http_part_url("https://h/d/part.parquet", 0) == NULL);
  CHECK(io_http_part_url("https://h/d/{i:0}.parquet", 0) == NULL);
  CHECK(io_http_part_url("https://h/d/{i:99}.parquet", 0) == NULL);
  CHECK(io_http_part_url("https://h/d/{j}.parquet", 0) == NULL);
}

VF_TEST(hf_url_building) {
  vf_error err;
  char *u = NULL;
  CHECK_OK(io_hf_url("https://hub", "datasets", "ns/repo", NULL, "a b/c.parquet", false, &u, &err));
  CHECK_EQ_STR(u, "https://hub/datasets/ns/repo/resolve/main/a%20b/c.parquet");
  free(u);
  CHECK_OK(io_hf_url("https://hub", "datasets", "ns/repo", "refs/convert/parquet", "d", true, &u,
                     &err));
  CHECK_EQ_STR(u, "https://hub/api/datasets/ns/repo/tree/refs%2Fconvert%2Fparquet/d?recursive=true");
  free(u);
  CHECK_OK(io_hf_url("https://hub", "datasets", "ns/repo", "refs%2Fpr%2F3", "a.parquet", false,
                     &u, &err));
  CHECK_EQ_STR(u, "https://hub/datasets/ns/repo/resolve/refs%2Fpr%2F3/a.parquet");
  free(u);
  CHECK_OK(io_hf_url("https://hub", "datasets", "ns/repo", NULL, "", true, &u, &err));
  CHECK_EQ_STR(u, "https://hub/api/datasets/ns/repo/tree/main?recursive=true");
  free(u);
  CHECK_OK(io_hf_url("https://hub", "buckets", "ns/b", NULL, "x/y.parquet", false, &u, &err));
  CHECK_EQ_STR(u, "https://hub/buckets/ns/b/resolve/x/y.parquet");
  free(u);
  CHECK_OK(io_hf_url("https://hub", "buckets", "ns/b", NULL, "x/y", true, &u, &err));
  CHECK_EQ_STR(u, "https://hub/api/buckets/ns/b/tree/x%2Fy?recursive=true");
  free(u);
}

static vf_status tree(const char *json, io_hf_tree *t, vf_error *err) {
  return io_hf_parse_tree(json, strlen(json), "test listing", t, err);
}

VF_TEST(hf_tree_json) {
  io_hf_tree t;
  vf_error err;
  CHECK_OK(tree("[{\"type\":\"directory\",\"oid\":\"x\",\"size\":0,\"path\":\"d\"},"
                "{\"type\":\"file\",\"size\":12,\"path\":\"d/a.parquet\",\"lfs\":{\"size\":12}},"
                "{\"type\":\"file\",\"size\":0,\"path\":\"R\\u00e9adme\"}]",
                &t, &err));
  CHECK_EQ_INT(t.n, 2);
  CHECK_EQ_STR(t.items[0].path, "d/a.parquet");
  CHECK_EQ_INT(t.items[0].size, 12);
  CHECK_EQ_STR(t.items[1].path, "R\xc3\xa9" "adme");
  io_hf_tree_free(&t);
  CHECK_OK(tree(" [] ", &t, &err));
  CHECK_EQ_INT(t.n, 0);
  static const char *bad[] = {
      "{}", "[1]", "[{\"path\":\"a\"}]", "[{\"type\":\"file\",\"path\":\"a\"}]",
      "[{\"type\":\"file\",\"path\":\"a\",\"size\":-1}]",
      "[{\"type\":\"file\",\"path\":\"a\",\"size\":1.5}]",
      "[{\"type\":\"file\",\"path\":\"a\",\"size\":\"1\"}]",
      "[{\"type\":\"file\",\"path\":\"../etc/passwd\",\"size\":1}]",
      "[{\"type\":\"file\",\"path\":\"/abs\",\"size\":1}]",
      "[{\"type\":\"file\",\"path\":\"a//b\",\"size\":1}]",
      "[{\"type\":\"file\",\"path\":\"a\\u0000b\",\"size\":1}]",
      "[{\"type\":\"file\",\"path\":\"\",\"size\":1}]",
      "[{\"type\":\"link\",\"path\":\"a\",\"size\":1}]",
      "[{\"type\":\"file\",\"path\":\"a\",\"size\":1},]", "[", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    vf_status st = tree(bad[i], &t, &err);
    if (st != VF_ECORRUPT) vf_test_fail(__FILE__, __LINE__, "accepted bad tree %s", bad[i]);
    else CHECK(strstr(err.msg, "test listing") != NULL);
  }
}

static io_http *client(const char *base, const io_http_opts *extra) {
  io_http_opts o = {0};
  if (extra) o = *extra;
  o.max_retries = 2;
  o.backoff_base_s = 0.01;
  o.backoff_max_s = 2;
  o.timeout_s = 5;
  o.connect_timeout_s = 2;
  io_http *c = NULL;
  vf_error err;
  return io_http_open(base, &o, &c, &err) == VF_OK ? c : NULL;
}

VF_TEST(absolute_url_range_and_response_headers) {
  static const canned_resp r[] = {
      {206, "Content-Range: bytes 0-4/10\r\nETag: \"abc\"\r\nLink: <http://x/next?c=2>; "
            "rel=\"next\"\r\n", "01234", 0},
      {200, NULL, "0123456789", 0}};
  canned_server s;
  CHECK(canned_start(&s, r, 2, vf_test_tmpdir()) == 0);
  io_http_opts o = {0};
  o.bearer_token = "hf_SECRETTOKEN";
  io_http *c = client(NULL, &o);
  CHECK(c != NULL);
  CHECK_EQ_STR(io_http_base_url(c), "");
  char url[128];
  snprintf(url, sizeof url, "%s/d/f.parquet?sig=1", s.url);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "GET";
  rq.url = url;
  rq.range = "0-4";
  io_remote_stats before, after;
  io_remote_get_stats(&before);
  CHECK_OK(io_http_request(c, &rq, &rs, &err));
  io_remote_get_stats(&after);
  CHECK_EQ_INT(after.requests - before.requests, 1);
  CHECK_EQ_INT(after.bytes_received - before.bytes_received, 5);
  CHECK_EQ_INT(rs.status, 206);
  CHECK(rs.range_start == 0 && rs.range_end == 4 && rs.range_total == 10);
  CHECK_EQ_INT(rs.content_length, 5);
  CHECK_EQ_STR(rs.etag, "\"abc\"");
  CHECK_EQ_STR(rs.link_next, "http://x/next?c=2");
  /* the same request answered 200: the server ignored Range */
  vf_status st = io_http_request(c, &rq, &rs, &err);
  CHECK_EQ_INT(st, VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "/d/f.parquet") != NULL && strstr(err.msg, "Range") != NULL);
  CHECK(strstr(err.msg, "sig=1") == NULL); /* query strings never in messages */
  CHECK(rs.link_next == NULL && rs.etag == NULL && rs.range_total == -1); /* reset per call */
  CHECK(rs.body.len == 0);
  size_t ll;
  char *log = canned_log(&s, &ll);
  CHECK(strstr(log, "REQ GET /d/f.parquet?sig=1") != NULL);
  CHECK(strstr(log, "Range: bytes=0-4") != NULL);
  CHECK(strstr(log, "Authorization: Bearer hf_SECRETTOKEN") != NULL);
  CHECK(strstr(log, "Accept-Encoding") == NULL); /* byte ranges stay identity-encoded */
  free(log);
  /* a client without base needs an absolute URL */
  io_http_req nop = {0};
  nop.method = "GET";
  nop.path = "/x";
  CHECK_STATUS(io_http_request(c, &nop, &rs, &err), VF_EUSAGE);
  io_http_resp_free(&rs);
  io_http_close(c);
  canned_stop(&s);
}

VF_TEST(sigv4_headers_and_head) {
  static const canned_resp r[] = {{200, "ETag: \"e\"\r\n", "", 0}, {403, NULL, "denied", 0}};
  canned_server s;
  CHECK(canned_start(&s, r, 2, vf_test_tmpdir()) == 0);
  io_http_opts o = {0};
  o.aws_sigv4 = "aws:amz:us-east-1:s3";
  o.aws_key_id = "AKIDTEST";
  o.aws_secret = "SECRETKEYVALUE";
  o.aws_session_token = "SESSIONTOKENVALUE";
  io_http *c = client(s.url, &o);
  CHECK(c != NULL);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "GET";
  rq.head = true;
  rq.path = "/bucket/key";
  CHECK_OK(io_http_request(c, &rq, &rs, &err));
  CHECK_EQ_STR(rs.etag, "\"e\"");
  rq.head = false;
  CHECK_STATUS(io_http_request(c, &rq, &rs, &err), VF_ENET);
  CHECK(strstr(err.msg, "403") != NULL && strstr(err.msg, "denied") != NULL);
  CHECK(strstr(err.msg, "SECRETKEYVALUE") == NULL && strstr(err.msg, "SESSIONTOKEN") == NULL);
  size_t ll;
  char *log = canned_log(&s, &ll);
  CHECK(strstr(log, "REQ HEAD /bucket/key") != NULL);
  CHECK(strstr(log, "Authorization: AWS4-HMAC-SHA256 Credential=AKIDTEST/") != NULL);
  CHECK(strstr(log, "x-amz-content-sha256: UNSIGNED-PAYLOAD") != NULL);
  CHECK(strstr(log, "x-amz-security-token: SESSIONTOKENVALUE") != NULL);
  CHECK(strstr(log, "SECRETKEYVALUE") == NULL);
  free(log);
  io_http_resp_free(&rs);
  io_http_close(c);
  canned_stop(&s);
}

/* ---- a raw server: the i-th connection gets resps[i] verbatim and is closed; a response
 * starting with '!' resets the connection without answering. */
typedef struct raw_server {
  pid_t pid;
  int port;
  char url[64];
  char log_path[512];
} raw_server;

static int raw_start(raw_server *s, const char *const *resps, size_t n) {
  memset(s, 0, sizeof *s);
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 16) != 0) return -1;
  socklen_t al = sizeof a;
  getsockname(ls, (struct sockaddr *)&a, &al);
  s->port = ntohs(a.sin_port);
  snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
  snprintf(s->log_path, sizeof s->log_path, "%s/raw-%d.log", vf_test_tmpdir(), s->port);
  unlink(s->log_path);
  fflush(NULL);
  s->pid = fork();
  if (s->pid < 0) return -1;
  if (s->pid == 0) {
    signal(SIGPIPE, SIG_IGN);
    int logfd = open(s->log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    for (size_t i = 0;; i++) {
      int cs = accept(ls, NULL, NULL);
      if (cs < 0) continue;
      char buf[8192];
      size_t have = 0;
      while (have < sizeof buf - 1) {
        ssize_t r = read(cs, buf + have, sizeof buf - 1 - have);
        if (r <= 0) break;
        have += (size_t)r;
        buf[have] = 0;
        if (strstr(buf, "\r\n\r\n")) break;
      }
      canned_write_all(logfd, buf, have);
      canned_write_all(logfd, "END\n", 4);
      const char *rsp = i < n ? resps[i] : "HTTP/1.1 500 X\r\nContent-Length: 0\r\n\r\n";
      if (rsp[0] == '!') {
        struct linger lg = {1, 0};
        setsockopt(cs, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
      } else {
        canned_write_all(cs, rsp, strlen(rsp));
      }
      close(cs);
    }
  }
  close(ls);
  return 0;
}

static void raw_stop(raw_server *s) {
  if (s->pid > 0) {
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
  }
}

VF_TEST(sink_fd_rewound_after_partial_body) {
  static const char *const r[] = {
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nJUNKJ", /* cut short */
      "!", /* reset */
      "HTTP/1.1 503 X\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy",
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123456789"};
  raw_server s;
  CHECK(raw_start(&s, r, 4) == 0);
  io_http_opts o = {0};
  o.max_retries = 4;
  o.backoff_base_s = 0.01;
  o.connect_timeout_s = 2;
  o.timeout_s = 5;
  io_http *c = NULL;
  CHECK_OK(io_http_open(s.url, &o, &c, NULL));
  char path[600];
  snprintf(path, sizeof path, "%s/sink-%d", vf_test_tmpdir(), s.port);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, "pre:", 4) == 4);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "GET";
  rq.path = "/obj";
  rq.sink_fd = fd;
  io_remote_stats before, after;
  io_remote_get_stats(&before);
  CHECK_OK(io_http_request(c, &rq, &rs, &err));
  io_remote_get_stats(&after);
  CHECK_EQ_INT(rs.attempts, 4);
  CHECK_EQ_INT(after.retries - before.retries, 3);
  CHECK_EQ_INT(after.requests - before.requests, 4);
  CHECK_EQ_INT(rs.body.len, 0); /* the 2xx body went to the fd */
  char got[64] = {0};
  CHECK(pread(fd, got, sizeof got - 1, 0) == 14);
  CHECK_EQ_STR(got, "pre:0123456789");
  close(fd);
  unlink(path);
  io_http_resp_free(&rs);
  io_http_close(c);
  raw_stop(&s);
}

VF_TEST(ranged_source_size_short_body_and_no_range) {
  static const char *const r[] = {
      /* source 1: HEAD, a good read, then a cut connection (retried) and a short body */
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
      "HTTP/1.1 206 P\r\nContent-Range: bytes 2-5/10\r\nContent-Length: 4\r\n\r\n2345",
      "HTTP/1.1 206 P\r\nContent-Range: bytes 6-9/10\r\nContent-Length: 4\r\n\r\n67", /* cut */
      "HTTP/1.1 206 P\r\nContent-Range: bytes 6-9/10\r\nContent-Length: 2\r\n\r\n67", /* short */
      /* a short body is re-requested (max_retries 2): short again, then whole */
      "HTTP/1.1 206 P\r\nContent-Range: bytes 6-9/10\r\nContent-Length: 3\r\n\r\n678",
      "HTTP/1.1 206 P\r\nContent-Range: bytes 6-9/10\r\nContent-Length: 4\r\n\r\n6789",
      /* the next read (not the cached tail) stays short three times: an error after the budget */
      "HTTP/1.1 206 P\r\nContent-Range: bytes 5-8/10\r\nContent-Length: 2\r\n\r\n56",
      "HTTP/1.1 206 P\r\nContent-Range: bytes 5-8/10\r\nContent-Length: 2\r\n\r\n56",
      "HTTP/1.1 206 P\r\nContent-Range: bytes 5-8/10\r\nContent-Length: 2\r\n\r\n56",
      /* source 2: HEAD refused, size from bytes=0-0; then a read answered 200 */
      "HTTP/1.1 405 N\r\nContent-Length: 0\r\n\r\n",
      "HTTP/1.1 206 P\r\nContent-Range: bytes 0-0/10\r\nContent-Length: 1\r\n\r\n0",
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789",
      /* source 3: 404 */
      "HTTP/1.1 404 N\r\nContent-Length: 0\r\n\r\n"};
  raw_server s;
  CHECK(raw_start(&s, r, sizeof r / sizeof r[0]) == 0);
  io_remote_opts ro = {1, NULL, 2};
  io_remote_set_opts(&ro);
  char url[128];
  snprintf(url, sizeof url, "%s/obj", s.url);
  io_http_opts ho = {0};
  ho.max_retries = 2;
  ho.backoff_base_s = 0.01;
  io_source *src = NULL;
  vf_error err;
  CHECK_OK(io_httpsrc_open(url, "http://example/obj", &ho, -1, &src, &err));
  CHECK_EQ_INT(src->size, 10);
  char buf[8] = {0};
  CHECK_OK(io_read_at(src, 2, buf, 4, &err));
  CHECK(memcmp(buf, "2345", 4) == 0);
  CHECK_OK(io_read_at(src, 6, buf, 4, &err));
  CHECK(memcmp(buf, "6789", 4) == 0);
  CHECK_STATUS(io_read_at(src, 5, buf, 4, &err), VF_EIO);
  CHECK(strstr(err.msg, "http://example/obj") != NULL && strstr(err.msg, "short body") != NULL);
  io_close(src);
  CHECK_OK(io_httpsrc_open(url, "u2", &ho, -1, &src, &err));
  CHECK_EQ_INT(src->size, 10);
  CHECK_STATUS(io_read_at(src, 3, buf, 2, &err), VF_EUNSUPPORTED);
  CHECK(strstr(err.msg, "/obj") != NULL);
  io_close(src);
  CHECK_STATUS(io_httpsrc_open(url, "u3", &ho, -1, &src, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "u3") != NULL);
  io_remote_set_opts(NULL);
  raw_stop(&s);
}

VF_TEST(parts_stop_at_first_404) {
  static const char *const r[] = {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n",
                                  "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
                                  "HTTP/1.1 404 N\r\nContent-Length: 0\r\n\r\n",
                                  "HTTP/1.1 404 N\r\nContent-Length: 0\r\n\r\n"};
  raw_server s;
  CHECK(raw_start(&s, r, 4) == 0);
  char tmpl[128];
  snprintf(tmpl, sizeof tmpl, "%s/d/part-{i:03}.parquet", s.url);
  io_http_opts ho = {0};
  ho.max_retries = 0;
  io_listing l;
  vf_error err;
  CHECK_OK(io_http_list_parts(tmpl, &ho, &l, &err));
  CHECK_EQ_INT(l.n, 2);
  if (l.n == 2) {
    CHECK(strstr(l.entries[0].uri, "/d/part-000.parquet") != NULL);
    CHECK(strstr(l.entries[1].uri, "/d/part-001.parquet") != NULL);
    CHECK_EQ_INT(l.entries[0].size, 4);
    CHECK_EQ_INT(l.entries[1].size, 2);
  }
  io_listing_free(&l);
  /* part 0 missing (the 4th answer) */
  snprintf(tmpl, sizeof tmpl, "%s/d/part-{i}.parquet", s.url);
  CHECK_STATUS(io_http_list_parts(tmpl, &ho, &l, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "part-0.parquet") != NULL);
  FILE *f = fopen(s.log_path, "rb");
  char log[4096] = {0};
  if (f) {
    CHECK(fread(log, 1, sizeof log - 1, f) > 0);
    fclose(f);
  }
  CHECK_EQ_INT(canned_count(log, "HEAD /d/part-"), 4);
  raw_stop(&s);
  CHECK_STATUS(io_list("https://h/d/x.parquet", &l, &err), VF_EUSAGE);
}

VF_TEST(redirect_keeps_range_drops_authorization) {
  /* the "CDN": a second server (another host:port) */
  static const canned_resp cdn[] = {
      {206, "Content-Range: bytes 1-3/5\r\n", "bcd", 0}};
  canned_server c2;
  CHECK(canned_start(&c2, cdn, 1, vf_test_tmpdir()) == 0);
  char loc[160];
  snprintf(loc, sizeof loc, "Location: http://localhost:%d/cdn/obj?X-Amz-Signature=s\r\n",
           c2.port);
  canned_resp hub[] = {{302, loc, "", 0}};
  canned_server c1;
  CHECK(canned_start(&c1, hub, 1, vf_test_tmpdir()) == 0);
  io_http_opts o = {0};
  o.bearer_token = "hf_TOKENVALUE";
  o.follow_redirects = true;
  io_http *c = client(NULL, &o);
  char url[128];
  snprintf(url, sizeof url, "%s/datasets/a/b/resolve/main/f", c1.url);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  vf_error err;
  io_http_req rq = {0};
  rq.method = "GET";
  rq.url = url;
  rq.range = "1-3";
  CHECK_OK(io_http_request(c, &rq, &rs, &err));
  CHECK_EQ_INT(rs.status, 206);
  CHECK(rs.body.len == 3 && memcmp(rs.body.data, "bcd", 3) == 0);
  CHECK(rs.range_start == 1 && rs.range_total == 5); /* the final response's headers */
  size_t ll;
  char *l1 = canned_log(&c1, &ll), *l2 = canned_log(&c2, &ll);
  CHECK(strstr(l1, "Authorization: Bearer hf_TOKENVALUE") != NULL);
  CHECK(strstr(l2, "REQ GET /cdn/obj?X-Amz-Signature=s") != NULL);
  CHECK(strstr(l2, "Range: bytes=1-3") != NULL);
  CHECK(strstr(l2, "Authorization") == NULL);
  free(l1);
  free(l2);
  io_http_resp_free(&rs);
  io_http_close(c);
  canned_stop(&c1);
  canned_stop(&c2);
}

VF_TEST(download_is_atomic_and_upload_copies_locally) {
  static const char *const r[] = {
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
      "HTTP/1.1 206 P\r\nContent-Range: bytes 0-9/10\r\nContent-Length: 10\r\n\r\n0123456789",
      "HTTP/1.1 404 N\r\nContent-Length: 0\r\n\r\n"};
  raw_server s;
  CHECK(raw_start(&s, r, 3) == 0);
  io_remote_opts ro = {0, NULL, 0};
  io_remote_set_opts(&ro);
  char url[128], dest[600], dest2[600];
  snprintf(url, sizeof url, "%s/d/obj.bin", s.url);
  snprintf(dest, sizeof dest, "%s/dl-%d.bin", vf_test_tmpdir(), s.port);
  snprintf(dest2, sizeof dest2, "%s/dl-%d-copy.bin", vf_test_tmpdir(), s.port);
  uint64_t n = 0;
  vf_error err;
  CHECK_OK(io_download(url, dest, &n, &err));
  CHECK_EQ_INT(n, 10);
  char got[16] = {0};
  FILE *f = fopen(dest, "rb");
  CHECK(f != NULL);
  if (f) {
    CHECK(fread(got, 1, sizeof got, f) == 10);
    fclose(f);
  }
  CHECK_EQ_STR(got, "0123456789");
  /* a failed download leaves neither dest nor its temporary file */
  unlink(dest);
  CHECK_STATUS(io_download(url, dest, &n, &err), VF_ENOTFOUND);
  CHECK(access(dest, F_OK) != 0);
  char part[700];
  snprintf(part, sizeof part, "dl-%d.bin.part.", s.port); /* "<dest>.part.<host>-<pid>.<n>" */
  DIR *dd = opendir(vf_test_tmpdir());
  CHECK(dd != NULL);
  for (struct dirent *de; dd && (de = readdir(dd)) != NULL;)
    CHECK(strncmp(de->d_name, part, strlen(part)) != 0);
  if (dd) closedir(dd);
  /* upload to a local path: an atomic copy; hf:// is read-only */
  f = fopen(dest, "wb");
  CHECK(f != NULL);
  if (f) {
    fputs("payload", f);
    fclose(f);
  }
  CHECK_OK(io_upload(dest, dest2, &err));
  f = fopen(dest2, "rb");
  memset(got, 0, sizeof got);
  if (f) {
    CHECK(fread(got, 1, sizeof got, f) == 7);
    fclose(f);
  }
  CHECK_EQ_STR(got, "payload");
  CHECK_STATUS(io_upload(dest, "hf://datasets/a/b/x.parquet", &err), VF_EUNSUPPORTED);
  CHECK_STATUS(io_upload(dest, "https://h/x.parquet", &err), VF_EUNSUPPORTED);
  io_listing l;
  CHECK_STATUS(io_list(dest, &l, &err), VF_EUSAGE);
  unlink(dest);
  unlink(dest2);
  io_remote_set_opts(NULL);
  raw_stop(&s);
}
