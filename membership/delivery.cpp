// Delivery (tocssrp95 §3.3): agreed messages in sequence order as soon as every lower one is
// held; safe ones only once every member holds them, i.e. below the aru the token carried on two
// consecutive visits. Messages every member holds and this node delivered are discarded.
#include <algorithm>

#include "membership/node.hpp"

namespace rtotem::membership {

void Node::release_stable(Seq token_aru) {
  const Seq stable = std::min(token_aru, last_token_aru_);
  safe_through_ = std::max(safe_through_, stable);
  last_token_aru_ = token_aru;
  deliver_ready();
}

void Node::deliver_ready() {
  while (delivered_through_ < queue_.aru()) {
    const Seq seq = delivered_through_ + 1;
    const StoredMessage* message = queue_.find(seq);
    RTOTEM_ASSERT(message);  // held: seq <= aru, and nothing undelivered is ever discarded
    if (message->delivery == Delivery::kSafe && seq > safe_through_) break;  // total order waits too
    events_.deliver(Delivered{ring_id_, seq, message->sender, message->delivery, message->payload, &message->hold});
    delivered_through_ = seq;
    ++counters_.messages_delivered;
  }
  const Seq discard = std::min(safe_through_, delivered_through_);
  if (discard > queue_.base()) queue_.discard_through(discard);
}

}  // namespace rtotem::membership
