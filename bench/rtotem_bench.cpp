// rtotem-bench: the group bench (group_bench_run.hpp) on librtotem.
#include "bench/group_bench_run.hpp"
#include "rtotem/rtotem.hpp"

namespace rtotem::bench {
namespace {

class RtotemGroupClient final : public GroupClient {
 public:
  int connect(Callbacks callbacks, const std::string& ipc_name) override {
    rtotem::Client::Callbacks table;
    table.deliver = std::move(callbacks.deliver);
    table.group_change = std::move(callbacks.group_change);
    table.ring_change = std::move(callbacks.ring_change);
    return client_.connect(std::move(table), ipc_name.empty() ? nullptr : ipc_name.c_str());
  }
  int join(const std::string& group) override { return client_.join(group); }
  int mcast(const std::string& group, std::span<const std::byte> data, rtotem_order order) override {
    return client_.mcast(group, data, order);
  }
  int fd() override { return client_.fd(); }
  int dispatch_all() override { return client_.dispatch(RTOTEM_DISPATCH_ALL); }
  int local_nodeid(std::uint32_t& out) override { return client_.local_nodeid(out); }
  int max_message_size(std::size_t& out) override { return client_.max_message_size(out); }
  const char* error_text(int rc) const noexcept override { return rtotem_strerror(rc); }
  std::string_view program() const noexcept override { return "rtotem-bench"; }
  std::string_view daemon() const noexcept override { return "rtotemd"; }

 private:
  rtotem::Client client_;
};

}  // namespace
}  // namespace rtotem::bench

int main(int argc, char** argv) {
  rtotem::bench::RtotemGroupClient client;
  return rtotem::bench::group_bench_main(client, argc, argv);
}
