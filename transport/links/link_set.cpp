#include "transport/links/link_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <utility>

#include "base/byte_order.hpp"

namespace rtotem::transport {
namespace {

constexpr std::uint8_t kPing = 1;
constexpr std::uint8_t kPong = 2;

// Calls `f(link)` for each bit of `mask`, lowest first.
template <class F>
void for_each_link(std::uint32_t mask, F&& f) {
  for (; mask != 0; mask &= mask - 1) f(static_cast<LinkId>(std::countr_zero(mask)));
}

// The nodes of one link's list but `self`, sorted.
std::vector<NodeId> others_in(std::span<const PeerAddress> peers, NodeId self) {
  std::vector<NodeId> ids;
  for (const PeerAddress& peer : peers)
    if (peer.node != self) ids.push_back(peer.node);
  std::ranges::sort(ids);
  return ids;
}

}  // namespace

// A link's received batch, taken whole: pings and pongs handled at once, the rest staged.
class LinkSet::Stager final : public PacketSink {
 public:
  Stager(LinkSet& set, LinkId link) : set_(set), link_(link) {}
  void on_packets(std::span<InboundPacket> batch) override {
    for (InboundPacket& packet : batch) {
      if (set_.take_control(packet, link_)) continue;
      RTOTEM_ASSERT(set_.staged_count_ < set_.staged_.size());
      Staged& slot = set_.staged_[(set_.staged_head_ + set_.staged_count_) % set_.staged_.size()];
      slot.packet = std::move(packet);
      slot.link = link_;
      ++set_.staged_count_;
    }
  }

 private:
  LinkSet& set_;
  LinkId link_;
};

Result<std::unique_ptr<LinkSet>> LinkSet::open(const LinkSetConfig& config,
                                               std::vector<std::unique_ptr<Backend>> links) {
  if (links.empty() || links.size() > kLinksMax || links.size() != config.links.size())
    return Error::make("{} links and {} link settings: 1 to {} of each, as many of one as of the other", links.size(),
                       config.links.size(), kLinksMax);
  BackendParams params = config.params;
  params.key = nullptr;  // each link seals what it carries
  params.mtu = kMtuMax;
  params.recv_buffers = ~std::uint32_t{0};
  std::size_t present = 0;
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (auto valid = config.links[i].timing.validate(); !valid)
      return Error::make("link {}: {}", i, valid.error().message());
    if (!links[i]) {
      if (config.links[i].missing.empty()) return Error::make("link {} has no backend, and no reason why", i);
      continue;
    }
    ++present;
    const Backend& link = *links[i];
    if (link.local_node() != params.local_node || link.params().cluster_id != params.cluster_id)
      return Error::make("link {} ({}) is another node's or another cluster's", i, link.name());
    if (link.params().local_path) return Error::make("link {} ({}) has a local path of its own", i, link.name());
    params.mtu = std::min(params.mtu, link.mtu());                             // what every link carries, sealed or not
    params.recv_buffers = std::min(params.recv_buffers, link.recv_buffers());  // what the protocol may count on
  }
  if (present == 0) return Error::make("no link opened on this node: {}", config.links.front().missing);
  if (auto valid = params.validate(); !valid) return valid.error();
  // It receives through its links: its own receive region is the least a backend has.
  BackendParams own_buffers = params;
  own_buffers.recv_buffers = static_cast<std::uint32_t>(kRxBatchMax);
  const BufferLayout layout = BufferLayout::of(own_buffers, 0);
  auto arena = BufferArena::map(layout.total_bytes());
  if (!arena) return arena.error();
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (!links[i]) continue;
    if (auto adopted = links[i]->adopt_send_region(arena->region()); !adopted)
      return Error::make("link {} ({}): {}", i, links[i]->name(), adopted.error().message());
  }
  LinkSetConfig own = config;
  own.params = params;
  return std::unique_ptr<LinkSet>(new LinkSet(own, std::move(links), std::move(*arena), layout));
}

LinkSet::LinkSet(const LinkSetConfig& config, std::vector<std::unique_ptr<Backend>> links, BufferArena arena,
                 const BufferLayout& layout)
    : Backend(config.params, std::move(arena), layout),
      config_(config),
      links_(std::move(links)),
      down_(links_.size()),
      monitor_(
          config.peers,
          [&] {
            std::vector<LinkTiming> timings;
            for (const LinkSpec& spec : config.links) timings.push_back(spec.timing);
            return timings;
          }(),
          *this) {
  std::ranges::sort(config_.peers);
  for (std::size_t l = 0; l < links_.size(); ++l) {
    if (links_[l])
      live_ |= 1u << l;
    else
      down_[l] = config_.links[l].missing;
  }
  up_.assign(config_.peers.size(), 0);
  routes_.assign(config_.peers.size(), 0);
  recompute_routes();
  list_fds();
}

