// malloc interposition: the executable's definitions win over libc's for every library, and
// forward to glibc's internal entry points.
#include "src/common/alloc_counter.hpp"

#include <atomic>
#include <cerrno>
#include <cstddef>

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t align, std::size_t size);
void __libc_free(void* p);
}

namespace {
std::atomic<std::uint64_t> g_allocations{0};
void count() noexcept { g_allocations.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

namespace rtotem {
std::uint64_t heap_allocations() noexcept { return g_allocations.load(std::memory_order_relaxed); }
}  // namespace rtotem

extern "C" {
void* malloc(std::size_t size) {
  count();
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t size) {
  count();
  return __libc_realloc(p, size);
}
void* aligned_alloc(std::size_t align, std::size_t size) {
  count();
  return __libc_memalign(align, size);
}
void* memalign(std::size_t align, std::size_t size) {
  count();
  return __libc_memalign(align, size);
}
int posix_memalign(void** out, std::size_t align, std::size_t size) {
  count();
  void* p = __libc_memalign(align, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void free(void* p) { __libc_free(p); }
}
