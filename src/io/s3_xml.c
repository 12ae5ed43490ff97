/*
 * s3_xml.c — a small, strict XML reader for the documents S3 and STS send back (issue 7).
 *
 * Why not an XML library: vforge reads five fixed response shapes (ListBucketResult, Error,
 * InitiateMultipartUploadResult, CompleteMultipartUploadResult, AssumeRoleWithWebIdentityResponse),
 * all plain element trees with text leaves.  A few hundred lines that refuse everything else
 * (DOCTYPE and therefore every entity expansion attack, processing instructions, unbalanced
 * tags, deep nesting, NUL and control bytes) are easier to audit and fuzz (tests/fuzz/fuzz_s3xml.c)
 * than a general parser.  The reader builds a flat node array (document order, parent / first
 * child / next sibling links) with each element's decoded text, iteratively (no recursion), so
 * memory is linear in the input and the stack is constant.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/s3_internal.h"

typedef struct px {
  const char *s;
  size_t n, i;
  s3x_doc *d;
  vf_error *err;
} px;

static vf_status px_fail(px *p, const char *what) {
  return vf_error_set(p->err, VF_ECORRUPT, "XML: byte %zu: %s", p->i, what);
}

static bool px_starts(const px *p, const char *lit) {
  size_t l = strlen(lit);
  return p->n - p->i >= l && memcmp(p->s + p->i, lit, l) == 0;
}

static bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void px_skip_ws(px *p) {
  while (p->i < p->n && is_ws(p->s[p->i]))
    p->i++;
}

static bool name_start(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':' || c >= 0x80;
}
static bool name_char(unsigned char c) {
  return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* A name at p->i: its start and length (0 when none). */
static size_t px_name(px *p, const char **start) {
  *start = p->s + p->i;
  if (p->i >= p->n || !name_start((unsigned char)p->s[p->i])) return 0;
  size_t b = p->i;
  while (p->i < p->n && name_char((unsigned char)p->s[p->i]))
    p->i++;
  return p->i - b;
}

/* Characters allowed in content: XML 1.0 Char minus the markup handled by the caller. */
static bool px_char_ok(unsigned char c) {
  return c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
}

static vf_status node_append(px *p, int node, const char *s, size_t n) {
  s3x_node *nd = &p->d->nodes[node];
  if (nd->text_len + n + 1 > nd->text_cap) {
    size_t cap = nd->text_cap ? nd->text_cap : 32;
    while (cap < nd->text_len + n + 1)
      cap *= 2;
    char *t = vf_realloc(nd->text, cap);
    if (!t) return vf_error_set(p->err, VF_ENOMEM, "XML: out of memory");
    nd->text = t;
    nd->text_cap = cap;
  }
  memcpy(nd->text + nd->text_len, s, n);
  nd->text_len += n;
  nd->text[nd->text_len] = 0;
  return VF_OK;
}

static size_t utf8_put(uint32_t cp, char out[4]) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* An entity or character reference at p->i ('&'); the decoded bytes into out. */
static vf_status px_entity(px *p, char out[4], size_t *olen) {
  size_t semi = p->i + 1;
  while (semi < p->n && semi - p->i <= 12 && p->s[semi] != ';')
    semi++;
  if (semi >= p->n || p->s[semi] != ';') return px_fail(p, "'&' that does not start a reference");
  const char *r = p->s + p->i + 1;
  size_t rl = semi - p->i - 1;
  static const struct {
    const char *name;
    char c;
  } named[] = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  for (size_t k = 0; k < sizeof named / sizeof named[0]; k++)
    if (rl == strlen(named[k].name) && memcmp(r, named[k].name, rl) == 0) {
      out[0] = named[k].c;
      *olen = 1;
      p->i = semi + 1;
      return VF_OK;
    }
  if (rl >= 2 && r[0] == '#') {
    bool hex = r[1] == 'x';
    size_t k = hex ? 2 : 1;
    if (k >= rl) return px_fail(p, "empty character reference");
    uint32_t cp = 0;
    for (; k < rl; k++) {
      char c = r[k];
      uint32_t v;
      if (c >= '0' && c <= '9')
        v = (uint32_t)(c - '0');
      else if (hex && c >= 'a' && c <= 'f')
        v = (uint32_t)(c - 'a' + 10);
      else if (hex && c >= 'A' && c <= 'F')
        v = (uint32_t)(c - 'A' + 10);
      else
        return px_fail(p, "bad digit in a character reference");
      cp = cp * (hex ? 16u : 10u) + v;
      if (cp > 0x10FFFF) return px_fail(p, "character reference beyond U+10FFFF");
    }
    if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
      return px_fail(p, "character reference to NUL or a surrogate");
    *olen = utf8_put(cp, out);
    p->i = semi + 1;
    return VF_OK;
  }
  return px_fail(p, "unknown entity (only amp, lt, gt, quot, apos and &#N; are allowed)");
}

