// Error construction and Status names.
#include "base/result.hpp"

#include <cstring>

namespace rtotem {

Error::Error(int errnum, std::string message, bool append_strerror) : errnum_(errnum), message_(std::move(message)) {
  if (append_strerror) message_ += fmt::format(": {}", std::strerror(errnum));
}

std::string_view describe(Status status) noexcept {
  switch (status) {
    case Status::kOk: return "ok";
    case Status::kPoolExhausted: return "send buffer pool exhausted";
    case Status::kQueueFull: return "transmit queue full";
    case Status::kWouldBlock: return "would block";
    case Status::kTooLarge: return "payload larger than the MTU";
    case Status::kUnknownNode: return "no address for that node";
    case Status::kClosed: return "backend closed";
  }
  return "unknown status";
}

}  // namespace rtotem
