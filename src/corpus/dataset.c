/*
 * Component datasets: parts, sizing, the parts index and the evicting cache (issue 8;
 * DESIGN.md "Configuration", `type: dataset`).
 *
 * Parts.  `parts: {count, start, path, link}` expands to count pairs (vectors part i, payload
 * part i) — a single `path` is one part — and the parts form one global row space: part i's
 * first row is the sum of the rows of the parts before it.  Row counts are measured, never
 * configured: each part's vectors file is sized from its header (npy header, fbin's 8 bytes,
 * the HDF5 dataset's shape) and its payload file from the parquet footer, with one ranged read
 * of a 64 KiB window (head or tail) per file when the file is remote, on up to 8 threads.  A
 * vectors part and its payload part of different lengths is an error naming both files and
 * both counts — never a zip to the shorter one.
 *
 * Parts index.  Measuring 410 remote parts costs 820 requests, so the counts are kept in
 * `<directory of the first vectors part>/.parts-index/<md5 of the spec>.json` (the spec: the
 * formats and every part's path and link).  When the index exists it is used as is; every
 * reader still measures the part it opens and a part whose real size differs from the index is
 * an error naming the index file to delete.
 *
 * Cache.  A part whose local file is missing is downloaded from its link (io_download: temp +
 * rename, so a half-downloaded file never looks complete).  With `cache: evict` a reader that
 * opens part i also starts the background download of part i+1, and a part's files are deleted
 * once no reader holds it — but only files this process downloaded itself (kept in memory, per
 * part): a file that was already there is never deleted.  The sequential load reader therefore
 * holds at most the part it reads and the next one.  At exit (ds_exit), a download still
 * running gets a short grace period and is then abandoned, its files removed; evict-mode
 * downloads still on disk are removed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dataset_internal.h"
#include "internal.h"
#include "vforge/format.h"
#include "vforge/pool.h"

#define DS_WINDOW ((size_t)64 << 10)
#define DS_SIZING_THREADS 8

/* ------------------------------------------------------------ registry */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* the registry below */
static struct corpus_dataset **g_sets;
static size_t g_nsets;
static _Atomic uint64_t g_peak; /* atomic: download threads record it without any lock */
static bool g_atexit;

#define DS_EXIT_GRACE_MS 250 /* how long an exiting process waits for a download to finish */

/* Remove what an abandoned download of part p may have left: its temporary files, and in evict
 * mode the files it completed (they were missing when it started, so they are ours).  The
 * temporary name goes first: a download that renames it afterwards fails instead. */
static void drop_abandoned(const struct corpus_dataset *d, const ds_part *p) {
  const char *paths[2] = {p->v_fetch ? p->vpath : NULL, p->p_fetch ? p->ppath : NULL};
  for (int k = 0; k < 2; k++) {
    if (!paths[k]) continue;
    char *tmp = io_download_temp_name(paths[k]);
    if (tmp) unlink(tmp);
    free(tmp);
    if (d->evict) unlink(paths[k]);
  }
}

/* At exit: a download still running gets DS_EXIT_GRACE_MS to finish; after that it is abandoned
 * (exit ends the thread) and what it wrote is removed.  Evict-mode downloads still on disk are
 * removed.  No lock is held while waiting that the download thread needs (it takes d->mu only
 * after its transfer, and g_peak is atomic), so an error exit during a slow download ends
 * within the grace period instead of hanging. */
static void ds_exit(void) {
  pthread_mutex_lock(&g_mu);
  struct corpus_dataset **sets = g_sets;
  size_t nsets = g_nsets;
  pthread_mutex_unlock(&g_mu);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_nsec += (long)DS_EXIT_GRACE_MS * 1000000L;
  deadline.tv_sec += deadline.tv_nsec / 1000000000L;
  deadline.tv_nsec %= 1000000000L;
  for (size_t s = 0; s < nsets; s++) {
    struct corpus_dataset *d = sets[s];
    atomic_store(&d->closing, true);
    pthread_mutex_lock(&d->mu);
    for (;;) {
      bool busy = false;
      for (size_t i = 0; i < d->nparts && !busy; i++)
        busy = d->parts[i].busy;
      if (!busy || pthread_cond_timedwait(&d->cv, &d->mu, &deadline) == ETIMEDOUT) break;
    }
    bool abandoned = false;
    for (size_t i = 0; i < d->nparts; i++) {
      ds_part *p = &d->parts[i];
      if (p->busy) {
        drop_abandoned(d, p);
        abandoned = true;
      }
      if (d->evict && p->v_ours) unlink(p->vpath);
      if (d->evict && p->p_ours && p->ppath) unlink(p->ppath);
      if (d->evict) p->v_ours = p->p_ours = false;
    }
    bool join = d->prefetch_running && !abandoned;
    d->prefetch_running = false;
    pthread_t t = d->prefetch;
    pthread_mutex_unlock(&d->mu);
    if (join) pthread_join(t, NULL); /* it finished its download: only its return is left */
  }
}

