// rtotemctl: look at and use the local rtotemd. status, members [GROUP], stats: the daemon's JSON
// (as is with --json, else flattened to "key: value" lines); quorum (corosync-quorumtool's text, or
// JSON); send GROUP TEXT; listen GROUP. The key store's and node control's commands are in
// rtotemctl_keys.cpp and rtotemctl_control.cpp.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <csignal>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "base/cli_args.hpp"
#include "rtotem/rtotem.hpp"
#include "src/client/ipc_connection.hpp"
#include "src/client/json_lines.hpp"
#include "src/client/quorum_text.hpp"
#include "src/client/rtotemctl_common.hpp"
#include "src/ipc/json_quote.hpp"

namespace {

using namespace rtotem;

using namespace rtotem::ctl;

const char* usage() {
  return "usage: rtotemctl [--ipc-name NAME] [--json] COMMAND\n"
         "  status              ring id, state, members, transport, link counters\n"
         "  members [GROUP]     the processes in every group (or GROUP): node id and pid\n"
         "  stats               protocol, link and IPC counters\n"
         "  quorum              votequorum's state, as corosync-quorumtool -s shows it; exit 0 if\n"
         "                      quorate, 2 if not, 1 on error (no quorum configured, no daemon)\n"
         "  quorum votes NODE N sets node NODE's votes to N (votequorum_setvotes), cluster-wide\n"
         "  quorum expected N   sets the expected votes to N (votequorum_setexpected), cluster-wide\n"
         "  get KEY             a key store key, as corosync-cmapctl prints it: KEY (TYPE) = VALUE\n"
         "  set KEY TYPE VALUE  TYPE: i8 u8 i16 u16 i32 u32 i64 u64 flt dbl str bin (bin in hex)\n"
         "  delete KEY\n"
         "  list [PREFIX]       every key (under PREFIX)\n"
         "  track [PREFIX]      prints each add, change and delete under PREFIX until interrupted\n"
         "  addresses [NODE]    a node's addresses (this node's by default)\n"
         "  reload              every node re-reads its config file (logging, uidgid, votes, totem\n"
         "                      timing, the key, nodes added or removed) and says what changed, or\n"
         "                      which keys need a restart\n"
         "  shutdown [--force]  stops the local daemon unless a client vetoes within 5 s (--force:\n"
         "                      whatever they answer); exit 0 if it stops, 1 if not\n"
         "  kill NODE [REASON]  node NODE leaves the ring and its daemon exits, logging REASON\n"
         "  send GROUP TEXT     joins GROUP, multicasts TEXT (agreed order), leaves\n"
         "  listen GROUP        joins GROUP and prints, until interrupted, one line per message\n"
         "                      (its place in the ring's order, sender node:pid, text) and per\n"
         "                      membership change\n"
         "  --ipc-name NAME     the daemon's IPC name (default: $RTOTEM_IPC, else \"rtotem\")\n"
         "  --json              machine-readable output (status, members, stats, quorum, get, list,\n"
         "                      track, addresses, listen)\n";
}

// The daemon's JSON answer to `id` into `json`: kExitOk, or kExitFailed (said on stderr).
int fetch_json(const Options& o, ipc::RequestId id, std::string_view group, std::string& json) {
  auto connection = client::IpcConnection::open(o.ipc_name);
  if (!connection)
    return fail(fmt::format("connecting to rtotemd (ipc name '{}')", o.ipc_name), -connection.error().errnum());
  ipc::BodyWriter body;
  if (id == ipc::RequestId::kMembers) body.string(group);
  client::Reply reply;
  int rc = (*connection)->request(id, body.data(), reply);
  if (rc == 0) rc = reply.error;
  if (rc < 0) return fail("request", rc);
  WireReader in(reply.body);
  const auto text = ipc::read_string(in, reply.body.size());
  if (!text) return fail("reply", -EPROTO);
  json = std::string(*text);
  return kExitOk;
}

int query(const Options& o, ipc::RequestId id, std::string_view group) {
  std::string json;
  if (const int rc = fetch_json(o, id, group, json); rc != kExitOk) return rc;
  fmt::print("{}", o.json ? json + "\n" : client::json_lines(json));
  return kExitOk;
}

int quorum_set(const Options& o, std::uint8_t what, const std::string& node_text, const std::string& value_text) {
  const auto node = parse_number("quorum", node_text, std::uint32_t{0}, kNumberMax);
  const auto value = parse_number("quorum", value_text, std::uint32_t{0}, kNumberMax);
  if (!node || !value) {
    fmt::print(stderr, "rtotemctl: {}\n", (node ? value : node).error().message());
    return kExitUsage;
  }
  auto connection = client::IpcConnection::open(o.ipc_name);
  if (!connection)
    return fail(fmt::format("connecting to rtotemd (ipc name '{}')", o.ipc_name), -connection.error().errnum());
  ipc::BodyWriter body;
  body.u8(what);
  body.u32(*node);
  body.u32(*value);
  client::Reply reply;
  int rc = (*connection)->request(ipc::RequestId::kQuorumSet, body.data(), reply);
  if (rc == 0) rc = reply.error;
  // The library's texts speak of groups: these answers get their own.
  const char* refusal = rc == -ENOTSUP  ? "not configured (no quorum { provider: corosync_votequorum })"
                        : rc == -ENOENT ? "no such node in the nodelist or the ring"
                        : rc == -EINVAL ? "refused by votequorum's rule (expected votes at least the votes present; "
                                          "a quorate cluster stays quorate)"
                        : rc == -EAGAIN ? "the ring is not in sync yet (its members' votes are not all in): try again"
                        : rc == -EPERM  ? "only root or rtotemd's user may change votes or expected votes"
                                        : nullptr;
  if (refusal != nullptr) {
    fmt::print(stderr, "rtotemctl: quorum: {}\n", refusal);
    return kExitFailed;
  }
  if (rc < 0) return fail("quorum", rc);
  return kExitOk;
}

// corosync-quorumtool's exit codes: 0 quorate, 2 not quorate, 1 on any error.
int quorum(const Options& o) {
  std::string json;
  if (const int rc = fetch_json(o, ipc::RequestId::kQuorum, "", json); rc != kExitOk) return rc;
  const std::optional<client::QuorumText> text = client::quorum_text(json);
  if (!text) return fail("reply", -EPROTO);
  fmt::print("{}", o.json ? json + "\n" : text->text);
  if (!text->configured) return kExitFailed;
  return text->quorate ? kExitOk : kExitUsage;
}

std::string printable(const void* data, std::size_t len) {
  std::string out;
  for (std::size_t i = 0; i < len; ++i) {
    const auto c = static_cast<unsigned char>(static_cast<const char*>(data)[i]);
    out += c >= 0x20 && c < 0x7f && c != '\\' ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  return out;
}

std::string member_list(const rtotem_member* m, std::size_t n, bool json, const rtotem_reason* why = nullptr) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (!out.empty()) out += json ? ", " : " ";
    if (json) {
      out += fmt::format("{{\"nodeid\": {}, \"pid\": {}{}}}", m[i].nodeid, m[i].pid,
                         why ? fmt::format(", \"reason\": \"{}\"", reason_name(why[i])) : "");
    } else {
      out += fmt::format("{}:{}{}", m[i].nodeid, m[i].pid, why ? fmt::format("({})", reason_name(why[i])) : "");
    }
  }
  return json ? "[" + out + "]" : out;
}

