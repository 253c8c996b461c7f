#include "transport/links/link_monitor.hpp"

#include <algorithm>
#include <limits>

namespace rtotem::transport {

Result<void> LinkTiming::validate() const {
  if (ping_interval == 0) return Error::make("ping interval 0: a link would be pinged without pause");
  if (ping_timeout <= ping_interval)
    return Error::make(
        "ping timeout {} ms is not longer than the ping interval {} ms: a link that answers every ping "
        "would still go down between two of them",
        ping_timeout / 1000, ping_interval / 1000);
  if (pong_count == 0) return Error::make("pong count 0: a link must answer at least one ping to come up");
  if (precision == 0) return Error::make("ping precision 0: the latency average needs at least one sample");
  return {};
}

LinkMonitor::LinkMonitor(std::span<const NodeId> peers, std::span<const LinkTiming> links, LinkEvents& events)
    : peers_(peers.begin(), peers.end()), timings_(links.begin(), links.end()), events_(events) {
  RTOTEM_ASSERT(!timings_.empty() && timings_.size() <= kLinksMax);
  for (const LinkTiming& timing : timings_) RTOTEM_ASSERT(timing.validate().ok());
  std::ranges::sort(peers_);
  RTOTEM_ASSERT(std::ranges::adjacent_find(peers_) == peers_.end());
  statuses_.resize(peers_.size() * timings_.size());
}

void LinkMonitor::set_peers(std::span<const NodeId> peers) {
  std::vector<NodeId> sorted(peers.begin(), peers.end());
  std::ranges::sort(sorted);
  RTOTEM_ASSERT(std::ranges::adjacent_find(sorted) == sorted.end());
  std::vector<LinkStatus> statuses(sorted.size() * timings_.size());
  for (std::size_t p = 0; p < sorted.size(); ++p)
    for (std::size_t l = 0; l < timings_.size(); ++l)
      if (const LinkStatus* kept = find(sorted[p], static_cast<LinkId>(l))) statuses[p * timings_.size() + l] = *kept;
  peers_ = std::move(sorted);
  statuses_ = std::move(statuses);
}

LinkStatus* LinkMonitor::find(NodeId peer, LinkId link) noexcept {
  const auto it = std::ranges::lower_bound(peers_, peer);
  if (it == peers_.end() || *it != peer || link >= timings_.size()) return nullptr;
  return &statuses_[static_cast<std::size_t>(it - peers_.begin()) * timings_.size() + link];
}

const LinkStatus* LinkMonitor::status(NodeId peer, LinkId link) const noexcept {
  return const_cast<LinkMonitor*>(this)->find(peer, link);
}

bool LinkMonitor::up(NodeId peer, LinkId link) const noexcept {
  const LinkStatus* s = status(peer, link);
  return s != nullptr && s->up;
}

bool LinkMonitor::reachable(NodeId peer) const noexcept {
  for (std::size_t link = 0; link < timings_.size(); ++link) {
    if (up(peer, static_cast<LinkId>(link))) return true;
  }
  return false;
}

// An up link, or a down one counting good pongs, runs out when no good pong follows the last.
Micros LinkMonitor::down_after(const LinkStatus& status, const LinkTiming& timing) const noexcept {
  return status.last_good_pong + timing.ping_timeout + (status.up ? 2 * status.latency : 0);
}

void LinkMonitor::set_up(NodeId peer, LinkId link, LinkStatus& status, bool up) {
  status.up = up;
  status.good_in_a_row = 0;
  ++(up ? status.went_up : status.went_down);
  events_.link_changed(peer, link, up);
}

Micros LinkMonitor::tick(Micros now) {
  Micros next = std::numeric_limits<Micros>::max();
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    for (std::size_t l = 0; l < timings_.size(); ++l) {
      LinkStatus& s = statuses_[p * timings_.size() + l];
      const LinkTiming& timing = timings_[l];
      const auto link = static_cast<LinkId>(l);
      if (s.next_ping <= now) {
        ++s.pings_sent;
        events_.send_ping(peers_[p], link, now);
        // On schedule, unless the host was late by an interval or more (a paused process): then
        // from now, not a burst of the missed ones.
        s.next_ping =
            s.next_ping + timing.ping_interval > now ? s.next_ping + timing.ping_interval : now + timing.ping_interval;
      }
      next = std::min(next, s.next_ping);
      if (!s.up && s.good_in_a_row == 0) continue;
      const Micros deadline = down_after(s, timing);
      if (now < deadline) {
        next = std::min(next, deadline);
      } else if (s.up) {
        set_up(peers_[p], link, s, false);
      } else {
        s.good_in_a_row = 0;  // a pong went missing: the count starts again
      }
    }
  }
  return next;
}

void LinkMonitor::on_pong(NodeId peer, LinkId link, Micros stamp, Micros now) {
  LinkStatus* s = find(peer, link);
  if (s == nullptr) {
    ++pongs_unknown_;
    return;
  }
  const LinkTiming& timing = timings_[link];
  if (stamp > now || now - stamp > timing.ping_timeout) {
    ++s->pongs_late;
    if (!s->up) s->good_in_a_row = 0;
    return;
  }
  ++s->pongs_good;
  if (!s->up && s->good_in_a_row > 0 && now >= down_after(*s, timing)) s->good_in_a_row = 0;
  s->last_good_pong = now;
  s->samples = std::min(s->samples + 1, timing.precision);
  s->latency = (s->latency * (s->samples - 1) + (now - stamp)) / s->samples;
  if (!s->up && ++s->good_in_a_row >= timing.pong_count) set_up(peer, link, *s, true);
}

}  // namespace rtotem::transport
