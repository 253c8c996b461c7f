#include "src/common/process_memory.hpp"

#include <cstdio>
#include <cstring>

namespace rtotem {

ProcessMemory process_memory() noexcept {
  ProcessMemory memory;
  std::FILE* status = std::fopen("/proc/self/status", "re");
  if (status == nullptr) return memory;
  char line[256];
  while (std::fgets(line, sizeof line, status) != nullptr) {
    unsigned long long kib = 0;
    if (std::sscanf(line, "VmRSS: %llu kB", &kib) == 1) memory.rss_bytes = kib * 1024;
    else if (std::sscanf(line, "RssAnon: %llu kB", &kib) == 1) memory.rss_anon_bytes = kib * 1024;
    else if (std::sscanf(line, "RssShmem: %llu kB", &kib) == 1) memory.rss_shmem_bytes = kib * 1024;
    else if (std::sscanf(line, "VmHWM: %llu kB", &kib) == 1) memory.peak_bytes = kib * 1024;
  }
  std::fclose(status);
  return memory;
}

}  // namespace rtotem
