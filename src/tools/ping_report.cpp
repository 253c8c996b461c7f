// rtotem-ping's report: tallies, RTT percentiles, rates and the backend counters that moved.
#include "src/tools/ping_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "src/tools/ping_options.hpp"

namespace rtotem::tools {
namespace {

std::string_view phase_name(PingPhase phase) noexcept {
  switch (phase) {
    case PingPhase::kHello: return "hello";
    case PingPhase::kPing: return "ping";
    case PingPhase::kLinger: return "linger";
    case PingPhase::kFinished: return "finished";
  }
  return "?";
}

std::string outcome(const PingReport& report) {
  switch (report.end) {
    case PingEnd::kComplete: return "complete";
    case PingEnd::kTimedOut: return fmt::format("timed out in the {} phase", phase_name(report.phase));
    case PingEnd::kInterrupted: return fmt::format("interrupted in the {} phase", phase_name(report.phase));
  }
  return "?";
}

// The sample at quantile q of sorted samples, in microseconds.
double quantile_us(const std::vector<std::uint32_t>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return static_cast<double>(sorted[std::min(rank, sorted.size() - 1)]) / 1e3;
}

void print_peers(const PingReport& report, std::FILE* out) {
  for (const PeerTally& peer : report.peers) {
    fmt::print(out, "  peer {} {}: pongs {}/{}, lost {}, late {}, its pings answered {}{}\n", peer.node, peer.address,
               peer.pongs, report.pings_sent, peer.lost, peer.late, peer.pings_answered,
               !peer.heard       ? " (never heard)"
               : !peer.heard_all ? " (not ready)"
               : !peer.done      ? " (not done)"
                                 : "");
  }
}

void print_rates(PingReport& report, std::FILE* out) {
  std::sort(report.rtt_ns.begin(), report.rtt_ns.end());
  if (report.rtt_ns.empty()) {
    fmt::print(out, "  rtt_us: no samples\n");
  } else {
    fmt::print(out, "  rtt_us: p50 {:.1f}, p99 {:.1f}, max {:.1f} ({} samples)\n", quantile_us(report.rtt_ns, 0.50),
               quantile_us(report.rtt_ns, 0.99), quantile_us(report.rtt_ns, 1.0), report.rtt_ns.size());
  }
  const double seconds = static_cast<double>(report.ping_phase_ns) / 1e9;
  if (seconds <= 0) {
    fmt::print(out, "  ping phase: not run\n");
    return;
  }
  const double messages = static_cast<double>(report.pings_sent);
  fmt::print(out, "  ping phase: {:.3f} s, {:.0f} msg/s, {:.2f} MB/s of pings multicast\n", seconds, messages / seconds,
             messages * report.ping_bytes / seconds / 1e6);
}

}  // namespace

bool PingReport::all_answered() const noexcept {
  if (pings_sent != count) return false;
  return std::all_of(peers.begin(), peers.end(), [&](const PeerTally& peer) { return peer.pongs == count; });
}

void print_report(PingReport& report, std::FILE* out) {
  std::uint64_t lost = 0;
  std::string peers;
  for (const PeerTally& peer : report.peers) {
    lost += peer.lost;
    peers += fmt::format("{}{}", peers.empty() ? "" : ",", peer.node);
  }
  fmt::print(out, "rtotem-ping report\n");
  fmt::print(out, "  node: {} at {}, mode {}, peers {}\n", report.node, report.address, report.mode, peers);
  fmt::print(out, "  result: {}, {}\n", report.all_answered() ? "PASS" : "FAIL", outcome(report));
  fmt::print(out, "  sent: {} pings of {} bytes (of {} asked), {} pongs, {} hellos, {} done\n", report.pings_sent,
             report.ping_bytes, report.count, report.pongs_sent, report.hellos_sent, report.dones_sent);
  print_peers(report, out);
  fmt::print(out, "  lost: {}{}\n", lost,
             report.unsettled == 0 ? "" : fmt::format(", and {} pings unsettled at the stop", report.unsettled));
  print_rates(report, out);
  if (report.pongs_dropped + report.bad_messages + report.strangers > 0) {
    fmt::print(out, "  refused: {} pongs dropped, {} bad messages, {} from strangers\n", report.pongs_dropped,
               report.bad_messages, report.strangers);
  }
  bool moved = false;
  report.counters.for_each([&](std::string_view, std::uint64_t value) { moved = moved || value != 0; });
  fmt::print(out, "  counters:{}\n", moved ? "" : " all zero");
  report.counters.for_each([&](std::string_view name, std::uint64_t value) {
    if (value != 0) fmt::print(out, "    {} {}\n", name, value);
  });
  std::fflush(out);
}

}  // namespace rtotem::tools
