/* libcfg.so.7: node control (Corosync 3's cfg API), served by rtotemd.
 * Written for rtotem from Corosync 3's documented ABI. */
#ifndef COROSYNC_CFG_H_DEFINED
#define COROSYNC_CFG_H_DEFINED

#include <stddef.h>
#include <netinet/in.h>
#include <corosync/corotypes.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t corosync_cfg_handle_t;

typedef enum {
  COROSYNC_CFG_SHUTDOWN_FLAG_REQUEST = 0,    /* stops unless a tracking client says no */
  COROSYNC_CFG_SHUTDOWN_FLAG_REGARDLESS = 1, /* asks them, stops whatever they say */
  COROSYNC_CFG_SHUTDOWN_FLAG_IMMEDIATE = 2   /* asks no one */
} corosync_cfg_shutdown_flags_t;

typedef enum {
  COROSYNC_CFG_SHUTDOWN_FLAG_NO = 0,
  COROSYNC_CFG_SHUTDOWN_FLAG_YES = 1
} corosync_cfg_shutdown_reply_flags_t;

typedef void (*corosync_cfg_shutdown_callback_t)(corosync_cfg_handle_t cfg_handle, corosync_cfg_shutdown_flags_t flags);

typedef struct {
  corosync_cfg_shutdown_callback_t corosync_cfg_shutdown_callback;
} corosync_cfg_callbacks_t;

/* A sockaddr_in or sockaddr_in6 (family and address set, port 0) and its length. */
typedef struct {
  int address_length;
  char address[sizeof(struct sockaddr_in6)];
} corosync_cfg_node_address_t;

#define CFG_MAX_HOST_LEN 256
#define CFG_MAX_LINKS 8

typedef enum { CFG_NODE_STATUS_V1 = 1 } corosync_cfg_node_status_version_t;

struct corosync_knet_link_status_v1 {
  uint8_t enabled;
  uint8_t connected;
  uint8_t dynconnected;
  unsigned int mtu;
  char src_ipaddr[CFG_MAX_HOST_LEN];
  char dst_ipaddr[CFG_MAX_HOST_LEN];
};

struct corosync_cfg_node_status_v1 {
  corosync_cfg_node_status_version_t version;
  unsigned int nodeid;
  uint8_t reachable;
  uint8_t remote;
  uint8_t external;
  uint8_t onwire_min;
  uint8_t onwire_max;
  uint8_t onwire_ver;
  struct corosync_knet_link_status_v1 link_status[CFG_MAX_LINKS];
};

cs_error_t corosync_cfg_initialize(corosync_cfg_handle_t *cfg_handle, const corosync_cfg_callbacks_t *cfg_callbacks);
cs_error_t corosync_cfg_fd_get(corosync_cfg_handle_t cfg_handle, int32_t *selection_fd);
cs_error_t corosync_cfg_dispatch(corosync_cfg_handle_t cfg_handle, cs_dispatch_flags_t dispatch_flags);
cs_error_t corosync_cfg_finalize(corosync_cfg_handle_t cfg_handle);
/* The arrays and their strings are malloc'd; the caller frees them. */
cs_error_t corosync_cfg_ring_status_get(corosync_cfg_handle_t cfg_handle, char ***interface_names, char ***status,
                                        unsigned int *interface_count);
cs_error_t corosync_cfg_node_status_get(corosync_cfg_handle_t cfg_handle, unsigned int nodeid,
                                        corosync_cfg_node_status_version_t version, void *node_status);
cs_error_t corosync_cfg_kill_node(corosync_cfg_handle_t cfg_handle, unsigned int nodeid, const char *reason);
/* track_flags is not used. */
cs_error_t corosync_cfg_trackstart(corosync_cfg_handle_t cfg_handle, uint8_t track_flags);
cs_error_t corosync_cfg_trackstop(corosync_cfg_handle_t cfg_handle);
cs_error_t corosync_cfg_try_shutdown(corosync_cfg_handle_t cfg_handle, corosync_cfg_shutdown_flags_t flags);
cs_error_t corosync_cfg_replyto_shutdown(corosync_cfg_handle_t cfg_handle, corosync_cfg_shutdown_reply_flags_t flags);
/* Up to max_addrs addresses; *num_addrs is how many the node has. */
cs_error_t corosync_cfg_get_node_addrs(corosync_cfg_handle_t cfg_handle, unsigned int nodeid, size_t max_addrs,
                                       int *num_addrs, corosync_cfg_node_address_t *addrs);
cs_error_t corosync_cfg_local_get(corosync_cfg_handle_t handle, unsigned int *local_nodeid);
cs_error_t corosync_cfg_reload_config(corosync_cfg_handle_t handle);
cs_error_t corosync_cfg_reopen_log_files(corosync_cfg_handle_t handle);

#ifdef __cplusplus
}
#endif

#endif /* COROSYNC_CFG_H_DEFINED */
