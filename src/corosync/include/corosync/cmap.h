/* libcmap.so.4: the key store of the local node (Corosync 3's cmap API), served by rtotemd.
 * Written for rtotem from Corosync 3's documented ABI. */
#ifndef COROSYNC_CMAP_H_DEFINED
#define COROSYNC_CMAP_H_DEFINED

#include <stddef.h>
#include <corosync/corotypes.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t cmap_handle_t;
typedef uint64_t cmap_iter_handle_t;
typedef uint64_t cmap_track_handle_t;

#define CMAP_KEYNAME_MAXLEN 255
#define CMAP_KEYNAME_MINLEN 3

#define CMAP_TRACK_DELETE 1
#define CMAP_TRACK_MODIFY 2
#define CMAP_TRACK_ADD 4
#define CMAP_TRACK_PREFIX 8 /* only when adding a tracker: `key` is a prefix */

typedef enum {
  CMAP_VALUETYPE_INT8 = 1,
  CMAP_VALUETYPE_UINT8 = 2,
  CMAP_VALUETYPE_INT16 = 3,
  CMAP_VALUETYPE_UINT16 = 4,
  CMAP_VALUETYPE_INT32 = 5,
  CMAP_VALUETYPE_UINT32 = 6,
  CMAP_VALUETYPE_INT64 = 7,
  CMAP_VALUETYPE_UINT64 = 8,
  CMAP_VALUETYPE_FLOAT = 9,
  CMAP_VALUETYPE_DOUBLE = 10,
  CMAP_VALUETYPE_STRING = 11, /* stored with its terminating NUL, which value_len counts */
  CMAP_VALUETYPE_BINARY = 12
} cmap_value_types_t;

typedef enum { CMAP_MAP_DEFAULT = 0, CMAP_MAP_ICMAP = 0, CMAP_MAP_STATS = 1 } cmap_map_t;

struct cmap_notify_value {
  cmap_value_types_t type; /* 0 for the missing side: old on an add, new on a delete */
  size_t len;
  const void *data;
};

typedef void (*cmap_notify_fn_t)(cmap_handle_t cmap_handle, cmap_track_handle_t cmap_track_handle, int32_t event,
                                 const char *key_name, struct cmap_notify_value new_value,
                                 struct cmap_notify_value old_value, void *user_data);

cs_error_t cmap_initialize(cmap_handle_t *handle);
cs_error_t cmap_initialize_map(cmap_handle_t *handle, cmap_map_t map);
cs_error_t cmap_finalize(cmap_handle_t handle);
cs_error_t cmap_fd_get(cmap_handle_t handle, int *fd);
cs_error_t cmap_dispatch(cmap_handle_t handle, cs_dispatch_flags_t dispatch_types);
cs_error_t cmap_context_get(cmap_handle_t handle, const void **context);
cs_error_t cmap_context_set(cmap_handle_t handle, const void *context);

cs_error_t cmap_set(cmap_handle_t handle, const char *key_name, const void *value, size_t value_len,
                    cmap_value_types_t type);
cs_error_t cmap_set_int8(cmap_handle_t handle, const char *key_name, int8_t value);
cs_error_t cmap_set_uint8(cmap_handle_t handle, const char *key_name, uint8_t value);
cs_error_t cmap_set_int16(cmap_handle_t handle, const char *key_name, int16_t value);
cs_error_t cmap_set_uint16(cmap_handle_t handle, const char *key_name, uint16_t value);
cs_error_t cmap_set_int32(cmap_handle_t handle, const char *key_name, int32_t value);
cs_error_t cmap_set_uint32(cmap_handle_t handle, const char *key_name, uint32_t value);
cs_error_t cmap_set_int64(cmap_handle_t handle, const char *key_name, int64_t value);
cs_error_t cmap_set_uint64(cmap_handle_t handle, const char *key_name, uint64_t value);
cs_error_t cmap_set_float(cmap_handle_t handle, const char *key_name, float value);
cs_error_t cmap_set_double(cmap_handle_t handle, const char *key_name, double value);
cs_error_t cmap_set_string(cmap_handle_t handle, const char *key_name, const char *value);
cs_error_t cmap_delete(cmap_handle_t handle, const char *key_name);

/* value and value_len may be NULL; *value_len is the room in value, then the value's size. */
cs_error_t cmap_get(cmap_handle_t handle, const char *key_name, void *value, size_t *value_len,
                    cmap_value_types_t *type);
cs_error_t cmap_get_int8(cmap_handle_t handle, const char *key_name, int8_t *i8);
cs_error_t cmap_get_uint8(cmap_handle_t handle, const char *key_name, uint8_t *u8);
cs_error_t cmap_get_int16(cmap_handle_t handle, const char *key_name, int16_t *i16);
cs_error_t cmap_get_uint16(cmap_handle_t handle, const char *key_name, uint16_t *u16);
cs_error_t cmap_get_int32(cmap_handle_t handle, const char *key_name, int32_t *i32);
cs_error_t cmap_get_uint32(cmap_handle_t handle, const char *key_name, uint32_t *u32);
cs_error_t cmap_get_int64(cmap_handle_t handle, const char *key_name, int64_t *i64);
cs_error_t cmap_get_uint64(cmap_handle_t handle, const char *key_name, uint64_t *u64);
cs_error_t cmap_get_float(cmap_handle_t handle, const char *key_name, float *flt);
cs_error_t cmap_get_double(cmap_handle_t handle, const char *key_name, double *dbl);
/* *str is malloc'd; the caller frees it. */
cs_error_t cmap_get_string(cmap_handle_t handle, const char *key_name, char **str);

cs_error_t cmap_inc(cmap_handle_t handle, const char *key_name);
cs_error_t cmap_dec(cmap_handle_t handle, const char *key_name);

/* prefix NULL or "": every key. Keys come in name order; CS_ERR_NO_SECTIONS after the last. */
cs_error_t cmap_iter_init(cmap_handle_t handle, const char *prefix, cmap_iter_handle_t *cmap_iter_handle);
cs_error_t cmap_iter_next(cmap_handle_t handle, cmap_iter_handle_t iter_handle, char key_name[], size_t *value_len,
                          cmap_value_types_t *type);
cs_error_t cmap_iter_finalize(cmap_handle_t handle, cmap_iter_handle_t iter_handle);

cs_error_t cmap_track_add(cmap_handle_t handle, const char *key_name, int32_t track_type, cmap_notify_fn_t notify_fn,
                          void *user_data, cmap_track_handle_t *cmap_track_handle);
cs_error_t cmap_track_delete(cmap_handle_t handle, cmap_track_handle_t track_handle);

#ifdef __cplusplus
}
#endif

#endif /* COROSYNC_CMAP_H_DEFINED */
