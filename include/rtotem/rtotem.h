/* librtotem: process groups on an rtotem cluster, through the local rtotemd.
 *
 * A client connects to its node's daemon, joins named groups, multicasts to them in agreed or
 * safe order, and receives, in the ring's total order: every message of its groups (with the
 * sender's node id and pid), the groups' membership changes, and the ring's configuration
 * changes. Every member of a group receives the same messages and changes in the same order.
 *
 * Functions return 0 or a negative errno; rtotem_strerror() says what it means here:
 *   -EAGAIN     back-pressure (rtotem_mcast: call rtotem_dispatch when rtotem_fd is readable,
 *               then retry; see below); the daemon is still forming its first ring
 *               (rtotem_connect: retry); rtotem_join: this process's leave of the group is still
 *               on its way (retry once it is delivered);
 *               rtotem_join, rtotem_leave: this connection's earlier multicasts still wait for
 *               room on the ring (retry)
 *   -ENOTCONN   the daemon is gone (or, for rtotem_mcast, the group is not joined: checked in
 *               the library, at once)
 *   -EMSGSIZE   the message is larger than RTOTEM_MESSAGE_MAX
 *   -ETIMEDOUT  a message sent in pieces was cut short (see RTOTEM_MESSAGE_MAX)
 *   -EEXIST / -ENOENT   already joined / not joined
 *   -ENOSPC     rtotem_join: the connection is in 1,024 groups already
 *   -EACCES / -EMFILE   rtotem_connect: not allowed (root, the daemon's user and those of
 *               ipc.allow_uid/allow_gid are) / too many clients (ipc.max_clients)
 *   -EINVAL     a bad argument (a group name must be 1..RTOTEM_GROUP_NAME_MAX bytes)
 * rtotem_join and rtotem_leave return once the request is on the ring: their effect is the group
 * change delivered later, in order, to every member (this one too).
 *
 * rtotem_mcast does not wait for the daemon. A return of 0 means the message is in this
 * connection's request queue to its daemon, which will put it on the ring after every message this
 * connection sent before it and before its later joins and leaves; it is then delivered, in
 * order, to every member (this one too). It does not wait because the daemon grants each
 * connection a window of credit (64 KiB of requests) that the library counts itself: -EAGAIN
 * means the window is used up (the ring is busy, or the daemon has not read them yet), and costs
 * no round trip. The credit comes back as events: call rtotem_dispatch once rtotem_fd is
 * readable (or rtotem_flush, which asks), then retry. What the library cannot check itself and
 * fails later (the daemon found the group not joined, or it is shutting down) comes as a call of
 * the rtotem_set_mcast_failed callback. The window comes with rtotem_join's answer. A multicast
 * whose request is larger than 16 KiB (the data, the group name and 22 bytes) waits for its
 * answer as rtotem_mcast_sync does. rtotem_disconnect
 * first waits (a round trip, up to 5 s while the daemon's request queue is full) until the daemon
 * has taken every message sent (rtotem_flush); the daemon then puts them on the ring after the
 * connection is gone, before its leaves. It keeps those the ring cannot take yet up to 16 MiB for
 * all departed clients together: a connection whose waiting messages would pass that, with those
 * of the connections that went before it, loses them all (a warning in the log, and
 * ipc.orphans_dropped in rtotemctl stats), as if it had died before sending them. So a clean
 * disconnect loses messages only while the ring is stalled and many clients leave messages
 * behind, or after those 5 s. A process that dies may lose those its daemon had not read yet,
 * as if it had died before sending them.
 *
 * Callback data is valid for the duration of the callback only. A handle is used by one thread
 * at a time; a callback must not call rtotem_dispatch or rtotem_disconnect on its own handle. A
 * client that stops calling rtotem_dispatch() has its events queued by the daemon up to
 * ipc.client_queue_bytes, then is disconnected (and leaves its groups): it never slows the ring
 * or the other clients.
 */
