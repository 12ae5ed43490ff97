/*
 * local_ids.c — the local store's id table and its view of the segments: which committed
 * segment row holds the newest occurrence of each id (newest wins), built by listing and reading
 * the `id` column of every segment, and rebuilt when the set of segments changes.  Split out of
 * local.c along its "id table" and "reading" sections; the design note is local.c's.
 */
#include <stdlib.h>
#include <sys/stat.h>

#include "local_internal.h"

/* ------------------------------------------------------------- id table */

uint64_t ls_hash(uint64_t a, uint64_t b, uint8_t u) {
  uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + u);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 29;
  return h;
}

static int hexv(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

void ls_key_of(const corpus_id *id, uint64_t *a, uint64_t *b) {
  if (!id->is_uuid) {
    *a = id->num;
    *b = 0;
    return;
  }
  uint64_t w[2] = {0, 0};
  int nib = 0;
  for (int i = 0; i < 36; i++) {
    int v = hexv(id->uuid[i]);
    if (v < 0) continue;
    w[nib / 16] = (w[nib / 16] << 4) | (uint64_t)v;
    nib++;
  }
  *a = w[0];
  *b = w[1];
}

void ls_id_of(const ls_entry *e, corpus_id *id) {
  memset(id, 0, sizeof *id);
  if (!e->is_uuid) {
    id->num = e->a;
    return;
  }
  static const char hx[] = "0123456789abcdef";
  int nib = 0;
  for (int i = 0; i < 36; i++) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      id->uuid[i] = '-';
      continue;
    }
    uint64_t w = nib < 16 ? e->a : e->b;
    id->uuid[i] = hx[(w >> (4 * (15 - nib % 16))) & 15];
    nib++;
  }
  id->uuid[36] = 0;
  id->is_uuid = true;
}

int ls_entry_cmp(const void *user, int64_t x, int64_t y) {
  const ls_entry *t = user;
  const ls_entry *a = &t[x], *b = &t[y];
  if (a->is_uuid != b->is_uuid) return a->is_uuid ? 1 : -1;
  if (a->a != b->a) return a->a < b->a ? -1 : 1;
  if (a->b != b->b) return a->b < b->b ? -1 : 1;
  return 0;
}

static vf_status ls_tab_grow(ls_view *v, vf_error *err) {
  size_t ncap = v->cap ? v->cap * 2 : 1024;
  ls_entry *t = vf_mallocarray(ncap, sizeof *t);
  if (!t)
    return vf_error_set(err, VF_ENOMEM,
                        "local store: out of memory for the id table (%zu ids; every id of a "
                        "collection must fit in memory)",
                        v->count);
  for (size_t i = 0; i < ncap; i++)
    t[i].seg = -1;
  for (size_t i = 0; i < v->cap; i++) {
    if (v->tab[i].seg < 0) continue;
    size_t h = ls_hash(v->tab[i].a, v->tab[i].b, v->tab[i].is_uuid) & (ncap - 1);
    while (t[h].seg >= 0)
      h = (h + 1) & (ncap - 1);
    t[h] = v->tab[i];
  }
  free(v->tab);
  v->tab = t;
  v->cap = ncap;
  return VF_OK;
}

/* record (seg,row) as the newest occurrence of the id */
static vf_status ls_tab_put(ls_view *v, const corpus_id *id, int32_t seg, int64_t row,
                            vf_error *err) {
  if ((v->count + 1) * 2 > v->cap) {
    vf_status st = ls_tab_grow(v, err);
    if (st != VF_OK) return st;
  }
  uint64_t a, b;
  ls_key_of(id, &a, &b);
  uint8_t u = id->is_uuid ? 1 : 0;
  size_t h = ls_hash(a, b, u) & (v->cap - 1);
  while (v->tab[h].seg >= 0) {
    ls_entry *e = &v->tab[h];
    if (e->a == a && e->b == b && e->is_uuid == u) {
      e->seg = seg;
      e->row = row;
      return VF_OK;
    }
    h = (h + 1) & (v->cap - 1);
  }
  v->tab[h] = (ls_entry){a, b, row, seg, u};
  v->count++;
  return VF_OK;
}

void ls_view_free(ls_view *v) {
  for (int i = 0; i < v->nsegs; i++) {
    free(v->segs[i].name);
    free(v->segs[i].slot);
  }
  free(v->segs);
  free(v->tab);
  memset(v, 0, sizeof *v);
}


int64_t ls_tab_find(const ls_view *v, const corpus_id *id) {
  if (!v->cap) return -1;
  uint64_t a, b;
  ls_key_of(id, &a, &b);
  uint8_t u = id->is_uuid ? 1 : 0;
  size_t h = ls_hash(a, b, u) & (v->cap - 1);
  while (v->tab[h].seg >= 0) {
    const ls_entry *e = &v->tab[h];
    if (e->a == a && e->b == b && e->is_uuid == u) return (int64_t)h;
    h = (h + 1) & (v->cap - 1);
  }
  return -1;
}

/* ---------------------------------------------------------------- reading */

vf_status ls_open_segment_file(local_store *s, const char *name, pqt_file **f, vf_error *err) {
  char *p = ls_path_join(s->dir, name);
  if (!p) return vf_error_set(err, VF_ENOMEM, "out of memory");
  io_source *src = NULL;
  vf_status st = io_open_local(p, &src, err);
  free(p);
  if (st != VF_OK) return st;
  return pqt_open(src, NULL, f, err);
}

