// Private network namespace set-up for integration tests (root only: unshare(CLONE_NEWNET)).
#include "tests/integration/private_netns.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace rtotem::test {
namespace {
bool g_private = false;

bool run(const std::string& command) {
  const int rc = std::system((command + " >/dev/null 2>&1").c_str());
  if (rc != 0) std::fprintf(stderr, "netns set-up: '%s' failed (%d)\n", command.c_str(), rc);
  return rc == 0;
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
  g_private = run("ip link set lo up") &&
              run(fmt::format("ip link add {} type veth peer name {}", kVethA, kVethB)) &&
              run(fmt::format("ip link set {} up", kVethA)) && run(fmt::format("ip link set {} up", kVethB)) &&
              run(fmt::format("ip -6 addr add {}/64 dev {} nodad", kVethAddrA, kVethA)) &&
              run(fmt::format("ip -6 addr add {}/64 dev {} nodad", kVethAddrB, kVethB));
  if (g_private) std::this_thread::sleep_for(std::chrono::milliseconds(200));  // links settle
  return g_private;
}

bool in_private_netns() { return g_private; }

}  // namespace rtotem::test
