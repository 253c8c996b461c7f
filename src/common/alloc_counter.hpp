// Counts heap allocations of the whole process (malloc and friends, hence operator new), so a
// test or benchmark can prove a path allocates nothing. Linked only into binaries that want it;
// not with ASan, which owns malloc itself.
#pragma once

#include <cstdint>

namespace rtotem {

// Allocations (malloc, calloc, realloc, aligned forms) made so far by any thread.
std::uint64_t heap_allocations() noexcept;

}  // namespace rtotem
