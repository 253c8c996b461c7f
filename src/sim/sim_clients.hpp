// The processes of one simulated node that use process groups through the real librtotem, over
// in-memory connections to the node's stack (sim_connection.hpp): they connect, join, leave and
// join again at once (retrying -EAGAIN without dispatching, as a simple client does), multicast
// small messages (within the credit window: the stack's staging) and messages of several pieces
// (of a few sizes, so that two messages of one size follow each other), dispatch, fall behind
// for a while, and disconnect. What their deliver callbacks get is judged by the ClientChecker.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/rng.hpp"
#include "rtotem/rtotem.h"
#include "src/sim/client_checker.hpp"
#include "src/sim/sim_connection.hpp"
#include "src/stack/node_stack.hpp"

namespace rtotem::sim {

// The event queue of one connection in the simulator (libqb's event ring in rtotemd).
inline constexpr std::size_t kClientChannelBytes = 512 << 10;

// What every node's clients share, owned by the cluster: the checker, ids unique in the run, and
// what they tallied.
struct ClientWorld {
  ClientChecker checker;
  std::uint32_t next_pid = 1000;   // a new connection is a new process
  std::uint64_t next_counter = 0;  // of messages, across every node
  std::uint64_t next_handle = 1;
  std::uint64_t refusals = 0;  // calls refused with -EAGAIN
  std::uint64_t cut_off = 0;   // connections the stack cut off
};

class NodeClients {
 public:
  // `processes` of them (at least 1). `after_request` / `host_alive`: as SimConnection's, for
  // every connection of this node.
  NodeClients(NodeId node, std::size_t processes, stack::NodeStack& stack, ClientWorld& world,
              std::function<void()> after_request, std::function<bool()> host_alive);
  ~NodeClients();
  NodeClients(const NodeClients&) = delete;
  NodeClients& operator=(const NodeClients&) = delete;

  // One turn of the node's processes at virtual time `now`: those not behind dispatch, and one
  // drawn process does a drawn thing.
  void step(Time now, Rng& rng);
  // At the end of the run: every process dispatches what waits for it.
  void finish(Time now);
  // The node's process died: the connections fail at once, and go without a word to the stack.
  void host_gone() noexcept;

 private:
  struct Disconnect {
    void operator()(rtotem_t* h) const noexcept { rtotem_disconnect(h); }
  };
  struct Process {
    NodeClients* owner = nullptr;
    std::unique_ptr<rtotem_t, Disconnect> handle;
    SimConnection* connection = nullptr;  // owned by `handle`
    std::uint32_t pid = 0;
    std::uint64_t id = 0;  // the ClientChecker's handle id
    std::set<std::string> joined;
    std::optional<std::string> joining;  // a join refused with -EAGAIN, asked again before anything else
    Time behind_until = 0;               // dispatches nothing before this
  };
  void connect(Process& p);
  void act(Process& p, Time now, Rng& rng);
  void multicast(Process& p, Rng& rng);
  void join(Process& p, const std::string& group);
  void dispatch(Process& p);
  static void on_deliver(rtotem_t* h, const rtotem_message* m, void* ctx);

  NodeId node_;
  stack::NodeStack& stack_;
  ClientWorld& world_;
  std::function<void()> after_request_;
  std::function<bool()> host_alive_;
  std::vector<Process> processes_;  // sized once: callbacks hold their addresses
  std::vector<std::byte> scratch_;
  std::size_t data_max_ = 0;
  Time now_ = 0;
};

}  // namespace rtotem::sim
