// rtotemd: one per node. Reads the config, finds which node it is, opens the transport, forms
// the ring with the others and serves local clients until SIGTERM/SIGINT, an agreed shutdown or
// a kill; SIGHUP reloads the config file (Daemon::reload).
#include <fmt/format.h>
#include <malloc.h>
#include <qb/qblog.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <variant>

#include "src/common/seal_epoch.hpp"
#include "src/daemon/daemon.hpp"
#include "src/daemon/daemon_options.hpp"
#include "src/daemon/logging.hpp"
#include "transport/links/link_set.hpp"
#include "transport/rdma/rdma_backend.hpp"
#include "transport/rdma/rdma_device_probe.hpp"
#include "transport/udp/udp_backend.hpp"
#include "version.h"

namespace {

using namespace rtotem;
using namespace rtotem::daemon;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// One link of several: a UDP backend, or an RDMA one (missing where it does not open).
using LinkPlan = std::variant<transport::UdpConfig, transport::RdmaConfig>;

transport::BackendParams& params_of(LinkPlan& link) {
  return std::visit([](auto& config) -> transport::BackendParams& { return config.params; }, link);
}

// What the node opens: the configured transport; for rdma also the UDP multicast it falls back to
// if the RDMA backend cannot open (a failed multicast join, say) and totem.fallback allows it.
// With several links: a backend per link under a LinkSet (`rdma` unused; `udp` only carries the
// key that seal_with hands to every link).
struct TransportPlan {
  transport::UdpConfig udp;                   // udp, udpu, or rdma's fallback
  std::optional<transport::RdmaConfig> rdma;  // transport rdma on a host with an active RDMA port
  std::string rdma_device;                    // "rxe0 port 1"
  std::vector<LinkPlan> links;                // several links: each one's, link 0 first
  std::optional<transport::LinkSetConfig> link_set;

  // Whatever opens seals with the cluster key (null: in the clear) and this start's epoch; under
  // a LinkSet each link seals what it carries.
  void seal_with(const std::shared_ptr<const transport::ClusterKey>& key, std::uint64_t epoch) {
    std::vector<transport::BackendParams*> sealing = {&udp.params};
    if (rdma) sealing.push_back(&rdma->params);
    for (LinkPlan& link : links) sealing.push_back(&params_of(link));
    if (link_set) sealing.push_back(&link_set->params);  // not to seal with: its payload_mtu is the links'
    for (transport::BackendParams* params : sealing) {
      params->key = key;
      params->epoch = epoch;
    }
  }
  bool sealed() const noexcept { return udp.params.key != nullptr; }

