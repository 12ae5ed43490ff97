/* arrow_internal.h — shared by arrow_export.c (the stream) and arrow_payload.c (parquet payload
 * columns as Arrow arrays).  Not part of the public API. */
#ifndef VFORGE_CORPUS_ARROW_INTERNAL_H
#define VFORGE_CORPUS_ARROW_INTERNAL_H

#include "vforge/arrow.h"
#include "vforge/format.h"

/* ------------------------------------------------------------------ memory */

/* Every buffer, child struct and pointer array of one exported batch (or schema) is tracked by
 * one holder.  Each ArrowArray / ArrowSchema node holds a reference, and so does the builder
 * until it finishes; the last release frees everything.  So the consumer may release the
 * parent and children in any order, or move a child out and keep it alone (the spec allows
 * both). */
typedef struct ax_holder ax_holder;

ax_holder *ax_holder_new(void);
/* memory owned by the holder (NULL on failure) */
void *ax_alloc(ax_holder *h, size_t n);
void *ax_calloc(ax_holder *h, size_t n);
/* take ownership of a malloc'd block; on failure `p` is freed and false returned */
bool ax_own(ax_holder *h, void *p);
/* the builder's reference: dropped when it is done (the nodes keep the holder alive) */
void ax_holder_done(ax_holder *h);
/* a failed build that exported nothing: free every tracked block now */
void ax_holder_abandon(ax_holder *h);

/* Fill `a` as a node of `h` (buffers and children arrays allocated in h, entries NULL; the
 * children's structs are the caller's to allocate with ax_calloc and fill). */
bool ax_array_init(ax_holder *h, struct ArrowArray *a, int64_t length, int nbuffers, int nchildren);

/* ------------------------------------------------------------ type templates */

/* A field's type as the stream describes it: exported as ArrowSchema trees (get_schema may be
 * called any number of times) and compared across files. */
typedef struct ax_type {
  char *format;
  char *name;
  int64_t flags;
  char *metadata; /* Arrow's binary key-value encoding; NULL when none */
  size_t metadata_len;
  struct ax_type *children;
  int nchildren;
} ax_type;

void ax_type_free(ax_type *t);
/* a leaf type (children 0); copies the strings */
vf_status ax_type_set(ax_type *t, const char *format, const char *name, int64_t flags,
                      vf_error *err);
/* room for n children (zeroed) */
vf_status ax_type_children(ax_type *t, int n, vf_error *err);
/* key-value metadata from n pairs */
vf_status ax_type_metadata(ax_type *t, const char *const *kv, int n, vf_error *err);
/* same format strings, names and nullability all the way down */
bool ax_type_equal(const ax_type *a, const ax_type *b);
/* a short rendering for messages ("int64", "+l<f>", ...): the format strings, nested */
void ax_type_describe(const ax_type *t, char *out, size_t cap);
/* export as a schema tree owned by its own holder */
vf_status ax_type_export(const ax_type *t, struct ArrowSchema *out, vf_error *err);

/* ------------------------------------------------------- payload (parquet) */

/* The Arrow type of top-level column `top` of `f` (named `name`). */
vf_status axp_type(const pqt_file *f, int top, const char *name, ax_type *out, vf_error *err);

/* The rows of one decoded row group of top-level column `top` as an Arrow array (a child of the
 * batch, filled into `out` and tracked by `h`).  `data`/`leaf_ids`/`nleaves`: the decoded
 * leaves (they must cover every leaf under `top`); `rows`: rows in the row group; `keep`
 * (rows entries, 1 = the row is in the batch) or NULL for all rows.  The values are copied into
 * Arrow's layouts (validity bitmaps, int32 offsets); the Dremel levels (parquet-format
 * "Nested Encoding") give the nesting: a node's slots are the entries of its first leaf whose
 * repetition level starts a new instance at its depth and whose definition level reaches its
 * nearest repeated ancestor; a slot is valid when the definition level reaches the node itself.
 * @return : VF_ECORRUPT naming the file and column for levels that do not nest;
 *           VF_EUNSUPPORTED for a string column over 2 GiB in one batch. */
vf_status axp_array(const pqt_file *f, int top, const pqt_leaf_data *data, const int *leaf_ids,
                    int nleaves, int64_t rows, const uint8_t *keep, ax_holder *h,
                    struct ArrowArray *out, vf_error *err);

#endif