#ifndef RTOTEM_RTOTEM_H
#define RTOTEM_RTOTEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RTOTEM_API __attribute__((visibility("default")))
#else
#define RTOTEM_API
#endif

/* A connection to the local rtotemd. Opaque; always named rtotem_t. (Its tag is not `rtotem`, which
 * C++ would confuse with the namespace rtotem of rtotem.hpp.) */
typedef struct rtotem_handle rtotem_t;

/* A group name is 1..RTOTEM_GROUP_NAME_MAX bytes (as Corosync's CPG_MAX_NAME_LENGTH). */
#define RTOTEM_GROUP_NAME_MAX 128

/* The largest message rtotem_mcast takes. One larger than rtotem_max_message_size (the cluster's
 * totem.max_message_size, less headers) goes as pieces, one multicast each, and is delivered
 * whole where its last piece is: to the members that had all of its pieces, which a process that
 * joined the group after its first piece has not. Its pieces are sent before rtotem_mcast returns,
 * each waiting for the daemon's answer; when the ring pushes back after the first one, it waits
 * (up to 30 s, then -ETIMEDOUT: the members drop what came). The sender's own pieces come back to
 * it as events too: unless it dispatches meanwhile (another thread), its queue in the daemon
 * (ipc.client_queue_bytes) must hold them. A receiving handle holds up to 256 MiB of unfinished
 * messages together; past that it drops the one least recently given a piece (and its later
 * pieces as they come), which the other members may deliver: rtotem_messages_dropped counts them.
 * A process that leaves a group drops what it had of the group's unfinished messages where its
 * leave comes among its events: one that leaves and joins again never joins the start of one
 * message to the end of another. */
#define RTOTEM_MESSAGE_MAX (64u << 20)

enum rtotem_order { RTOTEM_AGREED = 0, RTOTEM_SAFE = 1 };

struct rtotem_message {
  const char *group;
  uint32_t nodeid;
  uint32_t pid;
  const void *data;
  size_t len;
  enum rtotem_order order;
};

struct rtotem_member {
  uint32_t nodeid;
  uint32_t pid;
};

/* Why a process joined (JOIN: it joined; NODEUP: its node's ring merged with this one) or left. */
enum rtotem_reason { RTOTEM_JOIN = 0, RTOTEM_LEAVE = 1, RTOTEM_NODEDOWN = 2, RTOTEM_PROCDOWN = 3, RTOTEM_NODEUP = 4 };

struct rtotem_group_change {
  const char *group;
  const struct rtotem_member *members;
  size_t n_members;
  const struct rtotem_member *joined;
  size_t n_joined;
  const struct rtotem_member *left;
  size_t n_left;
  const enum rtotem_reason *left_reason;
  const enum rtotem_reason *joined_reason; /* one per joined: RTOTEM_JOIN or RTOTEM_NODEUP */
};

struct rtotem_ring_change {
  uint32_t rep_nodeid;
  uint64_t ring_seq;
  int transitional; /* 1: the survivors of the old ring; 0: the new ring's members */
  const uint32_t *nodeids;
  size_t n_nodes;
};

struct rtotem_callbacks {
  void (*deliver)(rtotem_t *, const struct rtotem_message *, void *ctx);
  void (*group_change)(rtotem_t *, const struct rtotem_group_change *, void *ctx);
  void (*ring_change)(rtotem_t *, const struct rtotem_ring_change *, void *ctx);
};

enum rtotem_dispatch_flags {
  RTOTEM_DISPATCH_ONE = 1,      /* at most one event, without waiting (deliveries that the
                                   daemon sent together, in one batch, count as one) */
  RTOTEM_DISPATCH_ALL = 2,      /* every event waiting now, without waiting for more */
  RTOTEM_DISPATCH_BLOCKING = 3, /* wait for events and handle them until the daemon goes */
};

