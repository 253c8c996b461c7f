// What rtotemctl's command files share: the parsed command line, exit codes, and how a failure
// is said.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "rtotem/rtotem.h"

namespace rtotem::ctl {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;  // also quorum's "not quorate", as corosync-quorumtool's

struct Options {
  std::string ipc_name;
  bool json = false;
  bool force = false;  // shutdown --force
  std::vector<std::string> words;
};

// The largest node id, vote count or expected votes a command takes.
inline constexpr std::uint32_t kNumberMax = std::numeric_limits<std::uint32_t>::max();

inline int fail(const std::string& what, int err) {
  fmt::print(stderr, "rtotemctl: {}: {}\n", what, rtotem_strerror(err));
  return kExitFailed;
}

using Handle = std::unique_ptr<rtotem_t, void (*)(rtotem_t*)>;
// A librtotem connection with `cb`, or null after saying why on stderr.
Handle connect(const Options& o, const rtotem_callbacks* cb = nullptr, void* ctx = nullptr);

// rtotemctl_keys.cpp: get, set, delete, list, track. rtotemctl_control.cpp: addresses, reload,
// shutdown, kill. Each returns the exit code.
int key_command(const Options& o);
int control_command(const Options& o);

// Runs rtotem_dispatch on `h` until SIGINT or SIGTERM (track, listen).
int dispatch_until_interrupted(rtotem_t* h);

}  // namespace rtotem::ctl
