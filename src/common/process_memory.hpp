// The memory this process holds, as the kernel counts it (/proc/self/status): what rtotemctl
// stats shows and the resource-exhaustion tests bound.
#pragma once

#include <cstdint>

namespace rtotem {

struct ProcessMemory {
  std::uint64_t rss_bytes = 0;        // resident now (VmRSS): what follows, and mapped files
  std::uint64_t rss_anon_bytes = 0;   // of which heap, stacks, the transport's buffers (RssAnon)
  std::uint64_t rss_shmem_bytes = 0;  // of which IPC shared memory it touched (RssShmem)
  std::uint64_t peak_bytes = 0;       // the most ever resident (VmHWM)
};

// Zeros where /proc cannot be read. Reads a file: for rtotemctl stats, not for a hot path.
ProcessMemory process_memory();

}  // namespace rtotem
