/*
 * bundle.c — the filtered-search dataset bundles of qdrant/ann-filtering-benchmark-datasets, as
 * vector-db-benchmark (dataset_reader/ann_compound_reader.py, tar_compound_reader.py) and bfb
 * (src/dataset/readers/tar.rs) read them: a directory or a .tgz holding
 *
 *   vectors.npy      the points (row i is point i)
 *   payloads.jsonl   one JSON object per line, the payload of point i
 *   tests.jsonl      one query per line: {"query": [floats], "conditions": {filter},
 *                    "closest_ids": [point ids], "closest_scores": [scores]}
 *
 * (the archives hold "./vectors.npy" ...).  An archive is extracted once, next to itself, into
 * .<name>.extract/ (the three files only, by their base names, so nothing can be written outside
 * that directory), into a temporary directory renamed when complete; a later run reuses it while
 * the archive keeps its size and modification time.  A path may name a file inside an archive,
 * "x.tgz/vectors.npy", which is how a load config reads a bundle without unpacking it by hand.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "filter_internal.h"
#include "vforge/corpus.h"

#define BD_STAMP ".complete"
static const char *const BD_MEMBERS[] = {"vectors.npy", "payloads.jsonl", "tests.jsonl"};

static bool has_suffix(const char *s, size_t n, const char *suf) {
  size_t m = strlen(suf);
  return n >= m && strncasecmp(s + n - m, suf, m) == 0;
}

static bool is_archive_name(const char *s, size_t n) {
  return has_suffix(s, n, ".tgz") || has_suffix(s, n, ".tar.gz");
}

static bool is_file(const char *p, struct stat *sb) {
  struct stat tmp;
  if (!sb) sb = &tmp;
  return stat(p, sb) == 0 && S_ISREG(sb->st_mode);
}

static char *join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *o = vf_malloc(n);
  if (o) snprintf(o, n, "%s/%s", a, b);
  return o;
}

/* ---------------------------------------------------------------- tar.gz */

static uint64_t octal(const char *p, size_t n) {
  if (n && ((unsigned char)p[0] & 0x80)) { /* GNU base-256 */
    uint64_t v = (unsigned char)p[0] & 0x7f;
    for (size_t i = 1; i < n; i++) v = (v << 8) | (unsigned char)p[i];
    return v;
  }
  uint64_t v = 0;
  for (size_t i = 0; i < n && p[i]; i++) {
    if (p[i] == ' ') continue;
    if (p[i] < '0' || p[i] > '7') break;
    v = v * 8 + (uint64_t)(p[i] - '0');
  }
  return v;
}

static vf_status gz_read(gzFile gz, void *buf, size_t n, const char *path, vf_error *err) {
  uint8_t *b = buf;
  while (n) {
    unsigned chunk = n > (1u << 30) ? 1u << 30 : (unsigned)n;
    int got = gzread(gz, b, chunk);
    if (got <= 0) {
      int ze = 0;
      const char *m = gzerror(gz, &ze);
      return vf_error_set(err, VF_ECORRUPT, "%s: truncated or corrupt archive (%s)", path,
                          got == 0 ? "unexpected end" : m);
    }
    b += got;
    n -= (size_t)got;
  }
  return VF_OK;
}

