#include "src/client/ipc_connection.hpp"

#include <cerrno>
#include <cstdlib>
#include <thread>

namespace rtotem::client {
namespace {

// What the client asks for: the least. libqb gives a connection the larger of this and the
// daemon's size (its max_message_size plus room), and the rings of that size are shared memory
// for as long as the connection lasts: asking for more than the daemon needs would only waste it.
constexpr std::size_t kRequestedBufferBytes = ipc::kBufferOverhead;

}  // namespace

IpcConnection::IpcConnection(qb_ipcc_connection_t* c, std::string name, std::size_t buffer_bytes)
    : ClientConnection(buffer_bytes), c_(c), name_(std::move(name)) {}

Result<std::unique_ptr<IpcConnection>> IpcConnection::open(std::string name) {
  if (name.empty()) {
    const char* env = std::getenv(ipc::kNameEnv);
    name = env != nullptr && *env != '\0' ? env : ipc::kDefaultName;
  }
  errno = 0;
  qb_ipcc_connection_t* c = qb_ipcc_connect(name.c_str(), kRequestedBufferBytes);
  if (c == nullptr) {
    const int err = errno != 0 ? errno : ECONNREFUSED;
    return Error::sys(err, "rtotemd (ipc name '{}')", name);
  }
  const std::int32_t size = qb_ipcc_get_buffer_size(c);
  return std::unique_ptr<IpcConnection>(
      new IpcConnection(c, std::move(name), size > 0 ? static_cast<std::size_t>(size) : kRequestedBufferBytes));
}

IpcConnection::~IpcConnection() { qb_ipcc_disconnect(c_); }

ssize_t IpcConnection::exchange(std::span<const iovec> request, std::span<std::byte> answer) {
  return qb_ipcc_sendv_recv(c_, request.data(), request.size(), answer.data(), answer.size(), -1);
}

ssize_t IpcConnection::post(std::span<const iovec> request) {
  return qb_ipcc_sendv(c_, request.data(), request.size());
}

ssize_t IpcConnection::receive_event(std::span<std::byte> out, int timeout_ms) {
  return qb_ipcc_event_recv(c_, out.data(), out.size(), timeout_ms);
}

int IpcConnection::fd() const {
  std::int32_t fd = -1;
  const std::int32_t rc = qb_ipcc_fd_get(c_, &fd);
  return rc < 0 ? rc : fd;
}

int IpcConnection::wait_for_ring(std::chrono::milliseconds pause) {
  std::this_thread::sleep_for(pause);
  return 0;
}

}  // namespace rtotem::client
