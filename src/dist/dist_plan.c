/*
 * dist_plan.c — run ids, the run manifest (written atomically after every change, read back by
 * --status / --finalize), run-directory paths and done markers.
 *
 * The manifest is read with util's JSON reader (vf_json_parse, src/util/json_read.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static const char *const STATE_NAMES[] = {"pending", "submitted", "running", "done", "failed"};

const char *dist_state_name(dist_state s) {
  return (unsigned)s < 5 ? STATE_NAMES[s] : "unknown";
}

static bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

vf_status dist_run_id(const char *name, char *out, size_t cap, vf_error *err) {
  size_t n = name ? strlen(name) : 0;
  if (n == 0 || n > 64 || name[0] == '.')
    return vf_error_set(err, VF_EUSAGE, "run name '%.80s' must be 1..64 characters of [A-Za-z0-9._-] "
                        "not starting with '.'", name ? name : "");
  for (size_t i = 0; i < n; i++)
    if (!name_char(name[i]))
      return vf_error_set(err, VF_EUSAGE, "run name '%.80s': character '%c' is not allowed (use "
                          "A-Z a-z 0-9 . _ -)", name, name[i] >= 32 && name[i] < 127 ? name[i] : '?');
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char ts[32];
  strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
  uint32_t rnd = 0;
  FILE *f = fopen("/dev/urandom", "rb");
  if (!f || fread(&rnd, sizeof rnd, 1, f) != 1) {
    /* no urandom: time and pid still make a collision unlikely; mkdir refuses an existing one */
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    rnd = (uint32_t)t.tv_nsec ^ ((uint32_t)getpid() << 16);
  }
  if (f) fclose(f);
  if (snprintf(out, cap, "%s-%s-%08x", name, ts, rnd) >= (int)cap)
    return vf_error_set(err, VF_EINTERNAL, "run id buffer too small");
  return VF_OK;
}

bool dist_idexpr_needs_global_row(const char *e) {
  for (size_t i = 0; e && e[i];) {
    char c = e[i];
    if (c == '\'' || c == '"') { /* quoted literal or column name: skip it */
      size_t j = i + 1;
      while (e[j] && e[j] != c) j++;
      i = e[j] ? j + 1 : j;
      continue;
    }
    if (name_char(c) && c != '.' && c != '-') {
      size_t j = i;
      while (e[j] && name_char(e[j]) && e[j] != '.' && e[j] != '-') j++;
      if (j - i == 3 && (e[i] | 32) == 'r' && (e[i + 1] | 32) == 'o' && (e[i + 2] | 32) == 'w')
        return true;
      i = j;
      continue;
    }
    i++;
  }
  return false;
}

vf_status dist_shell_quote(vf_buf *out, const char *s, vf_error *err) {
  bool plain = *s != 0;
  for (const char *p = s; *p && plain; p++)
    plain = name_char(*p) || *p == '/' || *p == '=' || *p == ',' || *p == ':' || *p == '%' ||
            *p == '+' || *p == '@';
  if (plain) return vf_buf_append(out, s, strlen(s), err);
  vf_status st = VF_OK;
  VF_TRY(vf_buf_append(out, "'", 1, err));
  for (const char *p = s; *p; p++)
    VF_TRY(*p == '\'' ? vf_buf_append(out, "'\\''", 4, err) : vf_buf_append(out, p, 1, err));
  VF_TRY(vf_buf_append(out, "'", 1, err));
out:
  return st;
}

void dist_options_default(dist_options *o) {
  memset(o, 0, sizeof *o);
  o->engine = -1;
}

/* ------------------------------------------------------------------ paths */

char *dm_path(const dist_manifest *m, const char *rel) {
  size_t n = strlen(m->run_dir) + strlen(rel) + 2;
  char *p = vf_malloc(n);
  if (p) snprintf(p, n, "%s/%s", m->run_dir, rel);
  return p;
}

char *dm_shard_path(const dist_manifest *m, const char *dir, int shard, const char *ext) {
  size_t n = strlen(m->run_dir) + strlen(dir) + strlen(ext) + 32;
  char *p = vf_malloc(n);
  if (p) snprintf(p, n, "%s/%s/%03d%s", m->run_dir, dir, shard, ext);
  return p;
}


