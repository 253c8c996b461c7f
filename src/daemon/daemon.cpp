#include "src/daemon/daemon.hpp"

#include <qb/qblog.h>

#include <utility>

#include "src/common/process_memory.hpp"
#include "transport/links/link_set.hpp"
#include "transport/rdma/rdma_backend.hpp"
#ifdef RTOTEM_ALLOC_COUNTER
#include "src/common/alloc_counter.hpp"
#endif

namespace rtotem::daemon {
namespace {

constexpr std::uint64_t kClientRetryNs = 5'000'000;  // a client's full event channel is tried again this often

}  // namespace

Daemon::Daemon(EventLoop& loop, DaemonSetup setup) : loop_(loop), setup_(std::move(setup)) {}

Daemon::~Daemon() = default;

Result<std::unique_ptr<Daemon>> Daemon::start(EventLoop& loop, DaemonSetup setup,
                                              std::unique_ptr<transport::Backend> backend) {
  std::unique_ptr<Daemon> d(new Daemon(loop, std::move(setup)));
  Daemon* self = d.get();
  auto loader = ConfigLoader::create(loop);
  if (!loader) return loader.error();
  d->loader_ = std::move(loader).value();
  d->stack_timer_ = std::make_unique<LoopTimer>(loop, [self] { self->stack_->on_time(monotonic_now()); });
  d->clients_retry_ = std::make_unique<LoopTimer>(loop, [self] { self->stack_->retry_clients(); });
  auto stack = stack::NodeStack::create({d->setup_.config, d->setup_.totem, d->setup_.self, d->setup_.key}, *self);
  if (!stack) return stack.error();
  d->stack_ = std::move(stack).value();
  auto seq_file = RingSeqFile::in(d->setup_.state_dir);
  if (!seq_file) return seq_file.error();
  const config::IpcConfig& ipc_config = d->setup_.config.ipc;
  const IpcAccess access{d->setup_.totem.max_message_size + ipc::kBufferOverhead, ipc_config.max_clients,
                         ipc_config.allow.uids, ipc_config.allow.gids};
  auto ipc = IpcServer::start(loop, d->setup_.ipc_name, access, d->stack_->clients(),
                              [self] { return self->stack_->accept_client(); });
  if (!ipc) return ipc.error();
  d->ipc_ = std::move(ipc).value();
  auto ring = RingHost::start(loop, std::move(backend), d->setup_.totem, std::move(seq_file).value(), *self);
  if (!ring) return ring.error();
  d->ring_ = std::move(ring).value();
  return d;
}

void Daemon::stop() {
  if (ring_) ring_->close();
}

Result<void> Daemon::switch_transport(std::unique_ptr<transport::Backend> backend, config::TransportKind kind) {
  // Opened with the key of the start: a reload may have changed it since.
  if (backend->sealed() && stack_->setup().key) backend->rekey(stack_->setup().key, nullptr);
  if (auto switched = ring_->switch_backend(std::move(backend)); !switched) return switched;
  stack_->set_transport(kind);  // what status reports
  return {};
}

void Daemon::on_link_failure(std::function<void(std::string_view)> failed) {
  link_failed_ = std::move(failed);
  if (!early_link_failure_.empty()) (void)loop_.post([this] { link_failed_(std::exchange(early_link_failure_, {})); });
}

void Daemon::link_failed(std::string_view reason) {
  if (link_failed_)
    link_failed_(reason);
  else
    early_link_failure_ = reason;
}

void Daemon::configuration(const membership::ConfigChange& change) {
  stack_->configuration(change);
  if (change.transitional || std::exchange(ring_formed_, true)) return;
  if (ready_) ready_();
}

// Before the ring exists (the stack is made first), nothing goes on it.
Status Daemon::submit(const membership::Gather& message, membership::Delivery delivery) {
  return ring_ ? ring_->submit(message, delivery) : Status::kClosed;
}

void Daemon::arm_timer(std::optional<membership::Time> deadline) {
  if (!deadline) {
    stack_timer_->cancel();
    return;
  }
  const membership::Time now = monotonic_now();
  stack_timer_->arm(*deadline > now ? (*deadline - now) * 1000 : 0);
}

void Daemon::arm_client_retry() {
  if (!clients_retry_->armed()) clients_retry_->arm(kClientRetryNs);
}

// Every node's address on each link this node runs, as `file` gives them. A link runs what the
// file says, except rdma where this node runs on UDP (rdma's fallback) or has no link at all.
Result<std::vector<std::vector<transport::PeerAddress>>> Daemon::peers_in(const config::DaemonConfig& file) const {
  const transport::Backend& backend = ring_->backend();
  const transport::LinkSet* set = backend.link_set();
  const std::size_t links = set != nullptr ? set->link_count() : 1;
  if (file.links.size() != links)
    return Error::make("{} links where {} run: that needs a restart", file.links.size(), links);
  std::vector<std::vector<transport::PeerAddress>> by_link;
  for (std::size_t l = 0; l < links; ++l) {
    const auto link = static_cast<transport::LinkId>(l);
    const transport::Backend* running = set != nullptr ? set->link(link) : &backend;
    const bool rdma = running != nullptr ? dynamic_cast<const transport::RdmaBackend*>(running) != nullptr
                                         : file.links[l].transport == config::TransportKind::kRdma;
    if (rdma) {
      auto config = config::rdma_config_for(file, setup_.self, link);
      if (!config) return config.error();
      by_link.push_back(std::move(config->peers));
      continue;
    }
    config::DaemonConfig as_run = file;
    if (as_run.links[l].transport == config::TransportKind::kRdma)
      as_run.links[l].transport = config::TransportKind::kUdp;
    auto config = config::udp_config_for(as_run, setup_.self, link);
    if (!config) return config.error();
    by_link.push_back(std::move(config->peers));
  }
  return by_link;
}

Result<void> Daemon::can_change_nodes(const config::DaemonConfig& file) const {
  if (auto fits = membership::check_ring_fits(file.nodes.size(), ring_->backend().params()); !fits) return fits;
  auto peers = peers_in(file);
  if (!peers) return peers.error();
  return ring_->backend().check_peers(*peers);
}

void Daemon::change_nodes(const config::DaemonConfig& file) {
  auto peers = peers_in(file);
  RTOTEM_ASSERT(peers.ok() && ring_->backend().check_peers(*peers).ok());  // can_change_nodes() said so
  ring_->backend().set_peers(*peers);
}

void Daemon::set_access(std::vector<std::uint32_t> uids, std::vector<std::uint32_t> gids) {
  if (ipc_) ipc_->set_access(std::move(uids), std::move(gids));
}

Result<void> Daemon::load_config(std::function<void(Result<config::DaemonConfig>)> done) {
  return loader_->load(setup_.config.path, std::move(done));
}

Result<void> Daemon::apply_logging(const config::LoggingConfig& logging) {
  return apply_logging_ ? apply_logging_(logging) : Result<void>{};
}

// After this turn: the answer that led here goes out first.
void Daemon::exit(int code) {
  (void)loop_.post([this, code] {
    if (exit_) exit_(code);
  });
}

stack::HostStats Daemon::host_stats() const {
  const ProcessMemory memory = process_memory();
  stack::HostStats s;
  s.clients_refused = ipc_->clients_refused();
  s.unauthenticated = ipc_->admission().unauthenticated();
  s.auth_timeouts = ipc_->admission().auth_timeouts();
  s.connections_shed = ipc_->admission().connections_shed();
#ifdef RTOTEM_ALLOC_COUNTER
  s.heap_allocations = heap_allocations();
#endif
  s.rss_bytes = memory.rss_bytes;
  s.rss_anon_bytes = memory.rss_anon_bytes;
  s.rss_shmem_bytes = memory.rss_shmem_bytes;
  s.rss_peak_bytes = memory.peak_bytes;
  return s;
}

}  // namespace rtotem::daemon
