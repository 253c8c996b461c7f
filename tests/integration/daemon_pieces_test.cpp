// Messages larger than one multicast (totem.max_message_size 65536 here): librtotem sends them in
// pieces and puts them back together, so every member delivers each whole, at the same place in
// the order, however the pieces of two senders interleave on the ring; and one whose rest the
// ring refuses too long is given up, not delivered in part.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {
namespace {

std::string pattern(std::size_t size, char seed) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>(seed + static_cast<char>(i * 31 % 251));
  return out;
}

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

  ASSERT_TRUE(pump_until(raw(clients), [&] { return clients[0]->messages.size() >= 4 && clients[1]->messages.size() >= 4; }))
      << clients[0]->messages.size() << " and " << clients[1]->messages.size() << " messages";
  EXPECT_EQ(clients[0]->messages, clients[1]->messages) << "the members delivered different sequences";
  std::vector<std::string> from_one;
  for (const Received& m : clients[0]->messages) {
    if (m.nodeid == 1) from_one.push_back(m.text);
    else EXPECT_TRUE(m.text == two) << "node 2's message arrived as " << m.text.size() << " bytes";
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
  EXPECT_LT(waited, std::chrono::seconds(40));
  EXPECT_EQ(clients[0]->send("g", big), 0);
  EXPECT_EQ(clients[0]->send("g", "after"), 0);
  auto both = [&](std::size_t n) { return clients[0]->messages.size() >= n && clients[1]->messages.size() >= n; };
  ASSERT_TRUE(pump_until(raw(clients), [&] { return both(2); }))
      << clients[0]->messages.size() << " and " << clients[1]->messages.size() << " messages";
  EXPECT_FALSE(pump_until(raw(clients), [&] { return both(3); }, std::chrono::milliseconds(500)));
  for (const auto& client : clients) {
    ASSERT_EQ(client->messages.size(), 2u);
    EXPECT_TRUE(client->messages[0].text == big) << "arrived as " << client->messages[0].text.size() << " bytes";
    EXPECT_EQ(client->messages[1].text, "after");
  }
}

}  // namespace
}  // namespace rtotem::testing
