// The cluster key file: what rtotem-keygen writes and rtotemd reads, owned by whoever runs the
// daemon and readable by nobody else, as ssh insists for a private key: a key others can read
// protects nothing. Either rtotem-keygen's kClusterKeySize random bytes, the key itself, or a
// Corosync authkey (corosync-keygen's 128 to 4096 bytes), from which the key is derived
// (ClusterKey::derive): an existing cluster's /etc/corosync/authkey works as it is.
#pragma once

#include <cstddef>
#include <string>

#include "transport/cluster_key.hpp"
#include "base/result.hpp"

namespace rtotem {

inline constexpr const char* kDefaultKeyFile = "/etc/rtotem/authkey";
inline constexpr unsigned kKeyFileMode = 0400;
inline constexpr std::size_t kCorosyncKeyMin = 128;  // corosync-keygen -s's range, in bytes
inline constexpr std::size_t kCorosyncKeyMax = 4096;

// Refuses a file that is missing, not a regular file, of neither size above, or readable or
// writable by group or others (the message says how to fix each).
Result<transport::ClusterKey> read_key_file(const std::string& path);

// Writes a fresh random key to `path`, mode 0400, durably: a temp file in the same directory,
// fsync, then link (no `force`: fails if `path` exists, as O_EXCL would, without a window where a
// half-written key is visible) or rename (`force`: replaces it atomically), then fsync of the
// directory. The directory must exist.
Result<void> write_key_file(const std::string& path, bool force);

}  // namespace rtotem
