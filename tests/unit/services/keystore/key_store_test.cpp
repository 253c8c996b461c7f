// The key store: set/get/delete with cmap's tracking (exact key or prefix, by event), its bounds,
// a reload's assign, and who may write what.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "src/services/keystore/key_access.hpp"
#include "src/services/keystore/key_store.hpp"

namespace rtotem::keystore {
namespace {

struct Heard {
  std::uint64_t owner, track;
  std::uint32_t event;
  std::string key;
};

class KeyStoreTest : public ::testing::Test {
 protected:
  std::vector<Heard> heard;
  KeyStore store{[this](const KeyChange& c) { heard.push_back({c.owner, c.track, c.event, std::string(c.key)}); }};
};

TEST_F(KeyStoreTest, TrackersHearWhatTheyAskedForAndNoUnchangedWrites) {
  std::uint64_t prefix = 0, exact = 0;
  ASSERT_EQ(store.track({1}, "app.", kTrackAdd | kTrackModify | kTrackDelete | kTrackPrefix, prefix), 0);
  ASSERT_EQ(store.track({2}, "app.b", kTrackDelete, exact), 0);
  EXPECT_EQ(store.set("app.a", KeyValue::u32(1), true), 0);
  EXPECT_EQ(store.set("app.a", KeyValue::u32(1), true), 0);  // unchanged: no one is told
  EXPECT_EQ(store.set("app.a", KeyValue::u32(2), true), 0);
  EXPECT_EQ(store.set("app.b", KeyValue::string("x"), true), 0);
  EXPECT_EQ(store.set("other.c", KeyValue::u8(1), true), 0);
  EXPECT_EQ(store.erase("app.b"), 0);
  EXPECT_EQ(store.erase("app.b"), -ENOENT);
  ASSERT_EQ(heard.size(), 5u);
  EXPECT_EQ(heard[0].event, kTrackAdd);
  EXPECT_EQ(heard[1].event, kTrackModify);
  EXPECT_EQ(heard[2].key, "app.b");
  EXPECT_EQ(heard[3].owner, 1u);  // the delete: both trackers, in the order they came
  EXPECT_EQ(heard[4].owner, 2u);
  EXPECT_EQ(heard[4].track, exact);
  EXPECT_EQ(store.untrack(2, prefix), -ENOENT);  // not its tracker
  store.untrack_all(1);
  EXPECT_EQ(store.set("app.a", KeyValue::u32(3), true), 0);
  EXPECT_EQ(heard.size(), 5u);
  std::uint64_t none = 0;
  EXPECT_EQ(store.track({1}, "app.", kTrackPrefix, none), -EINVAL);
}

// How many keys of `value` a writer puts before one is refused (-ENOSPC), named k.<first>...
std::size_t fill(KeyStore& store, const std::string& value, bool privileged, std::size_t first = 0) {
  std::size_t n = first;
  for (int rc = 0; (rc = store.set("k." + std::to_string(n), KeyValue::string(value), privileged)) == 0;) ++n;
  return n - first;
}

// Unprivileged writers fill the store to three quarters; the privileged ones to the end; the
// daemon's own keys go in whatever the clients have written; a value that shrinks always may.
TEST_F(KeyStoreTest, ClientWritesAreBoundedAndTheDaemonsOwnAreNot) {
  const std::string big(ipc::kKeyValueMax, 'x');
  const std::size_t unprivileged = fill(store, big, false);
  EXPECT_LE(store.bytes(), kBytesUnprivilegedMax);
  EXPECT_GT(store.bytes() + ipc::kKeyValueMax + 64, kBytesUnprivilegedMax);
  EXPECT_EQ(store.set("k.small", KeyValue::u8(1), false), 0) << "a smaller key still fits";
  EXPECT_GT(fill(store, big, true, unprivileged), 0u);
  EXPECT_LE(store.bytes(), kBytesMax);
  EXPECT_GT(store.bytes() + ipc::kKeyValueMax + 64, kBytesMax);
  store.set_own("runtime.members.1.status", KeyValue::string("joined"));  // a full store holds the ring's state still
  ASSERT_NE(store.get("runtime.members.1.status"), nullptr);
  EXPECT_EQ(store.set("k.more", KeyValue::string(big), true), -ENOSPC);
  EXPECT_EQ(store.set("k.0", KeyValue::string("shorter"), false), 0);
  EXPECT_EQ(store.set("k.0", KeyValue::string(big), false), -ENOSPC);
  std::uint64_t id = 0;
  for (std::size_t i = 0; i < kTracksPerOwnerMax; ++i) ASSERT_EQ(store.track({7}, "k.", kTrackAdd, id), 0);
  EXPECT_EQ(store.track({7}, "k.", kTrackAdd, id), -ENOSPC);
}

// Keys, however small, are bounded in number alike.
TEST_F(KeyStoreTest, UnprivilegedWritersLeaveAQuarterOfTheKeysToThePrivileged) {
  EXPECT_EQ(fill(store, "", false), kKeysUnprivilegedMax);
  EXPECT_EQ(fill(store, "", true, kKeysUnprivilegedMax), kKeysMax - kKeysUnprivilegedMax);
  EXPECT_EQ(store.size(), kKeysMax);
}

// How many trackers `who` gets before one is refused.
std::size_t track_all(KeyStore& store, const TrackOwner& who) {
  std::size_t n = 0;
  for (std::uint64_t id = 0; store.track(who, "k.", kTrackAdd, id) == 0;) ++n;
  return n;
}

// Owners are connections (ids), each with a user. An unprivileged user's connections share its
// bound; such users share theirs; the privileged (root, the daemon's user) keep the rest, and a
// tracker that goes is given back to everyone it counted against.
TEST_F(KeyStoreTest, UnprivilegedUsersShareTheirBoundsAndThePrivilegedKeepTheRest) {
  std::uint64_t next_owner = 1;
  const auto connection = [&](std::uint32_t uid, bool privileged) { return TrackOwner{next_owner++, uid, privileged}; };
  std::size_t got = 0;
  for (int i = 0; i < 5; ++i) got += track_all(store, connection(1000, false));
  EXPECT_EQ(got, kTracksPerUserMax);
  const TrackOwner first_of_1001 = connection(1001, false);
  got = track_all(store, first_of_1001);
  for (std::uint32_t uid = 1001; uid < 1010; ++uid)
    for (int i = 0; i < 4; ++i) got += track_all(store, connection(uid, false));
  EXPECT_EQ(got + kTracksPerUserMax, kTracksUnprivilegedMax);
  EXPECT_EQ(track_all(store, connection(2000, false)), 0u) << "the unprivileged have all of theirs";
  got = 0;
  for (int i = 0; i < 8; ++i) got += track_all(store, connection(0, true));
  EXPECT_EQ(got, kTracksMax - kTracksUnprivilegedMax);
  EXPECT_EQ(track_all(store, connection(0, true)), 0u) << "every tracker is taken";
  store.untrack_all(first_of_1001.owner);
  EXPECT_EQ(track_all(store, connection(2000, false)), kTracksPerOwnerMax) << "what 1001 gave back";
}

TEST_F(KeyStoreTest, AssignMakesThePrefixesExactlyTheEntries) {
  ASSERT_EQ(store.set("logging.debug", KeyValue::string("off"), true), 0);
  ASSERT_EQ(store.set("logging.gone", KeyValue::string("x"), true), 0);
  ASSERT_EQ(store.set("app.kept", KeyValue::u8(1), true), 0);
  std::uint64_t id = 0;
  ASSERT_EQ(store.track({1}, "", kTrackAdd | kTrackModify | kTrackDelete | kTrackPrefix, id), 0);
  const std::string_view prefixes[] = {"logging."};
  store.assign(prefixes, {{"logging.debug", KeyValue::string("on")}, {"logging.new", KeyValue::u8(1)}});
  EXPECT_EQ(store.get("logging.gone"), nullptr);
  EXPECT_EQ(store.get("logging.debug")->data, "on");
  EXPECT_NE(store.get("app.kept"), nullptr);
  ASSERT_EQ(heard.size(), 3u);
  EXPECT_EQ(heard[0].event, kTrackDelete);
}

TEST(KeyAccess, TheFileAndTheDaemonOwnTheirKeysAndOnlyRootChangesWhoConnects) {
  std::string_view why;
  EXPECT_EQ(check_write("totem.token", true, &why), -EACCES);
  EXPECT_NE(why.find("rtotemctl reload"), std::string_view::npos);
  EXPECT_EQ(check_write("runtime.members.1.status", true), -EACCES);
  EXPECT_EQ(check_write("uidgid.config.uid.5", true), -EACCES);
  EXPECT_EQ(check_write("uidgid.gid.189", false), -EACCES);
  EXPECT_EQ(check_write("uidgid.gid.189", true), 0);
  EXPECT_EQ(check_write("pacemaker.anything", false), 0);
  // corosync-blackbox's writes, root's only; the rest of runtime.blackbox is the daemon's.
  EXPECT_EQ(check_write("runtime.blackbox.dump_flight_data", true), 0);
  EXPECT_EQ(check_write("runtime.blackbox.dump_state", true), 0);
  EXPECT_EQ(check_write("runtime.blackbox.dump_flight_data", false, &why), -EACCES);
  EXPECT_NE(why.find("only root"), std::string_view::npos);
  EXPECT_EQ(check_write("runtime.blackbox.other", true), -EACCES);
  EXPECT_EQ(uidgid_of("uidgid.gid.189")->id, 189u);
  EXPECT_TRUE(uidgid_of("uidgid.gid.189")->group);
  EXPECT_FALSE(uidgid_of("uidgid.uid.5")->group);
  EXPECT_EQ(uidgid_of("uidgid.uid.x"), std::nullopt);
  EXPECT_EQ(uidgid_of("uidgid.uid."), std::nullopt);
  EXPECT_EQ(uidgid_of("uidgid.config.uid.5"), std::nullopt);
}

}  // namespace
}  // namespace rtotem::keystore
