// The group bench's run loop, on whichever GroupClient it is given.
#include "bench/group_bench_run.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <random>
#include <vector>

#include "bench/group_bench_options.hpp"
#include "bench/group_bench_payload.hpp"
#include "bench/group_bench_receiver.hpp"
#include "bench/group_bench_report.hpp"
#include "rtotem/rtotem.hpp"

namespace rtotem::bench {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

constexpr std::uint64_t kNsPerS = 1'000'000'000;
constexpr std::uint64_t kConnectWait_ns = 10 * kNsPerS;     // the daemon may still form its first ring
constexpr std::uint64_t kMembersWait_ns = 60 * kNsPerS;     // the other instances start one by one
constexpr std::uint64_t kEndMarkersWait_ns = 30 * kNsPerS;  // the ring's and the IPC's backlogs drain
constexpr std::uint64_t kBackPressureWait_ns = 1'000'000;   // EAGAIN: the ring frees room per token visit

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * kNsPerS + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * kNsPerS + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Watch mode's lines: wall-clock time, so that a harness can subtract the moment it killed a node.
void print_group_change(const rtotem_group_change& c) {
  std::string line = fmt::format("{{\"event\": \"group\", \"realtime_ns\": {}, \"members\": [", realtime_ns());
  for (std::size_t i = 0; i < c.n_members; ++i)
    line += fmt::format("{}[{}, {}]", i ? ", " : "", c.members[i].nodeid, c.members[i].pid);
  line += "], \"left\": [";
  for (std::size_t i = 0; i < c.n_left; ++i)
    line += fmt::format("{}[{}, {}, \"{}\"]", i ? ", " : "", c.left[i].nodeid, c.left[i].pid,
                        reason_name(c.left_reason[i]));
  fmt::print("{}]}}\n", line);
  std::fflush(stdout);
}

void print_ring_change(const rtotem_ring_change& c) {
  std::string line = fmt::format("{{\"event\": \"ring\", \"realtime_ns\": {}, \"transitional\": {}, \"nodes\": [",
                                 realtime_ns(), c.transitional);
  for (std::size_t i = 0; i < c.n_nodes; ++i) line += fmt::format("{}{}", i ? ", " : "", c.nodeids[i]);
  fmt::print("{}]}}\n", line);
  std::fflush(stdout);
}

class BenchRun {
 public:
  BenchRun(GroupClient& client, const BenchOptions& o)
      : client_(client),
        o_(o),
        receiver_(o.mode == BenchMode::kLatency ? std::size_t{o.rate_per_s} * o.duration_s : 0),
        buffer_(o.size_bytes, std::byte{0xa5}),
        run_id_(std::random_device{}() | std::uint64_t{std::random_device{}()} << 32) {}

  int run() {
    if (auto connected = connect(); !connected) return fail(connected.error());
    if (max_size_ < o_.size_bytes) {
      fmt::print(stderr, "{}: --size {} is larger than this cluster's largest message ({} bytes)\n", client_.program(),
                 o_.size_bytes, max_size_);
      return kExitUsage;
    }
    if (auto ok = join(); !ok) return fail(ok.error());
    if (o_.mode == BenchMode::kWatch) {
      const auto watched = receive_for_duration();
      return watched ? kExitOk : fail(watched.error());
    }
    if (auto ok = wait_for_members(); !ok) return fail(ok.error());
    receiver_.await_end_markers_of_members();
    started_ = true;
    const auto sent = send();
    if (!sent) return fail(sent.error());
    if (auto ok = send_end_marker(); !ok) return fail(ok.error());
    if (auto ok = wait_for_end_markers(); !ok) return fail(ok.error());
    return report();
  }

 private:
  Error api_error(int rc, std::string_view what) const { return Error::make("{}: {}", what, client_.error_text(rc)); }