/* Character data up to the next '<' into `node` (-1: outside the root: whitespace only). */
static vf_status px_text(px *p, int node) {
  while (p->i < p->n && p->s[p->i] != '<') {
    size_t b = p->i;
    while (p->i < p->n && p->s[p->i] != '<' && p->s[p->i] != '&') {
      unsigned char c = (unsigned char)p->s[p->i];
      if (!px_char_ok(c)) return px_fail(p, "control character or NUL byte");
      if (node < 0 && !is_ws((char)c)) return px_fail(p, "text outside the root element");
      p->i++;
    }
    if (node >= 0 && p->i > b) {
      vf_status st = node_append(p, node, p->s + b, p->i - b);
      if (st) return st;
    }
    if (p->i < p->n && p->s[p->i] == '&') {
      if (node < 0) return px_fail(p, "text outside the root element");
      char u[4];
      size_t ul = 0;
      vf_status st = px_entity(p, u, &ul);
      if (st) return st;
      st = node_append(p, node, u, ul);
      if (st) return st;
    }
  }
  return VF_OK;
}

static vf_status px_comment(px *p) {
  p->i += 4; /* "<!--" */
  while (p->i + 3 <= p->n) {
    if (memcmp(p->s + p->i, "-->", 3) == 0) {
      p->i += 3;
      return VF_OK;
    }
    if (!px_char_ok((unsigned char)p->s[p->i])) return px_fail(p, "control byte in a comment");
    p->i++;
  }
  return px_fail(p, "unterminated comment");
}

static vf_status px_new_node(px *p, const char *qn, size_t ql, int parent, int *out) {
  s3x_doc *d = p->d;
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 64;
    s3x_node *t = vf_realloc(d->nodes, cap * sizeof *t);
    if (!t) return vf_error_set(p->err, VF_ENOMEM, "XML: out of memory");
    d->nodes = t;
    d->cap = cap;
  }
  const char *colon = memchr(qn, ':', ql);
  const char *ln = qn;
  size_t ll = ql;
  for (; colon; colon = memchr(ln, ':', ll)) { /* local name after the last ':' */
    ll -= (size_t)(colon + 1 - ln);
    ln = colon + 1;
  }
  if (ll == 0) return px_fail(p, "element name with an empty local part");
  s3x_node *nd = &d->nodes[d->n];
  memset(nd, 0, sizeof *nd);
  nd->parent = parent;
  nd->first_child = nd->next_sibling = -1;
  nd->name = vf_strndup(ln, ll);
  nd->text = vf_strdup("");
  nd->text_cap = 1;
  int idx = (int)d->n;
  d->n++; /* counted now so s3x_free frees its strings */
  if (!nd->name || !nd->text) return vf_error_set(p->err, VF_ENOMEM, "XML: out of memory");
  if (parent >= 0) { /* link as the last child */
    int c = d->nodes[parent].first_child;
    if (c < 0)
      d->nodes[parent].first_child = idx;
    else {
      while (d->nodes[c].next_sibling >= 0)
        c = d->nodes[c].next_sibling;
      d->nodes[c].next_sibling = idx;
    }
  }
  *out = idx;
  return VF_OK;
}