char *dm_abs_path(const char *p) {
  if (p[0] == '/') return vf_strdup(p);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return NULL;
  const char *q = p;
  while (q[0] == '.' && q[1] == '/') q += 2;
  if (strcmp(q, ".") == 0) return vf_strdup(cwd);
  size_t n = strlen(cwd) + strlen(q) + 2;
  char *r = vf_malloc(n);
  if (r) snprintf(r, n, "%s/%s", cwd, q);
  return r;
}

char *dm_self_exe(void) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return NULL;
  buf[n] = 0;
  return vf_strdup(buf);
}

char *dm_default_runs_dir(void) {
  const char *home = getenv("HOME");
  if (!home || !home[0]) return NULL;
  size_t n = strlen(home) + 32;
  char *p = vf_malloc(n);
  if (p) snprintf(p, n, "%s/.vforge/runs", home);
  return p;
}

char *dm_resolve(const char *runs_dir, const char *run, vf_error *err, vf_status *st) {
  *st = VF_OK;
  if (!run || !run[0]) {
    *st = vf_error_set(err, VF_EUSAGE, "no run id given");
    return NULL;
  }
  if (strchr(run, '/')) {
    char *p = dm_abs_path(run);
    if (!p) *st = vf_error_set(err, VF_ENOMEM, "out of memory");
    return p;
  }
  if (strcmp(run, ".") == 0 || strcmp(run, "..") == 0) {
    *st = vf_error_set(err, VF_EUSAGE, "'%s' is not a run id", run);
    return NULL;
  }
  char *def = runs_dir ? NULL : dm_default_runs_dir();
  const char *base = runs_dir ? runs_dir : def;
  if (!base) {
    *st = vf_error_set(err, VF_EUSAGE, "HOME is not set: pass --runs-dir DIR");
    return NULL;
  }
  size_t n = strlen(base) + strlen(run) + 2;
  char *p = vf_malloc(n);
  if (p) snprintf(p, n, "%s/%s", base, run);
  free(def);
  char *a = p ? dm_abs_path(p) : NULL;
  free(p);
  if (!a) *st = vf_error_set(err, VF_ENOMEM, "out of memory");
  return a;
}

/* ---------------------------------------------------------------- manifest */

void dm_free(dist_manifest *m) {
  if (!m) return;
  free(m->run_id);
  free(m->run_dir);
  free(m->created);
  free(m->state);
  for (size_t i = 0; i < m->nfiles; i++) {
    free(m->files[i].uri);
    free(m->files[i].key);
  }
  free(m->files);
  for (int s = 0; m->shards && s < m->num_shards; s++) {
    for (size_t j = 0; j < m->shards[s].njob_ids; j++) free(m->shards[s].job_ids[j]);
    free(m->shards[s].job_ids);
    free(m->shards[s].job);
  }
  free(m->shards);
  free(m->submit_command);
  free(m->res_partition);
  free(m->res_time);
  free(m->collection);
  free(m->store);
  free(m->bf_uri);
  free(m->bf_queries);
  free(m->bf_metric);
  free(m->bf_column);
  free(m->bf_id_root);
  free(m->bf_output);
  memset(m, 0, sizeof *m);
}

vf_status dm_set_state(dist_manifest *m, const char *state, vf_error *err) {
  char *s = vf_strdup(state);
  if (!s) return vf_error_set(err, VF_ENOMEM, "out of memory");
  free(m->state);
  m->state = s;
  return dm_write(m, err);
}

vf_status dm_add_job(dm_shard *s, const char *job, vf_error *err) {
  char **n = vf_realloc(s->job_ids, (s->njob_ids + 1) * sizeof *n);
  if (!n) return vf_error_set(err, VF_ENOMEM, "out of memory");
  s->job_ids = n;
  char *a = vf_strdup(job), *b = vf_strdup(job);
  if (!a || !b) {
    free(a);
    free(b);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  s->job_ids[s->njob_ids++] = a;
  free(s->job);
  s->job = b;
  return VF_OK;
}

static vf_status kv_str(vf_buf *b, const char *key, const char *v, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(b, err, ",\"%s\":", key));
  VF_TRY(v ? vf_json_string(b, v, strlen(v), err) : vf_json_raw(b, "null", err));
out:
  return st;
}

