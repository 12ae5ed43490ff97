/* Unit tests for the S3 backend's offline pieces (src/io/s3*.c): the strict XML reader and the
 * ListObjectsV2 / Error / multipart / STS documents, the INI profile reader, the IMDS JSON,
 * SigV4 percent-encoding and query order, URL building (path-style vs virtual-host), and the
 * credential chain's environment / profile / no-credentials branches (IMDS disabled: no
 * network).  The live checks against radosgw are in test_s3.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/s3_internal.h"
#include "vf_test.h"

static const char *LIST1 =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    "<Name>b</Name><Prefix>data/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"
    "<IsTruncated>true</IsTruncated>"
    "<Contents><Key>data/a&amp;b.parquet</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
    "<ETag>&quot;abc&quot;</ETag><Size>123</Size><StorageClass>STANDARD</StorageClass></Contents>\n"
    "  <Contents><Key>data/&#x00e9;t&#233; "
    "x.parquet</Key><Size>18446744073709551615</Size></Contents>"
    "<!-- a comment --><NextContinuationToken>1/tok+en=</NextContinuationToken>"
    "</ListBucketResult>\n";

VF_TEST(test_xml_list_page) {
  s3_list_page pg;
  vf_error err;
  CHECK_OK(s3_xml_list(LIST1, strlen(LIST1), &pg, &err));
  CHECK_EQ_INT(pg.n, 2);
  if (pg.n == 2) {
    CHECK_EQ_STR(pg.objects[0].key, "data/a&b.parquet");
    CHECK_EQ_INT(pg.objects[0].size, 123);
    CHECK_EQ_STR(pg.objects[1].key, "data/\xc3\xa9t\xc3\xa9 x.parquet");
    CHECK(pg.objects[1].size == UINT64_MAX);
  }
  CHECK(pg.truncated);
  CHECK_EQ_STR(pg.next_token, "1/tok+en=");
  s3_list_page_free(&pg);

  const char *last = "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>";
  CHECK_OK(s3_xml_list(last, strlen(last), &pg, &err));
  CHECK_EQ_INT(pg.n, 0);
  CHECK(!pg.truncated && !pg.next_token);
  s3_list_page_free(&pg);
  /* a key of blanks is kept as is; CDATA is text */
  const char *cd = "<ListBucketResult><Contents><Key><![CDATA[a<b>]]>  </Key><Size>0</Size>"
                   "</Contents></ListBucketResult>";
  CHECK_OK(s3_xml_list(cd, strlen(cd), &pg, &err));
  if (pg.n == 1) CHECK_EQ_STR(pg.objects[0].key, "a<b>  ");
  s3_list_page_free(&pg);
}

VF_TEST(test_xml_list_refused) {
  const char *bad[] = {
      "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>", /* no key */
      "<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>",
      "<ListBucketResult><Contents><Key>k</Key><Size>18446744073709551616</Size></Contents></"
      "ListBucketResult>",
      "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", /* no token */
      "<ListBucketResult><IsTruncated>yes</IsTruncated></ListBucketResult>",
      "<Error><Code>NoSuchBucket</Code></Error>", /* wrong root */
      "<ListBucketResult><Contents><Key>k&#0;</Key><Size>1</Size></Contents></ListBucketResult>",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    s3_list_page pg;
    vf_error err;
    vf_error_clear(&err);
    vf_status st = s3_xml_list(bad[i], strlen(bad[i]), &pg, &err);
    if (st != VF_ECORRUPT) vf_test_fail(__FILE__, __LINE__, "case %zu: %s", i, vf_status_name(st));
    CHECK(err.msg[0] != 0);
    CHECK(pg.objects == NULL && pg.n == 0);
  }
}

