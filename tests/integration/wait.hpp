// The integration tests' one bounded wait: a condition tried until it holds or the time is up.
// A test waits on what it needs to have happened, never for a fixed time it hopes is enough.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace rtotem::testing {

// Whether `condition` holds within `limit`, tried every `every`; tried once more at the deadline,
// so that a test descheduled past it is judged on what happened, not on when it looked.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = std::chrono::seconds(20),
                       std::chrono::milliseconds every = std::chrono::milliseconds(100)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(every);
  }
  return condition();
}

}  // namespace rtotem::testing
