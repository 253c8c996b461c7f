/* libvotequorum.so.8: votes and quorum of this node's partition (Corosync 3's votequorum API),
 * served by rtotemd's votequorum, its quorum device calls included. Written for rtotem from
 * Corosync 3's documented ABI. */
#ifndef COROSYNC_VOTEQUORUM_H_DEFINED
#define COROSYNC_VOTEQUORUM_H_DEFINED

#include <corosync/corotypes.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t votequorum_handle_t;

#define VOTEQUORUM_INFO_TWONODE 1
#define VOTEQUORUM_INFO_QUORATE 2
#define VOTEQUORUM_INFO_WAIT_FOR_ALL 4
#define VOTEQUORUM_INFO_LAST_MAN_STANDING 8
#define VOTEQUORUM_INFO_AUTO_TIE_BREAKER 16
#define VOTEQUORUM_INFO_ALLOW_DOWNSCALE 32
#define VOTEQUORUM_INFO_QDEVICE_REGISTERED 64
#define VOTEQUORUM_INFO_QDEVICE_ALIVE 128
#define VOTEQUORUM_INFO_QDEVICE_CAST_VOTE 256
#define VOTEQUORUM_INFO_QDEVICE_MASTER_WINS 512

#define VOTEQUORUM_QDEVICE_NODEID 0
#define VOTEQUORUM_QDEVICE_MAX_NAME_LEN 255
#define VOTEQUORUM_QDEVICE_DEFAULT_TIMEOUT 10000
#define VOTEQUORUM_QDEVICE_DEFAULT_SYNC_TIMEOUT 30000

#define VOTEQUORUM_NODESTATE_MEMBER 1
#define VOTEQUORUM_NODESTATE_DEAD 2
#define VOTEQUORUM_NODESTATE_LEAVING 3

struct votequorum_info {
  unsigned int node_id;
  unsigned int node_state;
  unsigned int node_votes;
  unsigned int node_expected_votes;
  unsigned int highest_expected;
  unsigned int total_votes;
  unsigned int quorum;
  unsigned int flags;
  unsigned int qdevice_votes;
  char qdevice_name[VOTEQUORUM_QDEVICE_MAX_NAME_LEN];
};

typedef struct {
  uint32_t nodeid;
  uint32_t state;
} votequorum_node_t;

typedef struct {
  uint32_t nodeid;
  uint64_t seq;
} votequorum_ring_id_t;

typedef void (*votequorum_quorum_notification_fn_t)(votequorum_handle_t handle, uint64_t context, uint32_t quorate,
                                                    uint32_t node_list_entries, votequorum_node_t node_list[]);

typedef void (*votequorum_nodelist_notification_fn_t)(votequorum_handle_t handle, uint64_t context,
                                                      votequorum_ring_id_t ring_id, uint32_t node_list_entries,
                                                      uint32_t node_list[]);

typedef void (*votequorum_expectedvotes_notification_fn_t)(votequorum_handle_t handle, uint64_t context,
                                                           uint32_t expected_votes);

typedef struct {
  votequorum_quorum_notification_fn_t votequorum_quorum_notify_fn;
  votequorum_expectedvotes_notification_fn_t votequorum_expectedvotes_notify_fn;
  votequorum_nodelist_notification_fn_t votequorum_nodelist_notify_fn;
} votequorum_callbacks_t;

/* callbacks may be NULL. */
cs_error_t votequorum_initialize(votequorum_handle_t *handle, votequorum_callbacks_t *callbacks);
cs_error_t votequorum_finalize(votequorum_handle_t handle);
cs_error_t votequorum_dispatch(votequorum_handle_t handle, cs_dispatch_flags_t dispatch_types);
cs_error_t votequorum_fd_get(votequorum_handle_t handle, int *fd);
/* nodeid 0: this node. */
cs_error_t votequorum_getinfo(votequorum_handle_t handle, unsigned int nodeid, struct votequorum_info *info);
cs_error_t votequorum_setexpected(votequorum_handle_t handle, unsigned int expected_votes);
cs_error_t votequorum_setvotes(votequorum_handle_t handle, unsigned int nodeid, unsigned int votes);
cs_error_t votequorum_trackstart(votequorum_handle_t handle, uint64_t context, unsigned int flags);
cs_error_t votequorum_trackstop(votequorum_handle_t handle);
cs_error_t votequorum_context_get(votequorum_handle_t handle, void **context);
cs_error_t votequorum_context_set(votequorum_handle_t handle, void *context);
cs_error_t votequorum_qdevice_register(votequorum_handle_t handle, const char *name);
cs_error_t votequorum_qdevice_unregister(votequorum_handle_t handle, const char *name);
cs_error_t votequorum_qdevice_update(votequorum_handle_t handle, const char *oldname, const char *newname);
cs_error_t votequorum_qdevice_poll(votequorum_handle_t handle, const char *name, unsigned int cast_vote,
                                   votequorum_ring_id_t ring_id);
cs_error_t votequorum_qdevice_master_wins(votequorum_handle_t handle, const char *name, unsigned int allow);

#ifdef __cplusplus
}
#endif

#endif /* COROSYNC_VOTEQUORUM_H_DEFINED */
