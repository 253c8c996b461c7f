// Runs one of Corosync's own tools (Debian's corosync package, by name) as a client of a node,
// linked against the drop-in libraries of COROSYNC_LIBS. COROSYNC_TOOL_ENV (set by meson in a
// sanitizer build, whose libraries need the sanitizer runtimes loaded first) goes before it.
#pragma once

#include <string>

#include "tests/integration/daemon_cluster.hpp"

namespace rtotem::testing {

int corosync_tool(const DaemonCluster& cluster, int node, const std::string& command, std::string& out);

}  // namespace rtotem::testing