/* ipc_name NULL: $RTOTEM_IPC, else "rtotem". Callbacks may be NULL. The current ring comes at once;
 * later ring changes only to a connection whose callbacks have ring_change. */
RTOTEM_API int rtotem_connect(rtotem_t **out, const char *ipc_name, const struct rtotem_callbacks *cb, void *ctx);
RTOTEM_API void rtotem_disconnect(rtotem_t *);
RTOTEM_API int rtotem_join(rtotem_t *, const char *group);
RTOTEM_API int rtotem_leave(rtotem_t *, const char *group);
RTOTEM_API int rtotem_mcast(rtotem_t *, const char *group, const void *data, size_t len, enum rtotem_order);
/* As rtotem_mcast, but returns once the daemon has put the message on the ring (0), or says why
 * not: -EAGAIN (the ring's back-pressure, or earlier messages of this connection still wait),
 * -ENOTCONN, -EMSGSIZE, -ESHUTDOWN. One round trip to the daemon per message. */
RTOTEM_API int rtotem_mcast_sync(rtotem_t *, const char *group, const void *data, size_t len, enum rtotem_order);
/* Returns once the daemon has taken every message rtotem_mcast sent on this handle: on the ring,
 * or waiting for room on it, bound for it in order even if this process exits. 0, -EAGAIN (the
 * request queue to the daemon is full: retry), -ENOTCONN, or -EINVAL from a daemon older than
 * this library (it has no such request; its multicasts were all answered). */
RTOTEM_API int rtotem_flush(rtotem_t *);
/* Called from rtotem_dispatch for a message rtotem_mcast returned 0 for but the daemon could not
 * multicast: its group, and -ENOTCONN (not joined) or -ESHUTDOWN (the daemon is stopping). */
typedef void (*rtotem_mcast_failed_fn)(rtotem_t *, const char *group, int error, void *ctx);
RTOTEM_API int rtotem_set_mcast_failed(rtotem_t *, rtotem_mcast_failed_fn failed);
RTOTEM_API int rtotem_fd(rtotem_t *); /* pollable: readable when events wait; or a negative errno */
RTOTEM_API int rtotem_dispatch(rtotem_t *, int flags);
RTOTEM_API int rtotem_local_nodeid(rtotem_t *, uint32_t *out);
/* Calls each(group, members, n, ctx) for every group with members (group NULL or "") or for
 * `group` alone, in name order, until it returns non-zero: the daemon's view now, as the changes
 * delivered so far left it. 0; -EMSGSIZE: too many to answer at once. */
typedef int (*rtotem_group_members_fn)(const char *group, const struct rtotem_member *members, size_t n, void *ctx);
RTOTEM_API int rtotem_group_members(rtotem_t *, const char *group, rtotem_group_members_fn each, void *ctx);
/* The largest `len` rtotem_mcast sends in one multicast on this cluster (see RTOTEM_MESSAGE_MAX). */
RTOTEM_API int rtotem_max_message_size(rtotem_t *, size_t *out);
/* Messages sent in pieces that this handle dropped unfinished for want of room (the 256 MiB of
 * RTOTEM_MESSAGE_MAX), since it connected: the other members may have delivered them. Not counted:
 * those it cannot have whole because it joined after their first piece, or their sender left
 * before their last (the group changes say so). 0, or -EINVAL. */
RTOTEM_API int rtotem_messages_dropped(rtotem_t *, uint64_t *out);
RTOTEM_API const char *rtotem_strerror(int err);

/* Quorum (votequorum: quorum { provider: corosync_votequorum } in the daemon's config). */
enum rtotem_quorum_flags {
  RTOTEM_QUORUM_TWO_NODE = 1,          /* two_node in force: quorum 1 */
  RTOTEM_QUORUM_WAIT_FOR_ALL = 2,      /* configured */
  RTOTEM_QUORUM_LAST_MAN_STANDING = 4, /* configured */
  RTOTEM_QUORUM_AUTO_TIE_BREAKER = 8,  /* configured */
  RTOTEM_QUORUM_WAITING = 16,          /* wait_for_all holds quorum back: not all nodes seen yet */
  RTOTEM_QUORUM_TRACK_START = 32,      /* the state sent when tracking (re)started; any other
                                          event is a change (events of an earlier tracking, still
                                          unread, come before it) */
};

