/* libcpg.so.4: closed process groups (Corosync 3's CPG API), served by rtotemd's process groups.
 * Written for rtotem from Corosync 3's documented ABI. */
#ifndef COROSYNC_CPG_H_DEFINED
#define COROSYNC_CPG_H_DEFINED

#include <stddef.h>
#include <sys/uio.h>
#include <corosync/corotypes.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t cpg_handle_t;
typedef uint64_t cpg_iteration_handle_t;

typedef enum { CPG_TYPE_UNORDERED = 0, CPG_TYPE_FIFO = 1, CPG_TYPE_AGREED = 2, CPG_TYPE_SAFE = 3 } cpg_guarantee_t;

typedef enum { CPG_FLOW_CONTROL_DISABLED = 0, CPG_FLOW_CONTROL_ENABLED = 1 } cpg_flow_control_state_t;

typedef enum {
  CPG_REASON_UNDEFINED = 0,
  CPG_REASON_JOIN = 1,
  CPG_REASON_LEAVE = 2,
  CPG_REASON_NODEDOWN = 3,
  CPG_REASON_NODEUP = 4,
  CPG_REASON_PROCDOWN = 5
} cpg_reason_t;

typedef enum { CPG_ITERATION_NAME_ONLY = 1, CPG_ITERATION_ONE_GROUP = 2, CPG_ITERATION_ALL = 3 } cpg_iteration_type_t;

typedef enum { CPG_MODEL_V1 = 1 } cpg_model_t;

struct cpg_address {
  uint32_t nodeid;
  uint32_t pid;
  uint32_t reason;
};

#define CPG_MAX_NAME_LENGTH 128

/* A group's name is `length` bytes of value; consumers usually count a terminating NUL. */
struct cpg_name {
  uint32_t length;
  char value[CPG_MAX_NAME_LENGTH];
};

#define CPG_MEMBERS_MAX 128

struct cpg_iteration_description_t {
  struct cpg_name group;
  uint32_t nodeid;
  uint32_t pid;
};

struct cpg_ring_id {
  uint32_t nodeid;
  uint64_t seq;
};

typedef void (*cpg_deliver_fn_t)(cpg_handle_t handle, const struct cpg_name *group_name, uint32_t nodeid, uint32_t pid,
                                 void *msg, size_t msg_len);

typedef void (*cpg_confchg_fn_t)(cpg_handle_t handle, const struct cpg_name *group_name,
                                 const struct cpg_address *member_list, size_t member_list_entries,
                                 const struct cpg_address *left_list, size_t left_list_entries,
                                 const struct cpg_address *joined_list, size_t joined_list_entries);

typedef void (*cpg_totem_confchg_fn_t)(cpg_handle_t handle, struct cpg_ring_id ring_id, uint32_t member_list_entries,
                                       const uint32_t *member_list);

typedef struct {
  cpg_deliver_fn_t cpg_deliver_fn;
  cpg_confchg_fn_t cpg_confchg_fn;
} cpg_callbacks_t;

typedef struct {
  cpg_model_t model;
} cpg_model_data_t;

/* After this connection's own join, one totem confchg with the ring as it is. */
#define CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF 0x01

typedef struct {
  cpg_model_t model;
  cpg_deliver_fn_t cpg_deliver_fn;
  cpg_confchg_fn_t cpg_confchg_fn;
  cpg_totem_confchg_fn_t cpg_totem_confchg_fn;
  unsigned int flags;
} cpg_model_v1_data_t;

cs_error_t cpg_initialize(cpg_handle_t *handle, cpg_callbacks_t *callbacks);
cs_error_t cpg_model_initialize(cpg_handle_t *handle, cpg_model_t model, cpg_model_data_t *model_data, void *context);
cs_error_t cpg_finalize(cpg_handle_t handle);
cs_error_t cpg_fd_get(cpg_handle_t handle, int *fd);
cs_error_t cpg_max_atomic_msgsize_get(cpg_handle_t handle, uint32_t *size);
cs_error_t cpg_context_get(cpg_handle_t handle, void **context);
cs_error_t cpg_context_set(cpg_handle_t handle, void *context);
cs_error_t cpg_dispatch(cpg_handle_t handle, cs_dispatch_flags_t dispatch_types);
/* One group per handle. */
cs_error_t cpg_join(cpg_handle_t handle, const struct cpg_name *group);
cs_error_t cpg_leave(cpg_handle_t handle, const struct cpg_name *group);
cs_error_t cpg_mcast_joined(cpg_handle_t handle, cpg_guarantee_t guarantee, const struct iovec *iovec,
                            unsigned int iov_len);
/* member_list needs room for CPG_MEMBERS_MAX entries. */
cs_error_t cpg_membership_get(cpg_handle_t handle, struct cpg_name *groupName, struct cpg_address *member_list,
                              int *member_list_entries);
cs_error_t cpg_local_get(cpg_handle_t handle, unsigned int *local_nodeid);
cs_error_t cpg_flow_control_state_get(cpg_handle_t handle, cpg_flow_control_state_t *flow_control_enabled);
cs_error_t cpg_zcb_alloc(cpg_handle_t handle, size_t size, void **buffer);
cs_error_t cpg_zcb_free(cpg_handle_t handle, void *buffer);
cs_error_t cpg_zcb_mcast_joined(cpg_handle_t handle, cpg_guarantee_t guarantee, void *msg, size_t msg_len);
cs_error_t cpg_iteration_initialize(cpg_handle_t handle, cpg_iteration_type_t iteration_type,
                                    const struct cpg_name *group, cpg_iteration_handle_t *cpg_iteration_handle);
/* CS_ERR_NO_SECTIONS after the last. */
cs_error_t cpg_iteration_next(cpg_iteration_handle_t handle, struct cpg_iteration_description_t *description);
cs_error_t cpg_iteration_finalize(cpg_iteration_handle_t handle);

#ifdef __cplusplus
}
#endif

#endif /* COROSYNC_CPG_H_DEFINED */
