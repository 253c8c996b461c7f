// The group bench: one member of a group measuring its throughput (every member sends as fast as
// the ring admits), latency (one member sends at a fixed rate and times its own deliveries), or
// membership changes (watch), and checking what it delivered: per-sender FIFO, and an order hash
// that must be equal on every member. The same run loop drives librtotem and libcpg.
#pragma once

#include "bench/group_client.hpp"

namespace rtotem::bench {

// Parses the command line and runs; the process's exit code (0 done and checked, 1 failed, 2 usage).
int group_bench_main(GroupClient& client, int argc, char** argv);

}  // namespace rtotem::bench
