/*
 * generate-queries --filter-template T (issue 19): one filter per sampled query, drawn from the
 * corpus's own payload so that selectivity is realistic.
 *
 * The template is a filter's JSON in which a string that is exactly "$name" or "$~name" stands
 * for a payload value: "$name" is the query row's own value of payload key `name`, "$~name" the
 * value of a row drawn uniformly from the corpus (seeded), i.e. a draw from the key's empirical
 * distribution over the rows that have it.  The value replaces the whole string, keeping its
 * JSON type ("$label" -> 3 or "Shirt").  A query row without a value for "$name" is an error
 * naming its file and row; "$~name" draws again (bounded) until a row has one.  Every filter
 * produced is compiled, so a template that does not fit the data fails here, not in bench.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "eval/bf_internal.h"

#define QF_MAX_KEYS 64
#define QF_MAX_HOLES 1024
#define QF_ROUNDS 16

typedef struct qf_hole {
  size_t a, b;  /* the string token "..." in the template: [a, b) */
  int key;      /* index into keys */
  bool dist;    /* $~name */
} qf_hole;

static uint64_t qf_mix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* the template's "$name" / "$~name" strings */
static vf_status find_holes(const char *t, size_t n, qf_hole *holes, size_t *nh, char **keys,
                            int *nkeys, vf_error *err) {
  *nh = 0;
  for (size_t i = 0; i < n; i++) {
    if (t[i] != '"') continue;
    size_t a = i++;
    bool esc = false;
    while (i < n && t[i] != '"') {
      if (t[i] == '\\') {
        esc = true;
        i++;
      }
      i++;
    }
    if (i >= n) break; /* the JSON check reports it */
    size_t b = i + 1, c0 = a + 1, c1 = i;
    if (esc || c1 - c0 < 2 || t[c0] != '$') continue;
    bool dist = t[c0 + 1] == '~';
    size_t k0 = c0 + 1 + dist;
    bool ok = k0 < c1;
    for (size_t j = k0; ok && j < c1; j++)
      ok = (t[j] >= 'a' && t[j] <= 'z') || (t[j] >= 'A' && t[j] <= 'Z') || (t[j] >= '0' && t[j] <= '9') ||
           t[j] == '_' || t[j] == '-' || (unsigned char)t[j] >= 0x80;
    if (!ok) continue;
    if (*nh == QF_MAX_HOLES)
      return vf_error_set(err, VF_EUSAGE, "--filter-template: more than %d placeholders", QF_MAX_HOLES);
    int key = -1;
    for (int k = 0; k < *nkeys && key < 0; k++)
      if (strlen(keys[k]) == c1 - k0 && memcmp(keys[k], t + k0, c1 - k0) == 0) key = k;
    if (key < 0) {
      if (*nkeys == QF_MAX_KEYS)
        return vf_error_set(err, VF_EUSAGE, "--filter-template: more than %d payload keys", QF_MAX_KEYS);
      if (!(keys[*nkeys] = vf_strndup(t + k0, c1 - k0))) return vf_error_set(err, VF_ENOMEM, "out of memory");
      key = (*nkeys)++;
    }
    holes[(*nh)++] = (qf_hole){a, b, key, dist};
  }
  return VF_OK;
}

/* the payloads of rows[0..m) (sorted, distinct global rows): row j's text is
 * texts[offs[j] .. offs[j+1]) */
static vf_status read_payloads(const corpus_files *files, const uint64_t *bases,
                               const corpus_record_spec *spec, const uint64_t *rows, size_t m,
                               vf_buf *texts, int64_t *offs, vf_error *err) {
  vf_buf_reset(texts);
  offs[0] = 0;
  size_t j = 0;
  corpus_batch bt;
  memset(&bt, 0, sizeof bt);
  vf_status st = VF_OK;
  corpus_records *rr = NULL;
  for (size_t fi = 0; fi < files->n && j < m; fi++) {
    uint64_t base = bases[fi], end = bases[fi + 1];
    if (rows[j] >= end) continue;
    VF_TRY(corpus_records_open(&files->files[fi], spec, base, &rr, err));
    int nrg = corpus_records_row_groups(rr);
    for (int rg = 0; rg < nrg && j < m && rows[j] < end; rg++) {
      uint64_t a = corpus_records_row_group_first(rr, rg);
      uint64_t b = rg + 1 < nrg ? corpus_records_row_group_first(rr, rg + 1) : corpus_records_rows(rr);
      if (rows[j] >= base + b) continue;
      VF_TRY(corpus_records_read(rr, rg, a, &bt, NULL, err));
      size_t p = 0;
      for (; j < m && rows[j] < base + b; j++) {
        uint64_t phys = rows[j] - base;
        while (p < bt.n && bt.file_rows[p] < phys) p++;
        if (p < bt.n && bt.file_rows[p] == phys)
          VF_TRY(vf_buf_append(texts, bt.payload.data + bt.payload_offsets[p],
                               (size_t)(bt.payload_offsets[p + 1] - bt.payload_offsets[p]), err));
        offs[j + 1] = (int64_t)texts->len;
      }
    }
    corpus_records_close(rr);
    rr = NULL;
  }
  for (; j < m; j++) offs[j + 1] = (int64_t)texts->len;
out:
  corpus_records_close(rr);
  corpus_batch_free(&bt);
  return st;
}