vf_status dm_write(const dist_manifest *m, vf_error *err) {
  vf_buf b;
  VF_BUF_INIT(&b, DIST_MAX_MANIFEST);
  vf_status st = VF_OK;
  char *path = NULL;
  VF_TRY(vf_buf_printf(&b, err, "{\"version\":1,\"kind\":\"%s\",\"engine\":\"%s\"",
                       m->kind == DIST_KIND_LOAD ? "load" : "brute-force",
                       m->engine == DIST_ENGINE_SLURM ? "slurm" : "local"));
  VF_TRY(kv_str(&b, "run_id", m->run_id, err));
  VF_TRY(kv_str(&b, "run_dir", m->run_dir, err));
  VF_TRY(kv_str(&b, "created", m->created, err));
  VF_TRY(kv_str(&b, "state", m->state, err));
  VF_TRY(kv_str(&b, "submit_command", m->submit_command, err));
  VF_TRY(vf_buf_printf(&b, err, ",\"num_shards\":%d,\"max_attempts\":%d,\"expected_rows\":%" PRIu64
                       ",\"retries\":%" PRIu64, m->num_shards, m->max_attempts, m->expected_rows,
                       m->retries));
  VF_TRY(vf_buf_printf(&b, err, ",\"resources\":{\"cpus\":%" PRId64 ",\"memory_gb\":%" PRId64,
                       m->res_cpus, m->res_memory_gb));
  VF_TRY(kv_str(&b, "partition", m->res_partition, err));
  VF_TRY(kv_str(&b, "time", m->res_time, err));
  VF_TRY(vf_json_raw(&b, "}", err));
  if (m->kind == DIST_KIND_LOAD) {
    VF_TRY(kv_str(&b, "collection", m->collection, err));
    VF_TRY(kv_str(&b, "store", m->store, err));
    VF_TRY(vf_buf_printf(&b, err, ",\"stored\":%" PRIu64 ",\"verified\":%s,\"seconds\":", m->stored,
                         m->verified ? "true" : "false"));
    VF_TRY(vf_json_f64(&b, m->seconds, err));
  } else {
    VF_TRY(kv_str(&b, "uri", m->bf_uri, err));
    VF_TRY(kv_str(&b, "queries", m->bf_queries, err));
    VF_TRY(vf_buf_printf(&b, err, ",\"k\":%" PRIu32, m->bf_k));
    VF_TRY(kv_str(&b, "metric", m->bf_metric, err));
    VF_TRY(kv_str(&b, "column", m->bf_column, err));
    VF_TRY(kv_str(&b, "id_root", m->bf_id_root, err));
    VF_TRY(kv_str(&b, "output", m->bf_output, err));
    VF_TRY(vf_json_raw(&b, ",\"seconds\":", err));
    VF_TRY(vf_json_f64(&b, m->seconds, err));
  }
  VF_TRY(vf_json_raw(&b, ",\n\"files\":[", err));
  for (size_t i = 0; i < m->nfiles; i++) {
    VF_TRY(vf_json_raw(&b, i ? ",\n{\"uri\":" : "\n{\"uri\":", err));
    VF_TRY(vf_json_string(&b, m->files[i].uri, strlen(m->files[i].uri), err));
    VF_TRY(kv_str(&b, "key", m->files[i].key, err));
    VF_TRY(vf_buf_printf(&b, err, ",\"rows\":%" PRIu64 ",\"shard\":%d}", m->files[i].rows,
                         dist_shard_of(i, m->num_shards)));
  }
  VF_TRY(vf_json_raw(&b, "],\n\"shards\":[", err));
  for (int s = 0; s < m->num_shards; s++) {
    const dm_shard *h = &m->shards[s];
    VF_TRY(vf_buf_printf(&b, err, "%s{\"shard\":%d,\"state\":\"%s\",\"attempts\":%d,\"files\":%" PRIu64
                         ",\"rows\":%" PRIu64 ",\"points\":%" PRIu64 ",\"seconds\":",
                         s ? ",\n" : "\n", s, dist_state_name(h->state), h->attempts, h->files,
                         h->rows, h->points));
    VF_TRY(vf_json_f64(&b, h->seconds, err));
    VF_TRY(vf_json_raw(&b, ",\"job_ids\":[", err));
    for (size_t j = 0; j < h->njob_ids; j++) {
      if (j) VF_TRY(vf_json_raw(&b, ",", err));
      VF_TRY(vf_json_string(&b, h->job_ids[j], strlen(h->job_ids[j]), err));
    }
    VF_TRY(vf_json_raw(&b, "]}", err));
  }
  VF_TRY(vf_json_raw(&b, "]}\n", err));
  path = dm_path(m, "manifest.json");
  if (!path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(vf_atomic_write_file(path, b.data, b.len, err));
out:
  free(path);
  vf_buf_free(&b);
  return st;
}

static char *jstr(const vf_json_val *o, const char *key) {
  const vf_json_val *v = vf_json_get(o, key);
  return v && v->t == VF_JSON_STR ? vf_strdup(v->str) : NULL;
}

static uint64_t ju64(const vf_json_val *o, const char *key) {
  const vf_json_val *v = vf_json_get(o, key);
  return v && v->t == VF_JSON_NUM && v->num >= 0 ? (uint64_t)v->num : 0;
}

static double jf64(const vf_json_val *o, const char *key) {
  const vf_json_val *v = vf_json_get(o, key);
  return v && v->t == VF_JSON_NUM ? v->num : 0;
}

static vf_status read_file(const char *path, char **out, size_t *len, size_t max, vf_error *err) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "%s: cannot open: %s", path,
                        VF_STRERROR(errno));
  vf_buf b;
  vf_buf_init(&b, max);
  char chunk[65536];
  size_t n;
  vf_status st = VF_OK;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) VF_TRY(vf_buf_append(&b, chunk, n, err));
  if (ferror(f)) VF_FAIL(vf_error_set(err, VF_EIO, "%s: read error", path));
  VF_TRY(vf_buf_append(&b, "", 1, err));
  *len = b.len - 1;
  *out = (char *)vf_buf_take(&b, &n);