/* The attributes of a start tag, up to and including '>' or "/>". */
static vf_status px_attrs(px *p, bool *empty) {
  for (;;) {
    size_t b = p->i;
    px_skip_ws(p);
    if (p->i >= p->n) return px_fail(p, "unterminated start tag");
    if (p->s[p->i] == '>') {
      p->i++;
      *empty = false;
      return VF_OK;
    }
    if (px_starts(p, "/>")) {
      p->i += 2;
      *empty = true;
      return VF_OK;
    }
    if (p->i == b) return px_fail(p, "expected whitespace, '>' or '/>' in a start tag");
    const char *an;
    if (px_name(p, &an) == 0) return px_fail(p, "expected an attribute name");
    px_skip_ws(p);
    if (p->i >= p->n || p->s[p->i] != '=')
      return px_fail(p, "expected '=' after an attribute name");
    p->i++;
    px_skip_ws(p);
    if (p->i >= p->n || (p->s[p->i] != '"' && p->s[p->i] != '\''))
      return px_fail(p, "expected a quoted attribute value");
    char q = p->s[p->i++];
    while (p->i < p->n && p->s[p->i] != q) {
      unsigned char c = (unsigned char)p->s[p->i];
      if (c == '<' || !px_char_ok(c))
        return px_fail(p, "'<' or a control byte in an attribute value");
      if (c == '&') {
        char u[4];
        size_t ul;
        vf_status st = px_entity(p, u, &ul);
        if (st) return st;
        continue;
      }
      p->i++;
    }
    if (p->i >= p->n) return px_fail(p, "unterminated attribute value");
    p->i++;
  }
}

/* Whitespace and comments (the prolog and the epilogue). */
static vf_status px_misc(px *p) {
  for (;;) {
    px_skip_ws(p);
    if (px_starts(p, "<!--")) {
      vf_status st = px_comment(p);
      if (st) return st;
      continue;
    }
    if (px_starts(p, "<!")) return px_fail(p, "DOCTYPE and other declarations are not accepted");
    if (px_starts(p, "<?")) return px_fail(p, "processing instructions are not accepted");
    return VF_OK;
  }
}

