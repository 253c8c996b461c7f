// Messages larger than one multicast (totem.max_message_size 65536 here): librtotem sends them in
// pieces and puts them back together, so every member delivers each whole, at the same place in
// the order, however the pieces of two senders interleave on the ring; and one whose rest the
// ring refuses too long is given up, not delivered in part; and a member that leaves and joins
// again never puts together pieces of two messages.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <qb/qbipc_common.h>
#include <qb/qbipcc.h>
#include <signal.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "src/ipc/ipc_protocol.hpp"
#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {
namespace {

std::string pattern(std::size_t size, char seed) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>(seed + static_cast<char>(i * 31 % 251));
  return out;
}

// A sender that speaks the IPC protocol itself, so a test chooses when each piece goes (librtotem
// sends a message's pieces all at once). Every request is answered: 0 once on the ring.
class RawSender {
 public:
  explicit RawSender(const std::string& ipc_name) : c_(qb_ipcc_connect(ipc_name.c_str(), 1 << 17)) {}
  ~RawSender() {
    if (c_ != nullptr) qb_ipcc_disconnect(c_);
  }
  RawSender(const RawSender&) = delete;
  RawSender& operator=(const RawSender&) = delete;
  bool connected() const noexcept { return c_ != nullptr; }

  int join(const std::string& group) {
    ipc::BodyWriter body;
    body.string(group);
    return request(ipc::RequestId::kJoin, body);
  }
  // Piece `index` (of `each` bytes) of `message`, as librtotem's header frames it.
  int piece(const std::string& group, const std::string& message, std::size_t index, std::size_t each) {
    ipc::BodyWriter body;
    body.u8(ipc::kModePiece);
    body.string(group);
    body.u8(index == 0 ? 1 : 0);  // kPieceFirst
    body.u32(static_cast<std::uint32_t>(message.size()));
    body.bytes(std::as_bytes(std::span(message).subspan(index * each, std::min(each, message.size() - index * each))));
    return request(ipc::RequestId::kMcast, body);
  }
  int message(const std::string& group, const std::string& text) {
    ipc::BodyWriter body;
    body.u8(0);
    body.string(group);
    body.bytes(std::as_bytes(std::span(text)));
    return request(ipc::RequestId::kMcast, body);
  }

