/*
 * state.c — the checkpoint file of one load worker (issue 3 "Checkpoints").
 *
 * Why JSON: a user who has to decide between `--resume` and removing the state can read it.
 * The file is written atomically (vf_atomic_*: temp + fsync + rename + directory fsync), so a
 * kill at any moment leaves either the previous checkpoint or the new one, never a torn file.
 * Reading accepts only the flat object this file writes (RFC 8259 syntax, a fixed set of keys);
 * the input is treated as untrusted: every access is bounds-checked, lengths are capped, and
 * any surprise is VF_ECORRUPT naming the file and byte offset.
 *
 *   {"version":1,"num_jobs":2,"job_rank":0,"offset":0,"limit":0,
 *    "id_expression":"vf_point_id(filename, file_row_number)","files_total":3,"done":false,
 *    "points":1200,"skipped_rows":0,"completed":["/abs/a.parquet"],
 *    "current":{"key":"/abs/c.parquet","row":200}}
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

void ld_state_free(ld_state *s) {
  if (!s) return;
  free(s->id_expression);
  for (size_t i = 0; i < s->ncompleted; i++) free(s->completed[i]);
  free(s->completed);
  free(s->current_key);
  memset(s, 0, sizeof *s);
}


/* ------------------------------------------------------------------ writing */

vf_status ld_state_write(const char *path, const ld_state *s, vf_error *err) {
  vf_buf b;
  vf_buf_init(&b, LD_STATE_MAX_BYTES);
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(&b, err, "{\"version\":%d,\"num_jobs\":%d,\"job_rank\":%d,\"offset\":%" PRIu64
                       ",\"limit\":%" PRIu64 ",\"id_expression\":",
                       LD_STATE_VERSION, s->num_jobs, s->job_rank, s->offset, s->limit));
  const char *e = s->id_expression ? s->id_expression : "";
  VF_TRY(vf_json_string(&b, e, strlen(e), err));
  VF_TRY(vf_buf_printf(&b, err,
                       ",\"files_total\":%" PRIu64 ",\"done\":%s,\"points\":%" PRIu64
                       ",\"skipped_rows\":%" PRIu64 ",\"completed\":[",
                       s->files_total, s->done ? "true" : "false", s->points, s->skipped_rows));
  for (size_t i = 0; i < s->ncompleted; i++) {
    if (i) VF_TRY(vf_json_raw(&b, ",", err));
    VF_TRY(vf_json_string(&b, s->completed[i], strlen(s->completed[i]), err));
  }
  VF_TRY(vf_json_raw(&b, "],\"current\":", err));
  if (s->current_key) {
    VF_TRY(vf_json_raw(&b, "{\"key\":", err));
    VF_TRY(vf_json_string(&b, s->current_key, strlen(s->current_key), err));
    VF_TRY(vf_buf_printf(&b, err, ",\"row\":%" PRIu64 "}", s->current_row));
  } else {
    VF_TRY(vf_json_raw(&b, "null", err));
  }
  VF_TRY(vf_json_raw(&b, "}\n", err));
  VF_TRY(vf_atomic_write_file(path, b.data, b.len, err));
out:
  vf_buf_free(&b);
  if (st != VF_OK) vf_error_prefix(err, "writing load state %s: ", path);
  return st;
}

/* ------------------------------------------------------------------ reading */

typedef struct js {
  const char *path;
  const char *base, *p, *end;
  vf_error *err;
} js;

static vf_status js_fail(js *j, const char *what) {
  return vf_error_set(j->err, VF_ECORRUPT,
                      "%s: load state is malformed at byte %zu: %s (remove the file to start over)",
                      j->path, (size_t)(j->p - j->base), what);
}

static void js_ws(js *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')) j->p++;
}

static bool js_lit(js *j, const char *lit) {
  js_ws(j);
  size_t n = strlen(lit);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) return false;
  j->p += n;
  return true;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void put_utf8(vf_buf *b, uint32_t cp) {
  if (cp < 0x80) {
    vf_buf_putc(b, (char)cp);
  } else if (cp < 0x800) {
    vf_buf_putc(b, (char)(0xC0 | (cp >> 6)));
    vf_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    vf_buf_putc(b, (char)(0xE0 | (cp >> 12)));
    vf_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
    vf_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
  } else {
    vf_buf_putc(b, (char)(0xF0 | (cp >> 18)));
    vf_buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
    vf_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
    vf_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
  }
}