/* s3x_parse(): see s3_internal.h. */
vf_status s3x_parse(const char *xml, size_t len, s3x_doc *doc, vf_error *err) {
  memset(doc, 0, sizeof *doc);
  if (len > S3X_MAX_INPUT)
    return vf_error_set(err, VF_ECORRUPT, "XML: document of %zu bytes exceeds %zu", len,
                        S3X_MAX_INPUT);
  px p = {.s = xml, .n = len, .i = 0, .d = doc, .err = err};
  if (len >= 3 && memcmp(xml, "\xEF\xBB\xBF", 3) == 0) p.i = 3; /* UTF-8 BOM */
  vf_status st = VF_OK;
  if (px_starts(&p, "<?xml") && p.i + 5 < len && is_ws(xml[p.i + 5])) {
    const char *e = NULL;
    for (size_t k = p.i + 5; k + 2 <= len; k++)
      if (xml[k] == '?' && xml[k + 1] == '>') {
        e = xml + k;
        break;
      }
    if (!e) return px_fail(&p, "unterminated XML declaration");
    for (size_t k = p.i + 5; xml + k < e; k++)
      if (!px_char_ok((unsigned char)xml[k]) || xml[k] == '<' || xml[k] == '>')
        return px_fail(&p, "bad byte in the XML declaration");
    p.i = (size_t)(e - xml) + 2;
  }
  VF_TRY(px_misc(&p));
  if (p.i >= len || xml[p.i] != '<') {
    VF_FAIL(px_fail(&p, "expected the root element"));
  }
  /* stack of open elements: node index and qualified name span */
  struct {
    int node;
    const char *qn;
    size_t ql;
  } stack[S3X_MAX_DEPTH];
  int depth = 0;
  bool root_done = false;
  while (!root_done) {
    if (p.i >= len) {
      VF_FAIL(px_fail(&p, "unexpected end of document inside an element"));
    }
    if (xml[p.i] != '<') {
      VF_TRY(px_text(&p, depth > 0 ? stack[depth - 1].node : -1));
      continue;
    }
    if (px_starts(&p, "</")) {
      if (depth == 0) {
        VF_FAIL(px_fail(&p, "end tag without a start tag"));
      }
      p.i += 2;
      const char *qn;
      size_t ql = px_name(&p, &qn);
      if (ql != stack[depth - 1].ql || memcmp(qn, stack[depth - 1].qn, ql) != 0) {
        VF_FAIL(px_fail(&p, "end tag does not match the open element"));
      }
      px_skip_ws(&p);
      if (p.i >= len || xml[p.i] != '>') {
        VF_FAIL(px_fail(&p, "expected '>' to close an end tag"));
      }
      p.i++;
      if (--depth == 0) root_done = true;
      continue;
    }
    if (px_starts(&p, "<!--")) {
      if (depth == 0) {
        VF_FAIL(px_fail(&p, "expected the root element"));
      }
      VF_TRY(px_comment(&p));
      continue;
    }
    if (px_starts(&p, "<![CDATA[")) {
      if (depth == 0) {
        VF_FAIL(px_fail(&p, "CDATA outside the root element"));
      }
      p.i += 9;
      size_t b = p.i;
      while (p.i + 3 <= len && memcmp(xml + p.i, "]]>", 3) != 0) {
        if (!px_char_ok((unsigned char)xml[p.i])) {
          VF_FAIL(px_fail(&p, "control byte in CDATA"));
        }
        p.i++;
      }
      if (p.i + 3 > len) {
        VF_FAIL(px_fail(&p, "unterminated CDATA section"));
      }
      VF_TRY(node_append(&p, stack[depth - 1].node, xml + b, p.i - b));
      p.i += 3;
      continue;
    }
    if (px_starts(&p, "<!") || px_starts(&p, "<?")) {
      VF_FAIL(px_fail(&p, "declarations and processing instructions are not accepted in content"));
    }
    /* start tag */
    p.i++;
    const char *qn;
    size_t ql = px_name(&p, &qn);
    if (ql == 0) {
      VF_FAIL(px_fail(&p, "expected an element name after '<'"));
    }
    if (depth == S3X_MAX_DEPTH) {
      VF_FAIL(px_fail(&p, "elements nested deeper than 32 levels"));
    }
    int node = -1;
    VF_TRY(px_new_node(&p, qn, ql, depth > 0 ? stack[depth - 1].node : -1, &node));
    bool empty = false;
    VF_TRY(px_attrs(&p, &empty));
    if (empty) {
      if (depth == 0) root_done = true;
      continue;
    }
    stack[depth].node = node;
    stack[depth].qn = qn;
    stack[depth].ql = ql;
    depth++;
  }
  VF_TRY(px_misc(&p));
  if (p.i != len) {
    VF_FAIL(px_fail(&p, "content after the root element"));
  }
out:
  if (st != VF_OK) s3x_free(doc);
  return st;
}

void s3x_free(s3x_doc *doc) {
  if (!doc) return;
  for (size_t i = 0; i < doc->n; i++) {
    free(doc->nodes[i].name);
    free(doc->nodes[i].text);
  }
  free(doc->nodes);
  memset(doc, 0, sizeof *doc);
}

/* s3x_child(): see s3_internal.h. */
int s3x_child(const s3x_doc *doc, int node, const char *name, int from) {
  if (node < 0 || (size_t)node >= doc->n) return -1;
  int c = from < 0 ? doc->nodes[node].first_child : doc->nodes[from].next_sibling;
  for (; c >= 0; c = doc->nodes[c].next_sibling)
    if (strcmp(doc->nodes[c].name, name) == 0) return c;
  return -1;
}

/* s3x_child_text(): see s3_internal.h. */
const char *s3x_child_text(const s3x_doc *doc, int node, const char *name) {
  int c = s3x_child(doc, node, name, -1);
  return c < 0 ? NULL : doc->nodes[c].text;
}

static bool parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s) return false;
  uint64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return false;
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

