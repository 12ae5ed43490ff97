/*
 * libFuzzer harness for the S3 / STS response readers (src/io/s3_xml.c) and the IMDS
 * credentials JSON and INI profile readers (src/io/s3_creds.c): the bytes of an untrusted
 * server answer or credentials file.
 *
 * Contract checked: s3x_parse() either builds a tree whose links stay inside the node array
 * (parents before children, every element named, text lengths matching the NUL-terminated
 * text) or refuses with VF_ECORRUPT / VF_ENOMEM and a message; the document readers
 * (ListObjectsV2, Error, InitiateMultipartUpload, CompleteMultipartUpload, STS, IMDS JSON, INI)
 * never crash, leak or read out of bounds, and a listing they accept has a non-empty key per
 * entry and a continuation token whenever it is truncated.
 */
#include <stdlib.h>
#include <string.h>

#include "io/s3_internal.h"

static void contract(bool ok) {
  if (!ok) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *x = (const char *)data;
  vf_error err;
  s3x_doc d;
  vf_status st = s3x_parse(x, size, &d, &err);
  contract(st == VF_OK || st == VF_ECORRUPT || st == VF_ENOMEM);
  if (st == VF_OK) {
    contract(d.n >= 1 && d.nodes[0].parent == -1);
    for (size_t i = 0; i < d.n; i++) {
      const s3x_node *nd = &d.nodes[i];
      contract(nd->name && nd->name[0] && nd->text && strlen(nd->text) == nd->text_len);
      contract(nd->parent < (int)i && (i == 0 || nd->parent >= 0));
      contract(nd->first_child == -1 || (nd->first_child > (int)i && nd->first_child < (int)d.n));
      contract(nd->next_sibling == -1 ||
               (nd->next_sibling > (int)i && nd->next_sibling < (int)d.n));
    }
    s3x_free(&d);
  } else {
    contract(err.msg[0] != 0 && d.nodes == NULL);
  }
  s3_list_page pg;
  if (s3_xml_list(x, size, &pg, &err) == VF_OK) {
    for (size_t i = 0; i < pg.n; i++)
      contract(pg.objects[i].key && pg.objects[i].key[0]);
    contract(!pg.truncated || pg.next_token);
    s3_list_page_free(&pg);
  }
  char code[64], msg[128], region[32];
  if (s3_xml_error(x, size, code, sizeof code, msg, sizeof msg, region, sizeof region))
    contract(code[0] && strlen(code) < sizeof code);
  char *id = NULL;
  if (s3_xml_upload_id(x, size, &id, &err) == VF_OK) contract(id && id[0]);
  free(id);
  (void)s3_xml_complete_ok(x, size, code, sizeof code);
  s3_keys k;
  if (s3_xml_sts(x, size, &k, &err) == VF_OK) {
    contract(k.key_id && k.secret);
    s3_keys_free(&k);
  }
  if (s3_imds_json(x, size, &k, &err) == VF_OK) {
    contract(k.key_id && k.secret);
    s3_keys_free(&k);
  }
  s3_profile p;
  memset(&p, 0, sizeof p);
  if (s3_ini_profile(x, size, "default", &p, &err) == VF_OK)
    (void)s3_ini_profile(x, size, "profile dev", &p, &err);
  s3_profile_free(&p);
  return 0;
}