static vf_status js_hex4(js *j, uint32_t *out) {
  if (j->end - j->p < 4) return js_fail(j, "truncated \\u escape");
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    int h = hexval(j->p[i]);
    if (h < 0) return js_fail(j, "bad \\u escape");
    v = v << 4 | (uint32_t)h;
  }
  j->p += 4;
  *out = v;
  return VF_OK;
}

/* a JSON string into a NUL-terminated heap copy */
static vf_status js_string(js *j, char **out) {
  js_ws(j);
  if (j->p >= j->end || *j->p != '"') return js_fail(j, "expected a string");
  j->p++;
  vf_buf b;
  vf_buf_init(&b, LD_STATE_MAX_BYTES);
  vf_status st = VF_OK;
  for (;;) {
    if (j->p >= j->end) VF_FAIL(js_fail(j, "unterminated string"));
    VF_TRY(vf_buf_reserve(&b, 5, j->err));
    char c = *j->p++;
    if (c == '"') break;
    if ((unsigned char)c < 0x20) VF_FAIL(js_fail(j, "control character in a string"));
    if (c != '\\') {
      vf_buf_putc(&b, c);
      continue;
    }
    if (j->p >= j->end) VF_FAIL(js_fail(j, "truncated escape"));
    char e = *j->p++;
    switch (e) {
      case '"': case '\\': case '/': vf_buf_putc(&b, e); break;
      case 'b': vf_buf_putc(&b, '\b'); break;
      case 'f': vf_buf_putc(&b, '\f'); break;
      case 'n': vf_buf_putc(&b, '\n'); break;
      case 'r': vf_buf_putc(&b, '\r'); break;
      case 't': vf_buf_putc(&b, '\t'); break;
      case 'u': {
        uint32_t cp;
        VF_TRY(js_hex4(j, &cp));
        if (cp >= 0xD800 && cp < 0xDC00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
          j->p += 2;
          uint32_t lo;
          VF_TRY(js_hex4(j, &lo));
          if (lo < 0xDC00 || lo > 0xDFFF) VF_FAIL(js_fail(j, "bad surrogate pair"));
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xD800 && cp < 0xE000) {
          cp = 0xFFFD;
        }
        put_utf8(&b, cp);
        break;
      }
      default: VF_FAIL(js_fail(j, "bad escape"));
    }
  }
  VF_TRY(vf_buf_append(&b, "", 1, j->err));
  size_t len;
  *out = (char *)vf_buf_take(&b, &len);
  if (strlen(*out) + 1 != len) {
    free(*out);
    *out = NULL;
    VF_FAIL(js_fail(j, "NUL character in a string"));
  }
out:
  vf_buf_free(&b); /* empty once taken */
  return st;
}

static vf_status js_u64(js *j, uint64_t *out) {
  js_ws(j);
  if (j->p >= j->end || *j->p < '0' || *j->p > '9') return js_fail(j, "expected a non-negative integer");
  uint64_t v = 0;
  while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
    uint64_t d = (uint64_t)(*j->p - '0');
    if (v > (UINT64_MAX - d) / 10) return js_fail(j, "integer out of range");
    v = v * 10 + d;
    j->p++;
  }
  *out = v;
  return VF_OK;
}

static vf_status js_int(js *j, int lo, int hi, int *out) {
  uint64_t v;
  vf_status st = js_u64(j, &v);
  if (st != VF_OK) return st;
  if (v < (uint64_t)lo || v > (uint64_t)hi) return js_fail(j, "integer out of range");
  *out = (int)v;
  return VF_OK;
}

static vf_status js_bool(js *j, bool *out) {
  if (js_lit(j, "true")) *out = true;
  else if (js_lit(j, "false")) *out = false;
  else return js_fail(j, "expected true or false");
  return VF_OK;
}

static vf_status js_completed(js *j, ld_state *s) {
  if (!js_lit(j, "[")) return js_fail(j, "expected '['");
  size_t cap = 0;
  if (js_lit(j, "]")) return VF_OK;
  for (;;) {
    if (s->ncompleted == cap) {
      cap = cap ? cap * 2 : 16;
      char **nc = vf_realloc(s->completed, cap * sizeof *nc);
      if (!nc) return vf_error_set(j->err, VF_ENOMEM, "out of memory");
      s->completed = nc;
    }
    vf_status st = js_string(j, &s->completed[s->ncompleted]);
    if (st != VF_OK) return st;
    s->ncompleted++;
    if (js_lit(j, "]")) return VF_OK;
    if (!js_lit(j, ",")) return js_fail(j, "expected ',' or ']'");
  }
}

