// mcast_group_filler: fills one RDMA multicast group on this node's device, so that the next join
// of it is refused for real. A device attaches at most max_mcast_qp_attach QPs to one group (rxe:
// 56; past it the kernel's attach fails with ENOMEM and librdmacm turns the join event into
// RDMA_CM_EVENT_MULTICAST_ERROR). This joins that many UD QPs through rdma_cm, each on its own
// cm_id bound to BIND, as the backend joins; checks that one more join is refused (else the group
// is not full and any test built on it would prove nothing); writes READY_FILE with the refusal;
// and holds the joins until SIGTERM or SIGINT, then leaves.
// Usage: mcast_group_filler BIND GROUP READY_FILE
#include <fmt/format.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <vector>

#include "transport/rdma/rdma_endpoint.hpp"

namespace {

using namespace rtotem;
using namespace rtotem::transport;

// One full member of the group: its own cm_id, a UD QP of one WR each way, the join.
struct GroupMember {
  RdmaEndpoint endpoint;
  ProtectionDomain pd;
  CompletionQueue cq;
  CmQueuePair qp;
  MulticastJoin join;

  static Result<GroupMember> join_group(const InetAddress& bind, const InetAddress& group) {
    auto endpoint = RdmaEndpoint::open(bind, group);
    if (!endpoint) return endpoint.error();
    GroupMember member{std::move(*endpoint), {}, {}, {}, {}};
    member.pd.reset(ibv_alloc_pd(member.endpoint.context()));
    if (!member.pd) return Error::sys(errno, "ibv_alloc_pd");
    member.cq.reset(ibv_create_cq(member.endpoint.context(), 2, nullptr, nullptr, 0));
    if (!member.cq) return Error::sys(errno, "ibv_create_cq");
    ibv_qp_init_attr attr{};
    attr.send_cq = member.cq.get();
    attr.recv_cq = member.cq.get();
    attr.qp_type = IBV_QPT_UD;
    attr.cap = ibv_qp_cap{1, 1, 1, 1, 0};
    if (rdma_create_qp(member.endpoint.id(), member.pd.get(), &attr) != 0) return Error::sys(errno, "rdma_create_qp");
    member.qp.reset(member.endpoint.id());
    rdma_ud_param ud{};
    auto joined = member.endpoint.join(group, ud);
    if (!joined) return joined.error();
    member.join = std::move(*joined);
    return member;
  }
};

Result<int> max_qps_per_group(ibv_context* context) {
  ibv_device_attr attr{};
  if (int rc = ibv_query_device(context, &attr); rc != 0) return Error::sys(rc, "ibv_query_device");
  return attr.max_mcast_qp_attach;
}

int fail(const std::string& why) {
  fmt::print(stderr, "mcast_group_filler: {}\n", why);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: mcast_group_filler BIND GROUP READY_FILE");
  auto bind = InetAddress::parse(argv[1], 0);
  auto group = InetAddress::parse(argv[2], 0);
  if (!bind || !group) return fail(fmt::format("{} or {} is not an address", argv[1], argv[2]));
  // Blocked before anything is joined: a stop that comes early still leaves the group cleanly.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  std::vector<GroupMember> members;
  auto first = GroupMember::join_group(*bind, *group);
  if (!first) return fail(fmt::format("join 1: {}", first.error().message()));
  members.push_back(std::move(*first));
  auto limit = max_qps_per_group(members.front().endpoint.context());
  if (!limit) return fail(limit.error().message());
  const std::string device = members.front().endpoint.device();
  while (static_cast<int>(members.size()) < *limit) {
    auto member = GroupMember::join_group(*bind, *group);
    if (!member) return fail(fmt::format("join {} of {}: {}", members.size() + 1, *limit, member.error().message()));
    members.push_back(std::move(*member));
  }
  auto extra = GroupMember::join_group(*bind, *group);
  if (extra)
    return fail(fmt::format("{} took join {} of {}: max_mcast_qp_attach {} is not enforced", device, *limit + 1,
                            group->host_string(), *limit));
  const std::string refusal = fmt::format("{} holds {} joins of {} (max_mcast_qp_attach); join {} refused: {}", device,
                                          *limit, group->host_string(), *limit + 1, extra.error().message());
  std::FILE* ready = std::fopen(argv[3], "w");
  if (!ready || std::fprintf(ready, "%s\n", refusal.c_str()) < 0 || std::fclose(ready) != 0)
    return fail(fmt::format("cannot write {}", argv[3]));
  fmt::print("mcast_group_filler: {}\n", refusal);
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop, &signal);
  return 0;
}
