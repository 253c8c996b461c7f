// A shutdown asked of rtotemd, as corosync's cfg runs it: the clients that track shutdown are
// asked, and each agrees or vetoes. kShutdownRequest stops only if none vetoes; a client that has
// not answered when the time is up counts as a veto (corosync's "undecided are NO").
// kShutdownRegardless asks, but stops whatever they answer. A client that disconnects while
// asked is not waited for. Sans-I/O: the daemon sends the questions and runs the timer.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace rtotem::control {

inline constexpr std::uint64_t kShutdownTimeoutMs = 5000;  // corosync's default

struct ShutdownOutcome {
  bool stop = false;
  std::string why;  // for the log: who vetoed, or that all agreed
};

class ShutdownVote {
 public:
  // `asked`: the clients (by generation) asked to answer; `regardless`: their answers cannot stop it.
  ShutdownVote(std::set<std::uint64_t> asked, bool regardless) : waiting_(std::move(asked)), regardless_(regardless) {}

  // The outcome once it is known: at once if no one is asked.
  std::optional<ShutdownOutcome> outcome() const;
  // An answer; false if `client` was not asked or has answered already.
  bool answer(std::uint64_t client, std::uint32_t pid, bool agree);
  void gone(std::uint64_t client) { waiting_.erase(client); }
  // Time is up: whoever has not answered vetoes.
  ShutdownOutcome timed_out() const;

 private:
  std::set<std::uint64_t> waiting_;
  bool regardless_ = false;
  std::string vetoed_by_;  // "pid N", the first veto
};

}  // namespace rtotem::control
