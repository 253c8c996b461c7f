// The checks and counts one group bench member makes on what the group delivers.
#include "bench/group_bench_receiver.hpp"

#include <algorithm>
#include <span>

#include "bench/group_bench_options.hpp"

namespace rtotem::bench {

BenchReceiver::BenchReceiver(std::size_t latency_samples_max) : latency_samples_max_(latency_samples_max) {
  senders_.reserve(kSendersMax);
  latency_ns_.reserve(latency_samples_max);
}

void BenchReceiver::on_deliver(const rtotem_message& m, std::uint64_t now_ns) {
  const auto header = decode_payload_header(std::span(static_cast<const std::byte*>(m.data), m.len));
  SenderState* s = header ? sender({m.nodeid, m.pid}, header->run_id) : nullptr;
  if (s == nullptr) {
    ++stats_.foreign;
    return;
  }
  if (header->kind == PayloadKind::kEnd) {
    s->ended = true;
    return;
  }
  on_data(*s, m, *header, now_ns);
}

void BenchReceiver::on_data(SenderState& s, const rtotem_message& m, const PayloadHeader& h, std::uint64_t now_ns) {
  if (h.run_id != s.run_id || h.seq != s.next_seq) ++stats_.fifo_violations;
  s.next_seq = h.seq + 1;
  hash_.add(m.nodeid, m.pid, h.seq);
  stats_.order_hash = hash_.value();
  if (stats_.data_delivered == 0)
    stats_.first_ns = now_ns;
  else
    stats_.max_gap_ns = std::max(stats_.max_gap_ns, now_ns - stats_.last_ns);
  stats_.last_ns = now_ns;
  ++stats_.data_delivered;
  stats_.bytes_delivered += m.len;
  if (latency_samples_max_ == 0 || s.id != self_) return;
  if (latency_ns_.size() == latency_samples_max_) {
    ++stats_.latency_dropped;
    return;
  }
  latency_ns_.push_back(now_ns - h.send_ns);
}

// The state of a sender, created at its first message if not awaited before; nullptr past
// kSendersMax (the table never grows past what was reserved). Its first message fixes its run id.
BenchReceiver::SenderState* BenchReceiver::sender(SenderId id, std::uint64_t run_id) {
  auto it = std::ranges::find(senders_, id, &SenderState::id);
  if (it == senders_.end()) {
    if (senders_.size() == kSendersMax) return nullptr;
    it = senders_.insert(senders_.end(), SenderState{.id = id});
  }
  if (!it->run_known) {
    it->run_id = run_id;
    it->run_known = true;
  }
  return &*it;
}

void BenchReceiver::on_group_change(const rtotem_group_change& c) {
  members_.clear();
  for (std::size_t i = 0; i < c.n_members; ++i) members_.push_back({c.members[i].nodeid, c.members[i].pid});
  for (std::size_t i = 0; i < c.n_left; ++i) {
    const SenderId gone{c.left[i].nodeid, c.left[i].pid};
    const auto it = std::ranges::find(senders_, gone, &SenderState::id);
    if (it == senders_.end() || !it->awaited || it->ended) continue;
    it->awaited = false;  // it will never send its end marker now
    ++left_early_;
  }
}

void BenchReceiver::await_end_markers_of_members() {
  for (const SenderId& member : members_) {
    const auto it = std::ranges::find(senders_, member, &SenderState::id);
    if (it != senders_.end()) {
      it->awaited = true;
    } else if (senders_.size() < kSendersMax) {
      senders_.push_back(SenderState{.id = member, .awaited = true});  // not heard from yet
    }
  }
}

bool BenchReceiver::end_markers_complete() const noexcept { return end_markers_missing() == 0; }

std::size_t BenchReceiver::end_markers_missing() const noexcept {
  return static_cast<std::size_t>(
      std::ranges::count_if(senders_, [](const SenderState& s) { return s.awaited && !s.ended; }));
}

}  // namespace rtotem::bench
