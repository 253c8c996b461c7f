// This start's seal epoch (BackendParams::epoch): it must be above every epoch this node used
// before under the cluster key, or the other nodes' replay windows, which remember the newest
// one, drop everything it sends. The wall clock alone would do until it is set back (a wrong RTC
// at boot, before NTP): so the last epoch is kept in the state directory and the next one is
// above both.
#pragma once

#include <cstdint>
#include <string>

#include "src/common/ring_seq_file.hpp"
#include "base/result.hpp"

namespace rtotem {

inline constexpr StateNumber kSealEpochNumber{
    "sealepoch", "seal epoch", "remove it only if the clock is right: the next epoch then comes from it alone"};

// max(now_ns, the stored epoch + 1), stored durably before it is returned. `state_dir` exists.
Result<std::uint64_t> next_seal_epoch(const std::string& state_dir, std::uint64_t now_ns);

// CLOCK_REALTIME in nanoseconds.
std::uint64_t wall_clock_ns() noexcept;

}  // namespace rtotem