struct rtotem_quorum_node {
  uint32_t nodeid;
  uint32_t votes;
};

struct rtotem_quorum {
  uint32_t rep_nodeid; /* the ring it belongs to: the same id as rtotem_ring_change's */
  uint64_t ring_seq;
  int quorate;
  uint32_t expected_votes;   /* configured */
  uint32_t highest_expected; /* in force: the highest any member holds, or the votes present */
  uint32_t total_votes;
  uint32_t quorum;
  uint32_t flags;                         /* enum rtotem_quorum_flags */
  const struct rtotem_quorum_node *nodes; /* the ring's members, by node id */
  size_t n_nodes;
};

/* Called from rtotem_dispatch: the quorum state when tracking starts, then after every change (once
 * per ring when its members have all reported, and whenever quorate or the numbers change), or the
 * changes rtotem_quorum_track_changes names. */
typedef void (*rtotem_quorum_fn)(rtotem_t *, const struct rtotem_quorum *, void *ctx);
/* Starts tracking (`changed` not NULL) or stops it (NULL). 0; -ENOTSUP: the daemon has no quorum
 * configured; -EINVAL from a daemon older than this library. */
RTOTEM_API int rtotem_quorum_track(rtotem_t *, rtotem_quorum_fn changed);
/* Which changes rtotem_quorum_track_changes tells after the state at its start; the daemon sends
 * no other, so the descriptor wakes for none. */
enum rtotem_quorum_changes {
  RTOTEM_QUORUM_CHANGES_ALL = 1,           /* every change, as rtotem_quorum_track */
  RTOTEM_QUORUM_CHANGES_RING = 2,          /* a new ring, or quorate flipping (libquorum's) */
  RTOTEM_QUORUM_CHANGES_RING_EXPECTED = 3, /* those, or highest_expected changing (libvotequorum's) */
  RTOTEM_QUORUM_CHANGES_NONE = 4,          /* none: the state only */
};
/* As rtotem_quorum_track, with the changes `which` names. -EINVAL: `which` is none of them, or
 * (for any but RTOTEM_QUORUM_CHANGES_ALL) a daemon older than this library. */
RTOTEM_API int rtotem_quorum_track_changes(rtotem_t *, rtotem_quorum_fn changed, int which);
/* votequorum_getinfo: node `nodeid` (0: this node) as this node's votequorum sees it, and the quorum
 * state now (state->nodes stays valid until the next rtotem_quorum_get on this handle). 0;
 * -ENOENT: neither a member of the ring nor in the nodelist; -ENOTSUP: no quorum configured. */
struct rtotem_quorum_node_info {
  uint32_t nodeid;
  int member; /* 1: a member of this node's ring */
  uint32_t votes;
  uint32_t expected_votes; /* the expected votes it holds, as it last reported them */
};
RTOTEM_API int rtotem_quorum_get(rtotem_t *, uint32_t nodeid, struct rtotem_quorum_node_info *node,
                                 struct rtotem_quorum *state);
/* votequorum_setvotes and votequorum_setexpected: take effect at every node once the ring orders
 * them, unless the ring changes first (then nowhere, or only as a rise of expected votes: the
 * daemon logs it). Votes added raise the expected votes with them. 0; -ENOENT: no such node;
 * -EINVAL: refused by votequorum's rule (expected votes below the votes present, or a quorate
 * cluster made inquorate); -EAGAIN: the ring is not in sync yet; -EPERM: the caller is neither root
 * nor the daemon's user; -ENOTSUP: no quorum configured. */