struct ListenState {
  bool json = false;
  std::uint64_t delivered = 0;
};

void on_deliver(rtotem_t*, const rtotem_message* m, void* ctx) {
  auto& s = *static_cast<ListenState*>(ctx);
  ++s.delivered;
  if (s.json) {
    fmt::print(
        "{{\"event\": \"message\", \"index\": {}, \"nodeid\": {}, \"pid\": {}, \"order\": \"{}\", \"text\": {}}}\n",
        s.delivered, m->nodeid, m->pid, m->order == RTOTEM_SAFE ? "safe" : "agreed",
        rtotem::ipc::json_quoted(std::string_view(static_cast<const char*>(m->data), m->len)));
  } else {
    fmt::print("{} {}:{} {}\n", s.delivered, m->nodeid, m->pid, printable(m->data, m->len));
  }
  std::fflush(stdout);
}

void on_group_change(rtotem_t*, const rtotem_group_change* c, void* ctx) {
  const bool json = static_cast<ListenState*>(ctx)->json;
  if (json) {
    fmt::print("{{\"event\": \"group\", \"group\": {}, \"members\": {}, \"joined\": {}, \"left\": {}}}\n",
               rtotem::ipc::json_quoted(c->group), member_list(c->members, c->n_members, true),
               member_list(c->joined, c->n_joined, true, c->joined_reason),
               member_list(c->left, c->n_left, true, c->left_reason));
  } else {
    fmt::print("group {}: members [{}] joined [{}] left [{}]\n", c->group, member_list(c->members, c->n_members, false),
               member_list(c->joined, c->n_joined, false, c->joined_reason),
               member_list(c->left, c->n_left, false, c->left_reason));
  }
  std::fflush(stdout);
}

int listen(const Options& o, const std::string& group) {
  ListenState state{o.json};
  const rtotem_callbacks cb{on_deliver, on_group_change, nullptr};
  const Handle h = connect(o, &cb, &state);
  if (!h) return kExitFailed;
  if (const int rc = rtotem_join(h.get(), group.c_str()); rc < 0) return fail(fmt::format("joining '{}'", group), rc);
  return dispatch_until_interrupted(h.get());
}