static vf_status js_current(js *j, ld_state *s) {
  if (js_lit(j, "null")) return VF_OK;
  if (!js_lit(j, "{")) return js_fail(j, "expected an object or null");
  bool have_key = false, have_row = false;
  vf_status st = VF_OK;
  char *k = NULL;
  for (;;) {
    VF_TRY(js_string(j, &k));
    if (!js_lit(j, ":")) VF_FAIL(js_fail(j, "expected ':'"));
    if (strcmp(k, "key") == 0 && !have_key) {
      VF_TRY(js_string(j, &s->current_key));
      have_key = true;
    } else if (strcmp(k, "row") == 0 && !have_row) {
      VF_TRY(js_u64(j, &s->current_row));
      have_row = true;
    } else {
      VF_FAIL(js_fail(j, "unknown or repeated key in \"current\""));
    }
    free(k);
    k = NULL;
    if (js_lit(j, "}")) break;
    if (!js_lit(j, ",")) VF_FAIL(js_fail(j, "expected ',' or '}'"));
  }
  if (!(have_key && have_row)) VF_FAIL(js_fail(j, "\"current\" needs key and row"));
out:
  free(k);
  return st;
}

static vf_status js_state(js *j, ld_state *s) {
  if (!js_lit(j, "{")) return js_fail(j, "expected '{'");
  unsigned seen = 0;
  static const char *const keys[] = {"version", "num_jobs", "job_rank", "offset", "limit",
                                     "id_expression", "files_total", "done", "points",
                                     "skipped_rows", "completed", "current"};
  const unsigned nkeys = (unsigned)(sizeof keys / sizeof keys[0]);
  vf_status st = VF_OK;
  for (;;) {
    char *k = NULL;
    if ((st = js_string(j, &k)) != VF_OK) return st;
    unsigned idx = nkeys;
    for (unsigned i = 0; i < nkeys; i++)
      if (strcmp(k, keys[i]) == 0) idx = i;
    free(k);
    if (idx == nkeys || (seen & (1u << idx))) return js_fail(j, "unknown or repeated key");
    seen |= 1u << idx;
    if (!js_lit(j, ":")) return js_fail(j, "expected ':'");
    int version = 0;
    switch (idx) {
      case 0:
        st = js_int(j, 1, 1000, &version);
        if (st != VF_OK) return st;
        if (version != LD_STATE_VERSION) return js_fail(j, "unknown state version");
        break;
      case 1: st = js_int(j, 1, 1000000, &s->num_jobs); break;
      case 2: st = js_int(j, 0, 999999, &s->job_rank); break;
      case 3: st = js_u64(j, &s->offset); break;
      case 4: st = js_u64(j, &s->limit); break;
      case 5: st = js_string(j, &s->id_expression); break;
      case 6: st = js_u64(j, &s->files_total); break;
      case 7: st = js_bool(j, &s->done); break;
      case 8: st = js_u64(j, &s->points); break;
      case 9: st = js_u64(j, &s->skipped_rows); break;
      case 10: st = js_completed(j, s); break;
      default: st = js_current(j, s); break;
    }
    if (st != VF_OK) return st;
    if (js_lit(j, "}")) break;
    if (!js_lit(j, ",")) return js_fail(j, "expected ',' or '}'");
  }
  js_ws(j);
  if (j->p != j->end) return js_fail(j, "trailing bytes after the object");
  if (seen != (1u << nkeys) - 1) return js_fail(j, "a key is missing");
  if (s->job_rank >= s->num_jobs) return js_fail(j, "job_rank >= num_jobs");
  return VF_OK;
}

vf_status ld_state_read(const char *path, ld_state *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return vf_error_set(err, e == ENOENT ? VF_ENOTFOUND : VF_EIO, "%s: %s", path, VF_STRERROR(e));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size > LD_STATE_MAX_BYTES) {
    close(fd);
    return vf_error_set(err, VF_ECORRUPT, "%s: load state is unreadable or larger than %zu bytes",
                        path, LD_STATE_MAX_BYTES);
  }
  size_t len = (size_t)sb.st_size;
  char *text = vf_malloc(len + 1);
  if (!text) {
    close(fd);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  size_t got = 0;
  while (got < len) {
    ssize_t r = read(fd, text + got, len - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (got != len) {
    free(text);
    return vf_error_set(err, VF_EIO, "%s: short read", path);
  }
  js j = {path, text, text, text + len, err};
  vf_status st = js_state(&j, out);
  free(text);
  if (st != VF_OK) ld_state_free(out);
  return st;
}
