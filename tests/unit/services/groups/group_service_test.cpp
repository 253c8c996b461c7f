// GroupService on a fake ring: daemons whose submits are sequenced into one log per ring and
// delivered to every member in the same order, with the configuration changes extended virtual
// synchrony prescribes; and the group wire form as hostile input. One file, past 400 lines: the
// harness serves only these tests, and tests/meson.build names this file alone for the groups.
#include "src/services/groups/group_service.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "src/services/groups/group_wire.hpp"

namespace rtotem::groups {

// GoogleTest finds these by argument-dependent lookup: failures print names, not raw bytes.
inline void PrintTo(GroupDecodeError error, std::ostream* os) { *os << describe(error); }
inline void PrintTo(Status status, std::ostream* os) { *os << describe(status); }

namespace {

using membership::ConfigChange;
using membership::Delivered;
using membership::Delivery;
using membership::RingId;
using membership::Seq;
using Bytes = std::vector<std::byte>;
using Records = std::vector<std::string>;

constexpr std::size_t kMessageSizeMax = 1 << 20;

Bytes bytes_of(std::string_view text) {
  Bytes bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

std::string text_of(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::string process_text(const ProcessId& process) {
  return std::to_string(process.node) + ":" + std::to_string(process.pid);
}

std::string processes_text(std::span<const ProcessId> processes) {
  std::string text;
  for (const ProcessId& process : processes) text += (text.empty() ? "" : " ") + process_text(process);
  return "[" + text + "]";
}

const char* reason_text(Reason reason) {
  switch (reason) {
    case Reason::kJoin: return "join";
    case Reason::kLeave: return "leave";
    case Reason::kNodeDown: return "nodedown";
    case Reason::kProcDown: return "procdown";
    case Reason::kNodeUp: return "nodeup";
  }
  return "?";
}

// What a service reports, as text: two services agree when their records are equal.
class Recorder final : public GroupEvents {
 public:
  void group_message(const GroupMessage& m) override {
    records.push_back(std::string(m.group) + ": " + process_text(m.sender) + " says '" + text_of(m.data) +
                      (m.order == Delivery::kSafe ? "' safe" : "' agreed"));
  }
  void group_change(const GroupChange& c) override {
    EXPECT_EQ(c.left.size(), c.left_reason.size());
    EXPECT_EQ(c.joined.size(), c.joined_reason.size());
    EXPECT_TRUE(std::ranges::is_sorted(c.members));
    std::string left, joined;
    for (std::size_t i = 0; i < c.left.size(); ++i)
      left += (i == 0 ? "" : " ") + process_text(c.left[i]) + " " + reason_text(c.left_reason[i]);
    // A joiner's reason is written where it is not the usual join: "3:30 nodeup".
    for (std::size_t i = 0; i < c.joined.size(); ++i)
      joined += (i == 0 ? "" : " ") + process_text(c.joined[i]) +
                (c.joined_reason[i] == Reason::kJoin ? "" : std::string(" ") + reason_text(c.joined_reason[i]));
    records.push_back(std::string(c.group) + ": members " + processes_text(c.members) + " joined [" + joined +
                      "] left [" + left + "]");
  }
  Records records;
};

// The fake ring. A daemon's submits wait in its own queue (not sequenced yet, so they go with it
// to its next ring); sequence() moves them into its ring's log; deliver() hands each ring's log to
// every member in order. form() ends every ring as EVS does: each daemon gets its transitional
// configuration, then the old ring's sequenced messages (transitional), then the regular one.
class FakeRing {
 public:
  explicit FakeRing(std::vector<NodeId> ids, std::size_t max_message_size = kMessageSizeMax)
      : max_message_size_(max_message_size) {
    for (NodeId id : ids) {
      daemons_[id].id = id;
      start(daemons_[id]);
    }
    form({ids});  // each one, alone until now, sees the others join
  }

  GroupService& service(NodeId id) { return *daemon(id).service; }
  const Records& records(NodeId id) { return daemon(id).events.records; }
  // Every packet the ring accepted from `id`, in order.
  const std::vector<Bytes>& accepted(NodeId id) { return daemon(id).accepted; }
  // The ring accepts `count` more submits from `id`, then answers kQueueFull; nullopt: all.
  void accept_submits(NodeId id, std::optional<std::size_t> count) { daemon(id).submits_left = count; }

  // A message no GroupService wrote, as if `sender` had submitted it.
  void inject(NodeId sender, Bytes bytes) {
    daemon(sender).queue.push_back({sender, Delivery::kAgreed, std::move(bytes)});
  }

  void sequence() {
    for (auto& [id, d] : daemons_) {
      Ring& ring = rings_[d.ring];
      std::ranges::move(d.queue, std::back_inserter(ring.log));
      d.queue.clear();
    }
  }

  void deliver() {
    sequence();
    for (Ring& ring : rings_) {
      for (const Submitted& message : ring.log) {
        const Delivered delivered = delivered_on(ring, ring.next_seq++, message, false);
        for (NodeId member : ring.members) service(member).on_deliver(delivered);
      }
      ring.log.clear();
    }
  }

  // `layout`: the new rings, covering every daemon once.
  void form(const std::vector<std::vector<NodeId>>& layout) {
    std::vector<Ring> next;
    std::map<NodeId, std::size_t> next_ring;
    for (std::vector<NodeId> members : layout) {
      std::ranges::sort(members);
      for (NodeId id : members) next_ring[id] = next.size();
      next.push_back({RingId{members.front(), ++ring_seq_}, members});
    }
    ASSERT_EQ(next_ring.size(), daemons_.size());
    std::map<NodeId, std::vector<NodeId>> trans;
    for (auto& [id, d] : daemons_) trans[id] = end_ring(d, next[next_ring[id]]);
    for (auto& [id, d] : daemons_) d.ring = next_ring[id];
    rings_ = std::move(next);
    for (auto& [id, d] : daemons_) {
      const Ring& ring = rings_[d.ring];
      std::vector<NodeId> joined;
      std::ranges::set_difference(ring.members, trans[id], std::back_inserter(joined));
      d.service->on_configuration({.ring_id = ring.id, .members = ring.members, .joined = joined});
    }
  }

  // A crash and a restart: a fresh service, its queue lost.
  void restart(NodeId id) {
    Daemon& d = daemon(id);
    d.queue.clear();
    start(d);
  }

 private:
  struct Submitted {
    NodeId sender;
    Delivery delivery;
    Bytes bytes;
  };
  struct Ring {
    RingId id;
    std::vector<NodeId> members;
    std::vector<Submitted> log{};  // sequenced, not delivered yet
    Seq next_seq = 1;
  };
  struct Daemon {
    NodeId id = 0;
    Recorder events;
    std::unique_ptr<GroupService> service;
    std::size_t ring = 0;
    std::vector<Submitted> queue;  // submitted, not sequenced yet
    std::vector<Bytes> accepted;
    std::optional<std::size_t> submits_left;
  };

  Daemon& daemon(NodeId id) { return daemons_.at(id); }

  // A fresh service, alone on a ring of its own.
  void start(Daemon& d) {
    d.ring = rings_.size();
    rings_.push_back({RingId{d.id, ++ring_seq_}, {d.id}});
    d.events.records.clear();
    d.service = std::make_unique<GroupService>(
        d.id, max_message_size_,
        [this, &d](const membership::Gather& packet, Delivery order) { return submit(d, packet, order); }, d.events);
  }

  Status submit(Daemon& d, const membership::Gather& packet, Delivery order) {
    if (d.submits_left) {
      if (*d.submits_left == 0) return Status::kQueueFull;
      --*d.submits_left;
    }
    d.accepted.emplace_back(packet.size());
    packet.copy(0, d.accepted.back());
    d.queue.push_back({d.id, order, d.accepted.back()});
    return Status::kOk;
  }

  static Delivered delivered_on(const Ring& ring, Seq seq, const Submitted& message, bool transitional) {
    return {.ring_id = ring.id,
            .seq = seq,
            .sender = message.sender,
            .delivery = message.delivery,
            .transitional = transitional,
            .payload = message.bytes};
  }

  // `d`'s transitional configuration towards `next`, then its old ring's sequenced messages.
  // Returns the transitional members: those of `next` that come from d's ring.
  std::vector<NodeId> end_ring(Daemon& d, const Ring& next) {
    const Ring& old = rings_[d.ring];
    std::vector<NodeId> trans, left;
    for (NodeId id : next.members)
      if (daemon(id).ring == d.ring) trans.push_back(id);
    std::ranges::set_difference(old.members, trans, std::back_inserter(left));
    d.service->on_configuration({.transitional = true, .ring_id = next.id, .members = trans, .left = left});
    Seq seq = old.next_seq;  // every member delivers them with the same seqs
    for (const Submitted& message : old.log) d.service->on_deliver(delivered_on(old, seq++, message, true));
    return trans;
  }

  std::size_t max_message_size_;
  std::map<NodeId, Daemon> daemons_;  // node-based: services keep their Daemon's address
  std::vector<Ring> rings_;           // replaced whole by form(): an old ring's undelivered log ends with it
  Seq ring_seq_ = 0;
};

Records join_list_entries(const std::vector<Bytes>& packets) {
  Records entries;
  for (const Bytes& bytes : packets) {
    GroupPacket packet;
    EXPECT_EQ(decode_group_packet(bytes, packet), GroupDecodeError::kNone);
    if (const auto* list = std::get_if<GroupJoinList>(&packet))
      for (const JoinListEntry& e : list->entries)
        entries.push_back(std::string(e.group) + "/" + std::to_string(e.pid));
  }
  return entries;
}

std::string members_text(GroupService& service, std::string_view group) {
  return processes_text(service.members(group));
}

// Every daemon holds the same groups with the same members.
void expect_agreement(FakeRing& ring, std::initializer_list<NodeId> ids) {
  const NodeId first = *ids.begin();
  for (NodeId id : ids) {
    ASSERT_EQ(ring.service(id).group_names(), ring.service(first).group_names()) << "node " << id;
    for (const std::string& group : ring.service(first).group_names())
      EXPECT_EQ(members_text(ring.service(id), group), members_text(ring.service(first), group)) << "node " << id;
  }
}

TEST(GroupService, JoinsLeavesAndMessagesAreReportedAlikeByEveryDaemon) {
  FakeRing ring({1, 2, 3});
  ASSERT_EQ(ring.service(1).join("a", 10), Status::kOk);
  ASSERT_EQ(ring.service(2).join("a", 20), Status::kOk);
  ASSERT_EQ(ring.service(2).multicast("a", 20, bytes_of("hi"), Delivery::kSafe), Status::kOk);
  ring.sequence();  // the token visits 1, 2, 3 in turn: what each submitted so far, in that order
  ASSERT_EQ(ring.service(1).leave("a", 10, Reason::kLeave), Status::kOk);
  ASSERT_EQ(ring.service(3).multicast("a", 30, bytes_of("from outside"), Delivery::kAgreed), Status::kOk);
  ring.deliver();
  const Records expected{
      "a: members [1:10] joined [1:10] left []",
      "a: members [1:10 2:20] joined [2:20] left []",
      "a: 2:20 says 'hi' safe",
      "a: members [2:20] joined [] left [1:10 leave]",
      // Only a member multicasts (the daemon refuses others): one the group does not hold yet is
      // reported joining before its message, NODEUP as when a merge brings it in.
      "a: members [2:20 3:30] joined [3:30 nodeup] left []",
      "a: 3:30 says 'from outside' agreed",
  };
  for (NodeId id : {1, 2, 3}) EXPECT_EQ(ring.records(id), expected) << "node " << id;
  EXPECT_EQ(members_text(ring.service(3), "a"), "[2:20 3:30]");
}

TEST(GroupService, ADuplicateJoinAndALeaveOfAnOutsiderChangeNothing) {
  FakeRing ring({1, 2});
  ASSERT_EQ(ring.service(1).join("a", 10), Status::kOk);
  ASSERT_EQ(ring.service(1).join("a", 10), Status::kOk);
  ASSERT_EQ(ring.service(2).leave("a", 20, Reason::kLeave), Status::kOk);
  ASSERT_EQ(ring.service(2).leave("b", 20, Reason::kLeave), Status::kOk);
  ring.deliver();
  const Records expected{"a: members [1:10] joined [1:10] left []"};
  EXPECT_EQ(ring.records(1), expected);
  EXPECT_EQ(ring.records(2), expected);
  EXPECT_EQ(ring.service(2).group_names(), std::vector<std::string>{"a"});
}

TEST(GroupService, AProcDownLeaveCarriesItsReasonAndAnEmptyGroupIsForgotten) {
  FakeRing ring({1, 2});
  ASSERT_EQ(ring.service(1).join("a", 10), Status::kOk);
  ASSERT_EQ(ring.service(1).leave("a", 10, Reason::kProcDown), Status::kOk);
  ring.deliver();
  for (NodeId id : {1, 2}) {
    EXPECT_EQ(ring.records(id).back(), "a: members [] joined [] left [1:10 procdown]");
    EXPECT_TRUE(ring.service(id).group_names().empty());
    EXPECT_TRUE(ring.service(id).members("a").empty());
  }
}

// The departed node's last messages (sequenced on the old ring, delivered in the transitional
// configuration) come before its processes leave, NODEDOWN, at the regular configuration.
TEST(GroupService, ADepartedNodesProcessesLeaveAfterItsLastMessagesOneChangePerGroup) {
  FakeRing ring({1, 2, 3});
  for (const auto& [group, pid] : std::vector<std::pair<std::string, std::uint32_t>>{{"b", 31}, {"a", 30}, {"a", 32}})
    ASSERT_EQ(ring.service(3).join(group, pid), Status::kOk);
  ASSERT_EQ(ring.service(1).join("a", 10), Status::kOk);
  ring.deliver();
  ASSERT_EQ(ring.service(3).multicast("a", 32, bytes_of("last"), Delivery::kAgreed), Status::kOk);
  ring.sequence();
  const std::size_t before = ring.records(1).size();
  ring.form({{1, 2}, {3}});
  const Records expected{
      "a: 3:32 says 'last' agreed",
      "a: members [1:10] joined [] left [3:30 nodedown 3:32 nodedown]",
      "b: members [] joined [] left [3:31 nodedown]",
  };
  for (NodeId id : {1, 2})
    EXPECT_EQ(Records(ring.records(id).begin() + long(before), ring.records(id).end()), expected);
  EXPECT_EQ(ring.records(3).back(), "a: members [3:30 3:32] joined [] left [1:10 nodedown]");
  EXPECT_EQ(ring.records(3).end()[-2], "a: 3:32 says 'last' agreed");
  EXPECT_EQ(ring.service(1).group_names(), std::vector<std::string>{"a"});
}

// Each side reports the other's processes joining with NODEUP, as corosync's CPG does.
TEST(GroupService, TwoPartitionsMergeEachSeeingTheOthersProcessesJoinThroughJoinLists) {
  FakeRing ring({1, 2, 3});
  ring.form({{1, 2}, {3}});
  ASSERT_EQ(ring.service(1).join("a", 10), Status::kOk);
  ASSERT_EQ(ring.service(2).join("b", 20), Status::kOk);
  ASSERT_EQ(ring.service(3).join("a", 30), Status::kOk);
  ASSERT_EQ(ring.service(3).join("b", 31), Status::kOk);
  ring.deliver();
  const std::size_t before_12 = ring.records(1).size(), before_3 = ring.records(3).size();
  ring.form({{1, 2, 3}});
  ring.deliver();
  // Join lists in sequence order: node 1's, node 2's, node 3's; a daemon's own list adds nothing.
  const Records seen_by_1_and_2{
      "a: members [1:10 3:30] joined [3:30 nodeup] left []",
      "b: members [2:20 3:31] joined [3:31 nodeup] left []",
  };
  for (NodeId id : {1, 2})
    EXPECT_EQ(Records(ring.records(id).begin() + long(before_12), ring.records(id).end()), seen_by_1_and_2);
  const Records seen_by_3{
      "a: members [1:10 3:30] joined [1:10 nodeup] left []",
      "b: members [2:20 3:31] joined [2:20 nodeup] left []",
  };
  EXPECT_EQ(Records(ring.records(3).begin() + long(before_3), ring.records(3).end()), seen_by_3);
  expect_agreement(ring, {1, 2, 3});
}

// Node 3's process multicasts on the merged ring before node 3's join list is sequenced (its
// daemon's list was refused for now): nodes 1 and 2 report it joining before its message, and
// the join list, when it comes, adds nothing for it.
TEST(GroupService, AMessageFromAProcessNotYetKnownAfterAMergeComesAfterItsJoin) {
  FakeRing ring({1, 2, 3});
  ring.form({{1, 2}, {3}});
  ASSERT_EQ(ring.service(1).join("a", 10), Status::kOk);
  ASSERT_EQ(ring.service(3).join("a", 30), Status::kOk);
  ring.deliver();
  ring.accept_submits(3, 0);  // node 3's join list waits
  ring.form({{1, 2, 3}});
  ring.accept_submits(3, std::nullopt);
  ASSERT_EQ(ring.service(3).multicast("a", 30, bytes_of("early"), Delivery::kAgreed), Status::kOk);
  ring.service(3).retry_pending();  // the join list, now behind the message
  const std::size_t before = ring.records(2).size();
  ring.deliver();
  const Records seen{"a: members [1:10 3:30] joined [3:30 nodeup] left []", "a: 3:30 says 'early' agreed"};
  EXPECT_EQ(Records(ring.records(2).begin() + long(before), ring.records(2).end()), seen);
  EXPECT_EQ(Records(ring.records(1).end() - 2, ring.records(1).end()), seen);
  expect_agreement(ring, {1, 2, 3});
}

TEST(GroupService, ARefusedJoinListIsSentOnRetryAndRetryIsIdleOtherwise) {
  FakeRing ring({1, 2});
  ring.form({{1}, {2}});
  ASSERT_EQ(ring.service(2).join("a", 20), Status::kOk);
  ring.deliver();
  ring.accept_submits(2, 0);
  ring.form({{1, 2}});
  ring.deliver();
  EXPECT_TRUE(ring.service(1).members("a").empty());
  ring.service(2).retry_pending();  // still refused
  ring.accept_submits(2, std::nullopt);
  const std::size_t sent = ring.accepted(2).size();
  ring.service(2).retry_pending();
  ring.service(2).retry_pending();  // nothing waits any more
  ASSERT_EQ(ring.accepted(2).size(), sent + 1);
  ring.deliver();
  EXPECT_EQ(ring.records(1).back(), "a: members [2:20] joined [2:20 nodeup] left []");
  expect_agreement(ring, {1, 2});
}

TEST(GroupService, ANewerRegularConfigurationReplacesThePendingJoinList) {
  FakeRing ring({1, 2});
  ring.form({{1}, {2}});
  ASSERT_EQ(ring.service(2).join("a", 20), Status::kOk);
  ring.deliver();
  ring.accept_submits(2, 0);
  ring.form({{1, 2}});
  ring.form({{1}, {2}});
  ring.form({{1, 2}});
  ring.accept_submits(2, std::nullopt);
  const std::size_t sent = ring.accepted(2).size();
  ring.service(2).retry_pending();
  EXPECT_EQ(join_list_entries({ring.accepted(2).begin() + long(sent), ring.accepted(2).end()}), Records{"a/20"});
  ring.deliver();
  expect_agreement(ring, {1, 2});
}

TEST(GroupService, ASplitJoinListResumesAfterARefusalWithoutRepeatingItself) {
  FakeRing ring({1, 2}, kRingMessageSizeMin);
  ring.form({{1}, {2}});
  const std::string long_name(kGroupNameMax - 1, 'g');
  Records expected;
  for (char c : std::string("abcdef")) {
    ASSERT_EQ(ring.service(2).join(c + long_name, 20), Status::kOk);
    expected.push_back(c + long_name + "/20");
  }
  ring.deliver();
  ring.accept_submits(2, 2);
  const std::size_t sent = ring.accepted(2).size();
  ring.form({{1, 2}});
  ring.accept_submits(2, std::nullopt);
  ring.service(2).retry_pending();
  const std::vector<Bytes> join_lists(ring.accepted(2).begin() + long(sent), ring.accepted(2).end());
  EXPECT_GT(join_lists.size(), 2u);  // one name fills most of a 256-byte message
  for (const Bytes& packet : join_lists) EXPECT_LE(packet.size(), kRingMessageSizeMin);
  EXPECT_EQ(join_list_entries(join_lists), expected);
  ring.deliver();
  expect_agreement(ring, {1, 2});
  EXPECT_EQ(ring.service(1).group_names().size(), 6u);
}

TEST(GroupService, ALeaveOnItsWayDuringAMergeIsNotBroughtBackByTheJoinList) {
  FakeRing ring({1, 2, 3});
  ASSERT_EQ(ring.service(1).join("a", 10), Status::kOk);
  ring.deliver();
  ring.form({{1, 2}, {3}});
  ASSERT_EQ(ring.service(1).leave("a", 10, Reason::kLeave), Status::kOk);
  ring.form({{1, 2, 3}});  // the leave, not sequenced yet, goes on the new ring before the join list
  EXPECT_TRUE(join_list_entries(ring.accepted(1)).empty());
  ring.deliver();
  for (NodeId id : {1, 2, 3}) EXPECT_TRUE(ring.service(id).group_names().empty()) << "node " << id;
}

// A departed node's join in the old ring's last messages takes effect like any other; its
// process then leaves with its node. Every survivor reports the same three events in this order.
TEST(GroupService, ADepartedNodesLastJoinAndMessageComeBeforeItsNodeDown) {
  FakeRing ring({1, 2, 3});
  ASSERT_EQ(ring.service(3).join("a", 30), Status::kOk);
  ASSERT_EQ(ring.service(3).multicast("a", 30, bytes_of("bye"), Delivery::kAgreed), Status::kOk);
  ring.sequence();
  ring.form({{1, 2}, {3}});
  for (NodeId id : {1, 2}) {
    EXPECT_TRUE(ring.service(id).group_names().empty()) << "node " << id;
    EXPECT_EQ(ring.records(id), (Records{"a: members [3:30] joined [3:30] left []", "a: 3:30 says 'bye' agreed",
                                         "a: members [] joined [] left [3:30 nodedown]"}))
        << "node " << id;
  }
  EXPECT_EQ(members_text(ring.service(3), "a"), "[3:30]");
  ring.form({{1, 2, 3}});
  ring.deliver();
  expect_agreement(ring, {1, 2, 3});
  EXPECT_EQ(members_text(ring.service(1), "a"), "[3:30]");
}

TEST(GroupService, ARestartedNodesOldProcessesDoNotSurviveItsReturn) {
  FakeRing ring({1, 2, 3});
  ASSERT_EQ(ring.service(3).join("a", 30), Status::kOk);
  ASSERT_EQ(ring.service(1).join("a", 10), Status::kOk);
  ring.deliver();
  ring.restart(3);
  ring.form({{1, 2, 3}});
  ring.deliver();
  EXPECT_EQ(members_text(ring.service(1), "a"), "[1:10]");
  expect_agreement(ring, {1, 2, 3});
}

// The ring lists as joined a node whose processes we still hold (no transitional configuration
// took them out): they are dropped before its join list can arrive.
TEST(GroupService, AJoinedNodesStaleProcessesAreDroppedAtTheRegularConfiguration) {
  Recorder events;
  std::size_t submitted = 0;
  GroupService service(
      1, kMessageSizeMax,
      [&](const membership::Gather&, Delivery) {
        ++submitted;
        return Status::kOk;
      },
      events);
  const std::vector<NodeId> members{1, 3}, joined{3};
  service.on_configuration({.ring_id = {1, 1}, .members = members, .joined = members});
  const Bytes join = [] {
    Bytes bytes(group_join_size("a"));
    encode_group_join({"a", 30}, bytes);
    return bytes;
  }();
  service.on_deliver({.ring_id = {1, 1}, .seq = 1, .sender = 3, .payload = join});
  service.on_configuration({.ring_id = {1, 2}, .members = members, .joined = joined});
  EXPECT_EQ(events.records.back(), "a: members [] joined [] left [3:30 nodedown]");
  EXPECT_TRUE(service.group_names().empty());
  EXPECT_EQ(submitted, 0u);  // no local processes: no join list
}

TEST(GroupService, MalformedMessagesAreCountedAndIgnored) {
  FakeRing ring({1, 2});
  ring.inject(1, bytes_of("not a group packet"));
  ring.inject(2, {});
  ring.deliver();
  for (NodeId id : {1, 2}) {
    EXPECT_EQ(ring.service(id).packets_malformed(), 2u);
    EXPECT_TRUE(ring.records(id).empty());
  }
}

TEST(GroupService, MulticastTakesUpToDataMaxWhateverTheGroupsName) {
  EXPECT_EQ(GroupService::data_max(kMessageSizeMax), kMessageSizeMax - kMcastOverheadMax);
  EXPECT_EQ(GroupService::data_max(kMcastOverheadMax), 0u);
  EXPECT_EQ(GroupService::data_max(1), 0u);
  FakeRing ring({1}, kRingMessageSizeMin);
  const std::size_t data_max = GroupService::data_max(kRingMessageSizeMin);
  const std::string longest(kGroupNameMax, 'n');
  const Bytes data(data_max + 1, std::byte{7});
  EXPECT_EQ(ring.service(1).multicast("a", 1, data, Delivery::kAgreed), Status::kTooLarge);
  EXPECT_TRUE(ring.accepted(1).empty());
  ASSERT_EQ(ring.service(1).multicast(longest, 1, std::span(data).first(data_max), Delivery::kAgreed), Status::kOk);
  EXPECT_EQ(ring.accepted(1).back().size(), kRingMessageSizeMin);
  ring.accept_submits(1, 0);
  EXPECT_EQ(ring.service(1).multicast("a", 1, {}, Delivery::kAgreed), Status::kQueueFull);
  EXPECT_EQ(ring.service(1).join("a", 1), Status::kQueueFull);
  EXPECT_EQ(ring.service(1).leave("a", 1, Reason::kLeave), Status::kQueueFull);
}

TEST(GroupService, GroupNamesAreOneToMaxBytes) {
  EXPECT_FALSE(GroupService::valid_group_name(""));
  EXPECT_TRUE(GroupService::valid_group_name("a"));
  EXPECT_TRUE(GroupService::valid_group_name(std::string(kGroupNameMax, 'x')));
  EXPECT_FALSE(GroupService::valid_group_name(std::string(kGroupNameMax + 1, 'x')));
}

// ---- the wire form

const std::string kLongest(kGroupNameMax, 'z');

Bytes join_sample() {
  Bytes bytes(group_join_size("grp"));
  EXPECT_EQ(encode_group_join({"grp", 0x01020304}, bytes), bytes.size());
  return bytes;
}

Bytes leave_sample() {
  Bytes bytes(group_leave_size(kLongest));
  EXPECT_EQ(encode_group_leave({kLongest, 7, Reason::kProcDown}, bytes), bytes.size());
  return bytes;
}

Bytes mcast_sample(std::span<const std::byte> data) {
  Bytes bytes(group_mcast_size("grp", data.size()));
  EXPECT_EQ(encode_group_mcast({"grp", 9, data}, bytes), bytes.size());
  return bytes;
}

const std::vector<JoinListEntry> kEntries{{"a", 1}, {"a", 2}, {"b", 1}, {kLongest, 0xffffffff}};

Bytes join_list_sample() {
  Bytes bytes(join_list_size(kEntries));
  EXPECT_EQ(encode_join_list(kEntries, bytes), bytes.size());
  return bytes;
}

GroupDecodeError decode(const Bytes& bytes) {
  GroupPacket packet;
  return decode_group_packet(bytes, packet);
}

TEST(GroupWire, EveryPacketDecodesToWhatWasEncoded) {
  GroupPacket packet;
  const Bytes join_bytes = join_sample();  // decoded packets are views of it
  ASSERT_EQ(decode_group_packet(join_bytes, packet), GroupDecodeError::kNone);
  const auto& join = std::get<GroupJoin>(packet);
  EXPECT_EQ(join.group, "grp");
  EXPECT_EQ(join.pid, 0x01020304u);

  const Bytes leave_bytes = leave_sample();
  ASSERT_EQ(decode_group_packet(leave_bytes, packet), GroupDecodeError::kNone);
  const auto& leave = std::get<GroupLeave>(packet);
  EXPECT_EQ(leave.group, kLongest);
  EXPECT_EQ(leave.pid, 7u);
  EXPECT_EQ(leave.reason, Reason::kProcDown);

  const Bytes data = bytes_of("payload");
  const Bytes mcast_bytes = mcast_sample(data);
  ASSERT_EQ(decode_group_packet(mcast_bytes, packet), GroupDecodeError::kNone);
  const auto& mcast = std::get<GroupMcast>(packet);
  EXPECT_EQ(mcast.group, "grp");
  EXPECT_EQ(mcast.pid, 9u);
  EXPECT_EQ(text_of(mcast.data), "payload");
  EXPECT_EQ(mcast.data.data(), mcast_bytes.data() + mcast_bytes.size() - data.size());  // a view, not a copy
  EXPECT_FALSE(mcast.piece);

  // A piece of a larger message: an MCAST marked as such, passed on as it came.
  Bytes piece_bytes(group_mcast_size("grp", data.size()));
  ASSERT_EQ(encode_group_mcast({"grp", 9, data, true}, piece_bytes), piece_bytes.size());
  EXPECT_NE(piece_bytes, mcast_bytes);
  ASSERT_EQ(decode_group_packet(piece_bytes, packet), GroupDecodeError::kNone);
  EXPECT_TRUE(std::get<GroupMcast>(packet).piece);
  EXPECT_EQ(text_of(std::get<GroupMcast>(packet).data), "payload");

  const Bytes list_bytes = join_list_sample();
  ASSERT_EQ(decode_group_packet(list_bytes, packet), GroupDecodeError::kNone);
  EXPECT_EQ(std::get<GroupJoinList>(packet).entries, kEntries);

  EXPECT_EQ(decode(mcast_sample({})), GroupDecodeError::kNone);
  Bytes empty_list(join_list_size({}));
  encode_join_list({}, empty_list);
  EXPECT_EQ(decode(empty_list), GroupDecodeError::kNone);
}

TEST(GroupWire, EveryTruncationIsRefused) {
  const Bytes data = bytes_of("data");
  const std::size_t mcast_header = group_mcast_size("grp", 0);  // past it, a cut only shortens data
  for (const Bytes& whole : {join_sample(), leave_sample(), mcast_sample(data), join_list_sample()}) {
    const bool mcast = whole == mcast_sample(data);
    for (std::size_t n = 0; n < (mcast ? mcast_header : whole.size()); ++n) {
      // A copy of its own, sized to the cut, so AddressSanitizer sees any read past it.
      const Bytes cut(whole.begin(), whole.begin() + long(n));
      const GroupDecodeError e = decode(cut);
      EXPECT_TRUE(e == GroupDecodeError::kTooShort || e == GroupDecodeError::kCountTooLarge)
          << "cut at " << n << " of " << whole.size() << ": " << describe(e);
    }
  }
}

TEST(GroupWire, ATrailingByteIsRefused) {
  for (Bytes bytes : {join_sample(), leave_sample(), join_list_sample()}) {
    bytes.push_back(std::byte{0});
    EXPECT_EQ(decode(bytes), GroupDecodeError::kTrailingBytes);
  }
}

TEST(GroupWire, AnotherVersionOrAnUnknownTypeIsRefused) {
  for (std::uint8_t version : {0, 2, 0xff}) {
    Bytes bytes = join_sample();
    bytes[0] = std::byte{version};
    EXPECT_EQ(decode(bytes), GroupDecodeError::kBadVersion);
  }
  for (std::uint8_t type : {0, 6, 0xff}) {
    Bytes bytes = join_sample();
    bytes[1] = std::byte{type};
    EXPECT_EQ(decode(bytes), GroupDecodeError::kBadType);
  }
}

TEST(GroupWire, AnEmptyOrOverlongNameIsRefused) {
  for (std::size_t size : {std::size_t{0}, kGroupNameMax + 1, std::size_t{0xff}}) {
    Bytes bytes = join_sample();
    bytes[kGroupHeaderSize] = std::byte(size);
    bytes.resize(std::max(bytes.size(), kGroupHeaderSize + 1 + size + 4));  // not merely too short
    EXPECT_EQ(decode(bytes), GroupDecodeError::kBadName) << int(size);
  }
  Bytes list = join_list_sample();
  list[kJoinListFixedSize] = std::byte{0};  // the first entry's name
  EXPECT_EQ(decode(list), GroupDecodeError::kBadName);
}

TEST(GroupWire, ALeaveWithAReasonOtherThanLeaveOrProcDownIsRefused) {
  for (Reason reason : {Reason::kJoin, Reason::kNodeDown, Reason{7}}) {
    Bytes bytes = leave_sample();
    bytes.back() = std::byte{static_cast<std::uint8_t>(reason)};
    EXPECT_EQ(decode(bytes), GroupDecodeError::kBadReason);
  }
}

TEST(GroupWire, AJoinListCountItsBytesCannotHoldIsRefused) {
  Bytes bytes = join_list_sample();
  const std::size_t entries_size = bytes.size() - kJoinListFixedSize;
  for (std::size_t count : {entries_size / 6 + 1, std::size_t{0xffff}}) {
    bytes[2] = std::byte(count >> 8);
    bytes[3] = std::byte(count & 0xff);
    EXPECT_EQ(decode(bytes), GroupDecodeError::kCountTooLarge) << count;
  }
}

TEST(GroupWire, AJoinListNotStrictlyIncreasingIsRefused) {
  // Entries written by hand: the encoder asserts order, so it cannot make these.
  const auto list_of = [](std::initializer_list<std::pair<char, std::uint8_t>> entries) {
    Bytes bytes{std::byte{kGroupWireVersion}, std::byte(GroupPacketType::kJoinList), std::byte{0},
                std::byte(entries.size())};
    for (auto [name, pid] : entries)
      for (std::uint8_t b :
           {std::uint8_t{1}, std::uint8_t(name), std::uint8_t{0}, std::uint8_t{0}, std::uint8_t{0}, pid})
        bytes.push_back(std::byte{b});
    return bytes;
  };
  EXPECT_EQ(decode(list_of({{'a', 1}, {'a', 2}, {'b', 1}})), GroupDecodeError::kNone);
  EXPECT_EQ(decode(list_of({{'a', 1}, {'a', 1}})), GroupDecodeError::kNotSorted);
  EXPECT_EQ(decode(list_of({{'a', 2}, {'a', 1}})), GroupDecodeError::kNotSorted);
  EXPECT_EQ(decode(list_of({{'b', 1}, {'a', 2}})), GroupDecodeError::kNotSorted);
}

TEST(GroupWire, EveryRefusalHasADescription) {
  for (int e = 0; e <= int(GroupDecodeError::kNotSorted); ++e)
    EXPECT_STRNE(describe(GroupDecodeError(e)), "unknown decode error") << e;
}

}  // namespace
}  // namespace rtotem::groups
