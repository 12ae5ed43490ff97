/*
 * s3_creds.c — AWS credentials and region for s3:// (issue 7).
 *
 * The chain, first match wins (the order of the AWS CLI and SDKs, minus SSO / credential_process /
 * container credentials, which vforge refuses with a message instead of ignoring):
 *   0. AWS_NO_SIGN_REQUEST=true: anonymous, unsigned requests (public buckets), nothing else read
 *   1. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY [+ AWS_SESSION_TOKEN]
 *   2. profile AWS_PROFILE (else AWS_DEFAULT_PROFILE, else "default"): static keys from the shared
 *      credentials file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials), then the config
 *      file (AWS_CONFIG_FILE, else ~/.aws/config, sections "[profile NAME]" / "[default]");
 *      a profile with role_arn + web_identity_token_file goes to step 3 with those values
 *   3. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN [+ AWS_ROLE_SESSION_NAME] →
 *      STS AssumeRoleWithWebIdentity (POST, unsigned; https://sts.<region>.amazonaws.com, or
 *      AWS_ENDPOINT_URL_STS / AWS_ENDPOINT_URL)
 *   4. EC2 instance metadata, IMDSv2 (PUT /latest/api/token, then the role's credentials),
 *      unless AWS_EC2_METADATA_DISABLED=true; AWS_EC2_METADATA_SERVICE_ENDPOINT overrides
 *      http://169.254.169.254.  1 s connect timeout, one retry: a machine without IMDS fails in
 *      about two seconds
 *   otherwise: VF_ECONFIG listing every source tried.
 * Temporary credentials (STS, IMDS) are cached process-wide and refreshed 5 minutes before
 * their Expiration.  No secret (secret key, session token, web identity token) is ever put in a
 * message or a log line; the access key id is not either.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "io/s3_internal.h"

#define CRED_FILE_MAX ((size_t)1 << 20)
#define REFRESH_MARGIN_S 300

static bool env_true(const char *name) {
  const char *v = getenv(name);
  return v && strcasecmp(v, "true") == 0;
}

static const char *env_nonempty(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

/* ------------------------------------------------------------ INI files */

static void trim(const char **b, const char **e) {
  while (*b < *e && (**b == ' ' || **b == '\t' || **b == '\r'))
    (*b)++;
  while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
    (*e)--;
}

static bool span_eq_ci(const char *b, const char *e, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(e - b) == n && strncasecmp(b, lit, n) == 0;
}

