// Corosync's libraries hand their callbacks pointers into the event they read, never NULL, even
// for an empty list; an application may read before it looks at the count.
#pragma once

#include <vector>

namespace rtotem::corosync {

template <class T>
const T* never_null(const std::vector<T>& list) {
  static const T kNone{};
  return list.empty() ? &kNone : list.data();
}

// For the callbacks whose list is not const: one per thread, so that nothing is shared.
template <class T>
T* never_null(std::vector<T>& list) {
  thread_local T none{};
  return list.empty() ? &none : list.data();
}

}  // namespace rtotem::corosync
