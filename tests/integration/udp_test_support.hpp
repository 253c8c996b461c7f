// Helpers for UDP integration tests: configs for nodes on loopback, a collecting sink, and a
// bounded wait that polls every node until a condition holds.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/integration/private_netns.hpp"
#include "tests/integration/wait.hpp"
#include "transport/udp/udp_backend.hpp"

namespace rtotem::test {

using namespace rtotem::transport;
using rtotem::testing::eventually;

inline constexpr std::uint32_t kTestCluster = 0x7274;
inline constexpr std::chrono::milliseconds kPatience{3000};  // for what must happen
inline constexpr std::chrono::milliseconds kQuiet{300};      // for what must not

// In a private namespace ports are ours alone; otherwise spread by pid so parallel runs differ.
inline std::uint16_t test_port(int offset) {
  const int base = in_private_netns() ? 15400 : 20000 + (::getpid() % 2000) * 10;
  return static_cast<std::uint16_t>(base + offset);
}

inline InetAddress addr(const std::string& host, std::uint16_t port) {
  auto a = InetAddress::parse(host, port);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().message());
  return a.value();
}

inline UdpConfig node_config(NodeId id, const InetAddress& bind, std::vector<UdpPeer> peers) {
  UdpConfig config;
  config.params.local_node = id;
  config.params.cluster_id = kTestCluster;
  config.params.mtu = 1400;
  config.params.send_buffers = 1024;
  config.params.recv_buffers = 256;
  config.bind = bind;
  config.peers = std::move(peers);
  return config;
}

inline std::unique_ptr<UdpBackend> open_or_fail(const UdpConfig& config) {
  auto backend = UdpBackend::open(config);
  EXPECT_TRUE(backend.ok()) << (backend.ok() ? "" : backend.error().message());
  return backend.ok() ? std::move(backend.value()) : nullptr;
}

struct Received {
  NodeId from;
  std::string payload;
};

struct CollectSink final : PacketSink {
  std::vector<Received> got;
  std::vector<BufferRef> kept;  // filled only when `keep` is set: the protocol holding buffers
  bool keep = false;
  void on_packets(std::span<InboundPacket> batch) override {
    for (auto& packet : batch) {
      got.push_back(
          {packet.from, std::string(reinterpret_cast<const char*>(packet.payload.data()), packet.payload.size())});
      if (keep) kept.push_back(std::move(packet.hold));
    }
  }
};

inline SendBufferRef make_message(Backend& backend, const std::string& text) {
  SendBufferRef buffer;
  EXPECT_EQ(backend.acquire(buffer), Status::kOk);
  std::memcpy(buffer->writable_payload().data(), text.data(), text.size());
  buffer->set_payload_size(static_cast<std::uint32_t>(text.size()));
  return buffer;
}

// How many datagrams wait in socket `fd`'s receive queue, counted without taking any: each peek
// from the peek offset (SO_PEEK_OFF) goes past one datagram. The offset is switched off again.
inline std::size_t datagrams_waiting(int fd) {
  int offset = 0;
  if (::setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &offset, sizeof offset) != 0) return 0;
  std::vector<char> datagram(1 << 16);  // whole: the offset moves on by what a peek copied
  std::size_t waiting = 0;
  while (::recv(fd, datagram.data(), datagram.size(), MSG_PEEK | MSG_DONTWAIT) >= 0) ++waiting;
  offset = -1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &offset, sizeof offset);
  return waiting;
}

// Polls every backend (each into its own sink) until `done` or the deadline; true if done.
inline bool poll_until(std::vector<Backend*> backends, std::vector<CollectSink*> sinks,
                       const std::function<bool()>& done, std::chrono::milliseconds limit = kPatience) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<pollfd> fds;
  for (Backend* b : backends)
    for (int fd : b->poll_fds()) fds.push_back(pollfd{fd, POLLIN, 0});
  // The backends are polled once more after the deadline: a test descheduled past it is judged
  // on what had arrived, not on what it had not yet read.
  for (;;) {
    if (done()) return true;
    const bool late = std::chrono::steady_clock::now() > deadline;
    for (std::size_t i = 0; i < backends.size(); ++i) {
      (void)backends[i]->flush();
      while (backends[i]->poll(*sinks[i]) > 0) {}
    }
    if (done()) return true;
    if (late) return false;
    ::poll(fds.data(), fds.size(), 10);
  }
}

}  // namespace rtotem::test