RTOTEM_API int rtotem_quorum_set_votes(rtotem_t *, uint32_t nodeid, uint32_t votes);
RTOTEM_API int rtotem_quorum_set_expected(rtotem_t *, uint32_t expected_votes);

/* This node's quorum device (votequorum's qdevice calls, as corosync-qdevice makes them; the config
 * needs quorum { device { model: ... } }). The device's votes count in a ring once a member's device
 * polls for that ring with its vote cast; a device that does not poll within quorum.device.timeout
 * (sync_timeout after a ring change) loses its vote. Root's or the daemon's user's. 0; -EACCES: no
 * quorum.device configured; -EEXIST: a device of another name is registered; -ENOENT: none is;
 * -EINVAL: `name` (1..254 bytes) is not the registered one; -ESTALE: the poll names a ring that is
 * not this node's (the device polls with the ring of its last notification); -EPERM; -ENOTSUP: no
 * quorum configured. */
RTOTEM_API int rtotem_quorum_device_register(rtotem_t *, const char *name);
RTOTEM_API int rtotem_quorum_device_unregister(rtotem_t *, const char *name);
RTOTEM_API int rtotem_quorum_device_update(rtotem_t *, const char *old_name, const char *new_name);
RTOTEM_API int rtotem_quorum_device_poll(rtotem_t *, const char *name, int cast_vote, uint32_t rep_nodeid,
                                         uint64_t ring_seq);
RTOTEM_API int rtotem_quorum_device_master_wins(rtotem_t *, const char *name, int allow);
enum rtotem_quorum_device_flags {
  RTOTEM_QUORUM_DEVICE_REGISTERED = 1,
  RTOTEM_QUORUM_DEVICE_ALIVE = 2,     /* polled within its timeout */
  RTOTEM_QUORUM_DEVICE_CAST_VOTE = 4, /* its vote given to the ring */
  RTOTEM_QUORUM_DEVICE_MASTER_WINS = 8,
};
#define RTOTEM_QUORUM_DEVICE_NAME_MAX 255 /* its NUL included */
struct rtotem_quorum_device_info {
  uint32_t flags; /* enum rtotem_quorum_device_flags, of node `nodeid`'s device as it last reported it */
  uint32_t votes; /* the device's votes (quorum.device.votes); 0: no device configured */
  char name[RTOTEM_QUORUM_DEVICE_NAME_MAX]; /* this node's device ("": none registered) */
};
/* Node `nodeid`'s device (0: this node's). 0; -ENOENT: no such node; -ENOTSUP: no quorum. */
RTOTEM_API int rtotem_quorum_device_get(rtotem_t *, uint32_t nodeid, struct rtotem_quorum_device_info *info);

/* Key store (corosync's cmap): typed values under dotted names, local to the node. The types are
 * cmap's CMAP_VALUETYPE_* numbers. See rtotemctl(8) for the keys rtotemd keeps. */
enum rtotem_key_type {
  RTOTEM_KEY_INT8 = 1,
  RTOTEM_KEY_UINT8 = 2,
  RTOTEM_KEY_INT16 = 3,
  RTOTEM_KEY_UINT16 = 4,
  RTOTEM_KEY_INT32 = 5,
  RTOTEM_KEY_UINT32 = 6,
  RTOTEM_KEY_INT64 = 7,
  RTOTEM_KEY_UINT64 = 8,
  RTOTEM_KEY_FLOAT = 9,
  RTOTEM_KEY_DOUBLE = 10,
  RTOTEM_KEY_STRING = 11, /* without a terminator on the wire; rtotem_key_get adds one if room */
  RTOTEM_KEY_BINARY = 12,
};
#define RTOTEM_KEY_NAME_MAX 255
#define RTOTEM_KEY_VALUE_MAX 16384 /* bytes of a string or binary value */

