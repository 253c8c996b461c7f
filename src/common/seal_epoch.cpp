// The seal epoch: the wall clock, never below the last one this node stored.
#include "src/common/seal_epoch.hpp"

#include <algorithm>
#include <ctime>

namespace rtotem {

Result<std::uint64_t> next_seal_epoch(const std::string& state_dir, std::uint64_t now_ns) {
  auto file = RingSeqFile::in(state_dir, kSealEpochNumber);
  if (!file) return file.error();
  auto last = file->load();
  if (!last) return last.error();
  const std::uint64_t epoch = std::max(now_ns, *last + 1);
  if (auto stored = file->store(epoch); !stored) return stored.error();
  return epoch;
}

std::uint64_t wall_clock_ns() noexcept {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(now.tv_nsec);
}

}  // namespace rtotem
