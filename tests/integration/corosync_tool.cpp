#include "tests/integration/corosync_tool.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace rtotem::testing {

int corosync_tool(const DaemonCluster& cluster, int node, const std::string& command, std::string& out) {
  const char* libs = std::getenv("COROSYNC_LIBS");
  EXPECT_NE(libs, nullptr) << "set COROSYNC_LIBS to the drop-in libraries' directory";
  const char* env = std::getenv("COROSYNC_TOOL_ENV");
  return cluster.run(
      node, fmt::format("PATH=/usr/sbin:$PATH LD_LIBRARY_PATH={} {} {}", libs ? libs : "", env ? env : "", command),
      out);
}

}  // namespace rtotem::testing
