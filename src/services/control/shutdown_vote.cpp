#include "src/services/control/shutdown_vote.hpp"

#include <fmt/format.h>

namespace rtotem::control {

std::optional<ShutdownOutcome> ShutdownVote::outcome() const {
  if (!vetoed_by_.empty() && !regardless_) return ShutdownOutcome{false, fmt::format("vetoed by {}", vetoed_by_)};
  if (!waiting_.empty()) return std::nullopt;
  if (!vetoed_by_.empty()) return ShutdownOutcome{true, fmt::format("regardless of the veto of {}", vetoed_by_)};
  return ShutdownOutcome{true, "no client vetoed"};
}

bool ShutdownVote::answer(std::uint64_t client, std::uint32_t pid, bool agree) {
  if (waiting_.erase(client) == 0) return false;
  if (!agree && vetoed_by_.empty()) vetoed_by_ = fmt::format("pid {}", pid);
  return true;
}

ShutdownOutcome ShutdownVote::timed_out() const {
  if (regardless_) return ShutdownOutcome{true, "regardless of clients that did not answer in time"};
  if (!vetoed_by_.empty()) return ShutdownOutcome{false, fmt::format("vetoed by {}", vetoed_by_)};
  return ShutdownOutcome{false, fmt::format("{} client(s) did not answer within {} ms (counted as a veto)",
                                            waiting_.size(), kShutdownTimeoutMs)};
}

}  // namespace rtotem::control
