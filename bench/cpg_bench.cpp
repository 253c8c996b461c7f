// cpg-bench: the group bench (group_bench_run.hpp) on Corosync's libcpg, so that bench/compare
// measures Corosync with exactly the loop, checks and report rtotem-bench uses. CPG's events are
// handed on in librtotem's structs; nothing is allocated per message.
#include <corosync/cpg.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "bench/group_bench_run.hpp"

namespace rtotem::bench {
namespace {

int errno_of(cs_error_t e) {
  switch (e) {
    case CS_OK: return 0;
    case CS_ERR_TRY_AGAIN: return -EAGAIN;
    case CS_ERR_LIBRARY: return -ECONNREFUSED;  // no corosync answers
    case CS_ERR_ACCESS: return -EACCES;
    case CS_ERR_NO_MEMORY: return -ENOMEM;
    case CS_ERR_INVALID_PARAM: return -EINVAL;
    case CS_ERR_TOO_BIG: return -EMSGSIZE;
    case CS_ERR_BAD_HANDLE: return -EBADF;
    case CS_ERR_EXIST: return -EEXIST;
    case CS_ERR_NOT_EXIST: return -ENOENT;
    default: return -EIO;
  }
}

rtotem_reason reason_of(std::uint32_t cpg_reason) {
  switch (cpg_reason) {
    case CPG_REASON_JOIN: return RTOTEM_JOIN;
    case CPG_REASON_NODEDOWN: return RTOTEM_NODEDOWN;
    case CPG_REASON_PROCDOWN: return RTOTEM_PROCDOWN;
    case CPG_REASON_NODEUP: return RTOTEM_NODEUP;
    default: return RTOTEM_LEAVE;
  }
}

class CpgGroupClient final : public GroupClient {
 public:
  ~CpgGroupClient() override {
    if (connected_) cpg_finalize(handle_);
  }

  int connect(Callbacks callbacks, const std::string& ipc_name) override {
    if (!ipc_name.empty()) return -EINVAL;  // corosync has one IPC name: cpg
    callbacks_ = std::move(callbacks);
    cpg_model_v1_data_t model{};
    model.model = CPG_MODEL_V1;
    model.cpg_deliver_fn = &CpgGroupClient::on_deliver;
    model.cpg_confchg_fn = &CpgGroupClient::on_confchg;
    model.cpg_totem_confchg_fn = &CpgGroupClient::on_totem_confchg;
    model.flags = CPG_MODEL_V1_DELIVER_INITIAL_TOTEM_CONF;
    const int rc =
        errno_of(cpg_model_initialize(&handle_, CPG_MODEL_V1, reinterpret_cast<cpg_model_data_t*>(&model), this));
    connected_ = rc == 0;
    return rc;
  }

  int join(const std::string& group) override {
    if (group.size() >= CPG_MAX_NAME_LENGTH) return -EINVAL;
    group_ = group;
    cpg_name name{};
    name.length = static_cast<std::uint32_t>(group.size());
    std::memcpy(name.value, group.data(), group.size());
    return errno_of(cpg_join(handle_, &name));
  }

  // cpg_mcast_joined sends to the joined group: `group` is the one join() named.
  int mcast(const std::string&, std::span<const std::byte> data, rtotem_order order) override {
    iovec iov{const_cast<std::byte*>(data.data()), data.size()};
    return errno_of(cpg_mcast_joined(handle_, order == RTOTEM_SAFE ? CPG_TYPE_SAFE : CPG_TYPE_AGREED, &iov, 1));
  }

  int fd() override {
    int fd = -1;
    const int rc = errno_of(cpg_fd_get(handle_, &fd));
    return rc < 0 ? rc : fd;
  }

  int dispatch_all() override { return errno_of(cpg_dispatch(handle_, CS_DISPATCH_ALL)); }

  int local_nodeid(std::uint32_t& out) override {
    unsigned int nodeid = 0;
    const int rc = errno_of(cpg_local_get(handle_, &nodeid));
    out = nodeid;
    return rc;
  }

  int max_message_size(std::size_t& out) override {
    std::uint32_t size = 0;
    const int rc = errno_of(cpg_max_atomic_msgsize_get(handle_, &size));
    out = size;
    return rc;
  }

  const char* error_text(int rc) const noexcept override { return rc < 0 ? std::strerror(-rc) : "success"; }
  std::string_view program() const noexcept override { return "cpg-bench"; }
  std::string_view daemon() const noexcept override { return "corosync"; }

 private:
  static CpgGroupClient& self(cpg_handle_t handle) {
    void* context = nullptr;
    cpg_context_get(handle, &context);
    return *static_cast<CpgGroupClient*>(context);
  }

  static void on_deliver(cpg_handle_t handle, const cpg_name*, std::uint32_t nodeid, std::uint32_t pid, void* msg,
                         std::size_t len) {
    CpgGroupClient& c = self(handle);
    c.callbacks_.deliver(rtotem_message{c.group_.c_str(), nodeid, pid, msg, len});
  }

  static void on_confchg(cpg_handle_t handle, const cpg_name*, const cpg_address* members, std::size_t n_members,
                         const cpg_address* left, std::size_t n_left, const cpg_address* joined, std::size_t n_joined) {
    CpgGroupClient& c = self(handle);
    const auto copy = [](const cpg_address* from, std::size_t n, std::vector<rtotem_member>& to) {
      to.clear();
      for (std::size_t i = 0; i < n; ++i) to.push_back({from[i].nodeid, from[i].pid});
    };
    copy(members, n_members, c.members_);
    copy(joined, n_joined, c.joined_);
    copy(left, n_left, c.left_);
    c.left_reasons_.clear();
    for (std::size_t i = 0; i < n_left; ++i) c.left_reasons_.push_back(reason_of(left[i].reason));
    c.joined_reasons_.clear();
    for (std::size_t i = 0; i < n_joined; ++i) c.joined_reasons_.push_back(reason_of(joined[i].reason));
    c.callbacks_.group_change(rtotem_group_change{c.group_.c_str(), c.members_.data(), c.members_.size(),
                                                  c.joined_.data(), c.joined_.size(), c.left_.data(), c.left_.size(),
                                                  c.left_reasons_.data(), c.joined_reasons_.data()});
  }

  static void on_totem_confchg(cpg_handle_t handle, cpg_ring_id ring_id, std::uint32_t n_members,
                               const std::uint32_t* members) {
    CpgGroupClient& c = self(handle);
    c.callbacks_.ring_change(rtotem_ring_change{ring_id.nodeid, ring_id.seq, 0, members, n_members});
  }

  cpg_handle_t handle_ = 0;
  bool connected_ = false;
  Callbacks callbacks_;
  std::string group_;
  std::vector<rtotem_member> members_, joined_, left_;
  std::vector<rtotem_reason> left_reasons_, joined_reasons_;
};

}  // namespace
}  // namespace rtotem::bench

int main(int argc, char** argv) {
  rtotem::bench::CpgGroupClient client;
  return rtotem::bench::group_bench_main(client, argc, argv);
}