/* s3_ini_profile(): see s3_internal.h. */
vf_status s3_ini_profile(const char *text, size_t len, const char *section, s3_profile *p,
                         vf_error *err) {
  const char *s = text, *end = text + len;
  bool in = false;
  size_t seclen = strlen(section);
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    const char *le = nl ? nl : end;
    const char *b = s, *e = le;
    s = nl ? nl + 1 : end;
    if (b < e && (*b == ' ' || *b == '\t')) continue; /* nested sub-section value */
    trim(&b, &e);
    if (b == e || *b == '#' || *b == ';') continue;
    if (*b == '[') {
      if (e[-1] != ']') continue; /* not a section header: ignored like the AWS CLI */
      const char *nb = b + 1, *ne = e - 1;
      trim(&nb, &ne);
      /* "profile   name": collapse the blanks after "profile" */
      if (seclen > 8 && strncmp(section, "profile ", 8) == 0 && ne - nb > 8 &&
          strncmp(nb, "profile", 7) == 0 && (nb[7] == ' ' || nb[7] == '\t')) {
        const char *q = nb + 7;
        while (q < ne && (*q == ' ' || *q == '\t'))
          q++;
        in = (size_t)(ne - q) == seclen - 8 && memcmp(q, section + 8, seclen - 8) == 0;
      } else {
        in = (size_t)(ne - nb) == seclen && memcmp(nb, section, seclen) == 0;
      }
      if (in) p->found = true;
      continue;
    }
    if (!in) continue;
    const char *eq = memchr(b, '=', (size_t)(e - b));
    if (!eq) continue;
    const char *kb = b, *ke = eq, *vb = eq + 1, *ve = e;
    trim(&kb, &ke);
    trim(&vb, &ve);
    char **slot = NULL;
    if (span_eq_ci(kb, ke, "aws_access_key_id"))
      slot = &p->key_id;
    else if (span_eq_ci(kb, ke, "aws_secret_access_key"))
      slot = &p->secret;
    else if (span_eq_ci(kb, ke, "aws_session_token"))
      slot = &p->token;
    else if (span_eq_ci(kb, ke, "region"))
      slot = &p->region;
    else if (span_eq_ci(kb, ke, "role_arn"))
      slot = &p->role_arn;
    else if (span_eq_ci(kb, ke, "web_identity_token_file"))
      slot = &p->web_identity_token_file;
    else if (span_eq_ci(kb, ke, "role_session_name"))
      slot = &p->role_session_name;
    else if (!p->unsupported &&
             (span_eq_ci(kb, ke, "source_profile") || span_eq_ci(kb, ke, "credential_source") ||
              span_eq_ci(kb, ke, "credential_process") || span_eq_ci(kb, ke, "sso_session") ||
              span_eq_ci(kb, ke, "sso_start_url"))) {
      p->unsupported = vf_strndup(kb, (size_t)(ke - kb));
      if (!p->unsupported) return vf_error_set(err, VF_ENOMEM, "out of memory");
    }
    if (!slot || *slot || vb == ve) continue;
    *slot = vf_strndup(vb, (size_t)(ve - vb));
    if (!*slot) return vf_error_set(err, VF_ENOMEM, "out of memory");
  }
  return VF_OK;
}

static void wipe_free(char *s) {
  if (!s) return;
  volatile char *q = s;
  while (*q)
    *q++ = 0;
  free(s);
}

void s3_profile_free(s3_profile *p) {
  if (!p) return;
  wipe_free(p->key_id);
  wipe_free(p->secret);
  wipe_free(p->token);
  free(p->region);
  free(p->role_arn);
  free(p->web_identity_token_file);
  free(p->role_session_name);
  free(p->unsupported);
  memset(p, 0, sizeof *p);
}

/* A whole small file (credentials, config, token).  VF_ENOTFOUND when it does not exist. */
static vf_status read_small(const char *path, char **out, size_t *len, vf_error *err) {
  *out = NULL;
  *len = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return vf_error_set(err, errno == ENOENT ? VF_ENOTFOUND : VF_EIO, "cannot read %s: %s", path,
                        VF_STRERROR(errno));
  vf_buf b;
  vf_buf_init(&b, CRED_FILE_MAX);
  char chunk[4096];
  size_t n;
  vf_status st = VF_OK;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
    VF_TRY(vf_buf_append(&b, chunk, n, err));
  if (ferror(fp)) VF_FAIL(vf_error_set(err, VF_EIO, "cannot read %s", path));
  fclose(fp);
  fp = NULL;
  VF_TRY(vf_buf_append(&b, "", 1, err)); /* NUL-terminated */
  *len = b.len - 1;
  *out = (char *)vf_buf_take(&b, &n);
out:
  if (fp) fclose(fp);
  if (st != VF_OK) {
    if (b.data) memset(b.data, 0, b.len);
    vf_buf_free(&b);
    return vf_error_prefix(err, "%s: ", path);
  }
  return VF_OK;
}

static void free_wiped(char *s, size_t n) {
  if (!s) return;
  volatile char *q = s;
  for (size_t i = 0; i < n; i++)
    q[i] = 0;
  free(s);
}

static char *home_path(const char *rel) {
  const char *home = env_nonempty("HOME");
  if (!home) return NULL;
  size_t n = strlen(home) + strlen(rel) + 2;
  char *p = vf_malloc(n);
  if (p) snprintf(p, n, "%s/%s", home, rel);
  return p;
}

static const char *profile_name(void) {
  const char *p = env_nonempty("AWS_PROFILE");
  if (!p) p = env_nonempty("AWS_DEFAULT_PROFILE");
  return p ? p : "default";
}

