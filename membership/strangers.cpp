#include "membership/strangers.hpp"

#include <algorithm>
#include <utility>

namespace rtotem::membership {

StrangerLog::Entry& StrangerLog::entry_of(NodeId node) noexcept {
  if (Entry* known = find(node)) return *known;
  Entry& slot = *std::min_element(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return std::pair(a.node != kNoNode, a.heard) < std::pair(b.node != kNoNode, b.heard);  // free ones first
  });
  slot = Entry{.node = node};
  return slot;
}

void StrangerLog::heard(NodeId node, Time now) noexcept { entry_of(node).heard = now; }

StrangerLog::Entry* StrangerLog::find(NodeId node) noexcept {
  auto it = std::find_if(entries_.begin(), entries_.end(), [node](const Entry& e) { return e.node == node; });
  return node == kNoNode || it == entries_.end() ? nullptr : &*it;
}

// Kept even while we are not on a ring that votes: the ring we are forming may be one.
void StrangerLog::says_unheard(NodeId node, const NodeList& unheard, Time until) noexcept {
  if (node == kNoNode) return;
  Entry& e = entry_of(node);
  e.unheard = unheard;
  e.unheard_until = until;
}

void StrangerLog::says_live(NodeId node, const NodeList& live) noexcept {
  if (Entry* e = find(node)) e->unheard = difference(e->unheard, live);
}

bool StrangerLog::votes_for(NodeId node, Time since, const NodeList& members, Time now) const noexcept {
  return node != kNoNode && std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
           return e.node == node && e.heard >= since && e.not_before <= now && !e.holds_off(members, now);
         });
}

NodeId StrangerLog::propose(Time heard_since, Time proposed_before, const NodeList& members, Time now) noexcept {
  for (Entry& e : entries_) {
    if (e.node == kNoNode || e.heard < heard_since || contains(members, e.node)) continue;
    if ((e.ever_proposed && e.proposed > proposed_before) || e.not_before > now || e.holds_off(members, now)) continue;
    e.proposed = now;
    e.ever_proposed = true;
    return e.node;
  }
  return kNoNode;
}

void StrangerLog::installed(const NodeList& attempted, const NodeList& members, Time now, Time backoff) noexcept {
  constexpr std::uint32_t kDoublingsMax = 6;  // 64 x backoff
  for (Entry& e : entries_) {
    if (e.node == kNoNode || !contains(attempted, e.node)) continue;
    if (contains(members, e.node)) {
      e.failures = 0;
      e.not_before = 0;
      e.unheard = NodeList{};
      continue;
    }
    ++e.failures;
    e.not_before = now + (backoff << std::min(e.failures - 1, kDoublingsMax));
  }
}

void StrangerLog::forget(NodeId node) noexcept {
  for (Entry& e : entries_)
    if (e.node == node) e = Entry{};
}

}  // namespace rtotem::membership
