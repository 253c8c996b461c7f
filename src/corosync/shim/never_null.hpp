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

}  // namespace rtotem::corosync