Result<void> LinkSet::check_peers(std::span<const std::vector<PeerAddress>> by_link) const {
  if (by_link.size() != links_.size())
    return Error::make("links: peers for {} links, but {} run", by_link.size(), links_.size());
  const std::vector<NodeId> nodes = others_in(by_link[0], local_node());
  for (std::size_t l = 0; l < links_.size(); ++l) {
    if (others_in(by_link[l], local_node()) != nodes)
      return Error::make("links: link {} lists other nodes than link 0", l);
    if ((live_ & (1u << l)) == 0) continue;
    if (auto fits = links_[l]->check_peers(std::span(by_link).subspan(l, 1)); !fits)
      return Error::make("link {}: {}", l, fits.error().message());
  }
  return {};
}

void LinkSet::set_peers(std::span<const std::vector<PeerAddress>> by_link) {
  RTOTEM_ASSERT(check_peers(by_link).ok());
  for_each_link(live_, [&](LinkId l) { links_[l]->set_peers(by_link.subspan(l, 1)); });
  config_.peers = others_in(by_link[0], local_node());
  monitor_.set_peers(config_.peers);
  up_.assign(config_.peers.size(), 0);
  routes_.assign(config_.peers.size(), 0);
  recompute_routes();
}

void LinkSet::list_fds() {
  fds_.clear();
  for_each_link(live_,
                [&](LinkId l) { fds_.insert(fds_.end(), links_[l]->poll_fds().begin(), links_[l]->poll_fds().end()); });
}

LinkSet::~LinkSet() {
  // Staged packets hold the links' receive buffers: home before the links go.
  for (Staged& staged : staged_) staged.packet.hold.reset();
}

void LinkSet::rekey(std::shared_ptr<const ClusterKey> seal_with, std::shared_ptr<const ClusterKey> also_open) noexcept {
  for (const std::unique_ptr<Backend>& link : links_)
    if (link && link->sealed()) link->rekey(seal_with, also_open);
}

std::string LinkSet::local_address() const {
  std::string out;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    out += fmt::format("{}link {} ", i == 0 ? "" : ", ", i);
    out += links_[i] ? fmt::format("{} {}", links_[i]->name(), links_[i]->local_address()) : std::string("missing");
  }
  return out;
}

int LinkSet::tx_fd() const noexcept {
  int fd = -1;
  for_each_link(live_, [&](LinkId l) {
    if (fd < 0 && links_[l]->has_pending_tx()) fd = links_[l]->tx_fd();
  });
  return fd;
}

std::uint64_t LinkSet::on_timer(std::uint64_t now_us) noexcept { return monitor_.tick(now_us); }

std::uint32_t LinkSet::links_to(NodeId peer) const noexcept {
  const auto it = std::ranges::lower_bound(config_.peers, peer);
  if (it == config_.peers.end() || *it != peer) return live_;
  return routes_[static_cast<std::size_t>(it - config_.peers.begin())];
}

// Of the links in `mask`, the one of highest priority; ties: the lowest number.
std::uint32_t LinkSet::best_of(std::uint32_t mask) const noexcept {
  auto best = static_cast<LinkId>(std::countr_zero(mask));
  for_each_link(mask, [&](LinkId l) {
    if (config_.links[l].priority > config_.links[best].priority) best = l;
  });
  return 1u << best;
}

// Per peer, the links up to it and those its packets take: passive, the best up link; active,
// every up link; none up, every live link. Multicast: the links up to every reachable peer (passive:
// the best of them), as multicasts; the peers they miss get unicasts.
void LinkSet::recompute_routes() noexcept {
  std::uint32_t common = live_;
  for (std::size_t p = 0; p < config_.peers.size(); ++p) {
    std::uint32_t up = 0;
    for_each_link(live_, [&](LinkId l) {
      if (monitor_.up(config_.peers[p], l)) up |= 1u << l;
    });
    up_[p] = up;
    if (up != 0) common &= up;
    routes_[p] = up == 0 ? live_ : config_.mode == LinkMode::kActive ? up : best_of(up);
  }
  multicast_ = config_.mode == LinkMode::kActive || common == 0 ? common : best_of(common);
}