/* The profile from both files.  *cred_path / *conf_path get the paths read (for messages). */
static vf_status load_profile(s3_profile *p, char **cred_path, char **conf_path, vf_error *err) {
  memset(p, 0, sizeof *p);
  const char *name = profile_name();
  const char *cf = env_nonempty("AWS_SHARED_CREDENTIALS_FILE");
  const char *kf = env_nonempty("AWS_CONFIG_FILE");
  *cred_path = cf ? vf_strdup(cf) : home_path(".aws/credentials");
  *conf_path = kf ? vf_strdup(kf) : home_path(".aws/config");
  vf_status st = VF_OK;
  char *text = NULL; /* one file's text, wiped each pass and at out: */
  size_t len = 0;
  for (int pass = 0; pass < 2; pass++) {
    const char *path = pass == 0 ? *cred_path : *conf_path;
    if (!path) continue;
    vf_error e2;
    vf_status rs = read_small(path, &text, &len, &e2);
    if (rs == VF_ENOTFOUND) continue;
    if (rs != VF_OK) VF_FAIL(vf_error_set(err, rs, "%s", e2.msg));
    char sec[300];
    if (pass == 0 || strcmp(name, "default") == 0)
      snprintf(sec, sizeof sec, "%s", name);
    else
      snprintf(sec, sizeof sec, "profile %s", name);
    VF_TRY(s3_ini_profile(text, len, sec, p, err));
    if (pass == 1 && strcmp(name, "default") == 0 && !p->found)
      VF_TRY(s3_ini_profile(text, len, "profile default", p, err));
    free_wiped(text, len);
    text = NULL;
    len = 0;
  }
out:
  free_wiped(text, len);
  return st;
}

/* s3_region(): see s3_internal.h. */
char *s3_region(vf_error *err) {
  const char *r = env_nonempty("AWS_REGION");
  if (!r) r = env_nonempty("AWS_DEFAULT_REGION");
  if (r) return vf_strdup(r);
  s3_profile p;
  char *cp = NULL, *kp = NULL;
  vf_error e2;
  char *out = NULL;
  if (load_profile(&p, &cp, &kp, &e2) == VF_OK && p.region)
    out = vf_strdup(p.region);
  else
    out = vf_strdup("us-east-1");
  s3_profile_free(&p);
  free(cp);
  free(kp);
  if (!out) vf_error_set(err, VF_ENOMEM, "out of memory");
  return out;
}

/* ------------------------------------------------------------- IMDS JSON */

/* A JSON string at s[*i] ('"') decoded into a new heap string (\uXXXX as UTF-8; the document
 * was checked with vf_json_is_object first, so the escapes are well-formed). */