/* s3_xml_list(): see s3_internal.h. */
vf_status s3_xml_list(const char *xml, size_t len, s3_list_page *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  s3x_doc d;
  vf_status st = s3x_parse(xml, len, &d, err);
  if (st) return st;
  if (d.n == 0 || strcmp(d.nodes[0].name, "ListBucketResult") != 0) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "ListObjectsV2: the root element is <%s>, not <ListBucketResult>",
                         d.n ? d.nodes[0].name : ""));
  }
  size_t cnt = 0;
  for (int c = s3x_child(&d, 0, "Contents", -1); c >= 0; c = s3x_child(&d, 0, "Contents", c))
    cnt++;
  out->objects = vf_calloc(cnt ? cnt : 1, sizeof *out->objects);
  if (!out->objects) {
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "ListObjectsV2: out of memory"));
  }
  for (int c = s3x_child(&d, 0, "Contents", -1); c >= 0; c = s3x_child(&d, 0, "Contents", c)) {
    const char *key = s3x_child_text(&d, c, "Key");
    const char *size = s3x_child_text(&d, c, "Size");
    if (!key || !*key) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT, "ListObjectsV2: entry %zu has no <Key>", out->n + 1));
    }
    if (strlen(key) != d.nodes[s3x_child(&d, c, "Key", -1)].text_len) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                           "ListObjectsV2: entry %zu has a key with a NUL character",
                           out->n + 1));
    }
    uint64_t sz;
    if (!parse_u64(size, &sz)) {
      VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                           "ListObjectsV2: key '%.200s' has no decimal <Size> (got '%.40s')", key,
                           size ? size : ""));
    }
    out->objects[out->n].key = vf_strdup(key);
    if (!out->objects[out->n].key) {
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "ListObjectsV2: out of memory"));
    }
    out->objects[out->n++].size = sz;
  }
  const char *tr = s3x_child_text(&d, 0, "IsTruncated");
  if (tr && strcmp(tr, "true") != 0 && strcmp(tr, "false") != 0) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "ListObjectsV2: <IsTruncated> is '%.20s', not true/false",
                         tr));
  }
  out->truncated = tr && strcmp(tr, "true") == 0;
  const char *tok = s3x_child_text(&d, 0, "NextContinuationToken");
  if (tok && *tok) {
    out->next_token = vf_strdup(tok);
    if (!out->next_token) {
      VF_FAIL(vf_error_set(err, VF_ENOMEM, "ListObjectsV2: out of memory"));
    }
  }
  if (out->truncated && !out->next_token)
    st =
        vf_error_set(err, VF_ECORRUPT,
                     "ListObjectsV2: the page is truncated but carries no <NextContinuationToken>");
out:
  s3x_free(&d);
  if (st) s3_list_page_free(out);
  return st;
}

void s3_list_page_free(s3_list_page *p) {
  if (!p) return;
  for (size_t i = 0; p->objects && i < p->n; i++)
    free(p->objects[i].key);
  free(p->objects);
  free(p->next_token);
  memset(p, 0, sizeof *p);
}

/* printable ASCII copy (other bytes as '?'), truncated */
static void copy_clean(char *dst, size_t cap, const char *src) {
  if (!dst || cap == 0) return;
  size_t k = 0;
  for (; src && *src && k + 1 < cap; src++)
    dst[k++] = (*src >= 0x20 && *src < 0x7f) ? *src : '?';
  dst[k] = 0;
}

/* s3_xml_error(): see s3_internal.h. */
bool s3_xml_error(const char *xml, size_t len, char *code, size_t code_cap, char *msg,
                  size_t msg_cap, char *region, size_t region_cap) {
  copy_clean(code, code_cap, "");
  copy_clean(msg, msg_cap, "");
  copy_clean(region, region_cap, "");
  if (!xml || len == 0) return false;
  s3x_doc d;
  if (s3x_parse(xml, len, &d, NULL) != VF_OK) return false;
  int e = -1;
  if (strcmp(d.nodes[0].name, "Error") == 0)
    e = 0;
  else if (strcmp(d.nodes[0].name, "ErrorResponse") == 0)
    e = s3x_child(&d, 0, "Error", -1);
  const char *c = e >= 0 ? s3x_child_text(&d, e, "Code") : NULL;
  bool ok = c && *c;
  if (ok) {
    copy_clean(code, code_cap, c);
    copy_clean(msg, msg_cap, s3x_child_text(&d, e, "Message"));
    copy_clean(region, region_cap, s3x_child_text(&d, e, "Region"));
  }
  s3x_free(&d);
  return ok;
}

