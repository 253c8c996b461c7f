// libcorosync_common.so.4: cs_error_t's names, and the errno-to-cs_error_t mapping that every
// Corosync client library applies to what its daemon answers.
#include <cerrno>

#include <corosync/corotypes.h>

#include "src/corosync/shim/export.hpp"

CS_EXPORT const char* cs_strerror(cs_error_t err) {
  switch (err) {
    case CS_OK: return "success";
    case CS_ERR_LIBRARY: return "CS_ERR_LIBRARY";
    case CS_ERR_VERSION: return "CS_ERR_VERSION";
    case CS_ERR_INIT: return "CS_ERR_INIT";
    case CS_ERR_TIMEOUT: return "CS_ERR_TIMEOUT";
    case CS_ERR_TRY_AGAIN: return "CS_ERR_TRY_AGAIN";
    case CS_ERR_INVALID_PARAM: return "CS_ERR_INVALID_PARAM";
    case CS_ERR_NO_MEMORY: return "CS_ERR_NO_MEMORY";
    case CS_ERR_BAD_HANDLE: return "CS_ERR_BAD_HANDLE";
    case CS_ERR_BUSY: return "CS_ERR_BUSY";
    case CS_ERR_ACCESS: return "CS_ERR_ACCESS";
    case CS_ERR_NOT_EXIST: return "CS_ERR_NOT_EXIST";
    case CS_ERR_NAME_TOO_LONG: return "CS_ERR_NAME_TOO_LONG";
    case CS_ERR_EXIST: return "CS_ERR_EXIST";
    case CS_ERR_NO_SPACE: return "CS_ERR_NO_SPACE";
    case CS_ERR_INTERRUPT: return "CS_ERR_INTERRUPT";
    case CS_ERR_NAME_NOT_FOUND: return "CS_ERR_NAME_NOT_FOUND";
    case CS_ERR_NO_RESOURCES: return "CS_ERR_NO_RESOURCES";
    case CS_ERR_NOT_SUPPORTED: return "CS_ERR_NOT_SUPPORTED";
    case CS_ERR_BAD_OPERATION: return "CS_ERR_BAD_OPERATION";
    case CS_ERR_FAILED_OPERATION: return "CS_ERR_FAILED_OPERATION";
    case CS_ERR_MESSAGE_ERROR: return "CS_ERR_MESSAGE_ERROR";
    case CS_ERR_QUEUE_FULL: return "CS_ERR_QUEUE_FULL";
    case CS_ERR_QUEUE_NOT_AVAILABLE: return "CS_ERR_QUEUE_NOT_AVAILABLE";
    case CS_ERR_BAD_FLAGS: return "CS_ERR_BAD_FLAGS";
    case CS_ERR_TOO_BIG: return "CS_ERR_TOO_BIG";
    case CS_ERR_NO_SECTIONS: return "CS_ERR_NO_SECTIONS";
    case CS_ERR_CONTEXT_NOT_FOUND: return "CS_ERR_CONTEXT_NOT_FOUND";
    case CS_ERR_TOO_MANY_GROUPS: return "CS_ERR_TOO_MANY_GROUPS";
    case CS_ERR_SECURITY: return "CS_ERR_SECURITY";
  }
  return "unknown error";
}

// `result`: 0 or a negative errno. Anything without a closer meaning is a library failure.
CS_EXPORT cs_error_t qb_to_cs_error(int result) {
  if (result >= 0) return CS_OK;
  switch (-result) {
    case EBADF: return CS_ERR_BAD_HANDLE;
    case ENOMEM: return CS_ERR_NO_MEMORY;
    case ENOMSG:
    case ENOBUFS:
    case ETIMEDOUT:
    case EAGAIN: return CS_ERR_TRY_AGAIN;
    case EBADE: return CS_ERR_FAILED_OPERATION;
    case ETIME: return CS_ERR_TIMEOUT;
    case EINVAL: return CS_ERR_INVALID_PARAM;
    case EBUSY: return CS_ERR_BUSY;
    case EACCES: return CS_ERR_ACCESS;
    case EOVERFLOW: return CS_ERR_NAME_TOO_LONG;
    case EEXIST: return CS_ERR_EXIST;
    case ENOSPC: return CS_ERR_NO_SPACE;
    case EINTR: return CS_ERR_INTERRUPT;
    case ENOENT:
    case ENODEV: return CS_ERR_NOT_EXIST;
    case ENOSYS:
    case ENOTSUP: return CS_ERR_NOT_SUPPORTED;
    case EBADMSG: return CS_ERR_MESSAGE_ERROR;
    case EMSGSIZE:
    case E2BIG: return CS_ERR_TOO_BIG;
    default: return CS_ERR_LIBRARY;
  }
}

// The handle database's errors are negative errnos too.
CS_EXPORT cs_error_t hdb_error_to_cs(int res) { return qb_to_cs_error(res); }
