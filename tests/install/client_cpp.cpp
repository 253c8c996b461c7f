// Built against an installed librtotem with the header-only C++ wrapper: a client joins,
// multicasts and delivers its own message through a live rtotemd.
#include <rtotem/rtotem.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <string_view>
#include <thread>

int main(int argc, char** argv) {
  bool delivered = false;
  rtotem::Client client;
  rtotem::Client::Callbacks callbacks;
  callbacks.deliver = [&](const rtotem_message& m) {
    delivered |= std::string_view(static_cast<const char*>(m.data), m.len) == "hello" && m.pid == static_cast<std::uint32_t>(getpid());
  };
  int rc = -EAGAIN;
  for (int tries = 0; tries < 200 && rc != 0; ++tries) {
    rc = client.connect(callbacks, argc > 1 ? argv[1] : nullptr);
    if (rc == 0) break;
    if (rc != -EAGAIN && rc != -ECONNREFUSED && rc != -ENOENT) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (rc != 0) {
    std::fprintf(stderr, "client_cpp: connect: %s\n", rtotem::strerror(rc));
    return 1;
  }
  const char text[] = "hello";
  if ((rc = client.join("install-check")) != 0 ||
      (rc = client.mcast("install-check", std::as_bytes(std::span(text, 5)))) != 0) {
    std::fprintf(stderr, "client_cpp: %s\n", rtotem::strerror(rc));
    return 1;
  }
  for (int i = 0; i < 100 && !delivered; ++i) {
    if (client.dispatch() < 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::printf("client_cpp: own message %s\n", delivered ? "delivered" : "NOT delivered");
  return delivered ? 0 : 1;
}
