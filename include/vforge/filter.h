/*
 * vforge filter — Qdrant's payload filter, compiled once and evaluated over point payloads.
 *
 * One evaluator serves every command that filters: exact filtered ground truth (brute-force),
 * the local store's exact and IVF searches, `index search` and the dataset bundles' conditions;
 * the Qdrant store sends the same JSON to the server.  The language is the `Filter` object of
 * Qdrant's REST API (../shared/qdrant/openapi.json), with Qdrant's documented semantics
 * (qdrant.tech "Filtering"; where the documentation is silent, what Qdrant's condition checker
 * does):
 *
 *   Filter      {must, should, must_not: Condition | [Condition], min_should: {conditions,
 *               min_count}}: all of must, at least one of should (an empty should list matches
 *               nothing), none of must_not, at least min_count of min_should
 *   Condition   a field condition {key, match | range | geo_radius | geo_bounding_box |
 *               values_count | is_empty: bool | is_null: bool}, {is_empty: {key}},
 *               {is_null: {key}}, {has_id: [ids]}, {nested: {key, filter}}, or a Filter
 *   key         a path into the payload: a.b (objects), a[] (every element of an array),
 *               a[2] (one element), "quoted.key"; a path that does not lead anywhere has no
 *               values (the key is missing)
 *   match       {value: string|integer|bool} (equality), {any: [...]}, {except: [...]},
 *               {text: s} and {phrase: s} (substring, as Qdrant without a full-text index),
 *               {text_any: s} (any whitespace-separated token is a substring), {prefix: s}
 *   range       {lt, gt, lte, gte} of numbers (integer and float values), or of datetime
 *               strings (RFC 3339; also "YYYY-MM-DD[ T]HH:MM[:SS[.f]]" and "YYYY-MM-DD", UTC
 *               when no offset is given) compared with string values parsed the same way
 *
 * Values: a field condition holds when any value at the key satisfies it; an array value is
 * satisfied when one of its elements is (one level: arrays in arrays are not flattened).  A key
 * with no value (missing) satisfies no field condition except is_empty: true / is_null: false.
 * is_empty holds when the key is missing, null or [] (every value is); is_null when a value is
 * null ([null] is an array, not null).  values_count counts an array's elements, 0 for null, 1
 * for anything else.  match except holds for a value outside the list, also for a value of
 * another type (a bool, an object, a float), never for null.  match value of an integer holds
 * only for integer JSON numbers (3, not 3.0).  Duplicate object keys: the last one wins.
 *
 * The conditions form of vector-db-benchmark and ann-filtering-benchmark-datasets,
 * {"and": [{field: {match | match_any | match_text | range | geo: criteria}}], "or": [...]},
 * is translated (and -> must, or -> should; geo {lat, lon, radius} -> geo_radius) as those
 * tools do.  Unknown keys anywhere are errors (a misspelt condition must not silently match
 * everything).  Refused as unsupported: has_vector, geo_polygon, slice, and has_id inside
 * nested (Qdrant ignores it there).
 */
#ifndef VFORGE_FILTER_H
#define VFORGE_FILTER_H

#include "vforge/corpus.h"
#include "vforge/util.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLT_MAX_TEXT ((size_t)16 << 20) /* bytes of one filter's JSON text */

typedef struct flt_filter flt_filter;

/*! flt_parse() : compile a filter from JSON text (Qdrant's Filter, or the {"and", "or"}
 *  conditions form).  `what` names the source in messages ("--filter", "q.parquet row 3").
 *  @return : VF_EUSAGE naming the source and the JSON path of the first problem (bad JSON, an
 *            unknown key, a value of the wrong type, a bad key path or datetime);
 *            VF_EUNSUPPORTED for has_vector, geo_polygon, slice; VF_ENOMEM. */
vf_status flt_parse(const char *text, size_t len, const char *what, flt_filter **out,
                    vf_error *err);
void flt_free(flt_filter *f); /* NULL ok */

/*! flt_json() : the filter as Qdrant Filter JSON (borrowed, NUL-terminated): the input text for
 *  Qdrant's form, the translation for the conditions form. */
