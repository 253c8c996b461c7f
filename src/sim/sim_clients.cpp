#include "src/sim/sim_clients.hpp"

#include <algorithm>
#include <array>
#include <cerrno>

#include "base/assert.hpp"
#include "src/client/librtotem_handle.hpp"
#include "src/client/message_pieces.hpp"

namespace rtotem::sim {
namespace {

constexpr std::array<const char*, 2> kGroups{"red", "blue"};
// A process falls behind (dispatches nothing) for this long: long enough for several group
// changes and whole messages to queue behind its first pieces.
constexpr Time kBehindMinUs = 100'000;
constexpr Time kBehindMaxUs = 2'000'000;
constexpr std::size_t kSmallMax = 512;

}  // namespace

NodeClients::NodeClients(NodeId node, std::size_t processes, stack::NodeStack& stack, ClientWorld& world,
                         std::function<void()> after_request, std::function<bool()> host_alive)
    : node_(node),
      stack_(stack),
      world_(world),
      after_request_(std::move(after_request)),
      host_alive_(std::move(host_alive)),
      processes_(processes) {
  RTOTEM_ASSERT(processes > 0);
  for (Process& p : processes_) p.owner = this;
}

// The handles go before the stack they are connected to (the Member's order).
NodeClients::~NodeClients() = default;

void NodeClients::host_gone() noexcept {
  stack_.clients().closing_all();
  for (Process& p : processes_)
    if (p.connection != nullptr) p.connection->disconnect();
}

void NodeClients::connect(Process& p) {
  if (stack_.accept_client() != 0) return;  // before the first ring, as rtotemd refuses it
  const std::size_t buffer_bytes = stack_.setup().totem.max_message_size + ipc::kBufferOverhead;
  auto connection = std::make_unique<SimConnection>(stack_.clients(), static_cast<pid_t>(world_.next_pid++),
                                                    buffer_bytes, kClientChannelBytes, after_request_, host_alive_);
  SimConnection* raw = connection.get();
  const rtotem_callbacks callbacks{&NodeClients::on_deliver, nullptr, nullptr};
  rtotem_t* h = nullptr;
  if (client::open_handle(std::move(connection), &callbacks, &p, &h) != 0) return;
  p.handle.reset(h);
  p.connection = raw;
  p.pid = world_.next_pid - 1;
  p.id = world_.next_handle++;
  p.joined.clear();
  p.joining.reset();
  p.behind_until = 0;
  if (data_max_ == 0 && rtotem_max_message_size(h, &data_max_) != 0) data_max_ = 0;
  if (data_max_ != 0) world_.checker.set_piece_threshold(data_max_ + 1);
}

void NodeClients::step(Time now, Rng& rng) {
  now_ = now;
  for (Process& p : processes_) {  // a process whose connection was cut off notices, and closes it
    if (p.connection != nullptr && p.connection->cut_off()) {
      ++world_.cut_off;
      p.connection = nullptr;
      p.handle.reset();
    }
  }
  for (Process& p : processes_) {
    if (!host_alive_()) return;
    if (p.handle && !p.joining && now >= p.behind_until && rng.uniform(2) == 0) dispatch(p);
  }
  if (host_alive_()) act(processes_[rng.uniform(processes_.size())], now, rng);
}

void NodeClients::finish(Time now) {
  now_ = now;
  for (Process& p : processes_)
    if (p.handle && host_alive_()) dispatch(p);
}

void NodeClients::act(Process& p, Time now, Rng& rng) {
  if (!p.handle) return connect(p);
  if (p.joining) return join(p, *p.joining);  // nothing else until the join is in
  const std::uint64_t draw = rng.uniform(20);
  const std::string group = kGroups[rng.uniform(kGroups.size())];
  const bool in = p.joined.contains(group);
  if (draw < 8) {
    if (!p.joined.empty()) multicast(p, rng);
  } else if (draw < 11) {
    if (!in) join(p, group);
  } else if (draw < 14) {
    // Leaves, and (two times in three) joins again at once, without dispatching in between: the
    // leave's and the join's changes come among its events, between pieces of others' messages.
    if (!in) return;
    (void)rtotem_leave(p.handle.get(), group.c_str());
    p.joined.erase(group);
    if (draw < 13) join(p, group);
  } else if (draw < 16) {
    p.behind_until = now + rng.uniform_range(kBehindMinUs, kBehindMaxUs);
  } else if (draw == 16 && rng.uniform(4) == 0) {
    p.connection = nullptr;  // rtotem_disconnect flushes, then the stack leaves its groups
    p.handle.reset();
  } else if (now >= p.behind_until) {
    dispatch(p);
  }
}

void NodeClients::join(Process& p, const std::string& group) {
  const int rc = rtotem_join(p.handle.get(), group.c_str());
  if (rc == -EAGAIN) {
    ++world_.refusals;
    p.joining = group;
    return;
  }
  p.joining.reset();
  if (rc == 0) p.joined.insert(group);
}

// Small messages go within the credit window, unanswered (the stack stages what the ring
// refuses); large ones in pieces of data_max, each answered. Two sizes of large message only, so
// that a receiver's unfinished message is often followed by another of its size.
void NodeClients::multicast(Process& p, Rng& rng) {
  auto at = p.joined.begin();
  std::advance(at, static_cast<std::ptrdiff_t>(rng.uniform(p.joined.size())));
  const std::string group = *at;
  std::size_t size = rng.uniform_range(kClientStampSize, kSmallMax);
  if (data_max_ > client::kPieceHeaderSize && rng.uniform(4) == 0) {
    const std::size_t piece = data_max_ - client::kPieceHeaderSize;
    size = rng.uniform(2) == 0 ? 2 * piece + 300 : 4 * piece + 17;
  }
  const rtotem_order order = rng.uniform(3) == 0 ? RTOTEM_SAFE : RTOTEM_AGREED;
  const ClientMessageId id{node_, p.pid, world_.next_counter++};
  scratch_.resize(size);
  write_client_message(scratch_, id);
  world_.checker.record_offer(id, group, size);
  if (rtotem_mcast(p.handle.get(), group.c_str(), scratch_.data(), size, order) == -EAGAIN) ++world_.refusals;
}

void NodeClients::dispatch(Process& p) { (void)rtotem_dispatch(p.handle.get(), RTOTEM_DISPATCH_ALL); }

void NodeClients::on_deliver(rtotem_t* /*h*/, const rtotem_message* m, void* ctx) {
  const Process& p = *static_cast<Process*>(ctx);
  p.owner->world_.checker.record_delivery(p.owner->now_, p.owner->node_, p.id, *m);
}

}  // namespace rtotem::sim
