/* libFuzzer harness for the Qdrant gRPC codec (src/store/qdrant_pb.c, qdrant_grpc.c): answers
 * come from the network, so arbitrary bytes are decoded as each message the transport reads
 * (collection info, operation and count answers, query results) and the JSON rendering must
 * parse; the same bytes as text go through the streamed payload encoder (a payload row's JSON),
 * whose output must decode as Value map entries. */
#include <stdlib.h>
#include <string.h>

#include "store/qdrant_internal.h"
#include "store/qdrant_pb.h"
#include "store/qdrant_pb_schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1); /* exact size: reads past the end trip ASan */
  if (!copy) return 0;
  if (size) memcpy(copy, data, size);
  static const int msgs[] = {QPB_M_qdrant_GetCollectionInfoResponse,
                             QPB_M_qdrant_CollectionOperationResponse,
                             QPB_M_qdrant_CollectionExistsResponse, QPB_M_qdrant_CountResponse,
                             QPB_M_qdrant_PointsOperationResponse, QPB_M_qdrant_QueryBatchResponse,
                             QPB_M_qdrant_UpsertPoints, QPB_M_qdrant_Value};
  vf_buf json;
  vf_buf_init(&json, (size_t)64 << 20);
  vf_error err;
  for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++) {
    vf_buf_reset(&json);
    if (qpb_decode_json(msgs[i], copy, size, "fuzz", &json, &err) == VF_OK) {
      vf_json_val v;
      if (vf_json_parse((const char *)json.data, json.len, "rendered", &v, &err) != VF_OK) abort();
      vf_json_free(&v);
    }
  }
  vf_buf out;
  vf_buf_init(&out, (size_t)64 << 20);
  if (qpb_payload_from_json((const char *)copy, size, 3, "payload", &out, &err) == VF_OK) {
    /* the entries are PointStruct.payload fields: decodable as a PointStruct */
    vf_buf_reset(&json);
    if (qpb_decode_json(QPB_M_qdrant_PointStruct, out.data, out.len, "entries", &json, &err) != VF_OK)
      abort();
  }
  vf_buf_free(&out);
  vf_buf_free(&json);
  free(copy);
  return 0;
}
