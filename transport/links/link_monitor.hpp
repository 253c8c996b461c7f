// Whether each link reaches each peer, judged by pings and their pongs and never by the ring's
// token: a link that fails is seen, and traffic moves off it, well before the token is missed.
// Sans I/O: the host sends the pings tick() asks for and reports the pongs it receives, so the
// daemon's loop and the simulator's virtual clock drive the same code.
//
// The rules are knet's, which Corosync 3 operators know (corosync.conf(5): knet_ping_interval,
// knet_ping_timeout, knet_pong_count, knet_ping_precision):
// - every ping_interval a ping goes to each peer on each link, stamped with this node's clock;
//   the peer sends the stamp back as a pong on the same link;
// - a pong is good if its round trip is within ping_timeout; the round trip feeds the link's
//   latency, an average over at most `precision` samples;
// - an up link goes down when no good pong came for ping_timeout plus twice its latency (a
//   link's normal round trip does not count against it; knet adds the same);
// - a down link comes up on its pong_count-th good pong in a row, each within ping_timeout of the
//   one before (hysteresis: one packet through a flapping link does not bring it back; knet
//   counts one more pong). A late pong or a missing one restarts the count.
// Every (peer, link) starts down. Memory is taken at construction, and when the peers change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/result.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::transport {

using Micros = std::uint64_t;  // the host's monotonic clock, or the simulator's virtual one
using LinkId = std::uint8_t;
inline constexpr std::size_t kLinksMax = 8;  // as Corosync's and knet's: ring0_addr .. ring7_addr

struct LinkTiming {
  Micros ping_interval = 250'000;
  Micros ping_timeout = 500'000;
  std::uint32_t pong_count = 2;
  std::uint32_t precision = 2048;

  // Each value positive; a ping timeout longer than the interval (else a link that answers every
  // ping still goes down between two of them).
  Result<void> validate() const;
};

// One (peer, link), as the monitor sees it; counters only ever grow.
struct LinkStatus {
  bool up = false;
  std::uint32_t good_in_a_row = 0;  // while down: good pongs since the count last restarted
  Micros last_good_pong = 0;        // when the last good pong came; 0: none yet
  Micros next_ping = 0;
  Micros latency = 0;         // average round trip of the good pongs
  std::uint32_t samples = 0;  // in the average, at most the link's precision
  std::uint64_t pings_sent = 0;
  std::uint64_t pongs_good = 0;
  std::uint64_t pongs_late = 0;  // past ping_timeout, or stamped in the future: not counted
  std::uint64_t went_up = 0;
  std::uint64_t went_down = 0;
};

class LinkEvents {
 public:
  virtual void send_ping(NodeId peer, LinkId link, Micros stamp) = 0;
  virtual void link_changed(NodeId peer, LinkId link, bool up) = 0;

 protected:
  ~LinkEvents() = default;
};

class LinkMonitor {
 public:
  // `peers`: every other node of the cluster (this one excluded), `links`: the timing of links
  // 0 .. links.size() - 1 (at most kLinksMax, each valid).
  LinkMonitor(std::span<const NodeId> peers, std::span<const LinkTiming> links, LinkEvents& events);

  // The nodelist changed (a reload): a peer kept keeps its links' state, a new one starts down.
  void set_peers(std::span<const NodeId> peers);
  // Sends the pings due at `now` and takes down the links whose pongs stopped; returns when it
  // must be called again at the latest.
  Micros tick(Micros now);
  // A pong from `peer` on `link` that carries `stamp`, the time its ping was sent. A peer or link
  // it does not know is ignored (counted).
  void on_pong(NodeId peer, LinkId link, Micros stamp, Micros now);

  bool up(NodeId peer, LinkId link) const noexcept;
  // Whether some link to `peer` is up.
  bool reachable(NodeId peer) const noexcept;
  // Null for a peer or link it does not know.
  const LinkStatus* status(NodeId peer, LinkId link) const noexcept;
  std::size_t link_count() const noexcept { return timings_.size(); }
  std::span<const NodeId> peers() const noexcept { return peers_; }
  std::uint64_t pongs_unknown() const noexcept { return pongs_unknown_; }

 private:
  LinkStatus* find(NodeId peer, LinkId link) noexcept;
  Micros down_after(const LinkStatus& status, const LinkTiming& timing) const noexcept;
  void set_up(NodeId peer, LinkId link, LinkStatus& status, bool up);

  std::vector<NodeId> peers_;         // sorted
  std::vector<LinkTiming> timings_;   // by link
  std::vector<LinkStatus> statuses_;  // peer-major: peers_.size() * timings_.size()
  LinkEvents& events_;
  std::uint64_t pongs_unknown_ = 0;
};

}  // namespace rtotem::transport
