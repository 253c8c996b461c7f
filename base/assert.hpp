// Always-on assertions: stopping beats diverging. Input from the network is never asserted.
#pragma once

namespace rtotem::detail {
[[noreturn]] void assertion_failed(const char* expr, const char* file, int line, const char* func) noexcept;
}  // namespace rtotem::detail

#define RTOTEM_ASSERT(expr)                                                    \
  do {                                                                         \
    if (!(expr)) [[unlikely]]                                                  \
      ::rtotem::detail::assertion_failed(#expr, __FILE__, __LINE__, __func__); \
  } while (false)

// Costly checks (walking a queue): on in debug and simulator builds, compiled out otherwise.
#ifdef RTOTEM_INVARIANTS
#define RTOTEM_INVARIANT(expr) RTOTEM_ASSERT(expr)
#else
#define RTOTEM_INVARIANT(expr) \
  do {                         \
    if (false) (void)(expr);   \
  } while (false)
#endif