VF_TEST(test_xml_strict) {
  const char *bad[] = {
      "",
      "   ",
      "<a>",
      "<a></b>",
      "<a><b></a></b>",
      "<a></a><b></b>",
      "<a></a>trailing",
      "text<a></a>",
      "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>",
      "<a>&unknown;</a>",
      "<a>& </a>",
      "<a>&#xD800;</a>",
      "<a>&#x110000;</a>",
      "<a>\x01</a>",
      "<a x=\"1></a>",
      "<a x=1></a>",
      "<a><?pi x?></a>",
      "<a><!-- unterminated </a>",
      "<a><![CDATA[x</a>",
      "</a>",
      "<1a></1a>",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    s3x_doc d;
    vf_error err;
    vf_error_clear(&err);
    vf_status st = s3x_parse(bad[i], strlen(bad[i]), &d, &err);
    if (st != VF_ECORRUPT)
      vf_test_fail(__FILE__, __LINE__, "case %zu '%s': %s", i, bad[i], vf_status_name(st));
    CHECK(strstr(err.msg, "XML: byte") != NULL);
    CHECK(d.nodes == NULL && d.n == 0);
  }
  /* NUL inside */
  s3x_doc d;
  vf_error err;
  CHECK_STATUS(s3x_parse("<a>x\0y</a>", 10, &d, &err), VF_ECORRUPT);
  /* depth limit: 32 levels pass, 33 fail */
  char deep[600];
  for (int lv = 32; lv <= 33; lv++) {
    size_t n = 0;
    for (int k = 0; k < lv; k++)
      n += (size_t)snprintf(deep + n, sizeof deep - n, "<e>");
    for (int k = 0; k < lv; k++)
      n += (size_t)snprintf(deep + n, sizeof deep - n, "</e>");
    vf_status st = s3x_parse(deep, n, &d, &err);
    CHECK_STATUS(st, lv == 32 ? VF_OK : VF_ECORRUPT);
    s3x_free(&d);
  }
  /* accepted: BOM, declaration, attributes with both quotes, empty element, prefixes */
  const char *ok = "\xEF\xBB\xBF<?xml version='1.0'?>\n<!-- c --><s:R a='1' b=\"&lt;2\"><s:E/>"
                   "<F>x&gt;y</F></s:R>\n<!-- end -->\n";
  CHECK_OK(s3x_parse(ok, strlen(ok), &d, &err));
  CHECK_EQ_INT(d.n, 3);
  if (d.n == 3) {
    CHECK_EQ_STR(d.nodes[0].name, "R");
    CHECK(s3x_child(&d, 0, "E", -1) == 1);
    CHECK_EQ_STR(s3x_child_text(&d, 0, "F"), "x>y");
    CHECK(s3x_child_text(&d, 0, "G") == NULL);
  }
  s3x_free(&d);
}

VF_TEST(test_xml_error_docs) {
  char code[64], msg[128], region[32];
  const char *e1 =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SignatureDoesNotMatch</Code>"
      "<Message>The request signature we calculated does not match</Message>"
      "<StringToSign>AWS4-HMAC-SHA256\n...</StringToSign></Error>";
  CHECK(s3_xml_error(e1, strlen(e1), code, sizeof code, msg, sizeof msg, region, sizeof region));
  CHECK_EQ_STR(code, "SignatureDoesNotMatch");
  CHECK_EQ_STR(msg, "The request signature we calculated does not match");
  CHECK_EQ_STR(region, "");
  const char *e2 = "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error>"
                   "<Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>bad</Message>"
                   "</Error><RequestId>x</RequestId></ErrorResponse>";
  CHECK(s3_xml_error(e2, strlen(e2), code, sizeof code, msg, sizeof msg, NULL, 0));
  CHECK_EQ_STR(code, "InvalidIdentityToken");
  const char *e3 =
      "<Error><Code>AuthorizationHeaderMalformed</Code><Region>eu-west-1</Region></Error>";
  CHECK(s3_xml_error(e3, strlen(e3), code, 8, msg, sizeof msg, region, sizeof region));
  CHECK_EQ_STR(code, "Authori"); /* truncated to the capacity */
  CHECK_EQ_STR(region, "eu-west-1");
  CHECK(!s3_xml_error("<Error></Error>", 15, code, sizeof code, msg, sizeof msg, NULL, 0));
  CHECK(!s3_xml_error("not xml", 7, code, sizeof code, msg, sizeof msg, NULL, 0));
  CHECK(!s3_xml_error(NULL, 0, code, sizeof code, msg, sizeof msg, NULL, 0));
}

