// A reload of every node, ordered on the ring (corosync-cfgtool -R, corosync_cfg_reload_config,
// rtotemctl reload): the asking node puts a start on the ring; each member, where the start is
// delivered, reads its own file and puts its report on the ring; once every member's report is
// delivered, each applies its own file's changes or none does (reload_round.hpp decides, the
// same at every member), and the asker is answered with a line per node. One at a time in the
// cluster: a start delivered while another is open is answered -EBUSY. The asker aborts through
// the ring a reload whose reports have not all come within kReloadReportTimeoutMs (a member
// that runs an older rtotemd never reports), so that every member ends it at the same place.
// Where a split cuts the reload, the members that delivered every report apply it and the others
// do not: each side's members decide alike, and the asker is told of the ring change.
//
// A new cluster key takes two more rounds of the ring, with no ring change: where the reload
// applies, every member opens packets sealed with either key (still sealing with the old) and
// says so (key step 1); once every member has, each seals with the new key and says so (step 2);
// once every member has, each refuses the old key. At no point does a member seal with a key
// another cannot open. A ring change or the asker's abort in between leaves every member opening
// both keys, sealing with the one its step allows (end_rotation), until a restart; the asker is
// told.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>

#include "src/services/control/reload_round.hpp"
#include "src/stack/client_table.hpp"
#include "src/stack/stack_host.hpp"

namespace rtotem::control {

inline constexpr std::uint64_t kReloadReportTimeoutMs = 30'000;  // a file read waits on name lookups

// What a reload did on one node: 0 and what changed; or -EBADMSG (the file does not load),
// -ENOTSUP (a key that needs a restart changed: nothing applied), -ERANGE (a part refused here:
// votequorum's rule for new votes, a log file that does not open; the rest applied), -EBUSY (another reload is under
// way) or -EAGAIN (it could not start): nothing done; and why.
struct ReloadOutcome {
  int error = 0;
  std::string message;
};

// This node's file, read for one reload: the report it puts on the ring, and how it applies its
// changes once every member agrees (null when report.error is not 0).
struct PreparedReload {
  ReloadReport report;
  std::function<ReloadOutcome()> apply;
  // Set when the file names another key than the one in force: the key change that follows.
  std::shared_ptr<const transport::ClusterKey> old_key;
  std::shared_ptr<const transport::ClusterKey> new_key;
};
// Starts reading this node's file; `done` gets it on a later turn. false: it cannot start (this
// node is reading its file already, for a reload of its own).
using ReadOwnFile = std::function<bool(std::function<void(PreparedReload)> done)>;

class ClusterReload {
 public:
  ClusterReload(membership::NodeId self, stack::StackHost& host, stack::ClientTable& clients, ReadOwnFile read);

  // kReload of a client allowed to ask: answered later, once decided.
  int ask(const stack::LocalClient& client);
  // A node control message the ring delivered: false if it is no reload message. One that names
  // another node than its sender as its author is ignored.
  bool deliver(const membership::Delivered& message);
  // Every configuration change, as delivered: an open reload ends with nothing applied.
  void configuration(std::span<const membership::NodeId> members);
  bool under_way() const noexcept { return round_.has_value() || rotation_.has_value(); }

  std::optional<membership::Time> deadline() const noexcept;
  void on_time(membership::Time now);

 private:
  // A key change under way, after its reload applied: the members that take part, the step
  // they are at, and those of them whose step message is delivered.
  struct Rotation {
    ReloadId id;
    std::vector<membership::NodeId> members;
    std::uint8_t step = 1;
    std::vector<membership::NodeId> stepped;
    std::shared_ptr<const transport::ClusterKey> old_key;
    std::shared_ptr<const transport::ClusterKey> new_key;
    int error = 0;  // the reload's answer, once the key has changed
    std::string text;
  };

  void started(const ReloadId& id);
  void read(const ReloadId& id, PreparedReload prepared);
  void finish(const ReloadDecision& decision);
  void key_step(const ReloadKeyStep& step);
  void end_rotation(const std::string& why);
  void send_unsent();
  void answer(std::uint64_t serial, int error, const std::string& text);
  Status submit(const ReloadMessage& message);

  membership::NodeId self_;
  stack::StackHost& host_;
  stack::ClientTable& clients_;
  ReadOwnFile read_;
  std::vector<membership::NodeId> members_;  // of the last configuration delivered
  std::optional<ReloadRound> round_;
  std::function<ReloadOutcome()> apply_;                  // this node's changes for round_, once read
  std::shared_ptr<const transport::ClusterKey> old_key_;  // and the key change they bring
  std::shared_ptr<const transport::ClusterKey> new_key_;
  std::optional<Rotation> rotation_;
  std::optional<membership::Time> abort_at_;       // the asker's: its reload or key change ends here
  std::optional<ReloadMessage> unsent_;            // this node's report or key step, refused by the send queue
  std::optional<membership::Time> retry_at_;       // when it goes again
  std::uint64_t asked_ = 0;                        // this node's reloads started, the serial of the last
  std::map<std::uint64_t, std::uint64_t> askers_;  // serial -> waiting client's generation
};

}  // namespace rtotem::control