/* the row (index into the sorted distinct `rows`) of global row r */
static size_t row_index(const uint64_t *rows, size_t m, uint64_t r) {
  size_t lo = 0, hi = m;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (rows[mid] < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static const char *file_of(const corpus_files *files, const uint64_t *bases, uint64_t r, uint64_t *phys) {
  size_t fi = 0;
  while (fi + 1 < files->n && bases[fi + 1] <= r) fi++;
  *phys = r - bases[fi];
  return files->files[fi].key;
}

/* ev_template_filters(): see bf_internal.h. */
vf_status ev_template_filters(const corpus_files *files, const uint64_t *bases,
                              const corpus_record_spec *records, const char *tmpl,
                              const uint64_t *qrows, uint64_t n, uint64_t seed, char ***out,
                              vf_error *err) {
  *out = NULL;
  size_t tl = strlen(tmpl);
  if (!vf_json_is_object(tmpl, tl))
    return vf_error_set(err, VF_EUSAGE, "--filter-template: not a JSON object");
  uint64_t total = bases[files->n];
  qf_hole *holes = vf_calloc(QF_MAX_HOLES, sizeof *holes);
  char *keys[QF_MAX_KEYS];
  int nkeys = 0;
  size_t nh = 0;
  char **values = NULL, **filters = NULL;
  uint64_t *draw = NULL, *need = NULL;
  int64_t *offs = NULL;
  vf_buf texts, val, b;
  VF_BUF_INIT(&texts, VF_BUF_MAX_ROWS_HELD);
  VF_BUF_INIT(&val, VF_BUF_MAX_RECORD);
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  vf_status st = VF_OK;
  if (!holes) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  VF_TRY(find_holes(tmpl, tl, holes, &nh, keys, &nkeys, err));
  /* the payload to read: the template's keys */
  corpus_payload_source src[QF_MAX_KEYS];
  for (int k = 0; k < nkeys; k++) {
    src[k] = (corpus_payload_source){keys[k], keys[k]};
    if (!records || records->npayload == 0) continue;
    bool found = false;
    for (int i = 0; i < records->npayload && !found; i++)
      if (strcmp(records->payload[i].key, keys[k]) == 0) src[k] = records->payload[i], found = true;
    if (!found)
      VF_FAIL(vf_error_set(err, VF_EUSAGE, "--filter-template: '$%s' is not one of the config's payload_fields", keys[k]));
  }
  corpus_record_spec spec = {.payload = src, .npayload = nkeys};
  if (records) spec.id = records->id;
  size_t ndist = 0;
  bool own = false;
  for (size_t h = 0; h < nh; h++) {
    ndist += holes[h].dist;
    own |= !holes[h].dist;
  }
  /* values[i * nh + h]: the JSON text of hole h in query i */
  values = vf_calloc(n * (nh ? nh : 1), sizeof *values);
  draw = vf_calloc(n * (nh ? nh : 1), sizeof *draw);
  need = vf_mallocarray(n * (nh ? nh : 1) + 1, sizeof *need);
  offs = vf_mallocarray(n * (nh ? nh : 1) + 2, sizeof *offs);
  if (!values || !draw || !need || !offs) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  /* the query rows' own values */
  if (own && nkeys) VF_TRY(read_payloads(files, bases, &spec, qrows, (size_t)n, &texts, offs, err));
  for (uint64_t i = 0; own && i < n; i++)
    for (size_t h = 0; h < nh; h++) {
      if (holes[h].dist) continue;
      bool found = false;
      vf_buf_reset(&val);
      VF_TRY(flt_json_member((const char *)texts.data + offs[i], (size_t)(offs[i + 1] - offs[i]),
                             keys[holes[h].key], &val, &found, err));
      if (!found || (val.len == 4 && memcmp(val.data, "null", 4) == 0)) {
        uint64_t phys;
        const char *fk = file_of(files, bases, qrows[i], &phys);
        VF_FAIL(vf_error_set(err, VF_EUSAGE, "--filter-template: query row %s row %" PRIu64 " has no "
                             "value for '$%s' (use '$~%s' to draw one from the corpus)", fk, phys,
                             keys[holes[h].key], keys[holes[h].key]));
      }
      if (!(values[i * nh + h] = vf_strndup((const char *)val.data, val.len)))
        VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    }
  /* draws from the corpus, in rounds: a drawn row without a value is drawn again */
  uint64_t state = seed ^ 0x5eedf11e7e3a17ull;
  for (int round = 0; ndist && round < QF_ROUNDS; round++) {
    size_t m = 0;
    for (uint64_t i = 0; i < n; i++)
      for (size_t h = 0; h < nh; h++)
        if (holes[h].dist && !values[i * nh + h]) {
          draw[i * nh + h] = total ? qf_mix(&state) % total : 0;
          need[m++] = draw[i * nh + h];
        }
    if (!m) break;
    qsort(need, m, sizeof *need, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
      if (!u || need[u - 1] != need[i]) need[u++] = need[i];
    VF_TRY(read_payloads(files, bases, &spec, need, u, &texts, offs, err));
    for (uint64_t i = 0; i < n; i++)
      for (size_t h = 0; h < nh; h++) {
        if (!holes[h].dist || values[i * nh + h]) continue;
        size_t j = row_index(need, u, draw[i * nh + h]);
        bool found = false;
        vf_buf_reset(&val);
        VF_TRY(flt_json_member((const char *)texts.data + offs[j], (size_t)(offs[j + 1] - offs[j]),
                               keys[holes[h].key], &val, &found, err));
        if (found && !(val.len == 4 && memcmp(val.data, "null", 4) == 0) &&
            !(values[i * nh + h] = vf_strndup((const char *)val.data, val.len)))
          VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
      }
  }
  for (uint64_t i = 0; i < n; i++)
    for (size_t h = 0; h < nh; h++)
      if (!values[i * nh + h])
        VF_FAIL(vf_error_set(err, VF_EUSAGE, "--filter-template: '$~%s' found no row with a value in "
                             "%d draws of %" PRIu64 " rows; is '%s' a payload key of this corpus?",
                             keys[holes[h].key], QF_ROUNDS, total, keys[holes[h].key]));
  /* the filters: the template with every hole replaced, each one compiled */
  filters = vf_calloc(n ? n : 1, sizeof *filters);
  if (!filters) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  for (uint64_t i = 0; i < n; i++) {
    VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
    size_t at = 0;
    for (size_t h = 0; h < nh; h++) {
      VF_TRY(vf_buf_append(&b, tmpl + at, holes[h].a - at, err));
      VF_TRY(vf_buf_append(&b, values[i * nh + h], strlen(values[i * nh + h]), err));
      at = holes[h].b;
    }
    VF_TRY(vf_buf_append(&b, tmpl + at, tl - at, err));
    flt_filter *f = NULL;
    uint64_t phys = 0;
    const char *fk = file_of(files, bases, qrows[i], &phys);
    char what[600];
    snprintf(what, sizeof what, "--filter-template for query %" PRIu64 " (%s row %" PRIu64 ")", i, fk, phys);
    st = flt_parse((const char *)b.data, b.len, what, &f, err);
    flt_free(f);
    if (st != VF_OK) goto out;
    VF_TRY(vf_buf_append(&b, "", 1, err));
    size_t len;
    filters[i] = (char *)vf_buf_take(&b, &len);
    vf_buf_free(&b);
  }
  *out = filters;
out:
  if (st != VF_OK) {
    for (uint64_t i = 0; filters && i < n; i++) free(filters[i]);
    free(filters);
  }
  vf_buf_free(&b);
  for (uint64_t i = 0; values && i < n * (nh ? nh : 1); i++) free(values[i]);
  for (int k = 0; k < nkeys; k++) free(keys[k]);
  free(values);
  free(draw);
  free(need);
  free(offs);
  free(holes);
  vf_buf_free(&texts);
  vf_buf_free(&val);
  return st;
}