static char *json_str(const char *s, size_t len, size_t *i) {
  vf_buf b;
  VF_BUF_INIT(&b, VF_BUF_MAX_JSON_DOC);
  size_t k = *i + 1;
  while (k < len && s[k] != '"') {
    char c = s[k++];
    if (c != '\\') {
      if (vf_buf_append(&b, &c, 1, NULL)) goto out;
      continue;
    }
    if (k >= len) goto out;
    char e = s[k++];
    char out = e;
    switch (e) {
    case 'n': out = '\n'; break;
    case 't': out = '\t'; break;
    case 'r': out = '\r'; break;
    case 'b': out = '\b'; break;
    case 'f': out = '\f'; break;
    case 'u': {
      unsigned cp = 0;
      for (int h = 0; h < 4 && k < len; h++, k++) {
        char x = s[k];
        cp = cp * 16 + (unsigned)(x <= '9' ? x - '0' : (x | 0x20) - 'a' + 10);
      }
      char u[3];
      size_t ul = 0;
      if (cp < 0x80)
        u[ul++] = (char)cp;
      else if (cp < 0x800) {
        u[ul++] = (char)(0xC0 | (cp >> 6));
        u[ul++] = (char)(0x80 | (cp & 0x3F));
      } else {
        u[ul++] = (char)(0xE0 | (cp >> 12));
        u[ul++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[ul++] = (char)(0x80 | (cp & 0x3F));
      }
      if (vf_buf_append(&b, u, ul, NULL)) goto out;
      continue;
    }
    default: break;
    }
    if (vf_buf_append(&b, &out, 1, NULL)) goto out;
  }
  *i = k + 1;
  if (vf_buf_append(&b, "", 1, NULL)) goto out;
  size_t n;
  return (char *)vf_buf_take(&b, &n);
out: /* out of memory, or a truncated escape */
  if (b.data) memset(b.data, 0, b.len);
  vf_buf_free(&b);
  return NULL;
}

/* skip one JSON value starting at s[*i] (valid document) */
static void json_skip(const char *s, size_t len, size_t *i) {
  size_t k = *i;
  int depth = 0;
  do {
    char c = s[k];
    if (c == '"') {
      k++;
      while (k < len && s[k] != '"')
        k += s[k] == '\\' ? 2 : 1;
      k++;
    } else {
      if (c == '{' || c == '[')
        depth++;
      else if (c == '}' || c == ']')
        depth--;
      else if (depth == 0) { /* scalar */
        while (k < len && s[k] != ',' && s[k] != '}' && s[k] != ']' && s[k] != ' ' &&
               s[k] != '\n' && s[k] != '\r' && s[k] != '\t')
          k++;
        break;
      }
      k++;
    }
  } while (k < len && depth > 0);
  *i = k;
}

/* s3_imds_json(): see s3_internal.h. */
vf_status s3_imds_json(const char *json, size_t len, s3_keys *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  if (!vf_json_is_object(json, len))
    return vf_error_set(err, VF_ECORRUPT,
                        "the instance metadata credentials are not a JSON object");
  char *code = NULL, *exp = NULL;
  vf_status st = VF_OK;
  size_t i = 0;
  while (i < len && json[i] != '{')
    i++;
  i++;
  for (;;) {
    while (i < len && (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t' ||
                       json[i] == ','))
      i++;
    if (i >= len || json[i] == '}') break;
    char *key = json_str(json, len, &i);
    if (!key) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    while (i < len && json[i] != ':')
      i++;
    i++;
    while (i < len && (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t'))
      i++;
    char **slot = NULL;
    if (!strcmp(key, "AccessKeyId"))
      slot = &out->key_id;
    else if (!strcmp(key, "SecretAccessKey"))
      slot = &out->secret;
    else if (!strcmp(key, "Token"))
      slot = &out->token;
    else if (!strcmp(key, "Expiration"))
      slot = &exp;
    else if (!strcmp(key, "Code"))
      slot = &code;
    free(key);
    if (slot && i < len && json[i] == '"') {
      wipe_free(*slot);
      *slot = json_str(json, len, &i);
      if (!*slot) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
    } else {
      json_skip(json, len, &i);
    }
  }
  if (code && strcmp(code, "Success") != 0)
    VF_FAIL(vf_error_set(err, VF_ENET, "the instance metadata service answered Code \"%.60s\"",
                         code));
  if (!out->key_id || !*out->key_id || !out->secret || !*out->secret)
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "the instance metadata credentials lack AccessKeyId or SecretAccessKey"));
  if (exp && *exp && !s3_parse_iso8601(exp, &out->expires))
    VF_FAIL(vf_error_set(err, VF_ECORRUPT,
                         "the instance metadata Expiration '%.40s' is not ISO 8601 UTC", exp));
  if (out->token && !*out->token) {
    free(out->token);
    out->token = NULL;
  }
out:
  free(code);
  free(exp);
  if (st) s3_keys_free(out);
  return st;
}

/* ---------------------------------------------------------- the sources */

static bool keys_dup(s3_keys *k, const char *id, const char *secret, const char *token) {
  memset(k, 0, sizeof *k);
  k->key_id = vf_strdup(id);
  k->secret = vf_strdup(secret);
  if (token && *token) k->token = vf_strdup(token);
  if (!k->key_id || !k->secret || (token && *token && !k->token)) {
    s3_keys_free(k);
    return false;
  }
  return true;
}

/* an application/x-www-form-urlencoded pair appended to b */
static vf_status form_add(vf_buf *b, const char *name, const char *value, vf_error *err) {
  vf_status st = VF_OK;
  if (b->len) VF_TRY(vf_buf_append(b, "&", 1, err));
  VF_TRY(s3_uri_encode(b, name, strlen(name), false, err));
  VF_TRY(vf_buf_append(b, "=", 1, err));
  VF_TRY(s3_uri_encode(b, value, strlen(value), false, err));
out:
  return st;
}

static io_http_opts base_opts(void) {
  io_http_opts o;
  io_remote_http_opts(&o);
  return o;
}

/* The AssumeRoleWithWebIdentity request body. */
static vf_status web_identity_form(vf_buf *form, const char *role_arn, const char *sess,
                                   const char *tok, vf_error *err) {
  vf_status st = VF_OK;
  VF_TRY(form_add(form, "Action", "AssumeRoleWithWebIdentity", err));
  VF_TRY(form_add(form, "RoleArn", role_arn, err));
  VF_TRY(form_add(form, "RoleSessionName", sess, err));
  VF_TRY(form_add(form, "Version", "2011-06-15", err));
  VF_TRY(form_add(form, "WebIdentityToken", tok, err));
out:
  return st;
}

/* STS AssumeRoleWithWebIdentity. */
static vf_status web_identity(const char *token_file, const char *role_arn, const char *session,
                              const char *region, s3_keys *out, vf_error *err) {
  char *tok = NULL;
  size_t tlen = 0;
  vf_status st = read_small(token_file, &tok, &tlen, err);
  if (st) return vf_error_prefix(err, "web identity token file: ");
  while (tlen > 0 && (tok[tlen - 1] == '\n' || tok[tlen - 1] == '\r' || tok[tlen - 1] == ' '))
    tok[--tlen] = 0;
  if (tlen == 0) {
    free(tok);
    return vf_error_set(err, VF_ECONFIG, "the web identity token file %s is empty", token_file);
  }
  char sess[96];
  if (session && *session)
    snprintf(sess, sizeof sess, "%s", session);
  else
    snprintf(sess, sizeof sess, "vforge-%lld", (long long)time(NULL));
  char url[1024];
  const char *ep = env_nonempty("AWS_ENDPOINT_URL_STS");
  if (!ep) ep = env_nonempty("AWS_ENDPOINT_URL");
  if (ep) {
    size_t el = strlen(ep);
    while (el > 0 && ep[el - 1] == '/')
      el--;
    snprintf(url, sizeof url, "%.*s/", (int)(el < 900 ? el : 900), ep);
  } else {
    snprintf(url, sizeof url, "https://sts.%.100s.amazonaws.com/", region);
  }
  vf_buf form;
  VF_BUF_INIT(&form, VF_BUF_MAX_URL);
  io_http *h = NULL;
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, (size_t)1 << 20);
  st = web_identity_form(&form, role_arn, sess, tok, err);
  free_wiped(tok, tlen);
  io_http_opts o = base_opts();
  o.connect_timeout_s = 5;
  o.timeout_s = 30;
  VF_TRY(st);
  VF_TRY(io_http_open(NULL, &o, &h, err));
  {
    static const char *const hdrs[] = {"Accept: application/xml", NULL};
    io_http_req rq = {.method = "POST",
                      .path = "",
                      .url = url,
                      .headers = hdrs,
                      .body = form.data,
                      .body_len = form.len,
                      .content_type = "application/x-www-form-urlencoded"};
    st = io_http_request(h, &rq, &rs, err);
    if (st != VF_OK && rs.status >= 400) {
      char code[80], msg[200];
      if (s3_xml_error((const char *)rs.body.data, rs.body.len, code, sizeof code, msg, sizeof msg,
                       NULL, 0))
        st = vf_error_set(err, VF_ENET,
                          "STS AssumeRoleWithWebIdentity for role %.200s at %s: HTTP %ld %s: %s",
                          role_arn, url, rs.status, code, msg);
      else
        st = vf_error_set(err, VF_ENET,
                          "STS AssumeRoleWithWebIdentity for role %.200s at %s: HTTP %ld", role_arn,
                          url, rs.status);
    } else if (st != VF_OK) {
      st = vf_error_prefix(err, "STS AssumeRoleWithWebIdentity: ");
    }
    VF_TRY(st);
  }
  st = s3_xml_sts((const char *)rs.body.data, rs.body.len, out, err);
  if (st) vf_error_prefix(err, "STS at %s: ", url);
out:
  if (form.data) memset(form.data, 0, form.len);
  vf_buf_free(&form);
  if (rs.body.data) memset(rs.body.data, 0, rs.body.len);
  io_http_resp_free(&rs);
  io_http_close(h);
  return st;
}

