// Prints a failed assertion and aborts, so a core dump or a sanitizer report shows where.
#include "base/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace rtotem::detail {
void assertion_failed(const char* expr, const char* file, int line, const char* func) noexcept {
  std::fprintf(stderr, "rtotem: assertion failed: %s (%s:%d in %s)\n", expr, file, line, func);
  std::fflush(stderr);
  std::abort();
}
}  // namespace rtotem::detail
