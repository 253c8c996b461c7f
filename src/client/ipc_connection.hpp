// The client's side of the local IPC over libqb (qb_ipcc, shared memory): librtotem's and
// rtotemctl's connection to rtotemd.
#pragma once

#include <qb/qbipcc.h>

#include <memory>
#include <string>

#include "base/result.hpp"
#include "src/client/client_connection.hpp"

namespace rtotem::client {

class IpcConnection final : public ClientConnection {
 public:
  // `name` empty: $RTOTEM_IPC, else the default. Returns -errno as Error::errnum() on failure.
  static Result<std::unique_ptr<IpcConnection>> open(std::string name);
  ~IpcConnection() override;
  IpcConnection(const IpcConnection&) = delete;
  IpcConnection& operator=(const IpcConnection&) = delete;

  int fd() const override;
  int wait_for_ring(std::chrono::milliseconds pause) override;
  const std::string& name() const noexcept { return name_; }

 private:
  IpcConnection(qb_ipcc_connection_t* c, std::string name, std::size_t buffer_bytes);
  ssize_t exchange(std::span<const iovec> request, std::span<std::byte> answer) override;
  ssize_t post(std::span<const iovec> request) override;
  ssize_t receive_event(std::span<std::byte> out, int timeout_ms) override;

  qb_ipcc_connection_t* c_;
  std::string name_;
};

}  // namespace rtotem::client
