// rtotemctl's node control commands, in corosync-cfgtool's manner: addresses, reload, shutdown, kill.
#include <cerrno>
#include <vector>

#include "base/cli_args.hpp"
#include "src/client/rtotemctl_common.hpp"
#include "src/ipc/json_quote.hpp"

namespace rtotem::ctl {
namespace {

// -EPERM is the one refusal every command here shares.
int refused(std::string_view what, int rc) {
  if (rc != -EPERM) return fail(std::string(what), rc);
  fmt::print(stderr, "rtotemctl: {}: only root or rtotemd's user may\n", what);
  return kExitFailed;
}

int addresses(const Options& o, std::uint32_t node) {
  const Handle h = connect(o);
  if (!h) return kExitFailed;
  rtotem_node_address out[8];
  std::size_t count = 0;
  if (const int rc = rtotem_node_addresses(h.get(), node, out, 8, &count); rc < 0) {
    if (rc != -ENOENT) return fail("addresses", rc);
    fmt::print(stderr, "rtotemctl: addresses: node {} is not in the nodelist\n", node);
    return kExitFailed;
  }
  std::string list;
  for (std::size_t i = 0; i < count; ++i)
    list += o.json ? fmt::format("{}{}", i == 0 ? "" : ", ", ipc::json_quoted(out[i].address))
                   : fmt::format("{}\n", out[i].address);
  fmt::print("{}", o.json ? fmt::format("{{\"addresses\": [{}]}}\n", list) : list);
  return kExitOk;
}

int reload(const Options& o) {
  const Handle h = connect(o);
  if (!h) return kExitFailed;
  std::vector<char> message(std::size_t{1} << 20);  // a line per node
  const int rc = rtotem_reload(h.get(), message.data(), message.size());
  if (rc < 0 && message[0] == '\0') return refused("reload", rc);
  fmt::print(rc < 0 ? stderr : stdout, "{}{}\n", rc < 0 ? "rtotemctl: reload: " : "", message.data());
  return rc < 0 ? kExitFailed : kExitOk;
}

int shutdown(const Options& o) {
  const Handle h = connect(o);
  if (!h) return kExitFailed;
  const int rc = rtotem_shutdown(h.get(), o.force ? RTOTEM_SHUTDOWN_REGARDLESS : RTOTEM_SHUTDOWN_REQUEST);
  if (rc == -EBUSY) {
    fmt::print(stderr,
               "rtotemctl: shutdown: refused: a client vetoed or did not answer in time (see the daemon's log)\n");
    return kExitFailed;
  }
  if (rc < 0) return refused("shutdown", rc);
  fmt::print("rtotemd is shutting down\n");
  return kExitOk;
}

int kill(const Options& o, std::uint32_t node, const std::string& reason) {
  const Handle h = connect(o);
  if (!h) return kExitFailed;
  if (const int rc = rtotem_kill_node(h.get(), node, reason.c_str()); rc < 0) {
    if (rc != -ENOENT) return refused("kill", rc);
    fmt::print(stderr, "rtotemctl: kill: node {} is not a member of the ring\n", node);
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

int control_command(const Options& o) {
  const auto& w = o.words;
  const Result<std::uint32_t> node =
      w.size() >= 2 ? parse_number(w[0], w[1], std::uint32_t{0}, kNumberMax) : Result<std::uint32_t>(0u);
  if (w[0] == "addresses" && w.size() <= 2 && node) return addresses(o, *node);
  if (w[0] == "reload" && w.size() == 1) return reload(o);
  if (w[0] == "shutdown" && w.size() == 1) return shutdown(o);
  if (w[0] == "kill" && (w.size() == 2 || w.size() == 3) && node) return kill(o, *node, w.size() == 3 ? w[2] : "");
  return kExitUsage;
}

}  // namespace rtotem::ctl