/* the member's contents: to `out` (NULL: skipped), padded to 512 */
static vf_status copy_member(gzFile gz, uint64_t size, FILE *out, const char *path, vf_error *err) {
  static uint8_t buf[1 << 16];
  uint64_t left = (size + 511) / 512 * 512, data = size;
  while (left) {
    size_t n = left > sizeof buf ? sizeof buf : (size_t)left;
    vf_status st = gz_read(gz, buf, n, path, err);
    if (st != VF_OK) return st;
    size_t w = data < n ? (size_t)data : n;
    if (out && w && fwrite(buf, 1, w, out) != w)
      return vf_error_set(err, VF_EIO, "%s: cannot write the extracted file: %s", path, VF_STRERROR(errno));
    data -= w;
    left -= n;
  }
  return VF_OK;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static vf_status extract(const char *archive, const char *dir, vf_error *err) {
  gzFile gz = gzopen(archive, "rb");
  if (!gz) return vf_error_set(err, VF_ENOTFOUND, "%s: cannot open: %s", archive, VF_STRERROR(errno));
  vf_status st = VF_OK;
  char longname[4097] = "";
  bool have_long = false, got[3] = {false, false, false};
  uint8_t h[512];
  char *dst = NULL;
  for (;;) {
    VF_TRY(gz_read(gz, h, 512, archive, err));
    bool zero = true;
    for (int i = 0; i < 512 && zero; i++) zero = h[i] == 0;
    if (zero) break; /* end of archive */
    unsigned sum = 0;
    for (int i = 0; i < 512; i++) sum += (i >= 148 && i < 156) ? ' ' : h[i];
    if (sum != (unsigned)octal((const char *)h + 148, 8))
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: not a tar archive (bad header checksum)", archive));
    uint64_t size = octal((const char *)h + 124, 12);
    char type = (char)h[156];
    char name[4097];
    if (have_long) {
      snprintf(name, sizeof name, "%s", longname);
      have_long = false;
    } else if (memcmp(h + 257, "ustar", 5) == 0 && h[345]) {
      snprintf(name, sizeof name, "%.155s/%.100s", (const char *)h + 345, (const char *)h);
    } else {
      snprintf(name, sizeof name, "%.100s", (const char *)h);
    }
    if (type == 'L' || type == 'x') { /* GNU long name / pax header: the next member's name */
      if (size >= sizeof longname) {
        st = copy_member(gz, size, NULL, archive, err);
        continue;
      }
      uint64_t padded = (size + 511) / 512 * 512;
      uint8_t *blk = vf_malloc((size_t)padded + 1);
      if (!blk) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
      st = gz_read(gz, blk, (size_t)padded, archive, err);
      blk[size] = 0;
      if (st != VF_OK) {
        free(blk);
        goto out;
      }
      if (type == 'L') {
        snprintf(longname, sizeof longname, "%s", (const char *)blk);
        have_long = true;
      } else { /* records "len path=value\n" */
        const char *p = strstr((const char *)blk, " path=");
        if (p) {
          const char *e = strchr(p, '\n');
          snprintf(longname, sizeof longname, "%.*s", (int)(e ? e - p - 6 : (long)strlen(p + 6)), p + 6);
          have_long = true;
        }
      }
      free(blk);
      continue;
    }
    int want = -1;
    if (type == '0' || type == 0)
      for (int m = 0; m < 3; m++)
        if (!got[m] && strcmp(base_name(name), BD_MEMBERS[m]) == 0) want = m;
    FILE *out = NULL;
    if (want >= 0) {
      dst = join(dir, BD_MEMBERS[want]);
      out = dst ? fopen(dst, "wb") : NULL;
      if (!out)
        VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot create %s: %s", archive, dst ? dst : dir, VF_STRERROR(errno)));
    }
    st = copy_member(gz, size, out, archive, err);
    int closed = out ? fclose(out) : 0;
    if (st != VF_OK) goto out;
    if (closed != 0) VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot write %s", archive, dst));
    free(dst);
    dst = NULL;
    if (want >= 0) got[want] = true;
  }
  if (!got[0])
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: no vectors.npy in the archive (an ann-filtering-benchmark "
                         "bundle holds vectors.npy, payloads.jsonl and tests.jsonl)", archive));
out:
  free(dst);
  gzclose(gz);
  return st;
}