VF_TEST(test_xml_multipart_docs) {
  vf_error err;
  char *id = NULL;
  const char *init = "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
                     "<UploadId>2~abc/def</UploadId></InitiateMultipartUploadResult>";
  CHECK_OK(s3_xml_upload_id(init, strlen(init), &id, &err));
  CHECK_EQ_STR(id, "2~abc/def");
  free(id);
  const char *noid =
      "<InitiateMultipartUploadResult><UploadId></UploadId></InitiateMultipartUploadResult>";
  CHECK_STATUS(s3_xml_upload_id(noid, strlen(noid), &id, &err), VF_ECORRUPT);
  CHECK(id == NULL);
  char code[64];
  const char *done =
      "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>";
  CHECK(s3_xml_complete_ok(done, strlen(done), code, sizeof code));
  const char *late = "<Error><Code>InternalError</Code></Error>";
  CHECK(!s3_xml_complete_ok(late, strlen(late), code, sizeof code));
  CHECK_EQ_STR(code, "InternalError");
  CHECK(!s3_xml_complete_ok("<x", 2, code, sizeof code));
}

VF_TEST(test_xml_sts) {
  const char *doc =
      "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
      "<AssumeRoleWithWebIdentityResult><SubjectFromWebIdentityToken>s</"
      "SubjectFromWebIdentityToken>"
      "<Credentials><SessionToken>TOK</SessionToken><SecretAccessKey>SEC</SecretAccessKey>"
      "<Expiration>2030-01-02T03:04:05Z</Expiration><AccessKeyId>AK</AccessKeyId></Credentials>"
      "</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
  s3_keys k;
  vf_error err;
  CHECK_OK(s3_xml_sts(doc, strlen(doc), &k, &err));
  CHECK_EQ_STR(k.key_id, "AK");
  CHECK_EQ_STR(k.secret, "SEC");
  CHECK_EQ_STR(k.token, "TOK");
  CHECK_EQ_INT(k.expires, 1893553445);
  s3_keys_free(&k);
  CHECK(k.key_id == NULL);
  const char *notok =
      "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
      "<AccessKeyId>AK</AccessKeyId><SecretAccessKey>S</SecretAccessKey><SessionToken/>"
      "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
  CHECK_OK(s3_xml_sts(notok, strlen(notok), &k, &err));
  CHECK(k.token == NULL && k.expires == 0);
  s3_keys_free(&k);
  const char *nosec =
      "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
      "<AccessKeyId>AK</AccessKeyId></Credentials></AssumeRoleWithWebIdentityResult>"
      "</AssumeRoleWithWebIdentityResponse>";
  CHECK_STATUS(s3_xml_sts(nosec, strlen(nosec), &k, &err), VF_ECORRUPT);
}

VF_TEST(test_iso8601) {
  time_t t;
  CHECK(s3_parse_iso8601("1970-01-01T00:00:00Z", &t) && t == 0);
  CHECK(s3_parse_iso8601("2030-01-02T03:04:05.123Z", &t) && t == 1893553445);
  CHECK(s3_parse_iso8601("2030-01-02T03:04:05+00:00", &t) && t == 1893553445);
  CHECK(!s3_parse_iso8601("2030-01-02 03:04:05Z", &t));
  CHECK(!s3_parse_iso8601("2030-01-02T03:04:05", &t));
  CHECK(!s3_parse_iso8601("2030-13-02T03:04:05Z", &t));
  CHECK(!s3_parse_iso8601("2030-01-02T03:04:05.Z", &t));
  CHECK(!s3_parse_iso8601(NULL, &t));
}