  // Send buffers for the largest message in packets of the MTU each backend runs with: UDP's is
  // netmtu; RDMA's is netmtu until its port is queried, then what the port carries. Under a
  // LinkSet the set's buffers are the ones sent (an RDMA link must carry netmtu: open_links), and
  // the links keep the fewest a backend may have.
  void size_pools(const membership::TotemConfig& totem) {
    auto size = [totem](transport::BackendParams& params) {
      params.send_buffers = totem.send_buffers_for(params.payload_mtu());
    };
    if (link_set) {
      size(link_set->params);
      for (LinkPlan& link : links) params_of(link).send_buffers = static_cast<std::uint32_t>(transport::kTxQueueMax);
      return;
    }
    size(udp.params);
    if (!rdma) return;
    size(rdma->params);
    rdma->size_pools = size;
  }
};

Result<void> check_totem(const DaemonOptions& options, const config::DaemonConfig& config,
                         const membership::TotemConfig& totem, const transport::BackendParams& params) {
  if (auto fits = totem.check(params); !fits)
    return Error::make("{}: totem: {}", options.config_path, fits.error().message());
  if (auto fits = membership::check_ring_fits(config.nodes.size(), params); !fits)
    return Error::make("{}: nodelist: {}", options.config_path, fits.error().message());
  return {};
}

void log_rdma_event(std::string_view line) { qb_log(LOG_WARNING, "%.*s", static_cast<int>(line.size()), line.data()); }

// Transport rdma: the device probe decides between the RDMA backend (with UDP multicast ready as
// its fallback) and UDP at once (one warning line), or refuses with totem.fallback no.
Result<void> plan_rdma(config::DaemonConfig& loaded, const config::NodeEntry& self, TransportPlan& plan) {
  auto device = transport::find_active_rdma_port();
  auto choice = config::choose_transport(loaded, device ? std::string_view{} : device.error().message());
  if (!choice) return choice.error();
  if (choice->kind != config::TransportKind::kRdma) {
    qb_log(LOG_WARNING, "%s", choice->warning.c_str());
    loaded.link0().transport = choice->kind;
    return {};
  }
  auto rdma = config::rdma_config_for(loaded, self);
  if (!rdma) return rdma.error();
  plan.rdma = std::move(*rdma);
  plan.rdma->log = log_rdma_event;
  plan.rdma_device = *device;
  config::DaemonConfig fallback = loaded;
  fallback.link0().transport = config::TransportKind::kUdp;
  auto udp = config::udp_config_for(fallback, self);
  if (!udp) return udp.error();
  plan.udp = std::move(*udp);
  return {};
}

// "link 0 rdma 10.0.0.1, link 1 udp 10.1.0.1:5406", for --check.
std::string links_description(const std::vector<LinkPlan>& links) {
  std::string out;
  for (std::size_t i = 0; i < links.size(); ++i) {
    const auto* udp = std::get_if<transport::UdpConfig>(&links[i]);
    out += fmt::format("{}link {} {}", i == 0 ? "" : ", ", i,
                       udp ? fmt::format("udp {}", udp->bind.to_string())
                           : fmt::format("rdma {}", std::get<transport::RdmaConfig>(links[i]).bind.host_string()));
  }
  return out;
}

// Several links: a backend for each (UDP, or RDMA), without a local path, under a LinkSet that
// judges them by their pings (timed from the token as corosync's knet links are).
Result<void> plan_links(const config::DaemonConfig& config, const config::NodeEntry& self,
                        const membership::TotemConfig& totem, TransportPlan& plan) {
  for (const config::LinkConfig& link : config.links) {
    if (link.transport == config::TransportKind::kRdma) {
      auto rdma = config::rdma_config_for(config, self, link.number);
      if (!rdma) return rdma.error();
      rdma->log = log_rdma_event;
      plan.links.emplace_back(std::move(*rdma));
    } else {
      auto udp = config::udp_config_for(config, self, link.number);
      if (!udp) return udp.error();
      plan.links.emplace_back(std::move(*udp));
    }
    params_of(plan.links.back()).local_path = false;
  }
  transport::LinkSetConfig set;
  set.params = params_of(plan.links.front());
  set.params.local_path = true;
  for (const config::NodeEntry& node : config.nodes)
    if (node.nodeid != self.nodeid) set.peers.push_back(node.nodeid);
  for (const config::LinkConfig& link : config.links)
    set.links.push_back({link.timing(totem.token_timeout_ms), link.priority});
  set.mode = config.link_mode;
  set.clock = monotonic_now;
  set.log = [](std::string_view line) { qb_log(LOG_NOTICE, "%.*s", static_cast<int>(line.size()), line.data()); };
  plan.link_set = std::move(set);
  return {};
}

// Everything start-up decides before it opens anything: the config, this node, the protocol.
Result<DaemonSetup> prepare(const DaemonOptions& options, TransportPlan& plan) {
  auto loaded = config::load_config(options.config_path);
  if (!loaded) return loaded.error();
  for (const std::string& warning : loaded->warnings) qb_log(LOG_WARNING, "%s", warning.c_str());
  auto addresses = config::host_addresses();
  if (!addresses) return addresses.error();
  auto self = config::local_node(*loaded, options.nodeid, *addresses);
  if (!self) return self.error();
  auto totem = loaded->totem_in_force().resolved();
  if (!totem) return Error::make("{}: totem: {}", options.config_path, totem.error().message());
  if (auto links = config::check_links(*loaded, totem->token_timeout_ms); !links) return links.error();
  if (loaded->links.size() > 1) {
    if (auto planned = plan_links(*loaded, *self, *totem, plan); !planned) return planned.error();
  } else {
    if (loaded->link0().transport == config::TransportKind::kRdma) {
      if (auto planned = plan_rdma(*loaded, *self, plan); !planned) return planned.error();
    }
    if (!plan.rdma) {
      auto udp_config = config::udp_config_for(*loaded, *self);
      if (!udp_config) return udp_config.error();
      plan.udp = std::move(udp_config).value();
    }
  }
  auto key = config::load_cluster_key(*loaded);
  if (!key) return key.error();
  if (const std::string warning = config::crypto_off_warning(*loaded); !warning.empty())
    qb_log(LOG_WARNING, "%s", warning.c_str());
  plan.seal_with(*key, 0);
  plan.size_pools(*totem);
  const transport::BackendParams& sent_with = plan.link_set ? plan.link_set->params
                                              : plan.rdma   ? plan.rdma->params
                                                            : plan.udp.params;
  if (auto fits = check_totem(options, *loaded, *totem, sent_with); !fits) return fits.error();
  std::string ipc_name = !options.ipc_name.empty() ? options.ipc_name : loaded->ipc.name;
  return DaemonSetup{std::move(loaded).value(), *totem, *self, std::move(ipc_name), options.state_dir, *key};
}

void log_transport(const transport::Backend& backend, const membership::TotemConfig& totem) {
  const transport::BackendParams& params = backend.params();
  qb_log(LOG_NOTICE, "transport %s on %s, mtu %u: %u send and %u receive buffers in %.1f MiB, send_queue_max %u",
         std::string(backend.name()).c_str(), backend.local_address().c_str(), backend.mtu(), params.send_buffers,
         params.recv_buffers, static_cast<double>(backend.buffer_region().size()) / (1 << 20),
         totem.send_queue_for(backend.mtu()));
}

// An RDMA link of several, or null with the reason where it does not open (no RDMA device on
// this host, a failed multicast join) and totem.fallback lets the node run on its other links.
// It must carry netmtu: every node sends packets of that size on whichever link is up, and a
// node without RDMA cannot know what the others' ports carry.
Result<std::unique_ptr<transport::Backend>> open_rdma_link(const config::DaemonConfig& config,
                                                           const config::LinkConfig& link,
                                                           const transport::RdmaConfig& rdma, std::string& missing) {
  auto device = transport::find_active_rdma_port();
  auto opened =
      device ? transport::RdmaBackend::open(rdma) : Result<std::unique_ptr<transport::RdmaBackend>>(device.error());
  if (opened) {
    if ((*opened)->params().mtu < rdma.params.mtu)
      return Error::make(
          "{}: link {} (rdma on {}) carries packets of {} bytes, less than totem.netmtu {}: set netmtu to "
          "at most {} so that every link carries every packet",
          config.path, link.number, *device, (*opened)->params().mtu, rdma.params.mtu, (*opened)->params().mtu);
    qb_log(LOG_NOTICE, "link %u: rdma on %s", link.number, device->c_str());
    return std::unique_ptr<transport::Backend>(std::move(*opened));
  }
  if (!config.rdma_fallback)
    return Error::make("{}: link {} (rdma): {}; not starting (totem.fallback is no)", config.path, link.number,
                       opened.error().message());
  missing = opened.error().message();
  qb_log(LOG_WARNING, "%s: link %u (rdma): %s; this node runs on its other links", config.path.c_str(), link.number,
         missing.c_str());
  return std::unique_ptr<transport::Backend>();
}

// Several links: each one's backend, then the LinkSet over them.
Result<std::unique_ptr<transport::Backend>> open_links(const config::DaemonConfig& config, const TransportPlan& plan) {
  transport::LinkSetConfig set = *plan.link_set;
  std::vector<std::unique_ptr<transport::Backend>> links;
  for (std::size_t i = 0; i < plan.links.size(); ++i) {
    if (const auto* udp_link = std::get_if<transport::UdpConfig>(&plan.links[i])) {
      auto udp = transport::UdpBackend::open(*udp_link);
      if (!udp) return udp.error();
      links.push_back(std::move(*udp));
      continue;
    }
    auto rdma =
        open_rdma_link(config, config.links[i], std::get<transport::RdmaConfig>(plan.links[i]), set.links[i].missing);
    if (!rdma) return rdma.error();
    links.push_back(std::move(*rdma));
  }
  auto opened = transport::LinkSet::open(set, std::move(links));
  if (!opened) return opened.error();
  return std::unique_ptr<transport::Backend>(std::move(*opened));
}

// The RDMA backend when planned, else (or when it fails to open and totem.fallback allows) UDP.
// The protocol is checked again against what opened: RDMA lowers the mtu to its port's.
Result<std::unique_ptr<transport::Backend>> open_backend(const DaemonOptions& options, DaemonSetup& setup,
                                                         const TransportPlan& plan) {
  std::unique_ptr<transport::Backend> backend;
  if (plan.link_set) {
    auto set = open_links(setup.config, plan);
    if (!set) return set.error();
    backend = std::move(*set);
  }
  if (plan.rdma) {
    auto rdma = transport::RdmaBackend::open(*plan.rdma);
    if (rdma) {
      backend = std::move(*rdma);
    } else {
      auto choice = config::choose_transport(setup.config, rdma.error().message());
      if (!choice) return choice.error();
      qb_log(LOG_WARNING, "%s", choice->warning.c_str());
      setup.config.link0().transport = choice->kind;
    }
  }
  if (!backend) {
    auto udp = transport::UdpBackend::open(plan.udp);
    if (!udp) return udp.error();
    backend = std::move(*udp);
  }
  if (auto fits = check_totem(options, setup.config, setup.totem, backend->params()); !fits) return fits.error();
  log_transport(*backend, setup.totem);
  return backend;
}

// The RDMA link failed for good at run time. With totem.fallback (and a plan that had UDP
// multicast ready) this process goes on over it: the same group and port as a node that started
// without RDMA, a new seal epoch (its packet count starts again), the one warning line. Null
// where it may not fall back.
Result<std::unique_ptr<transport::Backend>> open_run_time_fallback(const DaemonOptions& options,
                                                                   const config::DaemonConfig& config,
                                                                   const membership::TotemConfig& totem,
                                                                   TransportPlan& plan, const std::string& state_dir,
                                                                   std::string_view reason) {
  if (!plan.rdma || !config.rdma_fallback) return std::unique_ptr<transport::Backend>();
  auto choice = config::choose_transport(config, reason);
  if (!choice) return choice.error();
  if (plan.sealed()) {
    auto epoch = next_seal_epoch(state_dir, wall_clock_ns());
    if (!epoch) return epoch.error();
    plan.seal_with(plan.udp.params.key, *epoch);
  }
  auto udp = transport::UdpBackend::open(plan.udp);
  if (!udp) return udp.error();
  if (auto fits = check_totem(options, config, totem, (*udp)->params()); !fits) return fits.error();
  qb_log(LOG_WARNING, "%s", choice->warning.c_str());
  log_transport(**udp, totem);
  plan.rdma.reset();  // once: UDP has nothing to fall back to
  return std::unique_ptr<transport::Backend>(std::move(*udp));
}

// One descriptor per IPC client, and a few of our own. The soft limit goes up to the hard one (a
// unit's default soft limit is 1024): a local process can open connections that libqb holds
// until they authenticate, and each one costs a descriptor whether it ever does or not.
void raise_open_files_limit(std::uint32_t max_clients) {
  const rlim_t needed = rlim_t{max_clients} + 64;
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return;
  files.rlim_cur = files.rlim_max;
  (void)setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < needed)
    qb_log(LOG_WARNING,
           "ipc.max_clients %u needs %llu open files, the limit is %llu (LimitNOFILE): clients past "
           "that are refused",
           max_clients, static_cast<unsigned long long>(needed), static_cast<unsigned long long>(files.rlim_cur));
}