out:
  fclose(f);
  if (st != VF_OK) vf_buf_free(&b);
  return st;
}

vf_status dm_read(const char *run_dir, dist_manifest *m, vf_error *err) {
  memset(m, 0, sizeof *m);
  size_t n = strlen(run_dir) + 32;
  char *path = vf_malloc(n);
  if (!path) return vf_error_set(err, VF_ENOMEM, "out of memory");
  snprintf(path, n, "%s/manifest.json", run_dir);
  char *text = NULL, *kind = NULL, *engine = NULL;
  size_t len = 0;
  vf_json_val root = {0};
  vf_status st = read_file(path, &text, &len, DIST_MAX_MANIFEST, err);
  if (st == VF_ENOTFOUND)
    st = vf_error_set(err, VF_ENOTFOUND, "%s: no such run (no manifest.json)", run_dir);
  if (st != VF_OK) goto out;
  VF_TRY(vf_json_parse(text, len, path, &root, err));
  if (root.t != VF_JSON_OBJ) VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: not a JSON object", path));
  const vf_json_val *files = vf_json_get(&root, "files");
  const vf_json_val *shards = vf_json_get(&root, "shards");
  kind = jstr(&root, "kind");
  engine = jstr(&root, "engine");
  if (!files || files->t != VF_JSON_ARR || !shards || shards->t != VF_JSON_ARR || !kind || !engine ||
      shards->n == 0 || shards->n > DIST_MAX_SHARDS)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: not a vforge run manifest (kind, engine, files, shards)", path));
  m->kind = strcmp(kind, "load") == 0 ? DIST_KIND_LOAD : DIST_KIND_BRUTE_FORCE;
  m->engine = strcmp(engine, "slurm") == 0 ? DIST_ENGINE_SLURM : DIST_ENGINE_LOCAL;
  m->run_dir = vf_strdup(run_dir);
  m->run_id = jstr(&root, "run_id");
  m->created = jstr(&root, "created");
  m->state = jstr(&root, "state");
  m->submit_command = jstr(&root, "submit_command");
  m->num_shards = (int)shards->n;
  m->max_attempts = (int)ju64(&root, "max_attempts");
  m->expected_rows = ju64(&root, "expected_rows");
  m->retries = ju64(&root, "retries");
  m->collection = jstr(&root, "collection");
  m->store = jstr(&root, "store");
  m->stored = ju64(&root, "stored");
  const vf_json_val *ver = vf_json_get(&root, "verified");
  m->verified = ver && ver->t == VF_JSON_BOOL && ver->b;
  m->seconds = jf64(&root, "seconds");
  m->bf_uri = jstr(&root, "uri");
  m->bf_queries = jstr(&root, "queries");
  m->bf_k = (uint32_t)ju64(&root, "k");
  m->bf_metric = jstr(&root, "metric");
  m->bf_column = jstr(&root, "column");
  m->bf_id_root = jstr(&root, "id_root");
  m->bf_output = jstr(&root, "output");
  const vf_json_val *res = vf_json_get(&root, "resources");
  m->res_cpus = (int64_t)ju64(res, "cpus");
  m->res_memory_gb = (int64_t)ju64(res, "memory_gb");
  m->res_partition = jstr(res, "partition");
  m->res_time = jstr(res, "time");
  m->files = vf_calloc(files->n + 1, sizeof *m->files);
  m->shards = vf_calloc(shards->n, sizeof *m->shards);
  if (!m->run_dir || !m->run_id || !m->state || !m->files || !m->shards)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: incomplete manifest", path));
  for (size_t i = 0; i < files->n; i++) {
    m->files[i].uri = jstr(&files->items[i], "uri");
    m->files[i].key = jstr(&files->items[i], "key");
    m->files[i].rows = ju64(&files->items[i], "rows");
    m->nfiles++;
    if (!m->files[i].uri || !m->files[i].key)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: files[%zu] lacks uri or key", path, i));
  }
  for (int s = 0; s < m->num_shards; s++) {
    const vf_json_val *o = &shards->items[s];
    dm_shard *h = &m->shards[s];
    char *state = jstr(o, "state");
    h->state = DIST_PENDING;
    for (int k = 0; state && k < 5; k++)
      if (strcmp(state, STATE_NAMES[k]) == 0) h->state = (dist_state)k;
    free(state);
    h->attempts = (int)ju64(o, "attempts");
    h->files = ju64(o, "files");
    h->rows = ju64(o, "rows");
    h->points = ju64(o, "points");
    h->seconds = jf64(o, "seconds");
    const vf_json_val *jobs = vf_json_get(o, "job_ids");
    for (size_t j = 0; jobs && jobs->t == VF_JSON_ARR && j < jobs->n; j++)
      if (jobs->items[j].t == VF_JSON_STR) VF_TRY(dm_add_job(h, jobs->items[j].str, err));
  }
out:
  free(kind);
  free(engine);
  vf_json_free(&root);
  free(text);
  free(path);
  if (st != VF_OK) dm_free(m);
  return st;
}