  Result<void> connect() {
    GroupClient::Callbacks callbacks;
    callbacks.deliver = [this](const rtotem_message& m) { receiver_.on_deliver(m, now_ns()); };
    callbacks.group_change = [this](const rtotem_group_change& c) {
      if (o_.mode == BenchMode::kWatch) print_group_change(c);
      receiver_.on_group_change(c);
    };
    callbacks.ring_change = [this](const rtotem_ring_change& c) {
      if (o_.mode == BenchMode::kWatch) print_ring_change(c);
      ring_changes_ += started_ ? 1 : 0;
    };
    // A daemon still starting refuses (no socket yet) or asks to wait (no ring yet): retried.
    const std::uint64_t deadline = now_ns() + kConnectWait_ns;
    int rc = -EAGAIN;
    while ((rc = client_.connect(callbacks, o_.ipc_name)) < 0 && (rc == -EAGAIN || rc == -ECONNREFUSED) &&
           now_ns() < deadline)
      usleep(50'000);
    if (rc < 0)
      return api_error(rc, fmt::format("connecting to {} (ipc name '{}')", client_.daemon(),
                                       o_.ipc_name.empty() ? "the default" : o_.ipc_name));
    if ((rc = client_.local_nodeid(nodeid_)) < 0) return api_error(rc, "asking the node id");
    if ((rc = client_.max_message_size(max_size_)) < 0) return api_error(rc, "asking the largest message");
    receiver_.set_self({nodeid_, pid_});
    return {};
  }

  Result<void> join() {
    if (const int rc = client_.join(o_.group); rc < 0) return api_error(rc, fmt::format("joining '{}'", o_.group));
    return {};
  }

  // Waits for events (up to `timeout_ns`) and handles all that are waiting.
  Result<void> pump(std::uint64_t timeout_ns) {
    pollfd p{client_.fd(), POLLIN, 0};
    const timespec timeout{static_cast<time_t>(timeout_ns / kNsPerS), static_cast<long>(timeout_ns % kNsPerS)};
    if (ppoll(&p, 1, &timeout, nullptr) < 0 && errno != EINTR)
      return Error::sys(errno, "waiting for {}", client_.daemon());
    return dispatch();
  }

  Result<void> dispatch() {
    if (const int rc = client_.dispatch_all(); rc < 0) return api_error(rc, "receiving");
    return {};
  }

  // Receive and watch modes: only what the others send, for the run's duration.
  Result<void> receive_for_duration() {
    const std::uint64_t stop = now_ns() + std::uint64_t{o_.duration_s} * kNsPerS;
    for (std::uint64_t t = now_ns(); t < stop; t = now_ns())
      if (auto ok = pump(std::min(stop - t, std::uint64_t{100'000'000})); !ok) return ok;
    return {};
  }

  Result<void> send() {
    switch (o_.mode) {
      case BenchMode::kLatency: return send_paced();
      case BenchMode::kReceive: return receive_for_duration();
      default: return send_flat_out();
    }
  }

  Result<void> wait_for_members() {
    const std::uint64_t deadline = now_ns() + kMembersWait_ns;
    while (receiver_.members() < o_.senders) {
      if (now_ns() >= deadline)
        return Error::make("group '{}' has {} of the {} members --senders asks for, after {} s", o_.group,
                           receiver_.members(), o_.senders, kMembersWait_ns / kNsPerS);
      if (auto ok = pump(100'000'000); !ok) return ok;
    }
    return {};
  }

  // One attempt to multicast the send buffer: true if the ring took it. On back-pressure, handles
  // what was delivered meanwhile and waits briefly, as rtotem.h (and libcpg's TRY_AGAIN) asks.
  Result<bool> offer() {
    const int rc = client_.mcast(o_.group, buffer_, o_.order);
    if (rc == 0) return true;
    if (rc != -EAGAIN) return api_error(rc, fmt::format("multicasting to '{}'", o_.group));
    ++eagain_;
    if (auto ok = pump(kBackPressureWait_ns); !ok) return ok.error();
    return false;
  }

  void stamp(PayloadKind kind, std::uint64_t send_ns) {
    encode_payload_header({kind, run_id_, kind == PayloadKind::kData ? seq_ : 0, send_ns}, buffer_);
  }

  Result<void> send_flat_out() {
    const std::uint64_t stop = now_ns() + std::uint64_t{o_.duration_s} * kNsPerS;
    for (std::uint64_t t = now_ns(); t < stop; t = now_ns()) {
      stamp(PayloadKind::kData, t);
      auto taken = offer();
      if (!taken) return taken.error();
      if (!*taken) continue;
      ++seq_;
      if (auto ok = dispatch(); !ok) return ok;  // as they come: the daemon's queue for us stays short
    }
    return {};
  }

  // Message i is due at start + i/rate. It is timed from its first rtotem_mcast attempt, so a wait
  // for back-pressure counts in its latency. A message the ring has not taken by the end of the
  // run is not sent (the report then has fewer samples than rate x duration).
  Result<void> send_paced() {
    const std::uint64_t start = now_ns();
    const std::uint64_t stop = start + std::uint64_t{o_.duration_s} * kNsPerS;
    const std::uint64_t count = std::uint64_t{o_.rate_per_s} * o_.duration_s;
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t due = start + i * kNsPerS / o_.rate_per_s;
      for (std::uint64_t t = now_ns(); t < due; t = now_ns())
        if (auto ok = pump(due - t); !ok) return ok;
      stamp(PayloadKind::kData, now_ns());
      for (bool taken = false; !taken;) {
        auto offered = offer();
        if (!offered) return offered.error();
        taken = *offered;
        if (!taken && now_ns() >= stop) return {};
      }
      ++seq_;
    }
    return {};
  }