// A unicast (the protocol's token, whose loss stops the ring) and a Spread::kEveryLink multicast
// (its retransmissions, which a node that missed the first copy waits for) go on every live link,
// in either mode and whatever the pings say: the monitor lags the wire both ways (a ping timeout
// to see a link fail, pong_count pings to see it back), and a link that has just failed while
// another has just healed would otherwise leave such a packet on the dead one until the token is
// lost. They are few and small; a dead link drops its copy. The bulk keeps to the mode's links.
bool LinkSet::everywhere(const TxItem& item) noexcept {
  return item.dest != kNoNode || item.spread == Spread::kEveryLink;
}

bool LinkSet::route(const TxItem& item) noexcept {
  std::array<std::size_t, kLinksMax> needed{};
  const bool anywhere = everywhere(item);
  const std::uint32_t multicast = item.dest != kNoNode ? 0 : anywhere ? live_ : multicast_;
  const auto unicasts_to = [&](std::size_t p) {
    // Passive: a reachable peer hears the multicast link; an unreachable one every other link too.
    const bool covered = anywhere || (config_.mode == LinkMode::kPassive && multicast != 0 && up_[p] != 0);
    return covered ? 0u : routes_[p] & ~multicast;
  };
  if (item.dest == kNoNode) {
    for_each_link(multicast, [&](LinkId l) { ++needed[l]; });
    for (std::size_t p = 0; p < config_.peers.size(); ++p)
      for_each_link(unicasts_to(p), [&](LinkId l) { ++needed[l]; });
  } else {
    for_each_link(live_, [&](LinkId l) { ++needed[l]; });
  }
  std::uint32_t full = 0;
  for_each_link(live_, [&](LinkId l) {
    if (needed[l] > links_[l]->tx_room()) (void)links_[l]->flush();
    if (needed[l] > links_[l]->tx_room()) full |= 1u << l;
  });
  if (full != 0 && !reaches_all_without(item, full)) return false;
  // Each link used has room: nothing below is refused for want of it (a link that closed
  // refuses, and its copy is lost as on a dead wire).
  if (full != 0) ++counters_.tx_queue_full;  // a copy refused for want of room, as a single link counts it
  const std::uint32_t usable = ~full;
  if (item.dest != kNoNode) {
    for_each_link(live_ & usable, [&](LinkId l) { (void)links_[l]->unicast(item.dest, item.buffer); });
    return true;
  }
  for_each_link(multicast & usable, [&](LinkId l) { (void)links_[l]->multicast(item.buffer); });
  for (std::size_t p = 0; p < config_.peers.size(); ++p) {
    const NodeId peer = config_.peers[p];
    for_each_link(unicasts_to(p) & usable, [&](LinkId l) { (void)links_[l]->unicast(peer, item.buffer); });
  }
  return true;
}

// A packet sent on several links (everywhere(), or active mode) may leave out a link whose queue
// stays full (its device stopped draining, its pings not yet timed out) if every destination
// still gets a copy on another link. A passive multicast goes on one link, and waits for it as a
// single link would.
bool LinkSet::reaches_all_without(const TxItem& item, std::uint32_t full) const noexcept {
  if (everywhere(item)) {
    // Every destination keeps a link its pings have up (any live one if none is): a copy only on
    // links known down would be no copy at all.
    const auto keeps_one = [&](std::size_t p) { return ((up_[p] != 0 ? up_[p] : live_) & ~full) != 0; };
    if (item.dest == kNoNode) {
      for (std::size_t p = 0; p < config_.peers.size(); ++p)
        if (!keeps_one(p)) return false;
      return true;
    }
    const auto it = std::ranges::lower_bound(config_.peers, item.dest);
    if (it == config_.peers.end() || *it != item.dest) return (live_ & ~full) != 0;
    return keeps_one(static_cast<std::size_t>(it - config_.peers.begin()));
  }
  if (config_.mode != LinkMode::kActive) return false;
  for (std::size_t p = 0; p < config_.peers.size(); ++p)
    if (((multicast_ | routes_[p]) & ~full) == 0) return false;
  return true;
}

std::size_t LinkSet::transmit(std::span<TxItem> items) noexcept {
  ++counters_.tx_calls;
  std::size_t done = 0;
  for (; done < items.size() && route(items[done]); ++done) {
    ++counters_.tx_packets;
    counters_.tx_bytes += items[done].wire.size();
  }
  for_each_link(live_, [&](LinkId l) { (void)links_[l]->flush(); });
  retire_broken();
  return done;
}

void LinkSet::reclaim_sent() noexcept {
  for_each_link(live_, [&](LinkId l) { (void)links_[l]->flush(); });
  retire_broken();
}