bool dm_done_marker(dist_manifest *m, int shard) {
  char *p = dm_shard_path(m, "done", shard, ".json");
  if (!p) return false;
  char *text = NULL;
  size_t len = 0;
  vf_error e;
  vf_error_clear(&e);
  bool ok = read_file(p, &text, &len, (size_t)1 << 20, &e) == VF_OK;
  if (ok) {
    /* a load worker's summary: {points, files, bytes_read, seconds, ...}; brute force: empty */
    vf_json_val v = {0};
    if (len > 0 && vf_json_parse(text, len, p, &v, &e) == VF_OK && v.t == VF_JSON_OBJ) {
      m->shards[shard].points = ju64(&v, "points");
      m->shards[shard].seconds = jf64(&v, "seconds");
    }
    vf_json_free(&v);
  }
  free(text);
  free(p);
  return ok;
}

/* ------------------------------------------------------------------ report */

void dist_report_free(dist_report *r) {
  if (!r) return;
  free(r->run_id);
  free(r->run_dir);
  free(r->run_state);
  free(r->submit_command);
  for (int i = 0; r->shards && i < r->nshards; i++) free(r->shards[i].job_ids);
  free(r->shards);
  free(r->output);
  memset(r, 0, sizeof *r);
}

vf_status dm_to_report(const dist_manifest *m, dist_report *r, vf_error *err) {
  dist_report_free(r);
  r->run_id = vf_strdup(m->run_id ? m->run_id : "");
  r->run_dir = vf_strdup(m->run_dir ? m->run_dir : "");
  r->run_state = vf_strdup(m->state ? m->state : "");
  r->submit_command = m->submit_command ? vf_strdup(m->submit_command) : NULL;
  r->output = m->bf_output ? vf_strdup(m->bf_output) : NULL;
  r->kind = m->kind;
  r->engine = m->engine;
  r->nshards = m->num_shards;
  r->files = m->nfiles;
  r->expected_rows = m->expected_rows;
  r->stored = m->stored;
  r->verified = m->verified;
  r->retries = m->retries;
  r->seconds = m->seconds;
  r->points_per_s = m->seconds > 0 ? (double)m->expected_rows / m->seconds : 0;
  r->shards = vf_calloc((size_t)m->num_shards + 1, sizeof *r->shards);
  if (!r->run_id || !r->run_dir || !r->run_state || !r->shards)
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  vf_status st = VF_OK;
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_TEXT);
  for (int s = 0; s < m->num_shards; s++) {
    const dm_shard *h = &m->shards[s];
    dist_shard_info *o = &r->shards[s];
    o->state = h->state;
    o->attempts = h->attempts;
    o->files = h->files;
    o->rows = h->rows;
    o->points = h->points;
    o->seconds = h->seconds;
    VF_TRY(vf_buf_append(&b, "", 0, err));
    for (size_t j = 0; j < h->njob_ids; j++)
      VF_TRY(vf_buf_printf(&b, err, "%s%s", j ? "," : "", h->job_ids[j]));
    VF_TRY(vf_buf_append(&b, "", 1, err));
    size_t n;
    o->job_ids = (char *)vf_buf_take(&b, &n);
  }
