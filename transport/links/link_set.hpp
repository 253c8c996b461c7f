// Several links carry one ring: a Backend whose devices are other backends, one per link (UDP on
// two networks, or RDMA and UDP). The protocol sees one backend and one set of buffers: each packet
// it queues goes out on the links the mode picks, shared, not copied (a link's queue holds a Ref to
// this backend's buffer), and what any link receives comes up here.
//
// Which links work is judged by each link's own pings (LinkMonitor), never by the token, so traffic
// leaves a failed link within its ping timeout, well before the token would be missed.
// - passive: a multicast goes as one multicast on the best link (highest priority, ties: the
//   lowest number) that is up to every reachable peer, else as a unicast to each peer on its own
//   best link;
// - active: each packet on every link that is up to its destination; receivers drop the copies
//   (the protocol does, as it does a network's duplicates). A link whose send queue stays full
//   is left out of a packet that every destination still gets on another link, so one stalled
//   device does not hold the others back until its pings time out.
// A peer with no link up (not yet, or no longer) is sent to on every link: joins reach a node
// whose links are coming up, and a node cut off on one link still hears the others.
// In both modes a unicast (the protocol's token) and a Spread::kEveryLink multicast (its
// retransmissions) go on every live link, whatever the pings say (everywhere()).
//
// Pings and pongs are packets of this layer (header flag kFlagLinkControl), sealed like the rest
// by the link that carries them, and never reach the protocol.
//
// A link may be missing on this node (its device did not open: an RDMA link on a host without
// RDMA) or break for good while running (the device is removed, its QP fails). Either way it
// carries nothing from then on and the others carry the ring; the set fails (link_failure) only
// when no link is left. A broken link is retired at once, and poll_fds() no longer lists it.
//
// The links are opened without the local path: this backend loops its own multicasts back once.
// Lifetime: the links go before this backend's buffers (members before the base).
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "transport/backend.hpp"
#include "transport/links/link_monitor.hpp"

namespace rtotem::transport {

enum class LinkMode : std::uint8_t {
  kPassive,  // each multicast on one link: the up link of highest priority (tokens: everywhere())
  kActive,   // each multicast on every up link; receivers drop the copies
};

struct LinkSpec {
  LinkTiming timing;
  std::uint8_t priority = 1;  // passive: the highest up link wins
  // Why this node has no backend for the link (its entry in open()'s `links` is null).
  std::string missing;
};

struct LinkSetConfig {
  // This node, its cluster and its send buffers; mtu is taken from the links (the smallest).
  BackendParams params;
  std::vector<NodeId> peers;    // every other node
  std::vector<LinkSpec> links;  // link i is links_[i] as given to open()
  LinkMode mode = LinkMode::kPassive;
  // The clock pongs are timed by: the host's monotonic one, or the simulator's virtual one (µs).
  std::function<Micros()> clock;
  // A link going up or down to a peer, one line (off the data path); may be empty.
  std::function<void(std::string_view)> log;
};

// The payload of a ping or a pong: what it is, on which link it went, the pinger's clock.
inline constexpr std::size_t kLinkControlSize = 10;

class LinkSet final : public Backend, private LinkEvents {
 public:
  // `links`: open backends, opened with BackendParams::local_path false, of this node and cluster,
  // one per LinkSpec; null for a link this node is missing (LinkSpec::missing says why), not all.
  // Each is given this set's buffer region to send from (Backend::adopt_send_region).
  static Result<std::unique_ptr<LinkSet>> open(const LinkSetConfig& config,
                                               std::vector<std::unique_ptr<Backend>> links);
  ~LinkSet() override;

  std::string_view name() const noexcept override { return "links"; }
  std::string local_address() const override;
  std::span<const int> poll_fds() const noexcept override { return fds_; }
  int tx_fd() const noexcept override;
  std::uint64_t on_timer(std::uint64_t now_us) noexcept override;