/* IMDSv2. */
static vf_status imds(s3_keys *out, char *role_out, size_t role_cap, vf_error *err) {
  const char *ep = env_nonempty("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (!ep) ep = "http://169.254.169.254";
  io_http_opts o = base_opts();
  o.connect_timeout_s = 1;
  o.timeout_s = 3;
  o.max_retries = 1;
  o.backoff_base_s = 0.1;
  o.backoff_max_s = 0.2;
  io_http *h = NULL;
  vf_status st = io_http_open(ep, &o, &h, err);
  if (st) return st;
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, (size_t)1 << 16);
  char tokhdr[512] = "", role[256] = "";
  io_http_req put = {
      .method = "PUT",
      .path = "/latest/api/token",
      .headers = (const char *const[]){"X-aws-ec2-metadata-token-ttl-seconds: 21600", NULL}};
  const char *hdrs[] = {tokhdr, NULL};
  VF_TRY(io_http_request(h, &put, &rs, err));
  if (rs.body.len == 0 || rs.body.len > 400)
    VF_FAIL(vf_error_set(err, VF_ENET,
                         "the instance metadata service at %s returned no session token", ep));
  snprintf(tokhdr, sizeof tokhdr, "X-aws-ec2-metadata-token: %.*s", (int)rs.body.len,
           rs.body.data);
  {
    io_http_req get = {
        .method = "GET", .path = "/latest/meta-data/iam/security-credentials/", .headers = hdrs};
    VF_TRY(io_http_request(h, &get, &rs, err));
    {
      size_t n = 0;
      while (n < rs.body.len && n + 1 < sizeof role && rs.body.data[n] != '\n' &&
             rs.body.data[n] != '\r')
        n++;
      memcpy(role, rs.body.data, n);
      role[n] = 0;
      bool ok = n > 0;
      for (size_t k = 0; k < n; k++)
        if (!((role[k] >= 'A' && role[k] <= 'Z') || (role[k] >= 'a' && role[k] <= 'z') ||
              (role[k] >= '0' && role[k] <= '9') || strchr("+=,.@_-", role[k])))
          ok = false;
      if (!ok)
        VF_FAIL(vf_error_set(err, VF_ENET,
                             "the instance metadata service at %s lists no usable IAM role", ep));
    }
  }
  {
    char path[400];
    snprintf(path, sizeof path, "/latest/meta-data/iam/security-credentials/%s", role);
    io_http_req get = {.method = "GET", .path = path, .headers = hdrs};
    VF_TRY(io_http_request(h, &get, &rs, err));
    VF_TRY(s3_imds_json((const char *)rs.body.data, rs.body.len, out, err));
  }
  snprintf(role_out, role_cap, "%s", role);
out:
  memset(tokhdr, 0, sizeof tokhdr);
  if (rs.body.data) memset(rs.body.data, 0, rs.body.len);
  io_http_resp_free(&rs);
  io_http_close(h);
  return st;
}