bool LinkSet::device_tx_pending() const noexcept {
  bool pending = false;
  for_each_link(live_, [&](LinkId l) { pending = pending || links_[l]->has_pending_tx(); });
  return pending;
}

void LinkSet::retire_broken() noexcept {
  std::uint32_t broken = 0;
  for_each_link(live_, [&](LinkId l) {
    if (!links_[l]->link_failure().empty()) broken |= 1u << l;
  });
  if (broken == 0) return;  // the data path: no allocation below this line
  for_each_link(broken, [&](LinkId l) {
    // Its device is gone: what it still holds of ours (queued packets) is dropped with it, as
    // on a dead wire; buffers it handed up stay valid until the protocol lets them go.
    links_[l]->retire();
    live_ &= ~(1u << l);
    down_[l] = std::string(links_[l]->link_failure());
    if (config_.log) config_.log(fmt::format("link {} ({}) is out of service: {}", l, links_[l]->name(), down_[l]));
  });
  list_fds();
  recompute_routes();
  if (live_ == 0) set_link_failure(fmt::format("every link failed; link 0: {}", down_[0]));
}

std::size_t LinkSet::receive(std::span<InboundPacket> out) noexcept {
  std::size_t n = 0;
  std::size_t idle = 0;  // links in a row that had nothing
  while (n < out.size()) {
    if (staged_count_ > 0) {
      Staged& staged = staged_[staged_head_];
      out[n++] = std::move(staged.packet);
      staged_head_ = (staged_head_ + 1) % staged_.size();
      --staged_count_;
      continue;
    }
    if (idle == links_.size()) break;
    const auto link = static_cast<LinkId>(next_link_);
    next_link_ = (next_link_ + 1) % links_.size();
    if ((live_ & (1u << link)) == 0) {
      ++idle;
      continue;
    }
    Stager stager(*this, link);
    const std::size_t polled = links_[link]->poll(stager);
    // A link that handed a full batch may have more; one that handed a short one is drained.
    idle = polled == kRxBatchMax ? 0 : idle + 1;
  }
  retire_broken();
  return n;
}

// Pings are answered on the link they came on; pongs go to the monitor. False: not one of these.
bool LinkSet::take_control(const InboundPacket& packet, LinkId link) noexcept {
  const auto flags = std::to_integer<std::uint8_t>(packet.hold->data()[kWireFlagsOffset]);
  if ((flags & kFlagLinkControl) == 0) return false;
  const std::span<const std::byte> payload = packet.payload;
  if (payload.size() != kLinkControlSize || std::to_integer<LinkId>(payload[1]) != link) {
    ++counters_.drop_bad_length;  // a control packet of another format, or sent on another link
    return true;
  }
  const auto kind = std::to_integer<std::uint8_t>(payload[0]);
  const Micros stamp = get_be<std::uint64_t>(payload.data() + 2);
  if (kind == kPing)
    send_control(packet.from, link, kPong, stamp);
  else if (kind == kPong)
    monitor_.on_pong(packet.from, link, stamp, config_.clock());
  return true;
}

void LinkSet::send_control(NodeId peer, LinkId link, std::uint8_t kind, Micros stamp) noexcept {
  if ((live_ & (1u << link)) == 0) return;  // the monitor finds it down, as it would a cut wire
  SendBufferRef buffer;
  if (acquire(buffer) != Status::kOk) return;  // counted; a lost ping is what the monitor allows for
  std::byte* p = buffer->writable_payload().data();
  p[0] = std::byte(kind);
  p[1] = std::byte(link);
  put_be<std::uint64_t>(p + 2, stamp);
  buffer->set_payload_size(kLinkControlSize);
  buffer->set_header_flags(kFlagLinkControl);
  if (links_[link]->tx_room() == 0) (void)links_[link]->flush();
  (void)links_[link]->unicast(peer, buffer);
}

void LinkSet::send_ping(NodeId peer, LinkId link, Micros stamp) { send_control(peer, link, kPing, stamp); }

void LinkSet::link_changed(NodeId peer, LinkId link, bool up) {
  recompute_routes();
  if (config_.log)
    config_.log(fmt::format("link {} ({}) to node {} is {}", link, links_[link] ? links_[link]->name() : "missing",
                            peer, up ? "up" : "down"));
}

void LinkSet::on_close() noexcept {
  for_each_link(live_, [&](LinkId l) { links_[l]->close(); });
}

void LinkSet::on_retire() noexcept {
  for_each_link(live_, [&](LinkId l) { links_[l]->retire(); });
}

}  // namespace rtotem::transport