  Result<void> send_end_marker() {
    buffer_.resize(kPayloadHeaderBytes);  // small; the hot loop is over
    stamp(PayloadKind::kEnd, now_ns());
    const std::uint64_t deadline = now_ns() + kEndMarkersWait_ns;
    for (;;) {
      auto taken = offer();
      if (!taken) return taken.error();
      if (*taken) return {};
      if (now_ns() >= deadline)
        return Error::make("the ring refused the end marker for {} s (back-pressure)", kEndMarkersWait_ns / kNsPerS);
    }
  }

  // Bounded: a member that never sends its end marker (and never leaves) is reported, not waited
  // for forever.
  Result<void> wait_for_end_markers() {
    const std::uint64_t deadline = now_ns() + kEndMarkersWait_ns;
    while (!receiver_.end_markers_complete() && now_ns() < deadline)
      if (auto ok = pump(100'000'000); !ok) return ok;
    return {};
  }

  int report() {
    BenchReport r{.options = &o_,
                  .node = nodeid_,
                  .pid = pid_,
                  .messages_sent = seq_,
                  .eagain = eagain_,
                  .delivered = receiver_.stats(),
                  .end_markers_missing = receiver_.end_markers_missing(),
                  .left_without_end_marker = receiver_.left_without_end_marker(),
                  .ring_changes = ring_changes_,
                  .latency = summarize_latency(receiver_.latency_samples_ns())};
    print_report(r);
    const bool failed = r.delivered.fifo_violations > 0 || r.end_markers_missing > 0 || r.left_without_end_marker > 0;
    if (r.delivered.fifo_violations > 0)
      fmt::print(stderr, "{}: {} per-sender FIFO violations\n", client_.program(), r.delivered.fifo_violations);
    if (r.end_markers_missing > 0 || r.left_without_end_marker > 0)
      fmt::print(stderr, "{}: end markers missing from {} members ({} left the group without one)\n", client_.program(),
                 r.end_markers_missing + r.left_without_end_marker, r.left_without_end_marker);
    return failed ? kExitFailed : kExitOk;
  }

  int fail(const Error& e) const {
    fmt::print(stderr, "{}: pid {}: {}\n", client_.program(), pid_, e.message());
    return kExitFailed;
  }

  GroupClient& client_;  // outlives the run; disconnects after it (its callbacks use receiver_)
  const BenchOptions& o_;
  BenchReceiver receiver_;
  std::vector<std::byte> buffer_;  // the one send buffer, stamped in place
  std::uint64_t run_id_;
  std::uint32_t nodeid_ = 0;
  std::uint32_t pid_ = static_cast<std::uint32_t>(getpid());
  std::size_t max_size_ = 0;
  std::uint64_t seq_ = 0;  // data messages the ring took
  std::uint64_t eagain_ = 0;
  std::uint64_t ring_changes_ = 0;
  bool started_ = false;
};

}  // namespace

int group_bench_main(GroupClient& client, int argc, char** argv) {
  auto options = parse_bench_options(argc, argv);
  if (!options) {
    fmt::print(stderr, "{0}: {1} ({0} --help lists the options)\n", client.program(), options.error().message());
    return kExitUsage;
  }
  if (options->help) {
    fmt::print("{}", bench_usage(client.program(), client.daemon()));
    return kExitOk;
  }
  return BenchRun(client, *options).run();
}

}  // namespace rtotem::bench