uint64_t corpus_dataset_cache_peak(void) { return atomic_load(&g_peak); }

uint64_t corpus_dataset_part_rows(const corpus_file *file) {
  if (!file->dataset || file->part >= file->dataset->nparts) return 0;
  return file->dataset->parts[file->part].rows;
}

/* corpus_dataset_part_source(): see corpus.h. */
corpus_plan_source corpus_dataset_part_source(const corpus_file *file) {
  switch (file->dataset ? file->dataset->vformat : VF_CFG_FORMAT_PARQUET) {
  case VF_CFG_FORMAT_NPY: return CORPUS_PLAN_NPY;
  case VF_CFG_FORMAT_FBIN: return CORPUS_PLAN_FBIN;
  case VF_CFG_FORMAT_HDF5: return CORPUS_PLAN_HDF5;
  default: return CORPUS_PLAN_PARQUET;
  }
}

static void note_peak(uint64_t bytes) {
  uint64_t cur = atomic_load(&g_peak);
  while (bytes > cur && !atomic_compare_exchange_weak(&g_peak, &cur, bytes)) {
  }
}

/* ------------------------------------------------------------ helpers */

static bool file_exists(const char *p) {
  struct stat sb;
  return p && stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static uint64_t file_size(const char *p) {
  struct stat sb;
  return p && stat(p, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}


static char *dir_of(const char *path) {
  const char *s = strrchr(path, '/');
  if (!s) return vf_strdup(".");
  if (s == path) return vf_strdup("/");
  return vf_strndup(path, (size_t)(s - path));
}

/* A 64 KiB window (the head or the tail) of a remote source fetched with one ranged read;
 * reads inside it are served from memory, the rest go to the inner source. */
typedef struct win_src {
  io_source base;
  io_source *inner;
  uint64_t off;
  size_t len;
  uint8_t *buf;
} win_src;

static vf_status win_read(io_source *src, uint64_t offset, void *dst, size_t n, vf_error *err) {
  win_src *w = (win_src *)src;
  if (offset >= w->off && offset - w->off <= w->len && n <= w->len - (offset - w->off)) {
    memcpy(dst, w->buf + (offset - w->off), n);
    return VF_OK;
  }
  return io_read_at(w->inner, offset, dst, n, err);
}

static void win_close(io_source *src) {
  win_src *w = (win_src *)src;
  io_close(w->inner);
  free(w->buf);
  free(w->base.name);
  free(w);
}

static const io_source_vtable WIN_VT = {win_read, win_close};

static vf_status open_window(const char *uri, bool tail, io_source **out, vf_error *err) {
  *out = NULL;
  io_source *in = NULL;
  vf_status st = io_open_uri(uri, &in, err);
  if (st != VF_OK) return st;
  win_src *w = vf_calloc(1, sizeof *w);
  size_t len = in->size < DS_WINDOW ? (size_t)in->size : DS_WINDOW;
  if (w) {
    w->buf = vf_malloc(len + 1);
    w->base.name = vf_strdup(in->name);
  }
  if (!w || !w->buf || !w->base.name) {
    if (w) {
      free(w->buf);
      free(w->base.name);
      free(w);
    }
    io_close(in);
    return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  w->base.vt = &WIN_VT;
  w->base.size = in->size;
  w->inner = in;
  w->off = tail ? in->size - len : 0;
  w->len = len;
  if (len && (st = io_read_at(in, w->off, w->buf, len, err)) != VF_OK) {
    win_close(&w->base);
    return st;
  }
  *out = &w->base;
  return VF_OK;
}

/* ------------------------------------------------------------ vector files */

vf_status ds_open_vectors(const struct corpus_dataset *d, const char *path, vec_file **out,
                          vf_error *err) {
  if (d->vformat == VF_CFG_FORMAT_HDF5) return hdf5_open(path, d->h5_dataset, out, err);
  io_source *src = NULL;
  vf_status st = io_open_local(path, &src, err);
  if (st != VF_OK) return st;
  if (d->vformat == VF_CFG_FORMAT_FBIN) return fbin_open(src, d->bin_dtype, out, err);
  return npy_open(src, out, err);
}

/* ------------------------------------------------------------ downloads */

/* Download what part i lacks (holding no lock; the caller marked it busy). */
static vf_status fetch_part(struct corpus_dataset *d, size_t i, bool *got_v, bool *got_p,
                            uint64_t *bytes, vf_error *err) {
  ds_part *p = &d->parts[i];
  *got_v = *got_p = false;
  *bytes = 0;
  struct {
    const char *path, *link;
    bool *got;
  } f[2] = {{p->vpath, p->vlink, got_v}, {p->ppath, p->plink, got_p}};
  for (int k = 0; k < 2; k++) {
    if (!f[k].path || file_exists(f[k].path)) continue;
    if (atomic_load(&d->closing))
      return vf_error_set(err, VF_ECANCELED, "%s: dataset part %zu: the process is exiting",
                          d->name, i);
    if (!f[k].link)
      return vf_error_set(err, VF_ENOTFOUND,
                          "%s: dataset part %zu: %s does not exist and the part has no 'link' "
                          "to download it from",
                          d->name, i, f[k].path);
    char *dir = dir_of(f[k].path);
    vf_status st = dir ? vf_mkdir_p(dir, 0777, err) : vf_error_set(err, VF_ENOMEM, "out of memory");
    free(dir);
    if (st != VF_OK) return st;
    uint64_t n = 0;
    if ((st = io_download(f[k].link, f[k].path, &n, err)) != VF_OK)
      return vf_error_prefix(err, "%s: dataset part %zu: ", d->name, i);
    *f[k].got = true;
    *bytes += file_size(f[k].path);
  }
  return VF_OK;
}

/* Record a finished download of part i (d->mu held). */
static void note_fetched(struct corpus_dataset *d, size_t i, bool got_v, bool got_p,
                         uint64_t bytes) {
  ds_part *p = &d->parts[i];
  p->v_ours |= got_v;
  p->p_ours |= got_p;
  p->bytes += bytes;
  d->cached_bytes += bytes;
  if (bytes)
    vf_log(VF_LOG_DEBUG, "dataset cache: part %zu downloaded (%" PRIu64 " bytes); %" PRIu64
           " bytes of downloaded parts on disk", i, bytes, d->cached_bytes);
  if (d->evict) note_peak(d->cached_bytes);
}

typedef struct prefetch_arg {
  struct corpus_dataset *d;
  size_t i;
} prefetch_arg;

/* The prefetch of the next part is a role thread, not a pool task: the reader may block on the
 * part it is downloading (ds_part_acquire waits while it is busy), and a pool task must never
 * wait for another (vforge/pool.h); it is network-bound besides. */
static void *prefetch_main(void *arg) {
  prefetch_arg a = *(prefetch_arg *)arg;
  free(arg);
  vf_error e;
  vf_error_clear(&e);
  bool gv, gp;
  uint64_t bytes;
  vf_status st = fetch_part(a.d, a.i, &gv, &gp, &bytes, &e);
  if (st != VF_OK) /* the reader retries synchronously and reports it */
    vf_log(VF_LOG_DEBUG, "dataset cache: prefetch of part %zu failed: %s", a.i, e.msg);
  pthread_mutex_lock(&a.d->mu);
  note_fetched(a.d, a.i, gv, gp, bytes);
  a.d->parts[a.i].busy = false;
  pthread_cond_broadcast(&a.d->cv);
  pthread_mutex_unlock(&a.d->mu);
  return NULL;
}

static bool part_missing(const ds_part *p) {
  return !file_exists(p->vpath) || (p->ppath && !file_exists(p->ppath));
}

/* corpus_dataset_part_row_groups(): see corpus.h. */
vf_status corpus_dataset_part_row_groups(const corpus_file *file, int *n, uint64_t **each,
                                         vf_error *err) {
  *n = -1;
  *each = NULL;
  const struct corpus_dataset *d = file->dataset;
  if (!d || file->part >= d->nparts) return vf_error_set(err, VF_EUSAGE, "%s: not a dataset part", file->uri);
  const ds_part *p = &d->parts[file->part];
  if (d->has_payload && d->pformat == VF_CFG_FORMAT_PARQUET) {
    if (!file_exists(p->ppath)) return VF_OK; /* known once the part is fetched */
    corpus_file pf = {.uri = p->ppath, .key = file->key};
    pqt_file *f = NULL;
    vf_status st = corpus_open_parquet(&pf, NULL, &f, err);
    if (st != VF_OK) return st;
    st = corpus_plan_written_row_groups(f, n, each, err);
    pqt_close(f);
    return st;
  }
  uint64_t units = (p->rows + DS_VIRTUAL_RG_ROWS - 1) / DS_VIRTUAL_RG_ROWS;
  if (units > INT32_MAX) return vf_error_set(err, VF_ECORRUPT, "%s: too many rows", file->uri);
  *each = vf_mallocarray(units + 1, sizeof **each);
  if (!*each) return vf_error_set(err, VF_ENOMEM, "out of memory");
  for (uint64_t u = 0; u < units; u++)
    (*each)[u] = u + 1 < units ? DS_VIRTUAL_RG_ROWS : p->rows - u * DS_VIRTUAL_RG_ROWS;
  *n = (int)units;
  return VF_OK;
}

/* A download of p starts (d->mu held): remember which files it creates. */
static void mark_busy(ds_part *p) {
  p->busy = true;
  p->v_fetch = !file_exists(p->vpath);
  p->p_fetch = p->ppath && !file_exists(p->ppath);
}

vf_status ds_part_acquire(struct corpus_dataset *d, size_t i, vf_error *err) {
  pthread_mutex_lock(&d->mu);
  ds_part *p = &d->parts[i];
  while (p->busy)
    pthread_cond_wait(&d->cv, &d->mu);
  vf_status st = VF_OK;
  if (part_missing(p)) {
    mark_busy(p);
    pthread_mutex_unlock(&d->mu);
    bool gv, gp;
    uint64_t bytes;
    st = fetch_part(d, i, &gv, &gp, &bytes, err);
    pthread_mutex_lock(&d->mu);
    note_fetched(d, i, gv, gp, bytes);
    p->busy = false;
    pthread_cond_broadcast(&d->cv);
  }
  if (st != VF_OK) { /* not acquired: no reference, no prefetch */
    pthread_mutex_unlock(&d->mu);
    return st;
  }
  p->refs++;
  bool start = d->evict && i + 1 < d->nparts && !d->parts[i + 1].busy &&
               part_missing(&d->parts[i + 1]);
  bool join = start && d->prefetch_running;
  pthread_t old = d->prefetch;
  if (start) mark_busy(&d->parts[i + 1]);
  if (join) d->prefetch_running = false;
  pthread_mutex_unlock(&d->mu);
  if (join) pthread_join(old, NULL); /* it finished: no part other than i+1 could be busy */
  if (start) {
    prefetch_arg *a = vf_malloc(sizeof *a);
    pthread_t t;
    bool ok = a != NULL;
    if (ok) {
      a->d = d;
      a->i = i + 1;
      ok = pthread_create(&t, NULL, prefetch_main, a) == 0;
      if (!ok) free(a);
    }
    pthread_mutex_lock(&d->mu);
    if (ok) {
      d->prefetch = t;
      d->prefetch_running = true;
    } else {
      d->parts[i + 1].busy = false; /* no prefetch: the reader downloads it itself */
      pthread_cond_broadcast(&d->cv);
    }
    pthread_mutex_unlock(&d->mu);
  }
  return VF_OK;
}

void ds_part_release(struct corpus_dataset *d, size_t i) {
  pthread_mutex_lock(&d->mu);
  ds_part *p = &d->parts[i];
  if (p->refs > 0) p->refs--;
  if (d->evict && p->refs == 0 && !p->busy && (p->v_ours || p->p_ours)) {
    if (p->v_ours) unlink(p->vpath);
    if (p->p_ours) unlink(p->ppath);
    vf_log(VF_LOG_DEBUG, "dataset cache: part %zu evicted (%" PRIu64 " bytes)", i, p->bytes);
    d->cached_bytes -= p->bytes < d->cached_bytes ? p->bytes : d->cached_bytes;
    p->bytes = 0;
    p->v_ours = p->p_ours = false;
  }
  pthread_mutex_unlock(&d->mu);
}

/* ------------------------------------------------------------ sizing */

static vf_status measure_vectors(struct corpus_dataset *d, size_t i, uint64_t *rows,
                                 vf_error *err) {
  ds_part *p = &d->parts[i];
  vec_file *vf = NULL;
  vf_status st;
  if (file_exists(p->vpath)) {
    st = ds_open_vectors(d, p->vpath, &vf, err);
  } else if (!p->vlink) {
    return vf_error_set(err, VF_ENOTFOUND,
                        "%s: dataset part %zu: %s does not exist and the part has no 'link'",
                        d->name, i, p->vpath);
  } else if (d->vformat == VF_CFG_FORMAT_HDF5) {
    /* libhdf5 reads local files only: the part is downloaded (and cached) to be sized */
    if ((st = ds_part_acquire(d, i, err)) != VF_OK) return st;
    st = ds_open_vectors(d, p->vpath, &vf, err);
    ds_part_release(d, i);
  } else {
    io_source *src = NULL;
    if ((st = open_window(p->vlink, false, &src, err)) != VF_OK) return st;
    st = d->vformat == VF_CFG_FORMAT_FBIN ? fbin_open(src, d->bin_dtype, &vf, err)
                                          : npy_open(src, &vf, err);
  }
  if (st != VF_OK) return st;
  *rows = vec_rows(vf);
  vec_close(vf);
  return VF_OK;
}

static vf_status measure_payload(struct corpus_dataset *d, size_t i, uint64_t *rows,
                                 vf_error *err) {
  ds_part *p = &d->parts[i];
  io_source *src = NULL;
  vf_status st;
  if (file_exists(p->ppath))
    st = io_open_local(p->ppath, &src, err);
  else if (p->plink)
    st = open_window(p->plink, true, &src, err);
  else
    return vf_error_set(err, VF_ENOTFOUND,
                        "%s: dataset part %zu: %s does not exist and the part has no 'link'",
                        d->name, i, p->ppath);
  if (st != VF_OK) return st;
  if (d->pformat == VF_CFG_FORMAT_JSONL) { /* one payload per line */
    if (!file_exists(p->ppath)) {
      io_close(src);
      return vf_error_set(err, VF_EUNSUPPORTED, "%s: dataset part %zu: a jsonl payload is read from "
                          "a local file (download %s to %s)", d->name, i, p->plink, p->ppath);
    }
    io_close(src);
    return ds_jsonl_count(p->ppath, rows, err);
  }
  pqt_file *f = NULL;
  if ((st = pqt_open(src, NULL, &f, err)) != VF_OK) return st;
  int64_t n = pqt_meta(f)->num_rows;
  pqt_close(f);
  if (n < 0)
    return vf_error_set(err, VF_ECORRUPT, "%s: negative row count %" PRId64,
                        p->plink && !file_exists(p->ppath) ? p->plink : p->ppath, n);
  *rows = (uint64_t)n;
  return VF_OK;
}

typedef struct sizing {
  struct corpus_dataset *d;
  pthread_mutex_t mu;
  size_t fail_part; /* the lowest failing part (nparts = none) */
  vf_status st;
  vf_error err;
} sizing;

static vf_status size_part(struct corpus_dataset *d, size_t i, vf_error *err) {
  uint64_t vr = 0, pr = 0;
  vf_status st = measure_vectors(d, i, &vr, err);
  if (st != VF_OK) return st;
  if (d->has_payload) {
    if ((st = measure_payload(d, i, &pr, err)) != VF_OK) return st;
    if (pr != vr) {
      const ds_part *p = &d->parts[i];
      return vf_error_set(err, VF_ECORRUPT,
                        "%s: dataset part %zu: the vectors file %s has %" PRIu64
                        " rows but the payload file %s has %" PRIu64
                        " (row i of each becomes point i: the counts must be equal)",
                        d->name, i, p->vlink && !file_exists(p->vpath) ? p->vlink : p->vpath, vr,
                        p->plink && !file_exists(p->ppath) ? p->plink : p->ppath, pr);
    }
  }
  d->parts[i].rows = vr;
  return VF_OK;
}

/* part i (a chunk of a pool loop DS_SIZING_THREADS wide: network-bound, vforge/pool.h);
 * parts after the first failure are skipped */
static void sizing_part(void *arg, size_t i, int w) {
  (void)w;
  sizing *z = arg;
  pthread_mutex_lock(&z->mu);
  bool stop = i > z->fail_part;
  pthread_mutex_unlock(&z->mu);
  if (stop) return;
  vf_error e;
  vf_error_clear(&e);
  vf_status st = size_part(z->d, i, &e);
  if (st != VF_OK) {
    pthread_mutex_lock(&z->mu);
    if (i < z->fail_part) {
      z->fail_part = i;
      z->st = st;
      z->err = e;
    }
    pthread_mutex_unlock(&z->mu);
  }
}

static vf_status size_all(struct corpus_dataset *d, vf_error *err) {
  sizing z;
  memset(&z, 0, sizeof z);
  z.d = d;
  z.fail_part = d->nparts;
  pthread_mutex_init(&z.mu, NULL);
  vf_status st = vf_pool_for(d->nparts, DS_SIZING_THREADS, sizing_part, &z, err);
  pthread_mutex_destroy(&z.mu);
  if (st != VF_OK) return st;
  if (z.fail_part < d->nparts) {
    if (err) *err = z.err;
    return z.st;
  }
  return VF_OK;
}

/* ------------------------------------------------------------ parts index */

static vf_status index_read(struct corpus_dataset *d, bool *found, vf_error *err) {
  *found = false;
  FILE *fp = fopen(d->index_path, "r");
  if (!fp) return VF_OK;
  char line[256];
  size_t n = 0;
  bool ok = true;
  while (fgets(line, sizeof line, fp)) {
    unsigned long long i, vr, pr;
    if (sscanf(line, " [%llu,%llu,%llu]", &i, &vr, &pr) != 3) continue;
    if (i != n || i >= d->nparts || (d->has_payload && vr != pr)) {
      ok = false;
      break;
    }
    d->parts[i].rows = vr;
    n++;
  }
  fclose(fp);
  if (!ok || n != d->nparts)
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: the parts index %s does not describe this dataset's %zu parts; "
                        "delete it to re-measure the parts",
                        d->name, d->index_path, d->nparts);
  *found = true;
  return VF_OK;
}

static void index_write(const struct corpus_dataset *d, const char *spec_hex) {
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_error e;
  vf_error_clear(&e);
  char *dir = NULL;
  vf_status st = VF_OK;
  VF_TRY(vf_buf_printf(&b, &e, "{\"version\":1,\"spec\":\"%s\",\"parts\":[\n", spec_hex));
  for (size_t i = 0; i < d->nparts; i++)
    VF_TRY(vf_buf_printf(&b, &e, "[%zu,%" PRIu64 ",%" PRIu64 "]%s\n", i, d->parts[i].rows,
                         d->has_payload ? d->parts[i].rows : d->parts[i].rows,
                         i + 1 < d->nparts ? "," : ""));
  VF_TRY(vf_buf_printf(&b, &e, "]}\n"));
  dir = dir_of(d->index_path);
  VF_TRY(dir ? vf_mkdir_p(dir, 0777, &e) : VF_ENOMEM);
  VF_TRY(vf_atomic_write_file(d->index_path, b.data, b.len, &e));
out:
  if (st != VF_OK)
    vf_log(VF_LOG_WARN, "%s: could not write the parts index %s: %s", d->name, d->index_path,
           e.msg);
  free(dir);
  vf_buf_free(&b);
}

/* ------------------------------------------------------------ building */

static char **dup_list(char *const *l, size_t n) {
  if (!n) return NULL;
  char **o = vf_calloc(n, sizeof *o);
  for (size_t i = 0; o && i < n; i++)
    o[i] = vf_strdup(l[i]);
  return o;
}

static vf_status part_paths(const vf_config *cfg, const vf_cfg_dataset_component *c, size_t i,
                            char **path, char **link, vf_error *err) {
  *path = *link = NULL;
  if (!c->has_parts) {
    *path = vf_strdup(c->path);
    return *path ? VF_OK : vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  int64_t idx = c->parts.start + (int64_t)i;
  vf_status st = vf_config_part_path(&c->parts, c->parts.path, idx, path, err);
  (void)cfg;
  if (st != VF_OK || !c->parts.link) return st;
  return vf_config_part_path(&c->parts, c->parts.link, idx, link, err);
}

/* Absolute form of a local path (keys and the cache directory must not depend on the cwd). */
static char *absolute(const char *p) {
  if (p[0] == '/') return vf_strdup(p);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return vf_strdup(p);
  size_t n = strlen(cwd) + strlen(p) + 2;
  char *o = vf_malloc(n);
  if (o) snprintf(o, n, "%s/%s", cwd, p);
  return o;
}

static const char *idx_distance_label(int d) {
  return d == CORPUS_COSINE ? "cosine" : d == CORPUS_DOT ? "dot" : d == CORPUS_EUCLID ? "euclid"
                                                                                       : "manhattan";
}

/* The `distance` attribute of the hdf5 bundle vector `v` is read from, as a corpus_distance;
 * -1 when `v` does not come from a local .hdf5 bundle or the bundle names no known metric. */
static int bundle_distance(const vf_config *cfg, const vf_cfg_vector *v) {
  const vf_cfg_dataset_component *c = &cfg->datasource.vectors;
  if (cfg->datasource.form != VF_CFG_DS_DATASET || v->source != VF_CFG_COMPONENT_VECTORS ||
      c->format != VF_CFG_FORMAT_HDF5)
    return -1;
  char *path = NULL, *link = NULL;
  vf_error e;
  if (part_paths(cfg, c, 0, &path, &link, &e) != VF_OK) return -1;
  free(link);
  char *m = NULL;
  int want = -1;
  if (path && file_exists(path) && hdf5_root_attr(path, "distance", &m, &e) == VF_OK) {
    want = strcmp(m, "angular") == 0 || strcmp(m, "cosine") == 0     ? CORPUS_COSINE
           : strcmp(m, "euclidean") == 0 || strcmp(m, "l2") == 0    ? CORPUS_EUCLID
           : strcmp(m, "dot") == 0 || strcmp(m, "ip") == 0          ? CORPUS_DOT
                                                                    : -1;
    free(m);
  }
  free(path);
  return want;
}

/* vf_config_vector_distance(): see config.h. */
corpus_distance vf_config_vector_distance(const vf_config *cfg, const vf_cfg_vector *v) {
  if (v->distance_given) return v->distance;
  int want = bundle_distance(cfg, v);
  return want >= 0 ? (corpus_distance)want : v->distance;
}

vf_status ds_files(const vf_config *cfg, corpus_files *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  const vf_cfg_datasource *ds = &cfg->datasource;
  const char *name = cfg->name ? cfg->name : "config";
  if (ds->vectors.format == VF_CFG_FORMAT_PARQUET)
    return vf_error_set(err, VF_EUNSUPPORTED,
                        "%s: datasource.vectors: a parquet vectors component is read as a plain "
                        "corpus: use 'uri' (or 'file_list') with the vectors' 'column' instead",
                        name);
  struct corpus_dataset *d = vf_calloc(1, sizeof *d);
  if (!d) return vf_error_set(err, VF_ENOMEM, "out of memory");
  pthread_mutex_init(&d->mu, NULL);
  pthread_cond_init(&d->cv, NULL);
  d->name = vf_strdup(name);
  d->vformat = ds->vectors.format;
  d->has_payload = ds->payload.present;
  d->pformat = ds->payload.format;
  d->evict = ds->cache == VF_CFG_CACHE_EVICT || ds->vectors.cache == VF_CFG_CACHE_EVICT;
  d->nparts = ds->vectors.has_parts ? (size_t)ds->vectors.parts.count : 1;
  d->parts = vf_calloc(d->nparts, sizeof *d->parts);
  const char *h5 = "train";
  for (size_t i = 0; i < cfg->nvectors; i++)
    if (cfg->vectors[i].source == VF_CFG_COMPONENT_VECTORS && cfg->vectors[i].column)
      h5 = cfg->vectors[i].column;
  d->h5_dataset = vf_strdup(h5);
  vf_status st = VF_OK;
  char *vp = NULL, *pp = NULL, *rv = NULL, *rp = NULL; /* a part's paths, as given and resolved */
  if (!d->name || !d->parts || !d->h5_dataset) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  if (d->has_payload) {
    d->pcolumns = dup_list(ds->payload.columns, ds->payload.ncolumns);
    d->npcolumns = ds->payload.ncolumns;
    d->pexclude = dup_list(ds->payload.exclude, ds->payload.nexclude);
    d->npexclude = ds->payload.nexclude;
    if (ds->payload.fill_null_json) d->fill_null = vf_strdup(ds->payload.fill_null_json);
    if (ds->payload.cache == VF_CFG_CACHE_EVICT) d->evict = true;
  }
  vf_md5_ctx mc;
  vf_md5_init(&mc);
  char fmt[64];
  snprintf(fmt, sizeof fmt, "vforge-parts-v1|%d|%s|%d|", (int)d->vformat, d->h5_dataset,
           (int)d->has_payload);
  vf_md5_update(&mc, fmt, strlen(fmt));
  for (size_t i = 0; i < d->nparts; i++) {
    ds_part *p = &d->parts[i];
    VF_TRY(part_paths(cfg, &ds->vectors, i, &vp, &p->vlink, err));
    if (d->has_payload) VF_TRY(part_paths(cfg, &ds->payload, i, &pp, &p->plink, err));
    /* a member of an ann-filtering-benchmark archive ("x.tgz/vectors.npy"): extracted once */
    VF_TRY(corpus_bundle_resolve(vp, &rv, err));
    if (pp) VF_TRY(corpus_bundle_resolve(pp, &rp, err));
    p->vpath = absolute(rv);
    if (pp) p->ppath = absolute(rp);
    if (!p->vpath || (pp && !p->ppath)) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    free(rv);
    free(rp);
    free(vp);
    free(pp);
    vp = pp = rv = rp = NULL;
    const char *parts4[4] = {p->vpath, p->vlink, p->ppath, p->plink};
    for (int k = 0; k < 4; k++) {
      const char *s = parts4[k] ? parts4[k] : "";
      vf_md5_update(&mc, s, strlen(s) + 1);
    }
  }
  if (d->vformat == VF_CFG_FORMAT_FBIN)
    fbin_dtype_of_path(d->parts[0].vlink ? d->parts[0].vlink : d->parts[0].vpath, &d->bin_dtype);
  uint8_t md[16];
  vf_md5_final(&mc, md);
  char hex[33];
  for (int i = 0; i < 16; i++)
    snprintf(hex + 2 * i, 3, "%02x", md[i]);
  {
    char *dir = dir_of(d->parts[0].vpath);
    size_t n = dir ? strlen(dir) + 64 : 0;
    d->index_path = dir ? vf_malloc(n) : NULL;
    if (d->index_path) snprintf(d->index_path, n, "%s/.parts-index/%s.json", dir, hex);
    free(dir);
    if (!d->index_path) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
  /* an ann-benchmarks bundle names its metric: warn when a vector is configured otherwise
   * (without `distance:` the bundle's is used, see vf_config_vector_distance) */
  for (size_t i = 0; i < cfg->nvectors; i++) {
    const vf_cfg_vector *v = &cfg->vectors[i];
    int want = bundle_distance(cfg, v);
    if (v->distance_given && want >= 0 && (int)v->distance != want)
      vf_log(VF_LOG_WARN,
             "%s: %s says distance '%s', but vector '%s' is configured with distance '%s'",
             name, d->parts[0].vpath, idx_distance_label(want), v->name,
             idx_distance_label((int)v->distance));
  }
  bool indexed = false;
  VF_TRY(index_read(d, &indexed, err));
  if (!indexed) {
    double t0 = vf_now();
    VF_TRY(size_all(d, err));
    vf_log(VF_LOG_INFO, "%s: measured %zu dataset parts in %.3f s", name, d->nparts,
           vf_now() - t0);
    index_write(d, hex);
  }
  /* the corpus files: one per part, keyed by the link's bare key when there is one (ids must
   * not depend on where the cache lives), else by the local path */
  out->files = vf_calloc(d->nparts, sizeof *out->files);
  out->prefix = dir_of(d->parts[0].vpath);
  if (!out->files || !out->prefix) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (size_t i = 0; i < d->nparts; i++) {
    ds_part *p = &d->parts[i];
    corpus_file *f = &out->files[i];
    f->uri = vf_strdup(p->vpath);
    if (!f->uri) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    out->n++;
    VF_TRY(corpus_bare_key(p->vlink ? p->vlink : p->vpath, ds->id_root, &f->key, err));
    f->size = file_size(p->vpath);
    f->dataset = d;
    f->part = i;
  }
  pthread_mutex_lock(&g_mu);
  struct corpus_dataset **ns = vf_realloc(g_sets, (g_nsets + 1) * sizeof *ns);
  if (ns) {
    g_sets = ns;
    g_sets[g_nsets++] = d;
    if (!g_atexit) g_atexit = atexit(ds_exit) == 0;
  }
  pthread_mutex_unlock(&g_mu);
  if (!ns) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
out:
  free(rv);
  free(rp);
  free(vp);
  free(pp);
  if (st != VF_OK) {
    corpus_files_free(out);
    /* never registered: free it (no reader holds it; a prefetch is joined first) */
    if (d->prefetch_running) pthread_join(d->prefetch, NULL);
    for (size_t i = 0; d->evict && d->parts && i < d->nparts; i++) {
      if (d->parts[i].v_ours) unlink(d->parts[i].vpath);
      if (d->parts[i].p_ours) unlink(d->parts[i].ppath);
    }
    for (size_t i = 0; d->parts && i < d->nparts; i++) {
      free(d->parts[i].vpath);
      free(d->parts[i].vlink);
      free(d->parts[i].ppath);
      free(d->parts[i].plink);
    }
    for (size_t i = 0; i < d->npcolumns; i++) free(d->pcolumns[i]);
    for (size_t i = 0; i < d->npexclude; i++) free(d->pexclude[i]);
    free(d->pcolumns);
    free(d->pexclude);
    free(d->fill_null);
    free(d->parts);
    free(d->name);
    free(d->h5_dataset);
    free(d->index_path);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
    free(d);
  }
  return st;
}
