#include "src/common/process_memory.hpp"

#include <cstdio>
#include <fstream>
#include <string>

namespace rtotem {

ProcessMemory process_memory() {
  ProcessMemory memory;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %llu kB", &kib) == 1)
      memory.rss_bytes = kib * 1024;
    else if (std::sscanf(line.c_str(), "RssAnon: %llu kB", &kib) == 1)
      memory.rss_anon_bytes = kib * 1024;
    else if (std::sscanf(line.c_str(), "RssShmem: %llu kB", &kib) == 1)
      memory.rss_shmem_bytes = kib * 1024;
    else if (std::sscanf(line.c_str(), "VmHWM: %llu kB", &kib) == 1)
      memory.peak_bytes = kib * 1024;
  }
  return memory;
}

}  // namespace rtotem