  const LinkSet* link_set() const noexcept override { return this; }
  // Each link seals what it carries: each takes the keys.
  void rekey(std::shared_ptr<const ClusterKey> seal_with,
             std::shared_ptr<const ClusterKey> also_open) noexcept override;
  // Each list goes to its link (a missing or broken one is skipped); every list must name the
  // same nodes. A peer kept keeps its links' state, a new one starts with every link down.
  Result<void> check_peers(std::span<const std::vector<PeerAddress>> by_link) const override;
  void set_peers(std::span<const std::vector<PeerAddress>> by_link) override;
  const LinkMonitor& monitor() const noexcept { return monitor_; }
  std::size_t link_count() const noexcept { return links_.size(); }
  // Null for a link this node is missing.
  const Backend* link(LinkId id) const noexcept { return links_[id].get(); }
  // Why link `id` carries nothing (missing, or broken and retired); empty while it works.
  std::string_view link_down(LinkId id) const noexcept { return down_[id]; }
  // The links `peer`'s share of the traffic goes on now, as a bit mask (bit i: link i): passive,
  // its best up link; active, every up link; none up, every live link. Unicasts and
  // retransmissions go on every live link in both modes (see the top of this file).
  std::uint32_t links_to(NodeId peer) const noexcept;

 private:
  // A link's packet waiting to come up: the link's receive batch may be larger than what a
  // poll of this backend has room for.
  struct Staged {
    InboundPacket packet;
    LinkId link = 0;
  };
  class Stager;

  LinkSet(const LinkSetConfig& config, std::vector<std::unique_ptr<Backend>> links, BufferArena arena,
          const BufferLayout& layout);

  std::size_t transmit(std::span<TxItem> items) noexcept override;
  void reclaim_sent() noexcept override;
  std::size_t receive(std::span<InboundPacket> out) noexcept override;
  bool device_tx_pending() const noexcept override;
  bool device_rx_pending() const noexcept override { return staged_count_ > 0; }
  void on_close() noexcept override;
  void on_retire() noexcept override;

  // Queues `item` on every link its route takes; false (nothing queued) if one of them is full,
  // unless reaches_all_without() lets the packet leave the full ones out.
  bool route(const TxItem& item) noexcept;
  bool reaches_all_without(const TxItem& item, std::uint32_t full) const noexcept;
  static bool everywhere(const TxItem& item) noexcept;
  std::uint32_t best_of(std::uint32_t mask) const noexcept;
  bool take_control(const InboundPacket& packet, LinkId link) noexcept;
  void send_control(NodeId peer, LinkId link, std::uint8_t kind, Micros stamp) noexcept;
  void recompute_routes() noexcept;
  // Retires each live link whose device broke; the set fails when none is left.
  void retire_broken() noexcept;
  void list_fds();

  // LinkEvents
  void send_ping(NodeId peer, LinkId link, Micros stamp) override;
  void link_changed(NodeId peer, LinkId link, bool up) override;

  LinkSetConfig config_;
  std::vector<std::unique_ptr<Backend>> links_;  // null: missing on this node
  std::vector<std::string> down_;                // by link: why it carries nothing
  LinkMonitor monitor_;
  std::vector<int> fds_;
  // By peer index (config_.peers, sorted), bit i for link i: the links up to it, and those a
  // traffic to it goes on (links_to()); both follow the monitor (recompute_routes).
  std::vector<std::uint32_t> up_;
  std::vector<std::uint32_t> routes_;
  std::uint32_t multicast_ = 0;  // the links a multicast goes on as one
  std::uint32_t live_ = 0;       // the links that carry packets: neither missing nor broken
  std::size_t next_link_ = 0;    // polled first next time: no link starves the others
  std::array<Staged, kRxBatchMax> staged_{};
  std::size_t staged_head_ = 0;
  std::size_t staged_count_ = 0;
};

}  // namespace rtotem::transport
