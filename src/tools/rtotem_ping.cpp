// rtotem-ping: the same command on every node; pings cross the UDP or RDMA backend, each node reports.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <span>

#include "base/cli_args.hpp"
#include "src/tools/ping_options.hpp"
#include "src/tools/ping_report.hpp"
#include "src/tools/ping_session.hpp"
#include "src/tools/ping_wire.hpp"
#include "transport/rdma/rdma_backend.hpp"
#include "transport/udp/udp_backend.hpp"

namespace {

constexpr int kExitAnswered = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

volatile std::sig_atomic_t g_stop = 0;

void on_stop_signal(int) { g_stop = 1; }

// SIGINT and SIGTERM end the run early; the report is still printed.
void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  (void)::sigaction(SIGINT, &action, nullptr);
  (void)::sigaction(SIGTERM, &action, nullptr);
}

rtotem::Result<std::unique_ptr<rtotem::transport::Backend>> open_backend(const rtotem::tools::PingOptions& options) {
  using namespace rtotem::transport;
  if (options.rdma) {
    auto rdma = RdmaBackend::open(options.rdma_config());
    if (!rdma) return rdma.error();
    return std::unique_ptr<Backend>(std::move(*rdma));
  }
  auto udp = UdpBackend::open(options.udp_config());
  if (!udp) return udp.error();
  return std::unique_ptr<Backend>(std::move(*udp));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rtotem;
  const std::span<char* const> args = cli_arguments(argc, argv);
  auto options = tools::parse_ping_options(args);
  if (!options) {
    fmt::print(stderr, "rtotem-ping: {}\n{}", options.error().message(), tools::ping_usage());
    return kExitUsage;
  }
  if (options->help) {
    fmt::print("{}", tools::ping_usage());
    return kExitAnswered;
  }
  install_stop_handlers();
  auto backend = open_backend(*options);
  if (!backend) {
    fmt::print(stderr, "rtotem-ping: node {}: {}\n", options->node, backend.error().message());
    return kExitFailed;
  }
  fmt::print("rtotem-ping: node {} on {} ({}), mtu {}\n", options->node, (*backend)->local_address(),
             (*backend)->name(), (*backend)->mtu());
  std::fflush(stdout);
  if (options->size > (*backend)->mtu() - tools::kPingHeaderSize) {  // RDMA lowers the mtu to the port's
    fmt::print(stderr, "rtotem-ping: --size {} does not fit the backend's mtu {}\n", options->size, (*backend)->mtu());
    return kExitUsage;
  }
  tools::PingSession session(*options, **backend);
  session.run(g_stop);
  tools::PingReport report = session.take_report();
  tools::print_report(report, stdout);
  return report.all_answered() ? kExitAnswered : kExitFailed;
}
