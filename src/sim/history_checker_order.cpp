// The checker's order rules within a configuration and per sender, judged at each delivery: the
// prefix rule (EVS 1994 §3: a regular configuration has one delivery order, and a member delivers
// a prefix of it: it may stop early, never skip) and FIFO per sender.
#include <fmt/format.h>

#include "src/sim/history_checker.hpp"

namespace rtotem::sim {

// The configuration keeps the longest sequence any member delivered in it: the next delivery of a
// member that has matched it so far either matches its next entry or, past its end, extends it.
void HistoryChecker::check_prefix(Time now, std::size_t at, MessageId id) {
  const NodeState& self = node_states_[at];
  Config& config = configs_[*self.regular];
  const std::size_t position = self.history.size() - self.installed.back().first;
  if (position >= config.sequence.size()) {
    config.sequence.push_back(id);  // position == size: every earlier one matched, or was reported
    return;
  }
  const MessageId expected = config.sequence[position];
  if (expected == id) return;
  report(Property::kPrefix, now, {nodes_[at]}, id,
         fmt::format("delivery {} in {} is {}, where another member delivered {}", position + 1,
                     config_text(*self.regular), describe(id), describe(expected)));
}

// A sender's messages are numbered in the order its application submitted them, and accepted in
// that order: every node delivers each sender's numbers increasing. Gaps are no fault (a crash, a
// partition); a number delivered twice is duplication, reported before this is called.
void HistoryChecker::check_fifo(Time now, std::size_t at, MessageId id) {
  std::uint64_t& next = fifo_next_[at * nodes_.size() + index_of(id.origin)];
  if (id.counter < next)
    report(Property::kFifo, now, {nodes_[at]}, id,
           fmt::format("node {} delivered {} after {}#{}", nodes_[at], describe(id), id.origin, next - 1));
  next = std::max(next, id.counter + 1);
}

}  // namespace rtotem::sim
