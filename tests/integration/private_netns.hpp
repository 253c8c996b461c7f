// Runs a test binary in a network namespace of its own, so its sockets, addresses and interfaces
// vanish with the process, even when a test crashes.
#pragma once

namespace rtotem::test {

// Names of the veth pair made inside the namespace (IPv6 multicast needs a real multicast device).
inline constexpr const char* kVethA = "rt0";
inline constexpr const char* kVethB = "rt1";
inline constexpr const char* kVethAddrA = "fd00:7274::1";
inline constexpr const char* kVethAddrB = "fd00:7274::2";

// Enters a fresh namespace with lo up and the veth pair addressed. False (and a printed reason)
// when not permitted: the caller stays in its own namespace and skips what needs the pair.
bool enter_private_netns();
bool in_private_netns();

}  // namespace rtotem::test
