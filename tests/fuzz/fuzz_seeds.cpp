// Writes the binary seeds of the fuzz corpora (tests/fuzz/corpus/<target>/) with the project's
// own encoders, so every seed is a packet or request the code really sends. Run it again when a
// wire form changes: fuzz_seeds tests/fuzz/corpus. The config seeds are copies of conf/ and
// tests/data/ files, checked in as they are.
#include <qb/qbipc_common.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "membership/chunks.hpp"
#include "membership/packets.hpp"
#include "src/services/groups/group_wire.hpp"
#include "src/services/quorum/quorum_wire.hpp"
#include "src/ipc/ipc_protocol.hpp"
#include "src/ipc/key_value.hpp"
#include "tests/fuzz/fuzz_steps.hpp"
#include "transport/wire_header.hpp"

namespace rtotem::fuzz {
namespace {

using namespace membership;
using Bytes = std::vector<std::byte>;

std::filesystem::path g_out;

void write(std::string_view target, std::string_view name, std::span<const std::byte> bytes) {
  const std::filesystem::path dir = g_out / target;
  std::filesystem::create_directories(dir);
  std::ofstream file(dir / name, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!file) throw std::runtime_error("cannot write " + (dir / name).string());
}

Bytes text(std::string_view s) {
  Bytes out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());
  return out;
}

void append(Bytes& out, std::span<const std::byte> more) { out.insert(out.end(), more.begin(), more.end()); }

// ---- totem packets

Bytes chunk(ChunkKind kind, std::span<const std::byte> bytes, std::size_t total, std::uint32_t message = 0) {
  Bytes out(chunk_header_size(kind));
  encode_chunk_header(kind, static_cast<std::uint16_t>(bytes.size()), static_cast<std::uint32_t>(total), message, out);
  append(out, bytes);
  return out;
}

Bytes mcast(Seq seq, NodeId sender, Delivery delivery, bool recovery, std::span<const std::byte> payload) {
  Bytes out(mcast_header_size());
  encode_mcast_header({{1, 8}, seq, sender, delivery, recovery}, out);
  append(out, payload);
  return out;
}

template <class Packet, class Encode>
Bytes encoded(const Packet& packet, std::size_t size, Encode encode) {
  Bytes out(size);
  encode(packet, out);
  return out;
}

NodeList nodes(std::initializer_list<NodeId> ids) {
  NodeList list;
  for (NodeId id : ids) list.ids[list.count++] = id;
  return list;
}

void packet_seeds() {
  const Bytes hello = text("hello");
  write("fuzz_packets", "mcast_agreed_one_message",
        mcast(1, 2, Delivery::kAgreed, false, chunk(ChunkKind::kWhole, hello, 5)));
  Bytes packed = chunk(ChunkKind::kWhole, hello, 5);
  append(packed, chunk(ChunkKind::kWhole, text("world!"), 6));
  write("fuzz_packets", "mcast_safe_two_packed", mcast(7, 3, Delivery::kSafe, false, packed));
  write("fuzz_packets", "mcast_first_piece",
        mcast(2, 2, Delivery::kAgreed, false, chunk(ChunkKind::kFirst, hello, 12)));
  const Bytes old_ring = mcast(5, 2, Delivery::kAgreed, false, chunk(ChunkKind::kWhole, hello, 5));
  write("fuzz_packets", "mcast_recovery_carrying_old", mcast(9, 1, Delivery::kAgreed, true, old_ring));

  Token token{.ring_id = {1, 8}, .token_seq = 40, .seq = 12, .aru = 10, .aru_addr = 2, .backlog = 3, .fcc = 5};
  write("fuzz_packets", "token", encoded(token, token_size(token), encode_token));
  token.install_known = true;
  token.install_seq = 11;
  token.rtr_count = 2;
  token.rtr[0] = 11;
  token.rtr[1] = 12;
  write("fuzz_packets", "token_install_rtr", encoded(token, token_size(token), encode_token));

  const Join join{.sender = 2, .ring_seq = 8, .proc_set = nodes({1, 2, 3}), .failed_set = nodes({4})};
  write("fuzz_packets", "join", encoded(join, join_size(join), encode_join));

  Commit commit{.ring_id = {1, 12}, .token_seq = 1, .memb_index = 1, .count = 3};
  for (NodeId n = 1; n <= 3; ++n) commit.members[n - 1] = {n, {1, 8}, 10 + n, 9 + n};
  write("fuzz_packets", "commit_three_members", encoded(commit, commit_size(commit), encode_commit));

  const MergeDetect merge{{1, 8}, 1, nodes({3})};
  write("fuzz_packets", "merge_detect", encoded(merge, merge_detect_size(merge), encode_merge_detect));

  const HoldCancel cancel{{1, 8}};
  write("fuzz_packets", "hold_cancel", encoded(cancel, hold_cancel_size(), encode_hold_cancel));

  // A whole datagram: the transport header of cluster "fuzz" (the target's), then the token.
  const Bytes payload = encoded(token, token_size(token), encode_token);
  Bytes datagram(transport::kWireHeaderSize);
  transport::encode_header({.cluster_id = transport::cluster_id_from_name("fuzz"),
                            .sender = 2,
                            .payload_len = static_cast<std::uint32_t>(payload.size())},
                           std::span<std::byte, transport::kWireHeaderSize>(datagram));
  append(datagram, payload);
  write("fuzz_packets", "datagram_token", datagram);
}

// ---- split messages, as send_queue.cpp cuts them (fuzz_assembler's steps: op = sender - 1)

// The payloads carrying `message` in pieces of `piece` bytes.
std::vector<Bytes> pieces(std::span<const std::byte> message, std::size_t piece) {
  std::vector<Bytes> out;
  const std::size_t count = (message.size() + piece - 1) / piece;
  for (std::size_t i = 0; i < count; ++i) {
    const ChunkKind kind = i == 0 ? ChunkKind::kFirst : i == count - 1 ? ChunkKind::kLast : ChunkKind::kMiddle;
    out.push_back(chunk(kind, message.subspan(i * piece, std::min(piece, message.size() - i * piece)), message.size()));
  }
  return out;
}

Bytes message_of(std::size_t size, char fill) { return text(std::string(size, fill)); }

void assembler_seeds() {
  constexpr std::size_t kPiece = 100;
  const Bytes a = message_of(250, 'a');
  const Bytes b = message_of(300, 'b');
  const auto a_pieces = pieces(a, kPiece);
  const auto b_pieces = pieces(b, kPiece);
  Bytes interleaved;
  for (std::size_t i = 0; i < b_pieces.size(); ++i) {
    if (i < a_pieces.size()) append_step(interleaved, 0, a_pieces[i]);
    append_step(interleaved, 1, b_pieces[i]);
  }
  write("fuzz_assembler", "two_senders_interleaved", interleaved);

  // A packet packs a whole message before the opening piece of the next, as the send queue does.
  Bytes packed = chunk(ChunkKind::kWhole, text("small"), 5);
  append(packed, a_pieces[0]);
  Bytes mixed;
  append_step(mixed, 2, packed);
  append_step(mixed, 2, a_pieces[1]);
  append_step(mixed, 2, a_pieces[2]);
  write("fuzz_assembler", "whole_then_split", mixed);

  Bytes cut;  // a configuration change cuts a message short; the sender starts again after it
  append_step(cut, 3, a_pieces[0]);
  append_step(cut, 0x80);
  for (const Bytes& p : a_pieces) append_step(cut, 3, p);
  write("fuzz_assembler", "cut_by_configuration", cut);

  Bytes crowded;  // more senders start a message than there are slots
  for (std::uint8_t sender = 0; sender < 6; ++sender) append_step(crowded, sender, a_pieces[0]);
  write("fuzz_assembler", "more_senders_than_slots", crowded);

  const Bytes large = message_of(5000, 'l');  // above the target's maximum
  Bytes too_large;
  append_step(too_large, 4, pieces(large, 4000)[0]);
  write("fuzz_assembler", "too_large", too_large);
}

// ---- group packets (fuzz_group_packets' steps: see its op table)

template <class Packet, class Size, class Encode>
Bytes group_packet(const Packet& packet, Size size, Encode encode) {
  Bytes out(size);
  encode(packet, out);
  return out;
}

void quorum_seeds() {
  using namespace quorum;
  auto packet = [](const QuorumPacket& p) {
    Bytes out(encoded_size(p));
    encode(p, out);
    return out;
  };
  const RingId ring{1, 1};
  const Bytes info = packet(NodeInfo{.ring_id = ring,
                                     .votes = 1,
                                     .expected_votes = 8,
                                     .quorate = true,
                                     .last_quorate = QuorateRing{RingId{1, 0}, {1, 2}},
                                     .device = DeviceFlags{.registered = true, .alive = true, .cast_vote = true}});
  Bytes two;  // a ring of 1 and 2: node 2 reports with its device voting; this node's device polls
  append_step(two, 0x80, Bytes{std::byte{0x01}, std::byte{0x00}});
  append_step(two, 0x01, info);
  append_step(two, 0xd0);
  append_step(two, 0xd9);
  append_step(two, 0xe1);
  append_step(two, 0xf8);
  append_step(two, 0x80, Bytes{std::byte{0x00}, std::byte{0x40}});
  write("fuzz_quorum_packets", "device_votes_then_a_cut", two);
  Bytes changes;  // a runtime change from node 2, safe, then LMS and SYNC expiries
  append_step(changes, 0x80, Bytes{std::byte{0x03}, std::byte{0x00}});
  append_step(changes, 0x41, packet(SetVotes{.ring_id = ring, .node = 3, .votes = 2, .expected_votes = 9}));
  append_step(changes, 0x01, packet(SetExpected{.ring_id = ring, .expected_votes = 7}));
  append_step(changes, 0x02, packet(LmsExpired{ring}));
  append_step(changes, 0x21, packet(SyncExpired{ring}));
  write("fuzz_quorum_packets", "changes_and_expiries", changes);
}

void group_seeds() {
  using namespace groups;
  const Bytes join = group_packet(GroupJoin{"orders", 100}, group_join_size("orders"), encode_group_join);
  const Bytes data = text("hello");
  const Bytes mcast =
      group_packet(GroupMcast{"orders", 100, data}, group_mcast_size("orders", data.size()), encode_group_mcast);
  const Bytes leave =
      group_packet(GroupLeave{"orders", 100, Reason::kLeave}, group_leave_size("orders"), encode_group_leave);
  Bytes remote;  // node 2's process joins, multicasts, leaves
  append_step(remote, 0x00, join);
  append_step(remote, 0x40, mcast);
  append_step(remote, 0x00, leave);
  write("fuzz_group_packets", "remote_join_mcast_leave", remote);

  const std::vector<JoinListEntry> entries{{"alpha", 7}, {"alpha", 9}, {"orders", 7}};
  Bytes list(join_list_size(entries));
  encode_join_list(entries, list);
  Bytes merge;  // node 3 joins the ring and sends its join list; node 2 leaves
  append_step(merge, 0xa1);
  append_step(merge, 0x01, list);
  append_step(merge, 0x80);
  write("fuzz_group_packets", "join_list_after_merge", merge);

  Bytes local;  // local clients: join, multicast, a refused leave under back-pressure, then a merge
  append_step(local, 0xc5, text("orders"));
  append_step(local, 0xe5, text(std::string("orders") + '\0' + "hi"));
  append_step(local, 0xf0);
  append_step(local, 0xd5, text("orders"));
  append_step(local, 0xf0);
  append_step(local, 0xa0);
  write("fuzz_group_packets", "local_clients", local);
}

// ---- IPC requests, as librtotem and rtotemctl write them

Bytes request(ipc::RequestId id, ipc::BodyWriter body) {
  qb_ipc_request_header header{};
  header.id = static_cast<std::int32_t>(id);
  header.size = static_cast<std::int32_t>(sizeof header + body.data().size());
  Bytes out(sizeof header);
  std::memcpy(out.data(), &header, sizeof header);
  append(out, body.data());
  return out;
}

void ipc_seeds() {
  using ipc::RequestId;
  ipc::BodyWriter group;
  group.string("orders");
  write("fuzz_ipc_request", "join", request(RequestId::kJoin, group));
  write("fuzz_ipc_request", "leave", request(RequestId::kLeave, group));
  write("fuzz_ipc_request", "members", request(RequestId::kMembers, group));
  write("fuzz_ipc_request", "members_all", request(RequestId::kMembers, [] {
          ipc::BodyWriter all;
          all.string("");
          return all;
        }()));
  ipc::BodyWriter mcast;
  mcast.u8(1);
  mcast.string("orders");
  mcast.bytes(text("hello"));
  write("fuzz_ipc_request", "mcast_safe", request(RequestId::kMcast, mcast));
  write("fuzz_ipc_request", "local_node_id", request(RequestId::kLocalNodeId, {}));
  write("fuzz_ipc_request", "status", request(RequestId::kStatus, {}));
  write("fuzz_ipc_request", "stats", request(RequestId::kStats, {}));
  write("fuzz_ipc_request", "data_max", request(RequestId::kDataMax, {}));
  ipc::BodyWriter key;
  key.string("app.state");
  write("fuzz_ipc_request", "key_get", request(RequestId::kKeyGet, key));
  ipc::BodyWriter set;
  set.string("app.state");
  ipc::put_value(set, ipc::KeyValue::string("running"));
  write("fuzz_ipc_request", "key_set_str", request(RequestId::kKeySet, set));
  ipc::BodyWriter set_u32;
  set_u32.string("uidgid.gid.189");
  ipc::put_value(set_u32, ipc::KeyValue::u32(1));
  write("fuzz_ipc_request", "key_set_u32", request(RequestId::kKeySet, set_u32));
  ipc::BodyWriter track;
  track.string("runtime.");
  track.u32(15);
  write("fuzz_ipc_request", "key_track", request(RequestId::kKeyTrack, track));
  ipc::BodyWriter kill;
  kill.u32(2);
  kill.string("fenced");
  write("fuzz_ipc_request", "kill_node", request(RequestId::kKillNode, kill));
  ipc::BodyWriter shutdown;
  shutdown.u8(ipc::kShutdownRegardless);
  write("fuzz_ipc_request", "shutdown", request(RequestId::kShutdown, shutdown));
  ipc::BodyWriter quorum_track;
  quorum_track.u8(ipc::kQuorumTrackRingsAndExpected);
  write("fuzz_ipc_request", "quorum_track", request(RequestId::kQuorumTrack, quorum_track));
  ipc::BodyWriter ring_track;
  ring_track.u8(0);
  write("fuzz_ipc_request", "ring_track_off", request(RequestId::kRingTrack, ring_track));
  ipc::BodyWriter key_map;
  key_map.u8(ipc::kKeyMapStats);
  write("fuzz_ipc_request", "key_map_stats", request(RequestId::kKeyMap, key_map));
  ipc::BodyWriter service;
  service.u8(2);  // cpg
  write("fuzz_ipc_request", "client_service_cpg", request(RequestId::kClientService, service));
  ipc::BodyWriter poll;
  poll.u8(ipc::kDevicePoll);
  poll.string("Qdevice");
  poll.u8(1);
  poll.u32(1);
  poll.u64(7);
  write("fuzz_ipc_request", "quorum_device_poll", request(RequestId::kQuorumDevice, poll));
}

}  // namespace
}  // namespace rtotem::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  rtotem::fuzz::g_out = argv[1];
  try {
    rtotem::fuzz::packet_seeds();
    rtotem::fuzz::assembler_seeds();
    rtotem::fuzz::group_seeds();
    rtotem::fuzz::quorum_seeds();
    rtotem::fuzz::ipc_seeds();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