/* leaf index of a top-level column, checking it is a single leaf */
int ls_leaf_of(const pqt_file *f, const char *name) {
  int top = pqt_find_top(f, name);
  if (top < 0) return -1;
  const pqt_node *nd = &pqt_schema_of(f)->nodes[top];
  return nd->nleaves == 1 ? nd->first_leaf : -1;
}

static vf_status ls_id_at(const pqt_file *f, const pqt_leaf_data *d, int64_t row, int64_t first,
                          corpus_id *id, vf_error *err) {
  if (d->type != PQT_BYTE_ARRAY || d->nvalues != d->nrows || row >= d->nvalues)
    return vf_error_set(err, VF_ECORRUPT, "%s: column 'id' is not a required string column",
                        pqt_name(f));
  const char *p = (const char *)d->values.data + d->offsets[row];
  size_t len = (size_t)(d->offsets[row + 1] - d->offsets[row]);
  if (!store_id_parse(p, len, id))
    return vf_error_set(err, VF_ECORRUPT,
                        "%s: row %lld: id '%.*s' is neither an integer nor a UUID", pqt_name(f),
                        (long long)(first + row), (int)(len > 64 ? 64 : len), p);
  return VF_OK;
}

static bool ls_view_current(local_store *s, char **names, int n) {
  ls_view *v = &s->view;
  if (!v->valid || v->nsegs != n) return false;
  for (int i = 0; i < n; i++) {
    if (strcmp(v->segs[i].name, names[i]) != 0) return false;
    char *p = ls_path_join(s->dir, names[i]);
    struct stat sb;
    bool same = p && stat(p, &sb) == 0 && (uint64_t)sb.st_ino == v->segs[i].ino &&
                (uint64_t)sb.st_size == v->segs[i].size &&
                (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec == v->segs[i].mtime_ns;
    free(p);
    if (!same) return false;
  }
  return true;
}

/* Build (or reuse) the id table over every committed segment. */
static vf_status ls_view_build_once(local_store *s, vf_error *err) {
  char **names = NULL;
  int n = 0;
  vf_status st = ls_list(s, &names, &n, err);
  if (st != VF_OK) return st;
  if (ls_view_current(s, names, n)) {
    ls_free_names(names, n);
    return VF_OK;
  }
  ls_view_free(&s->view);
  ls_view *v = &s->view;
  pqt_leaf_data d;
  pqt_leaf_data_init(&d);
  pqt_file *f = NULL; /* the segment being read */
  if (n && !(v->segs = vf_calloc((size_t)n, sizeof *v->segs)))
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  vf_stage pg;
  vf_stage_begin(&pg, s->progress, "read ids", "segments", (uint64_t)n);
  for (int i = 0; i < n; i++) {
    if (s->progress) vf_stage_update(&pg, (uint64_t)i, NULL);
    if (s->progress) VF_TRY(vf_check_cancel(err));
    ls_seg *sg = &v->segs[i];
    sg->name = names[i];
    names[i] = NULL;
    v->nsegs = i + 1;
    char *p = ls_path_join(s->dir, sg->name);
    struct stat sb;
    if (p && stat(p, &sb) == 0) {
      sg->ino = (uint64_t)sb.st_ino;
      sg->size = (uint64_t)sb.st_size;
      sg->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    }
    free(p);
    VF_TRY(ls_open_segment_file(s, sg->name, &f, err));
    int leaf = ls_leaf_of(f, "id");
    if (leaf < 0)
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "%s: segment without an 'id' string column",
                           pqt_name(f)));
    const pqt_file_meta *m = pqt_meta(f);
    int64_t row = 0;
    for (int g = 0; g < m->nrow_groups; g++) {
      VF_TRY(pqt_read_leaves(f, g, &leaf, 1, &d, err));
      for (int64_t r = 0; r < d.nrows; r++) {
        corpus_id id;
        VF_TRY(ls_id_at(f, &d, r, row, &id, err));
        VF_TRY(ls_tab_put(v, &id, i, row + r, err));
      }
      row += d.nrows;
    }
    pqt_close(f);
    f = NULL;
    sg->nrows = row;
    v->total_rows += (uint64_t)row;
    if (row > 0 && !(sg->slot = vf_mallocarray((size_t)row, sizeof *sg->slot)))
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory for %lld rows", (long long)row));
    for (int64_t r = 0; r < row; r++)
      sg->slot[r] = -1;
  }
  for (size_t e = 0; e < v->cap; e++)
    if (v->tab[e].seg >= 0) v->segs[v->tab[e].seg].slot[v->tab[e].row] = (int64_t)e;
  v->valid = true;
  s->view_gen++;
out:
  pqt_close(f);
  pqt_leaf_data_free(&d);
  ls_free_names(names, n);
  if (st != VF_OK) ls_view_free(v);
  return st;
}

/* A segment listed but gone when opened was removed by a concurrent compaction: list again. */
vf_status ls_view_build(local_store *s, vf_error *err) {
  vf_status st = VF_ENOTFOUND;
  for (int attempt = 0; attempt < 3 && st == VF_ENOTFOUND; attempt++)
    st = ls_view_build_once(s, err);
  return st;
}

vf_status ls_count(store *base, bool exact, uint64_t *out, vf_error *err) {
  (void)exact;
  local_store *s = (local_store *)base;
  vf_status st = VF_OK;
  VF_TRY(ls_verify(s, err));
  VF_TRY(ls_view_build(s, err));
  *out = s->view.count;
out:
  return st;
}