/* s3_xml_upload_id(): see s3_internal.h. */
vf_status s3_xml_upload_id(const char *xml, size_t len, char **upload_id, vf_error *err) {
  *upload_id = NULL;
  s3x_doc d;
  vf_status st = s3x_parse(xml, len, &d, err);
  if (st) return st;
  const char *id = strcmp(d.nodes[0].name, "InitiateMultipartUploadResult") == 0
                       ? s3x_child_text(&d, 0, "UploadId")
                       : NULL;
  if (!id || !*id)
    st = vf_error_set(err, VF_ECORRUPT,
                      "InitiateMultipartUpload: no <UploadId> in the <%s> response",
                      d.nodes[0].name);
  else if (!(*upload_id = vf_strdup(id)))
    st = vf_error_set(err, VF_ENOMEM, "out of memory");
  s3x_free(&d);
  return st;
}

/* s3_xml_complete_ok(): see s3_internal.h. */
bool s3_xml_complete_ok(const char *xml, size_t len, char *code, size_t code_cap) {
  copy_clean(code, code_cap, "");
  s3x_doc d;
  if (s3x_parse(xml, len, &d, NULL) != VF_OK) {
    copy_clean(code, code_cap, "malformed response");
    return false;
  }
  bool ok = strcmp(d.nodes[0].name, "CompleteMultipartUploadResult") == 0;
  if (!ok) {
    const char *c = strcmp(d.nodes[0].name, "Error") == 0 ? s3x_child_text(&d, 0, "Code") : NULL;
    copy_clean(code, code_cap, c && *c ? c : d.nodes[0].name);
  }
  s3x_free(&d);
  return ok;
}

static void wipe_free(char *s) {
  if (!s) return;
  volatile char *p = s;
  while (*p)
    *p++ = 0;
  free(s);
}

void s3_keys_free(s3_keys *k) {
  if (!k) return;
  wipe_free(k->key_id);
  wipe_free(k->secret);
  wipe_free(k->token);
  memset(k, 0, sizeof *k);
}

/* s3_parse_iso8601(): see s3_internal.h. */
bool s3_parse_iso8601(const char *s, time_t *out) {
  if (!s) return false;
  int Y, M, D, h, m, sec, used = 0;
  if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &Y, &M, &D, &h, &m, &sec, &used) != 6 || used != 19)
    return false;
  const char *t = s + used;
  if (*t == '.') {
    t++;
    if (*t < '0' || *t > '9') return false;
    while (*t >= '0' && *t <= '9')
      t++;
  }
  if (strcmp(t, "Z") != 0 && strcmp(t, "+00:00") != 0) return false;
  if (Y < 1970 || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60) return false;
  struct tm tm = {
      .tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h, .tm_min = m, .tm_sec = sec};
  *out = timegm(&tm);
  return true;
}

/* s3_xml_sts(): see s3_internal.h. */
vf_status s3_xml_sts(const char *xml, size_t len, s3_keys *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  s3x_doc d;
  vf_status st = s3x_parse(xml, len, &d, err);
  if (st) return st;
  int r = strcmp(d.nodes[0].name, "AssumeRoleWithWebIdentityResponse") == 0
              ? s3x_child(&d, 0, "AssumeRoleWithWebIdentityResult", -1)
              : -1;
  int c = s3x_child(&d, r, "Credentials", -1);
  const char *ak = s3x_child_text(&d, c, "AccessKeyId"),
             *sk = s3x_child_text(&d, c, "SecretAccessKey");
  const char *tk = s3x_child_text(&d, c, "SessionToken"), *ex = s3x_child_text(&d, c, "Expiration");
  if (c < 0 || !ak || !*ak || !sk || !*sk) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "AssumeRoleWithWebIdentity: the <%s> response has no Credentials with an "
                         "AccessKeyId and a SecretAccessKey",
                         d.nodes[0].name));
  }
  if (ex && *ex && !s3_parse_iso8601(ex, &out->expires)) {
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "AssumeRoleWithWebIdentity: <Expiration> '%.40s' is not an ISO 8601 "
                         "UTC time",
                         ex));
  }
  out->key_id = vf_strdup(ak);
  out->secret = vf_strdup(sk);
  if (tk && *tk) out->token = vf_strdup(tk);
  if (!out->key_id || !out->secret || (tk && *tk && !out->token))
    st = vf_error_set(err, VF_ENOMEM, "out of memory");
out:
  s3x_free(&d);
  if (st) s3_keys_free(out);
  return st;
}
