// Set operations on NodeLists (sorted, unique, bounded): the process, failed, consensus and
// member sets of the membership protocol. No allocation.
#pragma once

#include <algorithm>

#include "membership/packets.hpp"

namespace rtotem::membership {

inline bool contains(const NodeList& set, NodeId id) noexcept {
  const auto ids = set.view();
  return std::binary_search(ids.begin(), ids.end(), id);
}

// Adds `id` in order; a full set stays as it is (false).
inline bool insert(NodeList& set, NodeId id) noexcept {
  if (contains(set, id)) return true;
  if (set.count == kMembersMax) return false;
  auto* end = set.ids.begin() + set.count;
  auto* at = std::lower_bound(set.ids.begin(), end, id);
  std::move_backward(at, end, end + 1);
  *at = id;
  ++set.count;
  return true;
}

inline void merge(NodeList& into, const NodeList& from) noexcept {
  for (NodeId id : from.view()) insert(into, id);
}

inline void erase(NodeList& set, NodeId id) noexcept {
  auto* end = set.ids.begin() + set.count;
  auto* at = std::lower_bound(set.ids.begin(), end, id);
  if (at == end || *at != id) return;
  std::move(at + 1, end, at);
  --set.count;
}

inline bool intersects(const NodeList& a, const NodeList& b) noexcept {
  return std::ranges::any_of(a.view(), [&](NodeId id) { return contains(b, id); });
}

inline bool is_subset(const NodeList& part, const NodeList& whole) noexcept {
  const auto p = part.view();
  const auto w = whole.view();
  return std::includes(w.begin(), w.end(), p.begin(), p.end());
}

inline bool equal(const NodeList& a, const NodeList& b) noexcept { return std::ranges::equal(a.view(), b.view()); }

// a − b
inline NodeList difference(const NodeList& a, const NodeList& b) noexcept {
  NodeList out;
  for (NodeId id : a.view())
    if (!contains(b, id)) out.ids[out.count++] = id;
  return out;
}

inline NodeList single(NodeId id) noexcept {
  NodeList out;
  out.ids[0] = id;
  out.count = 1;
  return out;
}

inline NodeList from_span(std::span<const NodeId> ids) noexcept {
  NodeList out;
  for (NodeId id : ids) insert(out, id);
  return out;
}

}  // namespace rtotem::membership
