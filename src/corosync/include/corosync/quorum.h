/* libquorum.so.5: whether this node's partition has quorum, and its members (Corosync 3's quorum
 * API), served by rtotemd's votequorum. Written for rtotem from Corosync 3's documented ABI. */
#ifndef COROSYNC_QUORUM_H_DEFINED
#define COROSYNC_QUORUM_H_DEFINED

#include <corosync/corotypes.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t quorum_handle_t;

#define QUORUM_FREE 0 /* no quorum provider: everything is quorate */
#define QUORUM_SET 1  /* a provider decides */

typedef enum { QUORUM_MODEL_V0 = 0, QUORUM_MODEL_V1 = 1 } quorum_model_t;

struct quorum_ring_id {
  uint32_t nodeid;
  uint64_t seq;
};

typedef void (*quorum_notification_fn_t)(quorum_handle_t handle, uint32_t quorate, uint64_t ring_seq,
                                         uint32_t view_list_entries, uint32_t *view_list);

typedef void (*quorum_v1_quorum_notification_fn_t)(quorum_handle_t handle, uint32_t quorate,
                                                   struct quorum_ring_id ring_id, uint32_t member_list_entries,
                                                   const uint32_t *member_list);

/* Each ring change comes here first, then to the quorum notification. */
typedef void (*quorum_v1_nodelist_notification_fn_t)(quorum_handle_t handle, struct quorum_ring_id ring_id,
                                                     uint32_t member_list_entries, const uint32_t *member_list,
                                                     uint32_t joined_list_entries, const uint32_t *joined_list,
                                                     uint32_t left_list_entries, const uint32_t *left_list);

typedef struct {
  quorum_notification_fn_t quorum_notify_fn;
} quorum_callbacks_t;

typedef struct {
  quorum_model_t model;
} quorum_model_data_t;

typedef struct {
  quorum_model_t model;
  quorum_notification_fn_t quorum_notify_fn;
} quorum_model_v0_data_t;

typedef struct {
  quorum_model_t model;
  quorum_v1_quorum_notification_fn_t quorum_notify_fn;
  quorum_v1_nodelist_notification_fn_t nodelist_notify_fn;
} quorum_model_v1_data_t;

cs_error_t quorum_initialize(quorum_handle_t *handle, quorum_callbacks_t *callbacks, uint32_t *quorum_type);
cs_error_t quorum_model_initialize(quorum_handle_t *handle, quorum_model_t model, quorum_model_data_t *model_data,
                                   uint32_t *quorum_type, void *context);
cs_error_t quorum_finalize(quorum_handle_t handle);
cs_error_t quorum_fd_get(quorum_handle_t handle, int *fd);
cs_error_t quorum_dispatch(quorum_handle_t handle, cs_dispatch_flags_t dispatch_types);
cs_error_t quorum_getquorate(quorum_handle_t handle, int *quorate);
/* CS_TRACK_CURRENT: the state now; CS_TRACK_CHANGES: now and at every change;
 * CS_TRACK_CHANGES_ONLY: at every change from now on. */
cs_error_t quorum_trackstart(quorum_handle_t handle, unsigned int flags);
cs_error_t quorum_trackstop(quorum_handle_t handle);
cs_error_t quorum_context_set(quorum_handle_t handle, const void *context);
cs_error_t quorum_context_get(quorum_handle_t handle, const void **context);

#ifdef __cplusplus
}
#endif

#endif /* COROSYNC_QUORUM_H_DEFINED */