 private:
  // Retries the ring's back-pressure for up to 10 s.
  int request(ipc::RequestId id, ipc::BodyWriter& body) {
    qb_ipc_request_header h{};
    h.id = static_cast<std::int32_t>(id);
    h.size = static_cast<std::int32_t>(sizeof h + body.data().size());
    iovec iov[2] = {{&h, sizeof h}, {body.data().data(), body.data().size()}};
    std::vector<char> answer(1 << 16);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      const ssize_t n = qb_ipcc_sendv_recv(c_, iov, 2, answer.data(), answer.size(), 5000);
      if (n < static_cast<ssize_t>(sizeof(qb_ipc_response_header))) return n < 0 ? static_cast<int>(n) : -EPROTO;
      qb_ipc_response_header r{};
      std::memcpy(&r, answer.data(), sizeof r);
      if (r.error != -EAGAIN || std::chrono::steady_clock::now() >= deadline) return r.error;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  qb_ipcc_connection_t* c_;
};

TEST(MessagesInPieces, LargeMessagesOfTwoSendersArriveWholeInOneOrderAtEveryMember) {
  DaemonCluster cluster{2, 1000, "  max_message_size: 65536\n"};
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
  ASSERT_NO_FATAL_FAILURE(join_group(clients, "g"));
  std::size_t data_max = 0;
  ASSERT_EQ(rtotem_max_message_size(clients[0]->handle(), &data_max), 0);
  ASSERT_LT(data_max, 65536u);
  const std::string one = pattern(7 * data_max + 123, 'a');  // 8 pieces
  const std::string two = pattern(5 * data_max, 'b');        // 6 pieces: each piece's data is less than data_max

  int sent_two = -1;
  std::thread other([&] { sent_two = clients[1]->send("g", two); });
  EXPECT_EQ(clients[0]->send("g", "before"), 0);
  EXPECT_EQ(clients[0]->send("g", one), 0);
  EXPECT_EQ(clients[0]->send("g", "after"), 0);
  other.join();
  ASSERT_EQ(sent_two, 0) << rtotem_strerror(sent_two);

  ASSERT_TRUE(
      pump_until(raw(clients), [&] { return clients[0]->messages.size() >= 4 && clients[1]->messages.size() >= 4; }))
      << clients[0]->messages.size() << " and " << clients[1]->messages.size() << " messages";
  EXPECT_EQ(clients[0]->messages, clients[1]->messages) << "the members delivered different sequences";
  std::vector<std::string> from_one;
  for (const Received& m : clients[0]->messages) {
    if (m.nodeid == 1)
      from_one.push_back(m.text);
    else
      EXPECT_TRUE(m.text == two) << "node 2's message arrived as " << m.text.size() << " bytes";
  }
  ASSERT_EQ(from_one.size(), 3u);
  EXPECT_EQ(from_one[0], "before");
  EXPECT_TRUE(from_one[1] == one) << "node 1's message arrived as " << from_one[1].size() << " bytes";
  EXPECT_EQ(from_one[2], "after");
  // Past what a message may be, the library refuses it before it reads a byte.
  EXPECT_EQ(rtotem_mcast(clients[0]->handle(), "g", "x", RTOTEM_MESSAGE_MAX + 1, RTOTEM_AGREED), -EMSGSIZE);
}

// The ring stops taking pieces midway (the other node is stopped; the 60 s token keeps it a
// member): the library retries the rest for 30 s, then gives up with -ETIMEDOUT. The members
// drop the pieces that came, and a retry sends the message anew: each member delivers it once,
// whole.
TEST(MessagesInPieces, ARestRefusedFor30SecondsIsCutShortAndARetrySendsTheMessageAnew) {
  DaemonCluster cluster{2, 60000, "  max_message_size: 65536\n  send_queue_max: 64\n"};
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 2, clients));
  ASSERT_NO_FATAL_FAILURE(join_group(clients, "g"));
  std::size_t data_max = 0;
  ASSERT_EQ(rtotem_max_message_size(clients[0]->handle(), &data_max), 0);
  const std::string big = pattern(16 * data_max, 'c');  // 17 pieces: far more than 64 packets hold
  cluster.signal(2, SIGSTOP);
  const auto start = std::chrono::steady_clock::now();
  const int rc = rtotem_mcast(clients[0]->handle(), "g", big.data(), big.size(), RTOTEM_AGREED);
  const auto waited = std::chrono::steady_clock::now() - start;
  cluster.signal(2, SIGCONT);
  ASSERT_EQ(rc, -ETIMEDOUT) << rtotem_strerror(rc);
  EXPECT_GE(waited, std::chrono::seconds(30));
  // Not a measure of the machine: a clock restarted per piece would wait 17 x 30 s.
  EXPECT_LT(waited, std::chrono::seconds(90));
  EXPECT_EQ(clients[0]->send("g", big), 0);
  EXPECT_EQ(clients[0]->send("g", "after"), 0);
  auto both = [&](std::size_t n) { return clients[0]->messages.size() >= n && clients[1]->messages.size() >= n; };
  ASSERT_TRUE(pump_until(raw(clients), [&] { return both(2); }))
      << clients[0]->messages.size() << " and " << clients[1]->messages.size() << " messages";
  EXPECT_FALSE(pump_until(
      raw(clients), [&] { return both(3); }, std::chrono::milliseconds(500)));
  for (const auto& client : clients) {
    ASSERT_EQ(client->messages.size(), 2u);
    EXPECT_TRUE(client->messages[0].text == big) << "arrived as " << client->messages[0].text.size() << " bytes";
    EXPECT_EQ(client->messages[1].text, "after");
  }
}

bool saw(const TestClient& c, const std::string& text) {
  return std::ranges::any_of(c.messages, [&](const Received& m) { return m.text == text; });
}

// Whether `c` saw the process on `node` join (`joined`) or leave its group, after `from` changes.
bool saw_change(const TestClient& c, std::size_t from, std::uint32_t node, bool joined) {
  return std::any_of(c.changes.begin() + static_cast<std::ptrdiff_t>(from), c.changes.end(), [&](const GroupEvent& e) {
    if (joined) return std::ranges::any_of(e.joined, [&](const rtotem_member& m) { return m.nodeid == node; });
    return std::ranges::any_of(e.left, [&](const auto& l) { return l.first.nodeid == node; });
  });
}