/* The chain, uncached.  `tried` collects what was looked at, for the final message. */
static vf_status chain(io_s3_creds *c, vf_error *err) {
  char tried[700] = "";
  size_t tl = 0;
#define TRIED(...)                                                                                 \
  do {                                                                                             \
    int k_ = snprintf(tried + tl, sizeof tried - tl, __VA_ARGS__);                                 \
    if (k_ > 0) tl = tl + (size_t)k_ < sizeof tried ? tl + (size_t)k_ : sizeof tried - 1;          \
  } while (0)
  if (env_true("AWS_NO_SIGN_REQUEST")) {
    snprintf(c->source, sizeof c->source, "none (AWS_NO_SIGN_REQUEST=true: unsigned requests)");
    return VF_OK;
  }
  /* 1. environment */
  const char *ak = env_nonempty("AWS_ACCESS_KEY_ID"), *sk = env_nonempty("AWS_SECRET_ACCESS_KEY");
  if (ak && sk) {
    if (!keys_dup(&c->keys, ak, sk, env_nonempty("AWS_SESSION_TOKEN")))
      return vf_error_set(err, VF_ENOMEM, "out of memory");
    snprintf(c->source, sizeof c->source,
             "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY%s)",
             c->keys.token ? ", AWS_SESSION_TOKEN" : "");
    return VF_OK;
  }
  if (ak || sk)
    return vf_error_set(err, VF_ECONFIG, "%s is set but %s is not: set both (or neither)",
                        ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                        ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
  TRIED("environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY unset)");
  /* 2. profile */
  s3_profile p;
  char *cpath = NULL, *kpath = NULL;
  vf_status st = VF_OK;
  VF_TRY(load_profile(&p, &cpath, &kpath, err));
  const char *pname = profile_name();
  bool named = env_nonempty("AWS_PROFILE") || env_nonempty("AWS_DEFAULT_PROFILE");
  char *wi_file = NULL, *wi_role = NULL, *wi_sess = NULL;
  {
    if (p.key_id && p.secret) {
      if (!keys_dup(&c->keys, p.key_id, p.secret, p.token))
        st = vf_error_set(err, VF_ENOMEM, "out of memory");
      else
        snprintf(c->source, sizeof c->source, "profile '%.60s' (shared credentials/config file)",
                 pname);
      goto out;
    }
    if (p.key_id || p.secret) {
      st = vf_error_set(err, VF_ECONFIG, "profile '%s' (%s / %s) has %s but not %s", pname,
                        cpath ? cpath : "-", kpath ? kpath : "-",
                        p.key_id ? "aws_access_key_id" : "aws_secret_access_key",
                        p.key_id ? "aws_secret_access_key" : "aws_access_key_id");
      goto out;
    }
    if (p.role_arn && p.web_identity_token_file) {
      wi_file = p.web_identity_token_file;
      wi_role = p.role_arn;
      wi_sess = p.role_session_name;
    } else if (p.unsupported || p.role_arn) {
      st = vf_error_set(err, VF_ECONFIG,
                        "profile '%s' uses %s, which vforge does not support: give static keys "
                        "(aws_access_key_id / aws_secret_access_key), role_arn with "
                        "web_identity_token_file, or the AWS_* environment variables",
                        pname,
                        p.unsupported ? p.unsupported : "role_arn without web_identity_token_file");
      goto out;
    } else if (named && !p.found) {
      st =
          vf_error_set(err, VF_ECONFIG, "AWS profile '%s' is not in %s nor in %s", pname,
                       cpath ? cpath : "(no credentials file)", kpath ? kpath : "(no config file)");
      goto out;
    }
    TRIED(", profile '%s' (%s, %s)", pname, cpath ? cpath : "no HOME", kpath ? kpath : "no HOME");
  }
  /* 3. web identity */
  if (!wi_file) {
    const char *f = env_nonempty("AWS_WEB_IDENTITY_TOKEN_FILE"), *r = env_nonempty("AWS_ROLE_ARN");
    if (f && r) {
      wi_file = (char *)f;
      wi_role = (char *)r;
      wi_sess = (char *)env_nonempty("AWS_ROLE_SESSION_NAME");
    } else if (f || r) {
      st = vf_error_set(err, VF_ECONFIG, "%s is set but %s is not (web identity needs both)",
                        f ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "AWS_ROLE_ARN",
                        f ? "AWS_ROLE_ARN" : "AWS_WEB_IDENTITY_TOKEN_FILE");
      goto out;
    }
  }
  if (wi_file) {
    VF_TRY(web_identity(wi_file, wi_role, wi_sess, c->region, &c->keys, err));
    snprintf(c->source, sizeof c->source,
             "web identity (STS AssumeRoleWithWebIdentity, role %.100s)", wi_role);
    goto out;
  }
  TRIED(", web identity (AWS_WEB_IDENTITY_TOKEN_FILE/AWS_ROLE_ARN unset)");
  /* 4. IMDSv2 */
  if (env_true("AWS_EC2_METADATA_DISABLED")) {
    TRIED(", instance metadata (AWS_EC2_METADATA_DISABLED=true)");
  } else {
    vf_error e2;
    char role[256] = "";
    if (imds(&c->keys, role, sizeof role, &e2) == VF_OK) {
      snprintf(c->source, sizeof c->source, "the instance metadata service (IMDSv2, role %.100s)",
               role);
      goto out;
    }
    TRIED(", instance metadata (%.300s)", e2.msg);
  }
  st = vf_error_set(
      err, VF_ECONFIG,
      "no AWS credentials found; tried: %s.  Set AWS_ACCESS_KEY_ID and "
      "AWS_SECRET_ACCESS_KEY, a profile, or AWS_NO_SIGN_REQUEST=true for a public bucket",
      tried);
out:
  s3_profile_free(&p);
  free(cpath);
  free(kpath);
  return st;
#undef TRIED
}

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static bool cache_valid;
static io_s3_creds cache;

static void creds_clear(io_s3_creds *c) {
  s3_keys_free(&c->keys);
  free(c->sigv4);
  free(c->region);
  memset(c, 0, sizeof *c);
}

void s3_creds_forget(void) {
  pthread_mutex_lock(&cache_mu);
  creds_clear(&cache);
  cache_valid = false;
  pthread_mutex_unlock(&cache_mu);
}

/* The region, the credentials and the SigV4 scope into an empty cache entry. */
static vf_status creds_fill(io_s3_creds *c, vf_error *err) {
  vf_status st = VF_OK;
  c->region = s3_region(err);
  if (!c->region) VF_FAIL(VF_ENOMEM);
  VF_TRY(chain(c, err));
  size_t n = strlen(c->region) + 16;
  c->sigv4 = vf_malloc(n);
  if (!c->sigv4) VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  snprintf(c->sigv4, n, "aws:amz:%s:s3", c->region);
out:
  return st;
}

/* s3_creds_get(): see s3_internal.h. */
vf_status s3_creds_get(io_s3_creds *out, vf_error *err) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&cache_mu);
  vf_status st = VF_OK;
  if (cache_valid && cache.keys.expires && time(NULL) + REFRESH_MARGIN_S >= cache.keys.expires) {
    creds_clear(&cache);
    cache_valid = false;
  }
  if (!cache_valid) {
    st = creds_fill(&cache, err);
    if (st != VF_OK) {
      creds_clear(&cache);
      goto out;
    }
    cache_valid = true;
  }
  out->region = vf_strdup(cache.region);
  out->sigv4 = vf_strdup(cache.sigv4);
  memcpy(out->source, cache.source, sizeof out->source);
  out->keys.expires = cache.keys.expires;
  bool ok = out->region && out->sigv4;
  if (cache.keys.key_id &&
      !keys_dup(&out->keys, cache.keys.key_id, cache.keys.secret, cache.keys.token))
    ok = false;
  out->keys.expires = cache.keys.expires;
  if (!ok) {
    creds_clear(out);
    VF_FAIL(vf_error_set(err, VF_ENOMEM, "out of memory"));
  }
out:
  pthread_mutex_unlock(&cache_mu);
  return st;
}

/* io_s3_creds_free(): see remote_internal.h. */
void io_s3_creds_free(io_s3_creds *c) {
  if (!c) return;
  creds_clear(c);
  free(c);
}