int send(const Options& o, const std::string& group, const std::string& text) {
  const Handle owned = connect(o);
  if (!owned) return kExitFailed;
  rtotem_t* h = owned.get();
  if (const int rc = rtotem_join(h, group.c_str()); rc < 0) return fail(fmt::format("joining '{}'", group), rc);
  int rc = -EAGAIN;
  for (int attempt = 0; attempt < 500 && rc == -EAGAIN; ++attempt) {                    // back-pressure: up to ~5 s
    rc = rtotem_mcast_sync(h, group.c_str(), text.data(), text.size(), RTOTEM_AGREED);  // its outcome, now
    if (rc == -EAGAIN) usleep(10'000);
  }
  if (rc < 0) return fail("sending", rc);
  return kExitOk;  // disconnecting leaves the group, after the message in the ring's order
}

}  // namespace

namespace rtotem::ctl {

Handle connect(const Options& o, const rtotem_callbacks* cb, void* ctx) {
  rtotem_t* h = nullptr;
  if (const int rc = rtotem_connect(&h, o.ipc_name.empty() ? nullptr : o.ipc_name.c_str(), cb, ctx); rc < 0) {
    (void)fail(fmt::format("connecting to rtotemd (ipc name '{}')", o.ipc_name), rc);
    return Handle(nullptr, rtotem_disconnect);
  }
  return Handle(h, rtotem_disconnect);
}

namespace {
volatile std::sig_atomic_t g_stop = 0;
}  // namespace

int dispatch_until_interrupted(rtotem_t* h) {
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = 1; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const int fd = rtotem_fd(h);
  while (!g_stop) {
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(fd, &readable);
    timeval tv{0, 200'000};  // notices a signal soon
    if (select(fd + 1, &readable, nullptr, nullptr, &tv) < 0 && errno != EINTR) return fail("waiting", -errno);
    if (const int rc = rtotem_dispatch(h, RTOTEM_DISPATCH_ALL); rc < 0) return fail("receiving", rc);
  }
  return kExitOk;
}

}  // namespace rtotem::ctl

int main(int argc, char** argv) {
  // --json and --force anywhere (shutdown --force); "-5" or "-x" is a word, as `set KEY i32 -5` needs.
  constexpr CliOption kOptions[] = {{"-h"}, {"--help"}, {"--json"}, {"--force"}, {"--ipc-name", CliValue::kAny}};
  const std::span<char* const> args = cli_arguments(argc, argv);
  Options o;
  for (CliReader reader(args, kOptions, CliWords::kTaken); !reader.done();) {
    auto arg = reader.next();
    if (!arg) {
      fmt::print(stderr, "rtotemctl: {}\n{}", arg.error().message(), usage());
      return kExitUsage;
    }
    if (arg->is_word()) {
      o.words.emplace_back(arg->value);
    } else if (arg->name == "--json") {
      o.json = true;
    } else if (arg->name == "--force") {
      o.force = true;
    } else if (arg->name == "--ipc-name") {
      o.ipc_name = arg->value;
    } else {  // -h, --help
      fmt::print("{}", usage());
      return kExitOk;
    }
  }
  const auto& w = o.words;
  const std::string command = w.empty() ? "" : w[0];
  if (command == "status" && w.size() == 1) return query(o, ipc::RequestId::kStatus, "");
  if (command == "stats" && w.size() == 1) return query(o, ipc::RequestId::kStats, "");
  if (command == "members" && w.size() <= 2) return query(o, ipc::RequestId::kMembers, w.size() == 2 ? w[1] : "");
  if (command == "quorum" && w.size() == 1) return quorum(o);
  if (command == "quorum" && w.size() == 4 && w[1] == "votes") return quorum_set(o, ipc::kQuorumSetVotes, w[2], w[3]);
  if (command == "quorum" && w.size() == 3 && w[1] == "expected")
    return quorum_set(o, ipc::kQuorumSetExpected, "0", w[2]);
  if (command == "get" || command == "set" || command == "delete" || command == "list" || command == "track") {
    if (const int rc = key_command(o); rc != kExitUsage) return rc;
  } else if (command == "addresses" || command == "reload" || command == "shutdown" || command == "kill") {
    if (const int rc = control_command(o); rc != kExitUsage) return rc;
  }
  if (command == "send" && w.size() == 3) return send(o, w[1], w[2]);
  if (command == "listen" && w.size() == 2) return listen(o, w[1]);
  fmt::print(stderr, "rtotemctl: {}\n{}",
             command.empty() ? "no command" : fmt::format("bad command line for '{}'", command), usage());
  return kExitUsage;
}