struct rtotem_key_value {
  enum rtotem_key_type type;
  const void *data; /* a number in host order and its width; a string's or binary's bytes (a
                       string's followed by a terminator that len does not count) */
  size_t len;
};

/* The value of `key` into `buf` (room for *len bytes; *len becomes the value's size; a string gets
 * a terminator when there is room for it). 0; -ENOENT; -ENOBUFS: *len is what it needs. */
RTOTEM_API int rtotem_key_get(rtotem_t *, const char *key, void *buf, size_t *len, enum rtotem_key_type *type);
/* Adds or changes `key`. 0; -EINVAL (a bad name, or len not the type's width); -EACCES: totem.*,
 * nodelist.*, quorum.*, logging.*, ipc.*, uidgid.config.* and runtime.* come from the file or the
 * daemon, and only root writes uidgid.* (uidgid.uid.N / uidgid.gid.N = 1 lets that user or
 * group connect from then on); -ENOSPC: the store is full (65536 keys or 16 MiB of names and
 * values; for a user other than root and the daemon's own, three quarters of those). */
RTOTEM_API int rtotem_key_set(rtotem_t *, const char *key, enum rtotem_key_type type, const void *data, size_t len);
RTOTEM_API int rtotem_key_delete(rtotem_t *, const char *key); /* 0; -ENOENT; -EACCES */
/* Calls each(key, value, ctx) for every key that starts with `prefix` ("" or NULL: all), in name
 * order, until it returns non-zero. 0; -EMSGSIZE: too many keys under `prefix` for one answer. */
typedef int (*rtotem_key_fn)(const char *key, const struct rtotem_key_value *value, void *ctx);
RTOTEM_API int rtotem_key_list(rtotem_t *, const char *prefix, rtotem_key_fn each, void *ctx);

/* What a tracker is told of (cmap's CMAP_TRACK_*); RTOTEM_TRACK_PREFIX makes `key` a prefix. */
enum rtotem_track_flags {
  RTOTEM_TRACK_DELETE = 1,
  RTOTEM_TRACK_MODIFY = 2,
  RTOTEM_TRACK_ADD = 4,
  RTOTEM_TRACK_PREFIX = 8,
};
/* Called from rtotem_dispatch: `event` is one RTOTEM_TRACK_ADD/MODIFY/DELETE; new_value is NULL
 * on delete, old_value NULL on add. */
typedef void (*rtotem_key_changed_fn)(rtotem_t *, uint64_t track, int event, const char *key,
                                      const struct rtotem_key_value *new_value,
                                      const struct rtotem_key_value *old_value, void *user);
/* 0 and the tracker's id in *track; -EINVAL: no event in flags; -ENOSPC: the connection has 1024
 * trackers already, or its user (but root and the daemon's own) 4096 over all its connections, or
 * all such users 12288 together (the rest of the node's 16384 is kept for root's), or the node
 * 16384. */
RTOTEM_API int rtotem_key_track(rtotem_t *, const char *key, int flags, rtotem_key_changed_fn changed, void *user,
                                uint64_t *track);
RTOTEM_API int rtotem_key_untrack(rtotem_t *, uint64_t track); /* 0; -ENOENT */
/* Which map this handle's key calls use from now on (cmap_initialize_map's): the key store, or the
 * statistics, corosync's stats.* keys (read-only; rtotemd refreshes them at each call and, while
 * they are tracked, every 1.5 s). 0; -EINVAL; -EBUSY while the handle tracks keys of the other. */
enum rtotem_key_map {
  RTOTEM_KEY_MAP_DEFAULT = 0,
  RTOTEM_KEY_MAP_STATS = 1,
};
RTOTEM_API int rtotem_key_map(rtotem_t *, enum rtotem_key_map map);
/* Which of Corosync's services this handle stands for, as the statistics map names its connection
 * (stats.ipcs.serviceN.PID.HANDLE.*): Corosync's numbers, 0 cmap to 7, which rtotem's Corosync
 * libraries give; a handle that says nothing is RTOTEM_SERVICE_NATIVE. Nothing else changes.
 * 0; -EINVAL: above RTOTEM_SERVICE_NATIVE, or a daemon older than the call. */
