// The group bench's result: rates over the span of this member's data deliveries, latency percentiles.
#include "bench/group_bench_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rtotem::bench {
namespace {

struct Rates {
  double interval_s = 0;
  double msgs_per_s = 0;
  double mb_per_s = 0;  // 10^6 bytes, as BENCHMARKS.md
};

// From the first data delivery to the last: the time this member spent receiving the run.
Rates rates(const DeliveryStats& d) {
  Rates r;
  r.interval_s = static_cast<double>(d.last_ns - d.first_ns) / 1e9;
  if (r.interval_s <= 0) return r;
  r.msgs_per_s = static_cast<double>(d.data_delivered) / r.interval_s;
  r.mb_per_s = static_cast<double>(d.bytes_delivered) / r.interval_s / 1e6;
  return r;
}

double rank_us(const std::vector<std::uint64_t>& sorted, double quantile) {
  const auto rank = static_cast<std::size_t>(std::ceil(quantile * static_cast<double>(sorted.size())));
  return static_cast<double>(sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1]) / 1e3;
}

void print_text(const BenchReport& r, const Rates& rate) {
  const BenchOptions& o = *r.options;
  const DeliveryStats& d = r.delivered;
  fmt::print("mode: {}\nsize: {}\norder: {}\nduration_s: {}\nnode: {}\npid: {}\nsenders: {}\n", mode_name(o.mode),
             o.size_bytes, order_name(o.order), o.duration_s, r.node, r.pid, o.senders);
  fmt::print("messages_sent: {}\neagain: {}\nmessages_delivered: {}\ninterval_s: {:.3f}\n", r.messages_sent, r.eagain,
             d.data_delivered, rate.interval_s);
  fmt::print("msgs_per_s: {:.0f}\nmb_per_s: {:.2f}\norder_hash: {:016x}\nfifo_violations: {}\n", rate.msgs_per_s,
             rate.mb_per_s, d.order_hash, d.fifo_violations);
  fmt::print("foreign: {}\nend_markers_missing: {}\nleft_without_end_marker: {}\nring_changes: {}\n", d.foreign,
             r.end_markers_missing, r.left_without_end_marker, r.ring_changes);
  fmt::print("max_gap_us: {:.1f}\n", static_cast<double>(d.max_gap_ns) / 1e3);
  if (!r.latency) return;
  const LatencySummary& l = *r.latency;
  fmt::print("samples: {}\nlatency_dropped: {}\np50_us: {:.1f}\np99_us: {:.1f}\np999_us: {:.1f}\nmax_us: {:.1f}\n",
             l.samples, d.latency_dropped, l.p50_us, l.p99_us, l.p999_us, l.max_us);
}

void print_json(const BenchReport& r, const Rates& rate) {
  const BenchOptions& o = *r.options;
  const DeliveryStats& d = r.delivered;
  std::string out = fmt::format(
      "{{\"mode\": \"{}\", \"size\": {}, \"order\": \"{}\", \"duration_s\": {}, \"node\": {}, \"pid\": {}, "
      "\"senders\": {}, \"messages_sent\": {}, \"eagain\": {}, \"messages_delivered\": {}, \"interval_s\": {:.6f}, "
      "\"msgs_per_s\": {:.1f}, \"mb_per_s\": {:.3f}, \"order_hash\": \"{:016x}\", \"fifo_violations\": {}, "
      "\"foreign\": {}, \"end_markers_missing\": {}, \"left_without_end_marker\": {}, \"ring_changes\": {}, "
      "\"max_gap_us\": {:.1f}",
      mode_name(o.mode), o.size_bytes, order_name(o.order), o.duration_s, r.node, r.pid, o.senders, r.messages_sent,
      r.eagain, d.data_delivered, rate.interval_s, rate.msgs_per_s, rate.mb_per_s, d.order_hash, d.fifo_violations,
      d.foreign, r.end_markers_missing, r.left_without_end_marker, r.ring_changes,
      static_cast<double>(d.max_gap_ns) / 1e3);
  if (r.latency) {
    const LatencySummary& l = *r.latency;
    out += fmt::format(
        ", \"samples\": {}, \"latency_dropped\": {}, \"p50_us\": {:.1f}, \"p99_us\": {:.1f}, \"p999_us\": {:.1f}, "
        "\"max_us\": {:.1f}",
        l.samples, d.latency_dropped, l.p50_us, l.p99_us, l.p999_us, l.max_us);
  }
  fmt::print("{}}}\n", out);
}

}  // namespace

std::optional<LatencySummary> summarize_latency(std::vector<std::uint64_t>& samples_ns) {
  if (samples_ns.empty()) return std::nullopt;
  std::ranges::sort(samples_ns);
  return LatencySummary{samples_ns.size(), rank_us(samples_ns, 0.50), rank_us(samples_ns, 0.99),
                        rank_us(samples_ns, 0.999), static_cast<double>(samples_ns.back()) / 1e3};
}

void print_report(const BenchReport& r) {
  const Rates rate = rates(r.delivered);
  if (r.options->json) {
    print_json(r, rate);
  } else {
    print_text(r, rate);
  }
}

}  // namespace rtotem::bench
