/* A tiny canned-response HTTP/1.1 server for the HTTP client and Qdrant store tests
 * (header-only; included by tests/io/test_http.c and tests/store/test_qdrant.c).
 *
 * canned_start() forks a child listening on 127.0.0.1:<ephemeral>.  The child answers the
 * i-th request it receives (over any connection, keep-alive honoured) with resps[i] (after
 * resps[i].delay_s seconds); past the end it answers 500.  Every request is appended to a log
 * file: "REQ <method> <target>\n<header lines>\nBODY <n>\n<body>\nEND\n", so a test can check
 * what was sent.  canned_stop() kills the child. */
#ifndef VF_HTTP_CANNED_H
#define VF_HTTP_CANNED_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct canned_resp {
  int status;
  const char *headers; /* extra header lines, each ending in "\r\n", or NULL */
  const char *body;    /* NULL: empty */
  double delay_s;      /* sleep before answering */
} canned_resp;

typedef struct canned_server {
  pid_t pid;
  int port;
  char url[64];
  char log_path[512];
} canned_server;

static int canned_write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void canned_child(int ls, const canned_resp *resps, size_t n, const char *log_path) {
  signal(SIGPIPE, SIG_IGN);
  int logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  size_t idx = 0;
  size_t cap = (size_t)64 << 20;
  char *buf = malloc(cap + 1);
  if (!buf || logfd < 0) _exit(1);
  for (;;) {
    int cs = accept(ls, NULL, NULL);
    if (cs < 0) continue;
    size_t have = 0;
    for (;;) { /* requests on this connection */
      char *hend = NULL;
      while (!(hend = (have ? memmem(buf, have, "\r\n\r\n", 4) : NULL))) {
        if (have >= cap) goto close_conn;
        ssize_t r = read(cs, buf + have, cap - have);
        if (r <= 0) goto close_conn;
        have += (size_t)r;
      }
      size_t hlen = (size_t)(hend - buf) + 4;
      size_t clen = 0;
      for (char *line = buf; line < hend;) {
        char *eol = memmem(line, (size_t)(hend - line) + 2, "\r\n", 2);
        if (!eol) break;
        if ((size_t)(eol - line) > 15 && strncasecmp(line, "content-length:", 15) == 0)
          clen = (size_t)strtoull(line + 15, NULL, 10);
        line = eol + 2;
      }
      if (hlen + clen > cap) goto close_conn;
      while (have < hlen + clen) {
        ssize_t r = read(cs, buf + have, cap - have);
        if (r <= 0) goto close_conn;
        have += (size_t)r;
      }
      /* log: request line + headers, then the body */
      char *sp1 = memchr(buf, ' ', hlen);
      char *sp2 = sp1 ? memchr(sp1 + 1, ' ', hlen - (size_t)(sp1 + 1 - buf)) : NULL;
      char head[64];
      int hl = snprintf(head, sizeof head, "REQ ");
      canned_write_all(logfd, head, (size_t)hl);
      if (sp1 && sp2) {
        canned_write_all(logfd, buf, (size_t)(sp1 - buf));
        canned_write_all(logfd, " ", 1);
        canned_write_all(logfd, sp1 + 1, (size_t)(sp2 - sp1 - 1));
      }
      canned_write_all(logfd, "\n", 1);
      char *h1 = memmem(buf, hlen, "\r\n", 2);
      if (h1) canned_write_all(logfd, h1 + 2, (size_t)(hend - h1 - 2));
      hl = snprintf(head, sizeof head, "\nBODY %zu\n", clen);
      canned_write_all(logfd, head, (size_t)hl);
      canned_write_all(logfd, buf + hlen, clen);
      canned_write_all(logfd, "\nEND\n", 5);
      memmove(buf, buf + hlen + clen, have - hlen - clen);
      have -= hlen + clen;
      canned_resp rsp = {500, NULL, "{\"status\":{\"error\":\"no more canned responses\"}}", 0};
      if (idx < n) rsp = resps[idx];
      idx++;
      if (rsp.delay_s > 0) {
        struct timespec ts = {(time_t)rsp.delay_s,
                              (long)((rsp.delay_s - (double)(time_t)rsp.delay_s) * 1e9)};
        nanosleep(&ts, NULL);
      }
      const char *body = rsp.body ? rsp.body : "";
      size_t bl = strlen(body);
      char hdr[1024];
      int n2 = snprintf(hdr, sizeof hdr,
                        "HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: "
                        "%zu\r\n%s\r\n",
                        rsp.status, bl, rsp.headers ? rsp.headers : "");
      if (canned_write_all(cs, hdr, (size_t)n2) != 0 || canned_write_all(cs, body, bl) != 0)
        goto close_conn;
    }
  close_conn:
    close(cs);
  }
}

static int canned_start(canned_server *s, const canned_resp *resps, size_t n, const char *dir) {
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
  snprintf(s->log_path, sizeof s->log_path, "%s/canned-%d.log", dir, s->port);
  unlink(s->log_path);
  fflush(NULL);
  s->pid = fork();
  if (s->pid < 0) return -1;
  if (s->pid == 0) canned_child(ls, resps, n, s->log_path);
  close(ls);
  return 0;
}

static void canned_stop(canned_server *s) {
  if (s->pid > 0) {
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
  }
}

/* The request log so far (caller frees). */
static char *canned_log(const canned_server *s, size_t *len) {
  FILE *f = fopen(s->log_path, "rb");
  *len = 0;
  if (!f) return calloc(1, 1);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *p = malloc((size_t)n + 1);
  *len = fread(p, 1, (size_t)n, f);
  p[*len] = 0;
  fclose(f);
  return p;
}

/* Count occurrences of needle in the log. */
static int canned_count(const char *log, const char *needle) {
  int c = 0;
  for (const char *p = log; (p = strstr(p, needle)) != NULL; p += strlen(needle))
    c++;
  return c;
}

#endif