#define RTOTEM_SERVICE_NATIVE 64
RTOTEM_API int rtotem_client_service(rtotem_t *, unsigned service);

/* Node control (corosync's cfg). */
/* Node `nodeid`'s addresses as text ("10.0.0.1"; 0: this node), up to `max`: 0 and *count, or -ENOENT. */
#define RTOTEM_ADDRESS_MAX 64
struct rtotem_node_address {
  char address[RTOTEM_ADDRESS_MAX];
};
RTOTEM_API int rtotem_node_addresses(rtotem_t *, uint32_t nodeid, struct rtotem_node_address *out, size_t max,
                                     size_t *count);
enum rtotem_shutdown_flags {
  RTOTEM_SHUTDOWN_REQUEST = 0,    /* stops only if no tracking client vetoes within 5 s */
  RTOTEM_SHUTDOWN_REGARDLESS = 1, /* asks them, but stops whatever they answer */
  RTOTEM_SHUTDOWN_IMMEDIATE = 2,  /* asks no one */
};
/* Asks the local daemon to stop: returns once decided. 0 (it leaves the ring and exits), -EBUSY
 * (a client vetoed, did not answer in time, or another shutdown is under way), -EPERM (only root
 * or the daemon's user may: the same for rtotem_kill_node and rtotem_reload). The asker is not
 * asked, even if it tracks shutdown. */
RTOTEM_API int rtotem_shutdown(rtotem_t *, int flags);
/* Called from rtotem_dispatch when a shutdown is asked; answer with rtotem_shutdown_reply (no
 * answer within 5 s counts as a veto). `asked` NULL stops tracking, and a shutdown under way no
 * longer waits for this client. */
typedef void (*rtotem_shutdown_fn)(rtotem_t *, int flags, void *ctx);
RTOTEM_API int rtotem_shutdown_track(rtotem_t *, rtotem_shutdown_fn asked);
RTOTEM_API int rtotem_shutdown_reply(rtotem_t *, int agree); /* 0; -ENOENT: no shutdown asked */
/* Node `nodeid` leaves the ring and its daemon exits, logging `reason` (may be NULL). 0 once the
 * request is queued for the ring (the node acts when the ring delivers it); -ENOENT: not a member
 * of the ring; -EAGAIN: the ring's back-pressure, retry; -EPERM. */
RTOTEM_API int rtotem_kill_node(rtotem_t *, uint32_t nodeid, const char *reason);
/* Reloads every node of the ring, each from its own config file, as corosync-cfgtool -R does:
 * logging, uidgid, the nodes' quorum_votes, the expected votes and the totem timing (token,
 * token_coefficient, consensus, join...) change at run time, on every member at one place in the
 * ring's order, or on none. Returns once every member has reported on its file and the reload
 * applied everywhere or nowhere (names are looked up meanwhile, off the daemons' rings).
 * -ENOTSUP: a member's file changes a key that needs a restart; -EBADMSG: a member's file does
 * not load; -EINVAL: the members' files differ in the nodelist or the timing; -EAGAIN: the ring
 * changed before every member reported, or no ring yet; -EBUSY: another reload is under way
 * (nothing is applied in all of these); -ERANGE: votequorum refused this node's new votes (the
 * rest applied); -EPERM. `message` (may be NULL) gets a line per node: what changed, or why
 * nothing did. */
RTOTEM_API int rtotem_reload(rtotem_t *, char *message, size_t len);
/* Reopens the daemon's log file (after logrotate moved it), as SIGHUP does. 0; -EPERM. */
RTOTEM_API int rtotem_reopen_logs(rtotem_t *);

#ifdef __cplusplus
}
#endif

#endif /* RTOTEM_RTOTEM_H */
