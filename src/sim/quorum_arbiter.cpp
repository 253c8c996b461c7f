#include "src/sim/quorum_arbiter.hpp"

namespace rtotem::sim {

bool QuorumArbiter::vote(const RingId& ring, const std::function<bool(const RingId&)>& held) {
  if (granted_ && !(*granted_ == ring) && held(*granted_)) {
    ++refused_;
    return false;
  }
  if (!granted_ || !(*granted_ == ring)) {
    if (granted_) ++moves_;
    granted_ = ring;
  }
  ++given_;
  return true;
}

}  // namespace rtotem::sim