VF_TEST(test_ini_profiles) {
  const char *cred =
      "# comment\n[default]\naws_access_key_id = AKDEF\r\naws_secret_access_key=SKDEF\n"
      "\n[dev]\n; another\nAWS_ACCESS_KEY_ID=AKDEV\naws_secret_access_key = SK DEV  \n"
      "aws_session_token=TOKDEV\n[devx]\naws_access_key_id=WRONG\n";
  const char *conf = "[default]\nregion = eu-west-1\n[profile  dev]\nregion=us-west-2\ns3 =\n"
                     "  region = nested-ignored\naws_access_key_id = FROMCONF\n"
                     "[profile sso]\nsso_session = x\n[dev]\nregion=not-a-profile-section\n"
                     "[profile wi]\nrole_arn = arn:aws:iam::1:role/r\nweb_identity_token_file=/t\n";
  vf_error err;
  s3_profile p = {0};
  CHECK_OK(s3_ini_profile(cred, strlen(cred), "dev", &p, &err));
  CHECK_OK(s3_ini_profile(conf, strlen(conf), "profile dev", &p, &err));
  CHECK(p.found);
  CHECK_EQ_STR(p.key_id, "AKDEV"); /* the credentials file wins */
  CHECK_EQ_STR(p.secret, "SK DEV");
  CHECK_EQ_STR(p.token, "TOKDEV");
  CHECK_EQ_STR(p.region, "us-west-2");
  CHECK(p.unsupported == NULL);
  s3_profile_free(&p);

  memset(&p, 0, sizeof p);
  CHECK_OK(s3_ini_profile(cred, strlen(cred), "default", &p, &err));
  CHECK_OK(s3_ini_profile(conf, strlen(conf), "default", &p, &err));
  CHECK_EQ_STR(p.key_id, "AKDEF");
  CHECK_EQ_STR(p.secret, "SKDEF");
  CHECK(p.token == NULL);
  CHECK_EQ_STR(p.region, "eu-west-1");
  s3_profile_free(&p);

  memset(&p, 0, sizeof p);
  CHECK_OK(s3_ini_profile(conf, strlen(conf), "profile sso", &p, &err));
  CHECK(p.found && p.key_id == NULL);
  CHECK_EQ_STR(p.unsupported, "sso_session");
  s3_profile_free(&p);

  memset(&p, 0, sizeof p);
  CHECK_OK(s3_ini_profile(conf, strlen(conf), "profile wi", &p, &err));
  CHECK_EQ_STR(p.role_arn, "arn:aws:iam::1:role/r");
  CHECK_EQ_STR(p.web_identity_token_file, "/t");
  s3_profile_free(&p);

  memset(&p, 0, sizeof p);
  CHECK_OK(s3_ini_profile(cred, strlen(cred), "nope", &p, &err));
  CHECK(!p.found && !p.key_id);
  s3_profile_free(&p);
}

VF_TEST(test_imds_json) {
  const char *j =
      "{\n  \"Code\" : \"Success\",\n  \"LastUpdated\" : \"2026-01-01T00:00:00Z\",\n"
      "  \"Type\" : \"AWS-HMAC\",\n  \"AccessKeyId\" : \"ASIA\\u0041\",\n"
      "  \"SecretAccessKey\" : \"s\\/k\",\n  \"Token\" : \"t\",\n"
      "  \"Expiration\" : \"2030-01-02T03:04:05Z\", \"n\": [1, {\"a\": \"}\"}], \"z\": null\n}";
  s3_keys k;
  vf_error err;
  CHECK_OK(s3_imds_json(j, strlen(j), &k, &err));
  CHECK_EQ_STR(k.key_id, "ASIAA");
  CHECK_EQ_STR(k.secret, "s/k");
  CHECK_EQ_STR(k.token, "t");
  CHECK_EQ_INT(k.expires, 1893553445);
  s3_keys_free(&k);
  const char *fail =
      "{\"Code\":\"AssumeRoleUnauthorizedAccess\",\"AccessKeyId\":\"a\",\"SecretAccessKey\":\"b\"}";
  CHECK_STATUS(s3_imds_json(fail, strlen(fail), &k, &err), VF_ENET);
  CHECK(strstr(err.msg, "AssumeRoleUnauthorizedAccess") != NULL);
  CHECK_STATUS(s3_imds_json("{\"AccessKeyId\":\"a\"}", 19, &k, &err), VF_ECORRUPT);
  CHECK_STATUS(s3_imds_json("{\"AccessKeyId\":", 15, &k, &err), VF_ECORRUPT);
  CHECK_STATUS(s3_imds_json("[]", 2, &k, &err), VF_ECORRUPT);
}

VF_TEST(test_sigv4_encoding) {
  vf_buf b;
  vf_buf_init(&b, 0);
  vf_error err;
  const char *k = "data/a b+c~d_e.f-g/\xc3\xa9%=&?*";
  CHECK_OK(s3_uri_encode(&b, k, strlen(k), true, &err));
  CHECK_EQ_STR((const char *)b.data, "data/a%20b%2Bc~d_e.f-g/%C3%A9%25%3D%26%3F%2A");
  vf_buf_reset(&b);
  CHECK_OK(s3_uri_encode(&b, k, strlen(k), false, &err));
  CHECK_EQ_STR((const char *)b.data, "data%2Fa%20b%2Bc~d_e.f-g%2F%C3%A9%25%3D%26%3F%2A");
  vf_buf_reset(&b);
  s3_param p[] = {{"prefix", "data/x y"},
                  {"list-type", "2"},
                  {"max-keys", "7"},
                  {"continuation-token", "1/a+b="},
                  {"uploads", ""}};
  CHECK_OK(s3_query(&b, p, 5, &err));
  CHECK_EQ_STR(
      (const char *)b.data,
      "?continuation-token=1%2Fa%2Bb%3D&list-type=2&max-keys=7&prefix=data%2Fx%20y&uploads=");
  vf_buf_reset(&b);
  s3_param q[] = {{"uploadId", "u"}, {"partNumber", "10"}};
  CHECK_OK(s3_query(&b, q, 2, &err));
  CHECK_EQ_STR((const char *)b.data, "?partNumber=10&uploadId=u");
  vf_buf_free(&b);
}

