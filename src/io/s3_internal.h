/*
 * s3_internal.h — the pieces of the S3 backend (issue 7), private to src/io/s3*.c, the unit
 * tests (tests/io/test_s3.c) and the fuzzer (tests/fuzz/fuzz_s3xml.c).
 *
 *   s3_xml.c    a small strict XML reader for the S3 / STS responses vforge consumes:
 *               ListObjectsV2, Error, InitiateMultipartUpload, CompleteMultipartUpload,
 *               AssumeRoleWithWebIdentity.  No DTDs, no external entities, bounded depth.
 *   s3_creds.c  the credential chain (environment, shared credentials/config profile, web
 *               identity via STS, IMDSv2), the region, the INI and IMDS JSON readers.
 *   s3.c        endpoint/URL building, SigV4 percent-encoding, listing, HEAD/open, upload.
 */
#ifndef VFORGE_IO_S3_INTERNAL_H
#define VFORGE_IO_S3_INTERNAL_H

#include <time.h>

#include "io/remote_internal.h"

/* ------------------------------------------------------------------ XML */

/* A parsed document: nodes in document order; node 0 is the root element. */
typedef struct s3x_node {
  char *name; /* local name (any "prefix:" dropped) */
  char *text; /* decoded character data directly inside the element ("" when none) */
  size_t text_len, text_cap;
  int parent, first_child, next_sibling; /* -1 when none */
} s3x_node;

typedef struct s3x_doc {
  s3x_node *nodes;
  size_t n, cap;
} s3x_doc;

#define S3X_MAX_DEPTH 32
#define S3X_MAX_INPUT ((size_t)64 << 20)

/*! s3x_parse() : parse one XML document (an optional <?xml ...?> declaration, comments,
 *  one root element with attributes, character data, CDATA sections, the five predefined
 *  entities and numeric character references).  DOCTYPE, processing instructions other than
 *  the declaration, mismatched or unclosed tags, more than S3X_MAX_DEPTH levels, NUL bytes and
 *  content after the root are refused.
 *  @return : VF_ECORRUPT naming the byte offset and what was expected; VF_ENOMEM. */
vf_status s3x_parse(const char *xml, size_t len, s3x_doc *doc, vf_error *err);
void s3x_free(s3x_doc *doc);
/*! s3x_child() : the first child of `node` named `name` at or after child `from` (-1: the first
 *  child), or -1. */
int s3x_child(const s3x_doc *doc, int node, const char *name, int from);
/*! s3x_child_text() : the text of the first child named `name`, or NULL. */
const char *s3x_child_text(const s3x_doc *doc, int node, const char *name);

/* ListObjectsV2 */
typedef struct s3_object {
  char *key;
  uint64_t size;
} s3_object;

typedef struct s3_list_page {
  s3_object *objects;
  size_t n;
  bool truncated;
  char *next_token; /* NextContinuationToken, NULL when absent */
} s3_list_page;

/*! s3_xml_list() : a ListBucketResult page.  Every <Contents> must carry a non-empty <Key> and
 *  a decimal <Size>; IsTruncated=true needs a NextContinuationToken.
 *  @return : VF_ECORRUPT naming what is wrong; VF_ENOMEM. */
vf_status s3_xml_list(const char *xml, size_t len, s3_list_page *out, vf_error *err);
void s3_list_page_free(s3_list_page *p);

/*! s3_xml_error() : the Code and Message of an S3 <Error> or STS <ErrorResponse><Error>
 *  document (copied, truncated to the capacities; printable ASCII only).  Also the <Region> of a
 *  wrong-region answer when `region` is non-NULL.  @return : false when `xml` is not one. */
bool s3_xml_error(const char *xml, size_t len, char *code, size_t code_cap, char *msg,
                  size_t msg_cap, char *region, size_t region_cap);

/*! s3_xml_upload_id() : the UploadId of an InitiateMultipartUploadResult (caller frees). */
vf_status s3_xml_upload_id(const char *xml, size_t len, char **upload_id, vf_error *err);

/*! s3_xml_complete_ok() : true when `xml` is a CompleteMultipartUploadResult (S3 may answer
 *  200 with an <Error> body after the fact; that is false, with the code in `code`). */