Result<void> make_state_dir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Error::sys(errno, "state directory '{}'", dir);
  return {};
}

int run(const DaemonOptions& options) {
  TransportPlan plan;
  auto setup = prepare(options, plan);
  if (!setup) {
    qb_log(LOG_ERR, "%s", setup.error().message().c_str());
    return kExitFailed;
  }
  if (options.check_only) {
    std::string where = plan.rdma ? fmt::format("{} on {}", plan.rdma->bind.host_string(), plan.rdma_device)
                                  : plan.udp.bind.to_string();
    if (plan.link_set) where = links_description(plan.links);
    fmt::print("{}: ok: cluster {}, {} nodes, transport {}, this node {} ({}), ipc name {}, crypto {}\n",
               options.config_path, setup->config.cluster_name, setup->config.nodes.size(),
               config::describe(setup->config.link0().transport), setup->self.nodeid, where, setup->ipc_name,
               setup->config.crypto ? fmt::format("on (key {})", setup->config.keyfile) : std::string("off"));
    return kExitOk;
  }
  if (auto made = make_state_dir(setup->state_dir); !made) {
    qb_log(LOG_ERR, "%s", made.error().message().c_str());
    return kExitFailed;
  }
  logging_flight_data_file(setup->state_dir + "/fdata");
  if (plan.sealed()) {
    auto epoch = next_seal_epoch(setup->state_dir, wall_clock_ns());
    if (!epoch) {
      qb_log(LOG_ERR, "%s", epoch.error().message().c_str());
      return kExitFailed;
    }
    plan.seal_with(plan.udp.params.key, *epoch);
  }
  if (auto applied = logging_apply(setup->config.logging, options.foreground); !applied) {
    qb_log(LOG_ERR, "%s", applied.error().message().c_str());
    return kExitFailed;
  }
  if (!options.foreground && ::daemon(0, 0) != 0) {
    qb_log(LOG_ERR, "cannot daemonize: %s", strerror(errno));
    return kExitFailed;
  }
  if (plan.sealed() && !options.foreground) {  // daemon()'s fork left the key's memory lock behind
    if (auto locked = plan.udp.params.key->lock_in_memory(); !locked)
      qb_log(LOG_WARNING, "%s: the key may be swapped out", locked.error().message().c_str());
  }
  raise_open_files_limit(setup->config.ipc.max_clients);
  auto loop = EventLoop::create();
  if (!loop) {
    qb_log(LOG_ERR, "%s", loop.error().message().c_str());
    return kExitFailed;
  }
  auto backend = open_backend(options, *setup, plan);
  if (!backend) {
    qb_log(LOG_ERR, "node %u: %s", setup->self.nodeid, backend.error().message().c_str());
    return kExitFailed;
  }
  const bool foreground = options.foreground;
  const membership::NodeId self = setup->self.nodeid;
  const std::string ipc_name = setup->ipc_name;
  const config::DaemonConfig config = setup->config;
  const membership::TotemConfig totem = setup->totem;
  const std::string state_dir = setup->state_dir;
  auto service = Daemon::start(**loop, std::move(setup).value(), std::move(backend).value());
  if (!service) {
    qb_log(LOG_ERR, "node %u: %s", self, service.error().message().c_str());
    return kExitFailed;
  }
  (*service)->on_first_ring([] { sd_notify(0, "READY=1"); });
  int exit_code = kExitOk;
  auto stop = [&] {
    qb_log(LOG_NOTICE, "stopping");
    sd_notify(0, "STOPPING=1");
    (*service)->stop();
    (*loop)->stop();
  };
  // On UDP in this process where totem.fallback allows (clients stay connected; the ring
  // re-forms over it); else exit, not linger: the others re-form without this node, and a restart
  // (systemd's Restart=on-failure) probes the device again.
  (*service)->on_link_failure([&](std::string_view reason) {
    qb_log(LOG_CRIT, "node %u: the link failed: %.*s", self, static_cast<int>(reason.size()), reason.data());
    auto fallback = open_run_time_fallback(options, config, totem, plan, state_dir, reason);
    if (fallback && *fallback) {
      auto switched = (*service)->switch_transport(std::move(*fallback), config::TransportKind::kUdp);
      if (switched) return;
      fallback = switched.error();
    }
    qb_log(LOG_CRIT, "node %u: exiting%s%s", self,
           fallback ? "" : ": no fallback to udp: ", fallback ? "" : fallback.error().message().c_str());
    exit_code = kExitFailed;
    stop();
  });
  (*service)->on_exit_request([&](int code) {
    exit_code = code;
    stop();
  });
  (*service)->on_logging(
      [foreground](const config::LoggingConfig& logging) { return logging_apply(logging, foreground); });
  // The log file reopened at once, for logrotate; and as rtotemctl reload (which logs what it
  // did), the file's changes that may apply at run time, once it is loaded.
  auto reload = [&] {
    (*service)->reopen_logging();
    const auto logged = [](const ReloadOutcome& outcome) {
      qb_log(outcome.error != 0 ? LOG_WARNING : LOG_NOTICE, "SIGHUP: %s; log file reopened", outcome.message.c_str());
    };
    if (const auto refused = (*service)->reload(logged)) logged(*refused);
  };
  for (int sig : {SIGTERM, SIGINT})
    if (auto handled = (*loop)->on_signal(sig, stop); !handled)
      qb_log(LOG_ERR, "%s", handled.error().message().c_str());
  if (auto handled = (*loop)->on_signal(SIGHUP, reload); !handled)
    qb_log(LOG_ERR, "%s", handled.error().message().c_str());
  qb_log(LOG_NOTICE, "rtotemd %s: node %u, ipc name %s, forming the ring", RTOTEM_VERSION, self, ipc_name.c_str());
  (*loop)->run();
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const std::span<char* const> args(argv + (argc > 0 ? 1 : 0), argc > 0 ? static_cast<std::size_t>(argc - 1) : 0);
  auto options = parse_daemon_options(args);
  if (!options) {
    fmt::print(stderr, "rtotemd: {}\n{}", options.error().message(), daemon_usage());
    return kExitUsage;
  }
  if (options->help) {
    fmt::print("{}", daemon_usage());
    return kExitOk;
  }
  if (options->version) {
    fmt::print("rtotemd {}\n", RTOTEM_VERSION);
    return kExitOk;
  }
  std::signal(SIGPIPE, SIG_IGN);
  // Large blocks always from mmap: glibc would otherwise raise this threshold after the first
  // such block is freed and serve the next ones from its heap, zeroing them there. libqb callocs
  // a receive buffer of the IPC size for every connection; from mmap it stays untouched (not
  // resident) until requests fill it, and a freed queue's memory goes back to the system.
  (void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  logging_init();
  const int rc = run(*options);
  logging_fini();
  return rc;
}
