// Private network namespace set-up for integration tests (root only: unshare(CLONE_NEWNET)).
#include "tests/integration/private_netns.hpp"

#include <fmt/format.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/fd.hpp"
#include "tests/integration/wait.hpp"

namespace rtotem::test {
namespace {
bool g_private = false;

bool run(const std::string& command) {
  const int rc = std::system((command + " >/dev/null 2>&1").c_str());
  if (rc != 0) std::fprintf(stderr, "netns set-up: '%s' failed (%d)\n", command.c_str(), rc);
  return rc == 0;
}

// Whether interface `name` of this namespace runs (IFF_RUNNING: up, with its carrier): a veth
// end does once both ends are set up, a moment after `ip link set up` returns.
bool operational(const char* name) {
  const Fd fd(::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq request{};
  std::strncpy(request.ifr_name, name, IFNAMSIZ - 1);
  return fd && ::ioctl(fd.get(), SIOCGIFFLAGS, &request) == 0 && (request.ifr_flags & IFF_RUNNING) != 0;
}
}  // namespace

bool enter_private_netns() {
  if (::geteuid() != 0) {
    std::fprintf(stderr, "not root: tests run in the host namespace; veth tests are skipped\n");
    return false;
  }
  if (::unshare(CLONE_NEWNET) != 0) {
    std::perror("unshare(CLONE_NEWNET)");
    return false;
  }
  g_private = run("ip link set lo up") && run(fmt::format("ip link add {} type veth peer name {}", kVethA, kVethB)) &&
              run(fmt::format("ip link set {} up", kVethA)) && run(fmt::format("ip link set {} up", kVethB)) &&
              run(fmt::format("ip -6 addr add {}/64 dev {} nodad", kVethAddrA, kVethA)) &&
              run(fmt::format("ip -6 addr add {}/64 dev {} nodad", kVethAddrB, kVethB));
  if (g_private && !rtotem::testing::eventually([] { return operational(kVethA) && operational(kVethB); },
                                                std::chrono::seconds(10), std::chrono::milliseconds(10))) {
    std::fprintf(stderr, "netns set-up: %s and %s are not up after 10 s\n", kVethA, kVethB);
    g_private = false;
  }
  return g_private;
}

bool in_private_netns() { return g_private; }

}  // namespace rtotem::test