static void clear_aws_env(void) {
  const char *vars[] = {"AWS_ACCESS_KEY_ID",
                        "AWS_SECRET_ACCESS_KEY",
                        "AWS_SESSION_TOKEN",
                        "AWS_PROFILE",
                        "AWS_DEFAULT_PROFILE",
                        "AWS_REGION",
                        "AWS_DEFAULT_REGION",
                        "AWS_ENDPOINT_URL",
                        "AWS_ENDPOINT_URL_S3",
                        "AWS_ENDPOINT_URL_STS",
                        "AWS_WEB_IDENTITY_TOKEN_FILE",
                        "AWS_ROLE_ARN",
                        "AWS_ROLE_SESSION_NAME",
                        "AWS_NO_SIGN_REQUEST",
                        "AWS_EC2_METADATA_SERVICE_ENDPOINT"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    unsetenv(vars[i]);
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  char p[4200];
  snprintf(p, sizeof p, "%s/none-credentials", vf_test_tmpdir());
  setenv("AWS_SHARED_CREDENTIALS_FILE", p, 1);
  snprintf(p, sizeof p, "%s/none-config", vf_test_tmpdir());
  setenv("AWS_CONFIG_FILE", p, 1);
  s3_creds_forget();
}

VF_TEST(test_object_url) {
  clear_aws_env();
  vf_error err;
  char *u = s3_object_url("bkt", "a b/c.parquet", "eu-west-1", &err);
  CHECK_EQ_STR(u, "https://bkt.s3.eu-west-1.amazonaws.com/a%20b/c.parquet");
  free(u);
  u = s3_object_url("bkt", "", "eu-west-1", &err);
  CHECK_EQ_STR(u, "https://bkt.s3.eu-west-1.amazonaws.com/");
  free(u);
  u = s3_object_url("my.bkt", "k", "us-east-1", &err);
  CHECK_EQ_STR(u, "https://s3.us-east-1.amazonaws.com/my.bkt/k");
  free(u);
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:7480/", 1);
  u = s3_object_url("bkt", "x/y+z.parquet", "us-east-1", &err);
  CHECK_EQ_STR(u, "http://127.0.0.1:7480/bkt/x/y%2Bz.parquet");
  free(u);
  u = s3_object_url("bkt", "", "us-east-1", &err);
  CHECK_EQ_STR(u, "http://127.0.0.1:7480/bkt");
  free(u);
  setenv("AWS_ENDPOINT_URL_S3", "https://minio.local:9000", 1); /* the service-specific one wins */
  u = s3_object_url("bkt", "k", "us-east-1", &err);
  CHECK_EQ_STR(u, "https://minio.local:9000/bkt/k");
  free(u);
  clear_aws_env();
}

static const char *write_tmp(const char *name, const char *text) {
  static char path[4200];
  snprintf(path, sizeof path, "%s/%s", vf_test_tmpdir(), name);
  FILE *fp = fopen(path, "wb");
  if (fp) {
    fputs(text, fp);
    fclose(fp);
  }
  return path;
}

VF_TEST(test_creds_chain_env_and_profile) {
  clear_aws_env();
  io_s3_creds c;
  vf_error err;
  /* environment */
  setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SKENV-SECRET", 1);
  setenv("AWS_SESSION_TOKEN", "TKENV", 1);
  setenv("AWS_DEFAULT_REGION", "ap-south-1", 1);
  CHECK_OK(s3_creds_get(&c, &err));
  CHECK_EQ_STR(c.keys.key_id, "AKENV");
  CHECK_EQ_STR(c.keys.secret, "SKENV-SECRET");
  CHECK_EQ_STR(c.keys.token, "TKENV");
  CHECK_EQ_STR(c.region, "ap-south-1");
  CHECK_EQ_STR(c.sigv4, "aws:amz:ap-south-1:s3");
  CHECK(strstr(c.source, "environment") != NULL);
  s3_keys_free(&c.keys);
  free(c.sigv4);
  free(c.region);
  /* io_s3_resolve hands the same to the HTTP options */
  setenv("AWS_REGION", "us-west-1", 1); /* AWS_REGION before AWS_DEFAULT_REGION */
  s3_creds_forget();
  io_s3_creds *h = NULL;
  io_http_opts o;
  char *url = NULL;
  CHECK_OK(io_s3_resolve("bkt", "k/x.parquet", &h, &o, &url, &err));
  CHECK_EQ_STR(url, "https://bkt.s3.us-west-1.amazonaws.com/k/x.parquet");
  CHECK_EQ_STR(o.aws_sigv4, "aws:amz:us-west-1:s3");
  CHECK_EQ_STR(o.aws_key_id, "AKENV");
  CHECK_EQ_STR(o.aws_session_token, "TKENV");
  free(url);
  io_s3_creds_free(h);
  CHECK_STATUS(io_s3_resolve("b", "k", &h, &o, &url, &err), VF_EUSAGE); /* bucket too short */
  CHECK(h == NULL && url == NULL);
  /* only half of the pair */
  unsetenv("AWS_SECRET_ACCESS_KEY");
  s3_creds_forget();
  CHECK_STATUS(s3_creds_get(&c, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "AWS_SECRET_ACCESS_KEY") != NULL);

  /* profile files */
  clear_aws_env();
  setenv("AWS_SHARED_CREDENTIALS_FILE",
         write_tmp("credentials",
                   "[default]\naws_access_key_id=AKDEF\naws_secret_access_key=SKDEF\n"
                   "[dev]\naws_access_key_id = AKDEV\naws_secret_access_key = SKDEV-SECRET\n"),
         1);
  setenv("AWS_CONFIG_FILE",
         write_tmp("config", "[profile dev]\nregion = eu-north-1\n"
                             "[profile sso]\nsso_session = corp\n"),
         1);
  CHECK_OK(s3_creds_get(&c, &err));
  CHECK_EQ_STR(c.keys.key_id, "AKDEF");
  CHECK_EQ_STR(c.region, "us-east-1"); /* no region anywhere */
  s3_keys_free(&c.keys);
  free(c.sigv4);
  free(c.region);
  setenv("AWS_PROFILE", "dev", 1);
  s3_creds_forget();
  CHECK_OK(s3_creds_get(&c, &err));
  CHECK_EQ_STR(c.keys.key_id, "AKDEV");
  CHECK_EQ_STR(c.keys.secret, "SKDEV-SECRET");
  CHECK_EQ_STR(c.region, "eu-north-1");
  CHECK(strstr(c.source, "profile 'dev'") != NULL);
  s3_keys_free(&c.keys);
  free(c.sigv4);
  free(c.region);
  setenv("AWS_PROFILE", "sso", 1);
  s3_creds_forget();
  CHECK_STATUS(s3_creds_get(&c, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "sso_session") != NULL);
  setenv("AWS_PROFILE", "missing", 1);
  s3_creds_forget();
  CHECK_STATUS(s3_creds_get(&c, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "'missing'") != NULL);
  clear_aws_env();
}

VF_TEST(test_creds_none_and_anonymous) {
  clear_aws_env();
  io_s3_creds c;
  vf_error err;
  CHECK_STATUS(s3_creds_get(&c, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "no AWS credentials found") != NULL);
  CHECK(strstr(err.msg, "environment") != NULL);
  CHECK(strstr(err.msg, "profile 'default'") != NULL);
  CHECK(strstr(err.msg, "web identity") != NULL);
  CHECK(strstr(err.msg, "AWS_EC2_METADATA_DISABLED") != NULL);
  /* web identity half-configured */
  setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/r", 1);
  s3_creds_forget();
  CHECK_STATUS(s3_creds_get(&c, &err), VF_ECONFIG);
  CHECK(strstr(err.msg, "AWS_WEB_IDENTITY_TOKEN_FILE") != NULL);
  /* a token file that does not exist: named, never read */
  setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/vf-token", 1);
  s3_creds_forget();
  CHECK(s3_creds_get(&c, &err) != VF_OK);
  CHECK(strstr(err.msg, "/nonexistent/vf-token") != NULL);
  unsetenv("AWS_ROLE_ARN");
  unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
  /* anonymous */
  setenv("AWS_NO_SIGN_REQUEST", "true", 1);
  setenv("AWS_ACCESS_KEY_ID", "IGNORED", 1);
  s3_creds_forget();
  CHECK_OK(s3_creds_get(&c, &err));
  CHECK(c.keys.key_id == NULL);
  io_s3_creds *h = NULL;
  io_http_opts o;
  char *url = NULL;
  CHECK_OK(io_s3_resolve("bkt", "k", &h, &o, &url, &err));
  CHECK(o.aws_sigv4 == NULL && o.aws_key_id == NULL);
  free(url);
  io_s3_creds_free(h);
  s3_keys_free(&c.keys);
  free(c.sigv4);
  free(c.region);
  clear_aws_env();
}

/* ---- live: radosgw of the test services (skipped without VF_S3_ENDPOINT) */

static bool live_env(void) {
  const char *ep = getenv("VF_S3_ENDPOINT");
  if (!ep || !*ep) {
    vf_test_skip("VF_S3_ENDPOINT unset (no radosgw)");
    return false;
  }
  clear_aws_env();
  setenv("AWS_ENDPOINT_URL", ep, 1);
  setenv("AWS_ACCESS_KEY_ID", getenv("VF_S3_ACCESS_KEY") ? getenv("VF_S3_ACCESS_KEY") : "AKTEST",
         1);
  setenv("AWS_SECRET_ACCESS_KEY",
         getenv("VF_S3_SECRET_KEY") ? getenv("VF_S3_SECRET_KEY") : "SKTEST", 1);
  s3_creds_forget();
  return true;
}

/* PUT or DELETE on bucket/key ("" = the bucket itself) with the chain's credentials */
static vf_status live_call(const char *method, const char *bucket, const char *key) {
  io_s3_creds *c = NULL;
  io_http_opts o;
  char *url = NULL;
  vf_error err;
  vf_status st = io_s3_resolve(bucket, key, &c, &o, &url, &err);
  io_http *h = NULL;
  if (st == VF_OK) st = io_http_open(NULL, &o, &h, &err);
  io_http_resp rs = {0};
  vf_buf_init(&rs.body, 0);
  static const char *const hd[] = {"Accept: application/xml", NULL};
  io_http_req rq = {
      .method = method, .path = "", .url = url, .headers = hd, .body = "", .body_len = 0};
  if (st == VF_OK) st = io_http_request(h, &rq, &rs, &err);
  if (st) fprintf(stderr, "  %s %s/%s: %s\n", method, bucket, key, err.msg);
  io_http_resp_free(&rs);
  io_http_close(h);
  free(url);
  io_s3_creds_free(c);
  return st;
}

VF_TEST(test_live_upload_list_download) {
  if (!live_env()) return;
  char bucket[64], uri[200], path[4200], back[4200];
  snprintf(bucket, sizeof bucket, "unit-s3-%ld", (long)getpid());
  CHECK_OK(live_call("PUT", bucket, ""));
  /* 12 MiB + 123 bytes, multipart with 5 MiB parts (3 parts) */
  setenv("VFORGE_S3_MULTIPART_THRESHOLD", "5242880", 1);
  setenv("VFORGE_S3_PART_SIZE", "5242880", 1);
  size_t n = ((size_t)12 << 20) + 123;
  uint8_t *data = malloc(n);
  uint32_t x = 7;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    data[i] = (uint8_t)(x >> 16);
  }
  snprintf(path, sizeof path, "%s/big.bin", vf_test_tmpdir());
  FILE *fp = fopen(path, "wb");
  fwrite(data, 1, n, fp);
  fclose(fp);
  vf_error err;
  snprintf(uri, sizeof uri, "s3://%s/dir/big.bin", bucket);
  CHECK_OK(io_upload(path, uri, &err));
  /* small PutObject, and an empty object */
  snprintf(path, sizeof path, "%s/small.txt", vf_test_tmpdir());
  fp = fopen(path, "wb");
  fputs("hello s3", fp);
  fclose(fp);
  snprintf(uri, sizeof uri, "s3://%s/dir/sub/small.txt", bucket);
  CHECK_OK(io_upload(path, uri, &err));
  snprintf(path, sizeof path, "%s/empty", vf_test_tmpdir());
  fclose(fopen(path, "wb"));
  snprintf(uri, sizeof uri, "s3://%s/dir/empty", bucket);
  CHECK_OK(io_upload(path, uri, &err));
  unsetenv("VFORGE_S3_MULTIPART_THRESHOLD");
  unsetenv("VFORGE_S3_PART_SIZE");

  /* listing: all three, paged one key at a time, sizes from the listing */
  setenv("VFORGE_S3_MAX_KEYS", "1", 1);
  io_listing l;
  snprintf(uri, sizeof uri, "s3://%s/dir", bucket);
  CHECK_OK(io_list(uri, &l, &err));
  CHECK_EQ_INT(l.n, 3);
  int seen = 0;
  for (size_t i = 0; i < l.n; i++) {
    if (strstr(l.entries[i].uri, "/dir/big.bin") && l.entries[i].size == n) seen |= 1;
    if (strstr(l.entries[i].uri, "/dir/sub/small.txt") && l.entries[i].size == 8) seen |= 2;
    if (strstr(l.entries[i].uri, "/dir/empty") && l.entries[i].size == 0) seen |= 4;
  }
  CHECK_EQ_INT(seen, 7);
  io_listing_free(&l);
  unsetenv("VFORGE_S3_MAX_KEYS");
  /* a prefix naming one object lists that object */
  snprintf(uri, sizeof uri, "s3://%s/dir/sub/small.txt", bucket);
  CHECK_OK(io_list(uri, &l, &err));
  CHECK_EQ_INT(l.n, 1);
  io_listing_free(&l);
  snprintf(uri, sizeof uri, "s3://%s/nothing/", bucket);
  CHECK_STATUS(io_list(uri, &l, &err), VF_ENOTFOUND);

  /* download the multipart object back, byte for byte */
  snprintf(uri, sizeof uri, "s3://%s/dir/big.bin", bucket);
  snprintf(back, sizeof back, "%s/back.bin", vf_test_tmpdir());
  uint64_t got = 0;
  CHECK_OK(io_download(uri, back, &got, &err));
  CHECK_EQ_INT(got, n);
  uint8_t *rb = malloc(n);
  fp = fopen(back, "rb");
  CHECK(fp && fread(rb, 1, n, fp) == n);
  if (fp) fclose(fp);
  CHECK(memcmp(rb, data, n) == 0);
  free(rb);
  /* a ranged read through io_open_uri */
  io_source *src = NULL;
  CHECK_OK(io_open_uri(uri, &src, &err));
  if (src) {
    uint8_t buf[100];
    CHECK_EQ_INT(src->size, n);
    CHECK_OK(io_read_at(src, n - 100, buf, 100, &err));
    CHECK(memcmp(buf, data + n - 100, 100) == 0);
    io_close(src);
  }
  /* errors: missing key / bucket, wrong secret (never in the message) */
  snprintf(uri, sizeof uri, "s3://%s/dir/missing.bin", bucket);
  CHECK_STATUS(io_open_uri(uri, &src, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, uri) != NULL);
  CHECK_STATUS(io_open_uri("s3://no-such-bucket-vf/x", &src, &err), VF_ENOTFOUND);
  CHECK(strstr(err.msg, "NoSuchBucket") != NULL);
  setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret", 1);
  s3_creds_forget();
  snprintf(uri, sizeof uri, "s3://%s/dir/big.bin", bucket);
  CHECK_STATUS(io_open_uri(uri, &src, &err), VF_ENET);
  CHECK(strstr(err.msg, "SignatureDoesNotMatch") != NULL);
  CHECK(strstr(err.msg, "not-the-secret") == NULL);
  snprintf(uri, sizeof uri, "s3://%s/dir", bucket);
  CHECK_STATUS(io_list(uri, &l, &err), VF_ENET);
  snprintf(uri, sizeof uri, "s3://%s/dir/x", bucket);
  CHECK_STATUS(io_upload(path, uri, &err), VF_ENET);

  live_env();
  CHECK_OK(live_call("DELETE", bucket, "dir/big.bin"));
  CHECK_OK(live_call("DELETE", bucket, "dir/sub/small.txt"));
  CHECK_OK(live_call("DELETE", bucket, "dir/empty"));
  CHECK_OK(live_call("DELETE", bucket, ""));
  free(data);
  clear_aws_env();
}
