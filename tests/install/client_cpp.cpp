// Built against an installed librtotem with the header-only C++ wrapper: a client joins,
// multicasts and delivers its own message through a live rtotemd, and writes, tracks and lists a
// key of the key store.
#include <rtotem/rtotem.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>

int main(int argc, char **argv) {
  bool delivered = false;
  rtotem::Client client;
  rtotem::Client::Callbacks callbacks;
  callbacks.deliver = [&](const rtotem_message &m) {
    delivered |= std::string_view(static_cast<const char *>(m.data), m.len) == "hello" &&
                 m.pid == static_cast<std::uint32_t>(getpid());
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
  if (!delivered) return 1;

  int added = 0;
  std::uint64_t track = 0;
  if ((rc = client.key_track(
           "install.", RTOTEM_TRACK_ADD | RTOTEM_TRACK_PREFIX,
           [&](int event, const char *, const rtotem_key_value *, const rtotem_key_value *) {
             added += event == RTOTEM_TRACK_ADD;
           },
           track)) != 0 ||
      (rc = client.key_set("install.state", "checked")) != 0) {
    std::fprintf(stderr, "client_cpp: key store: %s\n", rtotem::strerror(rc));
    return 1;
  }
  std::string listed;
  (void)client.key_list("install.", [&](const char *key, const rtotem_key_value &v) {
    listed = std::string(key) + "=" + std::string(static_cast<const char *>(v.data), v.len);
    return true;
  });
  for (int i = 0; i < 100 && added == 0; ++i) {
    if (client.dispatch() < 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::printf("client_cpp: key %s, tracked %d add(s)\n", listed.c_str(), added);
  return listed == "install.state=checked" && added == 1 ? 0 : 1;
}