bool s3_xml_complete_ok(const char *xml, size_t len, char *code, size_t code_cap);

/* Temporary or static credentials. */
typedef struct s3_keys {
  char *key_id, *secret, *token; /* token NULL when none */
  time_t expires;                /* 0: does not expire */
} s3_keys;
void s3_keys_free(s3_keys *k); /* wipes the secrets */

/*! s3_xml_sts() : the Credentials of an AssumeRoleWithWebIdentityResponse.  An empty
 *  SessionToken is treated as none. */
vf_status s3_xml_sts(const char *xml, size_t len, s3_keys *out, vf_error *err);

/*! s3_parse_iso8601() : "YYYY-MM-DDTHH:MM:SS[.fff]Z" as UTC seconds; false when malformed. */
bool s3_parse_iso8601(const char *s, time_t *out);

/* ---------------------------------------------------------- credentials */

/* One profile's settings from the shared credentials and config files. */
typedef struct s3_profile {
  char *key_id, *secret, *token, *region;
  char *role_arn, *web_identity_token_file, *role_session_name;
  char *unsupported; /* the first setting vforge cannot use (source_profile, sso_*,
                        credential_process), for the error message; NULL when none */
  bool found;        /* the section exists */
} s3_profile;

/*! s3_ini_profile() : merge the settings of section `section` of the INI text into `p`
 *  (already-set fields are kept: read the credentials file first, then the config file).
 *  Full-line comments (# ;), indented sub-section lines and blank lines are skipped; names are
 *  case-insensitive, values trimmed. */
vf_status s3_ini_profile(const char *text, size_t len, const char *section, s3_profile *p,
                         vf_error *err);
void s3_profile_free(s3_profile *p);

/*! s3_imds_json() : AccessKeyId / SecretAccessKey / Token / Expiration of the IMDS role
 *  credentials JSON document (Code must be "Success" when present). */
vf_status s3_imds_json(const char *json, size_t len, s3_keys *out, vf_error *err);

/* What io_s3_resolve hands out (io_s3_creds in remote_internal.h). */
struct io_s3_creds {
  s3_keys keys; /* key_id NULL: anonymous (AWS_NO_SIGN_REQUEST=true) */
  char *sigv4;  /* "aws:amz:<region>:s3" */
  char *region;
  char source[160]; /* where the credentials came from, for messages (no secret) */
};

/*! s3_creds_get() : the credentials and region from the chain (cached process-wide; temporary
 *  credentials are refreshed 5 minutes before they expire).
 *  @return : VF_ENET/VF_ECONFIG naming the sources tried, never a secret. */
vf_status s3_creds_get(io_s3_creds *out, vf_error *err);
/*! s3_creds_forget() : drop the cache (tests that change the environment). */
void s3_creds_forget(void);
/*! s3_region() : the region (AWS_REGION, AWS_DEFAULT_REGION, the profile's, us-east-1). */
char *s3_region(vf_error *err);

/* ---------------------------------------------------------------- s3.c */

/*! s3_uri_encode() : SigV4 percent-encoding of s[0..n) appended to `b`: A-Z a-z 0-9 - _ . ~
 *  kept, '/' kept when keep_slash, every other byte %XX (uppercase hex). */
vf_status s3_uri_encode(vf_buf *b, const char *s, size_t n, bool keep_slash, vf_error *err);

/* One query parameter; s3_query() sorts by name (then value) and encodes both. */
typedef struct s3_param {
  const char *name, *value;
} s3_param;
/*! s3_query() : "?a=1&b=x%2Fy" (canonical SigV4 order and encoding) appended to `b`. */
vf_status s3_query(vf_buf *b, s3_param *params, size_t n, vf_error *err);

/*! s3_object_url() : the URL of bucket/key (key may be "") for `region`: path-style on
 *  AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else virtual-host on s3.<region>.amazonaws.com (path
 *  style there for bucket names with dots, which break the TLS wildcard).  Caller frees. */
char *s3_object_url(const char *bucket, const char *key, const char *region, vf_error *err);

#endif