// Issue 48's scenario. Receiver R (node 1) has M1's first two pieces queued, undispatched, when it
// leaves and joins again (retrying -EAGAIN, never dispatching). M1's rest and the first pieces of
// M2 (as large) go by while it is out; it is back for M2's rest. It must deliver neither message,
// not M1's start joined to M2's end. Node 2's member watches (a mark after each step tells it the
// step was delivered: whatever is sent after that is ordered after it); node 3 sends the pieces
// one at a time.
TEST(MessagesInPieces, AReceiverThatLeavesAndJoinsAgainNeverJoinsPiecesOfTwoMessages) {
  DaemonCluster cluster{3, 1000, "  max_message_size: 65536\n"};
  std::vector<std::unique_ptr<TestClient>> clients;
  ASSERT_NO_FATAL_FAILURE(start_ring(cluster, 3, clients));
  TestClient& receiver = *clients[0];
  TestClient& watcher = *clients[1];
  ASSERT_EQ(receiver.join("g"), 0);
  ASSERT_EQ(watcher.join("g"), 0);
  RawSender sender(cluster.ipc_name(3));
  ASSERT_TRUE(sender.connected());
  ASSERT_EQ(sender.join("g"), 0);
  ASSERT_TRUE(pump_until({&receiver, &watcher}, [&] {
    return !receiver.changes.empty() && receiver.changes.back().members.size() == 3 && !watcher.changes.empty() &&
           watcher.changes.back().members.size() == 3;
  }));
  constexpr std::size_t kEach = 1000;
  const std::string m1(5 * kEach, 'A');
  const std::string m2(5 * kEach, 'B');
  auto send_pieces = [&](const std::string& m, std::size_t from, std::size_t to, const std::string& mark) {
    for (std::size_t i = from; i < to; ++i) ASSERT_EQ(sender.piece("g", m, i, kEach), 0) << "piece " << i;
    ASSERT_EQ(sender.message("g", mark), 0);
    ASSERT_TRUE(pump_until({&watcher}, [&] { return saw(watcher, mark); })) << mark;
  };
  ASSERT_NO_FATAL_FAILURE(send_pieces(m1, 0, 2, "mark 1"));
  std::size_t changes = watcher.changes.size();
  ASSERT_EQ(rtotem_leave(receiver.handle(), "g"), 0);
  ASSERT_TRUE(pump_until({&watcher}, [&] { return saw_change(watcher, changes, 1, false); })) << "no leave";
  ASSERT_NO_FATAL_FAILURE(send_pieces(m1, 2, 5, "m1 sent"));
  ASSERT_NO_FATAL_FAILURE(send_pieces(m2, 0, 2, "mark 2"));
  changes = watcher.changes.size();
  int rc = -EAGAIN;
  for (const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       rc == -EAGAIN && std::chrono::steady_clock::now() < deadline;) {
    rc = rtotem_join(receiver.handle(), "g");  // -EAGAIN while its leave is on its way
    if (rc == -EAGAIN) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(rc, 0) << rtotem_strerror(rc);
  ASSERT_TRUE(pump_until({&watcher}, [&] { return saw_change(watcher, changes, 1, true); })) << "no join";
  ASSERT_NO_FATAL_FAILURE(send_pieces(m2, 2, 5, "end"));

  ASSERT_TRUE(pump_until({&receiver}, [&] { return saw(receiver, "end"); }));
  std::vector<std::string> got;
  for (const Received& m : receiver.messages) {
    const auto a = std::ranges::count(m.text, 'A');
    got.push_back(m.text.size() < 100 ? m.text
                                      : fmt::format("{} bytes: {} 'A', {} 'B'", m.text.size(), a, m.text.size() - a));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"mark 1", "end"}));
  // Dropped for a reason the group changes tell, not for want of room: not counted.
  std::uint64_t dropped = 1;
  EXPECT_EQ(rtotem_messages_dropped(receiver.handle(), &dropped), 0);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(rtotem_messages_dropped(receiver.handle(), nullptr), -EINVAL);
  std::vector<std::string> watched;
  for (const Received& m : watcher.messages) watched.push_back(m.text);
  EXPECT_EQ(watched, (std::vector<std::string>{"mark 1", m1, "m1 sent", "mark 2", m2, "end"}));
}

}  // namespace
}  // namespace rtotem::testing
