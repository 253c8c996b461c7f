// rtotem-ping: the same command on every node; pings cross the UDP backend, each node reports.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <span>

#include "src/tools/ping_options.hpp"
#include "src/tools/ping_report.hpp"
#include "src/tools/ping_session.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  using namespace rtotem;
  const std::span<char* const> args(argv + (argc > 0 ? 1 : 0), argc > 0 ? static_cast<std::size_t>(argc - 1) : 0);
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
  auto backend = transport::UdpBackend::open(options->udp_config());
  if (!backend) {
    fmt::print(stderr, "rtotem-ping: node {}: {}\n", options->node, backend.error().message());
    return kExitFailed;
  }
  tools::PingSession session(*options, **backend);
  session.run(g_stop);
  tools::PingReport report = session.take_report();
  tools::print_report(report, stdout);
  return report.all_answered() ? kExitAnswered : kExitFailed;
}