const char *flt_json(const flt_filter *f);
/*! flt_is_empty() : true when the filter has no condition at all (it matches every point). */
bool flt_is_empty(const flt_filter *f);
/*! flt_uses_id() : true when a has_id condition is reachable (flt_match needs the point id). */
bool flt_uses_id(const flt_filter *f);
/*! flt_keys() : the distinct first components of every key the filter reads (the payload keys
 *  it needs), in first-use order; *keys is borrowed.  @return : their number. */
size_t flt_keys(const flt_filter *f, const char *const **keys);

/*! flt_hash8() : the first 8 hex digits of md5(text) (the `_f<h>` of filtered eval file names). */
void flt_hash8(const char *text, size_t len, char out[9]);

/*! flt_datetime_parse() : a datetime string (the formats above) as microseconds since the Unix
 *  epoch, UTC.  @return : false when it is not one. */
bool flt_datetime_parse(const char *s, size_t len, int64_t *us);

/*! flt_json_member() : append to `out` the compact JSON of member `key` of the JSON object
 *  text[0..len) (an empty text is {}); *found false (out unchanged) when it has none.
 *  @return : VF_ECORRUPT when the text is not a JSON object. */
vf_status flt_json_member(const char *text, size_t len, const char *key, vf_buf *out,
                          bool *found, vf_error *err);

/* ------------------------------------------------------------ payloads */

/* Parsed payloads of many points ("rows"): each row's JSON object is parsed once into a compact
 * tape, so that any number of filters can be evaluated over it cheaply.  Keyword and integer
 * values are indexed on first use by flt_docs_select(). */
typedef struct flt_docs flt_docs;

vf_status flt_docs_create(flt_docs **out, vf_error *err);
void flt_docs_free(flt_docs *d); /* NULL ok */
/*! flt_docs_clear() : drop every row (buffers kept for reuse). */
void flt_docs_clear(flt_docs *d);
/*! flt_docs_add() : append n rows; row i is text[offsets[i] .. offsets[i+1]) (copied), a JSON
 *  object, or empty for a point without payload.  `what` names the source in messages.
 *  @return : VF_ECORRUPT naming `what`, the row and the byte for text that is not a JSON
 *            object; VF_ENOMEM past 2^32 values. */
vf_status flt_docs_add(flt_docs *d, const char *text, const int64_t *offsets, size_t n,
                       const char *what, vf_error *err);
size_t flt_docs_rows(const flt_docs *d);
/*! flt_docs_bytes() : memory held (payload text and tape), for budgets and logs. */
size_t flt_docs_bytes(const flt_docs *d);

/*! flt_match() : does row `row` satisfy `f`?  `id` is the point's id for has_id (NULL: has_id
 *  matches nothing).  Read-only: many threads may match against the same docs at once. */
bool flt_match(const flt_filter *f, const flt_docs *d, size_t row, const corpus_id *id);

/*! flt_match_json() : flt_match() of one payload text (a JSON object, or empty).
 *  @return : VF_ECORRUPT for text that is not a JSON object. */
vf_status flt_match_json(const flt_filter *f, const char *payload, size_t len,
                         const corpus_id *id, bool *out, vf_error *err);

/* The point id of row `row` (for has_id); false when unknown. */
typedef bool (*flt_id_fn)(void *user, size_t row, corpus_id *out);

/*! flt_docs_select() : mask[r] = 1 for every row r < rows of `d` that satisfies `f`, else 0;
 *  rows with skip[r] set (skip may be NULL) are 0 and not evaluated.  When the top-level must
 *  holds a match of keywords or integers, its index (built on first use for that key, then
 *  kept) gives the candidate rows and only they are evaluated (without memory for an index,
 *  every row is).  Not thread-safe (it may build an index).  @return : the rows set. */
size_t flt_docs_select(flt_docs *d, const flt_filter *f, const uint8_t *skip, flt_id_fn id_of,
                       void *user, uint8_t *mask);

#ifdef __cplusplus
}
#endif
#endif
