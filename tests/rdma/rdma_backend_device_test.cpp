// The RDMA backend on a real device, in one Soft-RoCE VM with two rxe devices (vm_backend_test.sh,
// rdma_device_fixture.hpp): set-up and registration, packets both ways (multicast and unicast, in
// the clear and sealed), receive buffers posted again in chains, and a receiver that holds every
// buffer. The limits (back-pressure, oversize, error completions) are in
// rdma_backend_device_limits_test.cpp. Skipped outside such a VM.
//
// UD drops a packet that finds no receive WR posted. Each test here keeps what is in flight within
// the receiver's posted ring (or, holding buffers, asks for exactly the ring's worth), so every
// packet is expected; the limits tests overrun the ring and judge completeness at the sender.
#include <infiniband/verbs.h>

#include "tests/rdma/rdma_device_fixture.hpp"

namespace rtotem::transport::device_test {
namespace {

// The port's active MTU as the device reports it, asked apart from the backend.
int active_mtu_of(const std::string& device) {
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  int mtu = 0;
  for (int i = 0; list && i < count; ++i) {
    if (device != ibv_get_device_name(list[i])) continue;
    if (ibv_context* context = ibv_open_device(list[i])) {
      ibv_port_attr attr{};
      if (ibv_query_port(context, 1, &attr) == 0) mtu = attr.active_mtu;
      ibv_close_device(context);
    }
  }
  if (list) ibv_free_device_list(list);
  return mtu;
}

class RdmaDeviceTraffic : public RdmaDeviceSealedOrNot {};

std::uint64_t chains_of(std::uint64_t wrs, std::uint64_t chain) { return (wrs + chain - 1) / chain; }

// Open: one registration (the arena, seal slots included), every receive buffer posted before the
// join in chains of kRecvPostBatch, and the MTU the port carries, less our header and, with a key,
// less the seal: never the 1400 asked for, which rxe would take and deliver to nobody.
TEST_F(RdmaDevice, OpenRegistersOnceAndPostsTheWholeReceiveRing) {
  ASSERT_NO_FATAL_FAILURE(open_both([](NodeId node, RdmaConfig& config) {
    config.params.mtu = 1400;
    if (node == 2) {
      config.params.recv_buffers = 100;  // not a multiple of the chain: the last chain is short
      config.params.key = make_key();
      config.params.epoch = 1;
    }
  }));
  for (NodeId id : {1u, 2u}) {
    SCOPED_TRACE(fmt::format("node {}", id));
    const std::string device = id == 1 ? "rxe0" : "rxe1";
    const int active_mtu = active_mtu_of(device);
    ASSERT_GE(active_mtu, IBV_MTU_256) << device << " not found or its port not queried";
    const std::uint32_t port_bytes = 128u << active_mtu;  // 1024 on the lab's 1500-byte link
    RdmaBackend& backend = node(id);
    const BackendCounters& counters = backend.counters();
    EXPECT_EQ(counters.mr_registrations, 1u);
    EXPECT_EQ(counters.rx_posted, backend.recv_buffers());
    EXPECT_EQ(counters.rx_post_calls, chains_of(backend.recv_buffers(), kRecvPostBatch));
    EXPECT_EQ(backend.port_mtu_bytes(), port_bytes);
    EXPECT_EQ(backend.params().mtu, port_bytes - kWireHeaderSize);
    EXPECT_EQ(backend.wire_max(), port_bytes);  // a sealed packet is no longer than a clear one
    EXPECT_EQ(backend.mtu(), port_bytes - kWireHeaderSize - (id == 2 ? kSealOverhead : 0));
    EXPECT_EQ(backend.sealed(), id == 2);
    EXPECT_EQ(backend.max_inline(), kInlineWanted);  // rxe offers inline data
    EXPECT_NE(backend.local_address().find(device), std::string::npos) << backend.local_address();
    for (int fd : backend.poll_fds()) EXPECT_GE(fd, 0);
    EXPECT_TRUE(backend.link_failure().empty()) << backend.link_failure();
    EXPECT_EQ(counters.tx_packets + counters.rx_packets + counters.drops(), 0u) << nonzero(counters);
  }
}

// Multicasts and unicasts both ways, small (inline) and full-size (zero-copy) packets: every byte
// arrives, in the order sent; a node's own multicasts reach it once, through the local path,
// while the device's echo of them is dropped; a burst goes out in chains of WRs.
TEST_P(RdmaDeviceTraffic, PacketsArriveIntactAndInOrderBothWays) {
  ASSERT_NO_FATAL_FAILURE(open_both_maybe_sealed([](NodeId, RdmaConfig& config) { config.params.recv_buffers = 256; }));
  // A node not heard from yet has no QP number: not addressable.
  EXPECT_EQ(queue(*node1, 2, 0, 8), Status::kUnknownNode);
  EXPECT_EQ(node1->counters().tx_unknown_node, 1u);

  constexpr std::uint32_t kMulticasts = 40, kUnicasts = 10;
  const auto size_of = [&](NodeId id, std::uint32_t seq) -> std::size_t {
    return seq % 2 ? node(id).mtu() : 4 + seq % 100;  // odd: full, zero-copy; even: inline
  };
  std::uint64_t wire_bytes[3] = {}, inline_sends[3] = {};
  const auto send_burst = [&](NodeId id, NodeId dest, std::uint32_t first, std::uint32_t count) {
    for (std::uint32_t seq = first; seq < first + count; ++seq) {
      ASSERT_EQ(queue(node(id), dest, seq, size_of(id, seq)), Status::kOk) << seq;
      wire_bytes[id] += wire_size(size_of(id, seq));
      inline_sends[id] += wire_size(size_of(id, seq)) <= node(id).max_inline();
    }
    ASSERT_EQ(node(id).flush(), Status::kOk);
  };
  RecordingSink sink1, sink2;
  for (NodeId id : {1u, 2u}) {
    ASSERT_NO_FATAL_FAILURE(send_burst(id, kNoNode, id * 1000, kMulticasts));
    EXPECT_EQ(node(id).counters().tx_packets, kMulticasts);
    EXPECT_EQ(node(id).counters().tx_calls, chains_of(kMulticasts, kSendChainMax));  // 32 WRs, then 8
  }
  ASSERT_TRUE(pump(sink1, sink2,
                   [&] {
                     return sink1.arrivals.size() == 2 * kMulticasts && sink2.arrivals.size() == 2 * kMulticasts &&
                            node1->counters().drop_self_echo == kMulticasts &&
                            node2->counters().drop_self_echo == kMulticasts;
                   }))
      << "node 1: " << nonzero(node1->counters()) << "\nnode 2: " << nonzero(node2->counters());

  // Each now knows the other's QP number: tokens may go.
  ASSERT_NO_FATAL_FAILURE(send_burst(1, 2, 1100, kUnicasts));
  ASSERT_NO_FATAL_FAILURE(send_burst(2, 1, 2100, kUnicasts));
  ASSERT_TRUE(pump(
      sink1, sink2,
      [&] { return sink1.count_from(2) == kMulticasts + kUnicasts && sink2.count_from(1) == kMulticasts + kUnicasts; }))
      << "node 1: " << nonzero(node1->counters()) << "\nnode 2: " << nonzero(node2->counters());
  settle(sink1, sink2);  // nothing more: no duplicate, no unicast looped back

  for (NodeId id : {1u, 2u}) {
    SCOPED_TRACE(fmt::format("node {}", id));
    const NodeId other = id == 1 ? 2 : 1;
    const RecordingSink& sink = id == 1 ? sink1 : sink2;
    std::vector<std::int64_t> from_other = range(other * 1000, kMulticasts);
    for (std::int64_t seq : range(other * 1000 + 100, kUnicasts)) from_other.push_back(seq);
    EXPECT_EQ(sink.seqs_from(other), from_other);                  // intact (-1 otherwise), in order
    EXPECT_EQ(sink.seqs_from(id), range(id * 1000, kMulticasts));  // own, once: the local path
    for (const Arrival& arrival : sink.arrivals)
      EXPECT_EQ(arrival.size, size_of(arrival.from, static_cast<std::uint32_t>(arrival.seq))) << arrival.seq;

    const BackendCounters& counters = node(id).counters();
    EXPECT_EQ(counters.rx_loopback, kMulticasts);
    EXPECT_EQ(counters.drop_self_echo, kMulticasts);  // the device's echo of each
    EXPECT_EQ(counters.drops(), counters.drop_self_echo) << nonzero(counters);
    EXPECT_EQ(counters.rx_packets, kMulticasts + kUnicasts);
    EXPECT_EQ(counters.tx_packets, kMulticasts + kUnicasts);
    EXPECT_EQ(counters.tx_bytes, wire_bytes[id]);  // with a key: the nonce and tag on every packet
    EXPECT_EQ(counters.tx_calls, chains_of(kMulticasts, kSendChainMax) + 1);
    EXPECT_LT(counters.tx_calls, counters.tx_packets);
    EXPECT_EQ(counters.tx_inline, inline_sends[id]);
    EXPECT_GT(counters.tx_inline, 0u);
    EXPECT_LT(counters.tx_inline, counters.tx_packets);  // full-size packets go zero-copy
    EXPECT_EQ(counters.tx_completion_errors + counters.rx_completion_errors + counters.tx_errors, 0u);
    EXPECT_EQ(counters.mr_registrations, 1u);
    EXPECT_TRUE(node(id).link_failure().empty()) << node(id).link_failure();
  }
}

INSTANTIATE_TEST_SUITE_P(Rxe, RdmaDeviceTraffic, ::testing::Bool(), clear_or_sealed);

// Many times the ring's worth of packets: each buffer the protocol lets go goes back to the QP,
// 32 WRs to an ibv_post_recv, from the same one registration.
TEST_F(RdmaDevice, ReleasedReceiveBuffersArePostedAgainInChains) {
  ASSERT_NO_FATAL_FAILURE(open_both());
  constexpr std::uint32_t kRounds = 10, kRound = 32;  // 320 packets through a ring of 64
  RecordingSink sink1, sink2;
  sink2.hold = true;  // as the protocol does: holds a round's packets, then lets them all go
  for (std::uint32_t round = 0; round < kRounds; ++round) {
    for (std::uint32_t seq = round * kRound; seq < (round + 1) * kRound; ++seq)
      ASSERT_EQ(queue(*node1, kNoNode, seq, 64 + seq % 500), Status::kOk);
    ASSERT_EQ(node1->flush(), Status::kOk);
    ASSERT_TRUE(pump(sink1, sink2,
                     [&] {
                       return sink2.arrivals.size() == (round + 1) * kRound &&
                              node1->counters().drop_self_echo == (round + 1) * kRound;
                     }))
        << "round " << round << ": node 2: " << nonzero(node2->counters());
    EXPECT_EQ(sink2.held.size(), kRound);
    sink2.held.clear();  // the 32nd release posts the chain
  }
  (void)node1->poll(sink1);  // posts what the last echoes left pending
  (void)node2->poll(sink2);

  const std::uint64_t total = kRounds * kRound;
  EXPECT_EQ(sink2.seqs_from(1), range(0, total));
  const BackendCounters& receiver = node2->counters();
  EXPECT_EQ(receiver.rx_packets, total);
  EXPECT_EQ(receiver.rx_posted, kRecvBuffers + total);  // the start-up fill, then every buffer again
  EXPECT_EQ(receiver.rx_post_calls, chains_of(kRecvBuffers, kRecvPostBatch) + kRounds);  // one chain a round
  EXPECT_EQ(receiver.rx_ring_empty, 0u);
  EXPECT_EQ(receiver.drops() + receiver.rx_completion_errors, 0u) << nonzero(receiver);
  EXPECT_EQ(receiver.mr_registrations, 1u);
  // The sender's ring took its 320 echoes and gave every buffer back too.
  const BackendCounters& sender = node1->counters();
  EXPECT_EQ(sender.drop_self_echo, total);
  EXPECT_EQ(sender.rx_posted, kRecvBuffers + total);
  EXPECT_LT(sender.rx_post_calls * 4, sender.rx_posted) << nonzero(sender);
  EXPECT_EQ(sender.mr_registrations, 1u);
}

// A protocol that holds every receive buffer leaves no WR on the QP: the device drops what comes
// (UDP's socket would queue it) and each poll counts rx_ring_empty. Released, the buffers go back
// to the QP and packets arrive again.
TEST_F(RdmaDevice, HeldReceiveBuffersAreCountedAsAnEmptyRing) {
  ASSERT_NO_FATAL_FAILURE(open_both());
  RecordingSink sink1, sink2;
  sink2.hold = true;
  const auto send = [&](std::uint32_t first, std::uint32_t count) {
    for (std::uint32_t seq = first; seq < first + count; ++seq) {
      ASSERT_EQ(queue(*node1, kNoNode, seq, 16), Status::kOk);
      if (seq % 32 == 31) {
        ASSERT_TRUE(pump(sink1, sink2, [&] { return node1->flush() == Status::kOk; }));
      }
    }
    ASSERT_TRUE(pump(sink1, sink2, [&] { return node1->flush() == Status::kOk; }));
  };
  ASSERT_NO_FATAL_FAILURE(send(0, kRecvBuffers + 40));
  (void)pump(
      sink1, sink2, [&] { return sink2.arrivals.size() == kRecvBuffers + 40; }, 5s);
  EXPECT_EQ(sink2.arrivals.size(), kRecvBuffers);  // the ring's worth; the rest found no WR posted
  EXPECT_EQ(sink2.seqs_from(1), range(0, kRecvBuffers));
  EXPECT_GT(node2->counters().rx_ring_empty, 0u);
  EXPECT_EQ(node2->counters().rx_completion_errors, 0u);

  const std::uint64_t empty_while_held = node2->counters().rx_ring_empty;
  sink2.held.clear();  // released: re-posted on the next poll
  sink2.hold = false;
  sink2.arrivals.clear();
  (void)node2->poll(sink2);
  ASSERT_NO_FATAL_FAILURE(send(1000, 10));
  EXPECT_TRUE(pump(
      sink1, sink2, [&] { return sink2.arrivals.size() == 10; }, 10s));
  EXPECT_EQ(sink2.seqs_from(1), range(1000, 10));
  EXPECT_EQ(node2->counters().rx_ring_empty, empty_while_held);  // not counted once released
}

}  // namespace
}  // namespace rtotem::transport::device_test