out:
  vf_buf_free(&b);
  return st;
}

vf_status dist_report_json(const dist_report *r, vf_buf *out, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(vf_json_raw(out, "{\"run_id\":", err));
  VF_TRY(vf_json_string(out, r->run_id, strlen(r->run_id), err));
  VF_TRY(kv_str(out, "run_dir", r->run_dir, err));
  VF_TRY(vf_buf_printf(out, err, ",\"kind\":\"%s\",\"engine\":\"%s\"",
                       r->kind == DIST_KIND_LOAD ? "load" : "brute-force",
                       r->engine == DIST_ENGINE_SLURM ? "slurm" : "local"));
  VF_TRY(kv_str(out, "state", r->run_state, err));
  VF_TRY(vf_buf_printf(out, err, ",\"files\":%" PRIu64 ",\"expected_rows\":%" PRIu64 ",\"stored\":%" PRIu64
                       ",\"verified\":%s,\"retries\":%" PRIu64 ",\"seconds\":",
                       r->files, r->expected_rows, r->stored, r->verified ? "true" : "false", r->retries));
  VF_TRY(vf_json_f64(out, r->seconds, err));
  VF_TRY(vf_json_raw(out, ",\"points_per_s\":", err));
  VF_TRY(vf_json_f64(out, r->points_per_s, err));
  VF_TRY(kv_str(out, "output", r->output, err));
  VF_TRY(vf_json_raw(out, ",\"shards\":[", err));
  for (int s = 0; s < r->nshards; s++) {
    const dist_shard_info *h = &r->shards[s];
    VF_TRY(vf_buf_printf(out, err, "%s{\"shard\":%d,\"state\":\"%s\",\"attempts\":%d,\"files\":%" PRIu64
                         ",\"rows\":%" PRIu64 ",\"points\":%" PRIu64 ",\"seconds\":",
                         s ? "," : "", s, dist_state_name(h->state), h->attempts, h->files, h->rows, h->points));
    VF_TRY(vf_json_f64(out, h->seconds, err));
    VF_TRY(kv_str(out, "job_ids", h->job_ids ? h->job_ids : "", err));
    VF_TRY(vf_json_raw(out, "}", err));
  }
  VF_TRY(vf_json_raw(out, "]}", err));
out:
  return st;
}