/* the directory an archive is extracted to (extracting it when needed) */
static vf_status archive_dir(const char *archive, char **out, vf_error *err) {
  *out = NULL;
  struct stat sb;
  if (!is_file(archive, &sb)) return vf_error_set(err, VF_ENOTFOUND, "%s: no such file", archive);
  const char *slash = strrchr(archive, '/');
  size_t dl = slash ? (size_t)(slash - archive) : 0;
  const char *name = slash ? slash + 1 : archive;
  size_t n = strlen(archive) + 32;
  char *dir = vf_malloc(n), *stamp = NULL;
  if (!dir) return vf_error_set(err, VF_ENOMEM, "out of memory");
  snprintf(dir, n, "%.*s%s.%s.extract", (int)dl, archive, slash ? "/" : "", name);
  char want[96];
  snprintf(want, sizeof want, "%lld %lld\n", (long long)sb.st_size, (long long)sb.st_mtim.tv_sec);
  stamp = join(dir, BD_STAMP);
  if (!stamp) {
    free(dir);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  char have[96] = "";
  FILE *fp = fopen(stamp, "r");
  if (fp) {
    if (!fgets(have, sizeof have, fp)) have[0] = 0;
    fclose(fp);
  }
  vf_status st = VF_OK;
  char *tmp = NULL;
  if (strcmp(have, want) != 0) {
    size_t tn = strlen(dir) + 48;
    tmp = vf_malloc(tn);
    if (!tmp) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    snprintf(tmp, tn, "%s.tmp.%ld", dir, (long)getpid());
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
      VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot create %s to extract into: %s", archive, tmp, VF_STRERROR(errno)));
    VF_TRY(extract(archive, tmp, err));
    char *ts = join(tmp, BD_STAMP);
    FILE *sf = ts ? fopen(ts, "w") : NULL;
    if (!sf || fputs(want, sf) < 0 || fclose(sf) != 0)
      st = vf_error_set(err, VF_EIO, "%s: cannot write %s", archive, ts ? ts : tmp);
    free(ts);
    if (st != VF_OK) goto out;
    /* replace an outdated extraction */
    for (int m = 0; m < 3; m++) {
      char *old = join(dir, BD_MEMBERS[m]);
      if (old) unlink(old);
      free(old);
    }
    unlink(stamp);
    rmdir(dir);
    if (rename(tmp, dir) != 0 && !(errno == ENOTEMPTY || errno == EEXIST))
      VF_FAIL(vf_error_set(err, VF_EIO, "%s: cannot rename %s to %s: %s", archive, tmp, dir, VF_STRERROR(errno)));
  }
  *out = dir;
out:
  if (tmp) { /* a failed (or lost-race) extraction leaves nothing behind */
    for (int m = 0; m < 3; m++) {
      char *f = join(tmp, BD_MEMBERS[m]);
      if (f) unlink(f);
      free(f);
    }
    char *ts2 = join(tmp, BD_STAMP);
    if (ts2) unlink(ts2);
    free(ts2);
    rmdir(tmp);
    free(tmp);
    if (st == VF_OK) vf_log(VF_LOG_INFO, "%s: extracted into %s", archive, dir);
  }
  free(stamp);
  if (st != VF_OK) free(dir);
  return st;
}

/* ---------------------------------------------------------------- API */

/* corpus_bundle_resolve(): see corpus.h. */
vf_status corpus_bundle_resolve(const char *path, char **out, vf_error *err) {
  *out = NULL;
  size_t n = strlen(path);
  for (size_t i = 0; i < n; i++) {
    if (path[i] != '/' || !is_archive_name(path, i)) continue;
    char *arch = vf_strndup(path, i);
    if (!arch) return vf_error_set(err, VF_ENOMEM, "out of memory");
    if (!is_file(arch, NULL)) {
      free(arch);
      continue;
    }
    char *dir = NULL;
    vf_status st = archive_dir(arch, &dir, err);
    free(arch);
    if (st != VF_OK) return st;
    *out = join(dir, path + i + 1);
    free(dir);
    return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  *out = vf_strdup(path);
  return *out ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
}

/* corpus_bundle_dir(): see corpus.h. */
vf_status corpus_bundle_dir(const char *path, char **dir, vf_error *err) {
  *dir = NULL;
  if (strstr(path, "://")) return VF_OK;
  size_t n = strlen(path);
  if (is_archive_name(path, n) && is_file(path, NULL)) return archive_dir(path, dir, err);
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) return VF_OK;
  char *v = join(path, "vectors.npy");
  bool ok = v && is_file(v, NULL);
  free(v);
  if (!ok) return VF_OK;
  *dir = vf_strdup(path);
  return *dir ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
}

void corpus_bundle_tests_free(corpus_bundle_tests *t) {
  for (size_t i = 0; t->conditions && i < t->n; i++) free(t->conditions[i]);
  free(t->conditions);
  free(t->queries);
  free(t->ids);
  free(t->scores);
  free(t->offsets);
  memset(t, 0, sizeof *t);
}

static vf_status grow(void **p, size_t *cap, size_t need, size_t elem, vf_error *err) {
  if (need <= *cap) return VF_OK;
  size_t nc = *cap ? *cap : 256;
  while (nc < need) nc *= 2;
  void *q = vf_realloc(*p, nc * elem);
  if (!q) return vf_error_set(err, VF_ENOMEM, "out of memory for %zu entries", need);
  *p = q;
  *cap = nc;
  return VF_OK;
}

/* corpus_bundle_tests_read(): see corpus.h. */
vf_status corpus_bundle_tests_read(const char *path, corpus_bundle_tests *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  FILE *fp = fopen(path, "rb");
  if (!fp) return vf_error_set(err, VF_ENOTFOUND, "%s: cannot open: %s", path, VF_STRERROR(errno));
  fj_tape t;
  fj_init(&t);
  vf_buf line, cond;
  vf_buf_init(&line, (size_t)1 << 31);
  VF_BUF_INIT(&cond, VF_BUF_MAX_RECORD);
  size_t qcap = 0, ccap = 0, hcap = 0, scap = 0, ocap = 0, nh = 0;
  vf_status st = VF_OK;
  char chunk[1 << 16];
  size_t lineno = 0;
  bool eof = false;
  while (!eof) {
    vf_buf_reset(&line);
    for (;;) { /* one line */
      if (!fgets(chunk, sizeof chunk, fp)) {
        eof = true;
        break;
      }
      size_t cl = strlen(chunk);
      VF_TRY(vf_buf_append(&line, chunk, cl, err));
      if (cl && chunk[cl - 1] == '\n') break;
    }
    lineno++;
    size_t ll = line.len;
    while (ll && (line.data[ll - 1] == '\n' || line.data[ll - 1] == '\r' || line.data[ll - 1] == ' ')) ll--;
    if (ll == 0) continue;
    char what[600];
    snprintf(what, sizeof what, "%s:%zu", path, lineno);
    fj_clear(&t);
    uint32_t root;
    VF_TRY(fj_parse(&t, (const char *)line.data, ll, true, what, &root, err));
    uint32_t q = fj_get(&t, root, "query", 5), c = fj_get(&t, root, "conditions", 10);
    uint32_t ids = fj_get(&t, root, "closest_ids", 11), sc = fj_get(&t, root, "closest_scores", 14);
    if (!q || t.nodes[q].t != FJ_ARR || !ids || t.nodes[ids].t != FJ_ARR) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: expected {\"query\": [...], \"conditions\": {...}, "
                           "\"closest_ids\": [...], \"closest_scores\": [...]}", what));
    }
    uint32_t dim = t.nodes[q].n;
    if (out->n == 0) out->dim = (int32_t)dim;
    if (dim == 0 || (int32_t)dim != out->dim) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: a query of %u values, %d in line 1", what, dim, out->dim));
    }
    size_t i = out->n;
    VF_TRY(grow((void **)&out->queries, &qcap, (i + 1) * dim, sizeof(float), err));
    VF_TRY(grow((void **)&out->conditions, &ccap, i + 1, sizeof(char *), err));
    VF_TRY(grow((void **)&out->offsets, &ocap, i + 2, sizeof(size_t), err));
    uint32_t e = q + 1;
    for (uint32_t k = 0; k < dim; k++, e = t.nodes[e].end) {
      if (t.nodes[e].t != FJ_NUM) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: query value %u is not a number", what, k));
      out->queries[i * dim + k] = (float)t.nodes[e].d;
    }
    out->conditions[i] = NULL;
    if (c && t.nodes[c].t == FJ_OBJ && t.nodes[c].n > 0) {
      vf_buf_reset(&cond);
      VF_TRY(fj_write(&t, c, &cond, err));
      if (!(out->conditions[i] = vf_strndup((const char *)cond.data, cond.len))) {
        VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
      }
    } else if (c && t.nodes[c].t != FJ_OBJ && t.nodes[c].t != FJ_NULL) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: conditions must be an object", what));
    }
    out->n = i + 1; /* conditions[i] is owned from here */
    uint32_t m = t.nodes[ids].n;
    bool have_sc = sc && t.nodes[sc].t == FJ_ARR && t.nodes[sc].n == m;
    if (sc && !have_sc) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: closest_scores must hold one score per closest id", what));
    }
    VF_TRY(grow((void **)&out->ids, &hcap, nh + m + 1, sizeof(uint64_t), err));
    VF_TRY(grow((void **)&out->scores, &scap, nh + m + 1, sizeof(float), err));
    uint32_t a = ids + 1, b = have_sc ? sc + 1 : 0;
    for (uint32_t k = 0; k < m; k++, a = t.nodes[a].end) {
      const fj_node *x = &t.nodes[a];
      if (x->t != FJ_NUM || !x->isint || x->i < 0) {
        VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: closest_ids[%u] is not a point number", what, k));
      }
      out->ids[nh + k] = (uint64_t)x->i;
      out->scores[nh + k] = 0;
      if (b) {
        out->scores[nh + k] = (float)t.nodes[b].d;
        b = t.nodes[b].end;
      }
    }
    out->offsets[i] = nh;
    nh += m;
    out->offsets[i + 1] = nh;
  }
  if (ferror(fp)) VF_FAIL(vf_error_set(err, VF_EIO, "%s: read error", path));
  if (out->n == 0) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: no queries", path));
out:
  fclose(fp);
  fj_free(&t);
  vf_buf_free(&line);
  vf_buf_free(&cond);
  if (st != VF_OK) corpus_bundle_tests_free(out);
  return st;
}
