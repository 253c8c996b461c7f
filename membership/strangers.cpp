#include "membership/strangers.hpp"

#include <algorithm>
#include <utility>

namespace rtotem::membership {

StrangerLog::Entry& StrangerLog::entry_of(NodeId node, Time now) noexcept {
  auto it = std::find_if(entries_.begin(), entries_.end(), [node](const Entry& e) { return e.node == node; });
  if (it == entries_.end())
    it = std::min_element(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
      return std::pair(a.node != kNoNode, a.heard) < std::pair(b.node != kNoNode, b.heard);  // free ones first
    });
  if (it->node != node) *it = Entry{.node = node, .heard = now};
  return *it;
}

void StrangerLog::heard(NodeId node, Time now) noexcept { entry_of(node, now).heard = now; }

bool StrangerLog::votes_for(NodeId node, Time since, Time now) const noexcept {
  return node != kNoNode && std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
           return e.node == node && e.heard >= since && e.not_before <= now && e.may_hear_us(since);
         });
}

NodeId StrangerLog::propose(Time heard_since, Time proposed_before, const NodeList& members, Time now) noexcept {
  for (Entry& e : entries_) {
    if (e.node == kNoNode || e.heard < heard_since || contains(members, e.node)) continue;
    if ((e.ever_proposed && e.proposed > proposed_before) || e.not_before > now || !e.may_hear_us(heard_since)) continue;
    e.proposed = now;
    e.ever_proposed = true;
    return e.node;
  }
  return kNoNode;
}

void StrangerLog::installed(const NodeList& attempted, const NodeList& members, Time now, Time backoff) noexcept {
  for (Entry& e : entries_) {
    if (e.node == kNoNode || !contains(attempted, e.node)) continue;
    if (contains(members, e.node)) {
      e.failures = 0;
      e.not_before = 0;
      e.failed_us = false;
      e.omitted = e.named_us = std::nullopt;
      continue;
    }
    ++e.failures;
    e.not_before = now + (backoff << std::min(e.failures - 1, kBackoffDoublingsMax));
  }
}

void StrangerLog::forget(NodeId node) noexcept {
  for (Entry& e : entries_)
    if (e.node == node) e = Entry{};
}

void StrangerLog::failed_us(NodeId node, Time now) noexcept {
  Entry& e = entry_of(node, now);
  e.failed_us = true;
  e.omitted = now;
}

void StrangerLog::join_heard(NodeId node, bool names_us, Time now) noexcept {
  for (Entry& e : entries_) {
    if (e.node != node || !e.failed_us) continue;
    (names_us ? e.named_us : e.omitted) = now;
    return;
  }
}

bool StrangerLog::awaits_us(Time heard_since) const noexcept {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& e) { return e.node != kNoNode && e.failed_us && e.heard >= heard_since; });
}

}  // namespace rtotem::membership
