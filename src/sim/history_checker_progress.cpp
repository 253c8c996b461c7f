// Progress while the faults go on (issue 18): liveness judged during the fault phase, not only
// after it. While the connectivity stays the same for longer than the bound and a majority of the
// nodes is pairwise connected (two-way, multicasts included: a node with a one-way link, or deaf
// to multicasts, is connected to no one across it), a ring of such a majority delivers: some
// regular configuration whose members include a connected majority delivers a message at every
// one of its members, and again at least once per bound until the connectivity changes. A ring
// that also holds a node cut one way from some of them, and still delivers everywhere through the
// others' retransmissions, serves that majority as well; for such a ring only messages every
// member delivered since the change count, so that survivors delivering the old ring's last
// messages in Recovery, which a member now cut off delivered before, is no progress of it. The
// applications make messages all through the fault phase, so a working ring always has some.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "src/sim/history_checker.hpp"

namespace rtotem::sim {
namespace {

std::uint64_t bit(std::size_t at) { return std::uint64_t{1} << at; }

// The largest set of pairwise connected nodes, as a mask: Bron-Kerbosch with pivoting. The
// graphs are partitions with a few links cut, so it is quick.
std::uint64_t largest_clique(std::span<const std::uint64_t> links) {
  std::uint64_t best = 0;
  const auto grow = [&](const auto& self, std::uint64_t clique, std::uint64_t candidates, std::uint64_t done) -> void {
    if (candidates == 0 && done == 0) {
      if (std::popcount(clique) > std::popcount(best)) best = clique;
      return;
    }
    if (std::popcount(clique) + std::popcount(candidates) <= std::popcount(best)) return;
    const auto pivot = static_cast<std::size_t>(std::countr_zero(candidates | done));
    for (std::uint64_t rest = candidates & ~(links[pivot] & ~bit(pivot)); rest != 0; rest &= rest - 1) {
      const auto v = static_cast<std::size_t>(std::countr_zero(rest));
      const std::uint64_t neighbours = links[v] & ~bit(v);
      self(self, clique | bit(v), candidates & neighbours, done & neighbours);
      candidates &= ~bit(v);
      done |= bit(v);
    }
  };
  std::uint64_t up = 0;
  for (std::size_t at = 0; at < links.size(); ++at)
    if (links[at] & bit(at)) up |= bit(at);
  grow(grow, 0, up, 0);
  return best;
}

}  // namespace

// The longest a connected majority may wait for its ring to deliver, from a change of the
// connectivity or from its ring's last delivery: the worst path to a working ring, with one retry.
//  - max(token, fail_recv): its ring notices the token is gone (a member crashed or cut off), or
//    a member deaf to multicasts notices it fails to receive and leaves.
//  - consensus: Gather gives up on the members that no longer answer.
//  - token: one commit or recovery token lost on the way (loss runs at up to 20 %) costs a token
//    timeout and another Gather, in which everyone answers.
//  - merge: rings of the majority that were apart find each other (after a heal or a restart).
//  - 4 x join: the Gather rounds in which everyone answers, with a join lost now and then.
//  - 2 x join per node: in a large Gather each node's join that widens the others' sets starts
//    their round again (measured: 63 nodes took ~7 s to re-form after a crash, 3 nodes ~2.3 s).
// Commit, Recovery and a delivery take a few rotations at network speed: milliseconds. With the
// simulator's timeouts (token 1 s, consensus 1.2 s, fail_recv 1 s, merge 0.2 s, join 50 ms): 3.6 s
// and 0.1 s a node (4.4 s for 8 nodes, 10 s for 64).
Time progress_bound_us(const membership::TotemConfig& totem, std::size_t nodes) noexcept {
  const Time detect_ms = std::max(totem.token_timeout_ms, totem.fail_recv_ms);
  const Time ms = detect_ms + totem.consensus_ms + totem.token_timeout_ms + totem.merge_ms +
                  (4 + 2 * Time{nodes}) * Time{totem.join_ms};
  return ms * 1000;
}

void HistoryChecker::record_connectivity(Time now, std::span<const std::uint64_t> links) {
  RTOTEM_ASSERT(links.size() == nodes_.size() && progress_bound_us_ > 0);
  if (connectivity_ && std::ranges::equal(connectivity_->links, links)) return;
  if (connectivity_) judge_progress(now);
  connectivity_ = Connectivity{now, {links.begin(), links.end()}};
}

void HistoryChecker::end_connectivity(Time now) {
  if (connectivity_) judge_progress(now);
  connectivity_.reset();
}

// The window from connectivity_->since_us to `now`: the instants at which a ring of a connected
// majority delivered a message at its last member, and the longest span without one.
void HistoryChecker::judge_progress(Time now) {
  const Time since_us = connectivity_->since_us;
  if (now - since_us <= progress_bound_us_) return;
  const std::uint64_t clique = largest_clique(connectivity_->links);
  const std::size_t majority = nodes_.size() / 2 + 1;
  if (static_cast<std::size_t>(std::popcount(clique)) < majority) return;
  std::vector<Time> times{since_us, now};
  for (std::uint32_t config = 0; config < configs_.size(); ++config) {
    const Config& c = configs_[config];
    if (c.transitional || c.members.size() < majority) continue;
    const std::size_t connected = connected_within(c.members);
    if (connected >= majority) progress_times(config, since_us, now, connected == c.members.size(), times);
  }
  std::sort(times.begin(), times.end());
  const auto gap =
      std::adjacent_find(times.begin(), times.end(), [&](Time a, Time b) { return b - a > progress_bound_us_; });
  if (gap == times.end()) return;
  std::vector<NodeId> nodes;
  std::vector<std::string> where;
  for (std::size_t at = 0; at < nodes_.size(); ++at)
    if (clique & bit(at)) {
      nodes.push_back(nodes_[at]);
      where.push_back(whereabouts(at));
    }
  report(Property::kProgress, gap[1], nodes, std::nullopt,
         fmt::format(
             "nodes {} were pairwise connected from t={} us to t={} us, yet no ring holding a connected majority "
             "delivered a message at all its members from t={} us to t={} us (the bound: {} us); at t={} us: {}",
             fmt::join(nodes, ","), since_us, now, gap[0], gap[1], progress_bound_us_, now, fmt::join(where, "; ")));
}

// Appends the instants in (from, to] at which the k-th delivery in `config` reached the last of
// its members (by the prefix rule, the same message at each), for every k all of them made; for a
// ring not `whole`ly connected, only those that reached the first of them after `from` too.
void HistoryChecker::progress_times(std::uint32_t config, Time from, Time to, bool whole,
                                    std::vector<Time>& out) const {
  std::vector<std::span<const Record>> deliveries;
  for (NodeId member : configs_[config].members) {
    const std::size_t at = index_of(member);
    const std::optional<std::size_t> position = position_of(at, config);
    if (!position) return;  // not installed everywhere (yet): it delivers nowhere everywhere
    deliveries.push_back(deliveries_in(at, *position));
  }
  std::size_t common = deliveries.front().size();
  for (const auto& d : deliveries) common = std::min(common, d.size());
  for (std::size_t k = 0; k < common; ++k) {
    Time first_us = ~Time{0}, last_us = 0;
    for (const auto& d : deliveries) {
      first_us = std::min(first_us, d[k].time_us);
      last_us = std::max(last_us, d[k].time_us);
    }
    if (last_us > from && last_us <= to && (whole || first_us > from)) out.push_back(last_us);
  }
}

// The most of `members` that are up and pairwise connected now.
std::size_t HistoryChecker::connected_within(std::span<const NodeId> members) const {
  std::uint64_t mask = 0;
  for (NodeId member : members) mask |= bit(index_of(member));
  std::vector<std::uint64_t> links(nodes_.size(), 0);
  for (NodeId member : members) links[index_of(member)] = connectivity_->links[index_of(member)] & mask;
  return static_cast<std::size_t>(std::popcount(largest_clique(links)));
}

}  // namespace rtotem::sim
