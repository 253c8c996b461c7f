/* Corosync 3's common client types, as rtotem's drop-in client libraries implement them.
 *
 * Written for rtotem from Corosync 3's documented ABI (the values and layouts below are that ABI;
 * programs built against Corosync's headers run against these libraries unchanged). */
#ifndef COROSYNC_COROTYPES_H_DEFINED
#define COROSYNC_COROTYPES_H_DEFINED

#include <stdint.h>
#include <inttypes.h>
#include <time.h>
#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int64_t cs_time_t;

#define CS_FALSE 0
#define CS_TRUE 1
#define CS_MAX_NAME_LENGTH 256
#define CS_TIME_END ((cs_time_t)0x7FFFFFFFFFFFFFFFULL)
#define CS_IPC_TIMEOUT_MS -1

typedef struct {
  uint16_t length;
  uint8_t value[CS_MAX_NAME_LENGTH];
} cs_name_t;

typedef struct {
  char releaseCode;
  unsigned char majorVersion;
  unsigned char minorVersion;
} cs_version_t;

typedef enum {
  CS_DISPATCH_ONE = 1,            /* wait for one event and handle it */
  CS_DISPATCH_ALL = 2,            /* handle every event waiting now; do not wait */
  CS_DISPATCH_BLOCKING = 3,       /* handle events until the handle is finalized or fails */
  CS_DISPATCH_ONE_NONBLOCKING = 4 /* as ONE, but CS_ERR_TRY_AGAIN when none waits */
} cs_dispatch_flags_t;

#define CS_TRACK_CURRENT 0x01
#define CS_TRACK_CHANGES 0x02
#define CS_TRACK_CHANGES_ONLY 0x04

/* Note that success is 1. */
typedef enum {
  CS_OK = 1,
  CS_ERR_LIBRARY = 2,
  CS_ERR_VERSION = 3,
  CS_ERR_INIT = 4,
  CS_ERR_TIMEOUT = 5,
  CS_ERR_TRY_AGAIN = 6,
  CS_ERR_INVALID_PARAM = 7,
  CS_ERR_NO_MEMORY = 8,
  CS_ERR_BAD_HANDLE = 9,
  CS_ERR_BUSY = 10,
  CS_ERR_ACCESS = 11,
  CS_ERR_NOT_EXIST = 12,
  CS_ERR_NAME_TOO_LONG = 13,
  CS_ERR_EXIST = 14,
  CS_ERR_NO_SPACE = 15,
  CS_ERR_INTERRUPT = 16,
  CS_ERR_NAME_NOT_FOUND = 17,
  CS_ERR_NO_RESOURCES = 18,
  CS_ERR_NOT_SUPPORTED = 19,
  CS_ERR_BAD_OPERATION = 20,
  CS_ERR_FAILED_OPERATION = 21,
  CS_ERR_MESSAGE_ERROR = 22,
  CS_ERR_QUEUE_FULL = 23,
  CS_ERR_QUEUE_NOT_AVAILABLE = 24,
  CS_ERR_BAD_FLAGS = 25,
  CS_ERR_TOO_BIG = 26,
  CS_ERR_NO_SECTIONS = 27,
  CS_ERR_CONTEXT_NOT_FOUND = 28,
  CS_ERR_TOO_MANY_GROUPS = 30,
  CS_ERR_SECURITY = 100
} cs_error_t;

#define CS_PRI_NODE_ID "%" PRIu32
#define CS_PRI_NODE_ID_PADDED "%10" PRIu32
#define CS_PRI_RING_ID_SEQ "%" PRIx64
#define CS_PRI_RING_ID "%" PRIx32 ".%" PRIx64

/* libcorosync_common.so.4 */
const char *cs_strerror(cs_error_t err);
cs_error_t qb_to_cs_error(int result);
cs_error_t hdb_error_to_cs(int res);

#define CS_TIME_MS_IN_SEC 1000ULL
#define CS_TIME_US_IN_SEC 1000000ULL
#define CS_TIME_NS_IN_SEC 1000000000ULL
#define CS_TIME_US_IN_MSEC 1000ULL
#define CS_TIME_NS_IN_MSEC 1000000ULL
#define CS_TIME_NS_IN_USEC 1000ULL

/* Nanoseconds of the realtime clock. */
static inline uint64_t cs_timestamp_get(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (uint64_t)now.tv_sec * CS_TIME_NS_IN_SEC + (uint64_t)now.tv_nsec;
}

#ifdef __cplusplus
}
#endif

#endif /* COROSYNC_COROTYPES_H_DEFINED */
