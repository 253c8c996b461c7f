// Whether this host has an RDMA device rtotemd could run on: a verbs device with a port whose
// state is ACTIVE. Asked once at start-up, before any set-up, so that transport rdma can fall back
// to UDP (or refuse) with one clear reason.
#pragma once

#include <string>

#include "base/result.hpp"

namespace rtotem::transport {

// The name of the first device with an active port ("rxe0 port 1"), or an error that says why
// none is usable ("no RDMA device", "rxe0: no active port").
Result<std::string> find_active_rdma_port();

}  // namespace rtotem::transport
