// rtotemd: one per node. Reads the config, finds which node it is, opens the transport, forms
// the ring with the others and serves local clients until SIGTERM/SIGINT; SIGHUP re-reads the
// logging settings.
#include <fmt/format.h>
#include <qb/qblog.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "src/common/seal_epoch.hpp"
#include "src/daemon/daemon.hpp"
#include "src/daemon/daemon_options.hpp"
#include "src/daemon/logging.hpp"
#include "transport/rdma/rdma_device_probe.hpp"
#include "transport/udp/udp_backend.hpp"
#include "version.h"

namespace {

using namespace rtotem;
using namespace rtotem::daemon;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

// Everything start-up decides before it opens anything: the config, this node, the protocol.
Result<DaemonSetup> prepare(const DaemonOptions& options, transport::UdpConfig& udp) {
  auto loaded = config::load_config(options.config_path);
  if (!loaded) return loaded.error();
  for (const std::string& warning : loaded->warnings) qb_log(LOG_WARNING, "%s", warning.c_str());
  if (loaded->transport == config::TransportKind::kRdma) {
    auto device = transport::find_active_rdma_port();
    auto choice = config::choose_transport(*loaded, device ? std::string_view{} : device.error().message());
    if (!choice) return choice.error();
    if (choice->kind == config::TransportKind::kRdma)
      return Error::make("{}: transport rdma: {} is usable, but this build has no RDMA backend yet; use udp or udpu",
                         options.config_path, *device);
    qb_log(LOG_WARNING, "%s", choice->warning.c_str());
    loaded->transport = choice->kind;
  }
  auto addresses = config::host_addresses();
  if (!addresses) return addresses.error();
  auto self = config::local_node(*loaded, options.nodeid, *addresses);
  if (!self) return self.error();
  auto udp_config = config::udp_config_for(*loaded, *self);
  if (!udp_config) return udp_config.error();
  auto key = config::load_cluster_key(*loaded);
  if (!key) return key.error();
  if (const std::string warning = config::crypto_off_warning(*loaded); !warning.empty())
    qb_log(LOG_WARNING, "%s", warning.c_str());
  udp_config->params.key = std::move(key).value();
  auto totem = loaded->totem.resolved();
  if (!totem) return Error::make("{}: totem: {}", options.config_path, totem.error().message());
  if (auto fits = totem->check(udp_config->params); !fits)
    return Error::make("{}: totem: {}", options.config_path, fits.error().message());
  udp = std::move(udp_config).value();
  std::string ipc_name = !options.ipc_name.empty() ? options.ipc_name : loaded->ipc.name;
  return DaemonSetup{std::move(loaded).value(), *totem, *self, std::move(ipc_name), options.state_dir};
}

Result<void> make_state_dir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Error::sys(errno, "state directory '{}'", dir);
  return {};
}

int run(const DaemonOptions& options) {
  transport::UdpConfig udp;
  auto setup = prepare(options, udp);
  if (!setup) {
    qb_log(LOG_ERR, "%s", setup.error().message().c_str());
    return kExitFailed;
  }
  if (options.check_only) {
    fmt::print("{}: ok: cluster {}, {} nodes, transport {}, this node {} ({}), ipc name {}, crypto {}\n",
               options.config_path, setup->config.cluster_name, setup->config.nodes.size(),
               config::describe(setup->config.transport), setup->self.nodeid, udp.bind.to_string(), setup->ipc_name,
               setup->config.crypto ? fmt::format("on (key {})", setup->config.keyfile) : std::string("off"));
    return kExitOk;
  }
  if (auto made = make_state_dir(setup->state_dir); !made) {
    qb_log(LOG_ERR, "%s", made.error().message().c_str());
    return kExitFailed;
  }
  if (udp.params.key) {
    auto epoch = next_seal_epoch(setup->state_dir, wall_clock_ns());
    if (!epoch) {
      qb_log(LOG_ERR, "%s", epoch.error().message().c_str());
      return kExitFailed;
    }
    udp.params.epoch = *epoch;
  }
  if (auto applied = logging_apply(setup->config.logging, options.foreground); !applied) {
    qb_log(LOG_ERR, "%s", applied.error().message().c_str());
    return kExitFailed;
  }
  if (!options.foreground && ::daemon(0, 0) != 0) {
    qb_log(LOG_ERR, "cannot daemonize: %s", strerror(errno));
    return kExitFailed;
  }
  auto loop = EventLoop::create();
  if (!loop) {
    qb_log(LOG_ERR, "%s", loop.error().message().c_str());
    return kExitFailed;
  }
  auto backend = transport::UdpBackend::open(udp);
  if (!backend) {
    qb_log(LOG_ERR, "node %u: %s", setup->self.nodeid, backend.error().message().c_str());
    return kExitFailed;
  }
  const std::string config_path = options.config_path;
  const bool foreground = options.foreground;
  const membership::NodeId self = setup->self.nodeid;
  const std::string ipc_name = setup->ipc_name;
  auto service = Daemon::start(**loop, std::move(setup).value(), std::move(backend).value());
  if (!service) {
    qb_log(LOG_ERR, "node %u: %s", self, service.error().message().c_str());
    return kExitFailed;
  }
  (*service)->on_first_ring([] { sd_notify(0, "READY=1"); });
  auto stop = [&] {
    qb_log(LOG_NOTICE, "stopping");
    sd_notify(0, "STOPPING=1");
    (*service)->stop();
    (*loop)->stop();
  };
  auto reload = [&] {
    auto reread = config::load_config(config_path);
    auto applied = reread ? logging_apply(reread->logging, foreground) : Result<void>(reread.error());
    if (!applied) qb_log(LOG_ERR, "SIGHUP: logging settings kept: %s", applied.error().message().c_str());
    else qb_log(LOG_NOTICE, "SIGHUP: logging settings re-read from %s", config_path.c_str());
  };
  for (int sig : {SIGTERM, SIGINT})
    if (auto handled = (*loop)->on_signal(sig, stop); !handled) qb_log(LOG_ERR, "%s", handled.error().message().c_str());
  if (auto handled = (*loop)->on_signal(SIGHUP, reload); !handled) qb_log(LOG_ERR, "%s", handled.error().message().c_str());
  qb_log(LOG_NOTICE, "rtotemd %s: node %u, ipc name %s, forming the ring", RTOTEM_VERSION, self, ipc_name.c_str());
  (*loop)->run();
  return kExitOk;
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
  logging_init();
  const int rc = run(*options);
  logging_fini();
  return rc;
}
